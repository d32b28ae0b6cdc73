//! Slurm's buffer packing (`pack16`, `pack32`, `pack64`, `packstr`,
//! `packdouble`): big-endian integers, strings as a `u32` length that counts
//! the terminating NUL (0 for a NULL string) followed by the bytes and the
//! NUL, doubles as the bit pattern of `value × 1 000 000`.
//!
//! [`Unpacker`] never reads past the end: every read of a truncated buffer
//! is an `EINVAL` error naming what was being read and at which byte.
//!
//! The select nodeinfo and jobinfo records (`select::info`, with the
//! `select` feature) pack with these, as do the state blobs of
//! select/linear and select/cons_tres (`guests/select-common`). Layouts
//! follow Slurm 22.05's `src/common/pack.c` (`pack16`, `packstr`,
//! `packdouble`).

use crate::{Bitmap, Error};

/// `FLOAT_MULT`: Slurm scales doubles by this before packing their bits.
const FLOAT_MULT: f64 = 1_000_000.0;

/// Writes values in Slurm's packed form.
#[derive(Debug, Default, Clone)]
pub struct Packer {
    buf: Vec<u8>,
}

impl Packer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// One byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }

    /// `pack16`: two bytes, big-endian.
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// `pack32`: four bytes, big-endian.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// `pack64`: eight bytes, big-endian.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// `pack_time`: a signed 64-bit value, big-endian.
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// `packdouble`: the bits of `v × FLOAT_MULT`.
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.u64((v * FLOAT_MULT).to_bits())
    }

    /// `packstr`: `None` is Slurm's NULL string (length 0).
    pub fn str(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            None => self.u32(0),
            Some(s) => {
                self.u32(s.len() as u32 + 1);
                self.buf.extend_from_slice(s.as_bytes());
                self.u8(0)
            }
        }
    }

    /// `packmem`: a byte string, its length (u32) first.
    pub fn bytes(&mut self, data: &[u8]) -> &mut Self {
        self.u32(data.len() as u32);
        self.buf.extend_from_slice(data);
        self
    }

    /// A bitmap as its bit length and 64-bit words.
    pub fn bitmap(&mut self, map: &Bitmap) -> &mut Self {
        self.u32(map.len() as u32);
        for w in map.to_words() {
            self.u64(w);
        }
        self
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Nothing written yet.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The packed bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// Reads values written by [`Packer`], refusing truncated data.
#[derive(Debug, Clone)]
pub struct Unpacker<'a> {
    data: &'a [u8],
    pos: usize,
    /// What is being unpacked, for messages (`select/linear nodeinfo`).
    what: &'a str,
}

impl<'a> Unpacker<'a> {
    /// Reads `data` from its first byte; `what` names the data in errors.
    pub fn new(data: &'a [u8], what: &'a str) -> Self {
        Unpacker { data, pos: 0, what }
    }

