"""select/first_fit through the exported contract functions, natively: the
same adapter (`exports`) the component exports, with slurm_plugin's
testkit. Expectations: the policy's (first candidate nodes by index, -w
nodes first; will-run at the first end that frees enough) and Slurm's
job-test error codes."""
import dataclasses
import unittest

from componentize_py_types import Err
from wit_world.exports.select import JobTestFlags, JobTestMode, JobTestRequest, SelectConfig
from wit_world.imports import types

from plugin import FirstFit
from slurm_plugin.select import bitmap, exports, ones
from slurm_plugin.testkit import job, record

NOW = 1_700_000_000


def node(index):
    """An idle 4-CPU node with 4000 MB in partition 0."""
    return record(
        types.Node,
        index=index,
        name=f"n{index}",
        cpus=4,
        boards=1,
        sockets=1,
        cores_per_socket=4,
        threads_per_core=1,
        real_memory=4000,
        partitions=[0],
    )


def wants(job_id, nodes, **details):
    j = job(job_id)
    return dataclasses.replace(
        j, details=dataclasses.replace(j.details, min_nodes=nodes, min_cpus=1, **details)
    )


def request(j, mode):
    n = j.details.min_nodes
    return JobTestRequest(
        job=j,
        candidates=bitmap(3, range(3)),
        min_nodes=n,
        max_nodes=n,
        req_nodes=n,
        mode=mode,
        flags=JobTestFlags(0),
        preemptee_candidates=[],
        excluded_cores=None,
    )


class FirstFitTest(unittest.TestCase):
    def test_first_fit_whole_nodes_and_will_run_from_end_times(self):
        world, select = exports(FirstFit, clock=lambda: NOW)
        self.assertEqual(world().describe().plugin_type, "select/first_fit")
        s = select()
        s.init(record(SelectConfig))
        s.node_init([node(i) for i in range(3)])

        def test(j, mode):
            try:
                r = s.job_test(request(j, mode))
            except Err as e:
                return e.value.code
            return ones(r.resources.nodes), r.start_time

        # An idle cluster: the first two nodes, whole.
        first = wants(1, 2)
        placed = s.job_test(request(first, JobTestMode.RUN_NOW)).resources
        self.assertEqual(placed.ncpus, 8)
        first = dataclasses.replace(
            first, state=types.JobState.RUNNING, end_time=NOW + 100, resources=placed
        )
        s.job_begin(first)
        self.assertEqual(s.node_nodeinfo(0).alloc_cpus, 4)
        # Two more nodes: busy now (ESLURM_NODES_BUSY), possible at all, and
        # at job 1's end.
        second = wants(2, 2)
        self.assertEqual(test(second, JobTestMode.RUN_NOW), 2016)
        self.assertEqual(test(second, JobTestMode.TEST_ONLY), ([0, 1], None))
        self.assertEqual(test(second, JobTestMode.WILL_RUN), ([0, 1], NOW + 100))
        # One node: the idle one now; -w n0 only when job 1 ends.
        self.assertEqual(test(wants(3, 1), JobTestMode.RUN_NOW), ([2], None))
        pinned = wants(4, 1, required_nodes=bitmap(3, [0]))
        self.assertEqual(test(pinned, JobTestMode.WILL_RUN), ([0], NOW + 100))
        # Four nodes never fit on three (ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE).
        self.assertEqual(test(wants(5, 4), JobTestMode.TEST_ONLY), 2014)
        # The state round-trips; garbage is refused (EINVAL).
        s.state_restore(s.state_save())
        with self.assertRaises(Err) as refused:
            s.state_restore(b"garbage")
        self.assertEqual(refused.exception.value.code, 22)
        # Job 1 ends: job 2 runs now on the first two nodes.
        s.job_fini(first)
        self.assertEqual(test(second, JobTestMode.RUN_NOW), ([0, 1], None))
        s.fini()


if __name__ == "__main__":
    unittest.main()
