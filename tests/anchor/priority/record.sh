#!/bin/bash
# record.sh -- records what real Slurm 22.05.8 priority/multifactor computes, as the fixtures of
# tests/priority_anchor.rs (the differential test of our priority/multifactor plugin).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~4 minutes):
#     bash tests/anchor/priority/record.sh
# It rewrites tests/fixtures/anchor/priority/ (plain text) and leaves nothing running.
# With FUZZ_SEED=<n> (issue 30's differential fuzzing) it records instead the stream
# tests/anchor/priority/fuzz.py draws from that seed (random weights and flags, association tree,
# usage and queue) into tests/fixtures/anchor/priority-fuzz-<n>/, with the stream in fuzz.txt.
#
# What it does:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh (multifactor, slurmdbd) and
#      STREAM_EXTRA_CONF of stream.sh (the stream this script shares with shim.sh): a 5 min
#      half-life so decay shows within the recording, non-zero QOS and association weights,
#      and AccountingStorageEnforce=limits (without it 22.05 charges no usage for the part of a
#      job that ends between two decay passes);
#   2. builds an association tree with sacctmgr (accounts two levels deep, one FairShare=parent
#      account, association priorities) and three QOS; creates missing Unix users with useradd;
#   3. runs short jobs as six users to accumulate usage, then fills every node with two
#      "blocker" jobs of user opsbot so the next jobs stay pending (eligible, accruing age);
#   4. queues competing jobs: sizes, partitions big/hw (PriorityJobFactor 1/2) and both, QOS,
#      nice (+100 and -50), a site factor, a GPU, a --priority=999 job, two submitted 20 s later,
#      plus a held job and a not-yet-eligible one that sprio must leave out (the list is written
#      to submitted.txt); on big, all but one ask for an even number of CPUs (see below);
#   5. records two samples, each right after a pass of multifactor's decay thread (sprio shows
#      the factors of the last pass, at the time saved in StateSaveLocation/priority_last_decay_ran),
#      the second one pass (PriorityCalcPeriod, 60 s) after the first: age, usage and fair-share
#      move between them, every other factor stays;
#   6. records a third sample between two passes: right after the pass that follows sample2 it
#      submits two jobs (late-small: -p big -n 1, late-hw: -p hw -n 1) and samples at once,
#      before the next pass. sprio shows every job's factors as the last computation stored them:
#      the older jobs' from that pass, the late ones' from their submission (Age 0, and a job
#      size from the CPUs they asked for, not the whole cores the scheduler estimates later);
#      the submission times and the pass are in sample3/instant.txt and jobs.txt. If a pass
#      runs between the submissions and the sample, the recording fails (rerun it);
#   7. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/priority/:
#   slurm.conf            the slurm.conf in use
#   config.txt            `scontrol show config`, priority and accounting keys
#   sacctmgr-assoc.txt    `sacctmgr -P show assoc`, and sacctmgr-assoc-ids.txt with ids and parents
#   sacctmgr-qos.txt      `sacctmgr -P show qos`, and sacctmgr-qos-ids.txt with ids
#   submitted.txt         job id|user|account|label|sbatch options|scontrol update after submission
#   sample1/, sample2/,
#   sample3/              instant.txt (date +%s before and after, last decay pass), sprio-l.txt,
#                         sprio-w.txt, sprio-nl.txt (normalised), sprio-p.txt and sprio-np.txt
#                         (full-width `|`-separated weighted and normalised rows: sprio -l cuts
#                         TRES at 20 characters; 22.05's sprio has no account or QOS-name column),
#                         sshare-al.txt, sshare-alP.txt, assoc-mgr.txt
#                         (`scontrol show assoc_mgr flags=assoc`: ids, parents, priorities, raw
#                         usage to 2 decimals), jobs.txt (`scontrol show job -o`, Unix times),
#                         squeue.txt
#
# Environment: SLURM_ANCHOR (the slurm-anchor directory, default ../shared/slurm-anchor beside the
# repository), SLURM_ANCHOR_DIR (its state directory, default /tmp/slurm-anchor), OUT (output
# directory). Refuses to run while an anchor cluster is already up: it stops only what it started.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
ANCHOR=${SLURM_ANCHOR:-$REPO/../shared/slurm-anchor}
A=${SLURM_ANCHOR_DIR:-/tmp/slurm-anchor}
if [ -n "${FUZZ_SEED:-}" ]; then
  OUT=${OUT:-$REPO/tests/fixtures/anchor/priority-fuzz-$FUZZ_SEED}
