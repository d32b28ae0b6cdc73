//! Checks of select plugins' answers beyond the allocation itself (issue
//! 26, class 11): the CPU count, the preemptees and the start of a
//! `job-test` answer, and what `job-expand`, `step-pick-nodes`,
//! `resv-test`, `get-info-from-plugin`, the nodeinfo and jobinfo getters
//! and `ba-get-dims` answer. Each rule keeps an answer inside what the
//! host offered or what the node table holds, so a plugin cannot hand the
//! controller (or the simulator, which sums `ncpus` into utilization) a
//! value nothing could have produced.

use std::collections::HashSet;

use super::{live_word, Checker};
use crate::bindings::types::{Bitmap, Job, JobResources, Node, NodeResources};
use crate::error::CallError;
use crate::kinds::select::{
    JobTestRequest, JobTestResult, JobinfoField, JobinfoValue, NodeinfoField, NodeinfoValue,
    PluginInfoField, PluginInfoValue, ReservationRequest, ReservationResult,
};

/// The latest start a `job-test` answer may give: 9999-12-31 23:59:59 UTC
/// (Slurm prints start times as four-digit years). The earliest is the
/// epoch: a start before 1970 is no time at all.
pub const LATEST_START: i64 = 253_402_300_799;

/// Most dimensions `ba-get-dims` may report (Slurm's `HIGHEST_DIMENSIONS`).
pub const MAX_DIMS: usize = 5;

/// Cores of `node` as the contract counts them: sockets (over all boards)
/// times cores per socket. Core maps and core indices use this.
pub(crate) fn node_cores(node: &Node) -> u32 {
    u32::from(node.sockets) * u32::from(node.cores_per_socket)
}

/// The first set bit of `map` that `allowed` does not hold (bits of
/// `allowed` at or past its length do not count).
fn first_outside(map: &Bitmap, allowed: &Bitmap) -> Option<u32> {
    map.words.iter().enumerate().find_map(|(q, &word)| {
        let outside = word & !live_word(allowed, q);
        (outside != 0).then(|| q as u32 * 64 + outside.trailing_zeros())
    })
}

/// Configured CPUs of the set nodes of `map` (nodes past the table count 0).
fn configured_cpus(map: &Bitmap, nodes: &[Node]) -> u64 {
    map.ones()
        .filter_map(|i| nodes.get(i as usize))
        .map(|n| u64::from(n.cpus))
        .sum()
}

/// A shared GRES: a device's shares (`mps`, `shard`), not devices.
fn shared_gres(name: &str) -> bool {
    name == "mps" || name == "shard"
}

/// How many of GRES `name` `node` has: its `Gres=` count, or its gres.conf
/// groups' when larger (counts of every type together).
fn gres_count(node: &Node, name: &str) -> u64 {
    let configured: u64 = node
        .gres
        .iter()
        .filter(|g| g.name == name)
        .map(|g| g.count)
        .fold(0, u64::saturating_add);
    let grouped: u64 = node
        .gres_topology
        .iter()
        .filter(|g| g.name == name)
        .map(|g| g.count)
        .fold(0, u64::saturating_add);
    configured.max(grouped)
}

/// Devices of GRES `name` on `node`, numbered as the contract numbers them
/// (`gres-device-group`): a group's count of devices, one device per group
/// of a shared GRES; without gres.conf groups, the `Gres=` count, and for
/// a shared GRES one device per GPU (at least one).
fn gres_devices(node: &Node, name: &str) -> u64 {
    if node.gres_topology.is_empty() {
        return if shared_gres(name) {
            gres_count(node, "gpu").max(1)
        } else {
            gres_count(node, name)
        };
    }
    node.gres_topology
        .iter()
        .filter(|g| g.name == name)
        .map(|g| if shared_gres(name) { 1 } else { g.count })
        .fold(0, u64::saturating_add)
}

