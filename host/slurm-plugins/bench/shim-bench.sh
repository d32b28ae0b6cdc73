#!/bin/bash
# shim-bench.sh -- the BENCHMARKS.md rows of the shim plugins inside Slurm's daemons (issue 27),
# measured on the live anchor cluster of ../shared/slurm-anchor:
#   task      `srun -p hw -n2 true` and `srun -p hw -n2 --cpu-bind=verbose true` wall times, stock
#             task/affinity vs task/wasm + task_affinity.wasm, in alternating blocks (one cluster
#             start per block: TaskPlugin is read at slurmd start); then, in each block, the RSS
#             and CPU time of the step's slurmstepd while `srun -p hw -n2 sleep 5` runs.
#   priority  one variant per call (stock: Slurm's priority/multifactor under the priority/timed
#             wrapper of priority_timed.c, which times it as the shim times itself; wasm:
#             priority/wasm + priority_multifactor.wasm): N pending jobs submitted (partition
#             `big` down, so they stay pending), then passes until two full passes have run over
#             all of them; the per-pass and per-priority_p_set lines of slurmctld's log, and
#             slurmctld's VmRSS/VmHWM after the passes.
#   build     builds task_wasm.so and priority_wasm.so (the project's Makefile) and
#             priority_timed.so, and installs them with LIBRARY into PLUGINDIR; no cluster.
#   report    medians and ratios from the files of OUT.
#
# Usage (as root; hold the anchor's lock for task and priority, and keep each run short):
#     bash host/slurm-plugins/bench/shim-bench.sh build
#     flock -o /tmp/slurm-anchor.lock bash host/slurm-plugins/bench/shim-bench.sh task
#     flock -o /tmp/slurm-anchor.lock bash host/slurm-plugins/bench/shim-bench.sh priority stock
#     flock -o /tmp/slurm-anchor.lock bash host/slurm-plugins/bench/shim-bench.sh priority wasm
#     bash host/slurm-plugins/bench/shim-bench.sh report
# Environment: LIBRARY (target/release/libslurm_wasm.so), OUT (/var/tmp/slurm-wasm/bench/out),
#   PLUGINDIR (/var/tmp/slurm-wasm/bench/plugins), WASM_DIR (the guests' release build),
#   BLOCKS (2) and RUNS (10): task blocks per variant and timed runs per command per block,
#   JOBS (10000): pending jobs of the priority run; SLURM_ANCHOR, SLURM_ANCHOR_DIR as setup.sh.
# Output in OUT: task/<variant>.times (command, seconds per run), task/<variant>.stepd
#   (per step slurmstepd: VmHWM, VmRSS in kB, utime+stime in ticks, CPU ms of its live threads,
#   1 when libslurm_wasm.so is mapped in it), task/<variant>.conf (slurmd's TaskPlugin), priority/<variant>.log
#   (the pass lines), priority/<variant>.rss. Every cluster is stopped with the anchor's
#   teardown.sh before the script returns, also on failure.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
DEBIAN_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
LIBRARY=${LIBRARY:-$REPO/target/release/libslurm_wasm.so}
OUT=${OUT:-/var/tmp/slurm-wasm/bench/out}
PLUGINDIR=${PLUGINDIR:-/var/tmp/slurm-wasm/bench/plugins}
WASM_DIR=${WASM_DIR:-$REPO/target/wasm-guests/wasm32-wasip2/release}
BLOCKS=${BLOCKS:-2}; RUNS=${RUNS:-10}; JOBS=${JOBS:-10000}
CTLD_LOG=$A/log/slurmctld.log

say() { echo "[shim-bench $(date +%T)] $*" >&2; }
die() { echo "[shim-bench] error: $*" >&2; exit 1; }

# ------------------------------------------------------------------ build
build() {
  local src
  [ -f "$LIBRARY" ] || die "no $LIBRARY (cargo build --release -p slurm-wasm-capi)"
  LIBRARY=$(readlink -f "$LIBRARY")
  src=$(bash "$REPO/host/slurm-plugins/get-slurm-source.sh" | tail -1)
  make -s -C "$REPO/host/slurm-plugins" SLURM_SRC="$src" SHIMS="task_wasm priority_wasm" \
    BUILD="$PLUGINDIR/build" >&2
  make -s -C "$REPO/host/slurm-plugins" install SHIMS="task_wasm priority_wasm" \
    BUILD="$PLUGINDIR/build" PLUGINDIR="$PLUGINDIR" LIBRARY="$LIBRARY" >&2
  # the timing wrapper of the stock plugin: the shims' compiler flags
  cc -DHAVE_CONFIG_H -I"$src" -DSTOCK_DIR="\"$DEBIAN_PLUGINS\"" -O2 -g -Wall \
    -Werror=implicit-function-declaration -fPIC -fvisibility=hidden -shared \
    -o "$PLUGINDIR/.priority_timed.so.new" "$REPO/host/slurm-plugins/bench/priority_timed.c" -ldl
  mv -f "$PLUGINDIR/.priority_timed.so.new" "$PLUGINDIR/priority_timed.so"
  cp "$WASM_DIR/task_affinity.wasm" "$WASM_DIR/priority_multifactor.wasm" "$PLUGINDIR/"
  printf 'cache_dir = "cache"\n[plugins.task]\nwasm = "task_affinity.wasm"\ngrants = ["topology", "cpuset"]\n' \
    > "$PLUGINDIR/task.toml"
  printf 'cache_dir = "cache"\n[plugins.priority]\nwasm = "priority_multifactor.wasm"\n' \
    > "$PLUGINDIR/priority.toml"
  say "installed into $PLUGINDIR: $(cd "$PLUGINDIR" && echo *.so *.wasm *.toml) (library $LIBRARY, $(stat -c %s "$LIBRARY") bytes)"
}

