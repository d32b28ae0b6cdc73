#!/bin/bash
# shim.sh -- runs the priority stream (stream.sh) on the live anchor cluster twice, under stock
# priority/multifactor and under the priority/wasm shim plugin with a multifactor component, from
# the same saved controller state, and records sprio and sshare after two decay passes of each;
# then the shim's fault cases. tests/priority_shim.rs builds the shim, runs this and compares.
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 7 minutes):
#     PLUGINDIR=<dir with priority_wasm.so and lib/libslurm_wasm.so> \
#     WASM_CONFIG=<host TOML for the comparison> FAULT_CONFIG=<host TOML of a hostile component> \
#     RELOAD_CONFIG=<host TOML naming priority_multifactor.wasm, rewritten by the reload case> \
#     [BAD_CONFIGS="<host TOML> ..."] OUT=<output dir> bash tests/anchor/priority/shim.sh
#
# How the two runs see the same thing (sprio and sshare are compared at their printed precision):
#   1. the stream runs once, under stock multifactor: associations and QOS, usage jobs, blockers
#      on every node, competing jobs; then slurmctld stops and its StateSaveLocation is kept;
#   2. each run restores that state and starts slurmctld on it (jobs, usage, blockers still
#      running in slurmd), so both start from the same usage and job records;
#   3. what depends on the time of a pass is made the same in both runs:
#      - ages: PriorityMaxAge=1 minute and the state is kept only once every eligible job has
#        accrued more than that, so every age factor is 1;
#      - decay and charges: the saved "last decay" time is moved past the runs' first passes, so
#        the first pass of a run decays and charges nothing (it only computes), and the second,
#        one PriorityCalcPeriod (60 s) later, decays by 60 s and charges the blockers 60 s; the
#        run-seconds given back at start-up (last decay - start) are the same in both runs;
#   4. each run records after its first and its second pass (stream.sh's `sample`).
# Then the fault cases, under FAULT_CONFIG (failure = "fallback"): jobs named `loop`, `trap` and
# `grow` are submitted to slurmctld runs on the same state; what happened is in OUT/fault/.
#
# Then a reload: slurmctld under RELOAD_CONFIG (multifactor), the file rewritten to name the
# hostile component, `scontrol reconfigure`; at its next pass the shim reloads (swasm_priority_reload)
# and the hostile component serves on probation; a job named `trap` makes it trap in `set`, and
# multifactor, run beside it, answers that call and serves again. What happened is in
# OUT/reload/trap.txt.
#
# Then bad input: slurmctld started on a missing library, a missing host configuration and each
# host configuration of BAD_CONFIGS (space-separated paths) must refuse to start.
#
# Output in OUT: stock/sample{1,2}/ and wasm/sample{1,2}/ (stream.sh's files) with each run's
# slurmctld.log, bad/<case>.txt (exit status and log lines), submitted.txt,
# fault/{loop,trap,grow}.txt (submission time, ping, sprio exit status, the log lines naming the
# plugin), fault/started.txt (jobs that started after the blockers were cancelled), logs/.
# Leaves nothing running: the anchor's teardown.sh runs on every exit.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
CTLD_STATE=$A/spool/ctld
CTLD_LOG=$A/log/slurmctld.log
: "${PLUGINDIR:?PLUGINDIR: the directory with priority_wasm.so and lib/libslurm_wasm.so}"
: "${WASM_CONFIG:?WASM_CONFIG: the host configuration of the comparison run}"
: "${FAULT_CONFIG:?FAULT_CONFIG: the host configuration of the fault cases}"
: "${RELOAD_CONFIG:?RELOAD_CONFIG: the host configuration the reload case rewrites}"
: "${OUT:?OUT: the output directory}"
T0=$(date +%s)

