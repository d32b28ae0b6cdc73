#!/usr/bin/env bash
# Runs the job-array script `slurm-wasm simulate --sweep` wrote on the anchor cluster (a real Slurm
# 22.05.8: select/cons_tres, priority/basic, no slurmdbd), for the live test
# `simulate_sweep::a_sweep_runs_as_a_job_array_on_slurm_and_combines`.
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about a minute):
#     SCRIPT=<sweep.sh> WORK=<dir> [SLURM_ANCHOR=..] bash tests/anchor/sweep/run.sh
#
# Starts the cluster, submits SCRIPT from WORK with `sbatch --wait` (which returns when every array
# task has ended, with the highest exit status among them), prints `sacct`-free evidence of what
# ran (the array's tasks as slurmctld logged them), and stops the cluster with the teardown.sh
# setup.sh wrote. The script's own files (sweep-results/, sweep-*.out) are left in WORK.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$ROOT/../shared/slurm-anchor}
: "${SCRIPT:?set SCRIPT to the sweep script}" "${WORK:?set WORK to the directory to submit from}"
die() { echo "sweep/run.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
ANCHOR_DIR=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
stop() { [ -x "$ANCHOR_DIR/teardown.sh" ] && "$ANCHOR_DIR/teardown.sh" > /dev/null 2>&1 || true; }
trap stop EXIT
PRIORITY_TYPE=priority/basic WITH_DBD=0 bash "$ANCHOR/setup.sh" > "$WORK/setup.log" 2>&1 \
  || die "setup.sh failed (see $WORK/setup.log)"
status=0
timeout 900 sbatch --wait --chdir "$WORK" "$SCRIPT" || status=$?
grep -E "_job_complete: JobId=[0-9]+_[0-9]+" "$ANCHOR_DIR/log/slurmctld.log" || true
exit "$status"
