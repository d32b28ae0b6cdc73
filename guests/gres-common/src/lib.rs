//! What gres/gpu and gres/mps share (Slurm's `gres_common.c` and the GPU
//! helpers of `gpu_common`):
//!
//! * [`conf`]: gres.conf records checked against the node, env flags and
//!   their inheritance;
//! * [`merge`]: configured GPUs merged with the GPUs the `gpu` capability
//!   detects (`AutoDetect=nvml`);
//! * [`devices`]: the device list (`gres_device_t`) built from the records;
//! * [`env`](mod@env): the `SLURM_*_GPUS` / vendor variable builder and the
//!   prolog/epilog variant;
//! * [`stepd`]: the versioned bytes slurmd hands to slurmstepd;
//! * [`freq`]: `--gpu-freq` parsing and resolution against supported clocks;
//! * [`settings`]: the slurm.conf settings both plugins read;
//! * [`export`]: the `gres-plugin` world export of a [`GresPlugin`]
//!   ([`export_gres_plugin!`]).
//!
//! Everything here is plain Rust over the SDK's records, so it builds and is
//! tested natively as well as inside the components.

pub mod alloc;
pub mod conf;
pub mod devices;
pub mod env;
pub mod export;
pub mod freq;
pub mod merge;
pub mod node;
pub mod settings;
pub mod stepd;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

pub use conf::{ConfRecord, EnvVendors, RecordFlags};
pub use devices::build_devices;
pub use export::GresPlugin;
pub use settings::Settings;
/// The SDK, for [`export_gres_plugin!`]'s expansion.
#[doc(hidden)]
pub use slurm_wasm_sdk as __sdk;
pub use slurm_wasm_sdk::gres::EpilogEnv;
pub use slurm_wasm_sdk::plugin::PluginState;

/// Natural order of file names (`/dev/nvidia2` before `/dev/nvidia10`):
/// digit runs compare by value, everything else byte by byte.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let si = i;
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let x = trim_zeros(&a[si..i]);
            let y = trim_zeros(&b[sj..j]);
            let order = x.len().cmp(&y.len()).then_with(|| x.cmp(y));
            if order != Ordering::Equal {
                return order;
            }
        } else {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits
        .iter()
        .position(|d| *d != b'0')
        .unwrap_or(digits.len());
    &digits[start..]
}

/// The trailing decimal digits of a device path (`/dev/nvidia2` → 2), as
/// Slurm's `dev_num`; `None` when the path does not end in a digit.
pub fn trailing_number(path: &str) -> Option<i32> {
    let digits = path.len() - path.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    path[path.len() - digits..].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    // Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf` (`_sort_gpu_by_file`, `strnatcmp`): lists are ordered by File with a natural sort.
    #[test]
    fn natural_order_compares_digit_runs_by_value() {
        assert_eq!(natural_cmp("/dev/nvidia2", "/dev/nvidia10"), Ordering::Less);
        assert_eq!(
            natural_cmp("/dev/nvidia10", "/dev/nvidia9"),
            Ordering::Greater
        );
        assert_eq!(natural_cmp("/dev/nvidia1", "/dev/nvidia1"), Ordering::Equal);
        assert_eq!(natural_cmp("/dev/a", "/dev/b"), Ordering::Less);
    }

    // Slurm 22.05.8 src/plugins/gres/common/gres_common.c `_init_gres_device`: dev_num is the path's trailing digits.
    #[test]
    fn trailing_digits_give_the_device_number() {
        assert_eq!(trailing_number("/dev/nvidia2"), Some(2));
        assert_eq!(trailing_number("/dev/dri/renderD128"), Some(128));
        assert_eq!(trailing_number("/dev/gpu"), None);
    }
}
