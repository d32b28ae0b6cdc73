//! The plugin's saved state: the association tree and QOS table with their
//! usage, the last decay cycle (`priority_last_decay_ran`: last ran, last
//! reset) and the jobs whose end has been charged.
//!
//! The tree and QOS settings are saved too, so that an instance restarted
//! from its state by the host (which does not replay `update-associations`)
//! has its whole tree back.
//!
//! Layout, little-endian: magic `SWMF`, format version (u16), then the
//! fields of [`Saved`] in order. Strings are a u32 length and UTF-8 bytes,
//! options a 0/1 byte and the value, lists a u32 count and the items.
//!
//! # Failure modes
//!
//! [`Saved::decode`] refuses anything it cannot read completely: wrong
//! magic, an unknown version, truncation, trailing bytes, invalid UTF-8 or
//! an invalid tag byte; the message says what and where.

use crate::qos::{Qos, QosSpec};
use crate::tree::{AssocSpec, NewAssoc, Shares};
use crate::usage::{TresSeconds, Usage};

const MAGIC: &[u8; 4] = b"SWMF";
const VERSION: u16 = 1;

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
        let mut w = Writer(MAGIC.to_vec());
        w.u16(VERSION);
        w.opt(self.last_ran, Writer::i64);
        w.opt(self.last_reset, Writer::i64);
        w.u32(self.assocs.len() as u32);
        for a in &self.assocs {
            let s = &a.spec;
            w.u32(s.id);
            w.opt(s.parent, Writer::u32);
            w.str(&s.account);
            w.opt(s.user.as_deref(), Writer::str);
            w.opt(s.user_id, Writer::u32);
            w.opt(s.partition.as_deref(), Writer::str);
            match s.shares {
                Shares::Raw(n) => {
                    w.u8(0);
                    w.u32(n);
                }
                Shares::Parent => w.u8(1),
            }
            w.opt(s.priority, Writer::u32);
            w.usage(&a.usage);
            w.run_secs(&a.run_secs);
        }
        w.u32(self.qos.len() as u32);
        for q in &self.qos {
            w.u32(q.spec.id);
            w.str(&q.spec.name);
            w.u32(q.spec.priority);
            w.f64(q.spec.usage_factor);
            w.u8(u8::from(q.spec.no_decay));
            w.usage(&q.usage);
            w.run_secs(&q.run_secs);
        }
        w.u32(self.ended.len() as u32);
        for id in &self.ended {
            w.u32(*id);
        }
        w.0
    }

    pub fn decode(data: &[u8]) -> Result<Saved, String> {
        let mut r = Reader { data, pos: 0 };
        if r.take(4)? != MAGIC {
            return Err("not a priority/multifactor state (bad magic)".into());
        }
        let version = r.u16()?;
        if version != VERSION {
            return Err(format!(
                "priority/multifactor state version {version} is not supported (this plugin reads {VERSION})"
            ));
        }
        let last_ran = r.opt(Reader::i64)?;
        let last_reset = r.opt(Reader::i64)?;
        let mut assocs = Vec::new();
        for _ in 0..r.u32()? {
            let id = r.u32()?;
            let parent = r.opt(Reader::u32)?;
            let account = r.str()?;
            let user = r.opt(Reader::str)?;
            let user_id = r.opt(Reader::u32)?;
            let partition = r.opt(Reader::str)?;
            let shares = match r.u8()? {
                0 => Shares::Raw(r.u32()?),
                1 => Shares::Parent,
                tag => return Err(r.bad_tag("shares", tag)),
            };
            let priority = r.opt(Reader::u32)?;
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
                usage: r.usage()?,
                run_secs: r.run_secs()?,
            });
        }
        let mut qos = Vec::new();
        for _ in 0..r.u32()? {
            let spec = QosSpec {
                id: r.u32()?,
                name: r.str()?,
                priority: r.u32()?,
                usage_factor: r.f64()?,
                no_decay: r.bool()?,
            };
            qos.push(Qos {
                spec,
                usage: r.usage()?,
                run_secs: r.run_secs()?,
            });
        }
        let mut ended = Vec::new();
        for _ in 0..r.u32()? {
            ended.push(r.u32()?);
        }
        if r.pos != data.len() {
            return Err(format!(
                "{} trailing bytes after the priority/multifactor state",
                data.len() - r.pos
            ));
        }
        Ok(Saved {
            last_ran,
            last_reset,
            assocs,
            qos,
            ended,
        })
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, v: &str) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v.as_bytes());
    }
    fn opt<T>(&mut self, v: Option<T>, put: impl FnOnce(&mut Self, T)) {
        match v {
            Some(v) => {
                self.u8(1);
                put(self, v);
            }
            None => self.u8(0),
        }
    }
    fn usage(&mut self, u: &Usage) {
        self.f64(u.raw);
        self.f64(u.wall);
        self.u32(u.tres.len() as u32);
        for (name, v) in &u.tres {
            self.str(name);
            self.f64(*v);
        }
    }
    fn run_secs(&mut self, r: &TresSeconds) {
        self.u32(r.len() as u32);
        for (name, v) in r {
            self.str(name);
            self.u64(*v);
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                format!(
                    "priority/multifactor state truncated at byte {} of {}",
                    self.pos,
                    self.data.len()
                )
            })?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    fn bad_tag(&self, what: &str, tag: u8) -> String {
        format!(
            "invalid {what} tag {tag} at byte {} of the priority/multifactor state",
            self.pos - 1
        )
    }
    fn bool(&mut self) -> Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            tag => Err(self.bad_tag("flag", tag)),
        }
    }
    fn str(&mut self) -> Result<String, String> {
        let len = self.u32()? as usize;
        let at = self.pos;
        String::from_utf8(self.take(len)?.to_vec())
            .map_err(|_| format!("invalid UTF-8 at byte {at} of the priority/multifactor state"))
    }
    fn opt<T>(
        &mut self,
        get: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        if self.bool()? {
            get(self).map(Some)
        } else {
            Ok(None)
        }
    }
    fn usage(&mut self) -> Result<Usage, String> {
        let raw = self.f64()?;
        let wall = self.f64()?;
        let mut tres = std::collections::BTreeMap::new();
        for _ in 0..self.u32()? {
            let name = self.str()?;
            tres.insert(name, self.f64()?);
        }
        Ok(Usage { raw, tres, wall })
    }
    fn run_secs(&mut self) -> Result<TresSeconds, String> {
        let mut out = TresSeconds::new();
        for _ in 0..self.u32()? {
            let name = self.str()?;
            out.insert(name, self.u64()?);
        }
        Ok(out)
    }
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
        assert!(Saved::decode(&bytes[..bytes.len() - 1])
            .unwrap_err()
            .contains("truncated"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Saved::decode(&extra).unwrap_err().contains("trailing"));
        assert!(Saved::decode(b"PBAS\x01\x00")
            .unwrap_err()
            .contains("magic"));
        let mut version = bytes.clone();
        version[4] = 9;
        assert!(Saved::decode(&version).unwrap_err().contains("version 9"));
        let mut tag = bytes;
        tag[6] = 7;
        assert!(Saved::decode(&tag)
            .unwrap_err()
            .contains("invalid flag tag 7"));
    }
}
