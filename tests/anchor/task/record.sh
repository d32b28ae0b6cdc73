#!/bin/bash
# record.sh -- records how real Slurm 22.05.8 task/affinity binds tasks on the anchor's `hw`
# partition, as the fixtures of tests/task_anchor.rs (the differential test of our
# task/affinity plugin).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~30 s):
#     bash tests/anchor/task/record.sh
# It rewrites tests/fixtures/anchor/task/ (plain text) and leaves nothing running.
#
# Why `hw`: its nodes h[1-2] are shaped like this machine (1 socket x 2 cores x 1 thread) and
# both slurmd daemons run on it, so the masks task/affinity applies there are real ones.
#
# What it does:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh: TaskPlugin=$TASK_PLUGIN
#      (checked in `scontrol show config`), no slurmdbd (binding does not need it), and
#      SlurmdDebug=debug so slurmd logs what lllp_distribution received and decided;
#   2. runs each case of CASES below, one at a time on an idle partition, as
#          srun -p hw --label -J anchor-<case> <options> $TASK
#      where every task prints `grep Cpus_allowed_list /proc/self/status` and its
#      SLURM_CPU_BIND* variables (stdout), slurmstepd prints the `--cpu-bind=verbose` lines
#      (stderr), and afterwards `scontrol show job -d` gives the allocation (CPU_IDs per node);
#   3. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/task/:
#   case-<name>.txt one case: the srun command line, then sections
#                     [srun exit status]
#                     [stdout]                 srun's labelled stdout, stably sorted by task
#                     [stderr]                 srun's stderr (the verbose lines), stably sorted
#                     [scontrol show job -d]   the job's record after the step ended
#                     [slurmd log]             the task/affinity lines each slurmd logged for
#                                              the case, as `<node>: <line>`, timestamps cut
#   slurm.conf      the slurm.conf in use
#   config.txt      `scontrol show config`, task and select keys
#   slurmd-C.txt    `slurmd -N h1 -C`: the hardware as h1's slurmd detects it
#   lscpu.txt       `lscpu -p=CPU,CORE,SOCKET,NODE`: the machine's OS CPU numbering
#
# Environment: SLURM_ANCHOR (the slurm-anchor directory, default ../shared/slurm-anchor beside the
# repository), SLURM_ANCHOR_DIR (its state directory, default /tmp/slurm-anchor), OUT (output
# directory), TASK_PLUGIN (default task/affinity; tests/anchor/task/shim.sh runs the same cases
# under task/wasm) and PLUGIN_DIR (a directory put before Debian's in PluginDir). Refuses to run while an anchor cluster is already up: it stops only what it started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
# FUZZ_SEED: record the cases tests/anchor/task/fuzz.py draws from that seed (FUZZ_CASES of
# them, 120 unless set) instead of CASES below, into tests/fixtures/anchor/task-fuzz, with the
# command that drew them in fuzz.txt (the differential fuzzing of issue 30).
if [ -n "${FUZZ_SEED:-}" ]; then
  OUT=${OUT:-$REPO/tests/fixtures/anchor/task-fuzz}
else
  OUT=${OUT:-$REPO/tests/fixtures/anchor/task}
fi
TASK_PLUGIN=${TASK_PLUGIN:-task/affinity}
EXTRA="SlurmdDebug=debug"
[ -z "${PLUGIN_DIR:-}" ] || EXTRA+=$'\n'"PluginDir=$PLUGIN_DIR:/usr/lib/x86_64-linux-gnu/slurm-wlm"
T0=$(date +%s)

# name|srun options besides `-p hw --label -J anchor-<name>`. Names are file names.
CASES="N2-n4|-N2 -n4 --cpu-bind=verbose
n2-cores|-n2 --cpu-bind=verbose,cores
n2-map_cpu|-n2 --cpu-bind=verbose,map_cpu:1,0
n1-c2|-n1 -c2 --cpu-bind=verbose
n2-block-cyclic|-n2 -m block:cyclic --cpu-bind=verbose
n2|-n2 --cpu-bind=verbose
n2-threads|-n2 --cpu-bind=verbose,threads
n1-sockets|-n1 --cpu-bind=verbose,sockets
n2-mask_cpu|-n2 --cpu-bind=verbose,mask_cpu:0x1,0x2
n2-none|-n2 --cpu-bind=verbose,none
N2-n3|-N2 -n3 --cpu-bind=verbose
n1|-n1 --cpu-bind=verbose
n2-sockets|-n2 --cpu-bind=verbose,sockets
n2-rank|-n2 --cpu-bind=verbose,rank
n1-map_cpu-outside|-n1 --cpu-bind=verbose,map_cpu:1
n1-mask_cpu-wider|-n1 --cpu-bind=verbose,mask_cpu:0x3
N1-n4-overcommit|-N1 -n4 --overcommit --cpu-bind=verbose
n2-ldoms|-n2 --cpu-bind=verbose,ldoms"

