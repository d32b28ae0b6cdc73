#!/usr/bin/env python3
"""fuzz.py -- draws a random but valid stream of steps in record.sh's step language.

The differential fuzzing of issue 30: instead of a stream someone wrote by hand, record.sh's
`*-fuzz` configurations record what real Slurm does with a stream this script draws from a
fixed seed, and tests/select_anchor.rs replays the recording through the bundled plugins.

    python3 tests/anchor/select/fuzz.py --seed 1 --submits 500 --select cons_tres

prints one step a line (see record.sh: `submit <name> <options>`, `cancel <name>`,
`test-only <options>`, `sleep <seconds>`), for the anchor's `big` partition (n[1-4]: 2 sockets
x 2 cores x 2 threads = 8 CPUs, 4000 MB, gpu:2 and, under cons_tres, mps:200; DefMemPerCPU=250;
DefaultTime=5 min, MaxTime=60 min).

What it draws:
  * submits over the option set the bundled plugins support: task and node counts (`-n`, `-N`
    and `-N min-max`, `--ntasks-per-node`), `-c`, the memory forms (`--mem` in MB, `M` and `G`;
    `--mem-per-cpu`; `--mem-per-gpu`), `--exclusive`, `-w` and `-x` node lists, `--contiguous`,
    `--threads-per-core=1`, `--spread-job`, the GPU options (`--gres=gpu:N`, `--gpus-per-node`,
    `--gpus`, `--gpus-per-task`, `--cpus-per-gpu`), `--gres=mps:N` (cons_tres only: setup.sh
    configures mps only there) and time limits (`-t` in minutes and `h:mm:ss`). A few draws
    are out of bounds on purpose (more CPUs, memory or GPUs than a node has, a time over the
    partition's MaxTime), so refusals and partition-limit pendings are recorded too;
  * cancels of earlier jobs (record.sh records `not running` for one it cancelled pending);
  * `sleep` steps of 1-2 s (running jobs age: later start times in will-run answers move);
  * `test-only` probes drawn from the same option set.

Reproducibility: the stream depends only on the seed, the count and --select; random draws use
only random.Random(seed).random() (Mersenne Twister, the same in every Python 3). Nothing in the
stream depends on what Slurm answers: record.sh waits for each job to start or pend, and
cancels pending ones at once. No job may end by itself while the stream runs: every job is
cancelled at most LIFETIME submits after its own (record.sh takes 1.5-5 s a submit, so well
under the partition's DefaultTime of 5 minutes, the shortest time limit drawn).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import draw  # noqa: E402  (tests/anchor/draw.py)

NODES = ["n1", "n2", "n3", "n4"]
# every job is cancelled at most this many submits after its own submit
LIFETIME = 24


class Draw(draw.Draw):
    """The shared draws, and the anchor's nodes."""

    def nodes(self, count):
        """`count` distinct nodes, in node order."""
        pool = list(NODES)
        chosen = []
        for _ in range(count):
            chosen.append(pool.pop(int(self.rng.random() * len(pool))))
        return sorted(chosen)


def tasks(d):
    """A task count, mostly small."""
    return d.weighted([(30, 1), (20, 2), (10, 3), (12, 4), (6, 6), (8, 8),
                       (5, d.int(9, 16)), (3, 16), (2, d.int(17, 32)), (1, 33)])


