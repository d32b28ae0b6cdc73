//! Merging configured GPUs with detected ones, Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c
//! `_merge_system_gres_conf` (which `gres_p_node_config_load` runs when the GPU plugin
//! returns a system GPU list).

use std::cmp::Ordering;

use slurm_wasm_sdk::gres::gpu::GpuDevice;
use slurm_wasm_sdk::gres::NodeHardware;
use slurm_wasm_sdk::Bitmap;

use crate::conf::{ConfRecord, RecordFlags};
use crate::natural_cmp;
use crate::settings::AutoDetect;

/// A detected GPU's model name as a GRES type: lower case, spaces as `_`
/// (`Tesla V100-PCIE-16GB` → `tesla_v100-pcie-16gb`).
pub fn type_of_model(model: &str) -> String {
    model.trim().replace(' ', "_").to_ascii_lowercase()
}

/// The record Slurm builds for one detected GPU.
///
/// * File: `/dev/nvidia<minor>` (nvml), `/dev/dri/renderD<minor>` (rsmi,
///   oneapi), from the device's minor number.
/// * Cores: the device's CPU affinity as core indices. The `gpu` capability
///   reports OS CPU ids; OS id `c` is taken as core `c mod cores`, Linux's
///   usual numbering where hyperthread siblings follow all first threads.
/// * Links: the NVLink counts with `-1` at the device's own position.
/// * Unique id: only MIG instances (`MIG-…` UUIDs) get one, as Slurm 22.05's
///   NVML code sets `unique_id` for MIG devices only; whole GPUs are listed
///   by index.
pub fn detected_record(
    gpu: &GpuDevice,
    position: usize,
    node: &NodeHardware,
    detector: AutoDetect,
) -> ConfRecord {
    let file = match detector {
        AutoDetect::Rsmi | AutoDetect::OneApi => format!("/dev/dri/renderD{}", gpu.minor_number),
        AutoDetect::Nvml | AutoDetect::Off => format!("/dev/nvidia{}", gpu.minor_number),
    };
    let cores_total = usize::from(node.sockets) * usize::from(node.cores_per_socket);
    let cores = Bitmap::try_from(&gpu.cpu_affinity)
        .ok()
        .filter(|cpus| cpus.count() > 0 && cores_total > 0)
        .map(|cpus| Bitmap::from_bits(cores_total, cpus.ones().map(|c| c % cores_total)));
    let links = (!gpu.links.is_empty()).then(|| {
        gpu.links
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i == position {
                    -1
                } else {
                    i32::try_from(*n).unwrap_or(i32::MAX)
                }
            })
            .collect()
    });
    ConfRecord {
        origin: format!("autodetected {} device {}", detector.name(), gpu.index),
        name: "gpu".into(),
        type_name: Some(type_of_model(&gpu.name)),
        files: vec![file],
        count: 1,
        cores,
        links,
        flags: RecordFlags {
            env: detector.env_vendors(),
            ..RecordFlags::default()
        },
        unique_id: gpu.uuid.starts_with("MIG-").then(|| gpu.uuid.clone()),
    }
}

/// Splits GPU records into one record per device: one per file, or `Count`
/// copies of a record without `File`.
pub fn split(records: &[ConfRecord]) -> Vec<ConfRecord> {
    let mut out = Vec::new();
    for r in records {
        if r.files.is_empty() {
            for _ in 0..r.count {
                out.push(ConfRecord {
                    count: 1,
                    ..r.clone()
                });
            }
        } else {
            for f in &r.files {
                out.push(ConfRecord {
                    files: vec![f.clone()],
                    count: 1,
                    unique_id: if r.files.len() == 1 {
                        r.unique_id.clone()
                    } else {
                        None
                    },
                    ..r.clone()
                });
            }
        }
    }
    out
}

