//! Which candidate nodes a job may use (`_job_count_bitmap`, Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`) and
//! how many CPUs each contributes (`_get_avail_cpus`, Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_get_avail_cpus`).

use std::cell::Cell;

use select_common::{MemRequest, NodeRec, NodeTable};
use slurm_wasm_sdk::types::{GresRequest, GresScope, JobDetails};
use slurm_wasm_sdk::{Bitmap, Error};
use smallvec::SmallVec;

use crate::config::Config;
use crate::gres::{self, GresTotals};
use crate::usage::{NodeUsage, NodeUsages};

/// `NO_SHARE_LIMIT`: no limit on the run or tot job counts.
pub const NO_SHARE_LIMIT: u32 = 0xfffe;

/// How the filter treats current usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    /// `SELECT_MODE_TEST_ONLY`: total GRES, nothing else checked.
    TestOnly,
    /// RUN_NOW and WILL_RUN: free GRES, memory, exclusivity, job counts.
    Live,
}

/// CPUs a node contributes to the job (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_get_avail_cpus`): the node's CPUs, raised
/// to cores × ntasks-per-core × cpus-per-task when `--ntasks-per-core` is
/// set, then capped at ntasks-per-node × cpus-per-task when
/// `--ntasks-per-node` is set. The job's part is read once, so the
/// per-node loops keep it in registers instead of reading the job again
/// for every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailCpus {
    /// ntasks-per-core × cpus-per-task, when `--ntasks-per-core` is set.
    per_core: Option<u32>,
    /// ntasks-per-node × cpus-per-task, when `--ntasks-per-node` is set.
    cap: Option<u32>,
}

impl AvailCpus {
    /// The rule of job `d`.
    pub fn of(d: &JobDetails) -> Self {
        let cpus_per_task = u32::from(d.cpus_per_task.max(1));
        AvailCpus {
            per_core: (d.ntasks_per_core != 0 && d.ntasks_per_core != 0xffff)
                .then(|| u32::from(d.ntasks_per_core) * cpus_per_task),
            cap: (d.ntasks_per_node > 0).then(|| u32::from(d.ntasks_per_node) * cpus_per_task),
        }
    }

    /// The CPUs `node` contributes.
    #[inline(always)]
    pub fn on(self, node: &NodeRec) -> u32 {
        let mut avail = u32::from(node.cpus);
        if let Some(per_core) = self.per_core {
            avail = avail.max(node.cores() * per_core);
        }
        if let Some(cap) = self.cap {
            avail = avail.min(cap);
        }
        avail
    }
}

/// Memory the job needs on `node` under `CR_Memory` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`,
/// `_add_job_to_nodes`, `_build_select_struct`): the per-node request, per-CPU × the node's configured CPUs,
/// or the node's whole memory when the job asked for none.
///
/// Slurm 22.05.8 multiplies `--mem-per-cpu` by every configured CPU even
/// when `--threads-per-core` leaves some unused (anchor job a47, `-n2
/// --threads-per-core=1 --mem-per-cpu=500` on an 8-CPU node: `Mem=4000`);
/// Later Slurm releases (not 22.05.8's src/plugins/select/linear/select_linear.c) count only the
/// usable CPUs.
pub fn job_node_memory(memory: MemRequest, node: &NodeRec) -> u64 {
    match memory {
        MemRequest::PerCpu(m) => m * u64::from(node.cpus),
        MemRequest::PerNode(m) => m,
        MemRequest::None => node.real_memory,
    }
}

/// `ESLURM_UNSUPPORTED_GRES`: "Requested GRES option unsupported by
/// configured SelectType plugin".
pub const ESLURM_UNSUPPORTED_GRES: i32 = 2122;

