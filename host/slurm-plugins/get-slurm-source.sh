#!/bin/bash
# get-slurm-source.sh -- fetch and configure the source of the Slurm installed on this machine, so
# that the shim plugins of host/slurm-plugins can be compiled against its internal headers (a Slurm
# plugin only loads into the exact version it was built against).
#
# Usage (as root: it adds Debian's deb-src entries and installs the build packages):
#     bash host/slurm-plugins/get-slurm-source.sh          # prints the configured directory
#
# What it does, on Debian (the installed slurmctld package is the pin):
#   1. derives "deb-src" entries from the machine's "deb" entries (once) and installs dpkg-dev,
#      gcc, make and the headers ./configure needs;
#   2. `apt-get source slurm-wlm=<installed version>`: the upstream source with Debian's patches;
#   3. `./configure` with Debian's switches (pmix and pam left out: no plugin here needs them).
# The configured tree has config.h at its top beside slurm/ and src/; the Makefile's SLURM_SRC.
#
# Environment:
#   SLURM_SRC_DIR   where the configured tree goes (default /var/tmp/slurm-wasm/slurm-src-<version>);
#                   a tree already configured there for the same version is reused (about 45 s saved).
#   SLURM_VERSION   the Debian version to fetch (default: the installed slurmctld's, else slurmd's).
# Output: the last line on stdout is the configured directory; progress goes to stderr.
# Fails (exit 1, one line naming what is missing) when no Slurm package is installed, the
# source cannot be fetched or ./configure fails (its log is then left in the tree).
set -euo pipefail

say() { echo "[get-slurm-source] $*" >&2; }
die() { echo "[get-slurm-source] error: $*" >&2; exit 1; }

V=${SLURM_VERSION:-}
if [ -z "$V" ]; then
  for pkg in slurmctld slurmd slurm-client; do
    V=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
    [ -n "$V" ] && break
  done
fi
[ -n "$V" ] || die "no Slurm package (slurmctld, slurmd or slurm-client) is installed: install the daemons first (../shared/slurm-anchor/setup.sh does)"

OUT=${SLURM_SRC_DIR:-/var/tmp/slurm-wasm/slurm-src-$V}
STAMP=$OUT/.slurm-wasm-source
if [ -f "$OUT/config.h" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$V" ]; then
  say "reusing Slurm $V configured in $OUT"
  echo "$OUT"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root (apt-get source needs deb-src entries and build packages), or point SLURM_SRC_DIR at a configured tree of Slurm $V"

# 1. deb-src entries, derived from the binary entries Debian's images carry (deb822 or one-line)
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      > /etc/apt/sources.list.d/slurm-wasm-src.sources
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/slurm-wasm-src.list
  else
    die "no apt sources to derive deb-src entries from (/etc/apt/sources.list.d/debian.sources)"
  fi
  say "added deb-src entries; apt-get update"
  apt-get update -qq
fi
say "installing the build packages (dpkg-dev gcc make libmunge-dev libhwloc-dev)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  dpkg-dev gcc make libc6-dev libmunge-dev libhwloc-dev >/dev/null

# 2. the source package, with Debian's patches applied by dpkg-source
PKG=$(dirname "$OUT")/pkg-$V
mkdir -p "$PKG"
if ! ls -d "$PKG"/slurm-wlm-*/ >/dev/null 2>&1; then
  say "apt-get source slurm-wlm=$V"
  (cd "$PKG" && apt-get source -qq "slurm-wlm=$V" 2>&1 | grep -v 'unsandboxed' >&2) || true
fi
SRC=$(ls -d "$PKG"/slurm-wlm-*/ 2>/dev/null | head -1)
[ -n "$SRC" ] || die "apt-get source slurm-wlm=$V gave no source tree in $PKG"

# 3. configure a copy with Debian's switches
say "configuring $SRC in $OUT (about 30 s)"
rm -rf "$OUT"
cp -a "$SRC" "$OUT"
LIBDIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
(cd "$OUT" && ./configure -q --prefix=/usr --sysconfdir=/etc/slurm --libdir="$LIBDIR" \
   --with-munge --without-rpath --disable-debug --enable-multiple-slurmd >/dev/null) \
  || die "./configure failed; see $OUT/config.log"
[ -f "$OUT/config.h" ] || die "./configure wrote no config.h in $OUT"
echo "$V" > "$STAMP"
say "configured Slurm $V in $OUT"
echo "$OUT"