impl Checker<'_> {
    /// The GRES of one node of an allocation: no more of a name than the
    /// node has, device indices among its devices of that name.
    pub fn node_gres(&self, entry: &NodeResources, node: &Node) -> Result<(), CallError> {
        self.items("gres", entry.gres.len())?;
        for g in &entry.gres {
            self.text("gres name", &g.name)?;
            let has = gres_count(node, &g.name);
            if g.count > has {
                return Err(self.fail(format!(
                    "{} {} allocated on {}, which has {has}",
                    g.count, g.name, node.name
                )));
            }
            if let Some(devices) = &g.devices {
                self.bitmap("gres devices", devices)?;
                let count = gres_devices(node, &g.name);
                if let Some(last) = devices.ones().last() {
                    if u64::from(last) >= count {
                        return Err(self.fail(format!(
                            "{} device {last} allocated on {}, which has {count}",
                            g.name, node.name
                        )));
                    }
                }
            }
            self.items("per-device", g.per_device.len())?;
        }
        Ok(())
    }

    /// `ncpus` of a checked allocation: never more than `limit` (the CPUs
    /// the answer may account for) and, with `exact`, the sum of its
    /// per-node CPUs when it has per-node entries, or at least that sum
    /// for whole nodes (Slurm's `total_cpus` counts every CPU of a whole
    /// node, its per-node count only the threads `--threads-per-core`
    /// leaves the job).
    fn ncpus(
        &self,
        resources: &JobResources,
        limit: u64,
        of_what: &str,
        exact: bool,
    ) -> Result<(), CallError> {
        let ncpus = u64::from(resources.ncpus);
        if exact && !resources.per_node.is_empty() {
            let sum: u64 = resources.per_node.iter().map(|n| u64::from(n.cpus)).sum();
            if ncpus != sum && !(resources.whole_nodes && ncpus > sum) {
                return Err(self.fail(format!(
                    "ncpus = {ncpus}, but the per-node entries hold {sum} CPUs"
                )));
            }
        }
        if ncpus > limit {
            return Err(self.fail(format!(
                "ncpus = {ncpus}, more than the {limit} CPUs of {of_what}"
            )));
        }
        Ok(())
    }

    /// A `job-test` answer: the allocation inside the candidates and the
    /// node table ([`Checker::job_resources`]), `ncpus` within the chosen
    /// nodes' CPUs, preemptees among the request's candidates (each once),
    /// and a start between the epoch and [`LATEST_START`].
    pub fn job_test_result(
        &self,
        request: &JobTestRequest,
        result: &JobTestResult,
        nodes: &[Node],
        nodes_only: bool,
    ) -> Result<(), CallError> {
        self.job_resources(
            &result.resources,
            Some(&request.candidates),
            nodes,
            nodes_only,
        )?;
        self.ncpus(
            &result.resources,
            configured_cpus(&result.resources.nodes, nodes),
            "the chosen nodes",
            true,
        )?;
        self.preemptees(request, &result.preemptees)?;
        if let Some(start) = result.start_time {
            if !(0..=LATEST_START).contains(&start) {
                return Err(self.fail(format!(
                    "start-time {start} is outside 0..={LATEST_START} (the epoch to the end of year 9999)"
                )));
            }
        }
        Ok(())
    }

    /// Preemptees: each one of the request's candidates, named once.
    fn preemptees(&self, request: &JobTestRequest, preemptees: &[u32]) -> Result<(), CallError> {
        if preemptees.is_empty() {
            return Ok(());
        }
        let candidates: HashSet<u32> = request
            .preemptee_candidates
            .iter()
            .map(|c| c.job_id)
            .collect();
        let mut seen = HashSet::with_capacity(preemptees.len());
        for &id in preemptees {
            if !candidates.contains(&id) {
                return Err(self.fail(format!(
                    "preemptee {id} is not among the {} preemption candidates offered",
                    candidates.len()
                )));
            }
            if !seen.insert(id) {
                return Err(self.fail(format!("preemptee {id} is named twice")));
            }
        }
        Ok(())
    }

    /// A `job-expand` answer: the nodes of the two jobs only, and no more
    /// CPUs than the two jobs held together or the nodes have (select/linear
    /// adds the two CPU counts, which pass both the nodes' CPUs and the
    /// per-node entries where the jobs shared a node).
    pub fn job_expand_result(
        &self,
        from: &Job,
        to: &Job,
        resources: &JobResources,
        nodes: &[Node],
    ) -> Result<(), CallError> {
        let held = Bitmap::with_ones(
            resources.nodes.len,
            [from, to]
                .iter()
                .filter_map(|job| job.resources.as_ref())
                .flat_map(|r| r.nodes.ones())
                .filter(|&i| i < resources.nodes.len),
        );
        if let Some(bad) = first_outside(&resources.nodes, &held) {
            return Err(self.fail(format!(
                "node {bad} was given to job {} but neither job {} nor job {} held it",
                to.job_id, from.job_id, to.job_id
            )));
        }
        self.job_resources(resources, None, nodes, false)?;
        let together: u64 = [from, to]
            .iter()
            .filter_map(|job| job.resources.as_ref())
            .map(|r| u64::from(r.ncpus))
            .sum();
        let limit = together.max(configured_cpus(&resources.nodes, nodes));
        self.ncpus(resources, limit, "the two jobs and their nodes", false)
    }

    /// A `step-pick-nodes` answer: a node-table map of nodes `available`
    /// offers (the job's own nodes when it offers none), `node_count` of
    /// them when that is given, at least one.
    pub fn picked_step_nodes(
        &self,
        job: &Job,
        node_count: u32,
        available: Option<&Bitmap>,
        picked: &Bitmap,
    ) -> Result<(), CallError> {
        self.bitmap("picked nodes", picked)?;
        let (offered, what) = match (available, &job.resources) {
            (Some(map), _) => (map, "the available nodes"),
            (None, Some(r)) => (&r.nodes, "the job's nodes"),
            (None, None) => {
                return Err(self.fail(format!(
                    "nodes picked for job {}, which holds none, and none were offered",
                    job.job_id
                )))
            }
        };
        if picked.len != offered.len {
            return Err(self.fail(format!(
                "picked nodes: a map of {} bits where {what} have {}",
                picked.len, offered.len
            )));
        }
        if let Some(bad) = first_outside(picked, offered) {
            return Err(self.fail(format!("node {bad} was picked but is not among {what}")));
        }
        let count = picked.ones().count();
        if count == 0 || (node_count > 0 && count != node_count as usize) {
            return Err(self.fail(format!(
                "{count} nodes picked for a step of {node_count} nodes"
            )));
        }
        Ok(())
    }

    /// A `step-avail-nodes` answer: a map over the node table (as long as
    /// the job's node map) of nodes the job holds; it may be empty (no
    /// step fits until it changes).
    pub fn step_avail_nodes(&self, job: &Job, avail: &Bitmap) -> Result<(), CallError> {
        self.bitmap("nodes available to steps", avail)?;
        let Some(resources) = &job.resources else {
            return Err(self.fail(format!(
                "nodes available to steps of job {}, which holds none",
                job.job_id
            )));
        };
        if avail.len != resources.nodes.len {
            return Err(self.fail(format!(
                "nodes available to steps: a map of {} bits where the job's nodes have {}",
                avail.len, resources.nodes.len
            )));
        }
        if let Some(bad) = first_outside(avail, &resources.nodes) {
            return Err(self.fail(format!(
                "node {bad} is available to steps but is not among the job's nodes"
            )));
        }
        Ok(())
    }

    /// A `resv-test` answer: nodes among the available ones (exactly
    /// `node-count` for a node reservation, no more than asked for a core
    /// reservation), and cores, when given, in a cluster-wide map, each on a
    /// chosen node, none excluded, no more than asked.
    pub fn reservation(
        &self,
        request: &ReservationRequest,
        result: &ReservationResult,
        nodes: &[Node],
    ) -> Result<(), CallError> {
        self.bitmap("nodes", &result.nodes)?;
        if result.nodes.len != request.available.len {
            return Err(self.fail(format!(
                "nodes: a map of {} bits where the available nodes have {}",
                result.nodes.len, request.available.len
            )));
        }
        if let Some(bad) = first_outside(&result.nodes, &request.available) {
            return Err(self.fail(format!(
                "node {bad} was reserved but is not among the available nodes"
            )));
        }
        let picked = result.nodes.ones().count() as u64;
        let per_node: Vec<u64> = request
            .cores_per_node
            .iter()
            .take_while(|&&c| c > 0)
            .map(|&c| u64::from(c))
            .collect();
        let node_count = u64::from(request.node_count);
        let core_count = u64::from(request.core_count);
        if request.core_count == 0 && per_node.is_empty() {
            if picked != node_count {
                return Err(self.fail(format!(
                    "{picked} nodes reserved for a reservation of {node_count} nodes"
                )));
            }
        } else {
            let most = match node_count.max(per_node.len() as u64) {
                0 => core_count,
                n => n,
            };
            if picked > most {
                return Err(self.fail(format!(
                    "{picked} nodes reserved where at most {most} were asked for"
                )));
            }
        }
        match &result.cores {
            Some(cores) => self.reserved_cores(request, &result.nodes, cores, nodes, &per_node),
            None => Ok(()),
        }
    }

    /// The cores of a core reservation (see [`Checker::reservation`]).
    fn reserved_cores(
        &self,
        request: &ReservationRequest,
        chosen: &Bitmap,
        cores: &Bitmap,
        nodes: &[Node],
        per_node: &[u64],
    ) -> Result<(), CallError> {
        self.bitmap("cores", cores)?;
        let total: u64 = nodes.iter().map(|n| u64::from(node_cores(n))).sum();
        if u64::from(cores.len) != total {
            return Err(self.fail(format!(
                "cores: a map of {} bits where the cluster has {total} cores",
                cores.len
            )));
        }
        if let Some(excluded) = &request.excluded_cores {
            let taken = cores.words.iter().enumerate().find_map(|(q, &w)| {
                let both = w & live_word(excluded, q);
                (both != 0).then(|| q as u32 * 64 + both.trailing_zeros())
            });
            if let Some(core) = taken {
                return Err(self.fail(format!("core {core} was reserved but is excluded")));
            }
        }
        // Both walks ascend: each core's node is found by moving forward.
        let mut node = 0usize;
        let mut first = 0u64;
        let mut count = 0u64;
        for core in cores.ones() {
            let core = u64::from(core);
            while core >= first + u64::from(node_cores(&nodes[node])) {
                first += u64::from(node_cores(&nodes[node]));
                node += 1;
            }
            if live_word(chosen, node / 64) >> (node % 64) & 1 == 0 {
                return Err(self.fail(format!(
                    "core {core} (core {} of {}) was reserved on a node the answer did not choose",
                    core - first,
                    nodes[node].name
                )));
            }
            count += 1;
        }
        let asked = u64::from(request.core_count)
            .max(per_node.iter().sum())
            .max(u64::from(request.node_count));
        if count > asked {
            return Err(self.fail(format!(
                "{count} cores reserved where {asked} were asked for"
            )));
        }
        Ok(())
    }

    /// A `get-info-from-plugin` answer: the value kind the field reads
    /// (`cr-plugin`: a number 0, 1 or 2; `config-info`: key/value pairs;
    /// `single-job-test`: a flag).
    pub fn plugin_info(
        &self,
        field: PluginInfoField,
        value: &PluginInfoValue,
    ) -> Result<(), CallError> {
        match (field, value) {
            (PluginInfoField::CrPlugin, PluginInfoValue::Number(n)) if *n <= 2 => Ok(()),
            (PluginInfoField::CrPlugin, PluginInfoValue::Number(n)) => Err(self.fail(format!(
                "cr-plugin = {n}; Slurm knows 0 (whole nodes), 1 (cons_res) and 2 (cons_tres)"
            ))),
            (PluginInfoField::ConfigInfo, PluginInfoValue::Config(pairs)) => {
                self.items("config-info", pairs.len())?;
                for pair in pairs {
                    self.text("config-info key", &pair.key)?;
                    self.text("config-info value", &pair.value)?;
                }
                Ok(())
            }
            (PluginInfoField::SingleJobTest, PluginInfoValue::Flag(_)) => Ok(()),
            (field, value) => Err(self.fail(format!(
                "{} answered with {}",
                plugin_info_name(field),
                plugin_info_kind(value)
            ))),
        }
    }

    /// A `select-nodeinfo.get` answer: the value kind the field reads, and
    /// within what the largest node of the table has (CPUs, memory); a
    /// finite, non-negative weight; never a value for `ptr`.
    pub fn nodeinfo_value(
        &self,
        field: NodeinfoField,
        value: &NodeinfoValue,
        nodes: &[Node],
    ) -> Result<(), CallError> {
        let most_cpus = nodes.iter().map(|n| n.cpus).max();
        let most_memory = nodes.iter().map(|n| n.real_memory).max();
        match (field, value) {
            (NodeinfoField::Subcnt, NodeinfoValue::Count(cpus)) => match most_cpus {
                Some(most) if cpus > &most => Err(self.fail(format!(
                    "subcnt = {cpus} CPUs, more than any node has ({most})"
                ))),
                _ => Ok(()),
            },
            (NodeinfoField::MemAlloc, NodeinfoValue::Memory(mb)) => match most_memory {
                Some(most) if mb > &most => Err(self.fail(format!(
                    "mem-alloc = {mb} MB, more than any node has ({most} MB)"
                ))),
                _ => Ok(()),
            },
            (NodeinfoField::TresAllocFmtStr, NodeinfoValue::Text(text)) => {
                self.text("tres-alloc-fmt-str", text)
            }
            (NodeinfoField::TresAllocWeighted, NodeinfoValue::Weighted(w)) => {
                if w.is_finite() && *w >= 0.0 {
                    Ok(())
                } else {
                    Err(self.fail(format!(
                        "tres-alloc-weighted = {w}: a weight must be finite and not negative"
                    )))
                }
            }
            (field, value) => Err(self.fail(format!(
                "{} answered with {}",
                nodeinfo_name(field),
                nodeinfo_kind(value)
            ))),
        }
    }

    /// A `select-jobinfo.get` answer: `network` is a text, `cleaning` a
    /// flag, `ptr` never has a value.
    pub fn jobinfo_value(
        &self,
        field: JobinfoField,
        value: &JobinfoValue,
    ) -> Result<(), CallError> {
        match (field, value) {
            (JobinfoField::Network, JobinfoValue::Text(text)) => self.text("network", text),
            (JobinfoField::Cleaning, JobinfoValue::Flag(_)) => Ok(()),
            (field, value) => Err(self.fail(format!(
                "{} answered with {}",
                jobinfo_name(field),
                jobinfo_kind(value)
            ))),
        }
    }

    /// A `ba-get-dims` answer: at most [`MAX_DIMS`] dimensions.
    pub fn dims(&self, dims: &[u32]) -> Result<(), CallError> {
        if dims.len() > MAX_DIMS {
            return Err(self.fail(format!(
                "{} dimensions, more than Slurm's {MAX_DIMS}",
                dims.len()
            )));
        }
        Ok(())
    }
}

