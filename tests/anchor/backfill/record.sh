#!/usr/bin/env bash
# Records what real Slurm 22.05.8's sched/backfill plans for the five-job case of issue 34 (the
# simulator's known-answer test `backfill_plans_node_time_like_slurm`): four whole nodes under
# select/linear, FIFO (priority/basic), bf_interval=1, bf_resolution=1.
#
#   job  submit  nodes  time limit = run time
#   1    0 s     2      10 min
#   2    0 s     1      20 min
#   3    60 s    2       2 min
#   4    60 s    2      10 min
#   5    120 s   1      20 min
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 4 minutes):
#     OUT=<dir> [SLURM_ANCHOR=../shared/slurm-anchor] bash tests/anchor/backfill/record.sh
#
# The jobs run `sleep` for their time limit; nothing needs them to end: 40 s after job 5's
# submission (backfill runs every second) the script records, in OUT/plan.txt, one line per job:
#     job=<n> state=<RUNNING|PENDING> start=<seconds after job 1's submission> nodes=<list>
# (a pending job's start and nodes are the backfill plan, scontrol's StartTime and SchedNodeList),
# then cancels the jobs and stops the cluster with the teardown.sh setup.sh wrote.
set -euo pipefail
ANCHOR=${SLURM_ANCHOR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/slurm-anchor}
[ -d "$ANCHOR" ] || ANCHOR=$(cd "$(dirname "$0")/../../../.." && pwd)/shared/slurm-anchor
: "${OUT:?set OUT to the output directory}"
die() { echo "backfill/record.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
mkdir -p "$OUT"
ANCHOR_DIR=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
stop() { [ -x "$ANCHOR_DIR/teardown.sh" ] && "$ANCHOR_DIR/teardown.sh" > /dev/null 2>&1 || true; }
trap stop EXIT
SELECT_TYPE=select/linear SELECT_PARAMS=CR_Memory PRIORITY_TYPE=priority/basic WITH_DBD=0 \
  EXTRA_CONF="SchedulerParameters=bf_interval=1,bf_resolution=1" \
  bash "$ANCHOR/setup.sh" > "$OUT/setup.log" 2>&1 || die "setup.sh failed (see $OUT/setup.log)"

submit() { # NODES MINUTES -> job id
  sbatch --parsable -p big -N "$1" --exclusive -t "$2" -o /dev/null -e /dev/null \
    --wrap "sleep $(($2 * 60))" | cut -d';' -f1
}
t0=$(date +%s)
at() { local wait=$((t0 + $1 - $(date +%s))); [ "$wait" -le 0 ] || sleep "$wait"; }
ids=()
ids+=("$(submit 2 10)") ids+=("$(submit 1 20)")
at 60
ids+=("$(submit 2 2)") ids+=("$(submit 2 10)")
at 120
ids+=("$(submit 1 20)")
at 160
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
submitted=$(date -d "$(field "${ids[0]}" SubmitTime)" +%s)
{
  n=1
  for id in "${ids[@]}"; do
    state=$(field "$id" JobState)
    start=$(date -d "$(field "$id" StartTime)" +%s)
    if [ "$state" = RUNNING ]; then nodes=$(field "$id" NodeList); else nodes=$(field "$id" SchedNodeList); fi
    echo "job=$n state=$state start=$((start - submitted)) nodes=${nodes:-none}"
    n=$((n + 1))
  done
} > "$OUT/plan.txt"
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
scancel "${ids[@]}" 2>/dev/null || true
cat "$OUT/plan.txt"
