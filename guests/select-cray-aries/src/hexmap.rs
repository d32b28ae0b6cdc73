//! Slurm's `pack_bit_str_hex` / `unpack_bit_str_hex` (src/common/pack.h):
//! how select/cray_aries packs its blade and node maps. A missing map is
//! `NO_VAL` alone; a map is its bit count, then a packed string in the
//! SDK's hex mask format ([`Bitmap::to_hex_mask`], `bit_fmt_hexmask`).

use slurm_wasm_sdk::codes::NO_VAL;
use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::{Bitmap, Error};

/// Packs `map` (none: `NO_VAL`).
pub fn pack(p: &mut Packer, map: Option<&Bitmap>) {
    match map {
        Some(map) => p.u32(map.len() as u32).str(Some(&map.to_hex_mask())),
        None => p.u32(NO_VAL),
    };
}

/// Unpacks a map written by [`pack`]: none for `NO_VAL` or a count of 0;
/// an error for a digit that is not hex or a bit set past the count.
pub fn unpack(u: &mut Unpacker<'_>, field: &str) -> Result<Option<Bitmap>, Error> {
    let bits = u.u32(field)?;
    if bits == NO_VAL {
        return Ok(None);
    }
    let text = u.str(field)?.unwrap_or_default();
    if bits == 0 {
        return Ok(None);
    }
    Bitmap::from_hex_mask(bits as usize, &text)
        .map(Some)
        .map_err(|e| Error::invalid(format!("{field}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cray-aries.md §11.1 and §11.14: a blade's nodes `0x11` over 8
    /// nodes, blade 0 of 4 `0x1`, as Slurm's `bit_fmt_hexmask` writes them.
    #[test]
    fn maps_pack_as_slurm_writes_them() {
        let mut p = Packer::new();
        pack(&mut p, Some(&Bitmap::from_bits(8, [0, 4])));
        assert_eq!(p.finish(), b"\0\0\0\x08\0\0\0\x050x11\0");
        let mut p = Packer::new();
        pack(&mut p, Some(&Bitmap::from_bits(4, [0])));
        assert_eq!(p.finish(), b"\0\0\0\x04\0\0\0\x040x1\0");
        let mut p = Packer::new();
        pack(&mut p, None);
        assert_eq!(p.finish(), [0xff, 0xff, 0xff, 0xfe]);
    }

    #[test]
    fn maps_round_trip_and_bad_ones_are_refused() {
        let map = Bitmap::from_bits(13, [0, 5, 12]);
        let mut p = Packer::new();
        pack(&mut p, Some(&map));
        let data = p.finish();
        let mut u = Unpacker::new(&data, "test");
        assert_eq!(unpack(&mut u, "map").unwrap(), Some(map));
        for bad in ["0xZ", "0x10"] {
            let mut p = Packer::new();
            p.u32(4).str(Some(bad));
            let data = p.finish();
            let mut u = Unpacker::new(&data, "test");
            assert!(unpack(&mut u, "map").is_err(), "{bad}");
        }
    }
}
