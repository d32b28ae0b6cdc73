#!/bin/bash
# select-scale.sh -- a slurmctld of 1,024 nodes that need no slurmd, 5,000 queued batch jobs of a
# mixed shape, a fixed scheduling window, then sdiag's main-scheduler and backfill cycle times.
# The select plugin is the one parameter, so that stock select/cons_tres and select/wasm with a
# cons_tres component are measured on the same cluster and the same queue (issue 28, "Scale").
#
# Usage (as root; holds the anchor cluster's lock, whose ports and CPUs it would compete with):
#     flock -o /tmp/slurm-anchor.lock bash host/slurm-plugins/bench/select-scale.sh select/cons_tres
#     PLUGINDIR=<dir with select_wasm.so and lib/libslurm_wasm.so> \
#     SLURM_WASM_CONFIG=<host TOML naming select_cons_tres.wasm> \
#     flock -o /tmp/slurm-anchor.lock bash host/slurm-plugins/bench/select-scale.sh select/wasm
# Environment (defaults): NODES=1024 (a multiple of 16; one in 16 nodes has 4 GPUs), JOBS=5000,
#   WINDOW=240 (seconds of scheduling measured), BF_MAX_JOB_TEST=500 (Slurm's default: jobs a
#   backfill pass tests), BF_MAX_TIME=160 (seconds a backfill pass may take), SEED=28 (the job
#   mix), SUBMITTERS=1 (parallel sbatch; more than one numbers the jobs in another order each run, and priority/basic then orders another queue), WORK=/tmp/slurm-select-scale (config, state, logs), OUT=$WORK/result-<plugin>-<time>,
#   PORT=16817 (slurmctld; no slurmd port is ever used), DEBUG_FLAGS (slurm.conf DebugFlags, for
#   example Backfill to log each planned start; none by default, since logging costs time),
#   CTLD_DEBUG=info (SlurmctldDebug), PLUGINDIR and SLURM_WASM_CONFIG (only
#   for select/wasm: PluginDir=$PLUGINDIR:<Debian's plugin dir>, the variable kept in
#   slurmctld's environment).
#
# How the nodes need no slurmd (Slurm 22.05.8, src/slurmctld/read_config.c and power_save.c):
#   every node is State=CLOUD, so slurmctld starts it POWERED_DOWN ("idle~") and never pings it
#   (ping_nodes.c skips powered-down and powering-up nodes). Power saving is on (SuspendTime set,
#   SuspendProgram and ResumeProgram an executable that does nothing), so a job given such nodes
#   becomes CONFIGURING and power_save.c marks its nodes POWERING_UP and calls ResumeProgram.
#   No slurmd ever registers, so the jobs stay CONFIGURING and hold their cores, memory and GPUs
#   until ResumeTimeout (10 h here) would mark the nodes down: allocations are made, nothing
#   launches. PrivateData=cloud makes sinfo show the powered-down nodes.
#   GPUs: slurmctld reads gres.conf itself for CLOUD nodes (read_config.c, _gres_reconfig: a
#   cloud node's GRES are loaded at start, not at its first registration), so the GPU nodes'
#   two GPUs per socket and their cores come from the gres.conf written here; no device file is
#   ever opened (that is slurmd's part).
#
# The measured window: jobs are submitted while both partitions are State=DOWN (accepted and
# queued, never scheduled), then `sdiag --reset`, both partitions UP, WINDOW seconds of
# scheduling, and sdiag, squeue and sinfo are read. Every run starts from an empty state (-c).
#
# Output in OUT: slurm.conf, gres.conf, jobs.txt (the sbatch arguments, one job a line), sdiag.txt,
# summary.txt (one key=value a line: the figures BENCHMARKS.md quotes), squeue-states.txt,
# sinfo.txt, slurmctld.log. Stops what it started (slurmctld, and munged if none was running),
# by PID, on every exit.
set -euo pipefail