    /// Byte offset of the next read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], Error> {
        if self.remaining() < n {
            return Err(Error::invalid(format!(
                "{}: truncated data: {field} needs {n} bytes at byte {}, only {} left",
                self.what,
                self.pos,
                self.remaining()
            )));
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, field)?);
        Ok(out)
    }

    /// One byte; `field` names it in errors (as for every read below).
    pub fn u8(&mut self, field: &str) -> Result<u8, Error> {
        Ok(self.take(1, field)?[0])
    }

    /// `unpack16`.
    pub fn u16(&mut self, field: &str) -> Result<u16, Error> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    /// `unpack32`.
    pub fn u32(&mut self, field: &str) -> Result<u32, Error> {
        Ok(u32::from_be_bytes(self.array(field)?))
    }

    /// `unpack64`.
    pub fn u64(&mut self, field: &str) -> Result<u64, Error> {
        Ok(u64::from_be_bytes(self.array(field)?))
    }

    /// `unpack_time`: a signed 64-bit value.
    pub fn i64(&mut self, field: &str) -> Result<i64, Error> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }

    /// `unpackdouble`: the inverse of [`Packer::f64`].
    pub fn f64(&mut self, field: &str) -> Result<f64, Error> {
        Ok(f64::from_bits(self.u64(field)?) / FLOAT_MULT)
    }

    /// `unpackstr`: a NULL string is `None`. Fails on a missing NUL
    /// terminator or bytes that are not UTF-8.
    pub fn str(&mut self, field: &str) -> Result<Option<String>, Error> {
        let len = self.u32(field)? as usize;
        if len == 0 {
            return Ok(None);
        }
        let at = self.pos;
        let bytes = self.take(len, field)?;
        let (text, nul) = bytes.split_at(len - 1);
        if nul != [0] || text.contains(&0) {
            return Err(Error::invalid(format!(
                "{}: {field} at byte {at} is not a NUL-terminated string",
                self.what
            )));
        }
        String::from_utf8(text.to_vec()).map(Some).map_err(|_| {
            Error::invalid(format!("{}: {field} at byte {at} is not UTF-8", self.what))
        })
    }

    /// `unpackmem`: a byte string written by [`Packer::bytes`].
    pub fn bytes(&mut self, field: &str) -> Result<&'a [u8], Error> {
        let len = self.u32(field)? as usize;
        self.take(len, field)
    }

    /// A bitmap written by [`Packer::bitmap`]; fails when bits are set past
    /// its length.
    pub fn bitmap(&mut self, field: &str) -> Result<Bitmap, Error> {
        let len = self.u32(field)?;
        let words = (len as usize).div_ceil(64);
        if words * 8 > self.remaining() {
            return Err(Error::invalid(format!(
                "{}: truncated data: {field} of {len} bits at byte {} needs {} bytes, only {} left",
                self.what,
                self.pos,
                words * 8,
                self.remaining()
            )));
        }
        let words = (0..words)
            .map(|_| self.u64(field))
            .collect::<Result<Vec<_>, _>>()?;
        Bitmap::from_words(len, &words)
            .map_err(|e| Error::invalid(format!("{}: {field}: {e}", self.what)))
    }

    /// Succeeds only when every byte was read.
    pub fn finish(self) -> Result<(), Error> {
        if self.remaining() != 0 {
            return Err(Error::invalid(format!(
                "{}: {} unexpected bytes after the data, at byte {}",
                self.what,
                self.remaining(),
                self.pos
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_big_endian_with_slurm_strings() {
        // Slurm's pack.c layout: network byte order; packstr = u32 length
        // counting the NUL, then the bytes and the NUL; NULL = length 0.
        let mut p = Packer::new();
        p.u16(0x0102).str(Some("ab")).str(None).u64(7);
        let bytes = p.finish();
        assert_eq!(
            bytes,
            vec![1, 2, 0, 0, 0, 3, b'a', b'b', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7]
        );
        let mut u = Unpacker::new(&bytes, "test");
        assert_eq!(u.u16("a").unwrap(), 0x0102);
        assert_eq!(u.str("b").unwrap().as_deref(), Some("ab"));
        assert_eq!(u.str("c").unwrap(), None);
        assert_eq!(u.u64("d").unwrap(), 7);
        u.finish().unwrap();
    }

    #[test]
    fn doubles_round_trip_through_float_mult() {
        // packdouble stores the bits of value * FLOAT_MULT (1e6).
        let mut p = Packer::new();
        p.f64(2.5);
        let bytes = p.finish();
        assert_eq!(bytes, 2_500_000.0f64.to_bits().to_be_bytes().to_vec());
        assert_eq!(Unpacker::new(&bytes, "t").f64("x").unwrap(), 2.5);
    }

    #[test]
    fn truncated_reads_are_einval_naming_the_field() {
        let bytes = [0u8, 0, 0, 9, b'x'];
        let err = Unpacker::new(&bytes, "nodeinfo").str("tres").unwrap_err();
        assert_eq!(err.code, crate::codes::EINVAL);
        assert!(err.message.contains("nodeinfo"), "{}", err.message);
        assert!(err.message.contains("tres"), "{}", err.message);
        let err = Unpacker::new(&[1], "x").u16("cpus").unwrap_err();
        assert!(err.message.contains("truncated"), "{}", err.message);
    }

    #[test]
    fn strings_without_nul_and_trailing_bytes_are_refused() {
        assert!(Unpacker::new(&[0, 0, 0, 2, b'a', b'b'], "x")
            .str("s")
            .is_err());
        let u = Unpacker::new(&[1], "x");
        assert!(u.finish().unwrap_err().message.contains("1 unexpected"));
    }

    #[test]
    fn bitmaps_round_trip_and_refuse_huge_lengths() {
        let map = Bitmap::from_bits(70, [1, 69]);
        let mut p = Packer::new();
        p.bitmap(&map);
        let bytes = p.finish();
        assert_eq!(Unpacker::new(&bytes, "x").bitmap("m").unwrap(), map);
        // A length claiming 2^32-1 bits with no words behind it.
        assert!(Unpacker::new(&[0xff, 0xff, 0xff, 0xff], "x")
            .bitmap("m")
            .is_err());
    }
}