/// Slurm 22.05 refuses, for any select plugin but cons_tres, GRES requested
/// per job, per socket or per task (`--gpus`, `--gpus-per-socket`,
/// `--gpus-per-task`) and CPUs or memory per GRES (`--cpus-per-gpu`,
/// `--mem-per-gpu`): only per-node requests (`--gres`, `--gpus-per-node`)
/// reach linear. `ESLURM_UNSUPPORTED_GRES` naming the request otherwise.
pub fn check_gres(d: &JobDetails) -> Result<(), Error> {
    for req in &d.gres {
        if req.scope != GresScope::PerNode
            || req.cpus_per_gres.is_some()
            || req.mem_per_gres.is_some()
        {
            return Err(Error::new(
                ESLURM_UNSUPPORTED_GRES,
                format!(
                    "Requested GRES option unsupported by configured SelectType plugin: \
                     {} {:?} (select/linear takes per-node GRES counts only; \
                     per-job/socket/task GRES and CPUs or memory per GRES need select/cons_tres)",
                    req.name, req.scope
                ),
            ));
        }
    }
    Ok(())
}

/// The per-node GRES requests of a job: `(name, type, count)`.
pub fn per_node_gres(d: &JobDetails) -> impl Iterator<Item = &GresRequest> {
    d.gres.iter().filter(|g| g.scope == GresScope::PerNode)
}

/// The GRES test that opens Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`'s node loop: can the node's GRES (total in TEST_ONLY, free
/// otherwise) satisfy every per-node GRES request of the job? A node that cannot
/// gives the job no usable cores and is rejected.
fn gres_fits(wanted: &[Wanted<'_>], i: usize, usage: &NodeUsage, mode: FilterMode) -> bool {
    wanted.iter().all(|(req, columns)| {
        let total = gres::total(columns, i);
        let free = match mode {
            FilterMode::TestOnly => total,
            FilterMode::Live => {
                total.saturating_sub(usage.gres_allocated(&req.name, req.type_name.as_deref()))
            }
        };
        free >= req.count
    })
}

/// The rest of the GRES test of `_job_count_bitmap` (select_linear.c,
/// 22.05): where gres.conf binds the node's devices to cores, the job may
/// use only the CPUs of the cores its devices are bound to (see
/// [`gres::bound_cores`], the fewest over its requests), and linear, which
/// allocates whole nodes, refuses the node unless those CPUs are all of the
/// node's, and at least `--ntasks-per-node` and (above 1) `-c`. On the
/// anchor (2 sockets x 2 cores x 2 threads, GPU 0 on cores 0-1, GPU 1 on
/// 2-3) `--gres=gpu:1` gives 2 cores, 4 of the 8 CPUs, and sbatch refused
/// `-n1 --gres=gpu:1` ("Requested node configuration is not available");
/// `--gres=gpu:2` gives every core and ran.
///
/// A node none of whose devices are in use (or any node in TEST_ONLY)
/// answers as every node of its GRES layout: `layouts` keeps those answers
/// for the filter's walk, by layout.
#[inline(never)]
fn bound_cpus_suffice(
    node: &NodeRec,
    use_: &NodeUsage,
    wanted: &[Wanted<'_>],
    d: &JobDetails,
    mode: FilterMode,
    layout: u32,
    layouts: &LayoutAnswers,
) -> bool {
    let use_total = mode == FilterMode::TestOnly;
    let alike = use_total || use_.gres.is_empty();
    let slot = layouts.get(layout as usize).filter(|_| alike);
    let mut cores: Option<u32> = None;
    for (req, _) in wanted {
        let allocated = if use_total {
            0
        } else {
            use_.gres_allocated(&req.name, None)
        };
        let on_node = |k: usize| use_.group_allocated(node, k);
        if let Some(c) = gres::bound_cores(node, req, allocated, on_node, use_total) {
            cores = Some(cores.map_or(c, |o| o.min(c)));
            if c == 0 {
                break;
            }
        }
    }
    let ok = cores.is_none_or(|cores| {
        // `cpus_per_core` of the node as Slurm divides it.
        let cpus = u32::from(node.cpus);
        let gres_cpus = cores * (cpus / node.cores().max(1));
        gres_cpus >= cpus
            && gres_cpus >= u32::from(d.ntasks_per_node)
            && (d.cpus_per_task <= 1 || gres_cpus >= u32::from(d.cpus_per_task))
    });
    if let Some(slot) = slot {
        slot.set(if ok { YES } else { NO });
    }
    ok
}

/// [`bound_cpus_suffice`]'s answer per GRES layout: [`UNKNOWN`] until a
/// node of the layout with no device in use was tested, then [`YES`] or
/// [`NO`].
type LayoutAnswers = SmallVec<[Cell<u8>; 4]>;
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// A per-node GRES request with the configured-count columns it reads.
type Wanted<'a> = (&'a GresRequest, Vec<&'a [u64]>);

/// The tables every test reads.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub nodes: &'a NodeTable,
    pub config: &'a Config,
    /// Configured GRES of `nodes`, by column.
    pub gres: &'a GresTotals,
}

/// The job being placed, as the filter reads it.
#[derive(Debug, Clone, Copy)]
pub struct Pending<'a> {
    pub details: &'a JobDetails,
    pub memory: MemRequest,
}

