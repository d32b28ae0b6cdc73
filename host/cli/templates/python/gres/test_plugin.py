"""gres/fpga through the exported contract functions, natively."""
import unittest

from componentize_py_types import Err
from wit_world.exports.gres import EnvChange_Set, EnvFlags, GresConfig, InfoField
from wit_world.imports import types

from plugin import Fpga
from slurm_plugin.gres import exports
from slurm_plugin.testkit import record


class FpgaTest(unittest.TestCase):
    def test_jobs_and_steps_see_their_count(self):
        _, gres = exports(Fpga)
        g = gres()
        g.init(record(GresConfig))
        allocation = record(types.GresAllocation, name="fpga", count=3)
        self.assertEqual(g.job_set_env(allocation, EnvFlags(0)),
                         [EnvChange_Set(types.KeyValue("SLURM_FPGA_COUNT", "3"))])
        self.assertEqual(g.step_set_env(None, EnvFlags(0)), [])
        # The defaults: no task environment, no devices, count-only info.
        self.assertEqual(g.task_set_env(None, EnvFlags(0)), [])
        self.assertEqual(g.get_devices(), [])
        with self.assertRaises(Err):
            g.job_info(allocation, InfoField.BITMAP)
        g.fini()


if __name__ == "__main__":
    unittest.main()
