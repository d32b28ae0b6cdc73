//! The plugin's saved state: the association tree and QOS table with their
//! usage, the last decay cycle (`priority_last_decay_ran`: last ran, last
//! reset) and the jobs whose end has been charged.
//!
//! The tree and QOS settings are saved too, so that an instance restarted
//! from its state by the host (which does not replay `update-associations`)
//! has its whole tree back.
//!
//! The blob is the SDK's ([`slurm_wasm_sdk::state`]): magic `SWMF`, format
//! version 2, length and checksum, then the fields of [`Saved`] in order,
//! packed as Slurm packs (options a 0/1 byte and the value, lists a u32
//! count and the items, floating-point values as their exact bits).
//! Version 1, this plugin's own framing before the SDK had one, is no
//! longer read: the priority shim then starts from Slurm's usage.
//!
//! # Failure modes
//!
//! [`Saved::decode`] refuses anything it cannot read completely: another
//! magic, another version, a damaged copy (checksum), truncation, trailing
//! bytes, invalid UTF-8 or an invalid tag byte; the message says what and
//! where.

use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::state::{self, StateWriter};
use slurm_wasm_sdk::Error;

use crate::qos::{Qos, QosSpec};
use crate::tree::{AssocSpec, NewAssoc, Shares};
use crate::usage::{TresSeconds, Usage};

const MAGIC: [u8; 4] = *b"SWMF";
const VERSION: u16 = 2;
const WHAT: &str = "priority/multifactor state";

/// Everything saved.
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    pub last_ran: Option<i64>,
    pub last_reset: Option<i64>,
    pub assocs: Vec<NewAssoc>,
    pub qos: Vec<Qos>,
    pub ended: Vec<u32>,
}

impl Saved {
    pub fn encode(&self) -> Vec<u8> {
        let mut blob = StateWriter::new(MAGIC, VERSION);
        let w = blob.body();
        opt(w, self.last_ran, |w, v| {
            w.i64(v);
        });
        opt(w, self.last_reset, |w, v| {
            w.i64(v);
        });
        w.u32(self.assocs.len() as u32);
        for a in &self.assocs {
            let s = &a.spec;
            w.u32(s.id);
            opt(w, s.parent, |w, v| {
                w.u32(v);
            });
            w.str(Some(&s.account));
            w.str(s.user.as_deref());
            opt(w, s.user_id, |w, v| {
                w.u32(v);
            });
            w.str(s.partition.as_deref());
            match s.shares {
                Shares::Raw(n) => w.u8(0).u32(n),
                Shares::Parent => w.u8(1),
            };
            opt(w, s.priority, |w, v| {
                w.u32(v);
            });
            usage(w, &a.usage);
            run_secs(w, &a.run_secs);
        }
        w.u32(self.qos.len() as u32);
        for q in &self.qos {
            w.u32(q.spec.id)
                .str(Some(&q.spec.name))
                .u32(q.spec.priority)
                .u64(q.spec.usage_factor.to_bits())
                .u8(u8::from(q.spec.no_decay));
            usage(w, &q.usage);
            run_secs(w, &q.run_secs);
        }
        w.u32(self.ended.len() as u32);
        for id in &self.ended {
            w.u32(*id);
        }
        blob.finish()
    }

    pub fn decode(data: &[u8]) -> Result<Saved, String> {
        Self::read(data).map_err(|e| e.message)
    }

    fn read(data: &[u8]) -> Result<Saved, Error> {
        let (_, mut r) = state::open(data, MAGIC, &[VERSION], WHAT)?;
        let last_ran = read_opt(&mut r, "last ran", |r| r.i64("last ran"))?;
        let last_reset = read_opt(&mut r, "last reset", |r| r.i64("last reset"))?;
        let mut assocs = Vec::new();
        for _ in 0..r.u32("associations")? {
            let id = r.u32("association id")?;
            let parent = read_opt(&mut r, "parent", |r| r.u32("parent"))?;
            let account = r.str("account")?.ok_or_else(|| {
                Error::invalid(format!("{WHAT}: association {id} has no account"))
            })?;
            let user = r.str("user")?;
            let user_id = read_opt(&mut r, "user id", |r| r.u32("user id"))?;
            let partition = r.str("partition")?;
            let shares = match r.u8("shares")? {
                0 => Shares::Raw(r.u32("shares")?),
                1 => Shares::Parent,
                tag => return Err(bad_tag(&r, "shares", tag)),
            };
            let priority = read_opt(&mut r, "priority", |r| r.u32("priority"))?;
            assocs.push(NewAssoc {
                spec: AssocSpec {
                    id,
                    parent,
                    account,
                    user,
                    user_id,
                    partition,
                    shares,
                    priority,
                },
                usage: read_usage(&mut r)?,
                run_secs: read_run_secs(&mut r)?,
            });
        }
        let mut qos = Vec::new();
        for _ in 0..r.u32("QOS")? {
            let id = r.u32("QOS id")?;
            let spec = QosSpec {
                id,
                name: r
                    .str("QOS name")?
                    .ok_or_else(|| Error::invalid(format!("{WHAT}: QOS {id} has no name")))?,
                priority: r.u32("QOS priority")?,
                usage_factor: f64::from_bits(r.u64("usage factor")?),
                no_decay: read_bool(&mut r, "no decay")?,
            };
            qos.push(Qos {
                spec,
                usage: read_usage(&mut r)?,
                run_secs: read_run_secs(&mut r)?,
            });
        }
        let mut ended = Vec::new();
        for _ in 0..r.u32("ended jobs")? {
            ended.push(r.u32("ended job")?);
        }
        r.finish()?;
        Ok(Saved {
            last_ran,
            last_reset,
            assocs,
            qos,
            ended,
        })
    }
}

