#!/usr/bin/env bash
# Records real Slurm 22.05.8 scheduling a scaled-down real trace, for the simulator's live-replay
# agreement test (`simulate::the_simulator_agrees_with_a_live_slurm_on_a_scaled_trace`).
#
# The workload: 200 jobs of the HPC2N trace in ../shared/traces (records 2000 on), scaled by
# scale.py (beside this script) to five minutes of submissions with run times of 3 s to 2 min, as
# `sleep` jobs in partition big (n[1-4], 32 CPUs). The cluster: the anchor's, with sched/backfill
# (bf_interval=1, bf_resolution=1), priority/basic (FIFO), slurmdbd (for sacct), and the select
# plugin of SELECT_TYPE / SELECT_PARAMS (default select/cons_tres CR_Core_Memory).
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 10 minutes):
#     OUT=<dir> [SELECT_TYPE=select/linear SELECT_PARAMS=CR_Memory] [SLURM_ANCHOR=..] \
#       [SLURM_WASM_TRACES=../shared/traces] bash tests/anchor/replay/record.sh
#
# Writes OUT/jobs.txt (what was submitted, scale.py's output), OUT/sacct.txt (`sacct --parsable2`
# of every job once all have ended: submit, start, end, nodes, request) and OUT/slurm.conf, then
# stops the cluster with the teardown.sh setup.sh wrote.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$ROOT/../shared/slurm-anchor}
TRACES=${SLURM_WASM_TRACES:-$ROOT/../shared/traces}
: "${OUT:?set OUT to the output directory}"
die() { echo "replay/record.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
TRACE=$TRACES/HPC2N-2002-subset-alea-3170jobs.swf
[ -f "$TRACE" ] || die "no $TRACE (set SLURM_WASM_TRACES)"
mkdir -p "$OUT"
python3 "$HERE/scale.py" "$TRACE" 2000 200 300 > "$OUT/jobs.txt"

ANCHOR_DIR=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
stop() { [ -x "$ANCHOR_DIR/teardown.sh" ] && "$ANCHOR_DIR/teardown.sh" > /dev/null 2>&1 || true; }
trap stop EXIT
SELECT_TYPE=${SELECT_TYPE:-select/cons_tres} SELECT_PARAMS=${SELECT_PARAMS:-CR_Core_Memory} \
  PRIORITY_TYPE=priority/basic WITH_DBD=1 \
  EXTRA_CONF="SchedulerParameters=bf_interval=1,bf_resolution=1" \
  bash "$ANCHOR/setup.sh" > "$OUT/setup.log" 2>&1 || die "setup.sh failed (see $OUT/setup.log)"

begin=$(date +%s)
t0=$((begin + 2))
first=
while read -r offset nodes tasks limit seconds; do
  wait=$((t0 + offset - $(date +%s)))
  [ "$wait" -le 0 ] || sleep "$wait"
  id=$(sbatch --parsable -p big -N "$nodes" -n "$tasks" -t "$limit" -o /dev/null -e /dev/null \
    --wrap "sleep $seconds" | cut -d';' -f1)
  first=${first:-$id}
done < "$OUT/jobs.txt"
last=$id
# Every job ends within 15 minutes of the first submission, or the recording is void.
while [ -n "$(squeue -h -o %i)" ]; do
  [ $(($(date +%s) - t0)) -lt 900 ] || die "jobs still queued 15 minutes after the first submission"
  sleep 5
done
# slurmdbd learns of the last ends a little after slurmctld.
columns=JobIDRaw,Submit,Start,End,ElapsedRaw,TimelimitRaw,ReqCPUS,ReqNodes,ReqMem,NNodes,NCPUS,NodeList,State,Partition,UID,GID
for _ in $(seq 60); do
  sacct -X -P -n -S "$(date -d "@$begin" +%FT%T)" -o State -j "$(seq -s, "$first" "$last")" \
    | grep -qvE '^(COMPLETED|FAILED|TIMEOUT|CANCELLED.*)$' || break
  sleep 2
done
sacct -X -P -S "$(date -d "@$begin" +%FT%T)" -o "$columns" -j "$(seq -s, "$first" "$last")" \
  > "$OUT/sacct.txt"
cp /etc/slurm/slurm.conf /etc/slurm/gres.conf "$OUT/"
echo "replay/record.sh: $(($(wc -l < "$OUT/sacct.txt") - 1)) jobs recorded in $OUT/sacct.txt"
