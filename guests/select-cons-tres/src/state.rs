//! The state blob: the jobs of the usage tables and which partitions have
//! row core maps ([`crate::rows::PartRows::has_map`]). Slurm 22.05's
//! cons_tres saves nothing (its tables are rebuilt by `job_init`); this
//! blob lets the host restart an instance with identical decisions.
//! Restore parses and checks everything before touching the tables, and
//! still reads version 1 blobs (jobs only: a partition then has maps where
//! a restored job entered a row, as after a slurmctld restart).

use crate::transitions::{add_job, Part};
use crate::{ConsTres, JobRec, NodeAlloc};
use slurm_wasm_sdk::Bitmap;

const MAGIC: &[u8; 4] = b"CTRS";
const VERSION: u16 = 2;

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.data.len())
            .ok_or_else(|| {
                format!(
                    "state: truncated at byte {} (wanted {n} more bytes)",
                    self.pos
                )
            })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
}

impl ConsTres {
    /// Serialises the jobs of the usage tables.
    pub fn state_save(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.recs.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.usage.jobs.len() as u32).to_le_bytes());
        for j in self.usage.jobs.values() {
            out.extend_from_slice(&j.id.to_le_bytes());
            out.extend_from_slice(&j.partition.to_le_bytes());
            out.extend_from_slice(&j.node_req.to_le_bytes());
            out.push(j.whole_node as u8 | (j.unlimited as u8) << 1 | (j.suspended as u8) << 2);
            out.extend_from_slice(&j.end_time.to_le_bytes());
            out.push(j.soft_end.is_some() as u8);
            out.extend_from_slice(&j.soft_end.unwrap_or(0).to_le_bytes());
            out.extend_from_slice(&(j.nodes.len() as u32).to_le_bytes());
            for n in &j.nodes {
                out.extend_from_slice(&(n.node as u32).to_le_bytes());
                out.extend_from_slice(&n.cpus.to_le_bytes());
                out.extend_from_slice(&n.memory.to_le_bytes());
                out.extend_from_slice(&n.tasks.to_le_bytes());
                out.extend_from_slice(&(n.cores.len() as u32).to_le_bytes());
                for w in n.cores.words() {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                out.extend_from_slice(&(n.gres.len() as u32).to_le_bytes());
                for (d, a) in &n.gres {
                    out.extend_from_slice(&(*d as u32).to_le_bytes());
                    out.extend_from_slice(&a.to_le_bytes());
                }
            }
        }
        out.extend_from_slice(&(self.usage.rows.len() as u32).to_le_bytes());
        out.extend(self.usage.rows.iter().map(|p| p.has_map as u8));
        out
    }

    /// Restores a [`ConsTres::state_save`] blob; on any error the current
    /// tables stay as they are.
    pub fn state_restore(&mut self, data: &[u8]) -> Result<(), String> {
        let mut r = Reader { data, pos: 0 };
        if r.take(4)? != MAGIC {
            return Err("state: not a select/cons_tres state blob (bad magic)".into());
        }
        let v = r.u16()?;
        if v != 1 && v != VERSION {
            return Err(format!(
                "state: format version {v}, this plugin reads 1 and {VERSION}"
            ));
        }
        let nodes = r.u32()? as usize;
        if nodes != self.recs.len() {
            return Err(format!(
                "state: saved for {nodes} nodes, the node table has {}",
                self.recs.len()
            ));
        }
        let count = r.u32()?;
        let mut jobs = Vec::new();
        for _ in 0..count {
            let id = r.u32()?;
            let partition = r.u32()?;
            let node_req = r.u16()?;
            let flags = r.u8()?;
            let end_time = r.u64()? as i64;
            let has_soft = r.u8()?;
            let soft = r.u64()? as i64;
            let soft_end = match has_soft {
                0 => None,
                1 => Some(soft),
                other => return Err(format!("state: job {id}: bad soft-end flag {other}")),
            };
            let n = r.u32()?;
            let mut allocs = Vec::new();
            for _ in 0..n {
                let node = r.u32()? as usize;
                let rec = self
                    .recs
                    .get(node)
                    .ok_or_else(|| format!("state: job {id}: node {node} out of range"))?;
                let cpus = r.u32()?;
                let memory = r.u64()?;
                let tasks = r.u32()?;
                let len = r.u32()? as usize;
                if len != rec.cores as usize {
                    return Err(format!(
                        "state: job {id}: node {} core map of {len} bits",
                        rec.name
                    ));
                }
                let words: Vec<u64> = (0..len.div_ceil(64))
                    .map(|_| r.u64())
                    .collect::<Result<_, _>>()?;
                let cores = Bitmap::from_words(len as u32, &words)?;
                let g = r.u32()?;
                let mut gres = Vec::new();
                for _ in 0..g {
                    let d = r.u32()? as usize;
                    if d >= rec.devices.len() {
                        return Err(format!(
                            "state: job {id}: device {d} out of range on {}",
                            rec.name
                        ));
                    }
                    gres.push((d, r.u64()?));
                }
                allocs.push(NodeAlloc {
                    node,
                    cores,
                    cpus,
                    memory,
                    gres,
                    tasks,
                });
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
        let maps = if v == 1 {
            None
        } else {
            let parts = r.u32()? as usize;
            if parts != self.usage.rows.len() {
                return Err(format!(
                    "state: saved for {parts} partitions, the partition table has {}",
                    self.usage.rows.len()
                ));
            }
            let flags = r.take(parts)?;
            if let Some(bad) = flags.iter().find(|f| **f > 1) {
                return Err(format!("state: bad row-map flag {bad}"));
            }
            Some(flags.iter().map(|f| *f == 1).collect::<Vec<_>>())
        };
        if r.pos != data.len() {
            return Err(format!("state: {} trailing bytes", data.len() - r.pos));
        }
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
        for (rows, has_map) in fresh.usage.rows.iter_mut().zip(maps.into_iter().flatten()) {
            rows.has_map = has_map;
        }
        self.usage = fresh.usage;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
