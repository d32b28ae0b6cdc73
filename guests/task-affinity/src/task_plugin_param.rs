//! `TaskPluginParam` from slurm.conf, as Slurm 22.05 reads it.
//!
//! task/affinity uses two parts of it: `Verbose` (the batch script's binding
//! is verbose, `batch_bind`) and `Autobind=` (the unit `lllp_distribution`
//! falls back to). The default binding unit (`None|Sockets|Cores|Threads`) is
//! applied by the controller to the step before it reaches the plugin.

use crate::bind_type::{
    AUTO_BIND_TO_CORES, AUTO_BIND_TO_SOCKETS, AUTO_BIND_TO_THREADS, NONE, SLURMD_OFF_SPEC,
    TO_CORES, TO_SOCKETS, TO_THREADS, VERBOSE,
};

/// Parses the `TaskPluginParam` tokens (each may itself hold several
/// comma-separated words) into `CPU_BIND_*` bits.
///
/// Accepted, case-insensitively: one of `None`, `Sockets`, `Cores`,
/// `Threads`; `Verbose`; one `Autobind=none|threads|cores|sockets`;
/// `SlurmdOffSpec`. Anything else fails with Slurm's message, as 22.05's
/// configuration reader does (so later words such as `OOMKillStep` are
/// refused).
pub fn parse<S: AsRef<str>>(tokens: &[S]) -> Result<u32, String> {
    let mut flags = 0;
    let mut unit_set = false;
    let mut autobind_set = false;
    let words = tokens
        .iter()
        .flat_map(|t| t.as_ref().split(','))
        .map(str::trim)
        .filter(|w| !w.is_empty());
    for word in words {
        let lower = word.to_ascii_lowercase();
        let unit = match lower.as_str() {
            "none" => Some(NONE),
            "sockets" => Some(TO_SOCKETS),
            "cores" => Some(TO_CORES),
            "threads" => Some(TO_THREADS),
            _ => None,
        };
        if let Some(unit) = unit {
            if unit_set {
                return Err(format!("Bad TaskPluginParam: {word}"));
            }
            unit_set = true;
            flags |= unit;
        } else if lower == "verbose" {
            flags |= VERBOSE;
        } else if lower == "slurmdoffspec" {
            flags |= SLURMD_OFF_SPEC;
        } else if let Some(value) = lower.strip_prefix("autobind=") {
            if autobind_set {
                return Err("Bad TaskPluginParam: autobind already set".into());
            }
            autobind_set = true;
            flags |= match value {
                "none" => 0,
                "threads" => AUTO_BIND_TO_THREADS,
                "cores" => AUTO_BIND_TO_CORES,
                "sockets" => AUTO_BIND_TO_SOCKETS,
                _ => {
                    return Err(format!(
                        "Bad TaskPluginParam autobind value: {}",
                        &word["autobind=".len()..]
                    ))
                }
            };
        } else {
            return Err(format!("Bad TaskPluginParam: {word}"));
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_22_05_words() {
        assert_eq!(parse::<&str>(&[]), Ok(0));
        assert_eq!(parse(&["Cores", "Verbose"]), Ok(TO_CORES | VERBOSE));
        assert_eq!(
            parse(&["Autobind=Threads,SlurmdOffSpec"]),
            Ok(AUTO_BIND_TO_THREADS | SLURMD_OFF_SPEC)
        );
        assert_eq!(parse(&["autobind=none"]), Ok(0));
        assert_eq!(parse(&["none"]), Ok(NONE));
    }

    #[test]
    fn refuses_what_22_05_refuses() {
        assert_eq!(
            parse(&["Cores", "Sockets"]),
            Err("Bad TaskPluginParam: Sockets".into())
        );
        assert_eq!(
            parse(&["autobind=cores", "autobind=threads"]),
            Err("Bad TaskPluginParam: autobind already set".into())
        );
        assert_eq!(
            parse(&["Autobind=boards"]),
            Err("Bad TaskPluginParam autobind value: boards".into())
        );
        assert_eq!(
            parse(&["OOMKillStep"]),
            Err("Bad TaskPluginParam: OOMKillStep".into())
        );
    }
}
