//! `gres/hostile`: a deliberately misbehaving gres plugin.
//!
//! It exists only for the host's containment tests (issue 26, classes 4, 5
//! and 11). Each call reads what to do from one of its inputs:
//!
//! - `node-config-load`: the node's name ([`NodeBehaviour`]); the name also
//!   chooses what later `get-devices` calls answer. A node with another name
//!   gets its records back unchanged, and its GPU files as devices.
//! - `job-set-env`, `step-set-env`, `task-set-env`: the allocation's GRES
//!   name, `set:<NAME>=<value>` or `unset:<NAME>` (one edit); anything else
//!   gives no edit.
//! - `job-info`, `step-info`: the allocation's GRES name ([`InfoBehaviour`]).
//! - `step-hardware-init`: `tres-freq`, `clock:<i>` (set the clocks of
//!   NVML GPU `i`, held by the step or not), `fini-reset:<i>` (leave GPU
//!   `i` for `step-hardware-fini` to reset); anything else sets the clocks
//!   of each usable GPU, as gres/gpu does. `step-hardware-fini` resets the
//!   GPUs `step-hardware-init` set or left.
//!
//! The clocks set are 1215 MHz memory and 1410 MHz graphics. A refused
//! capability call ends the call with `SLURM_ERROR` and the capability
//! error's debug text. Never load it outside tests.

use std::sync::Mutex;

use slurm_wasm_sdk::codes::SLURM_ERROR;
use slurm_wasm_sdk::gres::gpu_control::Clocks;
use slurm_wasm_sdk::gres::{
    Device, EnvChange, EnvFlags, EpilogInfo, GresConfRecord, GresConfig, GresGuest,
    GuestEpilogInfo, IdentityGuest, InfoField, InfoValue, NodeAllocation, NodeConfigResult,
    NodeHardware,
};
use slurm_wasm_sdk::host::{reset_gpu_clocks, set_gpu_clocks, CapabilityError};
use slurm_wasm_sdk::types::{
    Bitmap, GresAllocation, Job, KeyValue, PluginError, PluginIdentity, Step,
};
use slurm_wasm_sdk::{identity, Error};

/// The clocks `step-hardware-init` sets.
pub const CLOCKS: Clocks = Clocks {
    memory_mhz: 1215,
    graphics_mhz: 1410,
};

/// What `node-config-load` (and then `get-devices`) does, by node name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeBehaviour {
    /// `count-max`: one record of the plugin's GRES with `Count=u64::MAX`.
    CountMax,
    /// `file-shadow`: one record whose `File=` is `/etc/shadow`.
    FileShadow,
    /// `cores-long`: one record whose `Cores=` bitmap of 8 bits has 3 words.
    CoresLong,
    /// `dev-sda`: `get-devices` answers `/dev/sda` (8:0).
    DevSda,
    /// `dev-renumbered`: `get-devices` answers `/dev/nvidia0` as device 8:0
    /// (the numbers of `/dev/sda`).
    DevRenumbered,
    /// Anything else: the records back unchanged, their `/dev/nvidia<N>`
    /// files as devices (195:N).
    Normal,
}

impl NodeBehaviour {
    pub fn parse(name: &str) -> NodeBehaviour {
        match name {
            "count-max" => NodeBehaviour::CountMax,
            "file-shadow" => NodeBehaviour::FileShadow,
            "cores-long" => NodeBehaviour::CoresLong,
            "dev-sda" => NodeBehaviour::DevSda,
            "dev-renumbered" => NodeBehaviour::DevRenumbered,
            _ => NodeBehaviour::Normal,
        }
    }

    /// The `node-config-load` answer for `records`.
    pub fn node_config(self, records: Vec<GresConfRecord>) -> NodeConfigResult {
        let one = |edit: &dyn Fn(&mut GresConfRecord)| {
            let mut record = GresConfRecord {
                origin: "hostile".into(),
                name: "hostile".into(),
                type_name: None,
                files: Vec::new(),
                count: 1,
                cores: None,
                links: None,
                flags: Vec::new(),
                unique_id: None,
            };
            edit(&mut record);
            vec![record]
        };
        let records = match self {
            NodeBehaviour::CountMax => one(&|r| r.count = u64::MAX),
            NodeBehaviour::FileShadow => one(&|r| r.files = vec!["/etc/shadow".into()]),
            NodeBehaviour::CoresLong => one(&|r| {
                r.cores = Some(Bitmap {
                    len: 8,
                    words: vec![1, 0, 0],
                })
            }),
            _ => records,
        };
        NodeConfigResult {
            records,
            warnings: Vec::new(),
        }
    }

