//! What slurmctld does around the select plugin when advanced reservations
//! exist (22.05 slurmctld/reservation.c): the nodes and cores it offers
//! `resv-test` for a new reservation ([`request`]), and what an active
//! reservation leaves a job's `job-test` ([`restrict`]).
//!
//! Both follow the anchor: recordings of node and core reservations among
//! running jobs, and of jobs beside and inside held reservations, replay
//! with 0 differences (`tests/select_anchor.rs`). Not modelled: several
//! reservations overlapping in time (`_filter_resv`), `Nodes=` lists,
//! features, `MAINT`/`OVERLAP`/`FLEX`/`IGNORE_JOBS` and the other flags,
//! and reservations that start later.

use std::fmt;

use slurm_wasm_host::bindings::select::exports::slurm::plugin::select::{
    JobTestRequest, ReservationRequest, ReservationResult,
};
use slurm_wasm_host::bindings::types::{Bitmap, Job, JobState, ShareRequest};

use super::records::Cluster;

/// An active reservation: its nodes, and for a core reservation its cores
/// (the cluster-wide core map, as `resv-test` answered).
#[derive(Debug, Clone)]
pub struct Reservation {
    /// Its name, as a job's `--reservation` names it.
    pub name: String,
    /// Its nodes, a bitmap over the node table.
    pub nodes: Bitmap,
    /// For a core reservation, its cores as a cluster-wide core map (bit =
    /// the node's first core + core index); `None` when it holds whole nodes.
    pub cores: Option<Bitmap>,
}

impl Reservation {
    /// The reservation `name` made of a `resv-test` answer.
    pub fn new(name: &str, answer: ReservationResult) -> Reservation {
        Reservation {
            name: name.to_owned(),
            nodes: answer.nodes,
            cores: answer.cores,
        }
    }

    /// Its cores, as `scontrol show reservation` counts them (`CoreCnt=`):
    /// those of a core reservation, every core of its nodes (in `cluster`)
    /// for a node reservation.
    pub fn core_count(&self, cluster: &Cluster) -> u64 {
        match &self.cores {
            Some(cores) => cores.ones().count() as u64,
            None => self
                .nodes
                .ones()
                .filter_map(|i| cluster.nodes.get(i as usize))
                .map(|n| u64::from(cores_of(n)))
                .sum(),
        }
    }
}

/// A job asked for a reservation that is not active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownReservation(pub String);

impl fmt::Display for UnknownReservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reservation `{}` is not active (sbatch: Invalid reservation name)",
            self.0
        )
    }
}

impl std::error::Error for UnknownReservation {}

/// Cores of node `n` in the cluster-wide core map (sockets count every
/// board's, so boards are not multiplied again).
fn cores_of(n: &slurm_wasm_host::bindings::types::Node) -> u32 {
    u32::from(n.sockets) * u32::from(n.cores_per_socket)
}

/// What slurmctld asks `resv-test` for a reservation of `node_count`
/// nodes and `core_count` cores (0: a node reservation) in partition
/// `partition` of `cluster`, starting now, while `running` run
/// (`_select_nodes`, `_pick_node_cnt`): the partition's nodes; for a node
/// reservation less every node a running or suspended job holds; for a
/// core reservation the cores those jobs hold are excluded instead, and a
/// node one job holds whole is left out (`_check_job_compatibility`).
///
/// # Panics
///
/// When `partition` is not an index of `cluster.partitions`.
pub fn request<'a>(
    cluster: &Cluster,
    partition: usize,
    running: impl IntoIterator<Item = &'a Job>,
    node_count: u32,
    core_count: u32,
) -> ReservationRequest {
    let mut available = vec![false; cluster.nodes.len()];
    for i in cluster.partitions[partition].nodes.ones() {
        available[i as usize] = true;
    }
    let offsets: Vec<u32> = cluster
        .nodes
        .iter()
        .scan(0u32, |next, n| {
            let first = *next;
            *next += cores_of(n);
            Some(first)
        })
        .collect();
    let total_cores = cluster.nodes.iter().map(cores_of).sum();
    let mut used_cores = Vec::new();
    let active = running
        .into_iter()
        .filter(|j| matches!(j.state, JobState::Running | JobState::Suspended));
    for job in active {
        let Some(resources) = &job.resources else {
            continue;
        };
        for node in &resources.per_node {
            let i = node.node_index;
            let Some(n) = cluster.nodes.get(i as usize) else {
                continue;
            };
            let held: Vec<u32> = node.cores.ones().collect();
            if core_count == 0 || held.len() as u32 == cores_of(n) {
                available[i as usize] = false;
            }
            used_cores.extend(held.iter().map(|c| offsets[i as usize] + c));
        }
    }
    ReservationRequest {
        node_count,
        core_count,
        cores_per_node: Vec::new(),
        available: Bitmap::with_ones(
            cluster.nodes.len() as u32,
            (0u32..).zip(available).filter_map(|(i, a)| a.then_some(i)),
        ),
        excluded_cores: (core_count > 0).then(|| Bitmap::with_ones(total_cores, used_cores)),
        flags: 0,
    }
}

