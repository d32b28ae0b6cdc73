#!/bin/bash
# shim.sh -- the select/wasm shim on the live anchor cluster: the recorded select streams run
# under SelectType=select/wasm with a select component, for tests/select_shim.rs to compare with
# the stock plugin's fixtures (tests/fixtures/anchor/select/<config>/stream.txt), and, with
# FAULT_CONFIG, a select component that traps or loops under failure = "fallback".
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 2.5 minutes per configuration):
#     PLUGINDIR=<dir with select_wasm.so and lib/libslurm_wasm.so> \
#     WASM_CONFIG=<host TOML: [plugins.select] with select_cons_tres.wasm> \
#     [LINEAR_WASM_CONFIG=<host TOML: select_linear.wasm, for linear-* configurations>] \
#     [FAULT_CONFIG=<host TOML: select/hostile, failure = "fallback">] \
#     [ALONE="<config> ..."] \
#     OUT=<output dir> bash tests/anchor/select/shim.sh [<config> ...]
# (configurations as record.sh names them; default cons_tres-CR_Core_Memory)
#
# What it does:
#   1. record.sh with SHIM_PLUGINDIR=$PLUGINDIR and SLURM_WASM_CONFIG=$WASM_CONFIG: each
#      configuration's stream on the anchor cluster under select/wasm, written as record.sh
#      writes fixtures, into OUT/wasm/<config>/. PluginDir is PLUGINDIR, then Debian's
#      directory, whose select/cons_tres and select/linear are loaded beside select/wasm, which
#      then takes an id of its own (120). The configurations ALONE names run as a site that
#      replaces the stock plugin does: PluginDir is OUT/plugins-alone, links to every Debian
#      plugin but select_cons_tres.so and select_linear.so, and to PLUGINDIR's select_wasm.so
#      and lib/ (select/wasm then takes the stock plugin's id: 109, or 102 under linear's
#      bookkeeping, so that scontrol accepts CoreCnt= reservations);
#   2. a restart: the anchor cluster under select/wasm with WASM_CONFIG and DebugFlags=SelectType
#      (the shim compares cons_tres's and the component's allocated CPUs and memory of each node
#      after every commit and release); RESTART_JOBS submitted and running, their placements
#      (`scontrol show job -d`: NodeList, CPU_IDs, Mem, GRES) written to OUT/restart/before.txt;
#      slurmctld stopped and started again without -c (it recovers the jobs; the component gets
#      them back through select_p_select_nodeinfo_set); the same placements into after.txt;
#      then `scontrol reconfigure` and the placements again into reconfigured.txt;
#      then AFTER_JOB submitted, its placement into next.txt. The same cluster started afresh
#      with the same jobs and no restart gives control.txt (RESTART_JOBS then AFTER_JOB).
#      OUT/restart/debug.txt: slurmctld's lines of the debug comparison that name a difference;
#      OUT/restart/steps.txt: two one-CPU jobs on h1 (real CPUs), each with an srun step bound
#      to cores: `<name> CPU_IDs=<the job's> step=<the step task's Cpus_allowed_list>`;
#   3. with FAULT_CONFIG, for each of FAULT_CASES: the anchor cluster started afresh under
#      select/wasm with that host configuration, a batch job named after the hostile behaviour
#      (`trap`, `loop`: the component acts it out in job-test; `gpu-beyond`, with --gres=gpu:1:
#      its answer names a GPU past the node's two, which must never be applied), then a plain
#      job (or what sbatch answered, when the job was refused at submit); OUT/fault/<case>.txt: the first
#      job's and the plain job's state, node list and CPU_IDs 20 s later, whether slurmctld still
#      answers, and slurmctld's log lines naming select/wasm;
#   4. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
: "${PLUGINDIR:?PLUGINDIR: the directory with select_wasm.so and lib/libslurm_wasm.so}"
: "${WASM_CONFIG:?WASM_CONFIG: the host configuration naming the select component}"
: "${OUT:?OUT: the output directory}"
FAULT_CASES="trap loop gpu-beyond"
T0=$(date +%s)

