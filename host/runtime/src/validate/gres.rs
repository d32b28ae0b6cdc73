//! Checks on what gres plugins return (issue 26, class 11): counts within
//! what the node was given, bitmaps within their length and the node, and
//! device files that are the node's GPUs.
//!
//! Device files matter beyond display: slurmd grants a step's cgroup access
//! to its GRES device files by their major:minor numbers, so a plugin
//! naming `/dev/sda` (8:0) would hand the step a disk. A plugin may name:
//!
//! - a file gres.conf gave it (a `File=` path of the records the host
//!   passed to `node-config-load`), with numbers `0:0` (unknown: the
//!   sandbox cannot `stat()`) or, for a GPU device node, its own; or
//! - a GPU device node by the kernel's naming, `/dev/nvidia<N>` (195:N) and
//!   `/dev/dri/renderD<N>` or `/dev/dri/card<N>` (226:N), which is what
//!   `AutoDetect` finds and what a step daemon restored from `send-stepd`
//!   bytes knows, with those numbers or `0:0`.
//!
//! Anything else, a relative path or one with `.` or `..` components
//! included, is refused.

use std::collections::{BTreeSet, HashMap};

use super::Checker;
use crate::bindings::types::GresAllocation;
use crate::error::CallError;
use crate::kinds::gres::{Device, GresConfRecord, InfoValue, NodeConfigResult, NodeHardware};

/// The device files gres.conf gave a gres plugin: the `File=` paths of
/// the records the host passed to its last `node-config-load`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ConfiguredFiles(BTreeSet<String>);

impl ConfiguredFiles {
    pub fn of(records: &[GresConfRecord]) -> Self {
        ConfiguredFiles(
            records
                .iter()
                .flat_map(|r| r.files.iter().cloned())
                .collect(),
        )
    }
}

/// The major and minor numbers of a GPU device node by the kernel's
/// naming: `/dev/nvidia<N>` is 195:N, `/dev/dri/renderD<N>` and
/// `/dev/dri/card<N>` are 226:N. `None` for any other path.
pub(crate) fn gpu_device_numbers(path: &str) -> Option<(u32, u32)> {
    let number = |digits: &str| {
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    [
        ("/dev/nvidia", 195),
        ("/dev/dri/renderD", 226),
        ("/dev/dri/card", 226),
    ]
    .into_iter()
    .find_map(|(prefix, major)| Some((major, number(path.strip_prefix(prefix)?)?)))
}

/// Lower-cased GRES name, as Slurm compares them.
fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// The sum of the counts of GRES `name` (lower-cased) among `counts`.
fn total<'a>(name: &str, counts: impl Iterator<Item = (&'a str, u64)>) -> u64 {
    counts
        .filter(|(n, _)| key(n) == name)
        .fold(0, |sum, (_, c)| sum.saturating_add(c))
}

