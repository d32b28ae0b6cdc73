//! `select_p_job_test`: the passes over sharing and partitions (`_job_test`,
//! cons_common/job_test.c) and the modes (`common_job_test`, same file).
//!
//! Simplifications against Slurm 22.05 (each named so a differential test
//! that trips on one points here):
//! * steps 2–4 of `_job_test` (as its comments number them) take each
//!   partition's PreemptMode to be the cluster's (the partition records
//!   carry none); step 2 is not run as a test of its own (steps 3 and 4
//!   test subsets of its cores, so they fail where it would), and step 3
//!   only where partitions of another PriorityTier hold cores (otherwise it
//!   repeats step 1);
//! * "test 0" (can the job fit on every available core, without the
//!   partition's core map) is answered by the later passes failing, with the
//!   same error, except under CR_Socket with specialised cores, where it
//!   can fail alone and is run (see [`ConsTres::test_on`]);
//! * no licenses, no `--nodes` size lists, no `RestrictedCoresPerGPU` (none
//!   of them in 22.05's select plugin), no topology plugin;
//! * the first-pass GRES core trim of `gres_select_filter_sock_core` is
//!   applied to per-task requests and, without enforce-binding, to per-node
//!   requests of devices bound to sockets (see `gres_sched::node_filter`);
//!   a node it leaves without the devices or cores the job needs is left
//!   out of the first pass; when that pass finds no node set, the second
//!   pass and `choose_nodes`' retries without small nodes run without that
//!   test, trimming a node's cores to its tasks' from the sockets the
//!   devices do not need first. The GPU-locality tweak of a node's
//!   scheduling weight (`can_job_run_on_node`, cons_tres/job_test.c:3420)
//!   is applied (`eval_nodes`).

use slurm_wasm_sdk::codes::{
    EINVAL, ESLURM_BAD_TASK_COUNT, ESLURM_INTERNAL, ESLURM_INVALID_GRES, ESLURM_NODES_BUSY,
    ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, ESLURM_UNSUPPORTED_GRES, SLURM_ERROR,
};
use slurm_wasm_sdk::select::{JobTestMode, JobTestRequest, JobTestResult, PreemptMode};
use slurm_wasm_sdk::types::GresScope;
use slurm_wasm_sdk::Error;
use smallvec::SmallVec;

use crate::allocate_sc::OwnPartition;
use crate::can_run::{can_job_run_on_node, Offer};
use crate::dist_tasks::{dist_tasks, DistError, NodeShare};
use crate::eval_nodes::{choose_nodes, Counts};
use crate::gres_sched::{
    job_bits_first, job_bits_more, per_node_need, pick, tasks_per_socket, Pick, Want,
};
use crate::node_usage::{NodeUse, Tables, NODE_CR_AVAILABLE};
use crate::params::Unit;
use crate::request::{JobView, Mem};
use crate::rows::PartRows;
use crate::{ConsTres, JobRec, NodeAlloc, Usage};
use slurm_wasm_sdk::Bitmap;

/// How usage counts in a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// Free resources (RUN_NOW, simulations).
    Free,
    /// Slurm's test 0 (cons_common/job_test.c:915-938): memory and GRES
    /// free, every available core offered, no `part_core_map`.
    Avail,
    /// Configured totals (TEST_ONLY).
    Total,
}

/// What one `_job_test` call is told besides the job, the tables and the
/// candidates: the mode it runs in (as Slurm's `mode` argument) and
/// whether the job is a QOS preemptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestAs {
    /// How usage counts.
    pub against: Against,
    /// Whether COMPLETING nodes may be used (not in SELECT_MODE_RUN_NOW).
    pub completing_ok: bool,
    /// Slurm's `qos_preemptor`. Under `preempt/qos` each partition has an
    /// extra row, its last (see [`crate::num_rows`]): a test that is not a
    /// QOS preemptor leaves it out of `_is_node_busy` (see
    /// [`ConsTres::verify_node_state`]) and of step 4's rows. Without
    /// `preempt/qos` the flag changes nothing.
    pub qos_preemptor: bool,
    /// Whether the allocation's memory is loaded and checked against the
    /// nodes' free memory once the tasks are laid out: only in
    /// SELECT_MODE_RUN_NOW (cons_common/job_test.c:1650-1716; TEST_ONLY
    /// returns after `_select_nodes` at :939-946, WILL_RUN at :1645-1648,
    /// their `memory_allocated` left zero). The only memory check before
    /// that is the node's, in `can_job_run_on_node` ([`crate::can_run`]).
    /// Fuzzed CR_Socket_Memory stream f46 and f97 (`-n3 --mem-per-cpu=1000`:
    /// three tasks laid out over both sockets of a 4000 MB node) and two
    /// will-run probes: Slurm's submit test and will-run accept them.
    pub loads_memory: bool,
}

impl TestAs {
    /// SELECT_MODE_TEST_ONLY: against the configured totals.
    pub const TEST_ONLY: TestAs = TestAs {
        against: Against::Total,
        completing_ok: true,
        qos_preemptor: false,
        loads_memory: false,
    };
    /// SELECT_MODE_RUN_NOW: free resources, COMPLETING nodes refused.
    pub const RUN_NOW: TestAs = TestAs {
        against: Against::Free,
        completing_ok: false,
        qos_preemptor: false,
        loads_memory: true,
    };
    /// SELECT_MODE_WILL_RUN: free resources, COMPLETING nodes allowed,
    /// memory not loaded.
    pub const WILL_RUN: TestAs = TestAs {
        against: Against::Free,
        completing_ok: true,
        qos_preemptor: false,
        loads_memory: false,
    };
    /// RUN_NOW's preemption simulation: SELECT_MODE_WILL_RUN, as `_run_now`
    /// tests (cons_common/job_test.c:2173-2180), but its allocation is the
    /// answer, where Slurm starts the job from a later RUN_NOW test, which
    /// loads memory: so memory is loaded.
    pub const PREEMPTION: TestAs = TestAs {
        loads_memory: true,
        ..TestAs::WILL_RUN
    };