say() { echo "[select-shim +$(($(date +%s) - T0))s] $*"; }
die() { echo "[select-shim] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$PLUGINDIR/select_wasm.so" ] || die "no select_wasm.so in $PLUGINDIR"
[ $# -gt 0 ] || set -- cons_tres-CR_Core_Memory

ALONE_DIR=$OUT/plugins-alone
if [ -n "${ALONE:-}" ]; then
  rm -rf "$ALONE_DIR"; mkdir -p "$ALONE_DIR"
  for f in /usr/lib/x86_64-linux-gnu/slurm-wlm/*; do
    case ${f##*/} in select_cons_tres.so | select_linear.so) ;; *) ln -s "$f" "$ALONE_DIR/" ;; esac
  done
  ln -s "$PLUGINDIR/select_wasm.so" "$PLUGINDIR/lib" "$ALONE_DIR/"
fi
for config in "$@"; do
  # a linear configuration runs the component LINEAR_WASM_CONFIG names
  host_config=$WASM_CONFIG
  if [[ $config == linear-* ]]; then
    host_config=${LINEAR_WASM_CONFIG:?LINEAR_WASM_CONFIG: the host configuration for $config}
  fi
  dir=$PLUGINDIR alone=0
  if [[ " ${ALONE:-} " == *" $config "* ]]; then dir=$ALONE_DIR alone=1; fi
  say "the recorded stream $config under select/wasm ($host_config, PluginDir $dir, alone=$alone)"
  SHIM_PLUGINDIR=$dir SHIM_ALONE=$alone SLURM_WASM_CONFIG=$host_config OUT=$OUT/wasm \
    bash "$REPO/tests/anchor/select/record.sh" "$config"
done

if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' \
  | grep -v '^SLURM_WASM_')