    /// The `get-devices` answer after a load of `files`.
    pub fn devices(self, files: &[String]) -> Vec<Device> {
        let device = |path: &str, major, minor| Device {
            index: 0,
            dev_num: 0,
            major,
            minor,
            path: path.into(),
            unique_id: None,
        };
        match self {
            NodeBehaviour::DevSda => vec![device("/dev/sda", 8, 0)],
            NodeBehaviour::DevRenumbered => vec![device("/dev/nvidia0", 8, 0)],
            _ => files
                .iter()
                .filter_map(|f| {
                    let minor = f.strip_prefix("/dev/nvidia")?.parse().ok()?;
                    Some(device(f, 195, minor))
                })
                .enumerate()
                .map(|(i, d)| Device {
                    index: i as u32,
                    dev_num: d.minor as i32,
                    ..d
                })
                .collect(),
        }
    }
}

/// What `job-info` and `step-info` answer, by the allocation's GRES name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InfoBehaviour {
    /// `info-count-max`: a count of `u64::MAX`.
    CountMax,
    /// `info-long`: a device bitmap of 2 bits in 3 words.
    BitmapLong,
    /// `info-outside`: device 63 of a 64-bit map, outside the allocation.
    Outside,
    /// Anything else: the allocation's own count or devices.
    Normal,
}

impl InfoBehaviour {
    pub fn parse(name: &str) -> InfoBehaviour {
        match name {
            "info-count-max" => InfoBehaviour::CountMax,
            "info-long" => InfoBehaviour::BitmapLong,
            "info-outside" => InfoBehaviour::Outside,
            _ => InfoBehaviour::Normal,
        }
    }

    pub fn answer(self, allocation: &GresAllocation, field: InfoField) -> InfoValue {
        match self {
            InfoBehaviour::CountMax => InfoValue::Count(u64::MAX),
            InfoBehaviour::BitmapLong => InfoValue::Devices(Bitmap {
                len: 2,
                words: vec![1, 0, 0],
            }),
            InfoBehaviour::Outside => InfoValue::Devices(Bitmap {
                len: 64,
                words: vec![1 << 63],
            }),
            InfoBehaviour::Normal => match (field, &allocation.devices) {
                (InfoField::Bitmap, Some(map)) => InfoValue::Devices(map.clone()),
                _ => InfoValue::Count(allocation.count),
            },
        }
    }
}

/// The one environment edit an allocation's GRES name asks for.
pub fn env_edit(allocation: Option<&GresAllocation>) -> Vec<EnvChange> {
    let Some(name) = allocation.map(|a| a.name.as_str()) else {
        return Vec::new();
    };
    if let Some(spec) = name.strip_prefix("set:") {
        let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
        return vec![EnvChange::Set(KeyValue {
            key: key.into(),
            value: value.into(),
        })];
    }
    match name.strip_prefix("unset:") {
        Some(key) => vec![EnvChange::Unset(key.into())],
        None => Vec::new(),
    }
}

/// What the plugin keeps between calls.
struct State {
    node: NodeBehaviour,
    files: Vec<String>,
    /// GPUs `step-hardware-fini` resets.
    touched: Vec<u32>,
}

