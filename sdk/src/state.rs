//! Self-describing state blobs for `state-save` / `state-restore`, for any
//! plugin kind (select/linear's is one).
//!
//! The host wraps the blob in its own checked header; the blob still
//! carries its own: a 4-byte magic naming the plugin, a format version, the
//! body length and an FNV-1a checksum of the body, so a blob from another
//! plugin, another format or a damaged copy is refused before a single
//! field is used. The body is written with [`Packer`] and read with
//! [`Unpacker`]; a restore must read it to the last byte
//! ([`Unpacker::finish`]) before changing any state.
//!
//! Layout: `magic[4] | version u16 | length u32 | checksum u32 | body`.

use crate::pack::{Packer, Unpacker};
use crate::Error;

const HEADER: usize = 4 + 2 + 4 + 4;

/// 32-bit FNV-1a.
fn fnv1a(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Writes a state blob: fill [`StateWriter::body`], then [`StateWriter::finish`].
#[derive(Debug)]
pub struct StateWriter {
    magic: [u8; 4],
    version: u16,
    body: Packer,
}

impl StateWriter {
    /// A blob of format `version` of the plugin whose magic is `magic`.
    pub fn new(magic: [u8; 4], version: u16) -> Self {
        StateWriter {
            magic,
            version,
            body: Packer::new(),
        }
    }

    /// The body, written with Slurm's packing.
    pub fn body(&mut self) -> &mut Packer {
        &mut self.body
    }

    /// The blob: header followed by the body.
    pub fn finish(self) -> Vec<u8> {
        let body = self.body.finish();
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend_from_slice(&self.magic);
        out.extend_from_slice(&self.version.to_be_bytes());
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&fnv1a(&body).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }
}

/// Checks a blob's header and returns its format version and a reader of
/// its body. `EINVAL` naming `what` when the blob is shorter than a header,
/// has another magic, a version not in `versions`, a length that does not
/// match, or a checksum that does not match.
pub fn open<'a>(
    data: &'a [u8],
    magic: [u8; 4],
    versions: &[u16],
    what: &'a str,
) -> Result<(u16, Unpacker<'a>), Error> {
    if data.len() < HEADER {
        return Err(Error::invalid(format!(
            "{what}: state of {} bytes is shorter than its {HEADER}-byte header",
            data.len()
        )));
    }
    if data[..4] != magic {
        return Err(Error::invalid(format!(
            "{what}: state starts with {:?}, not this plugin's magic {:?}",
            String::from_utf8_lossy(&data[..4]),
            String::from_utf8_lossy(&magic)
        )));
    }
    let version = u16::from_be_bytes([data[4], data[5]]);
    if !versions.contains(&version) {
        return Err(Error::invalid(format!(
            "{what}: state format version {version} is not one this plugin reads ({versions:?})"
        )));
    }
    let length = u32::from_be_bytes([data[6], data[7], data[8], data[9]]) as usize;
    let body = &data[HEADER..];
    if body.len() != length {
        return Err(Error::invalid(format!(
            "{what}: state header announces {length} bytes of data, {} present",
            body.len()
        )));
    }
    let checksum = u32::from_be_bytes([data[10], data[11], data[12], data[13]]);
    if fnv1a(body) != checksum {
        return Err(Error::invalid(format!(
            "{what}: state checksum mismatch (damaged data)"
        )));
    }
    Ok((version, Unpacker::new(body, what)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob() -> Vec<u8> {
        let mut w = StateWriter::new(*b"TEST", 1);
        w.body().u32(42).str(Some("x"));
        w.finish()
    }

    #[test]
    fn round_trip() {
        let data = blob();
        let (version, mut r) = open(&data, *b"TEST", &[1], "t").unwrap();
        assert_eq!(version, 1);
        assert_eq!(r.u32("a").unwrap(), 42);
        assert_eq!(r.str("b").unwrap().as_deref(), Some("x"));
        r.finish().unwrap();
    }

    #[test]
    fn every_corruption_is_refused() {
        let data = blob();
        assert!(open(&data, *b"OTHR", &[1], "t").is_err());
        assert!(open(&data, *b"TEST", &[2], "t").is_err());
        for cut in 0..data.len() {
            assert!(
                open(&data[..cut], *b"TEST", &[1], "t").is_err(),
                "cut {cut}"
            );
        }
        for i in HEADER..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x40;
            let err = open(&bad, *b"TEST", &[1], "t").unwrap_err();
            assert!(err.message.contains("checksum"), "{}", err.message);
        }
    }
}
