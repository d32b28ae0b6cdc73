#!/bin/bash
# record.sh -- records how real Slurm 22.05.8 places a scripted stream of batch jobs on the
# anchor's `big` partition (n[1-4]: 2 sockets x 2 cores x 2 threads, 4000 MB, gpu:2 + mps:200),
# as the fixtures of tests/select_anchor.rs (the differential test of our select plugins).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~2.5 min per
# configuration, ~125 min for all fifty-four hand-written ones; ~25 min each for the four
# *-fuzz ones of 500 submits):
#     bash tests/anchor/select/record.sh              # all fifty-eight configurations
#     bash tests/anchor/select/record.sh cons_tres-CR_Core_Memory   # one of them
# It rewrites tests/fixtures/anchor/select/<config>/ (plain text) and leaves nothing running.
#
# Configurations (<config> = directory name | SelectType | SelectTypeParameters | slurm.conf
# lines appended to setup.sh's, through its EXTRA_CONF, `\n` between lines | keys set on
# the NodeName=n[1-4] line of a copy of setup.sh, replacing the line's own | keys added to
# the copy's PartitionName=big line | the stream, STEPS unless named | QOS added with
# `sacctmgr add qos <name> <keys>`, `;` between them, which starts the anchor with its
# accounting daemon | the name of a variable holding gres.conf lines for the GPUs of n[1-4],
# which replace setup.sh's two (nvidia0 on cores 0-1, nvidia1 on 2-3): the copy of setup.sh
# makes a fake device for each nvidia<N> they name, from 0 up, and gives n[1-4] that many):
#     cons_tres-CR_Core_Memory                select/cons_tres  CR_Core_Memory
#     cons_tres-CR_CPU_Memory                 select/cons_tres  CR_CPU_Memory
#     linear-CR_Memory                        select/linear     CR_Memory
#     cons_tres-CR_Core_Memory-one_task       select/cons_tres  CR_Core_Memory,CR_ONE_TASK_PER_CORE
#     cons_tres-CR_Core_Memory-gpu_defaults   select/cons_tres  CR_Core_Memory
#                                             + DefCpuPerGPU=2, DefMemPerGPU=1500
#     cons_tres-CR_Socket_Memory-core_spec    select/cons_tres  CR_Socket_Memory
#                                             + CoreSpecCount=1 on n[1-4]
#     cons_tres-CR_Core_Memory-4_sockets      select/cons_tres  CR_Core_Memory
#                                             + n[1-4] as 4 sockets x 1 core x 2 threads, so
#                                             each GPU's Cores= spans two of the four sockets
#     cons_tres-CR_Core_Memory-lln            select/cons_tres  CR_Core_Memory,CR_LLN
#     cons_tres-CR_Core_Memory-pack_nodes     select/cons_tres  CR_Core_Memory,CR_Pack_Nodes
#     cons_tres-CR_Core_Memory-dist_block     select/cons_tres  CR_Core_Memory,
#                                                               CR_CORE_DEFAULT_DIST_BLOCK
#     cons_tres-CR_Socket                     select/cons_tres  CR_Socket (memory not tracked)
#     cons_tres-CR_CPU                        select/cons_tres  CR_CPU (memory not tracked)
#     cons_tres-CR_Core_Memory-oversubscribe  select/cons_tres  CR_Core_Memory
#                                             + OverSubscribe=FORCE:2 on partition big
#     linear-CR_Memory-oversubscribe          select/linear     CR_Memory
#                                             + OverSubscribe=FORCE:2 on partition big
#     cons_tres-CR_Socket_Memory-oversubscribe  select/cons_tres CR_Socket_Memory
#                                             + OverSubscribe=FORCE:2 on partition big
#     cons_tres-CR_CPU_Memory-oversubscribe   select/cons_tres  CR_CPU_Memory
#                                             + OverSubscribe=FORCE:2 on partition big
#     cons_tres-CR_Core_Memory-max_cpus_per_node  select/cons_tres CR_Core_Memory
#                                             + MaxCPUsPerNode=4 on partition big
#     cons_tres-CR_Core_Memory-exclusive_partition  select/cons_tres CR_Core_Memory
#                                             + OverSubscribe=EXCLUSIVE on partition big
#     cons_tres-CR_Core_Memory-bf_busy_nodes  select/cons_tres  CR_Core_Memory
#                                             + SchedulerParameters=bf_busy_nodes
#     cons_tres-CR_Core_Memory-pack_serial    select/cons_tres  CR_Core_Memory
#                                             + SchedulerParameters=pack_serial_at_end
#     cons_tres-CR_Core_Memory-lln_partition  select/cons_tres  CR_Core_Memory
#                                             + LLN=YES on partition big
#     cons_tres-CR_Core_Memory-spread_job     select/cons_tres  CR_Core_Memory, its own
#                                             stream, SPREAD_STEPS (--spread-job jobs)
#     cons_tres-CR_Core_Memory-suspend        select/cons_tres  CR_Core_Memory, its own stream,
#                                             SUSPEND_STEPS (scontrol suspend and resume)
#     linear-CR_Memory-suspend                select/linear     CR_Memory, the same stream
#     cons_tres-CR_Core_Memory-resize         select/cons_tres  CR_Core_Memory, its own stream,
#                                             RESIZE_STEPS (running jobs shrunk to fewer nodes)
#     linear-CR_Memory-resize                 select/linear     CR_Memory, the same stream
#     cons_tres-CR_Core_Memory-expand         select/cons_tres  CR_Core_Memory
#                                             + SchedulerParameters=permit_job_expansion, its
#                                             own stream, EXPAND_STEPS (jobs merged into others)
#     linear-CR_Memory-expand                 select/linear     CR_Memory, the same
#     cons_tres-CR_Core_Memory-two_partitions  select/cons_tres CR_Core_Memory
#                                             + OverSubscribe=FORCE:2 on partition big and a
#                                             second partition alt over n[1-4], also FORCE:2;
#                                             its own stream, PARTITION_STEPS (jobs of both
#                                             partitions sharing cores)
#     cons_tres-CR_Core_Memory-two_tiers      the same with PriorityTier=2 on alt (big keeps
#                                             tier 1)
#     linear-CR_Memory-two_partitions         select/linear     CR_Memory, the two partitions
#                                             and stream of cons_tres-CR_Core_Memory-two_partitions
#     cons_tres-CR_Core_Memory-two_tiers_preempt_off  the two_tiers configuration with
#                                             PreemptType=preempt/partition_prio,
#                                             PreemptMode=CANCEL and PreemptMode=OFF on big: no
#                                             job is preempted, and each partition's jobs may not
#                                             count on the other's cores
#     cons_tres-CR_Core_Memory-preempt        select/cons_tres  CR_Core_Memory
#                                             + PreemptType=preempt/partition_prio,
#                                             PreemptMode=CANCEL and a second partition alt over
#                                             n[1-4] with PriorityTier=2; its own stream,
#                                             PREEMPT_STEPS (alt jobs preempting big's)
#     cons_tres-CR_Core_Memory-preempt_youngest  the cons_tres preempt configuration with
#                                             SchedulerParameters=preempt_youngest_first: the
#                                             latest started jobs are offered first
#     linear-CR_Memory-preempt_youngest       the same under select/linear
#     cons_tres-CR_Core_Memory-preempt_oversubscribe  the cons_tres preempt configuration with
#                                             OverSubscribe=FORCE:2 on both partitions: jobs
#                                             share cores in rows, and preempt across tiers
#     linear-CR_Memory-preempt_oversubscribe  the same under select/linear (nodes shared)
#     linear-CR_Memory-preempt                select/linear     CR_Memory, the same preemption
#                                             configuration and stream
#     cons_tres-CR_Core_Memory-preempt_suspend  the cons_tres preempt configuration with
#                                             PreemptMode=SUSPEND,GANG: preempted jobs are
#                                             suspended, and resumed when their preemptor ends
#     linear-CR_Memory-preempt_suspend        the same under select/linear
#     cons_tres-CR_Core_Memory-qos_preempt    select/cons_tres  CR_Core_Memory
#                                             + PreemptType=preempt/qos, PreemptMode=CANCEL, QOS
#                                             low (Priority=10) and high (Priority=100,
#                                             Preempt=normal,low); its own stream, QOS_STEPS
#                                             (--qos=high jobs preempting normal and low ones)
#     linear-CR_Memory-qos_preempt            the same under select/linear
#     cons_tres-CR_Core_Memory-qos_suspend    the qos_preempt configuration with
#                                             PreemptMode=SUSPEND,GANG and OverSubscribe=FORCE:1
#                                             on big: a high job takes the cores of the jobs it
#                                             would suspend in the row preempt/qos adds, and the
#                                             gang scheduler suspends one or the other
#     linear-CR_Memory-qos_suspend            the same under select/linear
#     cons_tres-CR_Core_Memory-qos_within     select/cons_tres  CR_Core_Memory
#                                             + PreemptType=preempt/qos, PreemptMode=CANCEL,
#                                             PreemptExemptTime=00:00:20, QOS peer
#                                             (PreemptMode=cancel,within); its own stream,
#                                             WITHIN_STEPS (jobs of one QOS preempting those of
#                                             lower --priority, once they have run 20 s)
#     linear-CR_Memory-qos_within             the same under select/linear
#     cons_tres-CR_Core_Memory-reservations   select/cons_tres  CR_Core_Memory, its own stream,
#                                             RESV_STEPS (node and core reservations among
#                                             running jobs)
#     linear-CR_Memory-reservations           the same under select/linear
#     cons_tres-CR_Core_Memory-reserved_jobs  select/cons_tres  CR_Core_Memory, its own stream,
#                                             HELD_STEPS (jobs in and around a core and a node
#                                             reservation held while they are submitted)
#     cons_tres-CR_Core_Memory-oversubscribe_yes  select/cons_tres CR_Core_Memory
#                                             + OverSubscribe=YES:2 on partition big; its own
#                                             stream, YES_STEPS (jobs with and without
#                                             --oversubscribe side by side)
#     linear-CR_Memory-oversubscribe_yes      the same under select/linear
#     cons_tres-CR_Core_Memory-cores          select/cons_tres  CR_Core_Memory, its own
#                                             stream, CORES_STEPS (jobs of several CPUs per
#                                             task on partly busy nodes, GPUs against the
#                                             cores they are bound to, MPS beyond one GPU)
#     cons_tres-CR_CPU_Memory-cores           the same under CR_CPU_Memory
#     linear-CR_Memory-cores                  the same under select/linear
#     cons_tres-CR_Core_Memory-one_task-cores the same under CR_Core_Memory,CR_ONE_TASK_PER_CORE
#     cons_tres-CR_Socket_Memory-cores        the same under CR_Socket_Memory
#     cons_tres-CR_Core_Memory-links          select/cons_tres  CR_Core_Memory, six GPUs a node
#                                             with gres.conf Links= (LINKS_GPUS: on n1 without
#                                             Cores=; on n2 bound to every core, links above 4,
#                                             not symmetric; on n3 three bound to each socket;
#                                             n4 as n3 without links); its own stream, LINKS_STEPS
#                                             (GPUs picked per node, task and job where the
#                                             link counts decide which)
#     cons_tres-CR_Core_Memory-fuzz           select/cons_tres  CR_Core_Memory, a stream drawn by
#                                             fuzz.py with seed 1 (FUZZ1_STEPS, below)
#     cons_tres-CR_CPU_Memory-fuzz            select/cons_tres  CR_CPU_Memory, seed 2
#     cons_tres-CR_Socket_Memory-fuzz         select/cons_tres  CR_Socket_Memory, seed 3
#     linear-CR_Memory-fuzz                   select/linear     CR_Memory, seed 4
#     (the differential fuzzing of issue 30: FUZZ_SUBMITS submits each, 500 unless set; the
#     fixture's fuzz.txt holds the command that draws its stream)
# Under select/linear setup.sh leaves mps out of GresTypes (slurmctld refuses shared GRES
# without cons_tres) and slurmctld refuses `--gres=gpu` because gres.conf binds the GPUs to
# cores; those submits are kept in the stream and recorded as what sbatch answered.
#
# What it does, per configuration:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh (WITH_DBD=0: placement
#      needs no accounting, but for QOS, which live in the accounting database: then WITH_DBD=1
#      and the configuration's QOS are added), checks SelectType/SelectTypeParameters in
#      `scontrol show config`, and waits for the first scheduling pass (a probe job that must
#      start, then is cancelled);
#   2. runs STEPS below in order. Every submitted job is `sbatch -J <name> -o /dev/null <options>
#      --wrap 'sleep 1000'`, so it runs until the stream cancels it. After each submit the script
#      waits until the job is RUNNING, or PENDING with a reason other than None for 3 s (then
#      records it and cancels it at once, so no pending job can start later and make the stream
#      depend on timing); `cancel` waits until the job has left the queue;
#   3. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/select/<config>/:
#   slurm.conf, gres.conf   the configuration files in use (the replay builds the same cluster)
#   qos.txt                 with QOS: `sacctmgr -P show qos` (Name, Priority, Preempt,
#                           PreemptMode, PreemptExemptTime), the table the replay reads
#   config.txt              `scontrol show config`, select keys
#   stream.txt              one section per step:
#       [submit <name>] <options>        then `rc=`, `id=` (or sbatch's stderr when refused),
#                                        `--- scontrol show job -d` and the job's record;
#                                        a job that preempted others (PreemptMode=CANCEL)
#                                        then lists them after `--- preempted`, `<id> <name>`
#                                        a line, and its record is taken once it runs;
#                                        a pending job ends with `--- cancelled (pending)`
#       [cancel <name>] id=<id>            then, when the gang scheduler resumed jobs it had
#                                        suspended (PreemptMode=SUSPEND,GANG), `--- resumed`
#                                        and `<id> <name> <EndTime epoch>` a line
#       [suspend <name>] id=<id>         then `rc=`, scontrol's error if any, `state=` and
#       [resume <name>] id=<id>          `end=` (the job's state and EndTime, epoch, a second
#                                        later: a resume moves the end by the time suspended)
#       [sleep <seconds>]                the stream waited (so running jobs age)
#       [reserve <name>] <keys>          then `rc=` and `scontrol show reservation` (its
#       [hold <name>] <keys>             Nodes= and CoreCnt=), or scontrol's error
#       [release <name>]                 a held reservation was deleted
#       [resize <name>] <nodes>          then `rc=` and `--- scontrol show job -d` with the
#                                        shrunk job's record (or scontrol's error), or
#                                        `not running`
#       [merge <name>] into=<job>        <name> (submitted with --dependency=expand:<job>) gave
#                                        all its resources to <job>: then `rc=` and `---
#                                        scontrol show job -d` with <job>'s record (or
#                                        scontrol's error), or `not running`
#       [test-only] <options>            then `now=<epoch>`, sbatch's answer (`sbatch: Job N to
#                                        start at <time> using <n> processors on nodes <list> in
#                                        partition <p>`, then `sbatch:   Preempts: <ids>` when
#                                        it would preempt, or its error), and `--- running` with
#                                        `<id> <name> <EndTime epoch>` for each running job, so a
#                                        start time can be matched to the job whose end frees it
#   fuzz.txt                *-fuzz configurations only: the fuzz.py command that drew the stream
#   sinfo.txt               under SHIM_PLUGINDIR only: after each submit that sbatch accepted,
#                           `[after <name>]`, `running <ids>` (squeue) and `sinfo -N -p big -o
#                           '%N %C'` (each node's allocated/idle/other/total CPUs)
#
# Environment: SLURM_ANCHOR (the slurm-anchor directory, default ../shared/slurm-anchor beside the
# repository), SLURM_ANCHOR_DIR (its state directory, default /tmp/slurm-anchor), OUT (output
# root). SHIM_PLUGINDIR (tests/anchor/select/shim.sh): a directory holding select_wasm.so and
# lib/libslurm_wasm.so; when set, each configuration runs SelectType=select/wasm instead of its
# own (with that directory before Debian's in PluginDir), and the daemons read the component
# from the host configuration SLURM_WASM_CONFIG names (SLURM_WASM_* are kept for them);
# with SHIM_ALONE=1 PluginDir is SHIM_PLUGINDIR alone (it must then hold every plugin the
# daemons load). Under the shim, plugin-id.txt holds slurmctld's line naming the plugin id
# select/wasm took (select_wasm.c, plugin_id), and shim-errors.txt slurmctld's error lines of
# select/wasm (a call of the component that failed, an answer not applied). Refuses to run while an anchor cluster is already up: it stops only what it started.
set -euo pipefail
export TZ=UTC   # scontrol and sbatch --test-only print local times; the fixtures hold UTC

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
OUT=${OUT:-$REPO/tests/fixtures/anchor/select}
T0=$(date +%s)

