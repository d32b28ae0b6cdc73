//! The bytes slurmd hands to slurmstepd (`gres_p_send_stepd` /
//! `gres_p_recv_stepd`), Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_send_stepd`/`gres_p_recv_stepd`
//! (src/plugins/gres/common/gres_common.c `common_send_stepd`/`common_recv_stepd`), and for the
//! shared table src/plugins/gres/common/gres_c_s.c `gres_c_s_send_stepd`/`gres_c_s_recv_stepd`.
//!
//! Layout, little-endian: magic `SWGR`, format version (u16, currently 1),
//! device count (u32), per device index (u32), dev_num (i32), major (u32),
//! minor (u32), path (u32 length + UTF-8), unique id (u8 0/1, then a string
//! when 1); the node's env flags (u8); the shared table (u32 count, then per
//! GPU its id (i32) and share count (u64); empty for gres/gpu).
//! [`StepdState::decode`] refuses anything else: wrong magic or version,
//! truncation, trailing bytes, unknown flag bits, invalid UTF-8.

use slurm_wasm_sdk::codes::EINVAL;
use slurm_wasm_sdk::gres::Device;
use slurm_wasm_sdk::Error;

use crate::conf::EnvVendors;

const MAGIC: &[u8; 4] = b"SWGR";
/// The format version [`StepdState::encode`] writes.
pub const VERSION: u16 = 1;

/// What slurmstepd needs of the node's configuration.
#[derive(Debug, Clone, Default)]
pub struct StepdState {
    pub devices: Vec<Device>,
    /// The node's env flags (`node_flags`).
    pub vendors: EnvVendors,
    /// MPS `shared_info`: (GPU id = trailing digits of its file, shares).
    pub shared: Vec<(i32, u64)>,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u32).to_le_bytes());
    out.extend(s.as_bytes());
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.data.len());
        let Some(end) = end else {
            return Err(Error::new(
                EINVAL,
                format!(
                    "stepd data truncated: {what} needs {n} bytes at offset {}, only {} left",
                    self.at,
                    self.data.len() - self.at
                ),
            ));
        };
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Error> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn string(&mut self, what: &str) -> Result<String, Error> {
        let len = self.u32(what)? as usize;
        let bytes = self.take(len, what)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| Error::new(EINVAL, format!("stepd data: {what} is not UTF-8")))
    }

    fn count(&mut self, what: &str, min_item: usize) -> Result<usize, Error> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_item) > self.data.len() - self.at {
            return Err(Error::new(
                EINVAL,
                format!("stepd data: {what} says {n} entries, more than the remaining bytes hold"),
            ));
        }
        Ok(n)
    }
}

impl StepdState {
    /// The bytes of this state.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(MAGIC);
        out.extend(VERSION.to_le_bytes());
        out.extend((self.devices.len() as u32).to_le_bytes());
        for d in &self.devices {
            out.extend(d.index.to_le_bytes());
            out.extend(d.dev_num.to_le_bytes());
            out.extend(d.major.to_le_bytes());
            out.extend(d.minor.to_le_bytes());
            put_str(&mut out, &d.path);
            match &d.unique_id {
                Some(id) => {
                    out.push(1);
                    put_str(&mut out, id);
                }
                None => out.push(0),
            }
        }
        out.push(self.vendors.bits());
        out.extend((self.shared.len() as u32).to_le_bytes());
        for (id, count) in &self.shared {
            out.extend(id.to_le_bytes());
            out.extend(count.to_le_bytes());
        }
        out
    }

    /// Reads bytes written by [`StepdState::encode`]; see the module
    /// documentation for what is refused.
    pub fn decode(data: &[u8]) -> Result<Self, Error> {
        let mut r = Reader { data, at: 0 };
        if r.take(4, "magic")? != MAGIC {
            return Err(Error::new(
                EINVAL,
                "stepd data does not start with the gres magic `SWGR`",
            ));
        }
        let version = u16::from_le_bytes(r.array("version")?);
        if version != VERSION {
            return Err(Error::new(
                EINVAL,
                format!("stepd data has format version {version}, expected {VERSION}"),
            ));
        }
        let n = r.count("device count", 22)?;
        let mut devices = Vec::with_capacity(n);
        for _ in 0..n {
            let index = r.u32("device index")?;
            let dev_num = i32::from_le_bytes(r.array("device number")?);
            let major = r.u32("major")?;
            let minor = r.u32("minor")?;
            let path = r.string("device path")?;
            let unique_id = match r.u8("unique id marker")? {
                0 => None,
                1 => Some(r.string("unique id")?),
                other => {
                    return Err(Error::new(
                        EINVAL,
                        format!("stepd data: unique id marker {other}, expected 0 or 1"),
                    ))
                }
            };
            devices.push(Device {
                index,
                dev_num,
                major,
                minor,
                path,
                unique_id,
            });
        }
        let bits = r.u8("env flags")?;
        let vendors = EnvVendors::from_bits(bits).ok_or_else(|| {
            Error::new(
                EINVAL,
                format!("stepd data: unknown env flag bits {bits:#04x}"),
            )
        })?;
        let n = r.count("shared table size", 12)?;
        let mut shared = Vec::with_capacity(n);
        for _ in 0..n {
            let id = i32::from_le_bytes(r.array("shared id")?);
            let count = u64::from_le_bytes(r.array("shared count")?);
            shared.push((id, count));
        }
        if r.at != data.len() {
            return Err(Error::new(
                EINVAL,
                format!(
                    "stepd data has {} trailing bytes after the shared table",
                    data.len() - r.at
                ),
            ));
        }
        Ok(StepdState {
            devices,
            vendors,
            shared,
        })
    }
}
