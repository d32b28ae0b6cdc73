#!/bin/bash
# shim.sh -- runs the GPU and MPS cases of record.sh on the live anchor cluster twice, with
# Debian's gres_gpu.so/gres_mps.so and with our shims (host/slurm-plugins/gres) running gres
# components, then bad input: slurmd started on a missing library or a broken host configuration
# must stop with the shim's line instead of running Debian's plugin. tests/gres_shim.rs builds the
# shims, runs this and compares.
#
# Usage (as root, on the machine of ../shared/slurm-anchor; about 3 minutes):
#     PLUGINDIR=<dir with gres_gpu.so, gres_mps.so and lib/libslurm_wasm.so> \
#     WASM_CONFIG=<host TOML with [plugins.gres.gpu] and [plugins.gres.mps]> \
#     [BAD_CONFIGS="<host TOML> ..."] OUT=<output dir> bash tests/anchor/gres/shim.sh
#
# What it does:
#   1. record.sh with the anchor's plugins (PluginDir is Debian's alone): OUT/stock/case-*.txt;
#   2. record.sh with EXTRA_CONF="PluginDir=$PLUGINDIR:<Debian's dir>" (ours first, so Slurm
#      finds gres_gpu.so and gres_mps.so there) and SLURM_WASM_CONFIG=$WASM_CONFIG in the daemons'
#      environment: OUT/wasm/case-*.txt, and the daemons' logs in OUT/wasm/logs/;
#   3. bad input, with the slurm.conf of step 2 still in /etc/slurm: `slurmd -D -N n1` (no
#      slurmctld is running; a slurmd that loads its gres plugins keeps running, retrying its
#      registration) under `timeout 20`, once with SLURM_WASM_LIBRARY naming a missing file and
#      once per host configuration of BAD_CONFIGS; OUT/bad/<case>.txt holds `exit=<status>` and
#      the lines slurmd wrote to its log and stderr. A slurmd that ran Debian's plugin instead
#      would still be running at the timeout (exit=124).
# Leaves nothing running: record.sh stops each cluster it started, and a bad-input slurmd is
# killed by its timeout at the latest.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
DEBIAN_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
: "${PLUGINDIR:?PLUGINDIR: the directory with gres_gpu.so, gres_mps.so and lib/libslurm_wasm.so}"
: "${WASM_CONFIG:?WASM_CONFIG: the host configuration of the shim run}"
: "${OUT:?OUT: the output directory}"
T0=$(date +%s)

say() { echo "[gres shim +$(($(date +%s) - T0))s] $*"; }
die() { echo "[gres shim] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
for f in gres_gpu.so gres_mps.so lib/libslurm_wasm.so; do
  [ -f "$PLUGINDIR/$f" ] || die "no $f in $PLUGINDIR"
done
mkdir -p "$OUT"

# ------------------------------------------------------------------ 1. Debian's plugins
say "the cases with Debian's gres plugins"
env -u EXTRA_CONF -u SLURM_WASM_CONFIG -u SLURM_WASM_LIBRARY OUT="$OUT/stock" \
  bash "$REPO/tests/anchor/gres/record.sh"

# ------------------------------------------------------------------ 2. the shims
say "the cases with the gres shims of $PLUGINDIR"
# the logs of this run alone (setup.sh appends; an earlier bad-input case wrote there too)
: > "$A/log/slurmctld.log"; : > "$A/log/slurmd-n1.log"
EXTRA_CONF="PluginDir=$PLUGINDIR:$DEBIAN_PLUGINS" SLURM_WASM_CONFIG="$WASM_CONFIG" \
  OUT="$OUT/wasm" bash "$REPO/tests/anchor/gres/record.sh" || {
    mkdir -p "$OUT/wasm/logs"; cp "$A"/log/*.log "$OUT/wasm/logs/" 2>/dev/null || true
    die "record.sh failed under the shims; daemon logs in $OUT/wasm/logs"; }
mkdir -p "$OUT/wasm/logs"
cp "$A"/log/slurmctld.log "$A"/log/slurmd-n1.log "$OUT/wasm/logs/"
grep -q "^PluginDir=$PLUGINDIR:" /etc/slurm/slurm.conf \
  || die "slurm.conf does not name $PLUGINDIR first in PluginDir"

# ------------------------------------------------------------------ 3. bad input
# bad_case NAME VAR=VALUE...: slurmd (in the foreground, no controller) must stop on its own.
mkdir -p "$OUT/bad"
bad_case() {
  local name=$1 rc=0 log="$A/log/slurmd-n1.log"
  shift
  : > "$log"
  env -u SLURM_WASM_CONFIG -u SLURM_WASM_LIBRARY "$@" timeout 20 /usr/sbin/slurmd -D -N n1 \
    > "$OUT/bad/$name.out" 2>&1 || rc=$?
  { echo "exit=$rc"; cat "$log" "$OUT/bad/$name.out"; } > "$OUT/bad/$name.txt"
  say "bad input $name: slurmd exit $rc"
}
say "bad input: slurmd must stop with the shim's line"
bad_case no-library SLURM_WASM_LIBRARY="$OUT/bad/absent/libslurm_wasm.so" \
  SLURM_WASM_CONFIG="$WASM_CONFIG"
for toml in ${BAD_CONFIGS:-}; do
  bad_case "$(basename "$toml" .toml)" SLURM_WASM_CONFIG="$toml"
done
say "done"