    /// The same test with `qos_preemptor` set to `qos_preemptor`.
    pub fn with_qos_preemptor(self, qos_preemptor: bool) -> TestAs {
        TestAs {
            qos_preemptor,
            ..self
        }
    }
}

/// The record of `job` placed on `nodes`, not yet begun (no end time).
fn placed(job: &JobView, nodes: Vec<NodeAlloc>) -> JobRec {
    JobRec {
        id: job.job_id,
        partition: job.partition,
        node_req: job.node_req,
        whole_node: job.whole_node,
        end_time: 0,
        soft_end: None,
        unlimited: true,
        nodes,
        suspended: false,
    }
}

/// Step 1's available cores of some usage tables: the cores of `avail`
/// in no row of any partition, and, when known, the nodes they make.
#[derive(Clone, Debug, PartialEq)]
pub struct FreeCores {
    pub cores: Bitmap,
    pub nodes: Option<FreeNodes>,
}

/// The nodes of a [`FreeCores`] of some usage tables.
#[derive(Clone, Debug, PartialEq)]
pub struct FreeNodes {
    /// The nodes holding at least one of the free cores.
    pub holding: Bitmap,
    /// The idle nodes among them (see [`ConsTres::is_idle`]).
    pub idle: Bitmap,
}

impl FreeCores {
    /// The free cores of `usage` among `avail` (a cluster-wide core map);
    /// the nodes they make are left to find when needed.
    pub fn of(usage: &Usage, mut avail: Bitmap) -> FreeCores {
        for p in &usage.rows {
            for row in &p.rows {
                avail.and_not(&row.cores);
            }
        }
        FreeCores {
            cores: avail,
            nodes: None,
        }
    }
}

impl ConsTres {
    /// Whether node `i`, used as `node` says, is idle given the free cores
    /// `cores` of the same tables: no specialised core, every core free (so
    /// in no row), no memory, no device and no job's `node_req` on it. What
    /// such a node offers a job without GRES depends only on its
    /// [`crate::node_usage::NodeRec::shape`] and COMPLETING flag, and `_verify_node_state`
    /// can refuse it only for its state, its memory or excluded cores.
    pub fn is_idle(&self, node: &NodeUse, cores: &Bitmap, i: usize) -> bool {
        let r = &self.recs[i];
        self.unused(node, i)
            && cores.count_range(r.core_off, r.core_off + r.cores as usize) == r.cores as usize
    }

    /// The part of [`Self::is_idle`] that does not read the free cores.
    pub fn unused(&self, node: &NodeUse, i: usize) -> bool {
        self.recs[i].spec_count == 0
            && node.alloc_memory == 0
            && node.node_state == 0
            && !node.any_gres_used()
    }

    /// The nodes of the live tables running no job (Slurm's
    /// `idle_node_bitmap`), `cores` being their free cores: every core but
    /// the specialised ones free, and no memory, device or `node_req`
    /// held.
    pub fn idle_nodes(&self, cores: &Bitmap) -> Bitmap {
        let mut idle = Bitmap::new(self.recs.len());
        for (i, (r, u)) in self.recs.iter().zip(&self.usage.nodes).enumerate() {
            let free = cores.count_range(r.core_off, r.core_off + r.cores as usize);
            if free + r.spec_count as usize == r.cores as usize
                && u.alloc_memory == 0
                && u.node_state == 0
                && !u.any_gres_used()
            {
                idle.set(i);
            }
        }
        idle
    }

    /// The [`FreeNodes`] of `usage`, whose free cores are `cores`.
    pub fn free_nodes(&self, usage: &Usage, cores: &Bitmap) -> FreeNodes {
        let holding = self.nodes_holding(cores);
        let mut idle = Bitmap::new(self.recs.len());
        for i in holding.ones() {
            if self.is_idle(&usage.nodes[i], cores, i) {
                idle.set(i);
            }
        }
        FreeNodes { holding, idle }
    }
}

/// What an idle node's offer depends on: its layout class
/// ([`crate::node_usage::NodeRec::shape`] for a job without GRES,
/// [`crate::node_usage::NodeRec::gres_shape`] for one with) and its
/// COMPLETING flag.
type IdleShape = (u32, bool);

/// `compute()` for a node of idle shape `shape`, computed once per shape
/// (`memo` keeps the values); for a node that is not idle (`None`), always
/// computed.
#[inline]
fn per_shape<T: Clone>(
    memo: &mut SmallVec<[(IdleShape, T); 4]>,
    shape: Option<IdleShape>,
    compute: impl FnOnce() -> T,
) -> T {
    let Some(shape) = shape else {
        return compute();
    };
    if let Some((_, known)) = memo.iter().find(|(s, _)| *s == shape) {
        return known.clone();
    }
    let value = compute();
    memo.push((shape, value.clone()));
    value
}

fn fail(code: i32, msg: impl Into<String>) -> Error {
    Error::new(code, msg)
}

