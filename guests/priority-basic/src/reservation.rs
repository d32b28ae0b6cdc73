//! Reserved TRES run-seconds (`grp_used_tres_run_secs`) that
//! `priority_p_job_end` releases (Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`), and their saved form.
//!
//! When a job starts, the controller charges `tres_alloc x time_limit x 60`
//! to its QOS and to every association from the job's up to the root. At
//! `job_end` priority/basic takes the whole reservation back, clamping at 0.

use std::collections::BTreeMap;

use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::state::{self, StateWriter};
use slurm_wasm_sdk::Error;

/// Reserved run-seconds per TRES name.
pub type TresSeconds = BTreeMap<String, u64>;

/// One association: its parent and its reserved run-seconds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assoc {
    pub parent: Option<u32>,
    pub used: TresSeconds,
}

/// The plugin's copy of the association tree and QOS table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ledger {
    pub assocs: BTreeMap<u32, Assoc>,
    pub qos: BTreeMap<String, TresSeconds>,
}

/// What a job reserved: `count x limit_minutes x 60` per allocated TRES.
/// A job without a time limit reserved nothing.
pub fn reserved(tres_alloc: &[(String, u64)], limit_minutes: Option<u32>) -> TresSeconds {
    let Some(minutes) = limit_minutes else {
        return TresSeconds::new();
    };
    tres_alloc
        .iter()
        .map(|(name, count)| (name.clone(), count.saturating_mul(u64::from(minutes) * 60)))
        .collect()
}

fn release(used: &mut TresSeconds, amount: &TresSeconds) {
    for (name, secs) in amount {
        if let Some(v) = used.get_mut(name) {
            *v = v.saturating_sub(*secs);
        }
    }
}

impl Ledger {
    /// Releases a finished job's reservation from its QOS and from `assoc`
    /// and every ancestor. A parent loop in the tree stops the walk instead
    /// of spinning.
    pub fn job_end(&mut self, assoc: u32, qos: Option<&str>, amount: &TresSeconds) {
        if let Some(used) = qos.and_then(|q| self.qos.get_mut(q)) {
            release(used, amount);
        }
        let mut next = Some(assoc);
        let mut visited = 0;
        while let Some(id) = next {
            visited += 1;
            if visited > self.assocs.len() {
                break;
            }
            let Some(node) = self.assocs.get_mut(&id) else {
                break;
            };
            release(&mut node.used, amount);
            next = node.parent;
        }
    }

    /// Serialises the ledger as the SDK's state blob
    /// ([`slurm_wasm_sdk::state`]): magic `PBAS`, format version 2, then
    /// the associations (id, parent or `u32::MAX`, reserved run-seconds)
    /// and the QOS entries (name, reserved run-seconds). Version 1, this
    /// plugin's framing before the SDK had one, is no longer read.
    pub fn encode(&self) -> Vec<u8> {
        let mut blob = StateWriter::new(MAGIC, VERSION);
        let w = blob.body();
        w.u32(self.assocs.len() as u32);
        for (id, assoc) in &self.assocs {
            w.u32(*id).u32(assoc.parent.unwrap_or(u32::MAX));
            encode_tres(w, &assoc.used);
        }
        w.u32(self.qos.len() as u32);
        for (name, used) in &self.qos {
            w.str(Some(name));
            encode_tres(w, used);
        }
        blob.finish()
    }

    /// The inverse of [`Ledger::encode`]. Fails on anything it cannot read
    /// completely: another magic or version, a damaged copy (checksum),
    /// truncation, trailing bytes.
    pub fn decode(data: &[u8]) -> Result<Ledger, String> {
        Self::read(data).map_err(|e| e.message)
    }

