//! CPU masks (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_lllp_map_abstract_masks`): abstract → OS numbering through `block_map`,
//! widening to NUMA nodes, and Slurm's two hex forms.
//!
//! * the `cpu_bind` form (`bit_fmt_hexmask`): `0x`, upper-case, zero-padded
//!   to `ceil(N / 4)` digits for N CPUs: [`Bitmap::to_hex_mask`];
//! * the CPU set form (`task_cpuset_to_str`), used in verbose lines and in
//!   masks task/affinity re-validates: lower-case, no `0x`, no leading
//!   zeros, `0` for an empty set: [`cpuset_text`].
//!
//! CPU sets (what `sched_setaffinity` takes) are [`CPU_SETSIZE`] bits wide,
//! indexed by OS CPU id; bits past it are dropped, as glibc's `CPU_SET` does.

use slurm_wasm_sdk::Bitmap;

use crate::hardware::Hardware;

/// glibc's `CPU_SETSIZE`: the CPU ids a CPU set can hold.
pub const CPU_SETSIZE: usize = 1024;

/// Maps an abstract mask to OS CPU ids (`_lllp_map_abstract_mask`). The
/// result has the same width; an OS id past it is dropped with an error
/// logged, as Slurm does.
pub fn to_os(mask: &Bitmap, hw: &Hardware) -> Bitmap {
    let mut os = Bitmap::new(mask.len());
    for i in mask.ones() {
        let cpu = hw.os_cpu(i) as usize;
        if cpu < os.len() {
            os.set(cpu);
        } else {
            slurm_wasm_sdk::error!(
                "can't go from {i} -> {cpu} since we only have {} bits",
                os.len()
            );
        }
    }
    os
}

/// Widens an OS mask to every CPU of each NUMA node it touches
/// (`_match_masks_to_ldom`); no change on a machine without NUMA nodes.
pub fn widen_to_ldoms(mask: &mut Bitmap, hw: &Hardware) {
    let nodes: Vec<u32> = mask.ones().filter_map(|cpu| hw.numa_node(cpu)).collect();
    for cpu in 0..mask.len() {
        if hw.numa_node(cpu).is_some_and(|n| nodes.contains(&n)) {
            mask.set(cpu);
        }
    }
}

/// `task_cpuset_to_str`: lower-case hex without `0x` or leading zeros.
pub fn cpuset_text(set: &Bitmap) -> String {
    let Some(last) = set.last() else {
        return "0".into();
    };
    (0..=last / 4)
        .rev()
        .map(|digit| {
            let nibble = (0..4).fold(0u32, |acc, b| acc | u32::from(set.get(digit * 4 + b)) << b);
            char::from_digit(nibble, 16).unwrap_or('0')
        })
        .collect()
}

/// A CPU set read from hex text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSet {
    /// The CPUs read; when a bad character stopped the reading, those of
    /// the digits after it (the text is read from its end).
    pub cpus: Bitmap,
    /// The first character, from the end, that is not a hex digit.
    pub bad_char: Option<char>,
}

/// `task_str_to_cpuset`: hex digits, least significant last, with an
/// optional `0x` prefix; any case.
pub fn parse_cpuset(text: &str) -> ParsedSet {
    let digits = match text.strip_prefix("0x") {
        Some(rest) if text.len() > 1 => rest,
        _ => text,
    };
    let mut cpus = Bitmap::new(CPU_SETSIZE);
    for (position, c) in digits.chars().rev().enumerate() {
        let Some(value) = c.to_digit(16) else {
            return ParsedSet {
                cpus,
                bad_char: Some(c),
            };
        };
        for b in 0..4 {
            let cpu = position * 4 + b;
            if value & (1 << b) != 0 && cpu < CPU_SETSIZE {
                cpus.set(cpu);
            }
        }
    }
    ParsedSet {
        cpus,
        bad_char: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::testing::hyperthreaded;

    #[test]
    fn abstract_masks_map_through_block_map() {
        // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_lllp_map_abstract_mask`: abstract 0,1 (core 0, both
        // threads) is OS 0 and 8 with HT numbering.
        let hw = hyperthreaded(2, 4, 2);
        let os = to_os(&Bitmap::from_bits(16, [0, 1]), &hw);
        assert_eq!(os.to_hex_mask(), "0x0101");
        let os = to_os(&Bitmap::from_bits(16, 0..8), &hw);
        assert_eq!(os.to_hex_mask(), "0x0F0F");
    }

    #[test]
    fn widening_covers_whole_numa_nodes() {
        let mut hw = hyperthreaded(2, 4, 2);
        let mut mask = Bitmap::from_bits(16, [1]);
        widen_to_ldoms(&mut mask, &hw);
        assert_eq!(mask.to_hex_mask(), "0x0002");
        // Node 0 holds OS CPUs 0-3 and 8-11.
        hw.numa_node_of_cpu = (0..16).map(|c| u32::from(c % 8 >= 4)).collect();
        widen_to_ldoms(&mut mask, &hw);
        assert_eq!(mask.to_hex_mask(), "0x0F0F");
    }

    #[test]
    fn cpu_set_text_is_lower_case_and_trimmed() {
        assert_eq!(cpuset_text(&Bitmap::new(CPU_SETSIZE)), "0");
        assert_eq!(cpuset_text(&Bitmap::from_bits(CPU_SETSIZE, [2])), "4");
        assert_eq!(cpuset_text(&Bitmap::from_bits(CPU_SETSIZE, 8..16)), "ff00");
    }

    #[test]
    fn cpu_set_parsing_reads_from_the_end() {
        let set = parse_cpuset("0x0300");
        assert_eq!(set.cpus.ones().collect::<Vec<_>>(), [8, 9]);
        assert_eq!(set.bad_char, None);
        assert_eq!(
            parse_cpuset("Fa").cpus.ones().collect::<Vec<_>>(),
            [1, 3, 4, 5, 6, 7]
        );
        let bad = parse_cpuset("z1");
        assert_eq!((bad.bad_char, bad.cpus.count()), (Some('z'), 1));
        assert_eq!(parse_cpuset("").cpus.count(), 0);
    }
}
