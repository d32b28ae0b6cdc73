#!/bin/bash
# record.sh -- records what real Slurm 22.05.8 priority/multifactor computes, as the fixtures of
# tests/priority_anchor.rs (the differential test of our priority/multifactor plugin).
#
# Regenerate (as root, on the Debian 12 machine that runs ../shared/slurm-anchor; ~4 minutes):
#     bash tests/anchor/priority/record.sh
# It rewrites tests/fixtures/anchor/priority/ (plain text) and leaves nothing running.
#
# What it does:
#   1. starts the anchor cluster with ../shared/slurm-anchor/setup.sh (multifactor, slurmdbd) and
#      EXTRA_CONF below: a 5 min half-life so decay shows within the recording, non-zero QOS and
#      association weights, and AccountingStorageEnforce=limits (without it 22.05 charges no
#      usage for the part of a job that ends between two decay passes);
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
#   6. stops the cluster with the teardown.sh setup.sh wrote (also on failure).
#
# Output in tests/fixtures/anchor/priority/:
#   slurm.conf            the slurm.conf in use
#   config.txt            `scontrol show config`, priority and accounting keys
#   sacctmgr-assoc.txt    `sacctmgr -P show assoc`, and sacctmgr-assoc-ids.txt with ids and parents
#   sacctmgr-qos.txt      `sacctmgr -P show qos`, and sacctmgr-qos-ids.txt with ids
#   submitted.txt         job id|user|account|label|sbatch options|scontrol update after submission
#   sample1/, sample2/    instant.txt (date +%s before and after, last decay pass), sprio-l.txt,
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
OUT=${OUT:-$REPO/tests/fixtures/anchor/priority}
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

# ------------------------------------------------------------------ 1. cluster
# A rerun must not inherit usage or the last decay time of a previous run: slurmctld reloads
# them from StateSaveLocation (the accounting database is recreated by setup.sh).
rm -f "$A/teardown.sh" "$CTLD_STATE"/assoc_usage* "$CTLD_STATE"/qos_usage* \
      "$CTLD_STATE"/priority_last_decay_ran*
# Values our plugin reads from slurm.conf; a repeated key replaces setup.sh's (slurmctld uses
# the last occurrence). Slurm 22.05 charges a job's last partial period of usage when it ends
# (priority_p_job_end) only if AccountingStorageEnforce includes limits; without it a job that
# starts and ends between two decay passes leaves no usage at all.
EXTRA_CONF="PriorityDecayHalfLife=00:05:00
PriorityWeightQOS=1000
PriorityWeightAssoc=500
AccountingStorageEnforce=associations,limits"
say "starting the anchor cluster ($ANCHOR/setup.sh)"
STARTED=1
EXTRA_CONF=$EXTRA_CONF bash "$ANCHOR/setup.sh"

# ------------------------------------------------------------------ 2. associations and QOS
USERS="alice bob carol dave erin frank opsbot"
for u in $USERS; do id "$u" >/dev/null 2>&1 || { useradd -m "$u"; say "created Unix user $u"; }; done

say "building the association tree and QOS"
sam() { sacctmgr -i "$@" >/dev/null; }
sam add qos high Priority=100
sam add qos low Priority=10
# root
# |- teamA (40, Priority=10)     alice (10), root (1), theory (30): carol (5, Priority=20), dave (1)
# |- teamB (20, Priority=5)      bob (3), genomics (FairShare=parent): erin (2), frank (1)
# `- ops (1)                     opsbot (1)
sam modify account where name=teamA set FairShare=40 Priority=10
sam modify account where name=teamB set FairShare=20 Priority=5
sam add account theory Parent=teamA FairShare=30 Cluster=anchor
sam add account genomics Parent=teamB FairShare=parent Cluster=anchor
sam add account ops Parent=root FairShare=1 Cluster=anchor
sam modify user where name=alice set FairShare=10
sam modify user where name=bob set FairShare=3
sam add user carol Account=theory FairShare=5 Priority=20
sam add user dave Account=theory FairShare=1
sam add user erin Account=genomics FairShare=2
sam add user frank Account=genomics FairShare=1
sam add user opsbot Account=ops FairShare=1
sam modify user where name=alice,bob,carol,dave,erin,frank,opsbot set QOS=normal,high,low
# slurmctld learns associations from slurmdbd asynchronously: wait until it knows the last one
for _ in $(seq 1 40); do
  scontrol show assoc_mgr users=opsbot flags=assoc 2>/dev/null | grep -q 'UserName=opsbot' && break
  sleep 0.5