say() { echo "[shim +$(($(date +%s) - T0))s] $*"; }
die() { echo "[shim] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
[ -f "$PLUGINDIR/priority_wasm.so" ] || die "no priority_wasm.so in $PLUGINDIR"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi

# shellcheck source=stream.sh
. "$(dirname "${BASH_SOURCE[0]}")/stream.sh"

STARTED=0
stop_cluster() {
  local rc=$?
  if [ "$STARTED" = 1 ]; then
    mkdir -p "$OUT/logs"
    cp "$CTLD_LOG" "$OUT/logs/slurmctld.log" 2>/dev/null || true
    if [ -x "$A/teardown.sh" ]; then
      say "stopping the cluster ($A/teardown.sh)"
      # teardown cancels jobs through slurmctld: start one if the script stopped it
      if ! ctld_up; then
        set_priority_type priority/multifactor
        env -u SLURM_WASM_CONFIG /usr/sbin/slurmctld || true
        for _ in $(seq 1 40); do ctld_up && break; sleep 0.5; done
      fi
      bash "$A/teardown.sh" || true
    else
      say "setup.sh wrote no teardown.sh; stopping daemons by their PID files"
      for f in "$A"/run/slurmd-*.pid "$A/run/slurmctld.pid" "$A/run/slurmdbd.pid" /run/mysqld/anchor.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null && echo "sent TERM to $(cat "$f") ($f)"
      done
    fi
  fi
  [ $rc = 0 ] || echo "[shim] failed (exit $rc); daemon logs are in $A/log and $OUT/logs" >&2
  exit $rc
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ slurmctld on saved state
SNAPSHOT=$OUT/ctld-state
set_priority_type() { # TYPE
  sed -i "s|^PriorityType=.*|PriorityType=$1|" /etc/slurm/slurm.conf
}
stop_ctld() {
  local pid
  pid=$(cat "$A/run/slurmctld.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.25; done
  die "slurmctld ($pid) did not stop within 30 s"
}
ctld_up() { scontrol ping 2>/dev/null | grep -q UP; }
# start_ctld stock|wasm|fault: slurmctld (without -c: it recovers StateSaveLocation)
start_ctld() {
  case $1 in
    stock) set_priority_type priority/multifactor; env -u SLURM_WASM_CONFIG /usr/sbin/slurmctld ;;
    wasm) set_priority_type priority/wasm; SLURM_WASM_CONFIG=$WASM_CONFIG /usr/sbin/slurmctld ;;
    fault) set_priority_type priority/wasm; SLURM_WASM_CONFIG=$FAULT_CONFIG /usr/sbin/slurmctld ;;
    reload) set_priority_type priority/wasm; SLURM_WASM_CONFIG=$RELOAD_CONFIG /usr/sbin/slurmctld ;;
  esac
  wait_until 60 "slurmctld to answer" ctld_up
}
restore_state() {
  rm -rf "$CTLD_STATE"
  cp -a "$SNAPSHOT" "$CTLD_STATE"
}

# ------------------------------------------------------------------ 1. the stream, once
rm -f "$A/teardown.sh" "$CTLD_STATE"/assoc_usage* "$CTLD_STATE"/qos_usage* \
      "$CTLD_STATE"/priority_last_decay_ran* "$CTLD_STATE"/priority_wasm.state*
rm -rf "${OUT:?}"/stock "${OUT:?}"/wasm "${OUT:?}"/fault "$SNAPSHOT"
mkdir -p "$OUT"
say "starting the anchor cluster ($ANCHOR/setup.sh), stock priority/multifactor"
STARTED=1
EXTRA_CONF="$STREAM_EXTRA_CONF
PriorityMaxAge=00:01:00
PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm:$PLUGINDIR" bash "$ANCHOR/setup.sh" > "$OUT/setup.log"
stream_tree
stream_usage
stream_queue
# Only here (record.sh's stream has no such job): a job whose partitions are listed hw first.
# Slurm starts it with part_ptr = hw; the schedulers then try it in hw and in big and leave
# part_ptr at big, the partition of its lower priority, which the next pass computes
# (job_scheduler.c schedule(), backfill.c _attempt_backfill()). tests/priority_shim.rs compares
# squeue's priority of it under both plugins.
queue erin genomics erin-hwbig "" -p hw,big -n 2

# every eligible job's age must be past PriorityMaxAge at the first pass of each run
last_accrue() {
  SLURM_TIME_FORMAT=%s scontrol show job -o | grep 'JobState=PENDING' \
    | sed -n 's/.*AccrueTime=\([0-9]*\).*/\1/p' | sort -n | tail -1
}
aged() { [ $(($(date +%s) - $(last_accrue))) -gt 62 ]; }
say "waiting until every eligible job is older than PriorityMaxAge"
wait_until 90 "the ages to saturate" aged

say "stopping slurmctld and keeping its state"
stop_ctld
cp -a "$CTLD_STATE" "$SNAPSHOT"
# the saved decay time: moved 10 minutes ahead, the time of the last usage reset kept
read -r _ RESET < <(od -An -N16 --endian=big -t d8 "$SNAPSHOT/priority_last_decay_ran")
AHEAD=$(($(date +%s) + 600))
perl -e 'print pack("q>q>", $ARGV[0], $ARGV[1])' "$AHEAD" "$RESET" \
  > "$SNAPSHOT/priority_last_decay_ran"
rm -f "$SNAPSHOT"/priority_last_decay_ran.old

# ------------------------------------------------------------------ 2. the two runs
# Stock multifactor's first pass runs while slurmctld starts, the shim's a second later: each run
# records right after its first pass and after its second.
for run in stock wasm; do
  say "run $run: slurmctld on the saved state"
  restore_state
  lines=$(wc -l < "$CTLD_LOG")
  start_ctld "$run"
  wait_until 30 "the first decay pass" decay_ran_since "$AHEAD"
  (OUT=$OUT/$run; record_sample sample1; sample sample2)
  stop_ctld
  tail -n +"$((lines + 1))" "$CTLD_LOG" > "$OUT/$run/slurmctld.log"