CONFIGS="cons_tres-CR_Core_Memory|select/cons_tres|CR_Core_Memory|
cons_tres-CR_CPU_Memory|select/cons_tres|CR_CPU_Memory|
linear-CR_Memory|select/linear|CR_Memory|
cons_tres-CR_Core_Memory-one_task|select/cons_tres|CR_Core_Memory,CR_ONE_TASK_PER_CORE|
cons_tres-CR_Core_Memory-gpu_defaults|select/cons_tres|CR_Core_Memory|DefCpuPerGPU=2\nDefMemPerGPU=1500
cons_tres-CR_Socket_Memory-core_spec|select/cons_tres|CR_Socket_Memory||CoreSpecCount=1
cons_tres-CR_Core_Memory-4_sockets|select/cons_tres|CR_Core_Memory||Sockets=4 CoresPerSocket=1
cons_tres-CR_Core_Memory-lln|select/cons_tres|CR_Core_Memory,CR_LLN|
cons_tres-CR_Core_Memory-pack_nodes|select/cons_tres|CR_Core_Memory,CR_Pack_Nodes|
cons_tres-CR_Core_Memory-dist_block|select/cons_tres|CR_Core_Memory,CR_CORE_DEFAULT_DIST_BLOCK|
cons_tres-CR_Socket|select/cons_tres|CR_Socket|
cons_tres-CR_CPU|select/cons_tres|CR_CPU|
cons_tres-CR_Core_Memory-oversubscribe|select/cons_tres|CR_Core_Memory|||OverSubscribe=FORCE:2
linear-CR_Memory-oversubscribe|select/linear|CR_Memory|||OverSubscribe=FORCE:2
cons_tres-CR_Socket_Memory-oversubscribe|select/cons_tres|CR_Socket_Memory|||OverSubscribe=FORCE:2
cons_tres-CR_CPU_Memory-oversubscribe|select/cons_tres|CR_CPU_Memory|||OverSubscribe=FORCE:2
cons_tres-CR_Core_Memory-max_cpus_per_node|select/cons_tres|CR_Core_Memory|||MaxCPUsPerNode=4
cons_tres-CR_Core_Memory-exclusive_partition|select/cons_tres|CR_Core_Memory|||OverSubscribe=EXCLUSIVE
cons_tres-CR_Core_Memory-bf_busy_nodes|select/cons_tres|CR_Core_Memory|SchedulerParameters=bf_busy_nodes
cons_tres-CR_Core_Memory-pack_serial|select/cons_tres|CR_Core_Memory|SchedulerParameters=pack_serial_at_end
cons_tres-CR_Core_Memory-lln_partition|select/cons_tres|CR_Core_Memory|||LLN=YES
cons_tres-CR_Core_Memory-spread_job|select/cons_tres|CR_Core_Memory||||SPREAD_STEPS
cons_tres-CR_Core_Memory-suspend|select/cons_tres|CR_Core_Memory||||SUSPEND_STEPS
linear-CR_Memory-suspend|select/linear|CR_Memory||||SUSPEND_STEPS
cons_tres-CR_Core_Memory-resize|select/cons_tres|CR_Core_Memory||||RESIZE_STEPS
linear-CR_Memory-resize|select/linear|CR_Memory||||RESIZE_STEPS
cons_tres-CR_Core_Memory-expand|select/cons_tres|CR_Core_Memory|SchedulerParameters=permit_job_expansion|||EXPAND_STEPS
linear-CR_Memory-expand|select/linear|CR_Memory|SchedulerParameters=permit_job_expansion|||EXPAND_STEPS
cons_tres-CR_Core_Memory-two_partitions|select/cons_tres|CR_Core_Memory|PartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2||OverSubscribe=FORCE:2|PARTITION_STEPS
linear-CR_Memory-two_partitions|select/linear|CR_Memory|PartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2||OverSubscribe=FORCE:2|PARTITION_STEPS
cons_tres-CR_Core_Memory-two_tiers|select/cons_tres|CR_Core_Memory|PartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2 PriorityTier=2||OverSubscribe=FORCE:2|PARTITION_STEPS
cons_tres-CR_Core_Memory-two_tiers_preempt_off|select/cons_tres|CR_Core_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2 PriorityTier=2||OverSubscribe=FORCE:2 PreemptMode=OFF|PARTITION_STEPS
cons_tres-CR_Core_Memory-preempt|select/cons_tres|CR_Core_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
cons_tres-CR_Core_Memory-preempt_youngest|select/cons_tres|CR_Core_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nSchedulerParameters=preempt_youngest_first\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
cons_tres-CR_Core_Memory-preempt_oversubscribe|select/cons_tres|CR_Core_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2 PriorityTier=2||OverSubscribe=FORCE:2|PREEMPT_STEPS
linear-CR_Memory-preempt_oversubscribe|select/linear|CR_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP OverSubscribe=FORCE:2 PriorityTier=2||OverSubscribe=FORCE:2|PREEMPT_STEPS
linear-CR_Memory-preempt_youngest|select/linear|CR_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nSchedulerParameters=preempt_youngest_first\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
linear-CR_Memory-preempt|select/linear|CR_Memory|PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
cons_tres-CR_Core_Memory-preempt_suspend|select/cons_tres|CR_Core_Memory|PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
linear-CR_Memory-preempt_suspend|select/linear|CR_Memory|PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nPartitionName=alt Nodes=n[1-4] DefaultTime=00:05:00 MaxTime=01:00:00 State=UP PriorityTier=2|||PREEMPT_STEPS
cons_tres-CR_Core_Memory-qos_preempt|select/cons_tres|CR_Core_Memory|PreemptType=preempt/qos\nPreemptMode=CANCEL|||QOS_STEPS|low Priority=10;high Priority=100 Preempt=normal,low
linear-CR_Memory-qos_preempt|select/linear|CR_Memory|PreemptType=preempt/qos\nPreemptMode=CANCEL|||QOS_STEPS|low Priority=10;high Priority=100 Preempt=normal,low
cons_tres-CR_Core_Memory-qos_suspend|select/cons_tres|CR_Core_Memory|PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG||OverSubscribe=FORCE:1|QOS_STEPS|low Priority=10;high Priority=100 Preempt=normal,low
linear-CR_Memory-qos_suspend|select/linear|CR_Memory|PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG||OverSubscribe=FORCE:1|QOS_STEPS|low Priority=10;high Priority=100 Preempt=normal,low
cons_tres-CR_Core_Memory-qos_within|select/cons_tres|CR_Core_Memory|PreemptType=preempt/qos\nPreemptMode=CANCEL\nPreemptExemptTime=00:00:20|||WITHIN_STEPS|peer Priority=10 PreemptMode=cancel,within
linear-CR_Memory-qos_within|select/linear|CR_Memory|PreemptType=preempt/qos\nPreemptMode=CANCEL\nPreemptExemptTime=00:00:20|||WITHIN_STEPS|peer Priority=10 PreemptMode=cancel,within
cons_tres-CR_Core_Memory-reservations|select/cons_tres|CR_Core_Memory||||RESV_STEPS
linear-CR_Memory-reservations|select/linear|CR_Memory||||RESV_STEPS
cons_tres-CR_Core_Memory-reserved_jobs|select/cons_tres|CR_Core_Memory||||HELD_STEPS
cons_tres-CR_Core_Memory-oversubscribe_yes|select/cons_tres|CR_Core_Memory|||OverSubscribe=YES:2|YES_STEPS
linear-CR_Memory-oversubscribe_yes|select/linear|CR_Memory|||OverSubscribe=YES:2|YES_STEPS
cons_tres-CR_Core_Memory-cores|select/cons_tres|CR_Core_Memory||||CORES_STEPS
cons_tres-CR_CPU_Memory-cores|select/cons_tres|CR_CPU_Memory||||CORES_STEPS
linear-CR_Memory-cores|select/linear|CR_Memory||||CORES_STEPS
cons_tres-CR_Core_Memory-one_task-cores|select/cons_tres|CR_Core_Memory,CR_ONE_TASK_PER_CORE||||CORES_STEPS
cons_tres-CR_Socket_Memory-cores|select/cons_tres|CR_Socket_Memory||||CORES_STEPS
cons_tres-CR_Core_Memory-links|select/cons_tres|CR_Core_Memory||||LINKS_STEPS||LINKS_GPUS
cons_tres-CR_Core_Memory-fuzz|select/cons_tres|CR_Core_Memory||||FUZZ1_STEPS
cons_tres-CR_CPU_Memory-fuzz|select/cons_tres|CR_CPU_Memory||||FUZZ2_STEPS
cons_tres-CR_Socket_Memory-fuzz|select/cons_tres|CR_Socket_Memory||||FUZZ3_STEPS
linear-CR_Memory-fuzz|select/linear|CR_Memory||||FUZZ4_STEPS"