    fn read(data: &[u8]) -> Result<Ledger, Error> {
        let (_, mut r) = state::open(data, MAGIC, &[VERSION], WHAT)?;
        let mut ledger = Ledger::default();
        for _ in 0..r.u32("associations")? {
            let id = r.u32("association id")?;
            let parent = Some(r.u32("parent")?).filter(|&p| p != u32::MAX);
            let used = decode_tres(&mut r)?;
            ledger.assocs.insert(id, Assoc { parent, used });
        }
        for _ in 0..r.u32("QOS")? {
            let name = name(&mut r, "QOS name")?;
            let used = decode_tres(&mut r)?;
            ledger.qos.insert(name, used);
        }
        r.finish()?;
        Ok(ledger)
    }
}

const MAGIC: [u8; 4] = *b"PBAS";
const VERSION: u16 = 2;
const WHAT: &str = "priority/basic state";

fn encode_tres(w: &mut Packer, tres: &TresSeconds) {
    w.u32(tres.len() as u32);
    for (name, secs) in tres {
        w.str(Some(name)).u64(*secs);
    }
}

fn name(r: &mut Unpacker<'_>, field: &str) -> Result<String, Error> {
    r.str(field)?
        .ok_or_else(|| Error::invalid(format!("{WHAT}: {field} missing")))
}

fn decode_tres(r: &mut Unpacker<'_>) -> Result<TresSeconds, Error> {
    let mut out = TresSeconds::new();
    for _ in 0..r.u32("TRES")? {
        let name = name(r, "TRES name")?;
        out.insert(name, r.u64("run seconds")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tres(pairs: &[(&str, u64)]) -> TresSeconds {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    fn tree() -> Ledger {
        let mut l = Ledger::default();
        l.assocs.insert(
            1,
            Assoc {
                parent: None,
                used: tres(&[("cpu", 10_000)]),
            },
        );
        l.assocs.insert(
            2,
            Assoc {
                parent: Some(1),
                used: tres(&[("cpu", 5_000)]),
            },
        );
        l.assocs.insert(
            3,
            Assoc {
                parent: Some(2),
                used: tres(&[("cpu", 1_000)]),
            },
        );
        l.qos.insert("normal".into(), tres(&[("cpu", 2_400)]));
        l
    }

    #[test]
    fn job_end_releases_up_the_tree_and_clamps() {
        // Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`: job_end subtracts tres_alloc x time_limit x 60 from the QOS
        // and every association up the tree, clamping underflow to 0.
        let mut l = tree();
        let amount = reserved(&[("cpu".into(), 2)], Some(20));
        assert_eq!(amount, tres(&[("cpu", 2_400)]));
        l.job_end(3, Some("normal"), &amount);
        assert_eq!(l.assocs[&3].used["cpu"], 0);
        assert_eq!(l.assocs[&2].used["cpu"], 2_600);
        assert_eq!(l.assocs[&1].used["cpu"], 7_600);
        assert_eq!(l.qos["normal"]["cpu"], 0);
    }

    #[test]
    fn no_time_limit_reserves_nothing() {
        assert!(reserved(&[("cpu".into(), 2)], None).is_empty());
    }

    #[test]
    fn parent_loop_does_not_hang() {
        let mut l = tree();
        l.assocs.get_mut(&1).unwrap().parent = Some(3);
        l.job_end(3, None, &tres(&[("cpu", 1)]));
        assert_eq!(l.assocs[&1].used["cpu"], 9_999);
    }

    #[test]
    fn state_round_trips_and_refuses_damage() {
        let l = tree();
        let bytes = l.encode();
        assert_eq!(Ledger::decode(&bytes).unwrap(), l);
        assert!(Ledger::decode(&bytes[..bytes.len() - 1])
            .unwrap_err()
            .contains("announces"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Ledger::decode(&extra).unwrap_err().contains("announces"));
        let mut other = bytes.clone();
        other[..4].copy_from_slice(b"XXXX");
        assert!(Ledger::decode(&other).unwrap_err().contains("magic"));
        let mut damaged = bytes;
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(Ledger::decode(&damaged).unwrap_err().contains("checksum"));
    }
}
