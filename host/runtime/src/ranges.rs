//! Lists of indices as Slurm writes them: ascending ranges, `0-3,8`
//! (`CPU_IDs=`, gres.conf's `Cores=`, cpusets, the kernel's CPU lists).
//! One writer ([`format()`]) and one reader ([`parse`]).

/// Ascending ids as ranges: `0-1,4,6-7`; empty for none.
pub fn format(ids: impl IntoIterator<Item = u32>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for id in ids {
        run = match run {
            Some((lo, hi)) if id == hi + 1 => Some((lo, id)),
            Some(done) => {
                out.push(range(done));
                Some((id, id))
            }
            None => Some((id, id)),
        };
    }
    out.extend(run.map(range));
    out.join(",")
}

/// The inverse of [`format()`]: `0-1,4` as sorted, unique indices below
/// `limit`; `None` when an item is not a number or a range, is reversed,
/// or reaches `limit`. The ranges are sorted and merged before any index is
/// written, so a range repeated many times costs its text, not its length
/// again. The form of gres.conf's `Cores=` and of the kernel's CPU lists
/// (`/sys/devices/system/node/node0/cpulist`).
pub fn parse(text: &str, limit: u32) -> Option<Vec<u32>> {
    let number = |s: &str| -> Option<u32> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok().filter(|&n| n < limit)
    };
    let mut ranges = Vec::new();
    for item in text.split(',') {
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let (lo, hi) = (number(lo)?, number(hi)?);
        if lo > hi {
            return None;
        }
        ranges.push((lo, hi));
    }
    ranges.sort_unstable();
    let mut out = Vec::new();
    for (lo, hi) in ranges {
        let from = out.last().map_or(lo, |&last: &u32| lo.max(last + 1));
        out.extend(from..=hi);
    }
    Some(out)
}

fn range((lo, hi): (u32, u32)) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_slurm_writes_them() {
        assert_eq!(format([0, 1, 4, 6, 7]), "0-1,4,6-7");
        assert_eq!(format([]), "");
    }

    #[test]
    fn read_sorted_and_merged() {
        assert_eq!(parse("4,0-1,1-2", 8), Some(vec![0, 1, 2, 4]));
        assert_eq!(parse("3-1", 8), None);
        assert_eq!(parse("8", 8), None);
        assert_eq!(parse("1,,2", 8), None);
    }
}