# Streams drawn by fuzz.py from a fixed seed (the *-fuzz configurations): random but valid
# submits over the whole option set, cancels, sleeps and test-only probes; the same seed and
# count give the same stream. FUZZ_CMD keeps each one's command for the fixture's fuzz.txt.
FUZZ_SUBMITS=${FUZZ_SUBMITS:-500}
declare -A FUZZ_CMD=(
  [FUZZ1_STEPS]="python3 tests/anchor/select/fuzz.py --seed 1 --submits $FUZZ_SUBMITS --select cons_tres"
  [FUZZ2_STEPS]="python3 tests/anchor/select/fuzz.py --seed 2 --submits $FUZZ_SUBMITS --select cons_tres"
  [FUZZ3_STEPS]="python3 tests/anchor/select/fuzz.py --seed 3 --submits $FUZZ_SUBMITS --select cons_tres"
  [FUZZ4_STEPS]="python3 tests/anchor/select/fuzz.py --seed 4 --submits $FUZZ_SUBMITS --select linear"
)
for v in "${!FUZZ_CMD[@]}"; do
  # shellcheck disable=SC2086 # the command, as words
  printf -v "$v" '%s' "$(cd "$REPO" && ${FUZZ_CMD[$v]})"
done

# One step a line: `submit <name> <options>`, `cancel <name>`, `test-only <options>`,
# `suspend <name>`, `resume <name>`, `resize <name> <nodes>`, `merge <name>`, `sleep <seconds>`,
# `reserve <name> <scontrol create reservation keys>` (deleted once recorded), `hold <name>
# <keys>` (kept until `release <name>`).
# Names are unique; options are sbatch words (no quoting inside).
STEPS="submit a1 -n1
submit a2 -n2
submit a3 -c3
submit a4 -n2 --mem=1000
submit a5 -N2 --ntasks-per-node=1
test-only -N4 --exclusive
submit a6 -n1 --exclusive
submit a7 -n4 --mem-per-cpu=300
cancel a2
submit a8 -w n3 -n2
submit a9 -x n1,n2 -n3
test-only -n8 --mem=3000
submit a10 -n8 --mem=3000
cancel a1
cancel a3
submit a11 -n1 --gres=gpu:1
submit a12 -n2 --gres=gpu:2
submit a13 -n2 --gpus-per-task=1
submit a14 -n1 --gres=mps:50
submit a15 -n1 --gres=mps:100
test-only -n1 --gres=gpu:2
cancel a6
submit a16 --contiguous -N2
submit a17 -N1 --mem=3500
cancel a4
cancel a5
submit a18 -N1-2 -n6 --mem-per-cpu=200
submit a19 -n3 -c2
test-only -N3 -n3
cancel a7
cancel a8
cancel a9
submit a20 -N3 -n3
submit a21 -n1 --mem=100M
submit a22 -n1 --mem=1G
submit a23 -n4 --ntasks-per-node=2
cancel a10
cancel a11
cancel a12
cancel a13
submit a24 --gres=gpu:1 -n4
submit a25 --gres=gpu:1 -c4
test-only --exclusive -N2 -w n1,n2
cancel a14
cancel a15
submit a26 -w n2,n4 -N2 --ntasks-per-node=2
submit a27 --gres=mps:200 -n1
submit a28 -x n1 --exclusive -N1
cancel a16
cancel a17
cancel a18
cancel a19
test-only -N4 -n4 --gpus-per-task=1
submit a29 -N2 --gpus-per-task=1 -n4
submit a30 -n2 --mem-per-cpu=1000
submit a31 -c8
cancel a20
cancel a21
cancel a22
cancel a23
submit a32 --contiguous -N3 --exclusive
submit a33 -n16
cancel a24
cancel a25
cancel a26
cancel a27
cancel a28
test-only -n16 --mem-per-cpu=250
submit a34 -n16 --mem-per-cpu=250
submit a35 -n2 --gres=gpu:1 --mem=2000
cancel a29
cancel a30
cancel a31
cancel a32
submit a36 -N4 --ntasks-per-node=3
submit a37 -n1 --gres=mps:30
submit a38 -w n1 -c2 --mem=500
cancel a33
cancel a34
submit a39 -n24
submit a40 -N2 -n2 --exclusive
submit a41 -n1 --gpus-per-task=1 --mem-per-cpu=100
cancel a35
cancel a36
cancel a37
cancel a38
cancel a39
cancel a40
cancel a41
submit a42 -w n2 -N2 -n2
submit a43 --exclusive -N2 -w n1,n4
submit a44 -N1-2 -n1 -x n3
submit a45 --contiguous -N2 -w n3 -n2
test-only -N2-4 -n2 -x n1,n4
cancel a43
submit a46 -n1 --gres=gpu:1 --mem-per-gpu=1000
submit a47 -n2 --threads-per-core=1 --mem-per-cpu=500
cancel a42
cancel a44
cancel a45
cancel a46
cancel a47
submit a48 -w n2 -c6
submit a49 -N1 -n2"