fn by_file(a: &ConfRecord, b: &ConfRecord) -> Ordering {
    match (a.file(), b.file()) {
        (Some(x), Some(y)) => natural_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn by_type_then_file(a: &ConfRecord, b: &ConfRecord) -> Ordering {
    let la = a.type_name.as_deref().map_or(0, str::len);
    let lb = b.type_name.as_deref().map_or(0, str::len);
    lb.cmp(&la)
        .then_with(|| a.type_name.cmp(&b.type_name))
        .then_with(|| by_file(a, b))
}

/// Position of `-1` in `Links` (Slurm's proxy for PCI bus order); devices
/// without links sort last.
fn self_link(r: &ConfRecord) -> usize {
    r.links
        .as_ref()
        .and_then(|l| l.iter().position(|v| *v == -1))
        .unwrap_or(usize::MAX)
}

fn describe(r: &ConfRecord) -> String {
    format!(
        "    GRES[{}] Type:{} Count:{} Cores({}):{} Links:{} File:{}",
        r.name,
        r.type_name.as_deref().unwrap_or("(null)"),
        r.count,
        r.cores.as_ref().map_or(0, Bitmap::len),
        r.cores
            .as_ref()
            .map_or_else(|| "(null)".to_string(), Bitmap::to_ranges),
        r.links.as_ref().map_or_else(
            || "(null)".to_string(),
            |l| l.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
        ),
        r.file().unwrap_or("(null)")
    )
}

/// Merges the configured GPU records with the detected ones (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf`):
/// types assigned by case-insensitive substring, matching by Type and File,
/// Cores/Links mismatches dropping the device, configured-only GPUs kept
/// only with File, leftovers ignored; with no configured GPU at all every
/// detected GPU is kept. Returns the GPU records in Slurm's
/// final order (File, then position of `-1` in Links) and appends
/// Slurm-worded lines to `warnings`.
pub fn merge(
    configured: &[ConfRecord],
    mut detected: Vec<ConfRecord>,
    warnings: &mut Vec<String>,
) -> Vec<ConfRecord> {
    let mut singles = split(configured);
    if singles.is_empty() {
        // Nothing configured for gpu: every detected GPU is used as found.
        detected.sort_by(|a, b| by_file(a, b).then_with(|| self_link(a).cmp(&self_link(b))));
        return detected;
    }
    if singles.iter().any(|s| s.type_name.is_some()) {
        singles.sort_by(by_type_then_file);
        detected.sort_by(by_type_then_file);
        let mut used = vec![false; singles.len()];
        for d in &mut detected {
            let model = d.type_name.clone().unwrap_or_default();
            let hit = singles.iter().enumerate().position(|(i, s)| {
                !used[i]
                    && s.type_name
                        .as_deref()
                        .is_some_and(|t| model.contains(&t.to_ascii_lowercase()))
            });
            if let Some(i) = hit {
                used[i] = true;
                d.type_name = singles[i].type_name.clone();
            }
        }
    } else {
        for d in &mut detected {
            d.type_name = None;
        }
    }
    singles.sort_by(by_file);
    detected.sort_by(by_file);
    let mut taken = vec![false; detected.len()];
    let mut merged = Vec::new();
    let mut no_file = Vec::new();
    for s in singles {
        let hit = detected.iter().enumerate().position(|(i, d)| {
            !taken[i]
                && s.type_name.as_ref().is_none_or(|t| {
                    d.type_name
                        .as_deref()
                        .is_some_and(|dt| dt.eq_ignore_ascii_case(t))
                })
                && s.file().is_none_or(|f| d.file() == Some(f))
        });
        let Some(i) = hit else {
            if s.file().is_some() {
                merged.push(s);
            } else {
                no_file.push(s);
            }
            continue;
        };
        taken[i] = true;
        let d = &detected[i];
        if let (Some(c), Some(dc)) = (&s.cores, &d.cores) {
            if c != dc {
                warnings.push(format!(
                    "error: {}: Cores mismatch between configured and detected GPU {}: configured {}, detected {}; device dropped",
                    s.origin,
                    d.file().unwrap_or_default(),
                    c.to_ranges(),
                    dc.to_ranges()
                ));
                continue;
            }
        }
        if let (Some(l), Some(dl)) = (&s.links, &d.links) {
            if l != dl {
                warnings.push(format!(
                    "error: {}: Links mismatch between configured and detected GPU {}; device dropped",
                    s.origin,
                    d.file().unwrap_or_default()
                ));
                continue;
            }
        }
        let mut m = d.clone();
        m.origin = s.origin.clone();
        if s.flags.env.is_some() {
            m.flags.env = s.flags.env;
        }
        m.flags.explicit |= s.flags.explicit;
        m.flags.count_only |= s.flags.count_only;
        if m.unique_id.is_none() {
            m.unique_id = s.unique_id.clone();
        }
        merged.push(m);
    }
    if !no_file.is_empty() {
        warnings.push(
            "error: Discarding the following config-only GPU due to lack of File specification:"
                .into(),
        );
        warnings.extend(no_file.iter().map(describe));
    }
    let ignored: Vec<&ConfRecord> = detected
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(d, _)| d)
        .collect();
    if !ignored.is_empty() {
        warnings.push("WARNING: The following autodetected GPUs are being ignored:".into());
        warnings.extend(ignored.into_iter().map(describe));
    }
    merged.sort_by(|a, b| by_file(a, b).then_with(|| self_link(a).cmp(&self_link(b))));
    merged
}
