"""gres/fpga: a count-only GRES (no device files): jobs and steps holding
some see `SLURM_FPGA_COUNT=<count on this node>`. Every other function keeps
slurm_plugin's default (records as gres.conf gives them, no devices)."""
from slurm_plugin.gres import Plugin, set_env


def count_env(allocation):
    return [] if allocation is None else [set_env("SLURM_FPGA_COUNT", str(allocation.count))]


class Fpga(Plugin):
    TYPE = "gres/fpga"
    NAME = "FPGA count"

    def job_set_env(self, allocation, flags):
        return count_env(allocation)

    def step_set_env(self, allocation, flags):
        return count_env(allocation)