# Running jobs shrunk to fewer nodes (`scontrol update JobId= NodeList=`, the resize
# configurations), and jobs placed on what they freed.
RESIZE_STEPS="submit r1 -N2 -n8 --mem-per-cpu=100
submit r2 -N2 -n8 --mem-per-cpu=100
submit g1 -N2 -w n3,n4 --gpus-per-node=1 -n2 --mem-per-cpu=100
submit g2 -w n4 -n1 --gres=gpu:2 --mem-per-cpu=100
resize g1 n3
submit g3 -w n4 -n1 --gres=gpu:2 --mem-per-cpu=100
test-only -N2 -n16 --mem-per-cpu=100
resize r1 n1
submit r4 -w n2 -n4 --mem-per-cpu=100
resize r2 n1
test-only -w n2 -n8 --mem-per-cpu=100
submit r5 -n4 --mem-per-cpu=100
cancel r1
submit r6 -N1 -n8 --mem-per-cpu=100
cancel r2
submit r7 -N2 -n12 --mem-per-cpu=100"

# Jobs expanded (the expand configurations, SchedulerParameters=permit_job_expansion): a job
# submitted with `--dependency=expand:<name>` (an allocation without a batch script, since
# slurmctld refuses to merge a job with steps) starts beside <name>, then `merge` gives all its
# nodes, cores, memory and GPUs to <name> (`scontrol update JobId= NumNodes=0`: slurmctld's
# select_g_job_expand). slurmctld copies the expanded job's GRES options into the expanding
# one: both ask the same. Under cons_tres x1 shares e1's node, and jobs are then placed beside
# and after the merged job; x3 holds a GPU, which cons_tres refuses to merge. x2 lands on
# another node than e2, and comes last: 22.05's job_resources_bits_copy (common/
# job_resources.c) ORs the two jobs' core bitmaps whatever their nodes, so the merged job's
# cores (scontrol shows the first node only) and cons_tres's tables are wrong from there on.
# Under linear every merge joins two nodes (its tables count whole nodes, and stay right).
EXPAND_STEPS="submit e1 -N1 -n2 --mem-per-cpu=100
submit x1 -N1 -n4 --mem-per-cpu=200 --dependency=expand:e1
merge x1
test-only -w n1 -n4 --mem-per-cpu=100
submit a1 -w n1 -n2 --mem-per-cpu=100
submit e3 -N1 -n2 --gpus-per-node=1 --mem-per-cpu=100
submit x3 -N1 -n2 --gpus-per-node=1 --mem-per-cpu=100 --dependency=expand:e3
merge x3
cancel e1
submit a2 -w n1 -n6 --mem-per-cpu=100
submit e2 -N1 -n8 --mem-per-cpu=100
submit x2 -N1 -n2 --mem-per-cpu=300 --dependency=expand:e2
merge x2"

# Running jobs suspended and resumed by hand (`scontrol suspend/resume`, the suspend
# configurations): a suspended job's cores are free for others, its memory and GPUs are
# not, and a resumed job takes its cores back whoever uses them.
SUSPEND_STEPS="submit s1 -w n1 -n8 --mem=2000
submit s2 -w n1 -n2 --mem-per-cpu=100
suspend s1
submit s3 -w n1 -n4 --mem=1000
submit s4 -w n1 -n2 --mem=1500
test-only -w n1 -n4 --mem-per-cpu=100
submit g1 -w n2 -n2 --gres=gpu:2 --mem-per-cpu=100
suspend g1
submit g2 -w n2 -n1 --gres=gpu:1 --mem-per-cpu=100
submit g3 -w n2 -n4 --mem-per-cpu=100
resume s1
submit s5 -w n1 -n1 --mem-per-cpu=100
test-only -w n1 -n2 --mem-per-cpu=100
cancel s3
submit s6 -w n1 -n2 --mem-per-cpu=100
resume g1
cancel s1
submit s7 -w n1 -n4 --mem=1000
cancel g3
submit g4 -n1 --gres=gpu:1 --mem-per-cpu=100"

# Jobs spread over as many nodes as they may use (the spread_job configuration).
SPREAD_STEPS="submit c1 --spread-job -n4 --mem-per-cpu=100
submit c2 --spread-job -n6 --mem-per-cpu=100
submit c3 -w n2 -n4 --mem-per-cpu=100
submit c4 --spread-job -n3 -c2 --mem-per-cpu=100
test-only --spread-job -n8 --mem-per-cpu=100
cancel c1
submit c5 --spread-job -N2 -n4 --mem-per-cpu=100
submit c6 --spread-job -n2 --gres=gpu:1 --mem-per-cpu=100
cancel c2
submit c7 --spread-job -n5 -x n1 --mem-per-cpu=100
submit c8 -n2 --mem-per-cpu=100
cancel c3
submit c9 --spread-job -n3 --ntasks-per-node=1 --mem-per-cpu=100"

# Jobs of two partitions over the same nodes (the two_partitions configuration): a job
# sharing its cores counts on the other partition's jobs' cores, only its own partition's
# rows keep it out.
PARTITION_STEPS="submit b1 -w n1 -n8 --mem-per-cpu=100
submit b2 -p alt -w n1 -n2 --mem-per-cpu=100
submit b3 -p alt -w n1 -n2 --mem-per-cpu=100
submit b4 -w n1 -n8 --mem-per-cpu=100
submit b5 -p alt -w n1 -n8 --mem-per-cpu=100
submit b6 -w n2 -n2 --mem-per-cpu=100
test-only -p alt -n8 --mem-per-cpu=100
submit b7 -p alt -n4 --mem-per-cpu=100
cancel b1
submit b8 -n8 --mem-per-cpu=100
cancel b2
cancel b3
submit b9 -p alt -N2 -n4 --mem-per-cpu=100
test-only -N2 -n16 --mem-per-cpu=100
submit b10 -p alt --exclusive -N1
submit b11 -n1 --gres=gpu:1 --mem-per-cpu=100
submit b12 -p alt -n1 --gres=gpu:1 --mem-per-cpu=100
cancel b4
submit b13 -p alt -n6 --mem-per-cpu=100
submit b14 -N2 -n4 --mem-per-cpu=100
cancel b5
submit b15 -p alt -w n3 -c4 --mem-per-cpu=100"

