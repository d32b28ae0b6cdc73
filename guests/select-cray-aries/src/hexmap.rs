//! Slurm's `pack_bit_str_hex` / `unpack_bit_str_hex` (src/common/pack.h,
//! bitstring.c `bit_fmt_hexmask`): how select/cray_aries packs its blade
//! and node maps. A missing map is `NO_VAL` alone; a map is its bit count,
//! then a packed string `0x` + upper-case hex digits, most significant
//! first (bit 0 is the lowest bit of the last digit).

use slurm_wasm_sdk::codes::NO_VAL;
use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::{Bitmap, Error};

/// Packs `map` (none: `NO_VAL`).
pub fn pack(p: &mut Packer, map: Option<&Bitmap>) {
    let Some(map) = map else {
        p.u32(NO_VAL);
        return;
    };
    p.u32(map.len() as u32);
    let digits = map.len().div_ceil(4).max(1);
    let mut text = String::with_capacity(2 + digits);
    text.push_str("0x");
    for d in (0..digits).rev() {
        let nibble = (0..4)
            .filter(|b| {
                let bit = d * 4 + b;
                bit < map.len() && map.get(bit)
            })
            .fold(0u32, |acc, b| acc | (1 << b));
        text.push(char::from_digit(nibble, 16).map_or('0', |c| c.to_ascii_uppercase()));
    }
    p.str(Some(&text));
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
    let hex = text.strip_prefix("0x").unwrap_or(&text);
    let mut map = Bitmap::new(bits as usize);
    for (d, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16).ok_or_else(|| {
            Error::invalid(format!("{field}: {c:?} in {text:?} is not a hex digit"))
        })?;
        for b in 0..4 {
            if nibble & (1 << b) == 0 {
                continue;
            }
            let bit = d * 4 + b;
            if bit >= bits as usize {
                return Err(Error::invalid(format!(
                    "{field}: {text:?} sets bit {bit} of a {bits}-bit map"
                )));
            }
            map.set(bit);
        }
    }
    Ok(Some(map))
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
