//! Usage-table transitions (`job_res_add_job` and `job_res_rm_job`,
//! cons_common/job_resources.c).
//!
//! Mapping to this contract: Slurm's `select_p_job_begin` does nothing and
//! the controller's `select_p_select_nodeinfo_set(job)` right after the
//! allocation adds the job. Here the host calls `job-begin` when a job
//! starts, so `job-begin` adds the job; `nodeinfo-set` afterwards only adds
//! a job the tables do not know yet, so `job-begin` then `nodeinfo-set`
//! never counts a job twice.

use slurm_wasm_sdk::types::{GresAllocation, Job, JobResources, JobState, NodeResources};
use slurm_wasm_sdk::Error;

use slurm_wasm_sdk::Bitmap;
use std::collections::BTreeMap;

use crate::node_usage::{is_shared, NodeRec, NodeUse};
use crate::params::Unit;
use crate::rows::PartRows;
use crate::{ConsTres, JobRec, NodeAlloc, Usage};

/// Which part of a job an add/remove touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Cores, rows, memory, GRES, node_state, job lists.
    Normal,
    /// Memory and GRES only.
    Suspend,
    /// Cores, rows and node_state only.
    Resume,
}

impl ConsTres {
    /// The contract's `job-resources` of `rec`.
    pub fn to_resources(&self, rec: &JobRec) -> JobResources {
        let mut nodes = Bitmap::new(self.recs.len());
        let mut per_node = Vec::new();
        let ncpus = self.total_cpus(rec);
        for n in &rec.nodes {
            nodes.set(n.node);
            let r = &self.recs[n.node];
            let mut gres: Vec<GresAllocation> = Vec::new();
            for &(dev, amount) in &n.gres {
                let d = &r.devices[dev];
                let count_of_name = r.devices.iter().filter(|x| x.name == d.name).count();
                let entry = match gres
                    .iter_mut()
                    .position(|g| g.name == d.name && g.type_name == d.type_name)
                {
                    Some(i) => &mut gres[i],
                    None => {
                        gres.push(GresAllocation {
                            name: d.name.clone(),
                            type_name: d.type_name.clone(),
                            count: 0,
                            devices: Some(Bitmap::new(count_of_name).into()),
                            per_device: Vec::new(),
                        });
                        gres.last_mut().expect("just pushed")
                    }
                };
                entry.count += amount;
                if let Some(b) = &mut entry.devices {
                    let i = d.index as usize;
                    b.words[i / 64] |= 1 << (i % 64);
                }
                if is_shared(&d.name) {
                    entry.per_device.push(amount);
                }
            }
            per_node.push(NodeResources {
                node_index: n.node as u32,
                cores: (&n.cores).into(),
                cpus: n.cpus.min(u16::MAX as u32) as u16,
                memory: n.memory,
                gres,
            });
        }
        JobResources {
            nodes: (&nodes).into(),
            ncpus,
            per_node,
            whole_nodes: rec.whole_node,
        }
    }

    /// The job's CPU count (`total_cpus`, cons_common/job_test.c
    /// `_job_test`, set before it returns for every mode, so also what a
    /// will-run answer reports): for a whole-node job every usable CPU of
    /// its nodes (`cpus_efctv`), whatever its per-node counts say (they
    /// stay what `--threads-per-core` leaves it of each core, and memory
    /// per CPU counts those); under `CR_Socket` every CPU of each socket
    /// its cores touch; otherwise the CPUs it holds on each node.
    fn total_cpus(&self, rec: &JobRec) -> u32 {
        rec.nodes
            .iter()
            .map(|n| {
                let r = &self.recs[n.node];
                if rec.whole_node {
                    n.cores.count() as u32 * r.tpc as u32
                } else if self.params.unit == Unit::Socket {
                    let per_socket = r.cores_per_socket as usize;
                    let touched = (0..r.sockets as usize)
                        .filter(|s| (s * per_socket..(s + 1) * per_socket).any(|c| n.cores.get(c)))
                        .count() as u32;
                    touched * r.cores_per_socket as u32 * r.tpc as u32
                } else {
                    n.cpus
                }
            })
            .sum()
    }

    /// The will-run answer of `rec`: its nodes and CPU count, no per-node
    /// entries.
    pub fn to_nodes_only(&self, rec: &JobRec) -> JobResources {
        let mut nodes = Bitmap::new(self.recs.len());
        for n in &rec.nodes {
            nodes.set(n.node);
        }
        JobResources {
            nodes: (&nodes).into(),
            ncpus: self.total_cpus(rec),
            per_node: Vec::new(),
            whole_nodes: rec.whole_node,
        }
    }

