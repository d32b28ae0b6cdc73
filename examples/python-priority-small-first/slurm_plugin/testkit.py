"""Records with neutral defaults for native tests, built from the bindings
componentize-py generates (`make test` puts them on the path): every
integer 0, string empty, list empty, option none, enum and variant their
first case, flags none; nested records likewise. Adjust field by field, as
with the Rust SDK's `testkit::fixtures`.
"""

import dataclasses
import enum
import typing


from wit_world.imports import types


def default(cls):
    """A value of the bindings' type `cls` with neutral defaults."""
    origin = typing.get_origin(cls)
    if origin is typing.Union:
        args = typing.get_args(cls)
        if type(None) in args:
            return None
        return default(args[0])
    if origin is list:
        return []
    if origin is tuple:
        return tuple(default(a) for a in typing.get_args(cls))
    if isinstance(cls, type) and issubclass(cls, enum.Flag):
        return cls(0)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return next(iter(cls))
    if dataclasses.is_dataclass(cls):
        return cls(**{f.name: default(f.type) for f in dataclasses.fields(cls)})
    return {int: 0, float: 0.0, str: "", bool: False, bytes: b""}[cls]


def record(cls, **fields):
    """`default(cls)` with `fields` replaced."""
    return dataclasses.replace(default(cls), **fields)


def job(job_id, **fields):
    """A pending job `job_id` of user 1000 in partition 0 (the Rust SDK's
    `fixtures::job`): name `job<id>`, no TRES, no resources."""
    base = dict(job_id=job_id, name=f"job{job_id}", user_id=1000, group_id=1000, partitions=[0])
    return record(types.Job, **{**base, **fields})


def partition(index, name, **fields):
    """Partition `index` called `name`, PriorityJobFactor 1."""
    return record(types.Partition, **{"index": index, "name": name, "priority_job_factor": 1, **fields})