/// What `active` reservations leave the `job-test` of `request`'s job,
/// which asked for reservation `job_reservation` or none
/// (`job_test_resv`). A job in a reservation may use only its nodes, and
/// of a core reservation only its cores (the others are excluded). Any
/// other job keeps off a node reservation's nodes (and, when it takes
/// whole nodes, off a core reservation's) and off a core reservation's
/// cores; one that requires a node it must keep off is not tested now:
/// it is left no candidate.
///
/// # Errors
///
/// [`UnknownReservation`] when `job_reservation` names none of `active`.
pub fn restrict(
    request: &mut JobTestRequest,
    active: &[Reservation],
    job_reservation: Option<&str>,
) -> Result<(), UnknownReservation> {
    let and_not = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x &= !y);
    if let Some(name) = job_reservation {
        let r = active
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| UnknownReservation(name.to_owned()))?;
        let outside: Vec<u64> = r.nodes.words.iter().map(|w| !w).collect();
        and_not(&mut request.candidates.words, &outside);
        if let Some(cores) = &r.cores {
            let mut others = Bitmap::with_ones(cores.len, 0..cores.len);
            and_not(&mut others.words, &cores.words);
            request.excluded_cores = Some(others);
        }
        return Ok(());
    }
    let whole = request.job.details.share == ShareRequest::Exclusive;
    for r in active {
        match &r.cores {
            Some(cores) if !whole => {
                let excluded = request
                    .excluded_cores
                    .get_or_insert_with(|| Bitmap::with_ones(cores.len, []));
                excluded
                    .words
                    .iter_mut()
                    .zip(&cores.words)
                    .for_each(|(x, y)| *x |= y);
            }
            _ => {
                let required = request.job.details.required_nodes.as_ref();
                if required
                    .is_some_and(|q| q.words.iter().zip(&r.nodes.words).any(|(a, b)| a & b != 0))
                {
                    request.candidates.words.iter_mut().for_each(|w| *w = 0);
                    return Ok(());
                }
                and_not(&mut request.candidates.words, &r.nodes.words);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::job_request::JobRequest;
    use crate::slurm_conf::parse_str;
    use slurm_wasm_host::bindings::select::exports::slurm::plugin::select::JobTestMode;
    use slurm_wasm_host::bindings::types::{JobResources, NodeResources};

    /// Four nodes of one socket with four cores: node `i` holds cores
    /// `4i..4i+4` of the cluster-wide map.
    fn cluster() -> Cluster {
        let conf = parse_str(
            "NodeName=n[1-4] Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000\n\
             PartitionName=big Nodes=n[1-4] Default=YES\n",
            Path::new("slurm.conf"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Cluster::from_slurm_conf(&conf).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Job `id` running on `held`: (node, its cores).
    fn running(id: u32, held: &[(u32, &[u32])]) -> Job {
        let mut j = slurm_wasm_host::fixtures::job(id);
        j.state = JobState::Running;
        j.resources = Some(JobResources {
            nodes: Bitmap::with_ones(4, held.iter().map(|(n, _)| *n)),
            ncpus: 1,
            per_node: held
                .iter()
                .map(|&(node, cores)| NodeResources {
                    node_index: node,
                    cores: Bitmap::with_ones(4, cores.iter().copied()),
                    cpus: cores.len() as u16,
                    memory: 0,
                    gres: Vec::new(),
                })
                .collect(),
            whole_nodes: false,
        });
        j
    }

    fn test_request(cluster: &Cluster, options: &[&str]) -> JobTestRequest {
        let options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
        JobRequest::parse(&options)
            .and_then(|r| r.prepare(9, cluster, Some("big")))
            .unwrap_or_else(|e| panic!("{e}"))
            .test_request(JobTestMode::RunNow)
    }

    /// `_pick_node_cnt`: a node reservation leaves out every node a job
    /// runs on; a core reservation excludes the jobs' cores and leaves out
    /// only a node one job holds whole (`_check_job_compatibility`). On the
    /// anchor, `NodeCnt=1` beside jobs on n1 and n2 got n3, and `NodeCnt=1
    /// CoreCnt=2` got cores of n1, which a two-CPU job shared.
    #[test]
    fn requests_leave_out_what_running_jobs_hold() {
        let c = cluster();
        let jobs = [running(1, &[(0, &[0])]), running(2, &[(1, &[0, 1, 2, 3])])];
        let nodes = request(&c, 0, &jobs, 1, 0);
        assert_eq!(nodes.available.ones().collect::<Vec<_>>(), [2, 3]);
        assert!(nodes.excluded_cores.is_none());
        let cores = request(&c, 0, &jobs, 1, 2);
        assert_eq!(cores.available.ones().collect::<Vec<_>>(), [0, 2, 3]);
        let excluded = cores.excluded_cores.expect("a core reservation excludes");
        assert_eq!(excluded.len, 16);
        assert_eq!(excluded.ones().collect::<Vec<_>>(), [0, 4, 5, 6, 7]);
    }

    /// `job_test_resv`: a job inside a core reservation gets its nodes and
    /// cores only; others keep off its cores, or off its nodes when they
    /// take whole nodes, and one that requires such a node is not tested.
    #[test]
    fn core_reservations_share_their_nodes() {
        let c = cluster();
        let k1 = Reservation {
            name: "k1".into(),
            nodes: Bitmap::with_ones(4, [0]),
            cores: Some(Bitmap::with_ones(16, [1, 2])),
        };
        let active = [k1];
        assert_eq!(active[0].core_count(&c), 2);
        let mut inside = test_request(&c, &["-n2"]);
        restrict(&mut inside, &active, Some("k1")).unwrap();
        assert_eq!(inside.candidates.ones().collect::<Vec<_>>(), [0]);
        let others = inside.excluded_cores.expect("cores outside k1");
        assert_eq!(others.ones().count(), 14);
        assert!(!others.ones().any(|c| c == 1 || c == 2));

        let mut beside = test_request(&c, &["-w", "n1", "-n2"]);
        restrict(&mut beside, &active, None).unwrap();
        assert_eq!(beside.candidates.ones().collect::<Vec<_>>(), [0, 1, 2, 3]);
        let excluded = beside.excluded_cores.expect("k1's cores");
        assert_eq!(excluded.ones().collect::<Vec<_>>(), [1, 2]);

        let mut whole = test_request(&c, &["--exclusive", "-N1"]);
        restrict(&mut whole, &active, None).unwrap();
        assert_eq!(whole.candidates.ones().collect::<Vec<_>>(), [1, 2, 3]);
        let mut whole_on_n1 = test_request(&c, &["--exclusive", "-w", "n1"]);
        restrict(&mut whole_on_n1, &active, None).unwrap();
        assert_eq!(whole_on_n1.candidates.ones().count(), 0);
    }

    /// A node reservation keeps every other job off its nodes; a job that
    /// requires one is not tested; asking for a reservation that is not
    /// active is refused, as sbatch refuses an invalid reservation name.
    #[test]
    fn node_reservations_keep_others_off() {
        let c = cluster();
        let active = [Reservation {
            name: "k2".into(),
            nodes: Bitmap::with_ones(4, [1]),
            cores: None,
        }];
        // CoreCnt= of a node reservation: every core of its node.
        assert_eq!(active[0].core_count(&c), 4);
        let mut beside = test_request(&c, &["-n8"]);
        restrict(&mut beside, &active, None).unwrap();
        assert_eq!(beside.candidates.ones().collect::<Vec<_>>(), [0, 2, 3]);
        assert!(beside.excluded_cores.is_none());
        let mut on_n2 = test_request(&c, &["-w", "n2", "-n1"]);
        restrict(&mut on_n2, &active, None).unwrap();
        assert_eq!(on_n2.candidates.ones().count(), 0);
        let mut inside = test_request(&c, &["-n4"]);
        restrict(&mut inside, &active, Some("k2")).unwrap();
        assert_eq!(inside.candidates.ones().collect::<Vec<_>>(), [1]);
        let mut unknown = test_request(&c, &["-n1"]);
        let e = restrict(&mut unknown, &active, Some("gold")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "reservation `gold` is not active (sbatch: Invalid reservation name)"
        );
    }
}
