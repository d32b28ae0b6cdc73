#!/bin/bash
# shim.sh -- the task/wasm shim's fault and bad-input cases on the live anchor cluster: a task
# component that loops or traps in slurmd's launch request, in slurmstepd's privileged per-task
# hook or in the forked task must end the step and leave the node usable; a broken installation
# must stop slurmd with one line naming what is wrong. tests/task_shim.rs runs it after comparing
# the anchor's binding cases under task/affinity and task/wasm (record.sh) and checks its output.
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 2 minutes):
#     PLUGINDIR=<dir with task_wasm.so and lib/libslurm_wasm.so> \
#     FAULT_CONFIG=<host TOML: task/hostile, failure = "fallback"> \
#     FAIL_CONFIG=<host TOML: task/hostile, failure = "fail"> \
#     [BAD_CONFIGS="<host TOML> ..."] OUT=<output dir> bash tests/anchor/task/shim.sh
#
# What it does:
#   1. starts the anchor cluster (no slurmdbd) with TaskPlugin=task/wasm, PLUGINDIR before
#      Debian's PluginDir and SLURM_WASM_CONFIG=<a copy of FAULT_CONFIG> in the daemons'
#      environment;
#   2. fault cases under failure = "fallback": for each CASE below, one
#          srun -p hw -w h1 -n1 --export=ALL,HOSTILE_TASK=<case> true
#      (task/hostile acts the behaviour out in the hook the case names: `launch` is slurmd's
#      launch request, `priv` slurmstepd's pre-launch-priv, `child` pre-launch in the forked
#      task); written to OUT/fault/<case>.txt: srun's exit status and seconds, its stderr, h1's
#      state afterwards (sinfo) and the slurmd log lines naming the plugin;
#   3. the same for FAIL_CASES with the host configuration switched to FAIL_CONFIG and h1's slurmd
#      restarted on it, into OUT/fail/<case>.txt;
#   4. OUT/after.txt: a normal two-node step afterwards, its exit status and both nodes' states;
#   5. bad input: slurmd h1 restarted in the foreground on a missing library (SLURM_WASM_LIBRARY
#      naming nothing) and on each host configuration of BAD_CONFIGS; each must refuse to start.
#      OUT/bad/<case>.txt: its exit status and its log lines naming task/wasm or fatal;
#   6. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
: "${PLUGINDIR:?PLUGINDIR: the directory with task_wasm.so and lib/libslurm_wasm.so}"
: "${FAULT_CONFIG:?FAULT_CONFIG: the host configuration with failure = fallback}"
: "${FAIL_CONFIG:?FAIL_CONFIG: the host configuration with failure = fail}"
: "${OUT:?OUT: the output directory}"
T0=$(date +%s)
# slurmstepd is a fresh process for each step, slurmd is not: once slurmd's component faulted,
# its fallback answers the launch requests that hand behaviours to slurmstepd, so launch:loop
# comes last.
CASES="priv:loop child:loop child:trap launch:loop"
FAIL_CASES="priv:loop child:loop"

