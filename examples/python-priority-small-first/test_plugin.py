"""priority/small_first through the exported contract functions, natively:
the same adapter (`exports`) the component exports, with slurm_plugin's
testkit. Expectations: the policy's formula, 1,000,000 / (1 + min_cpus)
times the partition's PriorityJobFactor; priority/basic's defaults."""
import dataclasses
import unittest

from componentize_py_types import Err
from wit_world.exports.priority import PriorityConfig
from wit_world.imports import types

from plugin import SmallFirst
from slurm_plugin.priority import exports
from slurm_plugin.testkit import job, partition, record


def config():
    return record(
        PriorityConfig,
        partitions=[partition(0, "big"), partition(1, "hw", priority_job_factor=2)],
        partition_tres=[[], []],
        cluster_cpus=32,
        cluster_nodes=4,
    )


def with_cpus(j, cpus):
    return dataclasses.replace(j, details=dataclasses.replace(j.details, min_cpus=cpus))


class SmallFirstTest(unittest.TestCase):
    def test_small_jobs_first_weighted_by_partition(self):
        world, priority = exports(SmallFirst)
        self.assertEqual(world().describe().plugin_type, "priority/small_first")
        p = priority()
        p.init(config())
        self.assertEqual(p.set(0, with_cpus(job(1), 1)), 500_000)
        self.assertEqual(p.set(0, with_cpus(job(2), 7)), 125_000)
        self.assertEqual(p.set(0, with_cpus(job(3, partitions=[1]), 1)), 1_000_000)
        # A directly set priority is kept, and priority/basic's defaults:
        # no periodic recomputation, no usage, no state.
        self.assertEqual(p.set(0, job(4, direct_set_priority=True, priority=999)), 999)
        self.assertEqual(p.calculate([], [1, 2]), [])
        self.assertEqual(p.association_usages(), [])
        self.assertEqual(p.state_save(), b"")
        with self.assertRaises(Err) as refused:
            p.state_restore(b"not a state")
        self.assertEqual(refused.exception.value.code, 22)
        p.fini()
        with self.assertRaises(Err) as before_init:
            p.set(0, job(1))
        self.assertIsInstance(before_init.exception.value, types.PluginError)
        self.assertEqual(before_init.exception.value.message, "priority/small_first: called before init")


if __name__ == "__main__":
    unittest.main()