SELECT=${1:?usage: select-scale.sh select/cons_tres|select/wasm|<other select plugin>}
NODES=${NODES:-1024}
JOBS=${JOBS:-5000}
WINDOW=${WINDOW:-240}
BF_MAX_JOB_TEST=${BF_MAX_JOB_TEST:-500}
BF_MAX_TIME=${BF_MAX_TIME:-160}
SEED=${SEED:-28}
SUBMITTERS=${SUBMITTERS:-1}
WORK=${WORK:-/tmp/slurm-select-scale}
PORT=${PORT:-16817}
ANCHOR_STATE=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
DEBIAN_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
STAMP=$(date +%Y%m%d-%H%M%S)
OUT=${OUT:-$WORK/result-${SELECT//\//_}-$STAMP}
T0=$(date +%s.%N)

el() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }
say() { echo "[select-scale +$(el "$T0")s] $*"; }
die() { echo "[select-scale] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (slurmctld runs as SlurmUser=root)"
[ -x /usr/sbin/slurmctld ] || die "no /usr/sbin/slurmctld (Debian's slurmctld package)"
[ $((NODES % 16)) = 0 ] && [ "$NODES" -ge 16 ] || die "NODES must be a multiple of 16"
if [ -f "$ANCHOR_STATE/run/slurmctld.pid" ] &&
   kill -0 "$(cat "$ANCHOR_STATE/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is running ($ANCHOR_STATE/run/slurmctld.pid): stop it with its teardown.sh"
fi
RUN=$WORK/run
if [ -f "$RUN/slurmctld.pid" ] && kill -0 "$(cat "$RUN/slurmctld.pid")" 2>/dev/null; then
  die "a select-scale slurmctld is already running ($RUN/slurmctld.pid)"
fi
PLUGIN_DIR_LINE="PluginDir=$DEBIAN_PLUGINS"
if [ "$SELECT" = select/wasm ]; then
  : "${PLUGINDIR:?PLUGINDIR: the directory with select_wasm.so (select/wasm only)}"
  : "${SLURM_WASM_CONFIG:?SLURM_WASM_CONFIG: the host TOML naming the select component}"
  [ -f "$PLUGINDIR/select_wasm.so" ] || die "no select_wasm.so in $PLUGINDIR"
  [ -f "$SLURM_WASM_CONFIG" ] || die "no host configuration $SLURM_WASM_CONFIG"
  PLUGIN_DIR_LINE="PluginDir=$(cd "$PLUGINDIR" && pwd):$DEBIAN_PLUGINS"
  export SLURM_WASM_CONFIG
else
  unset SLURM_WASM_CONFIG SLURM_WASM_LIBRARY
fi

# --------------------------------------------------------------- cleanup: only what we started
CTLD_PID=""; MUNGE_PID=""
stop_all() {
  local rc=$?
  if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
    kill "$CTLD_PID" 2>/dev/null && say "sent TERM to slurmctld $CTLD_PID"
    for _ in $(seq 1 120); do kill -0 "$CTLD_PID" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$CTLD_PID" 2>/dev/null; then
      kill -KILL "$CTLD_PID" 2>/dev/null; say "slurmctld $CTLD_PID did not stop in 30 s: KILL"
    fi
  fi
  rm -f "$RUN/slurmctld.pid"
  if [ -n "$MUNGE_PID" ] && kill -0 "$MUNGE_PID" 2>/dev/null; then
    kill "$MUNGE_PID" 2>/dev/null && say "sent TERM to munged $MUNGE_PID (started by this run)"
    for _ in $(seq 1 40); do kill -0 "$MUNGE_PID" 2>/dev/null || break; sleep 0.25; done
  fi
  [ -d "$OUT" ] && [ -f "$WORK/log/slurmctld.log" ] && cp "$WORK/log/slurmctld.log" "$OUT/" || true
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

wait_for() { # <shell test> <tries, 0.5 s apart>
  for _ in $(seq 1 "$2"); do eval "$1" >/dev/null 2>&1 && return 0; sleep 0.5; done
  die "timeout waiting for: $1"
}

# --------------------------------------------------------------- munge (as the anchor's setup.sh)
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "munged already running: using it, not stopping it"
else
  [ -s /etc/munge/munge.key ] || die "no /etc/munge/munge.key (run the anchor's setup.sh once)"
  install -d -o munge -g munge -m 0755 /run/munge
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged    # forks; writes /run/munge/munged.pid
  wait_for "munge -n | unmunge" 20
  MUNGE_PID=$(cat /run/munge/munged.pid)
  say "started munged $MUNGE_PID"
fi

# --------------------------------------------------------------- configuration
rm -rf "$WORK/state" "$WORK/log" "$RUN"
mkdir -p "$WORK/state" "$WORK/log" "$RUN" "$WORK/bin" "$OUT"
cat > "$WORK/bin/power-noop.sh" <<'EOF'
#!/bin/sh
# SuspendProgram and ResumeProgram of select-scale.sh: nodes are never powered, so do nothing.
exit 0
EOF
chmod 755 "$WORK/bin/power-noop.sh"

H=$(hostname -s)
NG=$((NODES / 16))            # GPU nodes
NC=$((NODES - NG))            # CPU nodes
CONF=$WORK/slurm.conf
cat > "$CONF" <<EOF
# written by host/slurm-plugins/bench/select-scale.sh ($SELECT, $STAMP)
ClusterName=selectscale
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
$PLUGIN_DIR_LINE
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/state/slurmd-%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd-%n.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmctldDebug=${CTLD_DEBUG:-info}
${DEBUG_FLAGS:+DebugFlags=$DEBUG_FLAGS}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
PriorityType=priority/basic
SchedulerType=sched/backfill
SelectType=$SELECT
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=4000
GresTypes=gpu
MessageTimeout=60
# main scheduler: a full-queue pass every 20 s, as long as it needs up to 20 s (the default
# max_sched_time of 2 s would cut a slow plugin's pass short and hide it); backfill: the first
# $BF_MAX_JOB_TEST jobs by priority, 30 s after the previous pass ended, up to $BF_MAX_TIME s a pass:
# room for a plugin several times slower than stock (about 40 s a pass on the reference machine),
# so that a pass ends when its jobs are done, not when its time is up (bf_continue: a pass that
# yields its locks goes on afterwards)
SchedulerParameters=sched_interval=20,max_sched_time=20,default_queue_depth=10000,partition_job_depth=0,bf_interval=30,bf_max_time=$BF_MAX_TIME,bf_max_job_test=$BF_MAX_JOB_TEST,bf_continue,bf_window=2880,bf_resolution=300
# power saving: nodes start powered down (State=CLOUD) and are never powered up
SuspendProgram=$WORK/bin/power-noop.sh
ResumeProgram=$WORK/bin/power-noop.sh
SuspendTime=36000
SuspendTimeout=60
ResumeTimeout=36000
ResumeRate=0
SuspendRate=0
PrivateData=cloud
ReturnToService=2
NodeName=c[0001-$(printf %04d "$NC")] NodeHostname=$H NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=192000 State=CLOUD
NodeName=g[001-$(printf %03d "$NG")] NodeHostname=$H NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=384000 Gres=gpu:4 State=CLOUD
PartitionName=batch Nodes=c[0001-$(printf %04d "$NC")] Default=YES DefaultTime=01:00:00 MaxTime=2-00:00:00 State=DOWN
PartitionName=gpu Nodes=g[001-$(printf %03d "$NG")] DefaultTime=01:00:00 MaxTime=2-00:00:00 State=DOWN
EOF
cat > "$WORK/gres.conf" <<EOF
AutoDetect=off
NodeName=g[001-$(printf %03d "$NG")] Name=gpu File=/dev/nvidia[0-1] Cores=0-15
NodeName=g[001-$(printf %03d "$NG")] Name=gpu File=/dev/nvidia[2-3] Cores=16-31
EOF
cp "$CONF" "$WORK/gres.conf" "$OUT/"
export SLURM_CONF=$CONF

# --------------------------------------------------------------- the job mix (deterministic)
# One line of sbatch arguments per job, from SEED. Shares (of JOBS):
#   45% small: 1-8 tasks, 10 min-4 h, half with --mem-per-cpu 2000-8000 MB
#   20% one node's share: 16 or 32 tasks on one node, 1-12 h, some with --mem
#   10% whole nodes: --exclusive, 1 node, 1-24 h
#   15% multi-node: 2-16 nodes x 32 tasks, 1-24 h
#    2% wide: 32-64 nodes x 32 tasks, 2-12 h
#    8% GPU (partition gpu): 1-4 GPUs, 4-8 tasks per GPU, --mem 16000-64000 MB per GPU, 30 min-12 h
awk -v n="$JOBS" -v seed="$SEED" 'BEGIN {
  srand(seed)
  for (i = 0; i < n; i++) {
    r = rand()
    if (r < 0.45) {
      t = 10 + int(rand() * 230)
      a = sprintf("-n %d -t %d", 1 + int(rand() * 8), t)
      if (rand() < 0.5) a = a sprintf(" --mem-per-cpu=%d", 2000 + 1000 * int(rand() * 7))
    } else if (r < 0.65) {
      a = sprintf("-N 1 -n %d -t %d", (rand() < 0.5) ? 16 : 32, 60 + int(rand() * 660))
      if (rand() < 0.3) a = a sprintf(" --mem=%d", 32000 * (1 + int(rand() * 5)))
    } else if (r < 0.75) {
      a = sprintf("-N 1 --exclusive -t %d", 60 + int(rand() * 1380))
    } else if (r < 0.90) {
      a = sprintf("-N %d --ntasks-per-node=32 -t %d", 2 + int(rand() * 15), 60 + int(rand() * 1380))
    } else if (r < 0.92) {
      a = sprintf("-N %d --ntasks-per-node=32 -t %d", 32 + int(rand() * 33), 120 + int(rand() * 600))
    } else {
      g = 1 + int(rand() * 4)
      a = sprintf("-p gpu --gres=gpu:%d -n %d --mem=%d -t %d", g, g * (4 + int(rand() * 5)),
                  g * 16000 * (1 + int(rand() * 4)), 30 + int(rand() * 690))
    }
    print a
  }
}' > "$OUT/jobs.txt"

# --------------------------------------------------------------- slurmctld
say "starting slurmctld ($SELECT, $NODES nodes: $NC CPU + $NG GPU) on port $PORT"
/usr/sbin/slurmctld -D -c -f "$CONF" > "$WORK/log/slurmctld.stdout" 2>&1 &
CTLD_PID=$!
wait_for "scontrol ping | grep -q UP" 120
up=$(sinfo -h -N -o '%N %T' | sort -u | grep -c 'idle~' || true)
[ "$up" = "$NODES" ] || die "expected $NODES powered-down idle nodes, sinfo shows $up"
gpus=$(sinfo -h -N -n g001 -o %G)
case $gpus in gpu:4*) ;; *) die "g001 should have 4 GPUs from slurm.conf and gres.conf: $gpus" ;; esac
say "slurmctld $CTLD_PID up, $up nodes idle~ (powered down), g001 has $gpus"