fn opt<T>(w: &mut Packer, v: Option<T>, put: impl FnOnce(&mut Packer, T)) {
    match v {
        Some(v) => {
            w.u8(1);
            put(w, v);
        }
        None => {
            w.u8(0);
        }
    }
}

fn usage(w: &mut Packer, u: &Usage) {
    w.u64(u.raw.to_bits())
        .u64(u.wall.to_bits())
        .u32(u.tres.len() as u32);
    for (name, v) in &u.tres {
        w.str(Some(name)).u64(v.to_bits());
    }
}

fn run_secs(w: &mut Packer, r: &TresSeconds) {
    w.u32(r.len() as u32);
    for (name, v) in r {
        w.str(Some(name)).u64(*v);
    }
}

fn bad_tag(r: &Unpacker<'_>, what: &str, tag: u8) -> Error {
    Error::invalid(format!(
        "{WHAT}: invalid {what} tag {tag} at byte {}",
        r.position() - 1
    ))
}

fn read_bool(r: &mut Unpacker<'_>, what: &str) -> Result<bool, Error> {
    match r.u8(what)? {
        0 => Ok(false),
        1 => Ok(true),
        tag => Err(bad_tag(r, "flag", tag)),
    }
}

fn read_opt<'a, T>(
    r: &mut Unpacker<'a>,
    what: &str,
    get: impl FnOnce(&mut Unpacker<'a>) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    if read_bool(r, what)? {
        get(r).map(Some)
    } else {
        Ok(None)
    }
}

fn read_name(r: &mut Unpacker<'_>) -> Result<String, Error> {
    r.str("TRES name")?
        .ok_or_else(|| Error::invalid(format!("{WHAT}: a TRES without a name")))
}

fn read_usage(r: &mut Unpacker<'_>) -> Result<Usage, Error> {
    let raw = f64::from_bits(r.u64("raw usage")?);
    let wall = f64::from_bits(r.u64("wall usage")?);
    let mut tres = std::collections::BTreeMap::new();
    for _ in 0..r.u32("TRES usage")? {
        let name = read_name(r)?;
        tres.insert(name, f64::from_bits(r.u64("TRES usage")?));
    }
    Ok(Usage { raw, tres, wall })
}

fn read_run_secs(r: &mut Unpacker<'_>) -> Result<TresSeconds, Error> {
    let mut out = TresSeconds::new();
    for _ in 0..r.u32("TRES run seconds")? {
        let name = read_name(r)?;
        out.insert(name, r.u64("TRES run seconds")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Saved {
        let usage = Usage {
            raw: 2998.97,
            tres: [("cpu".to_string(), 2998.97)].into(),
            wall: 299.9,
        };
        Saved {
            last_ran: Some(1_700_000_000),
            last_reset: None,
            assocs: vec![
                NewAssoc {
                    spec: AssocSpec {
                        id: 1,
                        parent: None,
                        account: "root".into(),
                        user: None,
                        user_id: None,
                        partition: None,
                        shares: Shares::Raw(1),
                        priority: None,
                    },
                    usage: usage.clone(),
                    run_secs: TresSeconds::new(),
                },
                NewAssoc {
                    spec: AssocSpec {
                        id: 2,
                        parent: Some(1),
                        account: "physics".into(),
                        user: Some("alice".into()),
                        user_id: Some(1001),
                        partition: Some("gpu".into()),
                        shares: Shares::Parent,
                        priority: Some(10),
                    },
                    usage,
                    run_secs: [("cpu".to_string(), 600)].into(),
                },
            ],
            qos: vec![Qos {
                spec: QosSpec {
                    id: 1,
                    name: "normal".into(),
                    priority: 5,
                    usage_factor: 0.5,
                    no_decay: true,
                },
                usage: Usage::default(),
                run_secs: TresSeconds::new(),
            }],
            ended: vec![7, 9],
        }
    }

    #[test]
    fn round_trips() {
        let s = sample();
        assert_eq!(Saved::decode(&s.encode()).unwrap(), s);
    }

    #[test]
    fn refuses_what_it_cannot_read_completely() {
        let bytes = sample().encode();
        for cut in [0, 3, 5, 20, bytes.len() - 1] {
            assert!(Saved::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Saved::decode(&extra).unwrap_err().contains("announces"));
        assert!(Saved::decode(b"PBAS\x00\x02")
            .unwrap_err()
            .contains("shorter"));
        let mut other = bytes.clone();
        other[..4].copy_from_slice(b"PBAS");
        assert!(Saved::decode(&other).unwrap_err().contains("magic"));
        let mut version = bytes.clone();
        version[5] = 9;
        assert!(Saved::decode(&version).unwrap_err().contains("version 9"));
        let mut damaged = bytes;
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(Saved::decode(&damaged).unwrap_err().contains("checksum"));
    }
}
