"""The gres kind: `Plugin` with the defaults of a GRES without devices or
environment (a count-only GRES such as Slurm's gres/nic), and `exports`.

Only `__init__(config)` (the contract's `init`) is required. Defaults, as
the Rust SDK's `gres::Plugin`: gres.conf records kept as given, no
environment, no devices, nothing passed to slurmstepd, `job-info` and
`step-info` answered from the allocation (as `gres_get_job_info` of
Slurm's gres.c), no epilog environment.
"""

from wit_world.exports.gres import (
    EnvChange_Set,
    InfoField,
    InfoValue_Count,
    InfoValue_Devices,
    NodeConfigResult,
)
from wit_world.imports import types

from . import EINVAL, SlurmError, State, identity, world


class Plugin:
    #: `plugin_type`, `gres/<name>`: the GRES name the plugin serves.
    TYPE = "gres/unnamed"
    #: `plugin_name`, a human description.
    NAME = ""
    REQUIRED_CAPABILITIES = ()

    @classmethod
    def identity(cls):
        return identity(cls.TYPE, cls.NAME, cls.REQUIRED_CAPABILITIES)

    def __init__(self, config):
        """`init` with the `GresConfig`; raise `SlurmError` to refuse."""

    def fini(self):
        pass

    def node_config_load(self, records, node):
        """The node's gres.conf records, validated and merged: as given."""
        return NodeConfigResult(records=records, warnings=[])

    def job_set_env(self, allocation, flags):
        """Environment edits (`EnvChange_Set`/`EnvChange_Unset`): none."""
        return []

    def step_set_env(self, allocation, flags):
        return []

    def task_set_env(self, allocation, flags):
        return []

    def send_stepd(self):
        return b""

    def recv_stepd(self, data):
        pass

    @staticmethod
    def job_info(allocation, field):
        return allocation_info(allocation, field)

    @staticmethod
    def step_info(allocation, field):
        return allocation_info(allocation, field)

    def get_devices(self):
        return []

    @staticmethod
    def step_hardware_init(usable, tres_freq):
        pass

    @staticmethod
    def step_hardware_fini():
        pass

    def step_context(self, step):
        pass


def set_env(key, value):
    """The edit that sets `key=value`."""
    return EnvChange_Set(types.KeyValue(key=key, value=value))


def allocation_info(allocation, field):
    """`job-info`/`step-info` from the allocation alone: the count, or the
    device bitmap (`EINVAL` for an allocation without one)."""
    if field == InfoField.COUNT:
        return InfoValue_Count(allocation.count)
    if allocation.devices is None:
        raise SlurmError(EINVAL, f"gres/{allocation.name} allocation has no device bitmap")
    return InfoValue_Devices(allocation.devices)


def exports(cls):
    """`(WitWorld, Gres)`: the classes componentize-py exports."""
    state = State(cls)

    class Gres:
        def init(self, config):
            state.init(config)

        def fini(self):
            state.fini()

        def node_config_load(self, records, node):
            return state.call(lambda p: p.node_config_load(records, node))

        def job_set_env(self, allocation, flags):
            return state.call(lambda p: p.job_set_env(allocation, flags))

        def step_set_env(self, allocation, flags):
            return state.call(lambda p: p.step_set_env(allocation, flags))

        def task_set_env(self, allocation, flags):
            return state.call(lambda p: p.task_set_env(allocation, flags))

        def send_stepd(self):
            return bytes(state.call(lambda p: p.send_stepd()))

        def recv_stepd(self, data):
            state.call(lambda p: p.recv_stepd(bytes(data)))

        # Stateless functions: callable at any time, as the contract says.
        def job_info(self, allocation, field):
            return State.guard(lambda: cls.job_info(allocation, field))

        def step_info(self, allocation, field):
            return State.guard(lambda: cls.step_info(allocation, field))

        def get_devices(self):
            return state.call(lambda p: p.get_devices())

        def step_hardware_init(self, usable, tres_freq):
            State.guard(lambda: cls.step_hardware_init(usable, tres_freq))

        def step_hardware_fini(self):
            State.guard(cls.step_hardware_fini)

        def epilog_build_env(self, job):
            """No epilog environment (the Rust SDK's `NoEpilog`)."""
            state.call(lambda p: None)
            return None

        def step_context(self, step):
            state.call(lambda p: p.step_context(step))

    return world(cls), Gres