# Jobs of a higher PriorityTier partition preempting (PreemptMode=CANCEL) jobs of a lower one
# over the same nodes (the preempt configurations): which running jobs a job preempts, for
# CPUs, GPUs and memory, with -w and over several nodes, and what --test-only answers.
PREEMPT_STEPS="submit d1 -w n1 -n4 --mem-per-cpu=100
submit d2 -w n2 -n4 --mem-per-cpu=100
submit d3 -w n1 -n4 --mem-per-cpu=100
submit d4 -w n2 -n2 --mem-per-cpu=100
submit d5 -N2 -w n3,n4 -n8 --mem-per-cpu=100
submit d6 -w n3 -n4 --mem-per-cpu=100
submit d7 -w n4 -n2 --gres=gpu:2 --mem-per-cpu=100
test-only -p alt -n8 --mem-per-cpu=100
submit e1 -p alt -n8 --mem-per-cpu=100
submit e2 -p alt -n2 --mem-per-cpu=100
submit d8 -n8 --mem-per-cpu=100
submit e3 -p alt -n1 --gres=gpu:1 --mem-per-cpu=100
test-only -p alt -N2 -n16 --mem-per-cpu=100
submit e4 -p alt -N2 -n16 --mem-per-cpu=100
cancel e1
cancel e2
cancel e3
cancel e4
submit d9 -w n1 -n2 --mem=3000
submit d10 -w n2 -n2 --mem=1000
submit d11 -N2 -w n3,n4 -n4 --mem=1000
submit e5 -p alt -n1 --mem=3500
submit e6 -p alt -w n3 -n8 --mem-per-cpu=100
submit d12 -n2 --mem-per-cpu=100
submit e7 -p alt --exclusive -N1
test-only -p alt -N4 -n4 --mem-per-cpu=100
submit e8 -p alt -N4 -n4 --mem-per-cpu=100"

# PREEMPT_STEPS with QOS instead of partitions, all in `big`: the e jobs run in QOS high,
# which preempts normal (the default) and low; some d jobs run in low, which ranks after
# normal among the candidates (QOS priority 10 against 0); low preempts nothing (f1).
QOS_STEPS="submit d1 -w n1 -n4 --mem-per-cpu=100 --qos=low
submit d2 -w n2 -n4 --mem-per-cpu=100
submit d3 -w n1 -n4 --mem-per-cpu=100
submit d4 -w n2 -n2 --mem-per-cpu=100 --qos=low
submit d5 -N2 -w n3,n4 -n8 --mem-per-cpu=100
submit d6 -w n3 -n4 --mem-per-cpu=100 --qos=low
submit d7 -w n4 -n2 --gres=gpu:2 --mem-per-cpu=100
submit f1 -n2 --mem-per-cpu=100 --qos=low
test-only --qos=high -n8 --mem-per-cpu=100
submit e1 --qos=high -n8 --mem-per-cpu=100
submit e2 --qos=high -n2 --mem-per-cpu=100
submit d8 -n8 --mem-per-cpu=100
submit e3 --qos=high -n1 --gres=gpu:1 --mem-per-cpu=100
test-only --qos=high -N2 -n16 --mem-per-cpu=100
submit e4 --qos=high -N2 -n16 --mem-per-cpu=100
cancel e1
cancel e2
cancel e3
cancel e4
submit d9 -w n1 -n2 --mem=3000 --qos=low
submit d10 -w n2 -n2 --mem=1000
submit d11 -N2 -w n3,n4 -n4 --mem=1000
submit e5 --qos=high -n1 --mem=3500
submit e6 --qos=high -w n3 -n8 --mem-per-cpu=100
submit d12 -n2 --mem-per-cpu=100 --qos=low
submit e7 --qos=high --exclusive -N1
test-only --qos=high -N4 -n4 --mem-per-cpu=100
submit e8 --qos=high -N4 -n4 --mem-per-cpu=100"

# Under OverSubscribe=YES:2 only jobs that ask --oversubscribe share: the stream mixes them
# with jobs that do not, on the same nodes.
YES_STEPS="submit y1 --oversubscribe -w n1 -n2 --mem=100
submit y2 -w n1 -n2 --mem=100
submit y3 --oversubscribe -w n1 -n4 --mem=100
submit y4 -w n2 -n2 --mem=100
submit y5 --oversubscribe -w n2 -n2 --mem=100
submit y6 --oversubscribe -N2 -w n3,n4 -n16 --mem=100
submit y7 --oversubscribe -N2 -w n3,n4 -n16 --mem=100
submit y8 --oversubscribe -n4 --mem=100
test-only -n8 --mem=100
submit y9 -n8 --mem=100
submit y10 --exclusive -N1
test-only --oversubscribe -n8 --mem=100
cancel y2
submit y11 -w n1 -n4 --mem=100
submit y12 --oversubscribe -n2 --gres=gpu:1 --mem=100
cancel y6
test-only --oversubscribe -N4 -n32 --mem=100
submit y13 -w n3 -n4 --mem=100
cancel y1
submit y14 -w n1 -n2 --mem=100
submit y15 --oversubscribe -w n1 -n2 --mem=100"

# Jobs of QOS peer (PreemptMode=cancel,within) preempt its jobs of lower --priority, and no
# job is preempted before it has run PreemptExemptTime (20 s): w5 finds every job too young,
# w6 (after the sleep) preempts the lowest-priority job of its QOS, w7 none of a higher one;
# o1 and o2 run in QOS normal, which nothing preempts.
WITHIN_STEPS="submit w1 --qos=peer --priority=100 -w n1 -n8 --mem-per-cpu=100
submit w2 --qos=peer --priority=300 -w n2 -n8 --mem-per-cpu=100
submit w3 --qos=peer --priority=200 -w n3 -n8 --mem-per-cpu=100
submit w4 --qos=peer --priority=400 -w n4 -n4 --mem-per-cpu=100
submit o1 -w n4 -n4 --mem-per-cpu=100
test-only --qos=peer --priority=250 -n8 --mem-per-cpu=100
submit w5 --qos=peer --priority=250 -n8 --mem-per-cpu=100
sleep 21
test-only --qos=peer --priority=250 -n8 --mem-per-cpu=100
submit w6 --qos=peer --priority=250 -n8 --mem-per-cpu=100
submit w7 --qos=peer --priority=150 -n8 --mem-per-cpu=100
test-only --qos=peer --priority=500 -N2 -n16 --mem-per-cpu=100
submit w8 --qos=peer --priority=500 -N2 -n16 --mem-per-cpu=100
submit w9 --qos=peer --priority=350 -n4 --mem-per-cpu=100
submit o2 -n4 --mem-per-cpu=100"

# Reservations starting now for ten minutes, each deleted once recorded (so the jobs that
# follow see none): slurmctld offers select's resv_test the default partition's nodes, less
# those of running jobs (a node reservation) or less the cores they hold (a core one).
RESV_STEPS="submit r1 -w n1 -n2 --mem=100
submit r2 -w n2 -n8 --mem=100
reserve v1 NodeCnt=1
reserve v2 NodeCnt=2
reserve v3 NodeCnt=3
reserve v4 NodeCnt=1 CoreCnt=2
reserve v5 NodeCnt=2 CoreCnt=6
reserve v6 NodeCnt=3 CoreCnt=9
submit r3 -w n3 -n6 --mem=100
reserve v7 NodeCnt=1
reserve v8 NodeCnt=2 CoreCnt=8
reserve v9 NodeCnt=3 CoreCnt=4
cancel r1
reserve v10 NodeCnt=2
reserve v11 NodeCnt=2 CoreCnt=12"

# Which cores a job of several CPUs per task gets on a node some of whose cores are busy (k
# jobs: the cores are gathered whole and task distribution puts each task on one socket),
# GPU jobs against the cores gres.conf binds the GPUs to (g jobs: select/linear refuses a
# node unless the job's GPUs are bound to all its cores) and MPS shares asked beyond one GPU
# (p jobs: the submit test counts a node's shares over its GPUs, the start needs them on one).
CORES_STEPS="submit k1 -w n1 -n1 --mem=500
submit k2 -w n1 -n1 -c4 --mem=600
submit k3 -w n2 -n1 --mem=500
submit k4 -w n2 -n1 -c2 --mem=500
submit k5 -w n2 -n1 -c3 --mem=500
submit k6 -w n3 -n2 -c3 --mem=600
submit k7 -w n4 -n1 -c2 --mem=200
submit k8 -w n4 -n1 -c6 --mem=200
cancel k1
cancel k3
test-only -n1 -c4 --mem=600
submit k9 -n1 -c4 --mem=600
submit k10 -N2 -n2 -c2 --mem=200
cancel k2
cancel k4
cancel k5
cancel k6
cancel k7
cancel k8
cancel k9
cancel k10
submit g1 -n1 --gres=gpu:2 --mem=500
submit g2 -n1 --gres=gpu:1 --mem=500
submit g3 -N2 -n2 --gres=gpu:1 --mem=500
submit g4 -n1 -c8 --gres=gpu:2 --mem=500
test-only -n1 --gres=gpu:1 --mem=500
test-only -n1 --gres=gpu:2 --mem=500
submit p1 -n1 --gres=mps:200
submit p2 -n1 --gres=mps:300
submit p3 -n1 --gres=mps:150
cancel g1
cancel g2
cancel g3
cancel g4"

# Jobs beside and inside a reservation held while they are submitted: a core reservation
# (k1, two cores of n1) leaves other jobs n1's other cores and gives --reservation=k1 jobs its
# own; a node reservation (k2) keeps other jobs off its node. A reservation in use cannot be
# deleted: its jobs are cancelled first.
HELD_STEPS="submit q1 -w n1 -n2 --mem=100
hold k1 NodeCnt=1 CoreCnt=2
submit q2 -w n1 -n4 --mem=100
submit q3 -w n1 -n2 --mem=100
submit q4 --reservation=k1 -n4 --mem=100
submit q5 --reservation=k1 -n2 --mem=100
submit q6 -n6 --mem=100
cancel q4
release k1
hold k2 NodeCnt=1
submit q7 -N2 -n16 --mem=100
submit q8 --reservation=k2 -n8 --mem=100
submit q9 -n2 --mem=100
test-only -n8 --mem=100
cancel q8
release k2
submit q10 -n4 --mem=100"

