//! `scontrol show config` lines and the sampling instant of a sample.

use super::{integer, Parsed};

/// When a sample was taken (`instant.txt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instant {
    /// The decay pass whose factors `sprio` shows and whose usage `sshare`
    /// shows: the time saved in `StateSaveLocation/priority_last_decay_ran`.
    pub last_decay_ran: i64,
    /// `date +%s` before the first and after the last command of the sample.
    pub sampled_from: i64,
    pub sampled_to: i64,
}

/// `Key = Value` lines of `scontrol show config`, in order; the value may
/// be empty.
pub fn parse_show_config(text: &str) -> Parsed<Vec<(String, String)>> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (key, value) = line
                .split_once(" = ")
                .or_else(|| line.strip_suffix(" =").map(|k| (k, "")))
                .ok_or_else(|| format!("expected `Key = Value`: `{line}`"))?;
            Ok((key.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

/// `instant.txt`: `last_decay_ran=`, `sampled_from=`, `sampled_to=` lines.
pub fn parse_instant(text: &str) -> Parsed<Instant> {
    let get = |key: &str| -> Parsed<i64> {
        let value = text
            .lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .ok_or(format!("no {key}="))?;
        integer(value)
    };
    Ok(Instant {
        last_decay_ran: get("last_decay_ran")?,
        sampled_from: get("sampled_from")?,
        sampled_to: get("sampled_to")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_and_instant() {
        let config = parse_show_config(
            "PriorityFlags           = \nPriorityWeightTRES      = CPU=100,Mem=1\n",
        )
        .unwrap();
        assert_eq!(config[0], ("PriorityFlags".into(), String::new()));
        assert_eq!(
            config[1],
            ("PriorityWeightTRES".into(), "CPU=100,Mem=1".into())
        );
        assert!(parse_show_config("junk\n").is_err());

        let at = parse_instant("last_decay_ran=100\nsampled_from=101\nsampled_to=102\n").unwrap();
        assert_eq!(
            (at.last_decay_ran, at.sampled_from, at.sampled_to),
            (100, 101, 102)
        );
        assert_eq!(
            parse_instant("sampled_from=1\n").unwrap_err(),
            "no last_decay_ran="
        );
    }
}
