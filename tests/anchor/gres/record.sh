#!/bin/bash
# record.sh -- records the GPU/MPS environment real Slurm 22.05.8 gives jobs, steps and tasks on
# the anchor's `big` partition (n[1-4]: gpu:2 + mps:200, gres.conf GPU 0 Cores=0-1, GPU 1
# Cores=2-3, 100 MPS shares per GPU), as the fixtures of tests/gres_anchor.rs (the differential
# test of our gres/gpu and gres/mps plugins).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~1 min):
#     bash tests/anchor/gres/record.sh
# It rewrites tests/fixtures/anchor/gres/ (plain text) and leaves nothing running.
# FUZZ_SEED=1 bash tests/anchor/gres/record.sh records the cases fuzz.py draws instead (~6 min).
#
# What it does:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh (select/cons_tres
#      CR_Core_Memory, WITH_DBD=0) and waits for the first scheduling pass;
#   2. runs each case of CASES below as one batch job, `sbatch -J <case> <options> $JOB`, one at
#      a time; a case may first start a holder job (`sleep`, cancelled afterwards) so that the
#      case gets a device other than the first one. The batch script prints, in sections:
#         [batch env]            its own environment, filtered by $FILTER, sorted
#         [step env]             `srun --label <step options>` where every task prints its
#                                filtered environment (stably sorted by task)
#         [scontrol show job -d] the job's record while it runs (GRES=...(IDX:...) per node)
#   3. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/gres/:
#   case-<name>.txt   `# sbatch <options>` (and `# holder: sbatch <options>` when there is one),
#                     then the sections above; a job still pending after 20 s (it cannot start
#                     beside its holder) is cancelled and recorded as `[pending for 20 s,
#                     cancelled]` with its `scontrol show job -d` record
#   slurm.conf, gres.conf   the configuration in use
#
# Environment: SLURM_ANCHOR (the slurm-anchor directory, default ../shared/slurm-anchor beside the
# repository), SLURM_ANCHOR_DIR (its state directory, default /tmp/slurm-anchor), OUT (output
# directory). Refuses to run while an anchor cluster is already up: it stops only what it started.
# EXTRA_CONF (lines setup.sh appends to slurm.conf) and SLURM_WASM_* (the shims' host
# configuration and library) pass through to setup.sh and the daemons it starts: shim.sh runs the
# cases under the gres shims this way.
set -euo pipefail
export TZ=UTC   # scontrol prints local times

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
# FUZZ_SEED: record the cases tests/anchor/gres/fuzz.py draws from that seed (FUZZ_CASES of
# them, 60 unless set) instead of CASES below, into tests/fixtures/anchor/gres-fuzz, with the
# command that drew them in fuzz.txt (the differential fuzzing of issue 30).
if [ -n "${FUZZ_SEED:-}" ]; then
  OUT=${OUT:-$REPO/tests/fixtures/anchor/gres-fuzz}
else
  OUT=${OUT:-$REPO/tests/fixtures/anchor/gres}
fi
T0=$(date +%s)
FILTER='CUDA|GPU|SLURM_.*GPU|ROCR|ZE_AFFINITY|MPS'

# name|sbatch options|srun options of the step|holder job's sbatch options (optional)
CASES="gpu1|-n1 --gres=gpu:1|
gpu1-second|-n1 --gres=gpu:1 -w n1||-n1 --gres=gpu:1 -w n1
gpu2|-n2 --gres=gpu:2|
gpus-per-task-n2|-n2 --gpus-per-task=1|
gpus-per-task-N2-n4|-N2 -n4 --gpus-per-task=1|
gpus2-n2-step-gpu1|-n2 --gres=gpu:2|--gres=gpu:1
mps50|-n1 --gres=mps:50|
mps100|-n1 --gres=mps:100|
mps50-second|-n1 --gres=mps:50 -w n1||-n1 --gres=mps:100 -w n1
mps50-beside-gpu|-n1 --gres=mps:50 -w n1||-n1 --gres=gpu:1 -w n1
mps30-n2|-n2 --gres=mps:30|"
if [ -n "${FUZZ_SEED:-}" ]; then
  FUZZ_COMMAND="python3 tests/anchor/gres/fuzz.py --seed $FUZZ_SEED --cases ${FUZZ_CASES:-60}"
  CASES=$(cd "$REPO" && $FUZZ_COMMAND)
fi

