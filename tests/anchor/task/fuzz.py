#!/usr/bin/env python3
"""fuzz.py -- draws random srun shapes for record.sh's task cases.

The differential fuzzing of issue 30 for task/affinity: instead of cases someone chose by hand,
record.sh (with FUZZ_SEED set) records what real Slurm binds for cases this script draws from a
fixed seed, and tests/task_anchor.rs replays the recording through the bundled task/affinity.

    python3 tests/anchor/task/fuzz.py --seed 1 --cases 120

prints one case a line, `<name>|<srun options>` (record.sh's CASES form), for the anchor's `hw`
partition (h[1-2]: 1 socket x 2 cores x 1 thread each, this machine's shape, so masks are real).

What it draws, each option present or not: `-N` (1 or 2), `-n` (as many tasks as the nodes'
CPUs hold at `-c`, and sometimes up to 8 with `--overcommit`), `-c` (1 or 2), `--exclusive`, `-m` (every node and socket
level srun takes: block, cyclic, plane is left out), and `--cpu-bind=verbose` with one of the
forms (none, rank, cores, threads, sockets, ldoms, map_cpu and mask_cpu lists of CPU ids 0-1,
sometimes an id outside the allocation). Every case binds verbosely: the recording needs the
verbose lines to place tasks. Every shape fits the partition, so each case has a job; a
launch slurmd refuses (a map or mask outside the step's CPUs) is recorded with its error.

Reproducibility: the cases depend only on the seed and the count; random draws use only
random.Random(seed).random() (Mersenne Twister, the same in every Python 3).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from draw import Draw  # noqa: E402  (tests/anchor/draw.py)


LEVELS = ["block", "cyclic"]
SOCKET_LEVELS = ["block", "cyclic", "fcyclic"]


def cpu_list(d, tasks):
    """A map_cpu list: one CPU id per task, mostly within 0-1."""
    return ",".join(str(d.pick([0, 1, 0, 1, 2])) for _ in range(d.int(1, max(1, tasks))))


def mask_list(d, tasks):
    """A mask_cpu list: one hex mask per task, mostly within 0x1-0x3."""
    return ",".join(d.pick(["0x1", "0x2", "0x3", "0x1", "0x2", "0x4"]) for _ in range(d.int(1, max(1, tasks))))


def case(d):
    """One srun shape, as words."""
    words = []
    nodes = d.pick([None, None, 1, 2])
    overcommit = d.chance(0.1)
    cpus_per_task = d.int(1, 2) if d.chance(0.3) else None
    # the CPUs the shape may ask for: 2 a node, on one node with -N1
    room = 2 if nodes == 1 else 4
    if overcommit:
        tasks = d.int(1, 8)
    else:
        tasks = d.int(1, room // (cpus_per_task or 1))
    if nodes is not None:
        words.append(f"-N{nodes}")
    words.append(f"-n{tasks}")
    if cpus_per_task is not None:
        words.append(f"-c{cpus_per_task}")
    if overcommit:
        words.append("--overcommit")
    if d.chance(0.15):
        words.append("--exclusive")
    if d.chance(0.5):
        dist = d.pick(LEVELS)
        if d.chance(0.6):
            dist += ":" + d.pick(SOCKET_LEVELS)
        words += ["-m", dist]
    form = d.pick(["", "none", "rank", "cores", "threads", "sockets", "ldoms", "map", "mask"])
    if form == "map":
        form = "map_cpu:" + cpu_list(d, tasks)
    elif form == "mask":
        form = "mask_cpu:" + mask_list(d, tasks)
    words.append("--cpu-bind=verbose" + ("," + form if form else ""))
    return words


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--cases", type=int, default=120)
    args = parser.parse_args()
    d = Draw(args.seed)
    for i in range(1, args.cases + 1):
        print(f"fuzz{i:03}|{' '.join(case(d))}")


if __name__ == "__main__":
    main()
