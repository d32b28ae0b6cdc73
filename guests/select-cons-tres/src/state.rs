//! The state blob: the jobs of the usage tables and which partitions have
//! row core maps ([`crate::rows::PartRows::has_map`]). Slurm 22.05's
//! cons_tres saves nothing (its tables are rebuilt by `job_init`); this
//! blob lets the host restart an instance with identical decisions.
//!
//! It is the SDK's state blob ([`slurm_wasm_sdk::state`]): magic `CTRS`,
//! format version 3, length and checksum, then the node count, the jobs
//! and the partitions' row-map flags, packed as Slurm packs. Versions 1
//! and 2, this plugin's framing before the SDK had one, are no longer
//! read: a restore of one is refused, naming the version, and the tables
//! are what `reconfigure` with the running jobs rebuilds, as Slurm's own
//! cons_tres always rebuilds them. Restore parses and checks everything
//! before touching the tables.

use slurm_wasm_sdk::pack::Unpacker;
use slurm_wasm_sdk::state::{self, StateWriter};
use slurm_wasm_sdk::Error;

use crate::transitions::{add_job, Part};
use crate::{ConsTres, JobRec, NodeAlloc};

const MAGIC: [u8; 4] = *b"CTRS";
const VERSION: u16 = 3;
const WHAT: &str = "select/cons_tres state";

impl ConsTres {
    /// Serialises the jobs of the usage tables.
    pub fn state_save(&self) -> Vec<u8> {
        let mut blob = StateWriter::new(MAGIC, VERSION);
        let w = blob.body();
        w.u32(self.recs.len() as u32)
            .u32(self.usage.jobs.len() as u32);
        for j in self.usage.jobs.values() {
            w.u32(j.id)
                .u32(j.partition)
                .u16(j.node_req)
                .u8(j.whole_node as u8 | (j.unlimited as u8) << 1 | (j.suspended as u8) << 2)
                .i64(j.end_time)
                .u8(j.soft_end.is_some() as u8)
                .i64(j.soft_end.unwrap_or(0))
                .u32(j.nodes.len() as u32);
            for n in &j.nodes {
                w.u32(n.node as u32)
                    .u32(n.cpus)
                    .u64(n.memory)
                    .u32(n.tasks)
                    .bitmap(&n.cores)
                    .u32(n.gres.len() as u32);
                for (d, a) in &n.gres {
                    w.u32(*d as u32).u64(*a);
                }
            }
        }
        w.u32(self.usage.rows.len() as u32);
        for rows in &self.usage.rows {
            w.u8(rows.has_map as u8);
        }
        blob.finish()
    }

    /// Restores a [`ConsTres::state_save`] blob; on any error the current
    /// tables stay as they are.
    pub fn state_restore(&mut self, data: &[u8]) -> Result<(), String> {
        let (jobs, maps) = self.read(data).map_err(|e| e.message)?;
        let mut fresh = self.clone();
        fresh.reset_usage();
        for j in jobs {
            let part = if j.suspended {
                Part::Suspend
            } else {
                Part::Normal
            };
            add_job(&mut fresh.usage, &fresh.recs, &j, part);
            fresh.usage.jobs.insert(j.id, j);
        }
        for (rows, has_map) in fresh.usage.rows.iter_mut().zip(maps) {
            rows.has_map = has_map;
        }
        self.usage = fresh.usage;
        Ok(())
    }

    /// The jobs and row-map flags of a blob, checked against the node,
    /// partition and device tables.
    fn read(&self, data: &[u8]) -> Result<(Vec<JobRec>, Vec<bool>), Error> {
        let (_, mut r) = state::open(data, MAGIC, &[VERSION], WHAT)?;
        let bad = |message: String| Error::invalid(format!("{WHAT}: {message}"));
        let nodes = r.u32("node count")? as usize;
        if nodes != self.recs.len() {
            return Err(bad(format!(
                "saved for {nodes} nodes, the node table has {}",
                self.recs.len()
            )));
        }
        let mut jobs = Vec::new();
        for _ in 0..r.u32("jobs")? {
            let id = r.u32("job id")?;
            let partition = r.u32("partition")?;
            let node_req = r.u16("node_req")?;
            let flags = r.u8("job flags")?;
            let end_time = r.i64("end time")?;
            let soft_end = match (r.u8("soft end")?, r.i64("soft end")?) {
                (0, _) => None,
                (1, t) => Some(t),
                (other, _) => return Err(bad(format!("job {id}: bad soft-end flag {other}"))),
            };
            let mut allocs = Vec::new();
            for _ in 0..r.u32("job nodes")? {
                allocs.push(self.read_node(&mut r, id)?);
            }
            jobs.push(JobRec {
                id,
                partition,
                node_req,
                whole_node: flags & 1 != 0,
                unlimited: flags & 2 != 0,
                suspended: flags & 4 != 0,
                end_time,
                soft_end,
                nodes: allocs,
            });
        }
        let parts = r.u32("partitions")? as usize;
        if parts != self.usage.rows.len() {
            return Err(bad(format!(
                "saved for {parts} partitions, the partition table has {}",
                self.usage.rows.len()
            )));
        }
        let mut maps = Vec::with_capacity(parts);
        for _ in 0..parts {
            maps.push(match r.u8("row map flag")? {
                0 => false,
                1 => true,
                other => return Err(bad(format!("bad row-map flag {other}"))),
            });
        }
        r.finish()?;
        Ok((jobs, maps))
    }

    /// One node of job `id`'s allocation.
    fn read_node(&self, r: &mut Unpacker<'_>, id: u32) -> Result<NodeAlloc, Error> {
        let bad = |message: String| Error::invalid(format!("{WHAT}: job {id}: {message}"));
        let node = r.u32("node")? as usize;
        let rec = self
            .recs
            .get(node)
            .ok_or_else(|| bad(format!("node {node} out of range")))?;
        let cpus = r.u32("cpus")?;
        let memory = r.u64("memory")?;
        let tasks = r.u32("tasks")?;
        let cores = r.bitmap("core map")?;
        if cores.len() != rec.cores as usize {
            return Err(bad(format!(
                "node {} core map of {} bits",
                rec.name,
                cores.len()
            )));
        }
        let mut gres = Vec::new();
        for _ in 0..r.u32("GRES")? {
            let d = r.u32("device")? as usize;
            if d >= rec.devices.len() {
                return Err(bad(format!("device {d} out of range on {}", rec.name)));
            }
            gres.push((d, r.u64("GRES count")?));
        }
        Ok(NodeAlloc {
            node,
            cores,
            cpus,
            memory,
            gres,
            tasks,
        })
    }
}

#[cfg(test)]
mod tests;
