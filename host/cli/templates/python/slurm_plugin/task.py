"""The task kind: `Plugin` with task/none's defaults, `exports`, and the
host capabilities a task plugin may call (`cpu_layout`, `bind_cpus`).

Only `__init__(config)` (the contract's `init`) is required; every other
function has the default of Slurm's task/none
(`src/plugins/task/none/task_none.c`) and the Rust SDK's `task::Plugin`:
requests keep the binding they asked for, every hook succeeds doing
nothing.
"""

from componentize_py_types import Err
from wit_world.exports.task import CpuBinding
from wit_world.imports import cpuset, topology, types

from . import SLURM_ERROR, SlurmError, State, identity, world


class Plugin:
    #: `plugin_type`, `task/<name>`.
    TYPE = "task/unnamed"
    #: `plugin_name`, a human description.
    NAME = ""
    #: Capabilities the plugin cannot work without, by the contract's names
    #: (`"topology"`, `"cpuset"`): the host refuses to load it where one is
    #: not granted.
    REQUIRED_CAPABILITIES = ()

    @classmethod
    def identity(cls):
        return identity(cls.TYPE, cls.NAME, cls.REQUIRED_CAPABILITIES)

    def __init__(self, config):
        """`init` with the `TaskConfig`; raise `SlurmError` to refuse."""

    def fini(self):
        pass

    def slurmd_batch_request(self, request):
        """The batch script's binding: as requested."""
        return binding_as_requested(request.cpu_bind_type, request.cpu_bind)

    def slurmd_launch_request(self, request):
        """A step's binding on this node: as requested."""
        return binding_as_requested(request.cpu_bind_type, request.cpu_bind)

    def slurmd_reserve_resources(self, request):
        pass

    def slurmd_suspend_job(self, job_id):
        pass

    def slurmd_resume_job(self, job_id):
        pass

    def slurmd_release_resources(self, job_id):
        pass

    def pre_setuid(self, step):
        pass

    def pre_launch_priv(self, step, task):
        """Privileged, per task, after its fork: where a task is bound."""

    def pre_launch(self, step, task):
        pass

    def post_term(self, step, task):
        pass

    def post_step(self, step):
        pass

    def add_pid(self, pid):
        pass

    def update_mem_limit(self, step, job_mem, step_mem):
        pass


def binding_as_requested(cpu_bind_type, cpu_bind):
    """The binding a request asked for, unchanged (task/none's answer)."""
    return CpuBinding(cpu_bind_type=cpu_bind_type, cpu_bind=cpu_bind, messages=[], env=[])


def ones(bitmap):
    """The set bits of a contract bitmap, in order."""
    return [i for i in range(bitmap.len) if bitmap.words[i // 64] >> (i % 64) & 1]


def bitmap(length, bits):
    """A contract bitmap of `length` bits with `bits` set."""
    words = [0] * ((length + 63) // 64)
    for i in bits:
        words[i // 64] |= 1 << (i % 64)
    return types.Bitmap(len=length, words=words)


def _capability(f):
    """`f()`, a capability call; its `capability-error` as a `SlurmError`
    (`SLURM_ERROR` with the reason, as the Rust SDK's `Error::from`)."""
    try:
        return f()
    except Err as e:
        why = e.value
        if isinstance(why, types.CapabilityError_Denied):
            text = f"capability {why.value.name.lower().replace('_', '-')} denied (not granted)"
        elif isinstance(why, types.CapabilityError_Unavailable):
            text = f"capability unavailable: {why.value}"
        else:
            text = f"capability call failed: {why.value}"
        raise SlurmError(SLURM_ERROR, text) from None


def cpu_layout():
    """The node's CPU layout (the `topology` capability)."""
    return _capability(topology.read_layout)


def bind_cpus(pid, cpus):
    """Binds `pid` to the abstract CPUs `cpus` (the `cpuset` capability)."""
    _capability(lambda: cpuset.bind(pid, bitmap(max(cpus, default=-1) + 1, cpus)))


def exports(cls):
    """`(WitWorld, Task)`: the classes componentize-py exports."""
    state = State(cls)

    class Task:
        def init(self, config):
            state.init(config)

        def fini(self):
            state.fini()

        def slurmd_batch_request(self, request):
            return state.call(lambda p: p.slurmd_batch_request(request))

        def slurmd_launch_request(self, request):
            return state.call(lambda p: p.slurmd_launch_request(request))

        def slurmd_reserve_resources(self, request):
            state.call(lambda p: p.slurmd_reserve_resources(request))

        def slurmd_suspend_job(self, job_id):
            state.call(lambda p: p.slurmd_suspend_job(job_id))

        def slurmd_resume_job(self, job_id):
            state.call(lambda p: p.slurmd_resume_job(job_id))

        def slurmd_release_resources(self, job_id):
            state.call(lambda p: p.slurmd_release_resources(job_id))

        def pre_setuid(self, step):
            state.call(lambda p: p.pre_setuid(step))

        def pre_launch_priv(self, step, task):
            state.call(lambda p: p.pre_launch_priv(step, task))

        def pre_launch(self, step, task):
            state.call(lambda p: p.pre_launch(step, task))

        def post_term(self, step, task):
            state.call(lambda p: p.post_term(step, task))

        def post_step(self, step):
            state.call(lambda p: p.post_step(step))

        def add_pid(self, pid):
            state.call(lambda p: p.add_pid(pid))

        def update_mem_limit(self, step, job_mem, step_mem):
            state.call(lambda p: p.update_mem_limit(step, job_mem, step_mem))

    return world(cls), Task