# Six GPUs a node with NVLink-like counts (the links configuration): gres.conf's Links= gives
# each GPU's link count to every GPU of the node, -1 for itself. n1's GPUs have neither Cores=
# nor Type=, so slurmctld keeps no topology for them and ignores their links (common/gres.c
# _get_tot_gres_cnt): GPU 0 links best to 3 (4), then 5 (3), 1 (2), 2 (1), 4 (0); GPU 1 to 5, 4,
# 2, 3. n2's GPUs are bound to every core (a topology, each GPU usable from any socket); its
# links go above 4 (22.05.8 divides them down to at most four levels, which ties GPU 0's 6 and
# 7 to GPUs 1 and 2) and are not symmetric (GPU 1 says 2 to GPU 2 and 7 to GPU 3; they say 6
# and 3). n3 has GPUs 0-2 on socket 0 and 3-5 on socket 1; n4 the same without links.
# shellcheck disable=SC2016 # $DEV is setup.sh's, expanded there
LINKS_GPUS='NodeName=n1 Name=gpu File=$DEV/nvidia0 Links=-1,2,1,4,0,3
NodeName=n1 Name=gpu File=$DEV/nvidia1 Links=2,-1,1,0,3,4
NodeName=n1 Name=gpu File=$DEV/nvidia2 Links=1,1,-1,2,2,0
NodeName=n1 Name=gpu File=$DEV/nvidia3 Links=4,0,2,-1,1,1
NodeName=n1 Name=gpu File=$DEV/nvidia4 Links=0,3,2,1,-1,2
NodeName=n1 Name=gpu File=$DEV/nvidia5 Links=3,4,0,1,2,-1
NodeName=n2 Name=gpu File=$DEV/nvidia0 Cores=0-3 Links=-1,6,7,8,5,2
NodeName=n2 Name=gpu File=$DEV/nvidia1 Cores=0-3 Links=8,-1,2,7,1,0
NodeName=n2 Name=gpu File=$DEV/nvidia2 Cores=0-3 Links=7,6,-1,5,1,1
NodeName=n2 Name=gpu File=$DEV/nvidia3 Cores=0-3 Links=8,3,5,-1,2,2
NodeName=n2 Name=gpu File=$DEV/nvidia4 Cores=0-3 Links=5,1,1,2,-1,4
NodeName=n2 Name=gpu File=$DEV/nvidia5 Cores=0-3 Links=2,0,1,2,4,-1
NodeName=n3 Name=gpu File=$DEV/nvidia0 Cores=0-1 Links=-1,1,2,1,0,3
NodeName=n3 Name=gpu File=$DEV/nvidia1 Cores=0-1 Links=1,-1,2,0,1,1
NodeName=n3 Name=gpu File=$DEV/nvidia2 Cores=0-1 Links=2,2,-1,1,0,2
NodeName=n3 Name=gpu File=$DEV/nvidia3 Cores=2-3 Links=1,0,1,-1,2,1
NodeName=n3 Name=gpu File=$DEV/nvidia4 Cores=2-3 Links=0,1,0,2,-1,1
NodeName=n3 Name=gpu File=$DEV/nvidia5 Cores=2-3 Links=3,1,2,1,1,-1
NodeName=n4 Name=gpu File=$DEV/nvidia[0-2] Cores=0-1
NodeName=n4 Name=gpu File=$DEV/nvidia[3-5] Cores=2-3'

# GPU picks on the nodes of LINKS_GPUS (the links configuration), each node on its own with -w:
# per node (--gres=gpu:N, --gpus-per-node) from idle and beside jobs holding the best linked
# GPUs, per task, per job on one node and over two (where a second walk tops the first up).
# (No --gpus-per-socket: the replay's request parser, host/slurm/src/job_request.rs, has neither it
# nor --sockets-per-node.)
LINKS_STEPS="submit l1 -w n1 -n1 --gres=gpu:3
submit m1 -w n2 -n1 --gres=gpu:3
submit l2 -w n1 -n1 --gres=gpu:1
cancel l1
submit l3 -w n1 -n1 --gres=gpu:2
cancel l2
cancel l3
submit l4 -w n1 -n1 --gpus-per-node=1
submit l5 -w n1 -n1 --gres=gpu:2
submit l6 -w n1 -n2 --gpus-per-task=1
cancel l4
cancel l5
cancel l6
submit l7 -w n1 -n2 --gpus-per-task=1
cancel l7
submit l8 -w n1 -N1 -n1 --gpus=2
submit l9 -w n1 -N1 -n1 --gpus=3
cancel l8
cancel l9
cancel m1
submit m2 -w n2 -n1 --gres=gpu:1
submit m3 -w n2 -n1 --gres=gpu:2
submit m4 -w n2 -n1 --gres=gpu:2
cancel m2
cancel m3
cancel m4
submit m5 -w n2 -n2 --gpus-per-task=1
cancel m5
submit m6 -w n2 -N1 -n1 --gpus=3
cancel m6
submit c1 -w n3 -n8 --gres=gpu:4
cancel c1
submit c2 -w n3 -n1 --gres=gpu:4
cancel c2
submit c4 -w n3 -n4 --gpus-per-task=1
cancel c4
submit c5 -w n3 -N1 -n8 --gpus=3
cancel c5
submit d1 -w n4 -n8 --gres=gpu:4
cancel d1
submit d2 -w n4 -n1 -c4 --gres=gpu:4 --gres-flags=enforce-binding
cancel d2
submit d3 -w n4 -N1 -n8 --gpus=4
cancel d3
submit e1 -w n3,n4 -N2 -n2 --gpus=7
cancel e1
submit e2 -w n3,n4 -N2 -n2 --gpus=3
cancel e2"

say() { echo "[record +$(($(date +%s) - T0))s] $*"; }
die() { echo "[record] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi

# sbatch reads options from SLURM_*/SBATCH_* variables: none may leak in from the caller.
# (SLURM_WASM_* are the shim's settings, for the daemons setup.sh starts: kept.)
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' \
  | grep -v '^SLURM_WASM_')

WORK=$(mktemp -d)
# ------------------------------------------------------------------ teardown on every exit
STARTED=0
stop_cluster() {
  [ "$STARTED" = 1 ] || return 0
  # slurmctld keeps reservations across restarts: a stream that failed while holding one
  # must not leave it to the next configuration (a reservation in use cannot be deleted, so
  # the stream's jobs go first; every job on the anchor is this script's)
  local r resvs
  resvs=$(scontrol -o show reservation 2>/dev/null | grep -o 'ReservationName=[^ ]*' | cut -d= -f2 || true)
  if [ -n "$resvs" ]; then
    scancel --user=root 2>/dev/null || true
    sleep 2
    for r in $resvs; do
      scontrol delete ReservationName="$r" || echo "[record] could not delete reservation $r" >&2
    done
  fi
  if [ -x "$A/teardown.sh" ]; then
    say "stopping the cluster ($A/teardown.sh)"
    bash "$A/teardown.sh" || true
  else
    # setup.sh failed before writing teardown.sh: stop, by PID file, the daemons it started
    say "setup.sh wrote no teardown.sh; stopping daemons by their PID files"
    for f in "$A"/run/slurmd-*.pid "$A/run/slurmctld.pid"; do
      [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null && echo "sent TERM to $(cat "$f") ($f)"
    done
  fi
  STARTED=0
}
on_exit() {
  local rc=$?
  stop_cluster
  rm -rf "$WORK"
  [ $rc = 0 ] || echo "[record] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

field() { sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<< "$1" | head -n 1; }

# end_time ID -> the job's EndTime, Unix seconds
end_time() {
  date -d "$(field "$(scontrol show job "$1")" EndTime)" +%s
}

# job_state ID -> "STATE REASON"
job_state() {
  local rec
  rec=$(scontrol show job "$1" 2>/dev/null || true)
  echo "$(field "$rec" JobState) $(field "$rec" Reason)"
}

# settle ID: wait until the job runs (or holds its allocation suspended: under preempt/qos
# with SUSPEND,GANG the gang scheduler may suspend a job as it starts), or has pended with a
# reason for 3 s
settle() {
  local st since=""
  for _ in $(seq 1 100); do
    st=$(job_state "$1")
    case "$st" in
      RUNNING*|SUSPENDED*) return 0 ;;
      "PENDING None"|"PENDING "|CONFIGURING*) since="" ;;
      PENDING*) [ -n "$since" ] || since=$(date +%s)
                [ $(($(date +%s) - since)) -ge 3 ] && return 0 ;;
      *) die "job $1 in unexpected state: $st" ;;
    esac
    sleep 0.2
  done
  die "job $1 neither started nor pended with a reason in 20 s (last: $st)"
}

# started ID: wait until the job runs (a preemptor, while its preemptees end)
started() {
  for _ in $(seq 1 100); do
    [[ $(job_state "$1") == RUNNING* ]] && return 0
    sleep 0.2
  done
  die "job $1 preempted jobs but did not start in 20 s (last: $(job_state "$1"))"
}

