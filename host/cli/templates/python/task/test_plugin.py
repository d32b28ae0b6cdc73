"""task/one_cpu through the exported contract functions, natively, on a
stand-in for the host's capabilities (a node of 2 cores x 2 threads, CPUs
numbered core by core: core c holds CPUs 2c and 2c+1, so the first thread
of core 1 is CPU 2)."""
import unittest
from unittest import mock

from componentize_py_types import Err
from wit_world.exports.task import BatchRequest, TaskConfig
from wit_world.imports import cpuset, topology, types

from plugin import OneCpu
from slurm_plugin.task import bitmap, exports, ones
from slurm_plugin.testkit import record

LAYOUT = topology.CpuLayout(sockets=1, cores_per_socket=2, threads_per_core=2,
                            block_map=[0, 1, 2, 3], numa_node_of_cpu=[0] * 4)


def step(cores):
    return record(types.Step, job_id=5, node_name="n1", local_tasks=1, total_tasks=1,
                  cpus_per_task=1, cores=bitmap(2, cores))


class OneCpuTest(unittest.TestCase):
    def test_each_task_gets_the_first_thread_of_a_step_core_in_turn(self):
        world, task = exports(OneCpu)
        self.assertEqual([c.name for c in world().describe().required_capabilities],
                         ["TOPOLOGY", "CPUSET"])
        t = task()
        t.init(record(TaskConfig, node_name="n1"))
        bound = []
        with mock.patch.object(topology, "read_layout", lambda: LAYOUT), \
                mock.patch.object(cpuset, "bind", lambda pid, cpus: bound.append((pid, ones(cpus)))):
            t.pre_launch_priv(step([1]), types.Task(local_id=0, global_id=0, pid=100))
            t.pre_launch_priv(step([1]), types.Task(local_id=1, global_id=1, pid=101))
        self.assertEqual(bound, [(100, [2]), (101, [2])])

        # Without the cpuset grant the binding fails, naming the capability.
        def denied(pid, cpus):
            raise Err(types.CapabilityError_Denied(types.Capability.CPUSET))

        with mock.patch.object(topology, "read_layout", lambda: LAYOUT), \
                mock.patch.object(cpuset, "bind", denied):
            with self.assertRaises(Err) as e:
                t.pre_launch_priv(step([0]), types.Task(local_id=0, global_id=0, pid=102))
        self.assertEqual(e.exception.value.message, "capability cpuset denied (not granted)")

        # task/none's defaults: the binding as requested.
        binding = t.slurmd_batch_request(record(BatchRequest, cpu_bind_type=4, cpu_bind="0x3"))
        self.assertEqual((binding.cpu_bind_type, binding.cpu_bind), (4, "0x3"))
        t.fini()


if __name__ == "__main__":
    unittest.main()
