//! `select_jobinfo_t` of select/linear and select/cons_tres.
//!
//! Neither plugin keeps anything per job: Slurm's `jobinfo_alloc` returns
//! NULL, `set` accepts and ignores every field, `get` fails with
//! `SLURM_ERROR`, `copy` returns NULL, `pack` writes nothing, `unpack`
//! reads nothing and `sprint` gives an empty string. This record is that
//! empty object; `pack`/`unpack` still check the protocol version, and
//! `unpack` refuses any byte (an empty jobinfo packs to nothing).

use slurm_wasm_sdk::select::{
    GuestSelectJobinfo, JobinfoField, JobinfoValue, SelectJobinfo, SprintMode,
};
use slurm_wasm_sdk::types::PluginError;
use slurm_wasm_sdk::{codes, Error};

use crate::protocol;

/// The (empty) per-job select information.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobInfo;

impl JobInfo {
    /// Packs nothing; `EINVAL` for an unsupported protocol version.
    pub fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, Error> {
        protocol::check(protocol_version, "select jobinfo pack")?;
        Ok(Vec::new())
    }

    /// Reads nothing; `EINVAL` for an unsupported protocol version or any data.
    pub fn unpack(data: &[u8], protocol_version: u16) -> Result<Self, Error> {
        protocol::check(protocol_version, "select jobinfo unpack")?;
        if !data.is_empty() {
            return Err(Error::invalid(format!(
                "select jobinfo unpack: {} unexpected bytes; this plugin's jobinfo packs to nothing",
                data.len()
            )));
        }
        Ok(JobInfo)
    }

    /// Every field: `SLURM_ERROR`, as Slurm's `jobinfo_get` of these plugins.
    pub fn get(&self, field: JobinfoField) -> Result<JobinfoValue, Error> {
        Err(Error::new(
            codes::SLURM_ERROR,
            format!("select jobinfo get: this plugin keeps no per-job data ({field:?})"),
        ))
    }
}

impl GuestSelectJobinfo for JobInfo {
    fn new() -> Self {
        JobInfo
    }

    fn copy(&self) -> SelectJobinfo {
        SelectJobinfo::new(JobInfo)
    }

    fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        JobInfo::pack(self, protocol_version).map_err(Into::into)
    }

    fn unpack(data: Vec<u8>, protocol_version: u16) -> Result<SelectJobinfo, PluginError> {
        JobInfo::unpack(&data, protocol_version)
            .map(SelectJobinfo::new)
            .map_err(Into::into)
    }

    fn get(&self, field: JobinfoField) -> Result<JobinfoValue, PluginError> {
        JobInfo::get(self, field).map_err(Into::into)
    }

    /// Accepted and ignored (Slurm returns success without storing).
    fn set(&self, _field: JobinfoField, _value: JobinfoValue) -> Result<(), PluginError> {
        Ok(())
    }

    /// Always empty.
    fn to_string(&self, _mode: SprintMode) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_jobinfo_semantics() {
        // select/linear's jobinfo functions: pack nothing, get fails.
        assert_eq!(
            JobInfo.pack(protocol::SLURM_22_05).unwrap(),
            Vec::<u8>::new()
        );
        assert_eq!(
            JobInfo::unpack(&[], protocol::SLURM_21_08).unwrap(),
            JobInfo
        );
        assert_eq!(
            JobInfo::unpack(&[1], protocol::CURRENT).unwrap_err().code,
            codes::EINVAL
        );
        assert_eq!(
            JobInfo::unpack(&[], 0x2300).unwrap_err().code,
            codes::EINVAL
        );
        assert_eq!(
            JobInfo.get(JobinfoField::Network).unwrap_err().code,
            codes::SLURM_ERROR
        );
        assert_eq!(
            GuestSelectJobinfo::to_string(&JobInfo, SprintMode::Mixed),
            ""
        );
    }
}