# --------------------------------------------------------------- submission (partitions down)
ts=$(date +%s.%N)
xargs -P "$SUBMITTERS" -d '\n' -I{} sh -c \
  "sbatch --parsable -o /dev/null -e /dev/null {} --wrap true >/dev/null || echo 'sbatch failed: {}' >&2" \
  < "$OUT/jobs.txt"
SUBMIT_S=$(el "$ts")
queued=$(squeue -h -t PD -o %i | wc -l)
[ "$queued" = "$JOBS" ] || die "submitted $JOBS jobs, $queued are pending"
say "$JOBS jobs submitted in ${SUBMIT_S}s ($SUBMITTERS parallel sbatch)"

# --------------------------------------------------------------- the measured window
cpu_ticks() { awk '{print $14 + $15}' "/proc/$CTLD_PID/stat"; }
sdiag --reset >/dev/null
c0=$(cpu_ticks)
scontrol update PartitionName=batch State=UP
scontrol update PartitionName=gpu State=UP
say "partitions up; scheduling for ${WINDOW}s"
sleep "$WINDOW"
c1=$(cpu_ticks)

sdiag > "$OUT/sdiag.txt"
squeue -h -o '%T %P' | sort | uniq -c > "$OUT/squeue-states.txt"
sinfo -h -o '%P %T %D' > "$OUT/sinfo.txt"
alloc_jobs=$(squeue -h -t CF,R -o %i | wc -l)
alloc_nodes=$(sinfo -h -N -t alloc,mix -o '%N' | sort -u | wc -l)
alloc_cpus=$(sinfo -h -o '%C' -p batch,gpu | awk -F/ '{a += $1} END {print a}')
rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$CTLD_PID/status")

