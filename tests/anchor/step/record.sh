#!/bin/bash
# record.sh -- records which cores real Slurm 22.05.8's slurmctld gives each job step
# (step_mgr.c: _pick_step_nodes, _step_alloc_lps, _pick_step_cores), as the fixtures of the
# step-allocation test in tests/select_anchor.rs (slurm::step against real Slurm).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~2 min):
#     bash tests/anchor/step/record.sh
# It rewrites tests/fixtures/anchor/step/ (plain text) and leaves nothing running.
#
# What it does:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh (cons_tres,
#      CR_Core_Memory, no slurmdbd) and DebugFlags=CPU_Bind, with which slurmctld logs every
#      step's cores (`_dump_step_layout`: "JobNode[i] Socket[s] Core[c] is allocated");
#   2. for each case of CASES below, submits one batch job and, inside it, starts the case's
#      steps one after another, each kept running (`sleep`) while the next is created:
#          srun --immediate <step options> bash -c 'echo step=$SLURM_STEP_ID; sleep 60'
#      `--immediate` makes a step that cannot get its CPUs now fail ("Requested nodes are
#      busy") instead of waiting. The batch script unsets SLURM_MEM_PER_* first, so a step
#      asks for memory only where its options say so;
#   3. cancels the job once every step started or failed, and cuts the job's part of
#      slurmctld's log;
#   4. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/step/:
#   case-<name>.txt  one case: `# job: <sbatch options>`, then one `# step: <srun options>` per
#                    step, then sections
#                      [steps]                  per step in order: `started <step id>` or
#                                               `failed <srun's error line>`
#                      [scontrol show job -d]   the job while its steps ran (CPU_IDs per node)
#                      [slurmctld step layout]  the last `_dump_step_layout` of each step:
#                                               `StepId=<id>`, then its `JobNode[i] Socket[s]
#                                               Core[c]` lines
#   slurm.conf, gres.conf  the configuration in use
#
# Environment: SLURM_ANCHOR (the slurm-anchor directory, default ../shared/slurm-anchor beside the
# repository), SLURM_ANCHOR_DIR (its state directory, default /tmp/slurm-anchor), OUT (output
# directory). Refuses to run while an anchor cluster is already up: it stops only what it started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
OUT=${OUT:-$REPO/tests/fixtures/anchor/step}
T0=$(date +%s)

# name|sbatch options|step options, `;` between steps. Names are file names. The big partition's
# nodes n[1-4] have 2 sockets x 2 cores x 2 threads (gpu 0 beside cores 0-1, gpu 1 beside 2-3);
# hw's h[1-2] have 1 socket x 2 cores x 1 thread.
CASES="exact-fill|-p big -N1 -n8|--exact -n1;--exact -n2;--exact -n1 -c3;--exact -n1;-n1
whole-first|-p big -N1 -n4|-n1;--exact -n1
whole-after-exact|-p big -N1 -n8|--exact -n1;-n1
overlap|-p big -N1 -n4|--exact -n2;--exact -n2;--overlap -n2;--exact -n1
sockets-block|-p big -N1 -n8|--exact -n2 -m block:block;--exact -n2 -m block:block;--exact -n2 -m block:cyclic
sockets-fcyclic|-p big -N1 -n8|--exact -n1 -c2 -m block:fcyclic;--exact -n2 -c2 -m block:fcyclic
cpus-per-task|-p big -N1 -n2 -c4|--exact -n1 -c2;--exact -n1 -c2;--exact -n1 -c3
threads-per-core|-p big -N1 -n8|--exact -n2 --threads-per-core=1;--exact -n1 --threads-per-core=1;--exact -n2
two-nodes|-p big -N2 -n16|--exact -n3;--exact -N2 -n2;--exact -n8;--exact -N1 -n4
two-nodes-whole|-p big -N2 -n4|--exact -N1 -n1;-N2 -n2;-N1 -n1
overcommit|-p hw -N1 -n2|--exact -n1;--exact -n2 --overcommit;--exact -n1
hw-exclusive|-p hw -N1 -n2|--exclusive -n1;--exclusive -n1;--exclusive -n1
mem-per-cpu|-p big -N1 -n4 --mem-per-cpu=200|--exact -n1 --mem-per-cpu=500;--exact -n1 --mem-per-cpu=200;--exact -n1 --mem-per-cpu=100
mem-per-node|-p big -N1 -n4 --mem=800|--exact -n1 --mem=500;--exact -n1 --mem=400;--exact -n1 --mem=300"