# ------------------------------------------------------------------ the cluster
STARTED=0
stop_cluster() {
  local rc=$?
  if [ "$STARTED" = 1 ]; then
    say "stopping the cluster ($A/teardown.sh)"
    bash "$A/teardown.sh" >&2 || true
    STARTED=0
  fi
  exit $rc
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# start_cluster TASK_PLUGIN PRIORITY_TYPE WITH_DBD [EXTRA slurm.conf lines]: setup.sh with the
# shims' directory first in PluginDir and the host TOML of the variant in SLURM_WASM_CONFIG.
start_cluster() {
  local cfg=""
  [ "$1" = task/wasm ] && cfg=$PLUGINDIR/task.toml
  [ "$2" = priority/wasm ] && cfg=$PLUGINDIR/priority.toml
  if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
    die "an anchor cluster is already running ($A/run/slurmctld.pid)"
  fi
  rm -f "$A/teardown.sh"
  STARTED=1
  say "starting the anchor: TaskPlugin=$1 PriorityType=$2 WITH_DBD=$3 ${cfg:+SLURM_WASM_CONFIG=$cfg}"
  env ${cfg:+SLURM_WASM_CONFIG=$cfg} TASK_PLUGIN="$1" PRIORITY_TYPE="$2" WITH_DBD="$3" \
    EXTRA_CONF="PluginDir=$PLUGINDIR:$DEBIAN_PLUGINS${4:+
$4}" bash "$ANCHOR/setup.sh" >/dev/null 2>&1 || die "setup.sh failed (logs in $A/log)"
  [ -f "$A/teardown.sh" ] || die "setup.sh wrote no teardown.sh"
}

# ------------------------------------------------------------------ task
now() { date +%s.%N; }
# one timed command; appends "<label> <seconds>" to $1
timed() {
  local file=$1 label=$2 t0 t1
  shift 2
  t0=$(now)
  "$@" >/dev/null 2>&1 || die "$label failed"
  t1=$(now)
  echo "$label $(echo "$t1 - $t0" | bc)" >> "$file"
}

# RSS and CPU time of the step's slurmstepd processes ("slurmstepd: [<job>.0]") near the end
# of `srun -p hw -n2 sleep 5`; appends "VmHWM VmRSS ticks" per process to $1.
stepd_rss() {
  local file=$1 pid job found=0
  srun -p hw -n2 sleep 5 >/dev/null 2>&1 &
  pid=$!
  sleep 4
  job=$(squeue -h -u root -t R -o %i | head -1)
  for p in $(pgrep -f "^slurmstepd: \[$job\.0\]" || true); do
    # CPU: utime+stime in ticks (the whole process), and the run time in ms of its live
    # threads (schedstat, ns); lib: 1 when libslurm_wasm.so is mapped into it
    awk -v t="$(awk '{print $14 + $15}' "/proc/$p/stat")" \
        -v ns="$(cat /proc/"$p"/task/*/schedstat | awk '{s += $1} END {print s / 1e6}')" \
        -v lib="$(grep -c libslurm_wasm.so "/proc/$p/maps")" \
      '/^VmHWM/ {h=$2} /^VmRSS/ {r=$2} END {print h, r, t, ns, (lib > 0)}' "/proc/$p/status" >> "$file"
    found=1
  done
  wait "$pid" || die "srun sleep 5 failed"
  [ "$found" = 1 ] || die "no slurmstepd of job $job.0 found"
}

task_block() { # stock|wasm
  local plugin=task/affinity file=$OUT/task/$1.times
  [ "$1" = wasm ] && plugin=task/wasm
  start_cluster "$plugin" priority/basic 0
  # untimed: the first step (the compiled-component cache is warm after slurmd's start check)
  srun -p hw -n2 true >/dev/null 2>&1 || die "srun failed under $plugin (logs in $A/log)"
  srun -p hw -n2 --cpu-bind=verbose true >/dev/null 2>&1
  for _ in $(seq 1 "$RUNS"); do
    timed "$file" true srun -p hw -n2 true
    timed "$file" verbose srun -p hw -n2 --cpu-bind=verbose true
  done
  stepd_rss "$OUT/task/$1.stepd"
  scontrol show config | grep -i "^TaskPlugin " >> "$OUT/task/$1.conf"
  bash "$A/teardown.sh" >&2
  STARTED=0
}