    /// Builds the record of a running or suspended `job` from its resources.
    pub fn job_rec(&self, job: &Job) -> Result<JobRec, String> {
        let res = job.resources.as_ref().ok_or_else(|| {
            format!(
                "job {}: no resources (the job must carry its allocation)",
                job.job_id
            )
        })?;
        let mut nodes = Vec::new();
        for nr in &res.per_node {
            let i = nr.node_index as usize;
            let r: &NodeRec = self.recs.get(i).ok_or_else(|| {
                format!(
                    "job {}: node index {i} is outside the node table ({} nodes)",
                    job.job_id,
                    self.recs.len()
                )
            })?;
            let cores = Bitmap::from_words(nr.cores.len, &nr.cores.words)
                .map_err(|e| format!("job {}: cores of node {i}: {e}", job.job_id))?;
            if cores.len() != r.cores as usize {
                return Err(format!(
                    "job {}: core bitmap of node {} has {} bits, the node has {} cores",
                    job.job_id,
                    r.name,
                    cores.len(),
                    r.cores
                ));
            }
            let mut gres = Vec::new();
            for g in &nr.gres {
                let devs: Vec<usize> = (0..r.devices.len())
                    .filter(|&d| {
                        r.devices[d].name == g.name && r.devices[d].type_name == g.type_name
                    })
                    .collect();
                let picked: Vec<usize> = match &g.devices {
                    Some(b) => {
                        let b = Bitmap::from_words(b.len, &b.words).map_err(|e| {
                            format!("job {}: gres {} devices: {e}", job.job_id, g.name)
                        })?;
                        b.ones()
                            .map(|k| {
                                r.devices
                                    .iter()
                                    .position(|d| d.name == g.name && d.index as usize == k)
                                    .ok_or_else(|| {
                                        format!(
                                            "job {}: node {} has no {} device {k}",
                                            job.job_id, r.name, g.name
                                        )
                                    })
                            })
                            .collect::<Result<_, _>>()?
                    }
                    None => devs.iter().copied().take(g.count as usize).collect(),
                };
                if is_shared(&g.name) {
                    for (k, d) in picked.iter().enumerate() {
                        let amount = g.per_device.get(k).copied().unwrap_or(g.count);
                        gres.push((*d, amount));
                    }
                } else {
                    gres.extend(picked.into_iter().map(|d| (d, 1)));
                }
            }
            nodes.push(NodeAlloc {
                node: i,
                cores,
                cpus: nr.cpus as u32,
                memory: nr.memory,
                gres,
                tasks: 0,
            });
        }
        let view_part = job.partitions.first().copied().unwrap_or(0);
        let (node_req, whole) = match crate::request::JobView::new(
            job,
            &self.gres_names,
            &self.partitions,
            &self.default_memory,
            &self.params,
            self.recs.len(),
        ) {
            Ok(v) => (v.node_req, v.whole_node || res.whole_nodes),
            Err(_) => (crate::node_usage::NODE_CR_ONE_ROW, res.whole_nodes),
        };
        Ok(JobRec {
            id: job.job_id,
            partition: view_part,
            node_req,
            whole_node: whole,
            end_time: job.end_time,
            soft_end: job.time_min.map(|m| job.start_time + m as i64 * 60),
            unlimited: job.time_limit.is_none(),
            nodes,
            suspended: job.state == JobState::Suspended && job.priority == 0,
        })
    }
}

/// Adds `part` of `rec` to `usage` (`job_res_add_job`).
pub fn add_job(usage: &mut Usage, recs: &[NodeRec], rec: &JobRec, part: Part) {
    usage.version = crate::next_version();
    hold_on_nodes(&mut usage.nodes, rec, part);
    if part != Part::Suspend {
        if let Some(rows) = usage.rows.get_mut(rec.partition as usize) {
            rows.add(rec.id, &rec.core_pieces(recs));
        }
    }
}

/// The node counters `part` of `rec` adds (memory, devices, `node_state`),
/// on the nodes where it holds CPUs.
pub fn hold_on_nodes(nodes: &mut [NodeUse], rec: &JobRec, part: Part) {
    for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
        let u = &mut nodes[n.node];
        if part != Part::Resume {
            u.alloc_memory += n.memory;
            for &(d, a) in &n.gres {
                u.gres_used[d] += a;
            }
        }
        if part != Part::Suspend {
            u.node_state += rec.node_req as u32;
        }
    }
}

