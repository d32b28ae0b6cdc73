#!/bin/bash
# shim.sh -- the select/wasm shim on the live anchor cluster: the recorded select streams run
# under SelectType=select/wasm with a select component, for tests/select_shim.rs to compare with
# the stock plugin's fixtures (tests/fixtures/anchor/select/<config>/stream.txt), and, with
# FAULT_CONFIG, a select component that traps or loops under failure = "fallback".
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 2.5 minutes per configuration):
#     PLUGINDIR=<dir with select_wasm.so and lib/libslurm_wasm.so> \
#     WASM_CONFIG=<host TOML: [plugins.select] with select_cons_tres.wasm> \
#     [FAULT_CONFIG=<host TOML: select/hostile, failure = "fallback">] \
#     OUT=<output dir> bash tests/anchor/select/shim.sh [<config> ...]
# (configurations as record.sh names them; default cons_tres-CR_Core_Memory)
#
# What it does:
#   1. record.sh with SHIM_PLUGINDIR=$PLUGINDIR and SLURM_WASM_CONFIG=$WASM_CONFIG: each
#      configuration's stream on the anchor cluster under select/wasm, written as record.sh
#      writes fixtures, into OUT/wasm/<config>/;
#   2. with FAULT_CONFIG: the anchor cluster under select/wasm with that host configuration; for
#      each of FAULT_CASES a batch job named after the hostile behaviour (`trap`, `loop`: the
#      component acts it out in job-test), then a plain job; OUT/fault/<case>.txt: the first
#      job's and the plain job's state, node list and CPU_IDs 20 s later, whether slurmctld still
#      answers, and slurmctld's log lines naming select/wasm;
#   3. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
: "${PLUGINDIR:?PLUGINDIR: the directory with select_wasm.so and lib/libslurm_wasm.so}"
: "${WASM_CONFIG:?WASM_CONFIG: the host configuration naming the select component}"
: "${OUT:?OUT: the output directory}"
FAULT_CASES="trap loop"
T0=$(date +%s)

say() { echo "[select-shim +$(($(date +%s) - T0))s] $*"; }
die() { echo "[select-shim] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$PLUGINDIR/select_wasm.so" ] || die "no select_wasm.so in $PLUGINDIR"
[ $# -gt 0 ] || set -- cons_tres-CR_Core_Memory

say "the recorded streams under select/wasm: $*"
SHIM_PLUGINDIR=$PLUGINDIR SLURM_WASM_CONFIG=$WASM_CONFIG OUT=$OUT/wasm \
  bash "$REPO/tests/anchor/select/record.sh" "$@"

[ -n "${FAULT_CONFIG:-}" ] || { say "done"; exit 0; }

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

mkdir -p "$OUT/fault"
rm -f "$A/teardown.sh"
say "faults: the anchor cluster under select/wasm with $FAULT_CONFIG"
STARTED=1
SLURM_WASM_CONFIG=$FAULT_CONFIG SELECT_TYPE=select/wasm SELECT_PARAMS=CR_Core_Memory WITH_DBD=0 \
  EXTRA_CONF="PluginDir=$PLUGINDIR:/usr/lib/x86_64-linux-gnu/slurm-wlm" \
  bash "$ANCHOR/setup.sh" > "$OUT/fault/setup.log" 2>&1

show() {
  local rec
  rec=$(scontrol show job -d "$1" 2>/dev/null || true)
  echo "$2 state=$(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)" \
    "nodes=$(sed -n 's/^   NodeList=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)"
  grep -E '^ +Nodes=.* CPU_IDs=' <<< "$rec" | sed 's/^ */  /' || true
}

for c in $FAULT_CASES; do
  say "fault case $c"
  start=$(wc -l < "$A/log/slurmctld.log")
  bad=$(sbatch --parsable -J "$c" -o /dev/null -n1 --wrap 'sleep 60')
  plain=$(sbatch --parsable -J "plain-$c" -o /dev/null -n2 --wrap 'sleep 60')
  sleep 20
  {
    show "$bad" "$c"
    show "$plain" plain
    if scontrol ping > /dev/null 2>&1 && sinfo > /dev/null 2>&1; then
      echo "slurmctld answers"
    else
      echo "slurmctld does not answer"
    fi
    echo "--- slurmctld log"
    tail -n +"$((start + 1))" "$A/log/slurmctld.log" | grep -E 'select/wasm|slurm-wasm' | head -40 || true
  } > "$OUT/fault/$c.txt"
  scancel "$bad" "$plain" 2>/dev/null || true
  sleep 2
done
say "done"