task() {
  [ -f "$PLUGINDIR/task_wasm.so" ] || die "run '$0 build' first"
  mkdir -p "$OUT/task"
  rm -f "$OUT"/task/*
  for b in $(seq 1 "$BLOCKS"); do
    # alternate which variant goes first
    if [ $((b % 2)) = 1 ]; then task_block stock; task_block wasm
    else task_block wasm; task_block stock; fi
    say "block $b done"
  done
}

# ------------------------------------------------------------------ priority
# pass lines: stock "priority/timed: pass: ..."; wasm "priority/wasm: pass at ..."
pass_lines() { grep -E "priority/(timed|wasm): pass" "$CTLD_LOG" || true; }

priority() { # stock|wasm
  local type=priority/timed pid sub n0 deadline
  [ "$1" = wasm ] && type=priority/wasm
  [ "$1" = stock ] || [ "$1" = wasm ] || die "priority stock|wasm"
  [ -f "$PLUGINDIR/priority_timed.so" ] || die "run '$0 build' first"
  mkdir -p "$OUT/priority"
  start_cluster task/affinity "$type" 1 "MaxJobCount=$((JOBS * 2))"
  # debug, not debug2: at debug2 multifactor logs a line inside every priority_p_set, which the
  # timing would count; the shim's per-pass line is at debug
  scontrol setdebug debug
  scontrol update PartitionName=big State=DOWN
  say "submitting $JOBS jobs to the down partition big"
  seq 1 "$JOBS" | xargs -P 4 -n 50 sh -c \
    'for _ in "$@"; do sbatch -Q -p big -o /dev/null --wrap true || exit 1; done' sh \
    || die "sbatch failed"
  sub=$(date +%s)
  say "submitted in $((sub - $(stat -c %Y "$A/teardown.sh")))s (since setup); waiting for two full passes"
  # two passes that begin after the last submission: PriorityCalcPeriod is 60 s
  n0=$(pass_lines | wc -l)
  deadline=$((sub + 150))
  while [ "$(pass_lines | wc -l)" -lt $((n0 + 2)) ]; do
    [ "$(date +%s)" -lt "$deadline" ] || die "no two passes within 150 s"
    sleep 2
  done
  pid=$(cat "$A/run/slurmctld.pid")
  awk '/^VmHWM|^VmRSS/ {printf "%s %s kB\n", $1, $2}' "/proc/$pid/status" > "$OUT/priority/$1.rss"
  pass_lines > "$OUT/priority/$1.log"
  echo "pending: $(squeue -h -t PD | wc -l)" >> "$OUT/priority/$1.rss"
  say "$1: $(cat "$OUT/priority/$1.rss" | tr '\n' ' ')"
}

# ------------------------------------------------------------------ report
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
report() {
  local s w
  if [ -f "$OUT/task/stock.times" ]; then
    for c in true verbose; do
      s=$(awk -v c=$c '$1==c {print $2}' "$OUT/task/stock.times" | median)
      w=$(awk -v c=$c '$1==c {print $2}' "$OUT/task/wasm.times" | median)
      echo "task $c: runs $(grep -c "^$c " "$OUT/task/stock.times")/$(grep -c "^$c " "$OUT/task/wasm.times"); median stock ${s}s wasm ${w}s ratio $(echo "scale=3; $w / $s" | bc)"
      echo "  stock: $(awk -v c=$c '$1==c {printf "%.3f ", $2}' "$OUT/task/stock.times")"
      echo "  wasm:  $(awk -v c=$c '$1==c {printf "%.3f ", $2}' "$OUT/task/wasm.times")"
    done
    for v in stock wasm; do
      echo "slurmstepd $v (VmHWM kB, VmRSS kB, CPU ticks, CPU ms, library mapped): $(tr '\n' ';' < "$OUT/task/$v.stepd")"
    done
  fi
  for v in stock wasm; do
    [ -f "$OUT/priority/$v.log" ] || continue
    echo "priority $v: $(tr '\n' ' ' < "$OUT/priority/$v.rss")"
    sed 's/^\[[^]]*\] //' "$OUT/priority/$v.log"
  done
}

[ "$(id -u)" = 0 ] || die "run as root"
case ${1:-} in
  build) build ;;
  task) task ;;
  priority) priority "${2:-}" ;;
  report) trap - EXIT; report ;;
  *) die "usage: $0 build | task | priority stock|wasm | report" ;;
esac