say() { echo "[record +$(($(date +%s) - T0))s] $*"; }
die() { echo "[record] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi

# sbatch/srun read options from SLURM_*/SBATCH_* variables: none may leak in from the caller.
# (SLURM_WASM_* are the shims' settings, for the daemons setup.sh starts: kept.)
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' \
  | grep -v '^SLURM_WASM_')

WORK=$(mktemp -d)
chmod 755 "$WORK"
# ------------------------------------------------------------------ teardown on every exit
STARTED=0
on_exit() {
  local rc=$?
  if [ "$STARTED" = 1 ]; then
    if [ -x "$A/teardown.sh" ]; then
      say "stopping the cluster ($A/teardown.sh)"
      bash "$A/teardown.sh" || true
    else
      say "setup.sh wrote no teardown.sh; stopping daemons by their PID files"
      for f in "$A"/run/slurmd-*.pid "$A/run/slurmctld.pid"; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null && echo "sent TERM to $(cat "$f") ($f)"
      done
    fi
  fi
  rm -rf "$WORK"
  [ $rc = 0 ] || echo "[record] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

field() { sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<< "$1" | head -n 1; }
state() { field "$(scontrol show job "$1" 2>/dev/null || true)" JobState; }
wait_running() {
  for _ in $(seq 1 100); do [ "$(state "$1")" = RUNNING ] && return 0; sleep 0.2; done
  die "job $1 did not start in 20 s: $(state "$1")"
}
wait_gone() {
  for _ in $(seq 1 150); do
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0; sleep 0.2
  done
  die "job $1 still in the queue after 30 s"
}

# ------------------------------------------------------------------ 1. cluster
rm -f "$A/teardown.sh"
say "starting the anchor cluster ($ANCHOR/setup.sh)"
STARTED=1
SELECT_TYPE=select/cons_tres SELECT_PARAMS=CR_Core_Memory WITH_DBD=0 bash "$ANCHOR/setup.sh" \
  > "$WORK/setup.log"
probe=$(sbatch --parsable -J probe -o /dev/null -p hw --wrap 'sleep 1000')
wait_running "$probe"
scancel "$probe"; wait_gone "$probe"

mkdir -p "$OUT"
rm -f "$OUT"/*
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
cp /etc/slurm/gres.conf "$OUT/gres.conf"

# ------------------------------------------------------------------ 2. cases
JOB=$WORK/job.sh
cat > "$JOB" <<EOF
#!/bin/bash
echo "[batch env]"
env | grep -E '$FILTER' | sort
echo "[step env]"
srun --label \$STEP_OPTS bash -c "env | grep -E '$FILTER' | sort" | sort -s -t: -k1,1n
echo "[scontrol show job -d]"
scontrol show job -d "\$SLURM_JOB_ID" | sed '/^ *\$/d'
EOF
chmod 755 "$JOB"

while IFS='|' read -r -u 3 name opts step holder; do
  hid=""
  if [ -n "$holder" ]; then
    # shellcheck disable=SC2086 # the options are words on purpose
    hid=$(sbatch --parsable -J "hold-$name" -o /dev/null $holder --wrap 'sleep 1000')
    wait_running "$hid"
  fi
  # shellcheck disable=SC2086
  id=$(STEP_OPTS="$step" sbatch --parsable --export=ALL -J "$name" -o "$WORK/$name.out" \
       -e "$WORK/$name.err" $opts "$JOB")
  # a job that cannot start beside its holder is recorded as pending and cancelled
  pending=""
  for _ in $(seq 1 100); do
    [ "$(state "$id")" = PENDING ] || break; sleep 0.2
  done
  if [ "$(state "$id")" = PENDING ]; then
    pending=$(scontrol show job -d "$id" | sed '/^ *$/d')
    scancel "$id"
  fi
  wait_gone "$id"
  {
    echo "# sbatch $opts"
    [ -z "$step" ] || echo "# step: srun --label $step"
    [ -z "$holder" ] || echo "# holder: sbatch $holder (job $hid, running)"
    echo "# job $id"
    if [ -n "$pending" ]; then
      echo "[pending for 20 s, cancelled]"
      echo "$pending"
    else
      cat "$WORK/$name.out"
    fi
    if [ -s "$WORK/$name.err" ]; then echo "[stderr]"; cat "$WORK/$name.err"; fi
  } > "$OUT/case-$name.txt"
  if [ -n "$hid" ]; then scancel "$hid"; wait_gone "$hid"; fi
  say "$name: job $id"
done 3<<< "$CASES"

[ -z "${FUZZ_SEED:-}" ] || echo "$FUZZ_COMMAND" > "$OUT/fuzz.txt"
say "done: $(find "$OUT" -type f | wc -l) files in $OUT"