static STATE: Mutex<State> = Mutex::new(State {
    node: NodeBehaviour::Normal,
    files: Vec::new(),
    touched: Vec::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn refused(what: String, e: CapabilityError) -> PluginError {
    Error::new(SLURM_ERROR, format!("{what}: {e:?}")).into()
}

/// gres/hostile, exported as a component.
pub struct Hostile;

/// No epilog info is ever built.
pub struct NoEpilog;

impl GuestEpilogInfo for NoEpilog {
    fn set_env(&self, _node_index: u32) -> Result<Vec<EnvChange>, PluginError> {
        Ok(Vec::new())
    }
}

impl IdentityGuest for Hostile {
    fn describe() -> PluginIdentity {
        identity("gres/hostile", "hostile gres plugin (containment tests)")
    }
}

impl GresGuest for Hostile {
    type EpilogInfo = NoEpilog;

    fn init(_config: GresConfig) -> Result<(), PluginError> {
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        Ok(())
    }

    fn node_config_load(
        records: Vec<GresConfRecord>,
        node: NodeHardware,
    ) -> Result<NodeConfigResult, PluginError> {
        let behaviour = NodeBehaviour::parse(&node.name);
        let mut state = state();
        state.node = behaviour;
        state.files = records.iter().flat_map(|r| r.files.clone()).collect();
        Ok(behaviour.node_config(records))
    }

    fn job_set_env(
        allocation: Option<GresAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        Ok(env_edit(allocation.as_ref()))
    }

    fn step_set_env(
        allocation: Option<GresAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        Ok(env_edit(allocation.as_ref()))
    }

    fn task_set_env(
        allocation: Option<NodeAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        Ok(env_edit(allocation.as_ref().map(|a| &a.allocation)))
    }

    fn send_stepd() -> Result<Vec<u8>, PluginError> {
        Ok(Vec::new())
    }

    fn recv_stepd(_data: Vec<u8>) -> Result<(), PluginError> {
        Ok(())
    }

    fn job_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        Ok(InfoBehaviour::parse(&allocation.name).answer(&allocation, field))
    }

    fn step_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        Ok(InfoBehaviour::parse(&allocation.name).answer(&allocation, field))
    }

    fn get_devices() -> Result<Vec<Device>, PluginError> {
        let state = state();
        Ok(state.node.devices(&state.files))
    }

    fn step_hardware_init(
        usable: Option<Bitmap>,
        tres_freq: Option<String>,
    ) -> Result<(), PluginError> {
        let freq = tres_freq.unwrap_or_default();
        let number = |prefix: &str| freq.strip_prefix(prefix).and_then(|n| n.parse().ok());
        if let Some(gpu) = number("fini-reset:") {
            state().touched.push(gpu);
            return Ok(());
        }
        let gpus: Vec<u32> = match number("clock:") {
            Some(gpu) => vec![gpu],
            None => usable
                .as_ref()
                .and_then(|u| slurm_wasm_sdk::Bitmap::try_from(u).ok())
                .map_or_else(Vec::new, |u| u.ones().map(|i| i as u32).collect()),
        };
        for gpu in gpus {
            set_gpu_clocks(gpu, CLOCKS)
                .map_err(|e| refused(format!("gpu-control.set-application-clocks({gpu})"), e))?;
            state().touched.push(gpu);
        }
        Ok(())
    }

    fn step_hardware_fini() -> Result<(), PluginError> {
        let touched = std::mem::take(&mut state().touched);
        for gpu in touched {
            reset_gpu_clocks(gpu)
                .map_err(|e| refused(format!("gpu-control.reset-application-clocks({gpu})"), e))?;
        }
        Ok(())
    }

    fn epilog_build_env(_job: Job) -> Result<Option<EpilogInfo>, PluginError> {
        Ok(None)
    }

    fn step_context(_step: Step) -> Result<(), PluginError> {
        Ok(())
    }
}

slurm_wasm_sdk::export_gres!(Hostile);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_choose_the_answers() {
        assert_eq!(NodeBehaviour::parse("dev-sda"), NodeBehaviour::DevSda);
        assert_eq!(NodeBehaviour::parse("g1"), NodeBehaviour::Normal);
        let answer = NodeBehaviour::CountMax.node_config(Vec::new());
        assert_eq!(answer.records[0].count, u64::MAX);
        let devices = NodeBehaviour::Normal.devices(&["/dev/nvidia3".into(), "/dev/x".into()]);
        assert_eq!(
            (devices.len(), devices[0].major, devices[0].minor),
            (1, 195, 3)
        );
    }

    #[test]
    fn allocation_names_choose_env_edits_and_info() {
        let allocation = |name: &str| GresAllocation {
            name: name.into(),
            type_name: None,
            count: 2,
            devices: None,
            per_device: Vec::new(),
        };
        match &env_edit(Some(&allocation("set:PATH=/tmp")))[..] {
            [EnvChange::Set(kv)] => assert_eq!((&*kv.key, &*kv.value), ("PATH", "/tmp")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &env_edit(Some(&allocation("unset:PATH")))[..],
            [EnvChange::Unset(k)] if k == "PATH"
        ));
        assert!(env_edit(Some(&allocation("gpu"))).is_empty());
        assert!(matches!(
            InfoBehaviour::parse("info-count-max").answer(&allocation("x"), InfoField::Count),
            InfoValue::Count(u64::MAX)
        ));
        assert!(matches!(
            InfoBehaviour::parse("gpu").answer(&allocation("gpu"), InfoField::Count),
            InfoValue::Count(2)
        ));
    }
}