def options(d, select):
    """One job's sbatch options (words), valid but for a few out-of-bounds draws."""
    o = []
    ntasks = None
    nodes_min = None
    shape = d.weighted([(35, "n"), (15, "N"), (10, "Nt"), (6, "Nr"), (20, "c"), (14, "none")])
    if shape == "n":
        ntasks = tasks(d)
        o.append(f"-n{ntasks}")
    elif shape == "N":
        nodes_min = d.weighted([(5, 1), (4, 2), (2, 3), (2, 4)])
        o.append(f"-N{nodes_min}")
        if d.chance(0.7):
            ntasks = nodes_min * d.weighted([(4, 1), (3, 2), (2, 4), (1, 3)]) \
                + (d.int(0, nodes_min - 1) if nodes_min > 1 else 0)
            o.append(f"-n{ntasks}")
    elif shape == "Nt":
        nodes_min = d.weighted([(4, 1), (4, 2), (2, 3), (2, 4)])
        per = d.weighted([(4, 1), (4, 2), (2, 3), (2, 4), (1, 8)])
        ntasks = nodes_min * per
        o += [f"-N{nodes_min}", f"--ntasks-per-node={per}"]
    elif shape == "Nr":
        nodes_min = d.int(1, 3)
        nodes_max = d.int(nodes_min + 1, 4)
        ntasks = d.int(nodes_min, 12)
        o += [f"-N{nodes_min}-{nodes_max}", f"-n{ntasks}"]
    elif shape == "c":
        cpus = d.weighted([(8, 2), (6, 3), (8, 4), (3, 5), (3, 6), (2, 7), (3, 8), (1, 9)])
        if d.chance(0.5):
            ntasks = d.weighted([(5, 1), (4, 2), (2, 3), (2, 4)])
            o.append(f"-n{ntasks}")
        o.append(f"-c{cpus}")

    # node lists: -w holds at most as many nodes as the job may use
    if d.chance(0.14):
        most = 4 if nodes_min is None else nodes_min
        if shape == "Nr":
            # slurmctld counts at most as many nodes as tasks
            most = min(nodes_max, ntasks)
        count = d.int(1, min(most, 3)) if nodes_min is None else d.int(1, most)
        o.append("-w " + ",".join(d.nodes(count)))
    elif d.chance(0.07):
        o.append("-x " + ",".join(d.nodes(d.int(1, 2))))

    # GPUs and MPS
    gpu = None
    if d.chance(0.25 if select == "cons_tres" else 0.08):
        kinds = [(4, "gres"), (2, "per_node"), (2, "gpus"), (2, "per_task"), (1, "gres3")]
        if select == "cons_tres":
            kinds.append((4, "mps"))
        gpu = d.weighted(kinds)
        if gpu == "gres":
            o.append(f"--gres=gpu:{d.int(1, 2)}")
        elif gpu == "gres3":
            o.append("--gres=gpu:3")
        elif gpu == "per_node":
            o.append(f"--gpus-per-node={d.int(1, 2)}")
        elif gpu == "gpus":
            o.append(f"--gpus={d.weighted([(4, 1), (3, 2), (2, 3), (2, 4)])}")
        elif gpu == "per_task" and ntasks is not None and ntasks > 8 and shape != "n":
            # as many tasks as GPUs at most; a node shape keeps its tasks, per node then
            o.append(f"--gpus-per-node={d.int(1, 2)}")
        elif gpu == "per_task":
            if ntasks is None or ntasks > 8:
                ntasks = d.int(nodes_min or 1, 4)
                o = [w for w in o if not w.startswith("-n")] + [f"-n{ntasks}"]
            o.append("--gpus-per-task=1")
        else:
            o.append(f"--gres=mps:{d.pick([10, 30, 50, 100, 100, 150, 200, 250])}")
        if gpu != "mps" and d.chance(0.1):
            o.append(f"--cpus-per-gpu={d.int(1, 4)}")

    # memory: the default (DefMemPerCPU), per node, per CPU, per GPU
    mem = d.weighted([(40, None), (30, "mem"), (25, "cpu"), (5, "gpu")])
    if mem == "gpu" and gpu in (None, "mps"):
        mem = "cpu"
    if mem == "mem":
        o.append("--mem=" + d.pick(["100", "200", "500", "800", "1000", "1500", "2000",
                                     "3000", "3500", "4000", "100M", "512M", "1G", "2G",
                                     "4500"]))
    elif mem == "cpu":
        o.append(f"--mem-per-cpu={d.pick([50, 100, 100, 150, 200, 250, 300, 500, 1000, 2000])}")
    elif mem == "gpu":
        o.append(f"--mem-per-gpu={d.pick([200, 500, 1000, 2000])}")

    if d.chance(0.06):
        o.append("--exclusive")
    if d.chance(0.05):
        o.append("--contiguous")
    if d.chance(0.03):
        o.append("--threads-per-core=1")
    if d.chance(0.03) and "--contiguous" not in o:
        o.append("--spread-job")
    if d.chance(0.35):
        o.append("-t " + d.weighted([(4, "10"), (3, "30"), (3, "60"), (2, "0:45:00"),
                                     (2, "1:00:00"), (1, "20"), (1, "90")]))
    # record.sh splits the options into words: `-w n1,n2` becomes two words
    return " ".join(o)


def stream(seed, submits, select):
    d = Draw(seed)
    steps = []
    live = []  # (name, submit number) of jobs not cancelled yet
    done = 0
    # how full the stream keeps the partition: a running-job target that drifts
    target = d.int(3, 10)
    while done < submits:
        # forced cancels: no job outlives LIFETIME submits (DefaultTime is 5 minutes)
        for name, at in list(live):
            if done - at >= LIFETIME:
                steps.append(f"cancel {name}")
                live.remove((name, at))
        if done % 40 == 0 and d.chance(0.5):
            target = d.int(2, 12)
        kind = d.weighted([(70, "submit"), (12, "test-only"), (3, "sleep"),
                           (max(0, len(live) - target) * 20 + 8, "cancel")])
        if kind == "cancel" and live:
            # older jobs first, mostly
            index = 0 if d.chance(0.4) else d.int(0, len(live) - 1)
            steps.append(f"cancel {live.pop(index)[0]}")
        elif kind == "test-only":
            steps.append(f"test-only {options(d, select)}")
        elif kind == "sleep":
            steps.append(f"sleep {d.int(1, 2)}")
        elif kind == "submit":
            done += 1
            name = f"f{done}"
            steps.append(f"submit {name} {options(d, select)}")
            live.append((name, done))
    for name, _ in live:
        steps.append(f"cancel {name}")
    return steps


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--submits", type=int, default=500)
    p.add_argument("--select", choices=["cons_tres", "linear"], required=True)
    a = p.parse_args()
    sys.stdout.write("\n".join(stream(a.seed, a.submits, a.select)) + "\n")


if __name__ == "__main__":
    main()
