"""The component's exports (componentize-py's `app` module): the plugin
of plugin.py behind the contract's functions. Nothing to edit here."""
from plugin import SmallFirst
from slurm_plugin.priority import exports

WitWorld, Priority = exports(SmallFirst)
