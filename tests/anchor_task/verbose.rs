//! The line slurmstepd prints per task with `--cpu-bind=verbose`:
//!
//! `cpu-bind<unit>=<TYPE> - <node>, task <global> <local> [<pid>]: mask 0x<hex>[ set][ FAILED]`
//!
//! (Slurm 22.05.8 src/slurmd/common/task_plugin.c `task_slurm_chkaffinity`; the ids right-aligned in two columns, the mask in lower-case
//! hex without leading zeros).

use super::{integer, Parsed};

/// One verbose line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerboseLine {
    /// The line as printed, label cut.
    pub text: String,
    /// `-cores`, `-threads`, ... or empty.
    pub unit: String,
    /// `MASK`, `MAP ` (with its space), `NONE`, `RANK`, ...
    pub kind: String,
    pub node: String,
    pub global_id: u32,
    pub local_id: u32,
    pub pid: u32,
    /// The CPUs of the mask.
    pub cpus: Vec<u32>,
    /// The line says ` set`: the mask was applied (not for `NONE`).
    pub set: bool,
    /// The line says ` FAILED`.
    pub failed: bool,
}

/// Parses one verbose line.
pub fn parse(line: &str) -> Parsed<VerboseLine> {
    let bad = || format!("not a verbose line: `{line}`");
    let rest = line.strip_prefix("cpu-bind").ok_or_else(bad)?;
    let (unit, rest) = rest.split_once('=').ok_or_else(bad)?;
    let (kind, rest) = rest.split_once(" - ").ok_or_else(bad)?;
    let (node, rest) = rest.split_once(", task ").ok_or_else(bad)?;
    let (ids, rest) = rest.split_once(" [").ok_or_else(bad)?;
    let (pid, rest) = rest.split_once("]: mask 0x").ok_or_else(bad)?;
    let (hex, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    let ids = ids
        .split_whitespace()
        .map(integer)
        .collect::<Parsed<Vec<u32>>>()?;
    let [global_id, local_id] = ids[..] else {
        return Err(bad());
    };
    let (set, failed) = match tail {
        "" => (false, false),
        "set" => (true, false),
        "set FAILED" => (true, true),
        "FAILED" => (false, true),
        _ => return Err(bad()),
    };
    Ok(VerboseLine {
        text: line.to_owned(),
        unit: unit.to_owned(),
        kind: kind.to_owned(),
        node: node.to_owned(),
        global_id,
        local_id,
        pid: integer(pid)?,
        cpus: hex_cpus(hex)?,
        set,
        failed,
    })
}

/// The CPUs of a hex mask (`0x` optional), ascending.
pub fn hex_cpus(mask: &str) -> Parsed<Vec<u32>> {
    let digits = mask.strip_prefix("0x").unwrap_or(mask);
    if digits.is_empty() {
        return Err(format!("empty mask `{mask}`"));
    }
    let mut cpus = Vec::new();
    for (position, c) in digits.chars().rev().enumerate() {
        let value = c
            .to_digit(16)
            .ok_or_else(|| format!("`{mask}` is not a hex mask"))?;
        cpus.extend(
            (0..4)
                .filter(|b| value >> b & 1 == 1)
                .map(|b| position as u32 * 4 + b),
        );
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_recording() {
        let l = parse("cpu-bind=MAP  - h1, task  1  1 [13471]: mask 0x1 set").unwrap();
        assert_eq!(
            (l.unit.as_str(), l.kind.as_str(), l.node.as_str()),
            ("", "MAP ", "h1")
        );
        assert_eq!((l.global_id, l.local_id, l.pid), (1, 1, 13471));
        assert_eq!((l.cpus, l.set, l.failed), (vec![0], true, false));
        let l = parse("cpu-bind=NONE - h1, task  0  0 [13956]: mask 0x0").unwrap();
        assert_eq!((l.cpus, l.set), (vec![], false));
        let l = parse("cpu-bind-cores=MASK - n1, task 12  3 [7]: mask 0x30 set FAILED").unwrap();
        assert_eq!(
            (l.unit.as_str(), l.global_id, l.local_id),
            ("-cores", 12, 3)
        );
        assert_eq!((l.cpus, l.failed), (vec![4, 5], true));
    }

    #[test]
    fn other_lines_are_refused() {
        assert!(parse("srun: error: x").is_err());
        assert!(parse("cpu-bind=MASK - h1, task 0 [1]: mask 0x1 set").is_err());
        assert!(parse("cpu-bind=MASK - h1, task  0  0 [1]: mask 0xg set").is_err());
        assert!(parse("cpu-bind=MASK - h1, task  0  0 [1]: mask 0x1 done").is_err());
        assert_eq!(hex_cpus("0x11"), Ok(vec![0, 4]));
    }
}