STARTED=0
on_exit() {
  local rc=$?
  if [ "$STARTED" = 1 ] && [ -x "$A/teardown.sh" ]; then
    mkdir -p "$OUT/logs"
    cp "$A/log/slurmctld.log" "$OUT/logs/" 2>/dev/null || true
    say "stopping the cluster ($A/teardown.sh)"
    bash "$A/teardown.sh" || true
  fi
  [ $rc = 0 ] || echo "[select-shim] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# start_cluster HOST_CONFIG LOG [EXTRA_CONF lines]: the anchor cluster under select/wasm
start_cluster() {
  rm -f "$A/teardown.sh"
  STARTED=1
  SLURM_WASM_CONFIG=$1 SELECT_TYPE=select/wasm SELECT_PARAMS=CR_Core_Memory WITH_DBD=0 \
    EXTRA_CONF="PluginDir=$PLUGINDIR:/usr/lib/x86_64-linux-gnu/slurm-wlm${3:+$'\n'$3}" \
    bash "$ANCHOR/setup.sh" > "$2" 2>&1
}
stop_cluster() {
  [ "$STARTED" = 1 ] && [ -x "$A/teardown.sh" ] && bash "$A/teardown.sh" > /dev/null 2>&1
  STARTED=0
}

RESTART_JOBS="r1 -n2
r2 -n1 --gres=gpu:1
r3 -N2 -n6 --mem-per-cpu=300
r4 -w n2 -c3"
AFTER_JOB="r5 -n4 --gres=gpu:1"

# place NAME OPTIONS...: submits a job, waits until it runs (10 s at most), prints its placement
place() {
  local name=$1 id; shift
  # shellcheck disable=SC2068 # the options are words on purpose
  id=$(sbatch --parsable -J "$name" -o /dev/null $@ --wrap 'sleep 300')
  for _ in $(seq 1 50); do
    squeue -h -j "$id" -o %T | grep -q RUNNING && break; sleep 0.2
  done
  placement "$name"
}
# placement NAME: the placement of the job named NAME
placement() {
  local rec
  rec=$(scontrol show job -d "$(squeue -h -n "$1" -o %i | head -n1)" 2>/dev/null || true)
  echo "$1 $(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)" \
    "$(sed -n 's/^   NodeList=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)" \
    "$(sed -n 's/.* NumCPUs=\([^ ]*\).*/NumCPUs=\1/p' <<< "$rec" | head -n1)"
  grep -E '^ +Nodes=.* CPU_IDs=' <<< "$rec" | sed 's/^ */  /' || true
}

mkdir -p "$OUT/restart"
say "restart: control run (no restart)"
start_cluster "$WASM_CONFIG" "$OUT/restart/setup-control.log"
{
  while read -r name opts; do place "$name" $opts; done <<< "$RESTART_JOBS"
  # shellcheck disable=SC2086
  place $AFTER_JOB
} > "$OUT/restart/control.txt"
stop_cluster

say "restart: slurmctld restarted with running jobs"
start_cluster "$WASM_CONFIG" "$OUT/restart/setup.log" "DebugFlags=SelectType"
start=$(wc -l < "$A/log/slurmctld.log")
while read -r name opts; do place "$name" $opts; done <<< "$RESTART_JOBS" > "$OUT/restart/before.txt"
pid=$(cat "$A/run/slurmctld.pid")
kill "$pid"
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$pid" 2>/dev/null && die "slurmctld $pid did not stop"
SLURM_WASM_CONFIG=$WASM_CONFIG /usr/sbin/slurmctld
for _ in $(seq 1 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping | grep -q UP || die "slurmctld did not come back"
sleep 3
while read -r name _; do placement "$name"; done <<< "$RESTART_JOBS" > "$OUT/restart/after.txt"
# and reconfigured (select_p_reconfigure: the component's reconfigure, node-init, and every
# running job again through select_p_select_nodeinfo_set)
scontrol reconfigure
sleep 3
while read -r name _; do placement "$name"; done <<< "$RESTART_JOBS" > "$OUT/restart/reconfigured.txt"
# shellcheck disable=SC2086
place $AFTER_JOB > "$OUT/restart/next.txt"
tail -n +"$((start + 1))" "$A/log/slurmctld.log" | grep -E 'select/wasm: debug:' > "$OUT/restart/debug.txt" || true
# steps: two one-CPU jobs on h1 (partition hw, whose nodes have the machine's own CPUs, so
# task/affinity's binding is real), and in each an srun step bound to cores: the CPUs the
# step's task may run on (Cpus_allowed_list) are its job's CPU_IDs
for name in s1 s2; do place "$name" -p hw -w h1 -n1 > /dev/null; done
for name in s1 s2; do
  id=$(squeue -h -n "$name" -o %i | head -n1)
  ids=$(scontrol show job -d "$id" | sed -n 's/.* CPU_IDs=\([^ ]*\).*/\1/p' | head -n1)
  step=$(timeout 60 srun --jobid="$id" --overlap -n1 --cpu-bind=cores \
    grep Cpus_allowed_list /proc/self/status 2>&1 | awk '/Cpus_allowed_list/ {print $2}' || true)
  echo "$name CPU_IDs=$ids step=$step"
done > "$OUT/restart/steps.txt"
scancel --user=root 2>/dev/null || true
stop_cluster

[ -n "${FAULT_CONFIG:-}" ] || { say "done"; exit 0; }

mkdir -p "$OUT/fault"

show() {
  local rec
  rec=$(scontrol show job -d "$1" 2>/dev/null || true)
  echo "$2 state=$(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)" \
    "nodes=$(sed -n 's/^   NodeList=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)"
  grep -E '^ +Nodes=.* CPU_IDs=' <<< "$rec" | sed 's/^ */  /' || true
}

for c in $FAULT_CASES; do
  # a fresh cluster for each case: once the component faulted, the fallback answers
  say "fault case $c: the anchor cluster under select/wasm with $FAULT_CONFIG"
  start_cluster "$FAULT_CONFIG" "$OUT/fault/setup-$c.log"
  start=$(wc -l < "$A/log/slurmctld.log")
  opts=-n1
  [ "$c" = gpu-beyond ] && opts="-n1 --gres=gpu:1"
  # shellcheck disable=SC2086 # the options are words on purpose
  # a refusal at submit is an answer too (the job-test of TEST_ONLY refused)
  bad=$(sbatch --parsable -J "$c" -o /dev/null $opts --wrap 'sleep 60' 2>&1) || true
  plain=$(sbatch --parsable -J "plain-$c" -o /dev/null -n2 --wrap 'sleep 60')
  sleep 20
  {
    if [[ $bad =~ ^[0-9]+$ ]]; then
      show "$bad" "$c"
    else
      echo "$c refused: $bad"
    fi
    show "$plain" plain
    if scontrol ping > /dev/null 2>&1 && sinfo > /dev/null 2>&1; then
      echo "slurmctld answers"
    else
      echo "slurmctld does not answer"
    fi
    echo "--- slurmctld log"
    tail -n +"$((start + 1))" "$A/log/slurmctld.log" | grep -E 'select/wasm|slurm-wasm' | head -40 || true
  } > "$OUT/fault/$c.txt"
  scancel --user=root 2>/dev/null || true
  stop_cluster
done
say "done"
