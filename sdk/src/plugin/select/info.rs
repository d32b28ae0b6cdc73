//! The `select-nodeinfo` and `select-jobinfo` resources of a select plugin
//! that keeps what Slurm's select/linear and select/cons_tres keep:
//! [`NodeInfo`] (`select_nodeinfo_t`) and the empty [`JobInfo`]
//! (`select_jobinfo_t`), with Slurm 20.11 to 22.05's pack formats.
//!
//! The SDK's [`Plugin`](super::Plugin) adapter exports these two types;
//! a plugin that implements the `select` world's `Guest` traits itself can
//! name them as its `SelectNodeinfo` and `SelectJobinfo` types. Both check
//! the protocol version with [`crate::protocol::check`] and pack with
//! [`crate::pack`].

use crate::pack::{Packer, Unpacker};
use crate::protocol;
use crate::select::{
    GuestSelectJobinfo, GuestSelectNodeinfo, JobinfoField, JobinfoValue, NodeinfoField,
    NodeinfoValue, SelectJobinfo, SelectNodeinfo, SprintMode,
};
use crate::types::PluginError;
use crate::{codes, Error};

/// `NODE_STATE_ALLOCATED` (base state 3): the `state` argument of `get`
/// for which `subcnt` reports the allocated CPUs.
pub const NODE_STATE_ALLOCATED: u32 = 3;

/// One node's `select_nodeinfo_t`: what `sinfo` shows as the node's
/// allocated CPUs and memory, and its allocated TRES.
///
/// Packed as Slurm 20.11 to 22.05 pack it for both select/linear and
/// select/cons_tres (`select_p_select_nodeinfo_pack`): `pack16(alloc_cpus)`,
/// `pack64(alloc_memory)`, `packstr(tres_alloc_fmt_str)`,
/// `packdouble(tres_alloc_weighted)`, network byte order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeInfo {
    /// CPUs allocated on the node.
    pub alloc_cpus: u16,
    /// MB allocated on the node.
    pub alloc_memory: u64,
    /// `cpu=4,mem=2000M`; `None` when nothing is allocated (Slurm's NULL).
    pub tres_alloc_fmt_str: Option<String>,
    /// The allocated TRES weighted by the node's TRES weights (the CPU
    /// count when the node has none, as Slurm's `assoc_mgr_tres_weighted`).
    pub tres_alloc_weighted: f64,
}

impl NodeInfo {
    /// `cpus` CPUs and `memory` MB allocated, whose allocated TRES are
    /// those same CPUs and memory: [`with_tres`](Self::with_tres) with both
    /// pairs equal.
    pub fn allocated(cpus: u16, memory: u64) -> Self {
        NodeInfo::with_tres(cpus, memory, cpus, memory)
    }

    /// The record for `alloc_cpus` CPUs and `alloc_memory` MB allocated,
    /// whose allocated TRES are `tres_cpus` CPUs and `tres_memory` MB: the
    /// TRES string and the weight Slurm derives from them (no node TRES
    /// weights: weight = CPU count).
    pub fn with_tres(alloc_cpus: u16, alloc_memory: u64, tres_cpus: u16, tres_memory: u64) -> Self {
        NodeInfo {
            alloc_cpus,
            alloc_memory,
            tres_alloc_fmt_str: tres_alloc_string(tres_cpus, tres_memory),
            tres_alloc_weighted: f64::from(tres_cpus),
        }
    }

    /// select/linear's record of an allocated node, whose allocated TRES
    /// are the node's configured ones (`node_ptr->tres_cnt`,
    /// select_linear.c:3926-3935): `cpus` effective CPUs, `memory` MB of
    /// `RealMemory` and a billing of `cpus`. The contract carries no
    /// `TRESBillingWeights`; Slurm bills a node its CPUs where no partition
    /// sets them (controller.c:2457-2484), as on the anchor cluster
    /// (`AllocTRES=cpu=8,mem=4000M,billing=8`).
    pub fn whole_node(alloc_cpus: u16, alloc_memory: u64, cpus: u16, memory: u64) -> Self {
        let mut info = NodeInfo::with_tres(alloc_cpus, alloc_memory, cpus, memory);
        if cpus > 0 {
            let text = info.tres_alloc_fmt_str.get_or_insert_with(String::new);
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(&format!("billing={cpus}"));
        }
        info
    }

    /// A node with nothing allocated but `alloc_memory` MB reserved: no
    /// CPUs, no TRES string, weight 0.
    pub fn idle(alloc_memory: u64) -> Self {
        NodeInfo {
            alloc_memory,
            ..NodeInfo::default()
        }
    }

