#!/usr/bin/env python3
"""fuzz.py -- draws a random priority stream for record.sh: weights and flags, an association
tree, usage and a queue.

The differential fuzzing of issue 30 for priority/multifactor: instead of the stream someone
wrote by hand (stream.sh), record.sh (with FUZZ_SEED set) records what real Slurm computes for a
stream this script draws from a fixed seed, and tests/priority_anchor.rs replays the recording
through the bundled multifactor.

    python3 tests/anchor/priority/fuzz.py --seed 1

prints bash that record.sh sources after stream.sh: FUZZ_EXTRA_CONF (slurm.conf lines) and the
three bodies stream.sh's stream_tree, stream_usage and stream_queue run (stream_tree_body,
stream_usage_body, stream_queue_body), in stream.sh's own helpers (`sam`, `submit`, `queue`).

What it draws:
  - configuration: each PriorityWeight* (age, fair-share, job size, partition, QOS, association,
    sometimes 0), PriorityFavorSmall, and PriorityFlags (none, or one or two of NO_FAIR_TREE,
    DEPTH_OBLIVIOUS, SMALL_RELATIVE_TO_TIME, NO_NORMAL_ALL, NO_NORMAL_PART, MAX_TRES,
    ACCRUE_ALWAYS; DEPTH_OBLIVIOUS and NO_FAIR_TREE are the classic algorithm, so never with
    each other). INCR_ONLY is left out: a priority that only rises depends on every earlier
    pass, which the recording does not hold;
  - the tree: setup.sh's teamA and teamB get new FairShare and Priority values; 3 to 6 more
    accounts hang under root or any account drawn before (FairShare 1-60 or `parent`, a
    Priority or none); each of the six users gets one or two associations among them; the
    blockers' `ops` account (a drawn FairShare) and its user opsbot;
  - usage: 4 to 8 jobs of random associations, partitions and sizes, 5-25 s each;
  - the queue: 14 to 22 competing jobs (partition big, hw, or both as `big,hw`: its first
    listed partition is the one Slurm's scheduler tries last, so its part_ptr stays the first
    and the recording says which partition the priority is for; sizes, -N, QOS, nice, a GPU,
    memory, site factor, an explicit priority, held and not-yet-eligible jobs), the second
    part submitted 20 s after the first.

Reproducibility: the stream depends only on the seed; random draws use only
random.Random(seed).random() (Mersenne Twister, the same in every Python 3).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from draw import Draw  # noqa: E402  (tests/anchor/draw.py)

USERS = ["alice", "bob", "carol", "dave", "erin", "frank"]
FLAGS = [
    "NO_FAIR_TREE",
    "DEPTH_OBLIVIOUS",
    "SMALL_RELATIVE_TO_TIME",
    "NO_NORMAL_ALL",
    "NO_NORMAL_PART",
    "MAX_TRES",
    "ACCRUE_ALWAYS",
]
CLASSIC = {"NO_FAIR_TREE", "DEPTH_OBLIVIOUS"}


def config(d):
    weight = lambda hi: 0 if d.chance(0.15) else d.int(1, hi)  # noqa: E731
    lines = [
        f"PriorityWeightAge={weight(2000)}",
        f"PriorityWeightFairshare={weight(5000)}",
        f"PriorityWeightJobSize={weight(2000)}",
        f"PriorityWeightPartition={weight(2000)}",
        f"PriorityWeightQOS={weight(2000)}",
        f"PriorityWeightAssoc={weight(1000)}",
        f"PriorityFavorSmall={d.pick(['YES', 'NO'])}",
    ]
    flags = []
    for _ in range(d.weighted([(3, 0), (4, 1), (2, 2)])):
        flag = d.pick(FLAGS)
        if flag in flags or (flag in CLASSIC and CLASSIC & set(flags)):
            continue
        flags.append(flag)
    if flags:
        lines.append("PriorityFlags=" + ",".join(flags))
    return lines


def tree(d):
    """sacctmgr commands, and the (user, account) associations they create."""
    commands = []
    for team in ["teamA", "teamB"]:
        commands.append(
            f"sam modify account where name={team} set FairShare={d.int(1, 60)} "
            f"Priority={d.int(0, 30)}"
        )
    accounts = ["teamA", "teamB"]
    for i in range(d.int(3, 6)):
        name = f"acct{i + 1}"
        parent = d.pick(["root"] + accounts)
        share = "parent" if parent != "root" and d.chance(0.15) else str(d.int(1, 60))
        line = f"sam add account {name} Parent={parent} FairShare={share} Cluster=anchor"
        if d.chance(0.5):
            line += f" Priority={d.int(0, 30)}"
        commands.append(line)
        accounts.append(name)
    # setup.sh made alice (teamA), bob (teamB) and root (teamA)
    assocs = [("alice", "teamA"), ("bob", "teamB")]
    for user in USERS:
        for _ in range(d.int(1, 2)):
            account = d.pick(accounts)
            if (user, account) in assocs:
                continue
            share = "parent" if d.chance(0.1) else str(d.int(1, 20))
            line = f"sam add user {user} Account={account} FairShare={share}"
            if d.chance(0.4):
                line += f" Priority={d.int(0, 30)}"
            commands.append(line)
            assocs.append((user, account))
    # the blockers' account and user (stream.sh's stream_usage fills the nodes with them)
    commands.append(f"sam add account ops Parent=root FairShare={d.int(1, 10)} Cluster=anchor")
    commands.append("sam add user opsbot Account=ops FairShare=1")
    return commands, assocs


def size(d, partition):
    """-N/-n words for a job on `partition` (big: 4 nodes x 8 CPUs; hw: 2 nodes x 2 CPUs)."""
    if partition == "hw":
        nodes = d.weighted([(4, 0), (1, 2)])
        tasks = d.int(max(1, nodes), 2 * max(1, nodes))
    else:
        nodes = d.weighted([(5, 0), (1, 1), (1, 2)])
        tasks = d.int(max(1, nodes), 8 * max(1, nodes))
    return ([f"-N{nodes}"] if nodes else []) + [f"-n{tasks}"]


def usage(d, assocs):
    commands = []
    for _ in range(d.int(4, 8)):
        user, account = d.pick(assocs)
        partition = d.pick(["big", "big", "hw"])
        words = ["-p", partition] + size(d, partition)
        commands.append(
            f"submit {user} {account} use {' '.join(words)} --wrap 'sleep {d.int(5, 25)}' >/dev/null"
        )
    return commands


def job(d, assocs, label):
    user, account = d.pick(assocs + [("root", "teamA")])
    partition = d.weighted([(6, "big"), (3, "hw"), (1, "big,hw")])
    # a job in both partitions is sized to fit hw, the smaller
    words = ["-p", partition] + size(d, "hw" if "hw" in partition else "big")
    update = ""
    if d.chance(0.3):
        words.append(f"--qos={d.pick(['high', 'low', 'normal'])}")
    if d.chance(0.15):
        words.append(f"--nice={d.int(1, 300)}")
    elif d.chance(0.1):
        update = f"Nice=-{d.int(1, 100)}"
    if partition == "big" and d.chance(0.15):
        words.append(f"--gres=gpu:{d.int(1, 2)}")
    if d.chance(0.2):
        # per node: big nodes have 4000 MB, hw nodes 2000 MB
        words.append(f"--mem={d.pick([500, 1000, 2000] + ([3000] if partition == 'big' else []))}")
    if not update and d.chance(0.08):
        update = f"SiteFactor={d.int(-200, 500)}"
    elif not update and d.chance(0.05):
        update = f"Priority={d.int(100, 5000)}"
    if d.chance(0.06):
        words.append("--hold")
    elif d.chance(0.06):
        words.append("--begin=now+3600")
    return f"queue {user} {account} {label} \"{update}\" {' '.join(words)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    args = parser.parse_args()
    d = Draw(args.seed)
    conf = config(d)
    tree_commands, assocs = tree(d)
    usage_commands = usage(d, assocs)
    first = [job(d, assocs, f"q{i + 1}") for i in range(d.int(10, 16))]
    later = [job(d, assocs, f"q{len(first) + i + 1}") for i in range(d.int(4, 6))]

    out = [f"# python3 tests/anchor/priority/fuzz.py --seed {args.seed}"]
    out.append('FUZZ_EXTRA_CONF="' + "\n".join(conf) + '"')
    out.append("stream_tree_body() {")
    out += [f"  {c}" for c in tree_commands]
    out.append("}")
    out.append("stream_usage_body() {")
    out += [f"  {c}" for c in usage_commands]
    out.append("}")
    out.append("stream_queue_body() {")
    out += [f"  {c}" for c in first]
    out.append('  say "waiting 20 s so that later submissions are younger"')
    out.append("  sleep 20")
    out += [f"  {c}" for c in later]
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
