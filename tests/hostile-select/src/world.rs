//! The small real world select/hostile keeps, so that restart tests can see
//! what a restarted instance got back: the configuration from `init`, the
//! node table, the running jobs and the last state bytes restored.
//!
//! The placement is deliberately trivial: a job gets the first `min-nodes`
//! (at least one) candidate nodes that no running job holds, whole.

use std::collections::BTreeMap;

use slurm_wasm_sdk::codes::ESLURM_NODES_BUSY;
use slurm_wasm_sdk::select::{
    JobTestMode, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig,
};
use slurm_wasm_sdk::types::{Job, JobResources, KeyValue, Node, NodeResources};
use slurm_wasm_sdk::{Bitmap, Error};

/// The `get-info-from-plugin(config-info)` keys, in the order given.
pub const INFO_KEYS: [&str; 5] = ["nodes", "running", "initialised", "restored", "cluster"];

/// What the plugin remembers between calls.
#[derive(Debug, Default)]
pub struct World {
    /// The configuration of the last `init` or `reconfigure`; none before
    /// `init` and after `fini`.
    pub config: Option<SelectConfig>,
    /// The node table of `node-init`, as `update-node-config` and
    /// `update-node-state` changed it.
    pub nodes: Vec<Node>,
    /// Running (or suspended) jobs by id, with the node indices each holds
    /// (from the job's `resources`; none when it came without).
    pub running: BTreeMap<u32, Vec<u32>>,
    /// The bytes of the last `state-restore`.
    pub restored: Vec<u8>,
}

impl World {
    pub fn init(&mut self, config: SelectConfig) {
        self.config = Some(config);
    }

    /// `node-init`: the whole table; previous usage is discarded, as the
    /// contract says.
    pub fn node_init(&mut self, nodes: Vec<Node>) {
        self.nodes = nodes;
        self.running.clear();
    }

