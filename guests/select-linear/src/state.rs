//! `state-save` / `state-restore`: the usage tables and the jobs linear
//! tracks, in a self-describing blob (`slurm_wasm_sdk::state`).
//!
//! Slurm 22.05's linear saves nothing and rebuilds its tables from the
//! controller's job list; here the host may restart a plugin instance
//! without replaying every job, so the tables travel in the blob. A
//! restore reads the whole blob and checks it against the node table
//! before anything changes.

use std::collections::{BTreeMap, BTreeSet};

use select_common::pack::{Packer, Unpacker};
use select_common::MemRequest;
use slurm_wasm_sdk::state::{open, StateWriter};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::jobs::{ActiveJob, Activity, GresHeld, NodeHeld};
use crate::usage::{NodeUsage, PartCount, Usage};

const MAGIC: [u8; 4] = *b"SLIN";
/// Version 2 added the gang-suspended activity (2) to the job's state byte;
/// version 3 the devices a job holds on a node (after each of its node
/// GRES). Version 1 and 2 blobs read the same way, without devices.
const VERSION: u16 = 3;
const WHAT: &str = "select/linear state-restore";

fn put_gres(p: &mut Packer, gres: &[GresHeld]) {
    p.u32(gres.len() as u32);
    for g in gres {
        p.str(Some(&g.name))
            .str(g.type_name.as_deref())
            .u64(g.count);
    }
}

/// The devices of a job's GRES on one node (version 3), in `put_gres`'s
/// order.
fn put_devices(p: &mut Packer, gres: &[GresHeld]) {
    for g in gres {
        match &g.devices {
            Some(d) => p.u8(1).bitmap(d),
            None => p.u8(0),
        };
    }
}

fn get_devices(u: &mut Unpacker<'_>, gres: &mut [GresHeld]) -> Result<(), Error> {
    for g in gres {
        g.devices = match u.u8("gres devices")? {
            0 => None,
            1 => Some(u.bitmap("gres devices")?),
            other => {
                return Err(Error::invalid(format!(
                    "{WHAT}: devices flag {other} (expected 0 or 1)"
                )))
            }
        };
    }
    Ok(())
}

fn get_len(u: &mut Unpacker<'_>, field: &str, item_size: usize) -> Result<usize, Error> {
    let n = u.u32(field)? as usize;
    if n.saturating_mul(item_size) > u.remaining() {
        return Err(Error::invalid(format!(
            "{WHAT}: {field} announces {n} entries, more than the {} bytes left hold",
            u.remaining()
        )));
    }
    Ok(n)
}

fn get_gres(u: &mut Unpacker<'_>) -> Result<Vec<GresHeld>, Error> {
    let n = get_len(u, "gres count", 16)?;
    (0..n)
        .map(|_| {
            let name = u
                .str("gres name")?
                .ok_or_else(|| Error::invalid(format!("{WHAT}: GRES without a name")))?;
            Ok(GresHeld {
                name,
                type_name: u.str("gres type")?,
                count: u.u64("gres count")?,
                devices: None,
            })
        })
        .collect()
}

fn get_bool(u: &mut Unpacker<'_>, field: &str) -> Result<bool, Error> {
    match u.u8(field)? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(Error::invalid(format!(
            "{WHAT}: {field} is {other}; expected 0 or 1"
        ))),
    }
}

fn put_ids(p: &mut Packer, ids: &BTreeSet<u32>) {
    p.u32(ids.len() as u32);
    for &id in ids {
        p.u32(id);
    }
}

fn get_ids(u: &mut Unpacker<'_>, field: &str) -> Result<BTreeSet<u32>, Error> {
    let n = get_len(u, field, 4)?;
    (0..n).map(|_| u.u32(field)).collect()
}

/// Serialises the tables and jobs.
pub fn save(usage: &Usage, jobs: &BTreeMap<u32, ActiveJob>) -> Vec<u8> {
    let mut w = StateWriter::new(MAGIC, VERSION);
    let p = w.body();
    p.u32(usage.nodes.len() as u32);
    for n in &usage.nodes {
        p.u64(n.alloc_memory).u16(n.exclusive_cnt);
        p.u32(n.parts.len() as u32);
        for c in &n.parts {
            p.u32(c.part).u16(c.run).u16(c.tot);
        }
        put_gres(p, &n.gres);
    }
    put_ids(p, &usage.run_jobs);
    put_ids(p, &usage.tot_jobs);
    p.u32(jobs.len() as u32);
    for j in jobs.values() {
        p.u32(j.id).u8(match j.activity {
            Activity::Suspended => 0,
            Activity::Running => 1,
            Activity::GangSuspended => 2,
        });
        match j.partition {
            Some(part) => p.u8(1).u32(part),
            None => p.u8(0),
        };
        p.u8(j.share_res.into())
            .i64(j.end_time)
            .u8(j.contiguous.into());
        match j.memory {
            MemRequest::None => p.u8(0).u64(0),
            MemRequest::PerNode(m) => p.u8(1).u64(m),
            MemRequest::PerCpu(m) => p.u8(2).u64(m),
        };
        p.bitmap(&j.nodes).u32(j.total_cpus);
        p.u32(j.held.len() as u32);
        for h in &j.held {
            p.u32(h.node as u32).u16(h.cpus).u64(h.memory);
            put_gres(p, &h.gres);
            put_devices(p, &h.gres);
        }
    }
    w.finish()
}