done

# ------------------------------------------------------------------ 3. usage, then blockers
# submit USER ACCOUNT LABEL OPTIONS... -> job id; every job runs in /tmp with no output file
submit() {
  local user=$1 acct=$2 label=$3; shift 3
  runuser -u "$user" -- sbatch --parsable -A "$acct" -J "$label" --chdir=/tmp -o /dev/null "$@"
}
wait_until() { # SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 2))); do "$@" && return 0; sleep 0.5; done
  die "timed out after ${limit}s waiting for $what"
}
no_jobs_named() { [ -z "$(squeue -h -n "$1" -o %i)" ]; }
all_running() { [ "$(squeue -h -n "$1" -t R -o %i | wc -l)" = "$2" ]; }

say "running usage jobs (about 30 s)"
submit alice teamA use -p big -n 8 --wrap 'sleep 30' >/dev/null
submit bob teamB use -p big -n 8 --wrap 'sleep 25' >/dev/null
submit carol theory use -p big -n 4 --wrap 'sleep 20' >/dev/null
submit erin genomics use -p big -n 6 --wrap 'sleep 20' >/dev/null
submit dave theory use -p hw -n 2 --wrap 'sleep 15' >/dev/null
submit frank genomics use -p hw -n 1 --wrap 'sleep 10' >/dev/null
wait_until 90 "the usage jobs to end" no_jobs_named use

say "filling every node with opsbot's blockers"
submit opsbot ops blocker -p big -N 4 --exclusive -t 20 --wrap 'sleep 1200' >/dev/null
submit opsbot ops blocker -p hw -N 2 --exclusive -t 20 --wrap 'sleep 1200' >/dev/null
wait_until 30 "the blockers to run" all_running blocker 2

# ------------------------------------------------------------------ 4. competing jobs
mkdir -p "$OUT"
rm -rf "${OUT:?}"/sample1 "${OUT:?}"/sample2
echo "# job id|user|account|label|sbatch options|scontrol update after submission" > "$OUT/submitted.txt"
# queue USER ACCOUNT LABEL UPDATE OPTIONS...: submit a competing job and note it
queue() {
  local user=$1 acct=$2 label=$3 update=$4; shift 4
  local id
  id=$(submit "$user" "$acct" "$label" -t 10 "$@" --wrap 'sleep 60')
  [ -z "$update" ] || scontrol update JobId="$id" $update
  echo "$id|$user|$acct|$label|$*|$update" >> "$OUT/submitted.txt"
}
say "queueing the competing jobs"
# On big (2 threads per core) a job's job-size factor counts the CPUs the scheduler last
# estimated for it (whole cores), not the CPUs it asked for: the jobs there ask for even
# counts, except alice-small (-n 1), kept to show the difference.
queue alice teamA alice-small "" -p big -n 1
queue alice teamA alice-2n16 "" -p big -N 2 -n 16
queue bob teamB bob-nice100 "" -p big -n 4 --nice=100
queue bob teamB bob-hw "" -p hw -n 1
queue carol theory carol-hw-high "" -p hw -n 2 --qos=high
queue dave theory dave-gpu-low "" -p big -n 2 --gres=gpu:1 --qos=low
queue erin genomics erin-bighw "" -p big,hw -n 2
queue frank genomics frank-nice-50 "Nice=-50" -p big -n 8
queue carol theory carol-prio999 "Priority=999" -p big -n 1
queue erin genomics erin-site200 "SiteFactor=200" -p big -n 2
queue frank genomics frank-mem3000 "" -p big -n 2 --mem=3000
queue alice teamA alice-held "" -p big -n 1 --hold
queue bob teamB bob-begin-1h "" -p big -n 2 --begin=now+3600
queue opsbot ops opsbot-begin20 "" -p big -n 2 --begin=now+20
say "waiting 20 s so that later submissions are younger"
sleep 20
queue dave theory dave-hw-late "" -p hw -n 1
queue root teamA root-big-4 "" -p big -n 4

