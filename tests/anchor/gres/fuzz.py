#!/usr/bin/env python3
"""fuzz.py -- draws random GPU and MPS jobs, with steps, for record.sh's gres cases.

The differential fuzzing of issue 30 for gres/gpu and gres/mps: instead of cases someone chose by
hand, record.sh (with FUZZ_SEED set) records the environment real Slurm gives the jobs, steps and
tasks this script draws from a fixed seed, and tests/gres_anchor.rs replays the recording through
the bundled plugins.

    python3 tests/anchor/gres/fuzz.py --seed 1 --cases 60

prints one case a line, `<name>|<sbatch options>|<step options>|<holder's sbatch options>`
(record.sh's CASES form), for the anchor's `big` partition (n[1-4]: 8 CPUs, gpu:2 and mps:200,
100 shares on each GPU).

What it draws: one or two nodes (`-N`), a task count that is a multiple of the node count (the
replay places tasks in blocks of equal size, as srun's default distribution does then), and one
request: `--gres=gpu:N`, `--gpus=N` (a multiple of the node count), `--gpus-per-node=N`,
`--gpus-per-task=N` or `--gres=mps:N` (1-100 shares: 22.05 takes a job's shares on a node from one
GPU). The step inside it: none (it inherits the job's GRES), `--gres=gpu:N` up to the job's GPUs
per node, or `--gres=mps:N` up to the job's shares. Sometimes a holder job on n1 first (a GPU or
some MPS shares), with the case on n1 too, so the case gets a device other than the first or waits
(recorded as pending). Every other case fits the idle partition.

Reproducibility: the cases depend only on the seed and the count; random draws use only
random.Random(seed).random() (Mersenne Twister, the same in every Python 3).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from draw import Draw  # noqa: E402  (tests/anchor/draw.py)


def case(d):
    """(sbatch words, step words, holder words)."""
    holder = []
    if d.chance(0.2):
        holder = ["-n1", "-w", "n1", d.pick(["--gres=gpu:1", f"--gres=mps:{d.int(10, 100)}"])]
        nodes = 1
    else:
        nodes = d.pick([1, 1, 2])
    tasks = nodes * d.int(1, 2)
    words = [f"-N{nodes}", f"-n{tasks}"] + (["-w", "n1"] if holder else [])
    kind = d.weighted([(3, "gres"), (2, "gpus"), (2, "per-node"), (2, "per-task"), (3, "mps")])
    per_node_gpus = 0
    shares = 0
    if kind == "gres":
        per_node_gpus = d.int(1, 2)
        words.append(f"--gres=gpu:{per_node_gpus}")
    elif kind == "gpus":
        per_node_gpus = d.int(1, 2)
        words.append(f"--gpus={per_node_gpus * nodes}")
    elif kind == "per-node":
        per_node_gpus = d.int(1, 2)
        words.append(f"--gpus-per-node={per_node_gpus}")
    elif kind == "per-task":
        per_task = 1 if tasks // nodes == 2 else d.int(1, 2)
        per_node_gpus = per_task * (tasks // nodes)
        words.append(f"--gpus-per-task={per_task}")
    else:
        shares = d.int(1, 100)
        words.append(f"--gres=mps:{shares}")
    step = []
    if per_node_gpus and kind != "per-task" and d.chance(0.5):
        step = [f"--gres=gpu:{d.int(1, per_node_gpus)}"]
    elif shares and d.chance(0.5):
        step = [f"--gres=mps:{d.int(1, shares)}"]
    return words, step, holder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--cases", type=int, default=60)
    args = parser.parse_args()
    d = Draw(args.seed)
    for i in range(args.cases):
        words, step, holder = case(d)
        print(f"f{i + 1:03}|{' '.join(words)}|{' '.join(step)}|{' '.join(holder)}")


if __name__ == "__main__":
    main()