/// Reads a blob written by [`save`] for a table of `node_count` nodes.
/// `EINVAL` naming the problem for anything malformed: another plugin's
/// blob, another node count, truncated or trailing data, node indices
/// outside the table, bitmaps of the wrong length.
pub fn restore(data: &[u8], node_count: usize) -> Result<(Usage, BTreeMap<u32, ActiveJob>), Error> {
    let (version, mut u) = open(data, MAGIC, &[1, 2, VERSION], WHAT)?;
    let saved = u.u32("node count")? as usize;
    if saved != node_count {
        return Err(Error::invalid(format!(
            "{WHAT}: state was saved for {saved} nodes; the node table has {node_count}"
        )));
    }
    let mut usage = Usage::default();
    for _ in 0..saved {
        let alloc_memory = u.u64("alloc_memory")?;
        let exclusive_cnt = u.u16("exclusive_cnt")?;
        let parts_n = get_len(&mut u, "partition count", 8)?;
        let parts = (0..parts_n)
            .map(|_| {
                Ok(PartCount {
                    part: u.u32("partition")?,
                    run: u.u16("run_job_cnt")?,
                    tot: u.u16("tot_job_cnt")?,
                })
            })
            .collect::<Result<_, Error>>()?;
        let gres = get_gres(&mut u)?;
        usage.nodes.push(NodeUsage {
            alloc_memory,
            exclusive_cnt,
            parts,
            gres,
        });
    }
    usage.run_jobs = get_ids(&mut u, "running job ids")?;
    usage.tot_jobs = get_ids(&mut u, "allocated job ids")?;
    let jobs_n = get_len(&mut u, "job count", 30)?;
    let mut jobs = BTreeMap::new();
    for _ in 0..jobs_n {
        let id = u.u32("job id")?;
        let activity = match u.u8("activity")? {
            0 => Activity::Suspended,
            1 => Activity::Running,
            2 => Activity::GangSuspended,
            other => {
                return Err(Error::invalid(format!(
                    "{WHAT}: job {id} activity is {other}; expected 0 (suspended), 1 (running) or 2 (gang suspended)"
                )))
            }
        };
        let partition = if get_bool(&mut u, "partition flag")? {
            Some(u.u32("partition")?)
        } else {
            None
        };
        let share_res = get_bool(&mut u, "share_res")?;
        let end_time = u.i64("end_time")?;
        let contiguous = get_bool(&mut u, "contiguous")?;
        let memory = match (u.u8("memory kind")?, u.u64("memory")?) {
            (0, _) => MemRequest::None,
            (1, m) => MemRequest::PerNode(m),
            (2, m) => MemRequest::PerCpu(m),
            (k, _) => {
                return Err(Error::invalid(format!(
                    "{WHAT}: job {id} memory kind {k}; expected 0, 1 or 2"
                )))
            }
        };
        let nodes: Bitmap = u.bitmap("job nodes")?;
        if nodes.len() != node_count {
            return Err(Error::invalid(format!(
                "{WHAT}: job {id} node bitmap has {} bits for {node_count} nodes",
                nodes.len()
            )));
        }
        let total_cpus = u.u32("total_cpus")?;
        let held_n = get_len(&mut u, "held node count", 18)?;
        let mut held = Vec::with_capacity(held_n);
        for _ in 0..held_n {
            let node = u.u32("held node")? as usize;
            if node >= node_count {
                return Err(Error::invalid(format!(
                    "{WHAT}: job {id} holds node {node}, outside the table of {node_count}"
                )));
            }
            let cpus = u.u16("held cpus")?;
            let memory = u.u64("held memory")?;
            let mut gres = get_gres(&mut u)?;
            if version >= 3 {
                get_devices(&mut u, &mut gres)?;
            }
            held.push(NodeHeld {
                node,
                cpus,
                memory,
                gres,
            });
        }
        jobs.insert(
            id,
            ActiveJob {
                id,
                activity,
                partition,
                share_res,
                end_time,
                contiguous,
                memory,
                nodes,
                total_cpus,
                held,
            },
        );
    }
    u.finish()?;
    Ok((usage, jobs))
}