# sdiag's figures (src/sdiag/sdiag.c): the main-scheduler and backfill blocks use the same
# labels, so a label is looked up in its block (the tab-indented lines under the heading)
sd() { # <heading regex> <label>
  awk -v s="$1" -v l="$2" '
    $0 ~ s { in_s = 1; next }
    in_s && !/^\t/ { in_s = 0 }
    in_s && index($0, "\t" l ":") == 1 { sub(/^[^:]*:[ \t]*/, ""); print $1; exit }' \
    "$OUT/sdiag.txt"
}
{
  echo "select=$SELECT"
  echo "nodes=$NODES jobs=$JOBS window_s=$WINDOW seed=$SEED bf_max_job_test=$BF_MAX_JOB_TEST bf_max_time=$BF_MAX_TIME"
  echo "submit_s=$SUBMIT_S"
  echo "main_cycles=$(sd '^Main schedule statistics' 'Total cycles')"
  echo "main_last_us=$(sd '^Main schedule statistics' 'Last cycle')"
  echo "main_max_us=$(sd '^Main schedule statistics' 'Max cycle')"
  echo "main_mean_us=$(sd '^Main schedule statistics' 'Mean cycle')"
  echo "main_mean_depth=$(sd '^Main schedule statistics' 'Mean depth cycle')"
  echo "bf_cycles=$(sd '^Backfilling stats' 'Total cycles')"
  echo "bf_backfilled_jobs=$(sd '^Backfilling stats' 'Total backfilled jobs (since last slurm start)')"
  echo "bf_last_us=$(sd '^Backfilling stats' 'Last cycle')"
  echo "bf_max_us=$(sd '^Backfilling stats' 'Max cycle')"
  echo "bf_mean_us=$(sd '^Backfilling stats' 'Mean cycle')"
  # a pass running when sdiag is read: "Last cycle" and the means are of completed passes, but
  # the "Last depth" lines are that running pass's count so far (sdiag.c, backfill.c)
  if grep -q '^Backfilling stats (WARNING' "$OUT/sdiag.txt"; then
    echo "bf_pass_running_at_read=yes"
  else
    echo "bf_pass_running_at_read=no"
  fi
  echo "bf_last_depth=$(sd '^Backfilling stats' 'Last depth cycle')"
  echo "bf_last_depth_try=$(sd '^Backfilling stats' 'Last depth cycle (try sched)')"
  echo "bf_depth_mean=$(sd '^Backfilling stats' 'Depth Mean')"
  echo "bf_depth_mean_try=$(sd '^Backfilling stats' 'Depth Mean (try depth)')"
  echo "bf_table_size_mean=$(sd '^Backfilling stats' 'Mean table size')"
  echo "allocated_jobs=$alloc_jobs"
  echo "allocated_nodes=$alloc_nodes"
  echo "allocated_cpus=$alloc_cpus"
  echo "ctld_cpu_s=$(awk -v a="$c0" -v b="$c1" -v h="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", (b-a)/h}')"
  echo "ctld_rss_mb=$((rss_kb / 1024))"
} > "$OUT/summary.txt"
say "results in $OUT"
cat "$OUT/summary.txt"