impl Checker<'_> {
    /// A device file the plugin may name (see the module documentation),
    /// with the `major:minor` numbers it gave, if any.
    fn device_file(
        &self,
        field: &str,
        path: &str,
        numbers: Option<(u32, u32)>,
        configured: &ConfiguredFiles,
    ) -> Result<(), CallError> {
        self.text(field, path)?;
        let clean = path.starts_with('/')
            && !path.contains('\0')
            && path.split('/').all(|part| part != "." && part != "..");
        let gpu = gpu_device_numbers(path);
        if !clean || (gpu.is_none() && !configured.0.contains(path)) {
            return Err(self.fail(format!(
                "{field} `{}` is not a device file of this node's GPUs (gres.conf File= paths and \
                 /dev/nvidia<N>, /dev/dri/renderD<N>, /dev/dri/card<N>)",
                path.escape_debug()
            )));
        }
        if let Some((major, minor)) = numbers {
            if (major, minor) != (0, 0) && Some((major, minor)) != gpu {
                let expected = gpu.map_or("0:0".into(), |(a, b)| format!("{a}:{b} or 0:0"));
                return Err(self.fail(format!(
                    "{field} `{path}` given as device {major}:{minor}, which is not that file's \
                     ({expected}): cgroup device rules would grant another device"
                )));
            }
        }
        Ok(())
    }

    /// A `get-devices` answer: each device a file of this node's GPUs with
    /// its own numbers (or `0:0`), and its unique id within the text limit.
    pub fn gres_devices(
        &self,
        devices: &[Device],
        configured: &ConfiguredFiles,
    ) -> Result<(), CallError> {
        self.items("devices", devices.len())?;
        for d in devices {
            self.device_file(
                &format!("device {}", d.index),
                &d.path,
                Some((d.major, d.minor)),
                configured,
            )?;
            if let Some(id) = &d.unique_id {
                self.text("unique-id", id)?;
            }
        }
        Ok(())
    }

    /// A `node-config-load` answer on `node` for `records`: text within the
    /// limits, files of this node's GPUs, `Cores=` bitmaps well formed and
    /// inside the node's cores, and per GRES name a total count no larger
    /// than the most the node was given of it: slurm.conf's `Gres=`,
    /// gres.conf's counts, or one per device file the answer lists.
    pub fn node_config(
        &self,
        result: &NodeConfigResult,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<(), CallError> {
        let configured = ConfiguredFiles::of(records);
        self.items("records", result.records.len())?;
        self.items("warnings", result.warnings.len())?;
        for w in &result.warnings {
            self.text("warning", w)?;
        }
        let node_cores = u32::from(node.sockets) * u32::from(node.cores_per_socket);
        let mut totals: HashMap<String, (u64, u64)> = HashMap::new();
        for r in &result.records {
            let at = format!("record {} ({})", r.name, r.origin);
            for text in [&r.origin, &r.name]
                .into_iter()
                .chain(&r.type_name)
                .chain(&r.links)
                .chain(&r.unique_id)
                .chain(&r.flags)
            {
                self.text(&at, text)?;
            }
            self.items(&format!("{at}: files"), r.files.len())?;
            for file in &r.files {
                self.device_file(&format!("{at}: File="), file, None, &configured)?;
            }
            if let Some(cores) = &r.cores {
                self.bitmap(&format!("{at}: Cores="), cores)?;
                if let Some(last) = cores.ones().last().filter(|&c| c >= node_cores) {
                    return Err(self.fail(format!(
                        "{at}: Cores= names core {last}, but node {} has {node_cores} cores",
                        node.name
                    )));
                }
            }
            let (count, files) = totals.entry(key(&r.name)).or_default();
            *count = count.checked_add(r.count).ok_or_else(|| {
                self.fail(format!(
                    "{at}: Count={} overflows the node's total",
                    r.count
                ))
            })?;
            *files += r.files.len() as u64;
        }
        for (name, (count, files)) in totals {
            let conf = total(&name, records.iter().map(|r| (&*r.name, r.count)));
            let slurm_conf = total(&name, node.configured.iter().map(|g| (&*g.name, g.count)));
            let most = conf.max(slurm_conf).max(files);
            if count > most {
                return Err(self.fail(format!(
                    "{count} {name} on node {}, more than it was given (slurm.conf Gres= \
                     {slurm_conf}, gres.conf {conf}, device files {files})",
                    node.name
                )));
            }
        }
        Ok(())
    }

    /// A `job-info` / `step-info` answer about `allocation`: a count no
    /// larger than the allocation's, or a well-formed device bitmap within
    /// the allocation's devices.
    pub fn gres_info(
        &self,
        value: &InfoValue,
        allocation: &GresAllocation,
    ) -> Result<(), CallError> {
        match value {
            InfoValue::Count(count) if *count > allocation.count => Err(self.fail(format!(
                "count {count}, more than the allocation's {}",
                allocation.count
            ))),
            InfoValue::Count(_) => Ok(()),
            InfoValue::Devices(map) => {
                self.bitmap("devices", map)?;
                let held: BTreeSet<u32> = allocation
                    .devices
                    .as_ref()
                    .map_or_else(BTreeSet::new, |d| d.ones().collect());
                match map.ones().find(|i| !held.contains(i)) {
                    Some(i) => {
                        Err(self.fail(format!("device {i} is not among the allocation's devices")))
                    }
                    None => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{Bitmap, GresCount};
    use crate::fixtures::bitmap;

    use crate::validate::testing::{reason, C};

    fn record(name: &str, files: &[&str], count: u64) -> GresConfRecord {
        GresConfRecord {
            origin: "gres.conf:1".into(),
            name: name.into(),
            type_name: None,
            files: files.iter().map(|f| f.to_string()).collect(),
            count,
            cores: None,
            links: None,
            flags: Vec::new(),
            unique_id: None,
        }
    }

    fn node(configured: &[(&str, u64)]) -> NodeHardware {
        NodeHardware {
            name: "g1".into(),
            cpus: 8,
            sockets: 2,
            cores_per_socket: 4,
            threads_per_core: 1,
            configured: configured
                .iter()
                .map(|&(name, count)| GresCount {
                    name: name.into(),
                    type_name: None,
                    count,
                })
                .collect(),
        }
    }

    fn device(path: &str, major: u32, minor: u32) -> Device {
        Device {
            index: 0,
            dev_num: 0,
            major,
            minor,
            path: path.into(),
            unique_id: None,
        }
    }

    #[test]
    fn gpu_device_nodes_by_name() {
        assert_eq!(gpu_device_numbers("/dev/nvidia3"), Some((195, 3)));
        assert_eq!(gpu_device_numbers("/dev/dri/renderD128"), Some((226, 128)));
        assert_eq!(gpu_device_numbers("/dev/dri/card1"), Some((226, 1)));
        for other in [
            "/dev/nvidiactl",
            "/dev/nvidia-uvm",
            "/dev/nvidia0/../sda",
            "/dev/nvidia+1",
            "/dev/sda",
            "/dev/nvidia99999999999",
        ] {
            assert_eq!(gpu_device_numbers(other), None, "{other}");
        }
    }

    #[test]
    fn devices_must_be_the_nodes_gpus_with_their_own_numbers() {
        let none = ConfiguredFiles::default();
        assert!(C
            .gres_devices(
                &[
                    device("/dev/nvidia0", 195, 0),
                    device("/dev/dri/card1", 0, 0)
                ],
                &none
            )
            .is_ok());
        for path in ["/dev/sda", "/etc/shadow", "dev/nvidia0", "/dev/dri/../sda"] {
            assert!(
                reason(C.gres_devices(&[device(path, 0, 0)], &none))
                    .contains("is not a device file of this node's GPUs"),
                "{path}"
            );
        }
        assert_eq!(
            reason(C.gres_devices(&[device("/dev/nvidia0", 8, 0)], &none)),
            "device 0 `/dev/nvidia0` given as device 8:0, which is not that file's (195:0 or 0:0): \
             cgroup device rules would grant another device"
        );
        // A gres.conf File= path is the administrator's choice, numbers unknown.
        let conf = ConfiguredFiles::of(&[record("nic", &["/dev/infiniband/uverbs0"], 1)]);
        assert!(C
            .gres_devices(&[device("/dev/infiniband/uverbs0", 0, 0)], &conf)
            .is_ok());
        assert!(C
            .gres_devices(&[device("/dev/infiniband/uverbs0", 231, 192)], &conf)
            .is_err());
    }

    #[test]
    fn node_config_counts_stay_within_what_the_node_was_given() {
        let given = [record("gpu", &["/dev/nvidia0", "/dev/nvidia1"], 2)];
        let answer = |records| NodeConfigResult {
            records,
            warnings: Vec::new(),
        };
        let ok = answer(vec![record("gpu", &["/dev/nvidia0", "/dev/nvidia1"], 2)]);
        assert!(C.node_config(&ok, &given, &node(&[("gpu", 2)])).is_ok());
        // gres/mps shares from slurm.conf, spread over two GPUs.
        let mps = answer(vec![
            record("mps", &["/dev/nvidia0"], 100),
            record("MPS", &["/dev/nvidia1"], 100),
        ]);
        assert!(C.node_config(&mps, &given, &node(&[("mps", 200)])).is_ok());
        assert_eq!(
            reason(C.node_config(
                &answer(vec![record("gpu", &[], u64::MAX)]),
                &given,
                &node(&[("gpu", 2)])
            )),
            "18446744073709551615 gpu on node g1, more than it was given (slurm.conf Gres= 2, \
             gres.conf 2, device files 0)"
        );
        assert!(reason(C.node_config(
            &answer(vec![record("mps", &[], u64::MAX), record("mps", &[], 2)]),
            &given,
            &node(&[("mps", 200)])
        ))
        .contains("overflows"));
        assert!(reason(C.node_config(
            &answer(vec![record("gpu", &["/etc/shadow"], 1)]),
            &given,
            &node(&[("gpu", 2)])
        ))
        .contains("`/etc/shadow` is not a device file"));
    }

    #[test]
    fn node_config_cores_are_checked_bitmaps_inside_the_node() {
        let mut long = record("gpu", &[], 1);
        long.cores = Some(Bitmap {
            len: 8,
            words: vec![1, 0, 0],
        });
        let mut outside = record("gpu", &[], 1);
        outside.cores = Some(bitmap(16, [9]));
        for (bad, expected) in [
            (long, "a bitmap of 8 bits needs 1 words, got 3"),
            (outside, "Cores= names core 9, but node g1 has 8 cores"),
        ] {
            let result = NodeConfigResult {
                records: vec![bad],
                warnings: Vec::new(),
            };
            let text = reason(C.node_config(&result, &[], &node(&[("gpu", 1)])));
            assert!(text.contains(expected), "{text}");
        }
    }

    #[test]
    fn info_stays_within_the_allocation() {
        let allocation = GresAllocation {
            name: "gpu".into(),
            type_name: None,
            count: 2,
            devices: Some(bitmap(4, [1, 2])),
            per_device: Vec::new(),
        };
        assert!(C.gres_info(&InfoValue::Count(2), &allocation).is_ok());
        assert!(C
            .gres_info(&InfoValue::Devices(bitmap(4, [2])), &allocation)
            .is_ok());
        assert_eq!(
            reason(C.gres_info(&InfoValue::Count(u64::MAX), &allocation)),
            "count 18446744073709551615, more than the allocation's 2"
        );
        assert_eq!(
            reason(C.gres_info(&InfoValue::Devices(bitmap(4, [3])), &allocation)),
            "device 3 is not among the allocation's devices"
        );
        let long = Bitmap {
            len: 4,
            words: vec![0b110, 0],
        };
        assert!(C.gres_info(&InfoValue::Devices(long), &allocation).is_err());
    }
}