# preempted_among LINES: "<id> <name> <state>" for the "<id> <name>" lines whose job is now
# PREEMPTED (cancelled or requeued) or SUSPENDED
preempted_among() {
  local i n st
  while read -r i n; do
    [ -n "$i" ] || continue
    st=$(job_state "$i")
    case "$st" in PREEMPTED*|SUSPENDED*) echo "$i $n ${st%% *}" ;; esac
  done <<< "$1"
  return 0
}

# resumed_among LINES: "<id> <name> <EndTime epoch>" for the "<id> <name>" lines whose job runs
# again (a resume moves the job's end by the time it was suspended)
resumed_among() {
  local i n
  while read -r i n; do
    [[ $(job_state "$i") == RUNNING* ]] || continue
    echo "$i $n $(end_time "$i")"
  done <<< "$1"
  return 0
}

gone() {
  for _ in $(seq 1 100); do
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  die "job $1 still in the queue 20 s after scancel"
}

declare -A ID

# update OUT HEAD ID SHOW KEY=VALUE: `scontrol update JobId=ID KEY=VALUE` of a running job,
# written to OUT as section HEAD: `rc=`, then scontrol's error or `--- scontrol show job -d`
# with job SHOW's record; `not running` when job ID is not running. Sets rc.
update() {
  local out=$1 head=$2 id=$3 show=$4 change=$5
  rc=0
  if [ -z "$id" ] || [ -z "$(squeue -h -j "$id" -t running -o %i 2>/dev/null)" ]; then
    printf '%s\nnot running\n' "$head" >> "$out"
    return
  fi
  scontrol update JobId="$id" "$change" >"$WORK/out" 2>&1 || rc=$?
  {
    echo "$head"
    echo "rc=$rc"
    if [ $rc != 0 ]; then
      sed 's/^/scontrol: /' "$WORK/out"
    else
      echo "--- scontrol show job -d"
      scontrol show job -d "$show" | sed '/^ *$/d'
    fi
  } >> "$out"
}

run_stream() {
  local out=$1 steps=$2 kind name opts id rc st before preempted suspended resumed
  : > "$out"
  ID=()   # the job ids of this stream's names
  [ -z "${SHIM_PLUGINDIR:-}" ] || : > "${out%/*}/sinfo.txt"
  while read -r -u 3 kind rest; do
    case "$kind" in
      submit)
        read -r name opts <<< "$rest"
        rc=0
        before=$(squeue -h -t running -o '%i %j' | sort -n)
        if [[ $opts =~ --dependency=expand:([^ ]+) ]]; then
          # a job that expands another is merged into it later, which slurmctld refuses
          # while it has a step: an allocation without a shell, named job's id for its name
          local into=${BASH_REMATCH[1]} sopts
          if [ -z "${ID[$into]:-}" ]; then
            # the job to expand was refused: nothing to ask slurmctld
            rc=1
            echo "record.sh: not submitted: $into has no job" > "$WORK/err"
          else
            sopts=${opts/expand:$into/expand:${ID[$into]}}
            # shellcheck disable=SC2086 # the options are words on purpose
            timeout 30 salloc --no-shell -J "$name" $sopts >"$WORK/out" 2>"$WORK/err" || rc=$?
            id=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$WORK/err")
            [ $rc != 0 ] || [ -n "$id" ] || die "$name: no job id in salloc's answer: $(cat "$WORK/err")"
          fi
        else
          # shellcheck disable=SC2086 # the options are words on purpose
          sbatch -J "$name" -o /dev/null $opts --wrap 'sleep 1000' >"$WORK/out" 2>"$WORK/err" || rc=$?
          id=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$WORK/out")
        fi
        {
          echo "[submit $name] $opts"
          echo "rc=$rc"
        } >> "$out"
        if [ $rc != 0 ]; then
          sed 's/^/sbatch: /; s/^sbatch: \(sbatch\|salloc\|record.sh\): /\1: /' "$WORK/err" >> "$out"
          say "$name: refused ($(head -n 1 "$WORK/err"))"
          continue
        fi
        [ -n "$id" ] || die "$name: no job id in sbatch's answer: $(cat "$WORK/out")"
        ID[$name]=$id
        settle "$id"
        preempted=$(preempted_among "$before")
        if [ -n "$preempted" ]; then
          # the preemptor starts in a later scheduling pass, once its preemptees are gone
          started "$id"
        fi
        st=$(job_state "$id")
        {
          echo "id=$id"
          echo "--- scontrol show job -d"
          scontrol show job -d "$id" | sed '/^ *$/d'
          if [ -n "$preempted" ]; then
            echo "--- preempted"
            echo "$preempted"
          fi
        } >> "$out"
        if [[ $st == PENDING* ]]; then
          scancel "$id"; gone "$id"
          echo "--- cancelled (pending)" >> "$out"
        fi
        if [ -n "${SHIM_PLUGINDIR:-}" ]; then
          # what the clients see of the allocation (select/wasm's nodeinfo): the running
          # jobs, then sinfo's allocated/idle/other/total CPUs of each node
          {
            echo "[after $name]"
            echo "running $(squeue -h -t running -o %i | sort -n | tr '\n' ' ')"
            sinfo -h -N -p big -o '%N %C'
          } >> "${out%/*}/sinfo.txt"
        fi
        say "$name: job $id $st"
        ;;
      cancel)
        name=$rest
        id=${ID[$name]:-}
        if [ -z "$id" ] || [ -z "$(squeue -h -j "$id" -o %i 2>/dev/null)" ]; then
          echo "[cancel $name] not running" >> "$out"
          continue
        fi
        suspended=$(squeue -h -t suspended -o '%i %j' | sort -n)
        scancel "$id"; gone "$id"
        echo "[cancel $name] id=$id" >> "$out"
        if [ -n "$suspended" ]; then
          # the gang scheduler resumes what the job's end lets run again
          sleep 2
          resumed=$(resumed_among "$suspended")
          if [ -n "$resumed" ]; then
            echo "--- resumed" >> "$out"
            echo "$resumed" >> "$out"
          fi
        fi
        ;;
      test-only)
        opts=$rest
        {
          echo "[test-only] $opts"
          echo "now=$(date +%s)"
          # shellcheck disable=SC2086
          sbatch --test-only -o /dev/null $opts --wrap 'sleep 1000' 2>&1 || true
          echo "--- running"
          squeue -h -t running -o '%i %j %e' | sort -n | while read -r i n e; do
            echo "$i $n $(date -d "$e" +%s)"
          done
        } >> "$out"
        say "test-only $opts"
        ;;
      suspend|resume)
        # scontrol suspend/resume: slurmctld calls select's job_suspend/job_resume with
        # indf_susp set (an indefinite suspension, unlike the gang scheduler's)
        name=$rest
        id=${ID[$name]:-}
        [ -n "$id" ] || die "$kind $name: no such job"
        rc=0
        scontrol "$kind" "$id" >"$WORK/out" 2>&1 || rc=$?
        sleep 1
        {
          echo "[$kind $name] id=$id"
          echo "rc=$rc"
          [ $rc = 0 ] || sed 's/^/scontrol: /' "$WORK/out"
          echo "state=$(job_state "$id")"
          echo "end=$(end_time "$id")"
        } >> "$out"
        say "$kind $name: rc=$rc $(job_state "$id")"
        ;;
      resize)
        # shrink a running job to the nodes named (its first node, which runs the batch
        # script, must stay): slurmctld calls select's job_resized for each node it drops
        read -r name opts <<< "$rest"
        update "$out" "[resize $name] $opts" "${ID[$name]:-}" "${ID[$name]:-}" NodeList="$opts"
        say "resize $name to $opts: rc=$rc"
        ;;
      merge)
        # give all of a running job's resources to the job its --dependency=expand names:
        # slurmctld calls select's job_expand and ends the job given up
        name=$rest
        id=${ID[$name]:-}
        local into
        into=$(awk -v n="$name" '$1 == "submit" && $2 == n' <<< "$steps" \
          | sed -n 's/.*--dependency=expand:\([^ ]*\).*/\1/p')
        [ -n "$into" ] || die "merge $name: $name was not submitted with --dependency=expand:<job>"
        update "$out" "[merge $name] into=$into" "$id" "${ID[$into]:-}" NumNodes=0
        say "merge $name into $into: rc=$rc"
        ;;
      reserve|hold)
        # scontrol create reservation: slurmctld asks select's resv_test for the nodes (and
        # cores); `reserve` deletes it once recorded, `hold` keeps it until `release`
        read -r name opts <<< "$rest"
        rc=0
        # shellcheck disable=SC2086 # the keys are words on purpose
        scontrol create reservation ReservationName="$name" StartTime=now Duration=10 \
          Users=root $opts >"$WORK/out" 2>&1 || rc=$?
        {
          echo "[$kind $name] $opts"
          echo "rc=$rc"
          if [ $rc = 0 ]; then
            scontrol show reservation "$name" | sed '/^ *$/d'
          else
            sed 's/^/scontrol: /' "$WORK/out"
          fi
        } >> "$out"
        if [ $rc = 0 ] && [ "$kind" = reserve ]; then
          scontrol delete ReservationName="$name" || die "could not delete $name"
        fi
        say "$kind $name $opts: rc=$rc"
        ;;
      release)
        name=$rest
        scontrol delete ReservationName="$name" || die "could not delete $name"
        echo "[release $name]" >> "$out"
        say "release $name"
        ;;
      sleep)
        # let the running jobs age (PreemptExemptTime)
        sleep "$rest"
        echo "[sleep $rest]" >> "$out"
        say "slept $rest s"
        ;;
      *) die "unknown step: $kind $rest" ;;
    esac
  done 3<<< "$steps"
}