else
  OUT=${OUT:-$REPO/tests/fixtures/anchor/priority}
fi
CTLD_STATE=$A/spool/ctld
T0=$(date +%s)

say() { echo "[record +$(($(date +%s) - T0))s] $*"; }
die() { echo "[record] error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (setup.sh installs and starts daemons)"
[ -x "$ANCHOR/setup.sh" ] || [ -f "$ANCHOR/setup.sh" ] || die "no setup.sh in $ANCHOR (set SLURM_ANCHOR)"
if [ -f "$A/run/slurmctld.pid" ] && kill -0 "$(cat "$A/run/slurmctld.pid")" 2>/dev/null; then
  die "an anchor cluster is already running ($A/run/slurmctld.pid); stop it with $A/teardown.sh first"
fi

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
      for f in "$A"/run/slurmd-*.pid "$A/run/slurmctld.pid" "$A/run/slurmdbd.pid" /run/mysqld/anchor.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null && echo "sent TERM to $(cat "$f") ($f)"
      done
    fi
  fi
  [ $rc = 0 ] || echo "[record] failed (exit $rc); daemon logs are in $A/log" >&2
  exit $rc
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# shellcheck source=stream.sh
. "$(dirname "${BASH_SOURCE[0]}")/stream.sh"
# FUZZ_SEED: the stream tests/anchor/priority/fuzz.py draws from that seed replaces stream.sh's
# tree, usage and queue, and its weights and flags follow STREAM_EXTRA_CONF in slurm.conf
FUZZ_EXTRA_CONF=""
if [ -n "${FUZZ_SEED:-}" ]; then
  FUZZ_COMMAND="python3 tests/anchor/priority/fuzz.py --seed $FUZZ_SEED"
  FUZZ_STREAM=$(cd "$REPO" && $FUZZ_COMMAND)
  eval "$FUZZ_STREAM"
fi

# ------------------------------------------------------------------ 1. cluster
# A rerun must not inherit usage or the last decay time of a previous run: slurmctld reloads
# them from StateSaveLocation (the accounting database is recreated by setup.sh).
rm -f "$A/teardown.sh" "$CTLD_STATE"/assoc_usage* "$CTLD_STATE"/qos_usage* \
      "$CTLD_STATE"/priority_last_decay_ran*
say "starting the anchor cluster ($ANCHOR/setup.sh)"
STARTED=1
EXTRA_CONF="$STREAM_EXTRA_CONF${FUZZ_EXTRA_CONF:+
$FUZZ_EXTRA_CONF}" bash "$ANCHOR/setup.sh"

stream_tree
stream_usage
stream_queue

# ------------------------------------------------------------------ 5. samples
sample sample1
sample sample2

# ------------------------------------------------------------------ 6. a sample between passes
late_sample() {
  local dir=$1 before
  before=$(last_decay_ran)
  say "$dir: waiting for the next decay pass (the last ran at $before)"
  wait_until 75 "a decay pass" decay_ran_since "$before"
  before=$(last_decay_ran)
  # a second later: the late jobs' submit times are past the pass's time
  sleep 1
  queue alice teamA late-small "" -p big -n 1
  queue bob teamB late-hw "" -p hw -n 1
  record_sample "$dir"
  [ "$(last_decay_ran)" = "$before" ] || die "$dir: a decay pass ran after the late submissions; rerun"
}
late_sample sample3

say "recording configuration and accounting tables"
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
scontrol show config | grep -E '^(Priority|AccountingStorage(Enforce|TRES|Type)|ClusterName|SelectType)' \
  > "$OUT/config.txt"
sacctmgr -P show assoc > "$OUT/sacctmgr-assoc.txt"
sacctmgr -P show assoc format=ID,Cluster,Account,User,ParentID,ParentName,Share,Priority,QOS \
  > "$OUT/sacctmgr-assoc-ids.txt"
sacctmgr -P show qos > "$OUT/sacctmgr-qos.txt"
sacctmgr -P show qos format=ID,Name,Priority,UsageFactor,Flags > "$OUT/sacctmgr-qos-ids.txt"

[ -z "${FUZZ_SEED:-}" ] || echo "$FUZZ_STREAM" > "$OUT/fuzz.txt"

say "done: $(find "$OUT" -type f | wc -l) files in $OUT"