/// `_job_count_bitmap` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`): the candidates the job may use given
/// at most `run_cnt` running and `tot_cnt` running-plus-suspended jobs per
/// node, counted over **all** partitions of the node. Returns the accepted
/// nodes (a subset of `candidates`).
///
/// A job without a memory request under `CR_Memory` needs, on every node,
/// the memory of the first candidate that passes the GRES test: Slurm's
/// filter sets its per-node request from that node and keeps it for the
/// rest of the walk (select_linear.c, 22.05 and later), so a smaller node
/// after a bigger one is refused. Copied as Slurm does it.
pub fn count_bitmap(
    ctx: Ctx<'_>,
    usage: &impl NodeUsages,
    job: Pending<'_>,
    candidates: &Bitmap,
    run_cnt: u32,
    tot_cnt: u32,
    mode: FilterMode,
) -> Bitmap {
    let wanted: Vec<Wanted<'_>> = per_node_gres(job.details)
        .map(|req| (req, ctx.gres.columns(&req.name, req.type_name.as_deref())))
        .collect();
    // What the loop reads of the job and the configuration, read once.
    let any_gres = !wanted.is_empty();
    // The usual request, one GRES counted in one configured column: on a
    // node holding no GRES (or in TEST_ONLY) its test is that column's
    // count, read here instead of through `gres_fits`.
    let single = match wanted.as_slice() {
        [(req, columns)] if columns.len() == 1 => Some((columns[0], req.count)),
        _ => None,
    };
    // The answer of each GRES layout, for its nodes with no device in use
    // (see `bound_cpus_suffice`).
    let layouts: LayoutAnswers = (0..ctx.gres.layouts())
        .map(|_| Cell::new(UNKNOWN))
        .collect();
    // Only for GRES requests: in wasm the call alone cost a sixth of the
    // filter.
    let gres_ok = |i: usize, use_: &NodeUsage| {
        !any_gres
            || match single {
                Some((column, count)) if mode == FilterMode::TestOnly || use_.gres.is_empty() => {
                    column.get(i).copied().unwrap_or(0) >= count
                }
                _ => gres_fits(&wanted, i, use_, mode),
            } && match ctx.gres.layout(i) {
                gres::NO_LAYOUT => true,
                // The layout's answer, when the node's devices are all free.
                l => match layouts.get(l as usize).map(Cell::get) {
                    Some(YES) if mode == FilterMode::TestOnly || use_.gres.is_empty() => true,
                    Some(NO) if mode == FilterMode::TestOnly || use_.gres.is_empty() => false,
                    _ => ctx.nodes.get(i).is_none_or(|node| {
                        bound_cpus_suffice(node, use_, &wanted, job.details, mode, l, &layouts)
                    }),
                },
            }
    };
    let check_memory = ctx.config.memory;
    let memory = match job.memory {
        MemRequest::None if check_memory && mode == FilterMode::Live => {
            let first = candidates.ones().find_map(|i| {
                let (node, use_) = (ctx.nodes.get(i)?, usage.node(i)?);
                gres_ok(i, use_).then_some(node.real_memory)
            });
            match first {
                Some(m) => MemRequest::PerNode(m),
                None => return Bitmap::new(candidates.len()),
            }
        }
        m => m,
    };
    let mut out = Bitmap::new(candidates.len());
    for i in candidates.ones() {
        let (Some(node), Some(use_)) = (ctx.nodes.get(i), usage.node(i)) else {
            continue;
        };
        // Every test only rejects, so their order does not change the
        // answer: the cheap counters come before the GRES lookups.
        if mode == FilterMode::Live {
            if use_.exclusive_cnt != 0 {
                continue;
            }
            if check_memory
                && use_.alloc_memory + job_node_memory(memory, node) > node.usable_memory()
            {
                continue;
            }
            let (run, tot) = use_.job_counts();
            if run > run_cnt || tot > tot_cnt {
                continue;
            }
        }
        if !gres_ok(i, use_) {
            continue;
        }
        out.set(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Usage;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::types::GresCount;

    fn node(cpus_s: u16, cores: u16, threads: u16) -> NodeRec {
        NodeRec::from_node(&fixtures::node(0, "n", cpus_s, cores, threads, 1000)).unwrap()
    }

    #[test]
    fn avail_cpus_rules() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_get_avail_cpus`: avail = cpus, ntasks-per-node caps at ntpn * cpt.
        let n = node(2, 4, 2); // 16 CPUs, 8 cores
        let mut d = fixtures::job_details();
        let avail_cpus = |n: &NodeRec, d: &JobDetails| AvailCpus::of(d).on(n);
        assert_eq!(avail_cpus(&n, &d), 16);
        d.ntasks_per_node = 2;
        d.cpus_per_task = 3;
        assert_eq!(avail_cpus(&n, &d), 6);
        // ntasks-per-core raises to cores * ntpc * cpt (8*2*3 = 48), then the
        // ntasks-per-node cap still applies.
        d.ntasks_per_node = 0;
        d.ntasks_per_core = 2;
        assert_eq!(avail_cpus(&n, &d), 48);
        d.ntasks_per_core = 0xffff;
        assert_eq!(avail_cpus(&n, &d), 16);
    }

    fn setup() -> (NodeTable, Usage) {
        let mut n0 = fixtures::node(0, "n0", 1, 4, 1, 1000);
        n0.partitions = vec![0, 1];
        let mut n1 = fixtures::node(1, "n1", 1, 4, 1, 1000);
        n1.gres = vec![GresCount {
            name: "gpu".into(),
            type_name: None,
            count: 2,
        }];
        let nodes = NodeTable::new(&[n0, n1]).unwrap();
        let usage = Usage::new(&nodes);
        (nodes, usage)
    }

    #[test]
    fn counts_are_summed_over_partitions() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`: run/tot counts summed over all partitions.
        let (nodes, mut usage) = setup();
        usage.nodes[0].parts[0].run = 1;
        usage.nodes[0].parts[0].tot = 1;
        usage.nodes[0].parts[1].run = 1;
        usage.nodes[0].parts[1].tot = 1;
        let d = fixtures::job_details();
        let job = Pending {
            details: &d,
            memory: MemRequest::None,
        };
        let all = Bitmap::full(2);
        let c = Config::default();
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &c,
            },
            &usage,
            job,
            &all,
            1,
            1,
            FilterMode::Live,
        );
        assert_eq!(
            got.ones().collect::<Vec<_>>(),
            vec![1],
            "n0 has 2 jobs in total"
        );
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &c,
            },
            &usage,
            job,
            &all,
            2,
            2,
            FilterMode::Live,
        );
        assert_eq!(got.count(), 2);
        // TEST_ONLY ignores counts (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap` accepts the node right after the GRES test).
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &c,
            },
            &usage,
            job,
            &all,
            0,
            0,
            FilterMode::TestOnly,
        );
        assert_eq!(got.count(), 2);
    }

    #[test]
    fn memory_exclusive_and_gres_reject() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`: the GRES, memory and exclusive checks.
        let (nodes, mut usage) = setup();
        let mut d = fixtures::job_details();
        let all = Bitmap::full(2);
        let mem = Config {
            memory: true,
            ..Config::default()
        };
        usage.nodes[0].alloc_memory = 600;
        let job = Pending {
            details: &d,
            memory: MemRequest::PerNode(500),
        };
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &mem,
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::Live,
        );
        assert_eq!(got.ones().collect::<Vec<_>>(), vec![1]);
        // Without CR_Memory memory is not checked.
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &Config::default(),
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::Live,
        );
        assert_eq!(got.count(), 2);
        usage.nodes[1].exclusive_cnt = 1;
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &Config::default(),
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::Live,
        );
        assert_eq!(got.ones().collect::<Vec<_>>(), vec![0]);
        usage.nodes[1].exclusive_cnt = 0;
        d.gres = vec![GresRequest {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count: 2,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
        let job = Pending {
            details: &d,
            memory: MemRequest::None,
        };
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &Config::default(),
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::Live,
        );
        assert_eq!(got.ones().collect::<Vec<_>>(), vec![1], "only n1 has GPUs");
        usage.nodes[1].gres = vec![crate::jobs::GresHeld {
            name: "gpu".into(),
            type_name: None,
            count: 1,
            devices: None,
        }];
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &Config::default(),
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::Live,
        );
        assert_eq!(got.count(), 0, "one GPU in use leaves one free");
        let got = count_bitmap(
            Ctx {
                gres: &GresTotals::new(&nodes),
                nodes: &nodes,
                config: &Config::default(),
            },
            &usage,
            job,
            &all,
            9,
            9,
            FilterMode::TestOnly,
        );
        assert_eq!(got.count(), 1, "TEST_ONLY counts total GRES");
    }

    #[test]
    fn gres_types_add_up_or_count_alone() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`'s GRES test with typed GRES: `--gres=gpu:2` counts every
        // type (two columns), `--gres=gpu:a100:2` one; a node holding GRES
        // is read through the held counts, one holding none through the
        // column alone. Both ways must agree.
        let mut n0 = fixtures::node(0, "n0", 1, 4, 1, 1000);
        n0.gres = ["a100", "v100"]
            .map(|t| GresCount {
                name: "gpu".into(),
                type_name: Some(t.into()),
                count: 1,
            })
            .to_vec();
        let nodes = NodeTable::new(&[n0]).unwrap();
        let totals = GresTotals::new(&nodes);
        let mut usage = Usage::new(&nodes);
        let config = Config::default();
        let ctx = Ctx {
            nodes: &nodes,
            config: &config,
            gres: &totals,
        };
        let test = |usage: &Usage, type_name: Option<&str>, count: u64| {
            let mut d = fixtures::job_details();
            d.gres = vec![GresRequest {
                name: "GPU".into(),
                type_name: type_name.map(Into::into),
                scope: GresScope::PerNode,
                count,
                cpus_per_gres: None,
                mem_per_gres: None,
            }];
            let job = Pending {
                details: &d,
                memory: MemRequest::None,
            };
            count_bitmap(ctx, usage, job, &Bitmap::full(1), 9, 9, FilterMode::Live).count()
        };
        assert_eq!(test(&usage, None, 2), 1, "both types count");
        assert_eq!(test(&usage, Some("a100"), 1), 1);
        assert_eq!(test(&usage, Some("a100"), 2), 0, "one a100 only");
        usage.nodes[0].gres = vec![crate::jobs::GresHeld {
            name: "gpu".into(),
            type_name: Some("v100".into()),
            count: 1,
            devices: None,
        }];
        assert_eq!(test(&usage, None, 2), 0, "the v100 is in use");
        assert_eq!(test(&usage, None, 1), 1);
        assert_eq!(test(&usage, Some("a100"), 1), 1, "the a100 is free");
        assert_eq!(test(&usage, Some("v100"), 1), 0);
    }
}