record_config() {
  local dir=$1 stype=$2 sparams=$3 extra line probe setup=$ANCHOR/setup.sh node_keys=${5:-}
  local part_keys=${6:-} steps=${7:-STEPS} qos=${8:-} gpus=${9:-} dbd=0 q
  extra=$(printf '%b' "$4")
  local shim_mps=0
  if [ -n "${SHIM_PLUGINDIR:-}" ]; then
    # setup.sh configures gres/mps only under select/cons_tres: the copy below gives it to a
    # cons_tres configuration run under select/wasm too
    [ "$stype" = select/cons_tres ] && shim_mps=1
    stype=select/wasm
    local plugindir=$SHIM_PLUGINDIR:/usr/lib/x86_64-linux-gnu/slurm-wlm
    [ "${SHIM_ALONE:-0}" = 1 ] && plugindir=$SHIM_PLUGINDIR
    extra="PluginDir=$plugindir${extra:+$'\n'$extra}"
  fi
  [ -z "$qos" ] || dbd=1
  rm -f "$A/teardown.sh"
  say "== $dir: starting the anchor cluster ($stype $sparams${extra:+, ${extra//$'\n'/ }}${node_keys:+, n[1-4] $node_keys})"
  if [ -n "$node_keys$part_keys$gpus" ] || [[ $extra == *PartitionName=* ]] || [ "$shim_mps" = 1 ]; then
    setup=$WORK/setup.sh
    cp "$ANCHOR/setup.sh" "$setup"
  fi
  if [ "$shim_mps" = 1 ]; then
    sed -i 's|^if \[ "$SELECT_TYPE" = select/cons_tres \]; then MPS=1|if [ "$SELECT_TYPE" = select/wasm ] \|\| [ "$SELECT_TYPE" = select/cons_tres ]; then MPS=1|' "$setup"
    grep -q 'select/wasm ] || \[ "$SELECT_TYPE" = select/cons_tres ]; then MPS=1' "$setup" \
      || die "could not give gres/mps to select/wasm in setup.sh"
  fi
  if [[ $extra == *PartitionName=* ]]; then
    # setup.sh waits for six idle lines of `sinfo -N`, which lists a node once per
    # partition: the copy counts the nodes once
    sed -i 's/sinfo -h -N -t idle -o %N | wc -l/sinfo -h -N -t idle -o %N | sort -u | wc -l/' "$setup"
    grep -q 'sort -u | wc -l' "$setup" || die "could not make setup.sh count each idle node once"
  fi
  if [ -n "$part_keys" ]; then
    # nor for partition keys: added to the copy's PartitionName=big line
    sed -i "s/^\(PartitionName=big .*\)$/\1 $part_keys/" "$setup"
    grep -q "^PartitionName=big .* $part_keys$" "$setup" \
      || die "could not add $part_keys to setup.sh's PartitionName=big line"
  fi
  if [ -n "$node_keys" ]; then
    # setup.sh has no knob for node keys: a copy with them on the n[1-4] line, each
    # replacing the key's value there or added before Gres=
    local kv key
    for kv in $node_keys; do
      key=${kv%%=*}
      if grep -q "^NodeName=n\[1-4\] .* $key=" "$setup"; then
        sed -i "/^NodeName=n\[1-4\] /s/ $key=[^ ]*/ $kv/" "$setup"
      else
        sed -i "s/^\(NodeName=n\[1-4\] .*\) Gres=/\1 $kv Gres=/" "$setup"
      fi
      grep -q "^NodeName=n\[1-4\] .* $kv[ ]" "$setup" \
        || die "could not set $kv on setup.sh's NodeName=n[1-4] line"
    done
  fi
  if [ -n "$gpus" ]; then
    # nor for GPUs: the copy writes the lines of the variable $gpus names in place of its two
    # Name=gpu lines, makes a fake device for each nvidia<N> they name (setup.sh's loop over
    # 0 1, which mknods a character device of NVIDIA's major 195), and gives n[1-4] that many
    local n list
    n=$(grep -o 'nvidia[0-9]\+' <<< "${!gpus}" | tr -d a-z | sort -n | tail -n 1)
    [ -n "$n" ] || die "$gpus names no nvidia<N> device"
    n=$((n + 1))
    list=$(seq -s ' ' 0 $((n - 1)))
    printf '%s\n' "${!gpus}" > "$WORK/gpus.conf"
    sed -i '/^NodeName=n\[1-4\] Name=gpu File=$DEV\/nvidia1 /d' "$setup"
    sed -i "/^NodeName=n\[1-4\] Name=gpu File=\$DEV\/nvidia0 /{r $WORK/gpus.conf
d}" "$setup"
    sed -i "s/^  for i in 0 1; do /  for i in $list; do /" "$setup"
    sed -i "/^NodeName=n\[1-4\] /s/ Gres=gpu:2/ Gres=gpu:$n/" "$setup"
    grep -q "^  for i in $list; do " "$setup" \
      && grep -q "^NodeName=n\[1-4\] .* Gres=gpu:$n" "$setup" \
      && grep -qxF "$(head -n 1 "$WORK/gpus.conf")" "$setup" \
      && ! grep -q '^NodeName=n\[1-4\] Name=gpu ' "$setup" \
      || die "could not give n[1-4] the GPUs of $gpus in setup.sh"
  fi
  STARTED=1
  # slurmctld's log goes on across starts: where this one's lines begin
  local log_from
  log_from=$(($(wc -l < "$A/log/slurmctld.log" 2>/dev/null || echo 0) + 1))
  SELECT_TYPE=$stype SELECT_PARAMS=$sparams EXTRA_CONF=$extra WITH_DBD=$dbd \
    bash "$setup" > "$WORK/setup.log"
  # setup.sh gives every start a fresh accounting database: the QOS are added to it
  while IFS= read -r -d ';' q; do
    # shellcheck disable=SC2086 # a name and keys, as words
    sacctmgr -i add qos $q > /dev/null || die "sacctmgr could not add qos $q"
  done <<< "${qos:+$qos;}"
  line=$(scontrol show config | grep -E '^SelectType ' || true)
  [[ $line =~ =\ $stype$ ]] || die "slurmctld does not run $stype: $line"
  line=$(scontrol show config | grep -E '^SelectTypeParameters ' || true)
  [[ ${line^^} =~ =\ ${sparams^^}$ ]] || die "slurmctld does not run $sparams: $line"

  # slurmctld keeps reservations in its state directory across restarts: one left over
  # from a hand run would take nodes or cores from the stream
  line=$(scontrol -o show reservation 2>/dev/null | grep -o 'ReservationName=[^ ]*' || true)
  [ -z "$line" ] || die "the anchor's state holds reservations (${line//$'\n'/ }); delete them with scontrol delete ReservationName=..."

  # the first scheduling pass comes a few seconds after slurmctld starts
  probe=$(sbatch --parsable -J probe -o /dev/null -p hw --wrap 'sleep 1000')
  for _ in $(seq 1 100); do
    [[ $(job_state "$probe") == RUNNING* ]] && break; sleep 0.2
  done
  [[ $(job_state "$probe") == RUNNING* ]] || die "probe job $probe did not start"
  scancel "$probe"; gone "$probe"

  mkdir -p "$OUT/$dir"
  rm -f "$OUT/$dir"/*
  cp /etc/slurm/slurm.conf "$OUT/$dir/slurm.conf"
  cp /etc/slurm/gres.conf "$OUT/$dir/gres.conf"
  [ -z "$qos" ] || sacctmgr -P show qos format=Name,Priority,Preempt,PreemptMode,PreemptExemptTime \
    > "$OUT/$dir/qos.txt"
  scontrol show config | grep -E '^(SelectType|SelectTypeParameters|DefMemPerCPU|DefMemPerNode|GresTypes|JobDefaults) ' \
    > "$OUT/$dir/config.txt"
  [ -z "${FUZZ_CMD[$steps]:-}" ] || echo "${FUZZ_CMD[$steps]}" > "$OUT/$dir/fuzz.txt"
  run_stream "$OUT/$dir/stream.txt" "${!steps}"
  if [ -n "${SHIM_PLUGINDIR:-}" ]; then
    tail -n +"$log_from" "$A/log/slurmctld.log" | grep -o 'select/wasm: plugin id .*' \
      > "$OUT/$dir/plugin-id.txt" || true
    tail -n +"$log_from" "$A/log/slurmctld.log" | grep 'error: select/wasm' \
      > "$OUT/$dir/shim-errors.txt" || true
  fi
  stop_cluster
  say "== $dir: $(grep -c '^\[submit' "$OUT/$dir/stream.txt") submits recorded"
}

while IFS='|' read -r -u 3 dir stype sparams extra node_keys part_keys steps qos gpus; do
  if [ $# -gt 0 ] && [[ " $* " != *" $dir "* ]]; then continue; fi
  record_config "$dir" "$stype" "$sparams" "$extra" "$node_keys" "$part_keys" "$steps" "$qos" \
    "$gpus"
done 3<<< "$CONFIGS"
say "done"