say() { echo "[record +$(($(date +%s) - T0))s] $*"; }
die() { echo "[record] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' | grep -v '^SLURM_WASM_')

WORK=$(mktemp -d)
chmod 755 "$WORK"
STARTED=0
stop_cluster() {
  local rc=$?
  if [ "$STARTED" = 1 ] && [ -x "$A/teardown.sh" ]; then
    say "stopping the cluster ($A/teardown.sh)"
    bash "$A/teardown.sh" || true
  elif [ "$STARTED" = 1 ]; then
    for f in "$A"/run/slurmd-*.pid "$A/run/slurmctld.pid"; do
      [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null && echo "sent TERM to $(cat "$f") ($f)"
    done
  fi
  rm -rf "$WORK"
  [ $rc = 0 ] || echo "[record] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

rm -f "$A/teardown.sh"
say "starting the anchor cluster ($ANCHOR/setup.sh)"
STARTED=1
WITH_DBD=0 EXTRA_CONF="DebugFlags=CPU_Bind" bash "$ANCHOR/setup.sh"

mkdir -p "$OUT"
rm -f "$OUT"/*.txt
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
cp /etc/slurm/gres.conf "$OUT/gres.conf"
LOG=$A/log/slurmctld.log

wait_idle() {
  for _ in $(seq 1 120); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 0.5; done
  die "jobs still in the queue after 60 s: $(squeue -h -o '%i %T')"
}

# run_case NAME JOB-OPTIONS STEPS: one batch job, written to $OUT/case-NAME.txt
run_case() {
  local name=$1 job=$2 steps=$3 dir=$WORK/$1 id before n i
  local -a step
  IFS=';' read -r -a step <<< "$steps"
  n=${#step[@]}
  mkdir -p "$dir"
  chmod 777 "$dir"
  {
    echo '#!/bin/bash'
    echo 'unset SLURM_MEM_PER_CPU SLURM_MEM_PER_NODE SLURM_MEM_PER_GPU'
    for i in "${!step[@]}"; do
      echo "srun --immediate ${step[$i]} bash -c 'echo step=\$SLURM_STEP_ID; sleep 60' >$dir/step$i.out 2>$dir/step$i.err &"
      echo "for _ in \$(seq 1 50); do [ -s $dir/step$i.out ] || [ -s $dir/step$i.err ] && break; sleep 0.2; done"
      # a step that failed leaves srun's error in step$i.err; give a started step's others time
      echo 'sleep 0.5'
    done
    echo "touch $dir/done"
    echo 'wait'
  } > "$dir/job.sh"
  wait_idle
  before=$(stat -c %s "$LOG")
  # shellcheck disable=SC2086 # the options are words on purpose
  id=$(sbatch --parsable -J "anchor-$name" -o "$dir/job.out" $job "$dir/job.sh")
  for _ in $(seq 1 300); do [ -f "$dir/done" ] && break; sleep 0.2; done
  [ -f "$dir/done" ] || die "$name: the steps of job $id did not all start within 60 s"
  {
    echo "# job: $job"
    for i in "${!step[@]}"; do echo "# step: ${step[$i]}"; done
    echo "[steps]"
    for i in $(seq 0 $((n - 1))); do
      if grep -q '^step=' "$dir/step$i.out"; then
        echo "started $(sed -n 's/^step=//p' "$dir/step$i.out" | head -n 1)"
      else
        echo "failed $(grep -m1 'error' "$dir/step$i.err" || head -n 1 "$dir/step$i.err")"
      fi
    done
    echo "[scontrol show job -d]"
    scontrol show job -d "$id" | sed '/^ *$/d'
    echo "[slurmctld step layout]"
    tail -c +$((before + 1)) "$LOG" | sed -e 's/^\[[^]]*\] //' | awk -v job="JobId=$id " '
      /^====================$/ { inside = !inside; if (inside) { head = ""; lines = "" } else if (head != "") last[head] = lines; next }
      inside && head == "" && index($0, job "StepId=") == 1 { head = substr($0, length(job) + 1); order[++count] = head; next }
      inside && head != "" && /^JobNode/ { sub(/ is allocated$/, ""); lines = lines $0 "\n" }
      END { for (k = 1; k <= count; k++) { h = order[k]; if (seen[h]++) continue; printf "%s\n%s", h, last[h] } }'
  } > "$OUT/case-$name.txt"
  scancel "$id"
  say "$name: job $id, $(grep -c '^started' "$OUT/case-$name.txt") of $n steps started"
}

while IFS='|' read -r name job steps; do run_case "$name" "$job" "$steps"; done <<< "$CASES"
wait_idle
say "done: $(find "$OUT" -type f | wc -l) files in $OUT"
