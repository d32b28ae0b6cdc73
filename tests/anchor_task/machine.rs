//! The machine and configuration files of a recording: `scontrol show
//! config` lines, `slurmd -C` and `lscpu -p`.

use super::{integer, Parsed};

/// `slurmd -C`: the hardware a slurmd detects (hwloc), in slurm.conf words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlurmdHardware {
    pub cpus: u16,
    pub boards: u16,
    pub sockets_per_board: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
}

/// One row of `lscpu -p=CPU,CORE,SOCKET,NODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LscpuCpu {
    /// The OS CPU id.
    pub cpu: u32,
    pub core: u32,
    pub socket: u32,
    /// The NUMA node, when lscpu knows one.
    pub node: Option<u32>,
}

/// `Key = Value` lines of `scontrol show config`.
pub fn parse_show_config(text: &str) -> Parsed<Vec<(String, String)>> {
    text.lines()
        .map(|line| {
            line.split_once(" = ")
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .ok_or_else(|| format!("not `Key = Value`: `{line}`"))
        })
        .collect()
}

/// `slurmd -C`: a `NodeName=... CPUs=...` line and an `UpTime=` line.
pub fn parse_slurmd_c(text: &str) -> Parsed<SlurmdHardware> {
    let words: Vec<(&str, &str)> = text
        .split_whitespace()
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| format!("`{w}` is not Key=Value"))
        })
        .collect::<Parsed<_>>()?;
    let field = |key: &str| -> Parsed<u16> {
        let value = words
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("no {key}= in slurmd -C"))?;
        integer(value)
    };
    Ok(SlurmdHardware {
        cpus: field("CPUs")?,
        boards: field("Boards")?,
        sockets_per_board: field("SocketsPerBoard")?,
        cores_per_socket: field("CoresPerSocket")?,
        threads_per_core: field("ThreadsPerCore")?,
    })
}

/// `lscpu -p=CPU,CORE,SOCKET,NODE`: `#` comment lines, then one row per CPU
/// (an empty field where lscpu knows no value).
pub fn parse_lscpu(text: &str) -> Parsed<Vec<LscpuCpu>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let [cpu, core, socket, node] = fields[..] else {
                return Err(format!("expected CPU,CORE,SOCKET,NODE: `{line}`"));
            };
            Ok(LscpuCpu {
                cpu: integer(cpu)?,
                core: integer(core)?,
                socket: integer(socket)?,
                node: match node {
                    "" => None,
                    n => Some(integer(n)?),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurmd_c_and_lscpu() {
        let hw = parse_slurmd_c(
            "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 \
             ThreadsPerCore=1 RealMemory=24105\nUpTime=0-01:38:46\n",
        )
        .unwrap();
        assert_eq!(
            hw,
            SlurmdHardware {
                cpus: 2,
                boards: 1,
                sockets_per_board: 1,
                cores_per_socket: 2,
                threads_per_core: 1
            }
        );
        let cpus = parse_lscpu("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,\n").unwrap();
        assert_eq!(cpus[1].node, None);
        assert_eq!((cpus[1].cpu, cpus[1].core, cpus[1].socket), (1, 1, 0));
        assert!(parse_lscpu("0,0,0\n").is_err());
        assert!(parse_slurmd_c("NodeName=vm CPUs=2\n").is_err());
    }

    #[test]
    fn show_config_lines() {
        let config = parse_show_config("TaskPlugin              = task/affinity\n").unwrap();
        assert_eq!(config, [("TaskPlugin".into(), "task/affinity".into())]);
        assert!(parse_show_config("TaskPlugin task/affinity\n").is_err());
    }
}
