#!/bin/bash
# stream.sh -- the priority stream of the anchor cluster, sourced by record.sh (which records what
# stock priority/multifactor computes from it) and by shim.sh (which runs it under stock
# multifactor and under the priority/wasm shim and compares). Not a script of its own.
#
# It expects: say and die (log and fail), A (the anchor state directory), CTLD_STATE
# (slurmctld's StateSaveLocation) and, for stream_queue and sample, OUT (the output directory).
# The cluster is started by the caller, with STREAM_EXTRA_CONF among its slurm.conf lines.

# What the stream needs in slurm.conf besides setup.sh's lines; a repeated key replaces setup.sh's
# (slurmctld uses the last occurrence). Slurm 22.05 charges a job's last partial period of usage
# when it ends (priority_p_job_end) only if AccountingStorageEnforce includes limits; without it a
# job that starts and ends between two decay passes leaves no usage at all.
STREAM_EXTRA_CONF="PriorityDecayHalfLife=00:05:00
PriorityWeightQOS=1000
PriorityWeightAssoc=500
AccountingStorageEnforce=associations,limits"
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


# The stream's own parts, which tests/anchor/priority/fuzz.py's output replaces when record.sh
# fuzzes: the association tree (with the `ops` account and its user opsbot, whose blockers fill the
# nodes), the usage jobs, and the competing jobs.
stream_tree_body() {
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
}
stream_usage_body() {
  submit alice teamA use -p big -n 8 --wrap 'sleep 30' >/dev/null
  submit bob teamB use -p big -n 8 --wrap 'sleep 25' >/dev/null
  submit carol theory use -p big -n 4 --wrap 'sleep 20' >/dev/null
  submit erin genomics use -p big -n 6 --wrap 'sleep 20' >/dev/null
  submit dave theory use -p hw -n 2 --wrap 'sleep 15' >/dev/null
  submit frank genomics use -p hw -n 1 --wrap 'sleep 10' >/dev/null
}
# queue USER ACCOUNT LABEL UPDATE OPTIONS... (defined by stream_queue): one competing job
stream_queue_body() {
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
}
# 2. the association tree and three QOS; missing Unix users are created with useradd
stream_tree() {
  local u
  for u in alice bob carol dave erin frank opsbot; do id "$u" >/dev/null 2>&1 || { useradd -m "$u"; say "created Unix user $u"; }; done

  say "building the association tree and QOS"
  sam() { sacctmgr -i "$@" >/dev/null; }
  sam add qos high Priority=100
  sam add qos low Priority=10
  stream_tree_body
  sam modify user where name=alice,bob,carol,dave,erin,frank,opsbot set QOS=normal,high,low
  # slurmctld learns associations from slurmdbd asynchronously: wait until it knows the last one
  for _ in $(seq 1 40); do
    scontrol show assoc_mgr users=opsbot flags=assoc 2>/dev/null | grep -q 'UserName=opsbot' && break
    sleep 0.5
  done
}

# 3. usage jobs, then opsbot's blockers on every node
stream_usage() {
  say "running usage jobs (about 30 s)"
  stream_usage_body
  wait_until 150 "the usage jobs to end" no_jobs_named use

  say "filling every node with opsbot's blockers"
  submit opsbot ops blocker -p big -N 4 --exclusive -t 20 --wrap 'sleep 1200' >/dev/null
  submit opsbot ops blocker -p hw -N 2 --exclusive -t 20 --wrap 'sleep 1200' >/dev/null
  wait_until 30 "the blockers to run" all_running blocker 2
}

# 4. the competing jobs (noted in $OUT/submitted.txt), until each eligible one accrues age
# Every eligible pending job must have its accrue time before the pass we sample, or the
# job record would disagree with the factors of that pass.
accruing() {
  [ -z "$(SLURM_TIME_FORMAT=%s scontrol show job -o | grep 'JobState=PENDING' \
          | grep -v -e 'Reason=BeginTime' -e 'Reason=JobHeldUser' | grep 'AccrueTime=Unknown')" ]
}

stream_queue() {
  mkdir -p "$OUT"
  rm -rf "${OUT:?}"/sample1 "${OUT:?}"/sample2 "${OUT:?}"/sample3
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
  stream_queue_body
  wait_until 90 "every eligible pending job to accrue age" accruing
}

# 5. samples
# the time of the last decay pass: the first of two big-endian 64-bit times in the state file
last_decay_ran() {
  od -An -N8 --endian=big -t d8 "$CTLD_STATE/priority_last_decay_ran" 2>/dev/null | tr -d ' ' || echo 0
}
decay_ran_since() { [ "$(last_decay_ran)" != "$1" ]; }
SPRIO_W='%i|%r|%u|%Y|%S|%A|%B|%F|%J|%P|%Q|%N|%T'
SPRIO_N='%i|%r|%u|%y|%S|%a|%b|%f|%j|%p|%q|%N|%t'
# sample DIR: wait for the next decay pass, then record everything before the one after it
sample() {
  local before
  before=$(last_decay_ran)
  say "$1: waiting for the next decay pass (the last ran at $before)"
  wait_until 75 "a decay pass" decay_ran_since "$before"
  record_sample "$1"
}
# record_sample DIR: record everything now, again if a decay pass ran meanwhile
record_sample() {
  local dir=$OUT/$1 before after from to
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
