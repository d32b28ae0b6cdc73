"""priority/small_first: small jobs first, weighted by the partition's
PriorityJobFactor. Priorities are set at submission; every other function
keeps slurm_plugin's default (priority/basic's)."""
from slurm_plugin.priority import Plugin


class SmallFirst(Plugin):
    TYPE = "priority/small_first"
    NAME = "small jobs first, by partition"

    def __init__(self, config):
        self.job_factor = [p.priority_job_factor for p in config.partitions]

    def set(self, last_prio, job):
        first = job.partitions[0] if job.partitions else None
        factor = self.job_factor[first] if first is not None and first < len(self.job_factor) else 1
        size = 1_000_000 // (1 + job.details.min_cpus)
        return min(size * max(factor, 1), 0xFFFFFFFF)