    /// `select_p_select_nodeinfo_pack`; `EINVAL` for a protocol version
    /// [`protocol::check`] refuses.
    pub fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, Error> {
        protocol::check(protocol_version, "select nodeinfo pack")?;
        let mut p = Packer::new();
        p.u16(self.alloc_cpus)
            .u64(self.alloc_memory)
            .str(self.tres_alloc_fmt_str.as_deref())
            .f64(self.tres_alloc_weighted);
        Ok(p.finish())
    }

    /// `select_p_select_nodeinfo_unpack`, the inverse of
    /// [`pack`](Self::pack); `EINVAL` for an unsupported protocol version,
    /// truncated data, a string that is not NUL-terminated UTF-8 or bytes
    /// left over.
    pub fn unpack(data: &[u8], protocol_version: u16) -> Result<Self, Error> {
        protocol::check(protocol_version, "select nodeinfo unpack")?;
        let mut u = Unpacker::new(data, "select nodeinfo unpack");
        let info = NodeInfo {
            alloc_cpus: u.u16("alloc_cpus")?,
            alloc_memory: u.u64("alloc_memory")?,
            tres_alloc_fmt_str: u.str("tres_alloc_fmt_str")?,
            tres_alloc_weighted: u.f64("tres_alloc_weighted")?,
        };
        u.finish()?;
        Ok(info)
    }

    /// `select_p_select_nodeinfo_get`: `subcnt` is the allocated CPUs when
    /// `state` is [`NODE_STATE_ALLOCATED`] and 0 for any other state; `ptr`
    /// has no meaning across the boundary and is `SLURM_ERROR`.
    pub fn get(&self, field: NodeinfoField, state: u32) -> Result<NodeinfoValue, Error> {
        Ok(match field {
            NodeinfoField::Subcnt => NodeinfoValue::Count(if state == NODE_STATE_ALLOCATED {
                self.alloc_cpus
            } else {
                0
            }),
            NodeinfoField::Ptr => return Err(Error::new(
                codes::SLURM_ERROR,
                "select nodeinfo get: the ptr field is a C pointer and cannot cross the boundary",
            )),
            NodeinfoField::MemAlloc => NodeinfoValue::Memory(self.alloc_memory),
            NodeinfoField::TresAllocFmtStr => {
                NodeinfoValue::Text(self.tres_alloc_fmt_str.clone().unwrap_or_default())
            }
            NodeinfoField::TresAllocWeighted => NodeinfoValue::Weighted(self.tres_alloc_weighted),
        })
    }
}

/// Slurm's allocated-TRES string of a node (`assoc_mgr_make_tres_str_from_array`
/// with unit conversion): `cpu=N` and `mem=` in the largest exact unit
/// (`2000M`, `4G`), zero counts left out, `None` when both are zero.
pub fn tres_alloc_string(cpus: u16, memory_mb: u64) -> Option<String> {
    let mut parts = Vec::new();
    if cpus > 0 {
        parts.push(format!("cpu={cpus}"));
    }
    if memory_mb > 0 {
        parts.push(format!("mem={}", exact_unit(memory_mb)));
    }
    (!parts.is_empty()).then(|| parts.join(","))
}

/// A MB count in the largest unit that divides it exactly (M, G, T, P).
fn exact_unit(mut value: u64) -> String {
    let units = ['M', 'G', 'T', 'P'];
    let mut unit = 0;
    while unit + 1 < units.len() && value.is_multiple_of(1024) {
        value /= 1024;
        unit += 1;
    }
    format!("{value}{}", units[unit])
}

impl GuestSelectNodeinfo for NodeInfo {
    fn new() -> Self {
        NodeInfo::default()
    }

    fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        NodeInfo::pack(self, protocol_version).map_err(Into::into)
    }

    fn unpack(data: Vec<u8>, protocol_version: u16) -> Result<SelectNodeinfo, PluginError> {
        NodeInfo::unpack(&data, protocol_version)
            .map(SelectNodeinfo::new)
            .map_err(Into::into)
    }

    fn get(&self, field: NodeinfoField, state: u32) -> Result<NodeinfoValue, PluginError> {
        NodeInfo::get(self, field, state).map_err(Into::into)
    }
}