// The contract's names of the fields, for messages.

fn plugin_info_name(field: PluginInfoField) -> &'static str {
    match field {
        PluginInfoField::CrPlugin => "cr-plugin",
        PluginInfoField::ConfigInfo => "config-info",
        PluginInfoField::SingleJobTest => "single-job-test",
    }
}

fn nodeinfo_name(field: NodeinfoField) -> &'static str {
    match field {
        NodeinfoField::Subcnt => "subcnt",
        NodeinfoField::Ptr => "ptr",
        NodeinfoField::MemAlloc => "mem-alloc",
        NodeinfoField::TresAllocFmtStr => "tres-alloc-fmt-str",
        NodeinfoField::TresAllocWeighted => "tres-alloc-weighted",
    }
}

fn jobinfo_name(field: JobinfoField) -> &'static str {
    match field {
        JobinfoField::Network => "network",
        JobinfoField::Ptr => "ptr",
        JobinfoField::Cleaning => "cleaning",
    }
}

fn plugin_info_kind(value: &PluginInfoValue) -> &'static str {
    match value {
        PluginInfoValue::Flag(_) => "a flag",
        PluginInfoValue::Number(_) => "a number",
        PluginInfoValue::Config(_) => "key/value pairs",
    }
}

fn nodeinfo_kind(value: &NodeinfoValue) -> &'static str {
    match value {
        NodeinfoValue::Count(_) => "a count",
        NodeinfoValue::Memory(_) => "a memory size",
        NodeinfoValue::Text(_) => "a text",
        NodeinfoValue::Weighted(_) => "a weight",
    }
}

