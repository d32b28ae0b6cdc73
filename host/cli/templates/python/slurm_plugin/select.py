"""The select kind: `Plugin`, `Cluster` and `exports`, as the Rust SDK's
`select` module (`sdk/src/plugin/select.rs`).

Only `__init__(config)` (the contract's `init`) and `job_test(cluster,
request)` are required. Everything else a select plugin must keep, this
module keeps in a `Cluster` it hands to `job_test`: the node table
(`node-init`, node updates), the running and suspended jobs with their
resources (`job-init`, `job-begin`, `job-fini`, `job-suspend`,
`job-resume`, `job-resized`, `reconfigure`), `select-nodeinfo` computed
from those jobs and packed as Slurm 20.11 to 22.05 pack it, an empty
`select-jobinfo` (as select/linear and select/cons_tres keep), and the
state blob of `state-save`/`state-restore` around the plugin's own bytes.
The tables are not in the state: after a restart they come back through
`node-init` and `job-init`, as in Slurm (`read_config.c: read_slurm_conf`).
Defaults where nothing is policy are select/linear's
(`src/plugins/select/linear/select_linear.c`).
"""

import select as _interface_module  # see `exports`
import struct

from wit_world.exports.select import (
    JobTestMode,
    JobTestResult,
    NodeinfoField,
    NodeinfoValue_Count,
    NodeinfoValue_Memory,
    NodeinfoValue_Text,
    NodeinfoValue_Weighted,
    PluginInfoField,
    PluginInfoValue_Config,
    PluginInfoValue_Flag,
    PluginInfoValue_Number,
    ReservationResult,
)
from wit_world.imports import types

from . import EINVAL, SLURM_ERROR, SlurmError, State, identity, world

ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE = 2014
ESLURM_NODES_BUSY = 2016
ESLURM_NOT_SUPPORTED = 2036

#: RPC protocol versions `pack`/`unpack` accept: 20.11, 21.08, 22.05.
PROTOCOL_VERSIONS = (36 << 8, 37 << 8, 38 << 8)


class Plugin:
    #: `plugin_type`, `select/<name>`.
    TYPE = "select/unnamed"
    #: `plugin_name`, a human description.
    NAME = ""

    @classmethod
    def identity(cls):
        return identity(cls.TYPE, cls.NAME)

    def __init__(self, config):
        """`init` with the `SelectConfig`; raise `SlurmError` to refuse."""

    def fini(self):
        pass

    def job_test(self, cluster, request):
        """Where (and for will-run, when) `request.job` runs: a
        `JobTestResult` (`cluster.whole_nodes` builds one), or
        `SlurmError` (`no_fit` gives Slurm's codes)."""
        raise SlurmError(SLURM_ERROR, f"{self.TYPE}: job_test is not written")

    def job_begin(self, cluster, job):
        """After the module recorded a starting job."""

    def job_fini(self, cluster, job):
        """After the module forgot an ended job."""

    def reconfigure(self, config):
        pass

    def cr_plugin(self):
        """0: whole nodes (select/linear's `SELECT_CR_PLUGIN` answer)."""
        return 0

    def config_info(self):
        return []

    def resv_test(self, cluster, request):
        """The first `node_count` available nodes (select/linear's
        `select_p_resv_test`, `bit_pick_cnt`); `ESLURM_NODES_BUSY` when too
        few."""
        available = ones(request.available)
        if len(available) < request.node_count:
            raise SlurmError(
                ESLURM_NODES_BUSY,
                f"resv-test: {request.node_count} nodes wanted, {len(available)} available",
            )
        picked = bitmap(request.available.len, available[: request.node_count])
        return ReservationResult(nodes=picked, cores=None)

    def state_save(self):
        """The plugin's own state: none."""
        return b""

    def state_restore(self, data):
        if data:
            raise SlurmError(EINVAL, f"{self.TYPE}: keeps no state, refusing {len(data)} bytes")