/// The per-job `select_jobinfo_t` of select/linear and select/cons_tres.
///
/// Neither plugin keeps anything per job: Slurm's `jobinfo_alloc` returns
/// NULL, `set` accepts and ignores every field, `get` fails with
/// `SLURM_ERROR`, `copy` returns NULL, `pack` writes nothing, `unpack`
/// reads nothing and `sprint` gives an empty string. This record is that
/// empty object; `pack`/`unpack` still check the protocol version, and
/// `unpack` refuses any byte (an empty jobinfo packs to nothing).
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
    fn pack_layout_is_slurms() {
        // select_p_select_nodeinfo_pack (20.11-22.05): u16 cpus, u64 memory,
        // packstr, packdouble (bits of value * 1e6), big-endian.
        let info = NodeInfo::allocated(4, 2000);
        assert_eq!(info, NodeInfo::with_tres(4, 2000, 4, 2000));
        assert_eq!(info.tres_alloc_fmt_str.as_deref(), Some("cpu=4,mem=2000M"));
        let bytes = info.pack(protocol::SLURM_22_05).unwrap();
        let mut expected = vec![0, 4, 0, 0, 0, 0, 0, 0, 0x07, 0xd0];
        let s = b"cpu=4,mem=2000M\0";
        expected.extend_from_slice(&(s.len() as u32).to_be_bytes());
        expected.extend_from_slice(s);
        expected.extend_from_slice(&4_000_000.0f64.to_bits().to_be_bytes());
        assert_eq!(bytes, expected);
        for v in protocol::VERSIONS {
            assert_eq!(NodeInfo::unpack(&bytes, v).unwrap(), info);
        }
        let empty = NodeInfo::default();
        assert_eq!(
            NodeInfo::unpack(&empty.pack(protocol::CURRENT).unwrap(), protocol::CURRENT).unwrap(),
            empty
        );
    }

    #[test]
    fn unpack_refuses_truncation_versions_and_trailing_bytes() {
        let bytes = NodeInfo::allocated(4, 2000)
            .pack(protocol::CURRENT)
            .unwrap();
        for cut in 0..bytes.len() {
            let err = NodeInfo::unpack(&bytes[..cut], protocol::CURRENT).unwrap_err();
            assert_eq!(err.code, codes::EINVAL, "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(
            NodeInfo::unpack(&long, protocol::CURRENT).unwrap_err().code,
            codes::EINVAL
        );
        // 23.02's protocol version (39 << 8) is not one 22.05 speaks.
        assert_eq!(
            NodeInfo::unpack(&bytes, 39 << 8).unwrap_err().code,
            codes::EINVAL
        );
        assert!(NodeInfo::default().pack(0x2300).is_err());
    }

    #[test]
    fn subcnt_only_for_allocated_state() {
        // select_p_select_nodeinfo_get: SUBCNT answers alloc_cpus only for
        // NODE_STATE_ALLOCATED.
        let info = NodeInfo::allocated(8, 0);
        let get = |field, state| info.get(field, state).unwrap();
        assert!(matches!(
            get(NodeinfoField::Subcnt, NODE_STATE_ALLOCATED),
            NodeinfoValue::Count(8)
        ));
        assert!(matches!(
            get(NodeinfoField::Subcnt, 2),
            NodeinfoValue::Count(0)
        ));
        assert!(matches!(
            get(NodeinfoField::TresAllocFmtStr, 0),
            NodeinfoValue::Text(t) if t == "cpu=8"
        ));
        assert!(matches!(
            get(NodeinfoField::TresAllocWeighted, 0),
            NodeinfoValue::Weighted(w) if w == 8.0
        ));
        assert_eq!(
            info.get(NodeinfoField::Ptr, 0).unwrap_err().code,
            codes::SLURM_ERROR
        );
    }

    #[test]
    fn tres_string_uses_exact_units() {
        assert_eq!(tres_alloc_string(0, 0), None);
        assert_eq!(tres_alloc_string(4, 4096).as_deref(), Some("cpu=4,mem=4G"));
        assert_eq!(tres_alloc_string(0, 1000).as_deref(), Some("mem=1000M"));
        assert_eq!(
            NodeInfo::allocated(0, 4096).tres_alloc_fmt_str.as_deref(),
            Some("mem=4G")
        );
        // select/linear's whole node adds its billing (the CPU count).
        assert_eq!(
            NodeInfo::whole_node(8, 4000, 8, 4000)
                .tres_alloc_fmt_str
                .as_deref(),
            Some("cpu=8,mem=4000M,billing=8")
        );
        assert_eq!(NodeInfo::idle(500).tres_alloc_fmt_str, None);
    }

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
