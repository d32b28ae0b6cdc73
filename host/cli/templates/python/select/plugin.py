"""select/first_fit: whole nodes, first fit. A job gets the first candidate
nodes (its -w nodes first, then by index) that can hold it; run-now takes
only idle nodes, and a will-run answer starts the job at the first running
job's end that frees enough of them. slurm_plugin keeps the nodes, the
running jobs, nodeinfo, jobinfo and the state."""
from wit_world.exports.select import JobTestMode

from slurm_plugin.select import Plugin, no_fit


class FirstFit(Plugin):
    TYPE = "select/first_fit"
    NAME = "whole nodes, first fit"

    def job_test(self, c, r):
        candidates = c.candidates(r)

        def fit(time):
            free = [n for n in candidates if r.mode == JobTestMode.TEST_ONLY or c.free_at(n) <= time]
            return c.take_whole_nodes(r, free)

        if r.mode in (JobTestMode.RUN_NOW, JobTestMode.TEST_ONLY):
            nodes, start = fit(c.now), None
        else:
            nodes, start = next(((n, t) for t in c.end_times() if (n := fit(t))), (None, None))
        if nodes is None:
            raise no_fit(r.mode, r.job.job_id)
        return c.whole_nodes(r, nodes, start)