if [ -n "${FUZZ_SEED:-}" ]; then
  FUZZ_COMMAND="python3 tests/anchor/task/fuzz.py --seed $FUZZ_SEED --cases ${FUZZ_CASES:-120}"
  CASES=$(cd "$REPO" && $FUZZ_COMMAND)
fi

say() { echo "[record +$(($(date +%s) - T0))s] $*"; }
die() { echo "[record] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi

# srun reads options from SLURM_*/SRUN_* variables: a recording made inside an allocation, or
# from a shell that sets them, must not inherit any (SLURM_WASM_* are the shim's, for the daemons).
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' | grep -v '^SLURM_WASM_')

WORK=$(mktemp -d)
# ------------------------------------------------------------------ teardown on every exit
STARTED=0
stop_cluster() {
  local rc=$?
  if [ "$STARTED" = 1 ]; then
    if [ -x "$A/teardown.sh" ]; then
      say "stopping the cluster ($A/teardown.sh)"
      bash "$A/teardown.sh" || true
    else
      # setup.sh failed before writing teardown.sh: stop, by PID file, the daemons it started
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
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ 1. cluster
rm -f "$A/teardown.sh"
say "starting the anchor cluster ($ANCHOR/setup.sh)"
STARTED=1
TASK_PLUGIN=$TASK_PLUGIN WITH_DBD=0 EXTRA_CONF="$EXTRA" bash "$ANCHOR/setup.sh"
TASK_LINE=$(scontrol show config | grep -E '^TaskPlugin ' || true)
[[ $TASK_LINE =~ =\ $TASK_PLUGIN$ ]] || die "slurmctld does not run $TASK_PLUGIN: $TASK_LINE"

mkdir -p "$OUT"
rm -f "$OUT"/*.txt
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
[ -z "${FUZZ_SEED:-}" ] || echo "$FUZZ_COMMAND" > "$OUT/fuzz.txt"
scontrol show config | grep -E '^(TaskPlugin|TaskPluginParam|SelectType|SelectTypeParameters) ' \
  > "$OUT/config.txt"
slurmd -N h1 -C > "$OUT/slurmd-C.txt"
lscpu -p=CPU,CORE,SOCKET,NODE > "$OUT/lscpu.txt"

# ------------------------------------------------------------------ 2. cases
# What each task runs: its CPU list and binding environment.
TASK=$WORK/task.sh
cat > "$TASK" <<'EOF'
#!/bin/bash
grep Cpus_allowed_list /proc/self/status
env | grep ^SLURM_CPU_BIND | sort
EOF
chmod +x "$TASK"

wait_idle() {
  for _ in $(seq 1 60); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 0.5; done
  die "jobs still in the queue after 30 s: $(squeue -h -o '%i %T')"
}
log_size() { stat -c %s "$A/log/slurmd-$1.log"; }

# run_case NAME OPTIONS: one srun, written to $OUT/case-NAME.txt
run_case() {
  local name=$1 opts=$2 rc=0 id node
  local -A before
  wait_idle
  for node in h1 h2; do before[$node]=$(log_size $node); done
  # shellcheck disable=SC2086 # the options are words on purpose
  srun -p hw --label -J "anchor-$name" $opts "$TASK" \
    </dev/null >"$WORK/out" 2>"$WORK/err" || rc=$?
  wait_idle
  id=$(squeue -h -t all -n "anchor-$name" -o %i | tail -n 1)
  [ -n "$id" ] || die "$name: no job named anchor-$name"
  {
    echo "# srun -p hw --label -J anchor-$name $opts \$TASK"
    echo "[srun exit status]"
    echo "$rc"
    echo "[stdout]"
    sort -s -t: -k1,1n "$WORK/out"
    echo "[stderr]"
    sort -s -t: -k1,1n "$WORK/err"
    echo "[scontrol show job -d]"
    scontrol show job -d "$id" | sed '/^ *$/d'
    echo "[slurmd log]"
    for node in h1 h2; do
      tail -c +$((before[$node] + 1)) "$A/log/slurmd-$node.log" | grep -E 'task/(affinity|wasm)' \
        | sed -e 's/^\[[^]]*\] //' -e "s/^/$node: /" || true
    done
  } > "$OUT/case-$name.txt"
  say "$name: srun exit $rc, job $id"
}

while IFS='|' read -r name opts; do run_case "$name" "$opts"; done <<< "$CASES"

say "done: $(find "$OUT" -type f | wc -l) files in $OUT"
