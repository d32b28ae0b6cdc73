"""task/one_cpu: binds each task to one CPU, the first thread of the step's
cores taken in turn by the task's local id. Every other function keeps
slurm_plugin's default (task/none's)."""
from slurm_plugin.task import Plugin, bind_cpus, cpu_layout, ones


class OneCpu(Plugin):
    TYPE = "task/one_cpu"
    NAME = "one CPU per task"
    REQUIRED_CAPABILITIES = ("topology", "cpuset")

    def pre_launch_priv(self, step, task):
        cores = ones(step.cores)
        if not cores:
            return  # a step without cores here: nothing to bind to
        core = cores[task.local_id % len(cores)]
        layout = cpu_layout()
        bind_cpus(task.pid, [layout.block_map[core * layout.threads_per_core]])
