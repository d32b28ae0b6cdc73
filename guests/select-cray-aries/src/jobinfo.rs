//! select/cray_aries's `select_jobinfo` (§6.2 of docs/cray-aries.md): the
//! job's blade map, cleaning word, counter mode and counter steps' blades
//! around the inner plugin's record.

use std::cell::{Cell, RefCell};

use slurm_wasm_sdk::codes::EINVAL;
use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::plugin::HasState;
use slurm_wasm_sdk::types::PluginError;
use slurm_wasm_sdk::{Bitmap, Error};
use slurm_wasm_select_wrapper::bindings::exports::slurm::plugin::select as ex;
use slurm_wasm_select_wrapper::{InnerJobinfo, JobinfoField, JobinfoValue, SprintMode, Wrapper};

use crate::blades::{npc_name, npc_of, NPC_NONE};
use crate::hexmap;
use crate::CrayAries;

/// `CLEANING_STARTED`.
pub const CLEANING_STARTED: u16 = 0x1;
/// `CLEANING_COMPLETE`.
pub const CLEANING_COMPLETE: u16 = 0x2;

/// Whether a cleaning word says cleaning is in progress (started, not
/// complete), as `select_p_select_jobinfo_get(SELECT_JOBDATA_CLEANING)`
/// answers.
pub fn cleaning_in_progress(cleaning: u16) -> bool {
    cleaning & CLEANING_STARTED != 0 && cleaning & CLEANING_COMPLETE == 0
}

/// One job's record.
pub struct CrayJobinfo {
    blade_map: RefCell<Option<Bitmap>>,
    cleaning: Cell<u16>,
    npc: Cell<u8>,
    used_blades: RefCell<Option<Bitmap>>,
    /// None in a copy (C's copy holds only the magic).
    inner: Option<InnerJobinfo>,
}

impl CrayJobinfo {
    fn blank(inner: Option<InnerJobinfo>) -> Self {
        CrayJobinfo {
            blade_map: RefCell::new(None),
            cleaning: Cell::new(0),
            npc: Cell::new(NPC_NONE),
            used_blades: RefCell::new(None),
            inner,
        }
    }
}

impl ex::GuestSelectJobinfo for CrayJobinfo {
    /// `select_p_select_jobinfo_alloc`: an empty blade map of the blade
    /// count when blades are known (none before `node_init`), and the
    /// inner plugin's record.
    fn new() -> Self {
        let blades = CrayAries::state()
            .with(CrayAries::TYPE, |w| Ok(w.blades.count()))
            .unwrap_or(0);
        let info = CrayJobinfo::blank(Some(InnerJobinfo::alloc()));
        if blades > 0 {
            *info.blade_map.borrow_mut() = Some(Bitmap::new(blades));
        }
        info
    }

    /// `select_p_select_jobinfo_copy`: a blank record (C copies nothing
    /// but the magic, so a job record starts with counter mode none).
    fn copy(&self) -> ex::SelectJobinfo {
        ex::SelectJobinfo::new(CrayJobinfo::blank(None))
    }

    /// `select_p_select_jobinfo_pack`: the blade map, cleaning word,
    /// counter mode and steps' blades, then the inner record's bytes.
    fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        slurm_wasm_sdk::protocol::check(protocol_version, "select/cray_aries jobinfo")?;
        let mut p = Packer::new();
        hexmap::pack(&mut p, self.blade_map.borrow().as_ref());
        p.u16(self.cleaning.get()).u8(self.npc.get());
        hexmap::pack(&mut p, self.used_blades.borrow().as_ref());
        let mut data = p.finish();
        if let Some(inner) = &self.inner {
            data.extend(ex::GuestSelectJobinfo::pack(inner, protocol_version)?);
        }
        Ok(data)
    }

    /// `select_p_select_jobinfo_unpack`: the inverse of `pack`; the bytes
    /// after cray's own are the inner plugin's to unpack.
    fn unpack(data: Vec<u8>, protocol_version: u16) -> Result<ex::SelectJobinfo, PluginError> {
        slurm_wasm_sdk::protocol::check(protocol_version, "select/cray_aries jobinfo")?;
        let mut u = Unpacker::new(&data, "select/cray_aries jobinfo");
        let blade_map = hexmap::unpack(&mut u, "blade_map")?;
        let cleaning = u.u16("cleaning")?;
        let npc = u.u8("npc")?;
        let used_blades = hexmap::unpack(&mut u, "used_blades")?;
        let rest = &data[u.position()..];
        let inner = InnerJobinfo::unpack_inner(rest, protocol_version)?;
        let info = CrayJobinfo::blank(Some(inner));
        *info.blade_map.borrow_mut() = blade_map;
        info.cleaning.set(cleaning);
        info.npc.set(npc);
        *info.used_blades.borrow_mut() = used_blades;
        Ok(ex::SelectJobinfo::new(info))
    }

    /// `select_p_select_jobinfo_get`: the counter mode by name, whether
    /// cleaning is in progress; `ptr` is an error, as the contract says.
    fn get(&self, field: JobinfoField) -> Result<JobinfoValue, PluginError> {
        match field {
            JobinfoField::Network => Ok(JobinfoValue::Text(npc_name(self.npc.get()).into())),
            JobinfoField::Cleaning => Ok(JobinfoValue::Flag(cleaning_in_progress(
                self.cleaning.get(),
            ))),
            JobinfoField::Ptr => Err(Error::new(
                EINVAL,
                "select/cray_aries jobinfo: the record pointer has no meaning across the boundary",
            )
            .into()),
        }
    }

    /// `select_p_select_jobinfo_set`: `network` sets the counter mode as
    /// slurmctld does at submission and update (a string that names no
    /// mode leaves it, and succeeds); `cleaning` stores the raw word (a
    /// flag as 1 or 0).
    fn set(&self, field: JobinfoField, value: JobinfoValue) -> Result<(), PluginError> {
        match (field, value) {
            (JobinfoField::Network, JobinfoValue::Text(network)) => {
                if let Some(npc) = npc_of(&network) {
                    self.npc.set(npc);
                }
                Ok(())
            }
            (JobinfoField::Cleaning, JobinfoValue::Count(raw)) => {
                self.cleaning.set(raw as u16);
                Ok(())
            }
            (JobinfoField::Cleaning, JobinfoValue::Flag(on)) => {
                self.cleaning.set(u16::from(on));
                Ok(())
            }
            (field, value) => Err(Error::new(
                EINVAL,
                format!("select/cray_aries jobinfo: cannot set {field:?} to {value:?}"),
            )
            .into()),
        }
    }

    /// `select_p_select_jobinfo_sprint`: always empty.
    fn to_string(&self, _mode: SprintMode) -> String {
        String::new()
    }
}