# Every eligible pending job must have its accrue time before the pass we sample, or the
# job record would disagree with the factors of that pass.
accruing() {
  [ -z "$(SLURM_TIME_FORMAT=%s scontrol show job -o | grep 'JobState=PENDING' \
          | grep -v -e 'Reason=BeginTime' -e 'Reason=JobHeldUser' | grep 'AccrueTime=Unknown')" ]
}
wait_until 90 "every eligible pending job to accrue age" accruing

# ------------------------------------------------------------------ 5. samples
# the time of the last decay pass: the first of two big-endian 64-bit times in the state file
last_decay_ran() {
  od -An -N8 --endian=big -t d8 "$CTLD_STATE/priority_last_decay_ran" 2>/dev/null | tr -d ' ' || echo 0
}
decay_ran_since() { [ "$(last_decay_ran)" != "$1" ]; }
SPRIO_W='%i|%r|%u|%Y|%S|%A|%B|%F|%J|%P|%Q|%N|%T'
SPRIO_N='%i|%r|%u|%y|%S|%a|%b|%f|%j|%p|%q|%N|%t'
# sample DIR: wait for the next decay pass, then record everything before the one after it
sample() {
  local dir=$OUT/$1 before after from to
  before=$(last_decay_ran)
  say "$1: waiting for the next decay pass (the last ran at $before)"
  wait_until 75 "a decay pass" decay_ran_since "$before"
  while :; do
    before=$(last_decay_ran)
    mkdir -p "$dir"
    from=$(date +%s)
    sprio -l > "$dir/sprio-l.txt"
    sprio -w > "$dir/sprio-w.txt"
    sprio -n -l > "$dir/sprio-nl.txt"
    sprio -h -o "$SPRIO_W" > "$dir/sprio-p.txt"
    sprio -h -o "$SPRIO_N" > "$dir/sprio-np.txt"
    sshare -a -l > "$dir/sshare-al.txt"
    sshare -a -l -P > "$dir/sshare-alP.txt"
    scontrol show assoc_mgr flags=assoc > "$dir/assoc-mgr.txt"
    SLURM_TIME_FORMAT=%s scontrol show job -o > "$dir/jobs.txt"
    squeue -o '%.6i %.9P %.8u %.8a %.6q %.8T %.12r %.10Q' > "$dir/squeue.txt"
    to=$(date +%s)
    after=$(last_decay_ran)
    [ "$after" = "$before" ] && break
    say "$1: a decay pass ran while sampling; sampling again"
  done
  printf 'last_decay_ran=%s\nsampled_from=%s\nsampled_to=%s\n' "$before" "$from" "$to" \
    > "$dir/instant.txt"
  say "$1: recorded (decay pass at $before, sampled $from..$to)"
}
sample sample1
sample sample2

say "recording configuration and accounting tables"
cp /etc/slurm/slurm.conf "$OUT/slurm.conf"
scontrol show config | grep -E '^(Priority|AccountingStorage(Enforce|TRES|Type)|ClusterName|SelectType)' \
  > "$OUT/config.txt"
sacctmgr -P show assoc > "$OUT/sacctmgr-assoc.txt"
sacctmgr -P show assoc format=ID,Cluster,Account,User,ParentID,ParentName,Share,Priority,QOS \
  > "$OUT/sacctmgr-assoc-ids.txt"
sacctmgr -P show qos > "$OUT/sacctmgr-qos.txt"
sacctmgr -P show qos format=ID,Name,Priority,UsageFactor,Flags > "$OUT/sacctmgr-qos-ids.txt"

say "done: $(find "$OUT" -type f | wc -l) files in $OUT"
