#!/bin/bash
# cray.sh -- select/cray_aries (the bundled select wrapper, over select/cons_tres) inside a real
# slurmctld through the select/wasm shim: jobs asking for network performance counters
# (--network=blade) keep off the blade where such a job runs, other jobs do not, and the blade
# is free again once the counter job ended. For tests/select_shim.rs.
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about a minute):
#     PLUGINDIR=<dir with select_wasm.so and lib/libslurm_wasm.so> \
#     CRAY_CONFIG=<host TOML: [plugins.select] bundled = "select/cray_aries", inner cons_tres> \
#     OUT=<output dir> bash tests/anchor/select/cray.sh
#
# The anchor's nodes n1..n4, h1, h2 have blades by the first number of their name mod 4
# (select_p_node_init): n1 and h1 share blade 1, n2 and h2 blade 2. It writes
#   OUT/before.txt: jobs a (blade, on n1), c (no counters, -p hw -w h1) and b (blade, -p hw -w
#     h1, one of h1's two cores being free), 8 s after the last submit;
#   OUT/after.txt: b, 10 s after a was cancelled;
#   OUT/steps.txt: what a blade job on n1 and n2 saw of its steps (select_p_step_start,
#     select_p_step_pick_nodes): `during=ran|refused` for a two-node step while a one-node
#     step runs on n1 (its blade is the counter step's), `after=ran|refused` once it ended;
#   OUT/nhc-during.txt, OUT/nhc-after.txt: job f (-w n3, exclusive), submitted right after job
#     e on n3 was cancelled while the node health program (18.08's NHC) holds e's node, 3 s
#     later and once it ran (within 30 s); OUT/nhc-args.txt: the program's arguments, a line
#     per run;
# jobs as lines `<name> state=<JobState> nodes=<NodeList>`, and OUT/slurmctld.log (this run's
# lines naming select/wasm or slurm-wasm). The node health program is OUT/nhc, which the
# host configuration must name (`node_health`): it records its arguments and lasts 8 s only
# while OUT/slow exists (the last part), else it ends at once.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
: "${PLUGINDIR:?PLUGINDIR: the directory with select_wasm.so and lib/libslurm_wasm.so}"
: "${CRAY_CONFIG:?CRAY_CONFIG: the host configuration naming select/cray_aries}"
: "${OUT:?OUT: the output directory}"
T0=$(date +%s)
say() { echo "[select-cray +$(($(date +%s) - T0))s] $*"; }
die() { echo "[select-cray] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -f "$PLUGINDIR/select_wasm.so" ] || die "no select_wasm.so in $PLUGINDIR"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi
while read -r var; do unset "$var"; done < <(env | grep -oE '^(SLURM|SRUN|SALLOC|SBATCH)_[A-Za-z0-9_]*' \
  | grep -v '^SLURM_WASM_')
mkdir -p "$OUT"
rm -f "$OUT/slow" "$OUT/nhc-args.txt"
cat > "$OUT/nhc" <<EOF
#!/bin/sh
echo "\$@" >> "$OUT/nhc-args.txt"
[ -e "$OUT/slow" ] && sleep 8
exit 0
EOF
chmod 755 "$OUT/nhc"
STARTED=0
LOG_START=$(wc -l < "$A/log/slurmctld.log" 2>/dev/null || echo 0)
on_exit() {
  local rc=$?
  if [ "$STARTED" = 1 ] && [ -x "$A/teardown.sh" ]; then
    tail -n +"$((LOG_START + 1))" "$A/log/slurmctld.log" 2>/dev/null \
      | grep -E 'select/wasm|slurm-wasm' > "$OUT/slurmctld.log" || true
    say "stopping the cluster ($A/teardown.sh)"
    bash "$A/teardown.sh" > /dev/null 2>&1 || true
  fi
  [ $rc = 0 ] || echo "[select-cray] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

say "the anchor cluster under select/wasm with $CRAY_CONFIG"
rm -f "$A/teardown.sh"
STARTED=1
# other_cons_tres: how a site writes a cray plugin over cons_tres (other_select_init)
SLURM_WASM_CONFIG=$CRAY_CONFIG SELECT_TYPE=select/wasm SELECT_PARAMS=CR_Core_Memory,other_cons_tres \
  WITH_DBD=0 EXTRA_CONF="PluginDir=$PLUGINDIR:/usr/lib/x86_64-linux-gnu/slurm-wlm
SchedulerParameters=bf_interval=1" \
  bash "$ANCHOR/setup.sh" > "$OUT/setup.log" 2>&1

show() {
  local rec
  rec=$(scontrol show job "$1" 2>/dev/null || true)
  echo "$2 state=$(sed -n 's/.*JobState=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)" \
    "nodes=$(sed -n 's/^   NodeList=\([^ ]*\).*/\1/p' <<< "$rec" | head -n1)"
}
submit() {
  local name=$1; shift
  sbatch --parsable -J "$name" -o /dev/null -n1 "$@" --wrap 'sleep 300'
}

a=$(submit a --network=blade -w n1)
for _ in $(seq 1 50); do squeue -h -j "$a" -o %T | grep -q RUNNING && break; sleep 0.2; done
c=$(submit c -p hw -w h1)
for _ in $(seq 1 50); do squeue -h -j "$c" -o %T | grep -q RUNNING && break; sleep 0.2; done
b=$(submit b --network=blade -p hw -w h1)
sleep 8
{ show "$a" a; show "$c" c; show "$b" b; } > "$OUT/before.txt"
scancel "$a"
sleep 10
show "$b" b > "$OUT/after.txt"
scancel --user=root 2>/dev/null || true
drain() {
  for _ in $(seq 1 100); do [ -z "$(squeue -h -o %i)" ] && return; sleep 0.2; done
  die "jobs still queued: $(squeue -h -o '%i %T %R' | tr '\n' ';')"
}
drain

say "steps of a counter job"
d=$(sbatch --parsable -J d -o "$OUT/steps.txt" --network=blade -N2 -w n1,n2 --exclusive \
  -p big --wrap '
srun --exact -N1 -n1 -w n1 sleep 12 &
sleep 4
if srun --exact -N2 -n2 --immediate=3 true 2>/dev/null; then echo during=ran; else echo during=refused; fi
wait
sleep 1
if srun --exact -N2 -n2 --immediate=3 true 2>/dev/null; then echo after=ran; else echo after=refused; fi')
for _ in $(seq 1 150); do squeue -h -j "$d" -o %T 2>/dev/null | grep -q . || break; sleep 0.2; done
drain

say "a node health check holds the job's node"
touch "$OUT/slow"
e=$(submit e --exclusive -w n3)
for _ in $(seq 1 50); do squeue -h -j "$e" -o %T | grep -q RUNNING && break; sleep 0.2; done
scancel "$e"
sleep 0.5
f=$(submit f --exclusive -w n3)
sleep 3
show "$f" f > "$OUT/nhc-during.txt"
for _ in $(seq 1 150); do squeue -h -j "$f" -o %T | grep -q RUNNING && break; sleep 0.2; done
show "$f" f > "$OUT/nhc-after.txt"
rm -f "$OUT/slow"
scancel --user=root 2>/dev/null || true
say "done"