def no_fit(mode, job_id):
    """The error of a job that does not fit: `ESLURM_NODES_BUSY` for
    run-now, `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE` otherwise."""
    if mode == JobTestMode.RUN_NOW:
        return SlurmError(ESLURM_NODES_BUSY, f"job {job_id}: no candidate nodes free now")
    return SlurmError(
        ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
        f"job {job_id}: the candidate nodes cannot hold the job",
    )


def ones(b):
    """The set bits of a `types.Bitmap`, ascending."""
    out = []
    for q, word in enumerate(b.words):
        while word:
            low = word & -word
            i = q * 64 + low.bit_length() - 1
            if i >= b.len:
                return out
            out.append(i)
            word ^= low
    return out


def bitmap(length, bits):
    """A `types.Bitmap` of `length` bits with `bits` set."""
    words = [0] * ((length + 63) // 64)
    for i in bits:
        words[i // 64] |= 1 << (i % 64)
    return types.Bitmap(len=length, words=words)


def memory_per_node(job, node):
    """MB `job` asks for on `node`: `--mem`, `--mem-per-cpu` times the
    node's CPUs, 0 for none."""
    memory = job.details.memory
    if isinstance(memory, types.MemoryRequest_PerNode):
        return memory.value
    if isinstance(memory, types.MemoryRequest_PerCpu):
        return memory.value * node.cpus
    return 0


class RunningJob:
    """A job holding resources: `job`, `resources`, `suspended`."""

    def __init__(self, job, resources, suspended):
        self.job = job
        self.resources = resources
        self.suspended = suspended

    def nodes(self):
        return [r.node_index for r in self.resources.per_node]


class Cluster:
    """The configuration, the node table (`nodes`) and the running and
    suspended jobs (`jobs`, by id), with what a whole-node policy needs."""

    def __init__(self, config):
        self.config = config
        self.nodes = []
        self.jobs = {}
        self._on_node = {}
        self.now = 0

    def jobs_on(self, index):
        return [self.jobs[i] for i in self._on_node.get(index, ())]

    def is_idle(self, index):
        return not self._on_node.get(index)

    def free_at(self, index):
        """Now when idle, else the latest planned end of its jobs (never
        before now); never (`2**63 - 1`) while a suspended job holds it."""
        free = self.now
        for j in self.jobs_on(index):
            free = max(free, 2**63 - 1 if j.suspended else j.job.end_time)
        return free

    def end_times(self):
        """Now, then each running job's planned end after now, ascending."""
        ends = {max(j.job.end_time, self.now) for j in self.jobs.values() if not j.suspended}
        return sorted(ends | {self.now})

    def candidates(self, request):
        """The candidate nodes in index order, the job's `-w` nodes first."""
        candidates = ones(request.candidates)
        required = self.required(request.job)
        allowed = set(candidates)
        return [n for n in required if n in allowed] + [n for n in candidates if n not in required]

    @staticmethod
    def required(job):
        nodes = job.details.required_nodes
        return ones(nodes) if nodes is not None else []

    def node_fits(self, job, index):
        """CPUs, memory and `--tmp` of node `index` can hold one node's
        share of `job`."""
        if index >= len(self.nodes):
            return False
        node, d = self.nodes[index], job.details
        return (
            node.cpus >= d.pn_min_cpus
            and node.tmp_disk >= d.pn_min_tmp_disk
            and memory_per_node(job, node) <= node.real_memory
        )

    def take_whole_nodes(self, request, order):
        """Every required node, then nodes of `order` that fit until the job
        has its `min_nodes` (at least one) and `min_cpus`, never more than
        `max_nodes`; `None` when `order` cannot give that."""
        job = request.job
        required = self.required(job)
        want_nodes = max(request.min_nodes, job.details.min_nodes, 1)
        max_nodes = request.max_nodes or float("inf")
        chosen = list(required)
        cpus = sum(self.nodes[n].cpus for n in chosen if n < len(self.nodes))
        seen = set()
        for n in order:
            enough = len(chosen) >= want_nodes and cpus >= job.details.min_cpus
            if enough and len(seen) == len(required):
                break
            if not self.node_fits(job, n):
                continue
            if n in required:
                seen.add(n)
            elif not enough:
                chosen.append(n)
                cpus += self.nodes[n].cpus
        enough = len(chosen) >= want_nodes and cpus >= job.details.min_cpus
        if len(seen) == len(required) and enough and len(chosen) <= max_nodes:
            return sorted(chosen)
        return None

    def whole_nodes(self, request, nodes, start_time=None):
        """The `JobTestResult` of `request.job` on whole `nodes`: every core
        and CPU, the job's memory per node, `start_time` for will-run."""
        per_node = []
        for i in sorted(set(nodes)):
            node = self.nodes[i]
            cores = node.sockets * node.cores_per_socket
            per_node.append(
                types.NodeResources(
                    node_index=i,
                    cores=bitmap(cores, range(cores)),
                    cpus=node.cpus,
                    memory=min(memory_per_node(request.job, node), node.real_memory),
                    gres=[],
                )
            )
        length = max(request.candidates.len, len(self.nodes))
        resources = types.JobResources(
            nodes=bitmap(length, [r.node_index for r in per_node]),
            ncpus=sum(r.cpus for r in per_node),
            per_node=per_node,
            whole_nodes=True,
        )
        return JobTestResult(resources=resources, start_time=start_time, preemptees=[])

    def nodeinfo(self, index):
        """What `sinfo` shows of node `index`: CPUs of running jobs there,
        memory of running and suspended ones."""
        cpus = memory = 0
        for j in self.jobs_on(index):
            for r in j.resources.per_node:
                if r.node_index == index:
                    cpus += 0 if j.suspended else r.cpus
                    memory += r.memory
        if index < len(self.nodes):
            cpus = min(cpus, self.nodes[index].cpus)
        return NodeInfo.allocated(cpus, memory)

    def begin(self, job, suspended):
        if job.resources is None:
            raise SlurmError(EINVAL, f"job {job.job_id} has no resources")
        self.remove(job.job_id)
        running = RunningJob(job, job.resources, suspended)
        self.jobs[job.job_id] = running
        for n in running.nodes():
            self._on_node.setdefault(n, []).append(job.job_id)

    def remove(self, job_id):
        old = self.jobs.pop(job_id, None)
        if old is not None:
            for n in old.nodes():
                self._on_node[n].remove(job_id)

    def clear_jobs(self):
        self.jobs = {}
        self._on_node = {}


def _check_protocol(version, what):
    if version not in PROTOCOL_VERSIONS:
        raise SlurmError(EINVAL, f"{what}: unsupported protocol version {version:#06x}")


class NodeInfo:
    """`select_nodeinfo_t` (the `select-nodeinfo` resource): allocated CPUs,
    memory, TRES string and weight, packed as Slurm's
    `select_p_select_nodeinfo_pack` (pack16, pack64, packstr, packdouble)."""

    def __init__(self):
        self.alloc_cpus = 0
        self.alloc_memory = 0
        self.tres = None
        self.weighted = 0.0

    @classmethod
    def allocated(cls, cpus, memory):
        info = cls()
        info.alloc_cpus, info.alloc_memory, info.weighted = cpus, memory, float(cpus)
        parts = [f"cpu={cpus}"] if cpus else []
        if memory:
            value, unit = memory, 0
            while unit < 3 and value % 1024 == 0:
                value, unit = value // 1024, unit + 1
            parts.append(f"mem={value}{'MGTP'[unit]}")
        info.tres = ",".join(parts) or None
        return info

    def pack(self, protocol_version):
        State.guard(lambda: _check_protocol(protocol_version, "select nodeinfo pack"))
        text = b"" if self.tres is None else self.tres.encode() + b"\0"
        scaled = struct.pack(">d", self.weighted * 1_000_000)
        return struct.pack(">HQI", self.alloc_cpus, self.alloc_memory, len(text)) + text + scaled

    @classmethod
    def unpack(cls, data, protocol_version):
        return State.guard(lambda: cls._unpack(bytes(data), protocol_version))

    @classmethod
    def _unpack(cls, data, protocol_version):
        _check_protocol(protocol_version, "select nodeinfo unpack")
        if len(data) < 14:
            raise SlurmError(EINVAL, "select nodeinfo unpack: truncated")
        info = cls()
        info.alloc_cpus, info.alloc_memory, n = struct.unpack(">HQI", data[:14])
        if len(data) != 14 + n + 8 or (n and data[13 + n] != 0):
            raise SlurmError(EINVAL, "select nodeinfo unpack: malformed")
        info.tres = data[14 : 13 + n].decode() if n else None
        (scaled,) = struct.unpack(">d", data[14 + n :])
        info.weighted = scaled / 1_000_000
        return info

    def get(self, field, state):
        if field == NodeinfoField.SUBCNT:
            return NodeinfoValue_Count(self.alloc_cpus if state == 3 else 0)
        if field == NodeinfoField.MEM_ALLOC:
            return NodeinfoValue_Memory(self.alloc_memory)
        if field == NodeinfoField.TRES_ALLOC_FMT_STR:
            return NodeinfoValue_Text(self.tres or "")
        if field == NodeinfoField.TRES_ALLOC_WEIGHTED:
            return NodeinfoValue_Weighted(self.weighted)
        State.guard(lambda: _raise(SLURM_ERROR, "select nodeinfo get: the ptr field is a C pointer"))


class JobInfo:
    """`select_jobinfo_t` of select/linear and select/cons_tres: empty."""

    def copy(self):
        return JobInfo()

    def pack(self, protocol_version):
        State.guard(lambda: _check_protocol(protocol_version, "select jobinfo pack"))
        return b""

    @classmethod
    def unpack(cls, data, protocol_version):
        State.guard(lambda: _check_protocol(protocol_version, "select jobinfo unpack"))
        if data:
            State.guard(lambda: _raise(EINVAL, f"select jobinfo unpack: {len(data)} bytes"))
        return cls()

    def get(self, field):
        State.guard(lambda: _raise(SLURM_ERROR, "select jobinfo get: no per-job data"))

    def set(self, field, value):
        pass

    def to_string(self, mode):
        return ""


def _raise(code, message):
    raise SlurmError(code, message)


STATE_MAGIC = b"SWPYSEL\x01"


def exports(cls, clock=None):
    """`(WitWorld, Select)`: the classes componentize-py exports. `clock`
    (default: the contract's `clock.now`) gives "now"; native tests pass
    their own.

    componentize-py looks for an exported interface's resources in a module
    named after the interface, here `select`, which is the standard
    library's module of that name, already imported: the resource classes
    are put there."""
    if clock is None:
        from wit_world.imports import clock as contract_clock

        clock = contract_clock.now
    _interface_module.SelectNodeinfo = NodeInfo
    _interface_module.SelectJobinfo = JobInfo
    state = State(cls)
    cluster = {}

    def call(f):
        def run(p):
            c = cluster["c"]
            c.now = clock()
            return f(p, c)

        return state.call(run)

    class Select:
        def init(self, config):
            state.init(config)
            cluster["c"] = Cluster(config)

        def fini(self):
            state.fini()
            cluster.pop("c", None)

        def state_save(self):
            own = bytes(state.call(lambda p: p.state_save()))
            return STATE_MAGIC + struct.pack(">I", len(own)) + own

        def state_restore(self, data):
            data = bytes(data)
            head = len(STATE_MAGIC) + 4
            if not data.startswith(STATE_MAGIC) or len(data) < head:
                State.guard(lambda: _raise(EINVAL, f"{cls.TYPE}: not a state this plugin saved"))
            (n,) = struct.unpack(">I", data[len(STATE_MAGIC) : head])
            if n != len(data) - head:
                State.guard(lambda: _raise(EINVAL, f"{cls.TYPE}: state length does not match"))
            state.call(lambda p: p.state_restore(data[head:]))

        def job_init(self, jobs):
            def run(p, c):
                for j in jobs:
                    if j.state in (types.JobState.RUNNING, types.JobState.SUSPENDED):
                        c.begin(j, j.state == types.JobState.SUSPENDED)
                        p.job_begin(c, j)

            call(run)

        def node_init(self, nodes):
            def run(p, c):
                c.nodes = list(nodes)
                c.clear_jobs()

            call(run)

        def job_test(self, request):
            return call(lambda p, c: p.job_test(c, request))

        def job_begin(self, job):
            def run(p, c):
                c.begin(job, False)
                p.job_begin(c, job)

            call(run)

        def job_ready(self, job):
            def run(p, c):
                if job.state not in (types.JobState.RUNNING, types.JobState.SUSPENDED):
                    return False
                off = types.NodeStateFlags.POWER_SAVE | types.NodeStateFlags.POWERING_UP
                nodes = job.resources.per_node if job.resources else []
                return not any(
                    r.node_index < len(c.nodes) and c.nodes[r.node_index].state.flags & off
                    for r in nodes
                )

            return call(run)

        def job_expand_allow(self):
            return False

        def job_expand(self, from_, to):
            State.guard(lambda: _raise(ESLURM_NOT_SUPPORTED, f"{cls.TYPE}: job-expand"))

        def job_resized(self, job, node_index):
            def run(p, c):
                running = c.jobs.get(job.job_id)
                if running is None:
                    return
                r = running.resources
                kept = [e for e in r.per_node if e.node_index != node_index]
                if len(kept) != len(r.per_node):
                    r.ncpus -= sum(e.cpus for e in r.per_node if e.node_index == node_index)
                    r.per_node = kept
                    r.nodes = bitmap(r.nodes.len, [n for n in ones(r.nodes) if n != node_index])
                    c._on_node[node_index].remove(job.job_id)

            call(run)

        def job_signal(self, job, signal):
            pass

        def job_mem_confirm(self, job):
            pass

        def job_fini(self, job):
            def run(p, c):
                c.remove(job.job_id)
                p.job_fini(c, job)

            call(run)

        def job_suspend(self, job, indefinite):
            def run(p, c):
                if job.job_id in c.jobs:
                    c.jobs[job.job_id].suspended = True

            call(run)

        def job_resume(self, job, indefinite):
            def run(p, c):
                if job.job_id in c.jobs:
                    c.jobs[job.job_id].suspended = False
                    c.jobs[job.job_id].job.end_time = job.end_time

            call(run)

        def step_pick_nodes(self, job, step, node_count, available):
            return None

        def step_finish(self, step, killing):
            pass

        def reconfigure(self, config, running):
            def run(p, c):
                c.config = config
                c.clear_jobs()
                for j in running:
                    if j.resources is not None:
                        c.begin(j, j.state == types.JobState.SUSPENDED)
                p.reconfigure(config)

            call(run)

        def update_node_config(self, node):
            call(lambda p, c: _update_node(c, node))

        def update_node_state(self, node):
            call(lambda p, c: _update_node(c, node))

        def node_ranking(self, nodes):
            return None

        def nodeinfo_set_all(self):
            call(lambda p, c: None)

        def nodeinfo_set(self, job):
            pass

        def node_nodeinfo(self, node_index):
            return call(lambda p, c: c.nodeinfo(node_index))

        def get_info_from_plugin(self, field, job):
            def run(p, c):
                if field == PluginInfoField.CR_PLUGIN:
                    return PluginInfoValue_Number(p.cr_plugin())
                if field == PluginInfoField.CONFIG_INFO:
                    return PluginInfoValue_Config(p.config_info())
                return PluginInfoValue_Flag(False)

            return call(run)

        def resv_test(self, request):
            return call(lambda p, c: p.resv_test(c, request))

        def ba_init(self, nodes, sanity_check):
            pass

        def ba_get_dims(self):
            return None

    return world(cls), Select


def _update_node(cluster, node):
    if node.index >= len(cluster.nodes):
        raise SlurmError(EINVAL, f"node update for index {node.index} of {len(cluster.nodes)}")
    cluster.nodes[node.index] = node