    /// `update-node-config` / `update-node-state`: replaces the node with
    /// the same index; an index past the table is `EINVAL`.
    pub fn update_node(&mut self, node: Node) -> Result<(), Error> {
        let count = self.nodes.len();
        let slot = self.nodes.get_mut(node.index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "select/hostile: node index {} is past the node table ({count} nodes)",
                node.index
            ))
        })?;
        *slot = node;
        Ok(())
    }

    /// `job-begin` and each job of `job-init`: the job now holds the nodes
    /// of its resources.
    pub fn start(&mut self, job: &Job) {
        let held = job
            .resources
            .as_ref()
            .and_then(|r| Bitmap::try_from(&r.nodes).ok())
            .map(|nodes| nodes.ones().map(|i| i as u32).collect())
            .unwrap_or_default();
        self.running.insert(job.job_id, held);
    }

    /// `job-fini`.
    pub fn finish(&mut self, job_id: u32) {
        self.running.remove(&job_id);
    }

    /// `reconfigure`: the new configuration, and exactly `running` running.
    pub fn reconfigure(&mut self, config: SelectConfig, running: &[Job]) {
        self.config = Some(config);
        self.running.clear();
        for job in running {
            self.start(job);
        }
    }

    /// `state-save`: the running job ids, ascending, 4 bytes each
    /// (little-endian).
    pub fn state_save(&self) -> Vec<u8> {
        self.running
            .keys()
            .flat_map(|id| id.to_le_bytes())
            .collect()
    }

    /// `state-restore`: the bytes are kept as they are (reported as
    /// `restored=<length>`); the running jobs do not change.
    pub fn state_restore(&mut self, data: Vec<u8>) {
        self.restored = data;
    }

    /// `job-test`: the first `min-nodes` (at least one) candidates that no
    /// running job holds (any candidates in test-only mode), whole. In
    /// will-run and reservation modes the answer is the nodes and CPU count
    /// only, starting `now`.
    pub fn job_test(&self, request: &JobTestRequest, now: i64) -> Result<JobTestResult, Error> {
        if self.nodes.is_empty() {
            return Err(Error::invalid(
                "select/hostile: the node table has 0 nodes (node-init was never called)",
            ));
        }
        let candidates = Bitmap::try_from(&request.candidates)
            .map_err(|e| Error::invalid(format!("select/hostile: candidates: {}", e.message)))?;
        let ignore_usage = request.mode == JobTestMode::TestOnly;
        let want = request.min_nodes.max(1) as usize;
        let picked: Vec<u32> = candidates
            .ones()
            .map(|i| i as u32)
            .filter(|&i| (i as usize) < self.nodes.len())
            .filter(|&i| ignore_usage || !self.held(i))
            .take(want)
            .collect();
        if picked.len() < want {
            return Err(Error::new(
                ESLURM_NODES_BUSY,
                format!(
                    "select/hostile: job {}: {want} nodes wanted, {} free among the candidates",
                    request.job.job_id,
                    picked.len()
                ),
            ));
        }
        let will_run = matches!(
            request.mode,
            JobTestMode::WillRun | JobTestMode::Reservation
        );
        let mut resources = self.whole_nodes(&picked);
        if will_run {
            resources.per_node.clear();
        }
        Ok(JobTestResult {
            resources,
            start_time: will_run.then_some(now),
            preemptees: Vec::new(),
        })
    }

    /// Whole-node resources of `picked` (node indices, ascending).
    pub fn whole_nodes(&self, picked: &[u32]) -> JobResources {
        let per_node: Vec<NodeResources> = picked
            .iter()
            .filter_map(|&i| self.nodes.get(i as usize))
            .map(|node| NodeResources {
                node_index: node.index,
                cores: Bitmap::full(cores_of(node) as usize).into(),
                cpus: node.cpus,
                memory: node.real_memory,
                gres: Vec::new(),
            })
            .collect();
        JobResources {
            nodes: self.node_map(picked.iter().copied()),
            ncpus: per_node.iter().map(|n| u32::from(n.cpus)).sum(),
            per_node,
            whole_nodes: true,
        }
    }

    /// `job-expand`: `to` takes every node of both jobs, whole; `from` no
    /// longer runs.
    pub fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        let mut nodes: Vec<u32> = [from, to]
            .iter()
            .filter_map(|job| job.resources.as_ref())
            .filter_map(|r| Bitmap::try_from(&r.nodes).ok())
            .flat_map(|map| map.ones().map(|i| i as u32).collect::<Vec<_>>())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        if nodes.is_empty() {
            return Err(Error::invalid(format!(
                "select/hostile: jobs {} and {} hold no nodes",
                from.job_id, to.job_id
            )));
        }
        self.running.remove(&from.job_id);
        self.running.insert(to.job_id, nodes.clone());
        Ok(self.whole_nodes(&nodes))
    }

    /// `resv-test`: the first `node-count` available nodes; for a core
    /// count, the lowest cores not excluded, node after node over the
    /// available nodes (at most `node-count` of them when given).
    pub fn resv_test(&self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        let available = Bitmap::try_from(&request.available)
            .map_err(|e| Error::invalid(format!("select/hostile: available: {}", e.message)))?;
        let available: Vec<u32> = available
            .ones()
            .map(|i| i as u32)
            .filter(|&i| (i as usize) < self.nodes.len())
            .collect();
        let busy = |what: String| Error::new(ESLURM_NODES_BUSY, format!("select/hostile: {what}"));
        if request.core_count == 0 {
            let want = request.node_count as usize;
            if available.len() < want {
                return Err(busy(format!(
                    "{want} nodes wanted, {} available",
                    available.len()
                )));
            }
            return Ok(ReservationResult {
                nodes: self.node_map(available[..want].iter().copied()),
                cores: None,
            });
        }
        let excluded = request
            .excluded_cores
            .as_ref()
            .and_then(|b| Bitmap::try_from(b).ok());
        let offsets = self.core_offsets();
        let mut cores = Bitmap::new(self.total_cores() as usize);
        let mut nodes = Vec::new();
        let mut left = request.core_count;
        for i in available {
            if left == 0 || (request.node_count > 0 && nodes.len() == request.node_count as usize) {
                break;
            }
            let first = offsets[i as usize];
            let free = (first..first + cores_of(&self.nodes[i as usize]))
                .filter(|&c| !excluded.as_ref().is_some_and(|x| x.get(c as usize)))
                .take(left as usize)
                .collect::<Vec<_>>();
            if free.is_empty() {
                continue;
            }
            left -= free.len() as u32;
            for c in free {
                cores.set(c as usize);
            }
            nodes.push(i);
        }
        if left > 0 {
            return Err(busy(format!(
                "{} cores wanted, {} free on the available nodes",
                request.core_count,
                request.core_count - left
            )));
        }
        Ok(ReservationResult {
            nodes: self.node_map(nodes),
            cores: Some(cores.into()),
        })
    }

    /// The first core of each node in the cluster-wide core map.
    pub fn core_offsets(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .scan(0, |next, node| {
                let first = *next;
                *next += cores_of(node);
                Some(first)
            })
            .collect()
    }

    /// Cores of the whole cluster (the length of a cluster-wide core map).
    pub fn total_cores(&self) -> u32 {
        self.nodes.iter().map(cores_of).sum()
    }

    /// A node-table-sized bitmap of `nodes`.
    pub fn node_map(&self, nodes: impl IntoIterator<Item = u32>) -> slurm_wasm_sdk::types::Bitmap {
        Bitmap::from_bits(self.nodes.len(), nodes.into_iter().map(|i| i as usize)).into()
    }

    /// Does a running job hold node `index`?
    pub fn held(&self, index: u32) -> bool {
        self.running.values().any(|nodes| nodes.contains(&index))
    }

    /// `get-info-from-plugin`: not a consumable-resource plugin (0), no
    /// single job test, and the world as [`INFO_KEYS`]: `nodes=<count>`,
    /// `running=<ids, ascending, comma-separated>`, `initialised=<bool>`,
    /// `restored=<bytes>`, `cluster=<cluster-name of init>`.
    pub fn info(&self, field: PluginInfoField) -> PluginInfoValue {
        match field {
            PluginInfoField::CrPlugin => PluginInfoValue::Number(0),
            PluginInfoField::SingleJobTest => PluginInfoValue::Flag(false),
            PluginInfoField::ConfigInfo => {
                let running: Vec<String> = self.running.keys().map(u32::to_string).collect();
                let values = [
                    self.nodes.len().to_string(),
                    running.join(","),
                    self.config.is_some().to_string(),
                    self.restored.len().to_string(),
                    self.config
                        .as_ref()
                        .map(|c| c.cluster.cluster_name.clone())
                        .unwrap_or_default(),
                ];
                PluginInfoValue::Config(
                    INFO_KEYS
                        .iter()
                        .zip(values)
                        .map(|(key, value)| KeyValue {
                            key: key.to_string(),
                            value,
                        })
                        .collect(),
                )
            }
        }
    }

    /// Node `index`; `EINVAL` past the table.
    pub fn node(&self, index: u32) -> Result<&Node, Error> {
        self.nodes.get(index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "select/hostile: node index {index} is past the node table ({} nodes)",
                self.nodes.len()
            ))
        })
    }
}

