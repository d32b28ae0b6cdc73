//! Reserved TRES run-seconds (`grp_used_tres_run_secs`) that
//! `priority_p_job_end` releases (Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`), and their saved form.
//!
//! When a job starts, the controller charges `tres_alloc x time_limit x 60`
//! to its QOS and to every association from the job's up to the root. At
//! `job_end` priority/basic takes the whole reservation back, clamping at 0.

use std::collections::BTreeMap;

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

    /// Serialises the ledger: `PBAS`, format version 1, then the
    /// associations and QOS entries, little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = b"PBAS".to_vec();
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&(self.assocs.len() as u32).to_le_bytes());
        for (id, assoc) in &self.assocs {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&assoc.parent.unwrap_or(u32::MAX).to_le_bytes());
            encode_tres(&mut out, &assoc.used);
        }
        out.extend_from_slice(&(self.qos.len() as u32).to_le_bytes());
        for (name, used) in &self.qos {
            encode_str(&mut out, name);
            encode_tres(&mut out, used);
        }
        out
    }

    /// The inverse of [`Ledger::encode`]. Fails on anything it cannot read
    /// completely: wrong magic, unknown version, truncation, trailing bytes.
    pub fn decode(data: &[u8]) -> Result<Ledger, String> {
        let mut r = Reader { data, pos: 0 };
        if r.take(4)? != b"PBAS" {
            return Err("not a priority/basic state (bad magic)".into());
        }
        let version = r.u16()?;
        if version != 1 {
            return Err(format!("unknown priority/basic state version {version}"));
        }
        let mut ledger = Ledger::default();
        for _ in 0..r.u32()? {
            let id = r.u32()?;
            let parent = Some(r.u32()?).filter(|&p| p != u32::MAX);
            let used = r.tres()?;
            ledger.assocs.insert(id, Assoc { parent, used });
        }
        for _ in 0..r.u32()? {
            let name = r.string()?;
            let used = r.tres()?;
            ledger.qos.insert(name, used);
        }
        if r.pos != data.len() {
            return Err(format!(
                "{} trailing bytes after priority/basic state",
                data.len() - r.pos
            ));
        }
        Ok(ledger)
    }
}

fn encode_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn encode_tres(out: &mut Vec<u8>, tres: &TresSeconds) {
    out.extend_from_slice(&(tres.len() as u32).to_le_bytes());
    for (name, secs) in tres {
        encode_str(out, name);
        out.extend_from_slice(&secs.to_le_bytes());
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end =
            end.ok_or_else(|| format!("priority/basic state truncated at byte {}", self.pos))?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().map_err(|_| "short read")?,
        ))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().map_err(|_| "short read")?,
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| "short read")?,
        ))
    }
    fn string(&mut self) -> Result<String, String> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec())
            .map_err(|_| "invalid UTF-8 in state".to_string())
    }
    fn tres(&mut self) -> Result<TresSeconds, String> {
        let mut out = TresSeconds::new();
        for _ in 0..self.u32()? {
            let name = self.string()?;
            out.insert(name, self.u64()?);
        }
        Ok(out)
    }
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
            .contains("truncated"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Ledger::decode(&extra).unwrap_err().contains("trailing"));
        assert!(Ledger::decode(b"XXXX").unwrap_err().contains("magic"));
    }
}