/// Undoes [`hold_on_nodes`], clamping the counters at zero.
pub fn release_on_nodes(nodes: &mut [NodeUse], rec: &JobRec, part: Part) {
    for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
        let u = &mut nodes[n.node];
        if part != Part::Resume {
            u.alloc_memory = u.alloc_memory.saturating_sub(n.memory);
            for &(d, a) in &n.gres {
                u.gres_used[d] = u.gres_used[d].saturating_sub(a);
            }
        }
        if part != Part::Suspend {
            u.node_state = u.node_state.saturating_sub(rec.node_req as u32);
        }
    }
}

/// Removes `part` of `rec` from `usage` (`job_res_rm_job`), clamping
/// counters at zero.
pub fn remove_job(usage: &mut Usage, recs: &[NodeRec], rec: &JobRec, part: Part) {
    usage.version = crate::next_version();
    let Usage {
        nodes, rows, jobs, ..
    } = usage;
    release(nodes, rows, jobs, recs, rec, part);
}

/// [`remove_job`] on node and row tables whose jobs are recorded in
/// `jobs` (a simulation on copies of the live tables looks its jobs up in
/// the live job table: several rows re-pack the jobs left in them).
pub fn release(
    nodes: &mut [NodeUse],
    rows: &mut [PartRows],
    jobs: &BTreeMap<u32, JobRec>,
    recs: &[NodeRec],
    rec: &JobRec,
    part: Part,
) {
    release_on_nodes(nodes, rec, part);
    if part != Part::Suspend {
        if let Some(rows) = rows.get_mut(rec.partition as usize) {
            let packed = |j: u32| jobs.get(&j).map(|r| r.packed(recs));
            rows.remove(rec.id, &rec.core_pieces(recs), &packed);
        }
    }
}

impl ConsTres {
    /// Adds a job to the live tables (no-op when already known).
    pub fn add_running(&mut self, job: &Job) -> Result<(), String> {
        if self.usage.jobs.contains_key(&job.job_id) {
            return Ok(());
        }
        if !matches!(job.state, JobState::Running | JobState::Suspended) {
            return Ok(());
        }
        let rec = self.job_rec(job)?;
        let part = if rec.suspended {
            Part::Suspend
        } else {
            Part::Normal
        };
        add_job(&mut self.usage, &self.recs, &rec, part);
        self.usage.jobs.insert(rec.id, rec);
        Ok(())
    }

    /// `job_fini`: removes the job completely.
    pub fn job_fini(&mut self, job_id: u32) {
        if let Some(rec) = self.usage.jobs.remove(&job_id) {
            let part = if rec.suspended {
                Part::Suspend
            } else {
                Part::Normal
            };
            remove_job(&mut self.usage, &self.recs, &rec, part);
        }
    }

    /// `job_suspend(indf_susp)`: gang suspension (false) does nothing.
    pub fn job_suspend(&mut self, job_id: u32, indefinite: bool) {
        if !indefinite {
            return;
        }
        if let Some(mut rec) = self.usage.jobs.remove(&job_id) {
            if !rec.suspended {
                remove_job(&mut self.usage, &self.recs, &rec, Part::Resume);
                rec.suspended = true;
            }
            self.usage.jobs.insert(job_id, rec);
        }
    }

    /// `job_resume(indf_susp)`: gang resumption (false) leaves the tables
    /// alone. Either way the job's planned end becomes `end_time`, the
    /// record's: slurmctld moves it by the time the job was suspended
    /// (job_mgr.c `_job_suspend_op`, `end_time = now + time_limit -
    /// pre_sus_time`), and will-run answers release jobs by it.
    pub fn job_resume(&mut self, job_id: u32, end_time: i64, indefinite: bool) {
        if let Some(rec) = self.usage.jobs.get_mut(&job_id) {
            if rec.end_time != end_time {
                rec.end_time = end_time;
                self.usage.version = crate::next_version();
            }
        }
        if !indefinite {
            return;
        }
        if let Some(mut rec) = self.usage.jobs.remove(&job_id) {
            if rec.suspended {
                rec.suspended = false;
                self.usage.jobs.insert(job_id, rec.clone());
                add_job(&mut self.usage, &self.recs, &rec, Part::Resume);
            } else {
                self.usage.jobs.insert(job_id, rec);
            }
        }
    }

