//! `batch_bind` (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `batch_bind`): the batch script is bound to every CPU the job
//! owns on the node, as one `MASK` (verbose with `TaskPluginParam=Verbose`).

use slurm_wasm_sdk::Bitmap;

use crate::allocation::CredentialShape;
use crate::bind_type::{MASK, VERBOSE};
use crate::hardware::Hardware;
use crate::lllp::Binding;
use crate::mask;

/// The batch script's binding from this node's slice of the job core bitmap
/// (`job_cores`, controller numbering), or `None` when Slurm leaves the
/// request's binding as it is: the credential gives the node no cores, or
/// the job has no CPU here (both logged as errors, as Slurm does).
///
/// Every configured thread of each allocated core is used; when the
/// controller's view holds more CPUs than the hardware, the excess is
/// dropped ("more resources configured than exist").
pub fn batch_bind(
    job_id: u32,
    job_cores: &Bitmap,
    shape: CredentialShape,
    hw: &Hardware,
    task_plugin_param: u32,
) -> Option<Binding> {
    let num_cores = shape.total_cores().min(hw.total_cores());
    if num_cores == 0 {
        slurm_wasm_sdk::error!("batch_bind: socket and core count both zero");
        return None;
    }
    let mut requested = Bitmap::new(num_cores);
    for core in (0..shape.total_cores()).filter(|&p| job_cores.get(p)) {
        requested.set(core % num_cores);
    }
    let threads = usize::from(hw.threads);
    let mut cpus = Bitmap::new(hw.size());
    'cores: for core in requested.ones() {
        for t in 0..threads {
            let cpu = core * threads + t;
            if cpu >= cpus.len() {
                slurm_wasm_sdk::info!("more resources configured than exist");
                break 'cores;
            }
            cpus.set(cpu);
        }
    }
    if cpus.count() == 0 {
        slurm_wasm_sdk::error!("job {job_id} allocated no CPUs");
        return None;
    }
    let cpu_bind = mask::to_os(&cpus, hw).to_hex_mask();
    slurm_wasm_sdk::info!("job {job_id} CPU final HW mask for node: {cpu_bind}");
    Some(Binding {
        cpu_bind_type: MASK | (task_plugin_param & VERBOSE),
        cpu_bind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::testing::{hyperthreaded, identity};

    const SHAPE: CredentialShape = CredentialShape {
        sockets: 2,
        cores: 4,
    };

    #[test]
    fn binds_to_the_job_cpus_in_os_ids() {
        let cores = Bitmap::from_bits(8, [0, 1, 4]);
        let binding = batch_bind(7, &cores, SHAPE, &hyperthreaded(2, 4, 2), 0).unwrap();
        assert_eq!(
            binding,
            Binding {
                cpu_bind_type: MASK,
                cpu_bind: "0x1313".into()
            }
        );
        let all = Bitmap::full(8);
        let binding = batch_bind(7, &all, SHAPE, &identity(2, 4, 2), VERBOSE).unwrap();
        assert_eq!(binding.cpu_bind_type, MASK | VERBOSE);
        assert_eq!(binding.cpu_bind, "0xFFFF");
    }

    #[test]
    fn nothing_allocated_keeps_the_request() {
        let hw = identity(2, 4, 2);
        assert_eq!(batch_bind(7, &Bitmap::new(8), SHAPE, &hw, 0), None);
        let none = CredentialShape {
            sockets: 0,
            cores: 0,
        };
        assert_eq!(batch_bind(7, &Bitmap::full(8), none, &hw, 0), None);
    }

    #[test]
    fn a_larger_controller_view_is_cut() {
        // The controller sees 2x4 cores, the hardware 1x4x1.
        let hw = identity(1, 4, 1);
        let binding = batch_bind(7, &Bitmap::from_bits(8, [1, 6]), SHAPE, &hw, 0).unwrap();
        assert_eq!(binding.cpu_bind, "0x6");
    }
}