done

# ------------------------------------------------------------------ 3. fault cases
mkdir -p "$OUT/fault"
# fault_case NAME: slurmctld under the hostile component; a job named NAME; what followed
fault_case() {
  local name=$1 file=$OUT/fault/$1.txt lines from to id rc
  lines=$(wc -l < "$CTLD_LOG")
  start_ctld fault
  from=$(date +%s%N)
  id=$(submit root teamA "$name" -p big -n 1 -t 5 --wrap 'sleep 1')
  to=$(date +%s%N)
  sleep 2
  rc=0; sprio > /dev/null 2>&1 || rc=$?
  {
    echo "job=$id"
    echo "submit_ms=$(((to - from) / 1000000))"
    echo "ping=$(scontrol ping 2>&1 | tr '\n' ' ')"
    echo "sprio_rc=$rc"
    echo "state=$(squeue -h -j "$id" -o %T 2>&1)"
    echo "log:"
    tail -n +"$((lines + 1))" "$CTLD_LOG" | grep -e 'priority/wasm' -e 'priority/hostile' || true
  } > "$file"
  scancel "$id" 2>/dev/null || true
  sleep 1
  stop_ctld
}
restore_state
say "fault: a component that loops"
fault_case loop
say "fault: a component that traps"
fault_case trap
say "fault: a component that grows its memory without end"
fault_case grow

say "fault: jobs start once the blockers are gone"
start_ctld fault
id=$(submit root teamA after -p hw -n 1 -t 5 --wrap 'sleep 1')
scancel -n blocker
# The state is the one seen at the moment: slurmdbd learns of a start later than slurmctld, so
# sacct may still say PENDING for a job squeue saw run (a CI run on a loaded machine did).
seen=
started() {
  seen=$(squeue -h -j "$id" -t all -o %T 2>/dev/null)
  case $seen in RUNNING | COMPLETING | COMPLETED) return 0 ;; esac
  sacct -n -X -j "$id" -o State | grep -q COMPLETED && seen=COMPLETED
}
wait_until 60 "a job to start after the blockers" started
{
  echo "job=$id"
  echo "state=$seen"
  echo "sprio_rc=$(sprio >/dev/null 2>&1; echo $?)"
} > "$OUT/fault/started.txt"
stop_ctld

# ------------------------------------------------------------------ 3b. reload with rollback
mkdir -p "$OUT/reload"
say "reload: a trapping component on probation; multifactor takes back over"
restore_state
lines=$(wc -l < "$CTLD_LOG")
start_ctld reload
sed -i 's/priority_multifactor\.wasm/priority_hostile.wasm/' "$RELOAD_CONFIG"
scontrol reconfigure
reloaded() { tail -n +"$((lines + 1))" "$CTLD_LOG" | grep -q 'reloaded the component'; }
wait_until 90 "the shim to reload at its next pass" reloaded
id=$(submit root teamA trap -p big -n 1 -t 5 --begin=now+3600 --wrap 'sleep 1')
sleep 2
{
  echo "job=$id"
  echo "priority=$(squeue -h -j "$id" -o %Q 2>&1)"
  echo "ping=$(scontrol ping 2>&1 | tr '\n' ' ')"
  echo "sprio_rc=$(sprio >/dev/null 2>&1; echo $?)"
  echo "log:"
  tail -n +"$((lines + 1))" "$CTLD_LOG" | grep -e 'priority/wasm' -e 'priority/hostile' -e 'reload' || true
} > "$OUT/reload/trap.txt"
scancel "$id" 2>/dev/null || true
sleep 1
stop_ctld

# ------------------------------------------------------------------ 4. bad input
# bad_case NAME VAR=VALUE...: slurmctld (in the foreground) must refuse to start; its exit status
# and log lines go to OUT/bad/NAME.txt
mkdir -p "$OUT/bad"
bad_case() {
  local name=$1 lines rc=0
  shift
  lines=$(wc -l < "$CTLD_LOG")
  set_priority_type priority/wasm
  env -u SLURM_WASM_CONFIG "$@" timeout 60 /usr/sbin/slurmctld -D > "$OUT/bad/$name.out" 2>&1 || rc=$?
  {
    echo "exit=$rc"
    tail -n +"$((lines + 1))" "$CTLD_LOG" | grep -e 'priority/wasm' -e 'fatal' || true
  } > "$OUT/bad/$name.txt"
}
say "bad input: slurmctld must refuse each case"
bad_case no-library SLURM_WASM_LIBRARY="$OUT/bad/absent/libslurm_wasm.so" SLURM_WASM_CONFIG="$WASM_CONFIG"
bad_case no-config SLURM_WASM_CONFIG="$OUT/bad/absent.toml"
for toml in ${BAD_CONFIGS:-}; do
  bad_case "$(basename "$toml" .toml)" SLURM_WASM_CONFIG="$toml"
done
say "done"
