//! The device list of one GRES name (`gres_device_t`), Slurm 22.05.8 src/plugins/gres/common/gres_common.c
//! `common_node_config_load` (and `_init_gres_device`), which `gres_p_node_config_load` runs.

use slurm_wasm_sdk::codes::SLURM_ERROR;
use slurm_wasm_sdk::gres::Device;
use slurm_wasm_sdk::Error;

use crate::conf::ConfRecord;
use crate::trailing_number;

/// Major and minor numbers of a device file.
///
/// The sandbox cannot `stat()` files, so the numbers come from the kernel's
/// fixed assignments for the device families GPUs use: `/dev/nvidia<N>` is
/// character device 195:N and `/dev/dri/renderD<N>` / `/dev/dri/card<N>` are
/// 226:N. Other paths get 0:0 (unknown).
pub fn device_numbers(path: &str) -> (u32, u32) {
    let n = trailing_number(path).and_then(|n| u32::try_from(n).ok());
    match n {
        Some(n) if path.starts_with("/dev/nvidia") && !path.starts_with("/dev/nvidia-") => (195, n),
        Some(n) if path.starts_with("/dev/dri/renderD") || path.starts_with("/dev/dri/card") => {
            (226, n)
        }
        _ => (0, 0),
    }
}

/// Builds the device list of GRES `name` from its records with `File`, in
/// record order: each file is a device with the next `index`, `dev_num` the
/// path's trailing digits (paths without digits get the highest number plus
/// one, two, …), and the record's unique id when the record names a single
/// file. A file named twice is an error (Slurm fails to load the node's
/// configuration).
pub fn build_devices(records: &[ConfRecord], name: &str) -> Result<Vec<Device>, Error> {
    let mut out: Vec<Device> = Vec::new();
    for r in records.iter().filter(|r| r.name == name) {
        for file in &r.files {
            if out.iter().any(|d| &d.path == file) {
                return Err(Error::new(
                    SLURM_ERROR,
                    format!(
                        "{}: duplicate device file name {file} for gres/{name}: failed to load configuration",
                        r.origin
                    ),
                ));
            }
            let (major, minor) = device_numbers(file);
            out.push(Device {
                index: out.len() as u32,
                dev_num: trailing_number(file).unwrap_or(-1),
                major,
                minor,
                path: file.clone(),
                unique_id: if r.files.len() == 1 {
                    r.unique_id.clone()
                } else {
                    None
                },
            });
        }
    }
    let mut next = out.iter().map(|d| d.dev_num).max().unwrap_or(-1);
    for d in out.iter_mut().filter(|d| d.dev_num < 0) {
        next += 1;
        d.dev_num = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::RecordFlags;

    fn rec(origin: &str, files: &[&str], unique_id: Option<&str>) -> ConfRecord {
        ConfRecord {
            origin: origin.into(),
            name: "gpu".into(),
            type_name: None,
            files: files.iter().map(|f| f.to_string()).collect(),
            count: files.len() as u64,
            cores: None,
            links: None,
            flags: RecordFlags::default(),
            unique_id: unique_id.map(String::from),
        }
    }

    // Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_node_config_load` and `_init_gres_device`: index in
    // list order, dev_num = trailing digits, paths without digits get max+1, +2; unique id
    // kept for single-file records.
    #[test]
    fn indices_numbers_and_unique_ids() {
        let devices = build_devices(
            &[
                rec("gres.conf:1", &["/dev/nvidia3", "/dev/gpu-a"], None),
                rec("gres.conf:2", &["/dev/nvidia5"], Some("MIG-1234")),
                rec("gres.conf:3", &["/dev/gpu-b"], None),
            ],
            "gpu",
        )
        .unwrap();
        let got: Vec<(u32, i32, &str, Option<&str>)> = devices
            .iter()
            .map(|d| (d.index, d.dev_num, d.path.as_str(), d.unique_id.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 3, "/dev/nvidia3", None),
                (1, 6, "/dev/gpu-a", None),
                (2, 5, "/dev/nvidia5", Some("MIG-1234")),
                (3, 7, "/dev/gpu-b", None),
            ]
        );
        assert_eq!((devices[2].major, devices[2].minor), (195, 5));
        assert_eq!((devices[1].major, devices[1].minor), (0, 0));
    }

    // Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_node_config_load`: a duplicate file name fails the load.
    #[test]
    fn duplicate_file_fails() {
        let e = build_devices(
            &[
                rec("gres.conf:1", &["/dev/nvidia0"], None),
                rec("gres.conf:2", &["/dev/nvidia0"], None),
            ],
            "gpu",
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "gres.conf:2: duplicate device file name /dev/nvidia0 for gres/gpu: failed to load configuration"
        );
    }
}
