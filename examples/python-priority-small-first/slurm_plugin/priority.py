"""The priority kind: `Plugin` with priority/basic's defaults, and `exports`.

Only `__init__(config)` (the contract's `init`) and `set` are required;
every other function has the default of a plugin that computes priorities
at submission only and keeps no usage, as Slurm's priority/basic
(`src/plugins/priority/basic/priority_basic.c`) and the Rust SDK's
`priority::Plugin`.
"""

from wit_world.exports.priority import AssociationUsage

from . import EINVAL, SlurmError, State, check_u32, identity, world


class Plugin:
    #: `plugin_type`, `priority/<name>`.
    TYPE = "priority/unnamed"
    #: `plugin_name`, a human description.
    NAME = ""
    #: Capabilities the plugin cannot work without (priority plugins: none).
    REQUIRED_CAPABILITIES = ()

    @classmethod
    def identity(cls):
        return identity(cls.TYPE, cls.NAME, cls.REQUIRED_CAPABILITIES)

    def __init__(self, config):
        """`init` with the `PriorityConfig`; raise `SlurmError` to refuse."""

    def fini(self):
        """`fini`, before the plugin is dropped."""

    def set(self, last_prio, job):
        """The priority (1..=0xffffffff) of a new or re-prioritised job.
        A job whose priority was set directly keeps it whatever this
        returns (`exports` sees to that, as every Slurm priority plugin
        does); the plugin still sees the job."""
        raise NotImplementedError

    def reconfig(self, config, assoc_clear, running):
        pass

    def set_assoc_usage(self, assoc_id):
        """`sshare`'s figures of one association: zeros (no usage kept)."""
        return AssociationUsage(assoc_id, 0.0, 0.0, 0.0, 0.0, 0.0, None)

    def get_priority_factors_list(self, jobs, request, uid):
        """`sprio`'s rows: none, as priority/basic."""
        return []

    def job_end(self, job):
        pass

    def recover(self, boost, jobs):
        """What to add to the lowest priority, and new priorities by id."""
        return (0, [])

    def update_associations(self, updates):
        pass

    def update_qos(self, updates):
        pass

    def calculate(self, running, pending):
        """New priorities of pending jobs by id: none, so they stay what
        `set` gave."""
        return []

    def association_usages(self):
        return []

    def state_save(self):
        """Bytes to keep across a restart: none."""
        return b""

    def state_restore(self, data):
        """Accepts the empty state `state_save` writes, refuses anything
        else with `EINVAL` (never half-applied)."""
        if data:
            raise SlurmError(EINVAL, f"{self.TYPE}: keeps no state, refusing {len(data)} bytes")


def exports(cls):
    """`(WitWorld, Priority)`: the classes componentize-py exports, over
    one `cls` value kept between calls."""
    state = State(cls)

    class Priority:
        def init(self, config):
            state.init(config)

        def fini(self):
            state.fini()

        def set(self, last_prio, job):
            priority = state.call(lambda p: check_u32(f"{cls.TYPE}: set", p.set(last_prio, job)))
            return job.priority if job.direct_set_priority else priority

        def reconfig(self, config, assoc_clear, running):
            state.call(lambda p: p.reconfig(config, assoc_clear, running))

        def set_assoc_usage(self, assoc_id):
            return state.call(lambda p: p.set_assoc_usage(assoc_id))

        def get_priority_factors_list(self, jobs, request, uid):
            return state.call(lambda p: p.get_priority_factors_list(jobs, request, uid))

        def job_end(self, job):
            state.call(lambda p: p.job_end(job))

        def recover(self, boost, jobs):
            return state.call(lambda p: p.recover(boost, jobs))

        def update_associations(self, updates):
            state.call(lambda p: p.update_associations(updates))

        def update_qos(self, updates):
            state.call(lambda p: p.update_qos(updates))

        def calculate(self, running, pending):
            return state.call(lambda p: p.calculate(running, pending))

        def association_usages(self):
            return state.call(lambda p: p.association_usages())

        def state_save(self):
            return bytes(state.call(lambda p: p.state_save()))

        def state_restore(self, data):
            state.call(lambda p: p.state_restore(bytes(data)))

    return world(cls), Priority
