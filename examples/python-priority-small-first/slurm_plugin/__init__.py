"""slurm_plugin: the part of slurm-wasm's SDK a Python plugin needs.

A plugin is a class deriving from one kind's `Plugin` (`slurm_plugin.priority`,
`.task`, `.gres`): it writes only the functions its policy needs, and every
other one keeps the default of a Slurm plugin that does nothing there, as the
Rust SDK's traits do. `app.py` exports the class with the kind's `exports`;
componentize-py builds the component from it against the `wit/` package.

Errors: raise `SlurmError(code, message)` (Slurm's codes: `SLURM_ERROR`, an
`ESLURM_*` value or an errno value such as `EINVAL`); the host sees the
contract's `plugin-error`. Any other exception is a fault: the host stops
calling the plugin, as it does for a trap.

Every module a plugin uses must be imported at the top of a file:
componentize-py keeps the modules imported while it builds the component,
and the component has no file system to import others from at run time.
"""

from componentize_py_types import Err
from wit_world.imports import types

SLURM_ERROR = -1
EINVAL = 22

#: The `slurm:plugin` contract version these files were written for (the
#: `wit/` package beside them).
CONTRACT_VERSION = "0.1.0"

#: Slurm's version number rule, `(major << 16) | (minor << 8) | micro`, of
#: the release whose plugin API the contract follows (22.05.8).
SLURM_22_05_8 = (22 << 16) | (5 << 8) | 8


class SlurmError(Exception):
    """A Slurm error code with a message: the contract's `plugin-error`."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def identity(plugin_type, plugin_name, required_capabilities=()):
    """What `describe` answers: the type and name given, this contract's
    version, Slurm 22.05.8's plugin version, no plugin id. Capabilities the
    plugin cannot work without go in `required_capabilities`, by the
    contract's names (`"topology"`, `"cpuset"`, `"gpu"`, `"gpu-control"`):
    the host refuses to load the plugin where one is not granted."""

    required = [types.Capability[c.upper().replace("-", "_")] for c in required_capabilities]

    return types.PluginIdentity(
        plugin_type=plugin_type,
        plugin_name=plugin_name,
        plugin_version=SLURM_22_05_8,
        plugin_id=None,
        contract_version=CONTRACT_VERSION,
        required_capabilities=required,
    )


def check_u32(what, value):
    """`value` when it is an integer in 0..=0xffffffff; `EINVAL` naming
    `what` otherwise (the component would trap on it)."""
    if not isinstance(value, int) or not 0 <= value <= 0xFFFFFFFF:
        raise SlurmError(EINVAL, f"{what}: {value!r} is not a u32")
    return value


class State:
    """Where the plugin value lives between calls, as a C plugin keeps its
    state in globals: empty until `init`, emptied again by `fini`.

    `call(f)` runs `f(plugin)` and turns a `SlurmError` into the contract's
    error; before `init` (or after `fini`) it fails with `<type>: called
    before init`."""

    def __init__(self, cls):
        self.cls = cls
        self.plugin = None

    def init(self, config):
        self.plugin = None
        self.plugin = self.guard(lambda: self.cls(config))

    def fini(self):
        plugin, self.plugin = self.plugin, None
        if plugin is not None:
            self.guard(plugin.fini)

    def call(self, f):
        if self.plugin is None:
            raise _err(SLURM_ERROR, f"{self.cls.TYPE}: called before init")
        return self.guard(lambda: f(self.plugin))

    @staticmethod
    def guard(f):
        try:
            return f()
        except SlurmError as e:
            raise _err(e.code, e.message) from None


def _err(code, message):
    return Err(types.PluginError(code=code, message=message))


def world(cls):
    """The `WitWorld` class componentize-py instantiates: `describe`."""

    class WitWorld:
        def describe(self):
            return cls.identity()

    return WitWorld