impl ConsTres {
    /// The CPUs of node `node` that memory per CPU counts when the job holds
    /// `cpus` there (`job_resources_get_node_cpu_cnt`,
    /// common/job_resources.c:1926; used by `_job_test`'s memory check): under CR_Core or
    /// CR_Socket a job asking fewer threads per core than the node has
    /// uses only that many CPUs of each core, ceil(cpus / tpc) x
    /// `--threads-per-core`; otherwise all of `cpus`. The ceiling of later
    /// releases is followed where Slurm 22.05 divides down: they differ only
    /// when `cpus` is not a whole number of cores.
    fn memory_cpus(&self, job: &JobView, node: usize, cpus: u32) -> u32 {
        let tpc = self.recs[node].tpc as u32;
        if self.params.unit != Unit::Cpu && job.threads_per_core > 0 && job.threads_per_core < tpc {
            cpus.div_ceil(tpc) * job.threads_per_core
        } else {
            cpus
        }
    }

    /// The shape of node `i` for `job` when the node is idle
    /// ([`Self::is_idle`] with `avail` as its free cores; `idle`, when
    /// known, are those nodes); `None` otherwise.
    #[inline(always)]
    fn idle_shape(
        &self,
        usage: &Usage,
        i: usize,
        avail: &Bitmap,
        idle: Option<&Bitmap>,
        job: &JobView,
    ) -> Option<IdleShape> {
        let idle = match idle {
            Some(idle) => idle.get(i),
            None => self.is_idle(&usage.nodes[i], avail, i),
        };
        let r = &self.recs[i];
        let class = if job.gres.is_empty() {
            r.shape
        } else {
            r.gres_shape
        };
        idle.then_some((class, r.completing))
    }

    /// Partition `p`'s `PriorityTier` (0 for one the table lacks).
    fn tier(&self, p: usize) -> u16 {
        self.partitions.get(p).map_or(0, |p| p.priority_tier)
    }

    /// Partition `p`'s own line says `PreemptMode=OFF` (or `CLUSTER`, which
    /// 22.05's `preempt_mode_num` reads as OFF): its jobs are never
    /// preempted. A partition without its own mode is not (its
    /// `preempt_mode` is `NO_VAL16` in slurmctld).
    fn never_preempted(&self, p: usize) -> bool {
        self.partitions
            .get(p)
            .is_some_and(|p| p.preempt_mode.is_some_and(|mode| mode.is_empty()))
    }

    /// Step 2 of `_job_test` (cons_common/job_test.c:1090-1141): the cores
    /// a sharing job may count on, `avail` less, under
    /// `PreemptType=preempt/partition_prio`, the rows of every partition
    /// it cannot preempt (of a higher PriorityTier, or whose own
    /// `PreemptMode` is OFF). Without it every other partition's jobs' cores stay usable:
    /// the anchor with two FORCE:2 partitions over n1 ran `-p alt -w n1
    /// -n2` on CPUs 0-1 of a node whose 8 CPUs a `big` job held.
    fn step2_cores(&self, usage: &Usage, job: &JobView, avail: &Bitmap) -> Bitmap {
        let mut cores = avail.clone();
        if self.params.preempt_by_part {
            let job_tier = self.tier(job.partition as usize);
            for (p, rows) in usage.rows.iter().enumerate() {
                if self.tier(p) > job_tier || self.never_preempted(p) {
                    for row in &rows.rows {
                        cores.and_not(&row.cores);
                    }
                }
            }
        }
        cores
    }

    /// `_block_whole_nodes` (cons_common/job_test.c:73-115): `cand` without
    /// the nodes that have an available core (`avail`) not in `free`, nor
    /// those `busy` names.
    fn block_whole_nodes(
        &self,
        cand: &Bitmap,
        avail: &Bitmap,
        free: &Bitmap,
        busy: impl Fn(usize) -> bool,
    ) -> Bitmap {
        let mut kept = cand.clone();
        for i in cand.ones() {
            let r = &self.recs[i];
            let mut taken = avail.extract(r.core_off, r.cores as usize);
            taken.and_not(&free.extract(r.core_off, r.cores as usize));
            if taken.any() || busy(i) {
                kept.clear(i);
            }
        }
        kept
    }

    /// Under CR_Socket, what a socket job `i` uses may grow to (see
    /// [`NodeShare::socket_fill`]): the node's cores in `avail`, the pass's
    /// cores before any GRES filter, and its specialised cores; empty
    /// otherwise.
    fn socket_fill(&self, avail: &Bitmap, i: usize) -> Bitmap {
        if self.params.unit != Unit::Socket {
            return Bitmap::new(0);
        }
        let r = &self.recs[i];
        let mut fill = avail.extract(r.core_off, r.cores as usize);
        fill.or(&r.spec_cores);
        fill
    }