fn jobinfo_kind(value: &JobinfoValue) -> &'static str {
    match value {
        JobinfoValue::Text(_) => "a text",
        JobinfoValue::Flag(_) => "a flag",
        JobinfoValue::Count(_) => "a count",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{GresAllocation, GresCount};
    use crate::fixtures::{bitmap, job, node};

    use crate::validate::testing::{reason, C};

    /// 4 nodes of 1 socket x 4 cores, 1,000 MB.
    fn cluster() -> Vec<Node> {
        (0..4)
            .map(|i| node(i, &format!("n{i}"), 1, 4, 1, 1000))
            .collect()
    }

    /// Whole-node resources on `nodes` of [`cluster`], `ncpus` as given.
    fn whole(nodes: &[u32], ncpus: u32) -> JobResources {
        JobResources {
            nodes: bitmap(4, nodes.iter().copied()),
            ncpus,
            per_node: nodes
                .iter()
                .map(|&i| NodeResources {
                    node_index: i,
                    cores: bitmap(4, 0..4),
                    cpus: 4,
                    memory: 0,
                    gres: Vec::new(),
                })
                .collect(),
            whole_nodes: true,
        }
    }

    fn running(id: u32, nodes: &[u32]) -> Job {
        Job {
            resources: Some(whole(nodes, 4 * nodes.len() as u32)),
            ..job(id)
        }
    }

    #[test]
    fn ncpus_follows_the_entries_and_the_nodes() {
        assert!(C.ncpus(&whole(&[0, 1], 8), 8, "x", true).is_ok());
        let mut shared = whole(&[0, 1], 9);
        shared.whole_nodes = false;
        assert_eq!(
            reason(C.ncpus(&shared, 8, "the chosen nodes", true)),
            "ncpus = 9, but the per-node entries hold 8 CPUs"
        );
        // A whole node's total may pass its per-node counts
        // (`--threads-per-core=1` under CR_CPU), not its CPUs.
        let mut threads = whole(&[0, 1], 8);
        threads.per_node.iter_mut().for_each(|n| n.cpus = 2);
        assert!(C.ncpus(&threads, 8, "x", true).is_ok());
        assert_eq!(
            reason(C.ncpus(&whole(&[0, 1], 9), 8, "the chosen nodes", true)),
            "ncpus = 9, more than the 8 CPUs of the chosen nodes"
        );
        let mut nodes_only = whole(&[0, 1], u32::MAX);
        nodes_only.per_node.clear();
        assert_eq!(
            reason(C.ncpus(&nodes_only, 8, "the chosen nodes", true)),
            "ncpus = 4294967295, more than the 8 CPUs of the chosen nodes"
        );
    }

    /// select/linear adds the two jobs' CPU counts, which may pass the
    /// nodes' CPUs where the jobs shared a node: accepted; more is not.
    #[test]
    fn job_expand_may_add_cpus_of_jobs_that_shared_nodes() {
        let nodes = cluster();
        let (from, to) = (running(1, &[0]), running(2, &[0, 1]));
        let mut merged = whole(&[0, 1], 12);
        assert!(C.job_expand_result(&from, &to, &merged, &nodes).is_ok());
        merged.ncpus = 13;
        assert_eq!(
            reason(C.job_expand_result(&from, &to, &merged, &nodes)),
            "ncpus = 13, more than the 12 CPUs of the two jobs and their nodes"
        );
        assert_eq!(
            reason(C.job_expand_result(&from, &to, &whole(&[0, 1, 2], 12), &nodes)),
            "node 2 was given to job 2 but neither job 1 nor job 2 held it"
        );
    }

    #[test]
    fn step_nodes_come_from_the_offer_or_the_job() {
        let job = running(1, &[1, 2]);
        assert!(C.picked_step_nodes(&job, 1, None, &bitmap(4, [2])).is_ok());
        assert_eq!(
            reason(C.picked_step_nodes(&job, 1, None, &bitmap(4, [3]))),
            "node 3 was picked but is not among the job's nodes"
        );
        let offer = bitmap(4, [0, 3]);
        assert!(C.picked_step_nodes(&job, 0, Some(&offer), &offer).is_ok());
        assert_eq!(
            reason(C.picked_step_nodes(&job, 2, Some(&offer), &bitmap(4, [0]))),
            "1 nodes picked for a step of 2 nodes"
        );
        assert_eq!(
            reason(C.picked_step_nodes(&job, 1, Some(&offer), &bitmap(3, [0]))),
            "picked nodes: a map of 3 bits where the available nodes have 4"
        );
    }

    /// `select-steps.step-avail-nodes`: some of the job's nodes, none
    /// included, in a map as long as the job's.
    #[test]
    fn nodes_available_to_steps_are_the_jobs() {
        let job = running(1, &[1, 2]);
        assert!(C.step_avail_nodes(&job, &bitmap(4, [2])).is_ok());
        assert!(C.step_avail_nodes(&job, &bitmap(4, [])).is_ok());
        assert_eq!(
            reason(C.step_avail_nodes(&job, &bitmap(4, [0, 2]))),
            "node 0 is available to steps but is not among the job's nodes"
        );
        assert_eq!(
            reason(C.step_avail_nodes(&job, &bitmap(3, [1]))),
            "nodes available to steps: a map of 3 bits where the job's nodes have 4"
        );
        let mut pending = job.clone();
        pending.resources = None;
        assert_eq!(
            reason(C.step_avail_nodes(&pending, &bitmap(4, [1]))),
            "nodes available to steps of job 1, which holds none"
        );
    }

    fn resv(node_count: u32, core_count: u32, available: &[u32]) -> ReservationRequest {
        ReservationRequest {
            node_count,
            core_count,
            cores_per_node: Vec::new(),
            available: bitmap(4, available.iter().copied()),
            excluded_cores: None,
            flags: 0,
        }
    }

    #[test]
    fn reservations_stay_inside_the_offer_and_the_ask() {
        let nodes = cluster();
        let answer = |n: &[u32], cores: Option<&[u32]>| ReservationResult {
            nodes: bitmap(4, n.iter().copied()),
            cores: cores.map(|c| bitmap(16, c.iter().copied())),
        };
        let node_resv = resv(2, 0, &[0, 1, 2]);
        assert!(C
            .reservation(&node_resv, &answer(&[0, 2], None), &nodes)
            .is_ok());
        assert_eq!(
            reason(C.reservation(&node_resv, &answer(&[0], None), &nodes)),
            "1 nodes reserved for a reservation of 2 nodes"
        );
        assert_eq!(
            reason(C.reservation(&node_resv, &answer(&[0, 3], None), &nodes)),
            "node 3 was reserved but is not among the available nodes"
        );
        // Five cores over two nodes, as cons_tres takes them.
        let mut core_resv = resv(0, 5, &[1, 2, 3]);
        let cores = [4, 5, 6, 7, 8];
        assert!(C
            .reservation(&core_resv, &answer(&[1, 2], Some(&cores)), &nodes)
            .is_ok());
        assert_eq!(
            reason(C.reservation(&core_resv, &answer(&[1], Some(&cores)), &nodes)),
            "core 8 (core 0 of n2) was reserved on a node the answer did not choose"
        );
        assert_eq!(
            reason(C.reservation(
                &core_resv,
                &answer(&[1, 2], Some(&[4, 5, 6, 7, 8, 9])),
                &nodes
            )),
            "6 cores reserved where 5 were asked for"
        );
        core_resv.excluded_cores = Some(bitmap(16, [6]));
        assert_eq!(
            reason(C.reservation(&core_resv, &answer(&[1, 2], Some(&cores)), &nodes)),
            "core 6 was reserved but is excluded"
        );
        // A core reservation a plugin answers with nodes only (linear).
        assert!(C
            .reservation(&resv(1, 2, &[0, 1]), &answer(&[0], None), &nodes)
            .is_ok());
    }

    #[test]
    fn gres_stay_within_the_nodes() {
        let mut n = node(0, "g0", 1, 4, 1, 1000);
        n.gres = vec![
            GresCount {
                name: "gpu".into(),
                type_name: None,
                count: 2,
            },
            GresCount {
                name: "mps".into(),
                type_name: None,
                count: 200,
            },
        ];
        let entry = |name: &str, count: u64, devices: &[u32]| NodeResources {
            node_index: 0,
            cores: bitmap(4, [0]),
            cpus: 1,
            memory: 0,
            gres: vec![GresAllocation {
                name: name.into(),
                type_name: None,
                count,
                devices: Some(bitmap(4, devices.iter().copied())),
                per_device: Vec::new(),
            }],
        };
        assert!(C.node_gres(&entry("gpu", 2, &[0, 1]), &n).is_ok());
        assert!(C.node_gres(&entry("mps", 150, &[1]), &n).is_ok());
        assert_eq!(
            reason(C.node_gres(&entry("gpu", 1, &[2]), &n)),
            "gpu device 2 allocated on g0, which has 2"
        );
        assert_eq!(
            reason(C.node_gres(&entry("gpu", u64::MAX, &[0]), &n)),
            "18446744073709551615 gpu allocated on g0, which has 2"
        );
        assert_eq!(
            reason(C.node_gres(&entry("mps", 50, &[2]), &n)),
            "mps device 2 allocated on g0, which has 2"
        );
    }

    #[test]
    fn info_values_match_their_field() {
        let nodes = cluster();
        assert!(C
            .nodeinfo_value(NodeinfoField::Subcnt, &NodeinfoValue::Count(4), &nodes)
            .is_ok());
        assert_eq!(
            reason(C.nodeinfo_value(
                NodeinfoField::MemAlloc,
                &NodeinfoValue::Memory(1001),
                &nodes
            )),
            "mem-alloc = 1001 MB, more than any node has (1000 MB)"
        );
        assert_eq!(
            reason(C.nodeinfo_value(NodeinfoField::Ptr, &NodeinfoValue::Count(0), &nodes)),
            "ptr answered with a count"
        );
        assert_eq!(
            reason(C.plugin_info(PluginInfoField::CrPlugin, &PluginInfoValue::Number(7))),
            "cr-plugin = 7; Slurm knows 0 (whole nodes), 1 (cons_res) and 2 (cons_tres)"
        );
        assert!(C
            .jobinfo_value(JobinfoField::Cleaning, &JobinfoValue::Flag(false))
            .is_ok());
        assert!(C.dims(&[1; MAX_DIMS]).is_ok());
    }
}