/// Cores of `node` (the contract counts sockets over all boards).
pub fn cores_of(node: &Node) -> u32 {
    u32::from(node.sockets) * u32::from(node.cores_per_socket)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::select::JobTestFlags;
    use slurm_wasm_sdk::testkit::fixtures;

    fn world(nodes: u32) -> World {
        let mut w = World::default();
        w.init(SelectConfig {
            cluster: fixtures::cluster_config(),
            partitions: Vec::new(),
        });
        w.node_init(
            (0..nodes)
                .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000))
                .collect(),
        );
        w
    }

    fn request(w: &World, job_id: u32, min_nodes: u32, mode: JobTestMode) -> JobTestRequest {
        JobTestRequest {
            job: fixtures::job(job_id),
            candidates: w.node_map(0..w.nodes.len() as u32),
            min_nodes,
            max_nodes: min_nodes,
            req_nodes: min_nodes,
            mode,
            flags: JobTestFlags::empty(),
            preemptee_candidates: Vec::new(),
            excluded_cores: None,
        }
    }

    fn ones(map: &slurm_wasm_sdk::types::Bitmap) -> Vec<usize> {
        Bitmap::try_from(map).unwrap().ones().collect()
    }

    #[test]
    fn jobs_get_the_first_free_nodes_whole() {
        let mut w = world(4);
        let first = w
            .job_test(&request(&w, 1, 2, JobTestMode::RunNow), 0)
            .unwrap();
        assert_eq!(ones(&first.resources.nodes), [0, 1]);
        assert_eq!(first.resources.ncpus, 8);
        assert_eq!(first.resources.per_node.len(), 2);
        assert_eq!(first.start_time, None);
        let mut job = fixtures::job(1);
        job.resources = Some(first.resources);
        w.start(&job);
        let second = w
            .job_test(&request(&w, 2, 1, JobTestMode::RunNow), 0)
            .unwrap();
        assert_eq!(ones(&second.resources.nodes), [2]);
        // Test-only ignores usage; will-run answers nodes and a start.
        let test_only = w
            .job_test(&request(&w, 2, 1, JobTestMode::TestOnly), 0)
            .unwrap();
        assert_eq!(ones(&test_only.resources.nodes), [0]);
        let will_run = w
            .job_test(&request(&w, 2, 1, JobTestMode::WillRun), 77)
            .unwrap();
        assert!(will_run.resources.per_node.is_empty());
        assert_eq!(will_run.start_time, Some(77));
        let busy = w
            .job_test(&request(&w, 3, 3, JobTestMode::RunNow), 0)
            .unwrap_err();
        assert_eq!(busy.code, ESLURM_NODES_BUSY);
        w.finish(1);
        assert!(w.running.is_empty());
    }

    #[test]
    fn without_node_init_job_test_fails_naming_the_empty_table() {
        let w = World::default();
        let mut r = request(&world(2), 1, 1, JobTestMode::RunNow);
        r.candidates = Bitmap::new(0).into();
        let err = w.job_test(&r, 0).unwrap_err();
        assert!(
            err.message.contains("the node table has 0 nodes"),
            "{err:?}"
        );
    }

    #[test]
    fn config_info_reports_the_world() {
        let mut w = world(3);
        for id in [12, 5] {
            w.start(&fixtures::job(id));
        }
        w.state_restore(vec![1, 2, 3]);
        let PluginInfoValue::Config(pairs) = w.info(PluginInfoField::ConfigInfo) else {
            panic!("config-info answers key-values");
        };
        let pairs: Vec<(String, String)> = pairs.into_iter().map(|p| (p.key, p.value)).collect();
        let expected = [
            ("nodes", "3"),
            ("running", "5,12"),
            ("initialised", "true"),
            ("restored", "3"),
            ("cluster", fixtures::cluster_config().cluster_name.as_str()),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(pairs, expected);
        assert_eq!(w.state_save(), [5, 0, 0, 0, 12, 0, 0, 0]);
        // node-init discards the running jobs.
        w.node_init(Vec::new());
        assert!(w.running.is_empty());
    }
}
