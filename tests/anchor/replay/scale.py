#!/usr/bin/env python3
"""Scales a window of a Standard Workload Format trace down to a few minutes of sbatch jobs.

Usage: scale.py TRACE.swf FIRST COUNT SPAN_SECONDS > jobs.txt

Writes one line per job, in submit order: `<submit offset s> <nodes> <tasks> <limit min> <run s>`,
for the COUNT jobs with a positive run time from the FIRST-th record on (counting from 0):

- submit offsets: the window's submit times squeezed linearly into [0, SPAN_SECONDS], rounded;
- tasks: the requested processors (else the allocated ones) times 16/240, rounded up (the trace's
  240 processors become half of the anchor's 32 CPUs of partition big); nodes: tasks / 8 rounded
  up (eight CPUs a node), given as -N so sacct's ReqNodes says what was asked;
- run time: 3 * r^0.3 seconds (r the trace's run time), at least 3: the order of run times is kept
  while hours become minutes and seconds stay seconds;
- time limit: the trace's requested time mapped the same way, in whole minutes (Slurm's unit),
  and at least 10 s above the run time, so that no job is killed at its limit.
"""
import math
import sys


def main():
    path, first, count, span = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rows = []
    with open(path, encoding="utf-8") as trace:
        for line in trace:
            fields = line.split()
            if not fields or line.startswith(";"):
                continue
            rows.append([int(float(f)) for f in fields[:9]])
    window = [r for r in rows[first:] if r[3] > 0][:count]
    if len(window) < count:
        sys.exit(f"scale.py: only {len(window)} jobs with a run time from record {first}")
    t0, t1 = window[0][1], window[-1][1]
    for _, submit, _, run, alloc, _, _, req_procs, req_time in window:
        procs = req_procs if req_procs > 0 else alloc
        tasks = min(32, max(1, math.ceil(procs * 16 / 240)))
        nodes = math.ceil(tasks / 8)
        seconds = max(3, round(3 * run**0.3))
        limit = max(math.ceil(3 * max(req_time, 1) ** 0.3 / 60), math.ceil((seconds + 10) / 60))
        offset = round((submit - t0) * span / max(t1 - t0, 1))
        print(offset, nodes, tasks, limit, seconds)


main()