    /// `job_resized`: the node leaves the job; its resources are released.
    pub fn job_resized(&mut self, job_id: u32, node: usize) -> Result<(), String> {
        let mut rec = self
            .usage
            .jobs
            .remove(&job_id)
            .ok_or_else(|| format!("job-resized: job {job_id} is not in the usage tables"))?;
        let part = if rec.suspended {
            Part::Suspend
        } else {
            Part::Normal
        };
        remove_job(&mut self.usage, &self.recs, &rec, part);
        rec.nodes.retain(|n| n.node != node);
        add_job(&mut self.usage, &self.recs, &rec, part);
        self.usage.jobs.insert(job_id, rec);
        Ok(())
    }

    /// `job_expand`: `from`'s resources move into `to`; returns `to`'s new
    /// record. On a node both hold, CPUs and memory add up, the core maps
    /// are merged, and where the two jobs shared cores the CPU count is
    /// scaled by merged cores / (cores of `from` + cores of `to`), as
    /// `select_p_job_expand` does. `SLURM_ERROR` for a job merged with
    /// itself; `EINVAL` when either job is not in the tables.
    pub fn job_expand(&mut self, from: u32, to: u32) -> Result<JobRec, Error> {
        if from == to {
            return Err(Error::generic(format!(
                "job-expand: attempt to merge job {from} with itself"
            )));
        }
        let known = |id: u32| {
            self.usage.jobs.get(&id).cloned().ok_or_else(|| {
                Error::invalid(format!("job-expand: job {id} is not in the usage tables"))
            })
        };
        let f = known(from)?;
        let t = known(to)?;
        self.job_fini(from);
        self.job_fini(to);
        let mut merged = t.clone();
        for n in f.nodes {
            match merged.nodes.iter_mut().find(|m| m.node == n.node) {
                Some(m) => {
                    let apart = (n.cores.count() + m.cores.count()) as u32;
                    m.cpus += n.cpus;
                    m.memory += n.memory;
                    m.cores.or(&n.cores);
                    let together = m.cores.count() as u32;
                    if apart != together && apart > 0 {
                        m.cpus = m.cpus * together / apart;
                    }
                    m.gres.extend(n.gres);
                    m.tasks += n.tasks;
                }
                None => merged.nodes.push(n),
            }
        }
        merged.nodes.sort_by_key(|n| n.node);
        let part = if merged.suspended {
            Part::Suspend
        } else {
            Part::Normal
        };
        add_job(&mut self.usage, &self.recs, &merged, part);
        self.usage.jobs.insert(to, merged.clone());
        Ok(merged)
    }

    /// `select_p_reconfigure` (cons_common.c:2055): Slurm runs `node_init`
    /// again on the unchanged node table, then adds the running and
    /// suspended jobs back. `config` is an instance holding only the new
    /// configuration (parameters, partitions, default memory; what
    /// [`crate::plugin::instance_from`] builds); the node table and
    /// everything derived from it are kept, the usage tables are rebuilt
    /// from `running`. Fails when a job does not fit the node table (its
    /// node or core indices), leaving `self` unchanged.
    pub fn reconfigure(&mut self, config: ConsTres, running: &[Job]) -> Result<(), String> {
        // Every field named: a field added later must be placed on one
        // side or the other before this compiles.
        let ConsTres {
            params,
            partitions,
            default_memory,
            recs: _,
            gres_names: _,
            gres_columns: _,
            total_cores: _,
            base_avail: _,
            core_ends: _,
            usage,
            scratch,
        } = config;
        let mut fresh = ConsTres {
            params,
            partitions,
            default_memory,
            recs: self.recs.clone(),
            gres_names: self.gres_names.clone(),
            gres_columns: self.gres_columns.clone(),
            total_cores: self.total_cores,
            base_avail: self.base_avail.clone(),
            core_ends: self.core_ends.clone(),
            usage,
            scratch,
        };
        fresh.rebuild(running)?;
        *self = fresh;
        Ok(())
    }

    /// `reconfigure` / `job_init`: rebuild the tables from `jobs`.
    pub fn rebuild(&mut self, jobs: &[Job]) -> Result<(), String> {
        let mut fresh = self.clone();
        fresh.reset_usage();
        for j in jobs {
            fresh.add_running(j)?;
        }
        self.usage = fresh.usage;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