    /// What `_allocate_sc` is told of the job's partition in a test
    /// against `usage`: Slurm's `part_core_map` only in the passes after
    /// test 0, once a job of the partition entered a row.
    fn own_partition<'a>(
        &self,
        usage: &'a Usage,
        job: &JobView,
        against: Against,
    ) -> OwnPartition<'a> {
        OwnPartition {
            max_cpus: self
                .partitions
                .get(job.partition as usize)
                .and_then(|p| p.max_cpus_per_node),
            rows: match (against, usage.rows.get(job.partition as usize)) {
                (Against::Free, Some(own)) if own.has_map => Some(&own.rows),
                _ => None,
            },
        }
    }

    /// Allocates from the cores in `avail` on the nodes of `cand`. `idle`,
    /// when known, are the idle nodes of `usage` whose free cores `avail` is.
    /// Test 0 ([`Against::Avail`]) stops once a node set is found: its
    /// record holds no nodes.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        &self,
        usage: &Usage,
        job: &JobView,
        cand: &Bitmap,
        avail: &Bitmap,
        idle: Option<&Bitmap>,
        counts: Counts,
        how: TestAs,
    ) -> Result<JobRec, Error> {
        let TestAs {
            against,
            completing_ok,
            loads_memory,
            ..
        } = how;
        let own = self.own_partition(usage, job, against);
        let tables = if against == Against::Total {
            Tables::Totals
        } else if std::ptr::eq(usage, &self.usage) {
            Tables::Live
        } else {
            Tables::Copy
        };
        let capped =
            |i: usize, want_cores: bool, first_pass: bool, cap: Option<u32>, gres_before: u64| {
                can_job_run_on_node(
                    &self.recs[i],
                    &usage.nodes[i],
                    avail,
                    want_cores,
                    job,
                    &self.params,
                    own,
                    tables,
                    completing_ok,
                    first_pass,
                    cap,
                    gres_before,
                )
            };
        let offer = |i: usize, want_cores: bool, first_pass: bool, gres_before: u64| {
            capped(i, want_cores, first_pass, None, gres_before)
        };
        // 22.05's `_eval_nodes` (each of its variants) runs `_select_cores`
        // on the required nodes in node order, each after `gres_sched_add`
        // counted the devices of those before it, then on the other nodes
        // (the consecutive-set walk: all of them after every required
        // node), and `gres_select_filter_sock_core` asks a per-job request's
        // node only for what is still missing (see `gres_sched::node_filter`).
        // Only then does a node's offer depend on the others.
        let required = job.required.as_ref().filter(|_| {
            job.gres
                .iter()
                .any(|g| g.scope == GresScope::PerJob && !g.shared)
        });
        let is_required = |i: usize| required.is_some_and(|r| r.get(i));
        // An idle node's offer depends only on its shape (with the device
        // layout for a job with GRES), so nodes of one shape share it: a
        // test visits idle nodes by the thousand. Required nodes of a
        // per-job request are evaluated on their own, in node order.
        let collect = |first_pass: bool| {
            let mut shared = SmallVec::new();
            let mut offers = Vec::with_capacity(cand.count());
            let mut req_offers: SmallVec<[(usize, Option<Offer>); 4]> = SmallVec::new();
            let mut before = 0u64;
            if let Some(r) = required {
                for i in r.ones().filter(|&i| cand.get(i)) {
                    let o = offer(i, false, first_pass, before).and_then(|o| Offer::of(i, &o));
                    before += o.map_or(0, |o| o.job_gres);
                    req_offers.push((i, o));
                }
            }
            for i in cand.ones() {
                let o = if is_required(i) {
                    req_offers
                        .iter()
                        .find(|(n, _)| *n == i)
                        .and_then(|(_, o)| *o)
                } else {
                    let shape = self.idle_shape(usage, i, avail, idle, job);
                    per_shape(&mut shared, shape, || {
                        offer(i, false, first_pass, before).and_then(|o| Offer::of(i, &o))
                    })
                };
                if let Some(o) = o {
                    offers.push(Offer { node: i, ..o });
                }
            }
            offers
        };
        // 22.05's `choose_nodes` (cons_tres/job_test.c:3134-3270): a first
        // pass keeping GRES jobs beside their devices; when it finds no node
        // set, the same choice without that, and retries without small
        // nodes. A node's usable GPUs matter only for those retries: found
        // again then. The passes differ only for per-node and per-task
        // requests without enforce-binding (see `gres_sched::node_filter`);
        // other jobs' offers are the same in both, so they are gathered
        // once.
        let gres_first_pass = !job.enforce_binding
            && job.gres.iter().any(|g| {
                matches!(
                    g.scope,
                    GresScope::PerNode | GresScope::PerTask | GresScope::PerJob
                )
            });
        let first = collect(gres_first_pass);
        let gpus = |i: usize| offer(i, false, false, 0).map_or(0, |o| o.gres.gpus);
        let choice = choose_nodes(
            job,
            &self.params,
            &self.recs,
            &first,
            || gres_first_pass.then(|| collect(false)),
            counts,
            gpus,
        )
        .ok_or_else(|| {
            fail(
                ESLURM_NODES_BUSY,
                format!("job {}: no node set fits", job.job_id),
            )
        })?;
        let first_pass = gres_first_pass && choice.by_first;
        let chosen = &choice.nodes;
        if against == Against::Avail {
            return Ok(placed(job, Vec::new()));
        }
        // The devices `collect` counted before node `i`: those of the
        // required nodes before it, or of all of them for a node not
        // required (a node's count does not depend on the pass).
        let job_gres_of = |j: usize| {
            first
                .binary_search_by_key(&j, |o| o.node)
                .map(|p| first[p].job_gres)
                .unwrap_or_else(|_| {
                    offer(j, false, false, 0)
                        .and_then(|o| Offer::of(j, &o))
                        .map_or(0, |o| o.job_gres)
                })
        };
        let gres_before = |i: usize| -> u64 {
            required.map_or(0, |r| {
                r.ones()
                    .filter(|&j| cand.get(j) && (j < i || !r.get(i)))
                    .map(&job_gres_of)
                    .sum()
            })
        };
        // Only the chosen nodes need their cores picked; the count-only and
        // the core-picking evaluation agree, so a chosen node keeps its offer.
        let mut plans = Vec::with_capacity(chosen.len());
        let mut shares = Vec::with_capacity(chosen.len());
        // Idle nodes of one shape keep the same cores too (all of them).
        let mut picked = SmallVec::new();
        for &(i, chosen_cpus) in chosen {
            // A node a failed choice clipped keeps the cores of its clipped
            // tasks (see `Choice::caps`).
            let cap = choice.cap(i).filter(|_| !job.gres.is_empty());
            let shape = self.idle_shape(usage, i, avail, idle, job);
            let before = gres_before(i);
            let o = match cap {
                Some(_) => capped(i, true, first_pass, cap, before),
                None if is_required(i) => offer(i, true, first_pass, before),
                None => per_shape(&mut picked, shape, || offer(i, true, first_pass, before)),
            };
            let o = o.ok_or_else(|| {
                fail(
                    ESLURM_INTERNAL,
                    format!(
                        "job {}: node {} lost its offer while picking cores",
                        job.job_id, self.recs[i].name
                    ),
                )
            })?;
            // 22.05 counts the node's CPUs from `avail_res->avail_cpus`
            // (cons_common/job_test.c:1389): the count `_cpus_to_use`
            // clipped it to, if any (cons_tres/job_test.c:244-247; a failed
            // choice's too), else its CPUs within the kept cores
            // (`NodeAvail::share_cpus`).
            let cpus = if chosen_cpus < o.alloc.avail_cpus {
                chosen_cpus
            } else {
                o.share_cpus.min(cap.unwrap_or(u32::MAX)).max(chosen_cpus)
            };
            shares.push(NodeShare {
                node: i,
                cpus,
                cores: o.alloc.cores,
                socket_fill: self.socket_fill(avail, i),
                cpus_per_core: o.alloc.cpus_per_core,
                req_sockets: o.gres.req_sockets.to_vec(),
                task_limit: o.gres.dist_task_limit.or(o.gres.task_limit),
                tasks: 0,
            });
            plans.push(o.gres);
        }
        let nhosts = shares.len() as u32;
        let sum: u32 = shares.iter().map(|s| s.cpus).sum();
        let mut ncpus = (nhosts * job.ntasks_per_node.max(1))
            .max(job.min_cpus)
            .max(nhosts * job.pn_min_cpus);
        if job.overcommit && job.num_tasks > 0 {
            ncpus = sum.min(job.num_tasks);
        }
        if job.whole_node {
            // Every core; under CR_CPU, of each core the threads
            // `--threads-per-core` leaves the job (the node's `avail_cpus`,
            // cons_common.c `_avail_cpus`, which `_job_test` keeps as the
            // node's count and memory per CPU counts; the job's total is
            // still every CPU). Fuzzed CR_CPU_Memory stream f424: `-w n3
            // --exclusive --threads-per-core=1` got Mem=1000 (4 CPUs x
            // 250); under CR_Core the count stays whole cores (a47 of the
            // exclusive-partition stream: Mem=2000 at 500 per CPU, which
            // `job_resources_get_node_cpu_cnt` halves from 8).
            for s in shares.iter_mut() {
                let r = &self.recs[s.node];
                let mut all = Bitmap::full(r.cores as usize);
                all.and_not(&r.spec_cores);
                let threads = match job.threads_per_core {
                    t if t > 0 && self.params.unit == Unit::Cpu => t.min(r.tpc as u32),
                    _ => r.tpc as u32,
                };
                s.cpus = all.count() as u32 * threads;
                s.cores = all;
            }
        }
        match dist_tasks(&self.recs, &mut shares, job, &self.params, ncpus) {
            Ok(()) => {}
            // SELECT_MODE_TEST_ONLY ends once the nodes are chosen: 22.05's
            // `_job_test` returns success after `_select_nodes` ("test 0
            // pass: test_only", cons_common/job_test.c:939-946), before
            // `dist_tasks` (:1566). Fuzzed anchor stream f196, `-n4 -c5`:
            // three nodes give the 20 CPUs but hold only three 5-CPU tasks;
            // Slurm's submit test accepted it (it pended on Resources).
            Err(DistError::BadTaskCount { .. }) if against == Against::Total => {}
            Err(DistError::BadTaskCount { wanted, placed }) => {
                return Err(fail(
                    ESLURM_BAD_TASK_COUNT,
                    format!(
                        "job {}: only {placed} of {wanted} tasks fit the chosen nodes",
                        job.job_id
                    ),
                ))
            }
        }
        // Final GRES pick (`gres_select_filter_select_and_set`,
        // cons_common/gres_select_filter.c), request by request.
        let mut picks: Vec<Vec<(usize, u64)>> = vec![Vec::new(); shares.len()];
        let tasks = if job
            .gres
            .iter()
            .any(|g| g.scope == GresScope::PerTask && !g.shared)
        {
            tasks_per_socket(&self.recs, &shares, job, &self.params)
        } else {
            Vec::new()
        };
        let cannot = |count: u64, name: &str, node: &str| {
            fail(
                ESLURM_INVALID_GRES,
                format!(
                    "job {}: cannot pick {count} {name} on node {node}",
                    job.job_id
                ),
            )
        };
        for (k, g) in job.gres.iter().enumerate() {
            if g.scope == GresScope::PerJob && !g.shared {
                // `_set_job_bits1` node by node, then `_set_job_bits2`
                // while the job still lacks devices.
                let mut got: Vec<Pick> = Vec::with_capacity(shares.len());
                let mut total = 0u64;
                for (si, s) in shares.iter().enumerate() {
                    let p = job_bits_first(
                        &self.recs[s.node],
                        &plans[si].reqs[k],
                        g,
                        &s.cores,
                        job.enforce_binding,
                        g.count.saturating_sub(total),
                        shares.len() - si,
                    );
                    total += p.len() as u64;
                    got.push(p);
                }
                for (si, s) in shares.iter().enumerate() {
                    if total >= g.count {
                        break;
                    }
                    let before = got[si].len() as u64;
                    job_bits_more(
                        &self.recs[s.node],
                        &plans[si].reqs[k],
                        g,
                        &s.cores,
                        job.enforce_binding,
                        &mut got[si],
                        g.count - total,
                    );
                    total += got[si].len() as u64 - before;
                }
                if total < g.count {
                    return Err(fail(
                        ESLURM_INVALID_GRES,
                        format!(
                            "job {}: {} {} left unplaced",
                            job.job_id,
                            g.count - total,
                            g.name
                        ),
                    ));
                }
                for (pick, p) in picks.iter_mut().zip(got) {
                    pick.extend(p);
                }
                continue;
            }
            let mut remaining = if g.scope == GresScope::PerJob {
                g.count
            } else {
                0
            };
            for (si, s) in shares.iter().enumerate() {
                let r = &self.recs[s.node];
                let plan = &plans[si].reqs[k];
                let want = match g.scope {
                    GresScope::PerJob => {
                        let left_nodes = (shares.len() - si) as u64;
                        let mut c = remaining
                            .saturating_sub(left_nodes - 1)
                            .min(plan.devices.len() as u64);
                        if g.cpus_per_gres > 0 {
                            c = c.min(s.cpus as u64 / g.cpus_per_gres as u64);
                        }
                        Want::Node(c.max(1))
                    }
                    GresScope::PerTask if g.shared => Want::Node(g.count * s.tasks as u64),
                    GresScope::PerTask => Want::Task {
                        count: g.count,
                        tasks: &tasks[si],
                    },
                    GresScope::PerSocket if !g.shared => Want::Socket {
                        count: g.count,
                        sockets_per_node: job.sockets_per_node,
                    },
                    _ => Want::Node(per_node_need(g, job)),
                };
                let p = pick(r, plan, g, want, &s.cores, job.enforce_binding)
                    .ok_or_else(|| cannot(per_node_need(g, job), &g.name, &r.name))?;
                if let Want::Node(c) = want {
                    remaining = remaining.saturating_sub(c);
                }
                picks[si].extend(p);
            }
            if remaining > 0 {
                return Err(fail(
                    ESLURM_INVALID_GRES,
                    format!("job {}: {remaining} {} left unplaced", job.job_id, g.name),
                ));
            }
        }
        if job.whole_node {
            // A whole-node job also holds every GPU of its nodes (the
            // whole-node GRES allocation); shared GRES only when asked for.
            for (s, pick) in shares.iter().zip(picks.iter_mut()) {
                for (d, dev) in self.recs[s.node].devices.iter().enumerate() {
                    if !dev.shared && !pick.iter().any(|(p, _)| *p == d) {
                        pick.push((d, 1));
                    }
                }
                pick.sort_unstable();
            }
        }
        let mut nodes = Vec::with_capacity(shares.len());
        for (s, gres) in shares.into_iter().zip(picks) {
            let r = &self.recs[s.node];
            let memory = if !self.params.memory || !loads_memory {
                0
            } else {
                match job.mem {
                    Mem::PerGres(m) => m * gres.iter().map(|(_, a)| a).sum::<u64>(),
                    Mem::PerCpu(m) => m * self.memory_cpus(job, s.node, s.cpus) as u64,
                    Mem::PerNode(0) => r.usable_memory(),
                    Mem::PerNode(m) => m,
                }
            };
            if self.params.memory && loads_memory {
                let alloc = usage.nodes[s.node].alloc_memory;
                if memory > r.usable_memory().saturating_sub(alloc)
                    || (job.mem == Mem::PerNode(0) && alloc > 0)
                {
                    return Err(fail(
                        SLURM_ERROR,
                        format!(
                            "job {}: {memory} MB do not fit on node {}",
                            job.job_id, r.name
                        ),
                    ));
                }
            }
            nodes.push(NodeAlloc {
                node: s.node,
                cores: s.cores,
                cpus: s.cpus,
                memory,
                gres,
                tasks: s.tasks,
            });
        }
        Ok(placed(job, nodes))
    }

    /// One `_job_test` against `usage`, as `how` says: verify node state,
    /// then the passes of `_job_test` (step 1 without other jobs' cores;
    /// sharing jobs then try the rows of their partition). `free`, when the
    /// caller keeps them, are the [`FreeCores`] of `usage` (used only
    /// without `excluded_cores`; computed here otherwise).
    #[allow(clippy::too_many_arguments)]
    pub fn test_on(
        &self,
        usage: &Usage,
        free: Option<&FreeCores>,
        job: &JobView,
        cand: &Bitmap,
        counts: Counts,
        how: TestAs,
        excluded_cores: Option<&Bitmap>,
    ) -> Result<JobRec, Error> {
        let TestAs {
            against,
            qos_preemptor,
            ..
        } = how;
        let mut cand = cand.clone();
        if let Some(x) = &job.excluded {
            cand.and_not(x);
        }
        if let Some(req) = &job.required {
            if req.ones().any(|i| !cand.get(i)) {
                return Err(fail(
                    ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
                    format!(
                        "job {}: a required node is not among the candidates",
                        job.job_id
                    ),
                ));
            }
        }
        if against == Against::Total {
            return self.fit(usage, job, &cand, &self.base_avail, None, counts, how);
        }
        let avail = || {
            let mut avail = self.base_avail.clone();
            if let Some(x) = excluded_cores {
                avail.and_not(x);
            }
            avail
        };
        let computed;
        let free = match free.filter(|_| excluded_cores.is_none()) {
            Some(f) => f,
            None => {
                computed = FreeCores::of(usage, avail());
                &computed
            }
        };
        // Test 0 (cons_common/job_test.c:915-938) offers every available
        // core, so it fails where a later pass succeeds only under
        // CR_Socket, when a candidate has specialised cores: without a
        // `part_core_map` they make their socket used (cons_common.c:357-392).
        if self.params.unit == Unit::Socket && cand.ones().any(|i| self.recs[i].spec_count > 0) {
            let mut cand0 = cand.clone();
            self.verify_node_state(usage, job, &mut cand0, excluded_cores, None, qos_preemptor)
                .map_err(|e| fail(ESLURM_NODES_BUSY, format!("job {}: {e}", job.job_id)))?;
            self.fit(
                usage,
                job,
                &cand0,
                &self.base_avail,
                None,
                counts,
                TestAs {
                    against: Against::Avail,
                    ..how
                },
            )?;
        }
        let step1 = &free.cores;
        let step1_only = job.node_req != NODE_CR_AVAILABLE && !self.params.gang;
        if step1_only && job.required.is_none() {
            // Only step 1 follows, and a node without a core in no row
            // offers nothing there: leave the busy nodes out before the
            // per-node checks. (With required nodes every candidate is
            // checked, for the error naming an unusable required node.)
            match &free.nodes {
                Some(nodes) => cand.and(&nodes.holding),
                None => cand.and(&self.nodes_holding(step1)),
            }
        }
        // The idle nodes when the caller keeps them (finding them here
        // would cost the per-node checks they save).
        let idle = free.nodes.as_ref().map(|n| &n.idle);
        self.verify_node_state(usage, job, &mut cand, excluded_cores, idle, qos_preemptor)
            .map_err(|e| fail(ESLURM_NODES_BUSY, format!("job {}: {e}", job.job_id)))?;
        let cand1 = if job.whole_node {
            self.block_whole_nodes(&cand, &avail(), step1, |i| usage.nodes[i].node_state > 0)
        } else {
            cand.clone()
        };
        let first = self.fit(usage, job, &cand1, step1, idle, counts, how);
        if first.is_ok() || step1_only {
            return first;
        }
        let avail = avail();
        let step2 = self.step2_cores(usage, job, &avail);
        let fit_on =
            |cand: &Bitmap, free: &Bitmap| self.fit(usage, job, cand, free, None, counts, how);
        let block = |cand: &Bitmap, free: &Bitmap| {
            if job.whole_node {
                self.block_whole_nodes(cand, &step2, free, |_| false)
            } else {
                cand.clone()
            }
        };
        // Step 3 (cons_common/job_test.c:1143-1224): the cores outside the
        // rows of the partitions of the job's PriorityTier. It repeats step
        // 1 unless partitions of other tiers hold cores; then, where the job
        // fits, each lower tier's rows are avoided as well while it still
        // fits.
        let job_tier = self.tier(job.partition as usize);
        let mut step3 = step2.clone();
        for (p, rows) in usage.rows.iter().enumerate() {
            if self.tier(p) == job_tier {
                for row in &rows.rows {
                    step3.and_not(&row.cores);
                }
            }
        }
        if step3 != *step1 || (job.whole_node && step2 != avail) {
            let mut cand3 = block(&cand, &step3);
            if let Ok(mut rec) = fit_on(&cand3, &step3) {
                for (p, rows) in usage.rows.iter().enumerate() {
                    if self.tier(p) >= job_tier {
                        continue;
                    }
                    let mut lower = step3.clone();
                    for row in &rows.rows {
                        lower.and_not(&row.cores);
                    }
                    let cand_lower = block(&cand3, &lower);
                    match fit_on(&cand_lower, &lower) {
                        Ok(r) => {
                            rec = r;
                            step3 = lower;
                            cand3 = cand_lower;
                        }
                        Err(_) => break,
                    }
                }
                return Ok(rec);
            }
        }
        if let Some(own) = usage.rows.get(job.partition as usize) {
            let live = std::ptr::eq(usage, &self.usage);
            let rows = self.step4_rows(own, live, job, qos_preemptor);
            for row in rows.into_iter().map(|r| &own.rows[r]) {
                let mut free = step2.clone();
                free.and_not(&row.cores);
                // A whole-node job only takes a node all of whose available
                // cores this row leaves free (cons_common/job_test.c:1282-1283).
                if let Ok(rec) = fit_on(&block(&cand, &free), &free) {
                    return Ok(rec);
                }
            }
        }
        first
    }

    /// The rows of the job's partition `own` that step 4 tries, in order
    /// (cons_common/job_test.c:1264-1270). Without `preempt/qos`, every
    /// row, those with more cores first (`part_data_sort_res`), an order
    /// the rows keep when `live` (the live tables: will-run and preemption
    /// test copies, as Slurm's are, are never added to). Under
    /// `preempt/qos` the rows keep their order ("preserve row order for
    /// QOS") and the extra last row is tried only by a QOS preemptor; a job
    /// that does not share its cores (`node_req` other than
    /// NODE_CR_AVAILABLE) tries the first row alone.
    fn step4_rows(
        &self,
        own: &PartRows,
        live: bool,
        job: &JobView,
        qos_preemptor: bool,
    ) -> Vec<usize> {
        if !self.params.preempt_by_qos {
            if own.rows.len() > 1 && live {
                own.sort_pending.set(true);
            }
            return own.sorted();
        }
        let tried = if job.node_req != NODE_CR_AVAILABLE {
            1
        } else {
            own.rows.len() - usize::from(!qos_preemptor)
        };
        (0..tried).collect()
    }

    /// `_run_now` (cons_common/job_test.c:2097-2270) at time `now`: the
    /// job on the live tables; when that fails and there are preemptee
    /// candidates, either (under `preempt/qos`, when the first candidate's
    /// mode is SUSPEND and the job is not held, :2123-2140) the same test
    /// again as a QOS preemptor, whose answer is final and preempts no job,
    /// or otherwise the preemption simulation of
    /// [`ConsTres::preempt_run_now`]. Returns the allocation and the
    /// preemptees.
    fn run_now(
        &self,
        job: &JobView,
        req: &JobTestRequest,
        cand: &Bitmap,
        counts: Counts,
        excluded: Option<&Bitmap>,
        now: i64,
    ) -> Result<(JobRec, Vec<u32>), Error> {
        // The free cores and idle nodes of the live tables are kept with
        // the will-run scratch while the tables stay as they are: a
        // scheduling pass tests job after job on them. (Excluded cores
        // change the free cores: found per test.)
        let on_live = |how: TestAs| {
            let mut scratch = self.scratch.borrow_mut();
            scratch.sync(&self.usage, now);
            let free = excluded.is_none().then(|| scratch.live_free(self));
            self.test_on(&self.usage, free, job, cand, counts, how, excluded)
        };
        let candidates = &req.preemptee_candidates;
        match on_live(TestAs::RUN_NOW) {
            Ok(rec) => Ok((rec, Vec::new())),
            Err(e) if candidates.is_empty() => Err(e),
            Err(_) if self.qos_suspends(req) => {
                let rec = on_live(TestAs::RUN_NOW.with_qos_preemptor(true))?;
                Ok((rec, Vec::new()))
            }
            Err(e) => self
                .preempt_run_now(job, cand, counts, excluded, candidates)
                .ok_or(e),
        }
    }

    /// Whether a RUN_NOW test that failed is tried again as a QOS
    /// preemptor (cons_common/job_test.c:2123-2133): under `preempt/qos`,
    /// when the first preemptee candidate's mode is SUSPEND and the job's
    /// priority is not 0 (a held job).
    fn qos_suspends(&self, req: &JobTestRequest) -> bool {
        self.params.preempt_by_qos
            && req.job.priority != 0
            && req
                .preemptee_candidates
                .first()
                .is_some_and(|c| c.mode == PreemptMode::Suspend)
    }

    /// `select_p_job_test` (`common_job_test`, cons_common/job_test.c) at
    /// time `now`.
    pub fn job_test(&self, req: &JobTestRequest, now: i64) -> Result<JobTestResult, Error> {
        let n = self.recs.len();
        let job = JobView::new(
            &req.job,
            &self.gres_names,
            &self.partitions,
            &self.default_memory,
            &self.params,
            n,
        )
        .map_err(|e| fail(EINVAL, e))?;
        if self.params.cons_res {
            // Slurm refuses these at submission (gres_job_state_validate,
            // common/gres.c:5681); the plugin is the first to see them here.
            if let Some(why) = job.cons_res_refusal() {
                return Err(fail(
                    ESLURM_UNSUPPORTED_GRES,
                    format!("job {}: {why}", job.job_id),
                ));
            }
        }
        if req.candidates.len as usize != n {
            return Err(fail(
                EINVAL,
                format!(
                    "job-test: candidates has {} bits, the node table has {n} nodes",
                    req.candidates.len
                ),
            ));
        }
        let cand = Bitmap::from_words(req.candidates.len, &req.candidates.words)
            .map_err(|e| fail(EINVAL, format!("candidates: {e}")))?;
        let excluded = match &req.excluded_cores {
            Some(b) => Some(
                Bitmap::from_words(b.len, &b.words)
                    .ok()
                    .filter(|x| x.len() == self.total_cores)
                    .ok_or_else(|| {
                        fail(
                            EINVAL,
                            format!(
                                "excluded-cores has {} bits, the cluster has {} cores",
                                b.len, self.total_cores
                            ),
                        )
                    })?,
            ),
            None => None,
        };
        let counts = Counts {
            min: req.min_nodes.max(job.min_nodes).max(1),
            req: req.req_nodes.max(req.min_nodes).max(1),
            max: if req.max_nodes == 0 {
                job.max_nodes
            } else {
                req.max_nodes.min(job.max_nodes)
            },
        };
        let (rec, preemptees) = match req.mode {
            JobTestMode::TestOnly => {
                // Against the totals: usage is not read.
                let rec = self
                    .test_on(
                        &self.usage,
                        None,
                        &job,
                        &cand,
                        counts,
                        TestAs::TEST_ONLY,
                        None,
                    )
                    .map_err(|e| {
                        if e.code == ESLURM_NODES_BUSY {
                            fail(ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, e.message)
                        } else {
                            e
                        }
                    })?;
                (rec, Vec::new())
            }
            JobTestMode::RunNow => {
                self.run_now(&job, req, &cand, counts, excluded.as_ref(), now)?
            }
            JobTestMode::WillRun | JobTestMode::Reservation => {
                let (resources, start, preemptees) = self.will_run(
                    &job,
                    &cand,
                    counts,
                    excluded.as_ref(),
                    &req.preemptee_candidates,
                    now,
                )?;
                return Ok(JobTestResult {
                    resources,
                    start_time: Some(start),
                    preemptees,
                });
            }
        };
        Ok(JobTestResult {
            resources: self.to_resources(&rec),
            start_time: None,
            preemptees,
        })
    }
}

#[cfg(test)]
mod tests;