say() { echo "[task-shim +$(($(date +%s) - T0))s] $*"; }
die() { echo "[task-shim] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
[ -f "$PLUGINDIR/task_wasm.so" ] || die "no task_wasm.so in $PLUGINDIR"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*')

mkdir -p "$OUT/fault" "$OUT/fail" "$OUT/bad"
# The daemons read the host configuration from this path; the fail phase replaces its content.
CONFIG_DIR=$(dirname "$FAULT_CONFIG")
LIVE_CONFIG=$CONFIG_DIR/live.toml
cp "$FAULT_CONFIG" "$LIVE_CONFIG"
export SLURM_WASM_CONFIG=$LIVE_CONFIG

STARTED=0
on_exit() {
  local rc=$?
  if [ "$STARTED" = 1 ]; then
    mkdir -p "$OUT/logs"
    cp "$A"/log/slurmd-h1.log "$A"/log/slurmctld.log "$OUT/logs/" 2>/dev/null || true
    if [ -x "$A/teardown.sh" ]; then
      say "stopping the cluster ($A/teardown.sh)"
      # h1's slurmd may be down after a bad-input case: teardown stops what runs
      bash "$A/teardown.sh" || true
    fi
  fi
  [ $rc = 0 ] || echo "[task-shim] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ 1. cluster
rm -f "$A/teardown.sh"
say "starting the anchor cluster with task/wasm and the hostile component"
STARTED=1
TASK_PLUGIN=task/wasm WITH_DBD=0 \
  EXTRA_CONF="PluginDir=$PLUGINDIR:/usr/lib/x86_64-linux-gnu/slurm-wlm" bash "$ANCHOR/setup.sh"
H1_LOG=$A/log/slurmd-h1.log

wait_idle() {
  for _ in $(seq 1 120); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 0.5; done
  echo "jobs still queued after 60 s: $(squeue -h -o '%i %T %R')"
}

# fault_case DIR CASE: one step on h1 with HOSTILE_TASK=CASE, written to OUT/DIR/CASE.txt
fault_case() {
  local dir=$1 case=$2 before rc=0 t0 file
  file=$OUT/$dir/${case/:/-}.txt
  wait_idle
  before=$(stat -c %s "$H1_LOG")
  t0=$(date +%s)
  timeout 180 srun -p hw -w h1 -n1 -J "fault-$case" --export="ALL,HOSTILE_TASK=$case" true \
    </dev/null >"$OUT/$dir/srun.out" 2>"$OUT/$dir/srun.err" || rc=$?
  {
    echo "srun_exit=$rc"
    echo "seconds=$(($(date +%s) - t0))"
    echo "[stderr]"
    cat "$OUT/$dir/srun.err"
    wait_idle
    echo "[h1]"
    sinfo -h -n h1 -o 'state=%T reason=%E'
    echo "[slurmd log]"
    tail -c +$((before + 1)) "$H1_LOG" | grep -e 'task/wasm' -e 'task/hostile' || true
  } > "$file"
  say "$dir $case: srun exit $rc, h1 $(sinfo -h -n h1 -o %T)"
}

pid_of_h1() { cat "$A/run/slurmd-h1.pid" 2>/dev/null || pgrep -f 'slurmd -N h1' | head -1; }
stop_h1() {
  local pid
  pid=$(pid_of_h1 || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do pgrep -f '^/usr/sbin/slurmd -N h1' >/dev/null || return 0; sleep 0.25; done
}
# restart_h1: h1's slurmd started again (on the current host configuration), and idle
restart_h1() {
  stop_h1
  /usr/sbin/slurmd -N h1
  for _ in $(seq 1 60); do
    [ "$(sinfo -h -n h1 -o %T)" = idle ] && return 0
    sleep 0.5
  done
  die "h1 did not come back after a restart: $(sinfo -h -n h1 -o '%T %E')"
}

# ------------------------------------------------------------------ 2. failure = "fallback"
for case in $CASES; do fault_case fault "$case"; done

# ------------------------------------------------------------------ 3. failure = "fail"
cp "$FAIL_CONFIG" "$LIVE_CONFIG"
restart_h1
for case in $FAIL_CASES; do fault_case fail "$case"; done

# ------------------------------------------------------------------ 4. the nodes afterwards
wait_idle
rc=0
timeout 120 srun -p hw -N2 -n2 -J after true </dev/null >/dev/null 2>"$OUT/after.err" || rc=$?
# srun returns before slurmctld has heard both epilogs: the nodes are
# "completing" for a moment (CI saw it once), so wait for the job to leave.
wait_idle
for _ in $(seq 1 60); do
  sinfo -h -p hw -N -o %T | grep -q completing || break
  sleep 0.5
done
{
  echo "srun_exit=$rc"
  sinfo -h -p hw -N -o '%N state=%T reason=%E'
} > "$OUT/after.txt"
say "after: srun exit $rc"

# ------------------------------------------------------------------ 5. bad input
# bad_case NAME VAR=VALUE...: slurmd h1 restarted in the foreground must refuse to start
bad_case() {
  local name=$1 lines rc=0
  shift
  stop_h1
  lines=$(wc -l < "$H1_LOG")
  env "$@" timeout 60 /usr/sbin/slurmd -N h1 -D > "$OUT/bad/$name.out" 2>&1 || rc=$?
  {
    echo "exit=$rc"
    tail -n +"$((lines + 1))" "$H1_LOG" | grep -e 'task/wasm' -e 'fatal' || true
    grep -e 'task/wasm' -e 'fatal' "$OUT/bad/$name.out" || true
  } > "$OUT/bad/$name.txt"
  say "bad $name: slurmd exit $rc"
}
bad_case no-library SLURM_WASM_LIBRARY=/nonexistent/libslurm_wasm.so
for config in ${BAD_CONFIGS:-}; do
  bad_case "$(basename "$config" .toml)" SLURM_WASM_CONFIG="$config"
done
# h1 back, for teardown
/usr/sbin/slurmd -N h1 || true
say "done"
