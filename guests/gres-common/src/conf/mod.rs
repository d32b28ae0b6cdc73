//! gres.conf records checked against the node (`gres_slurmd_conf_t` as
//! Slurm's parser and `node_config_load` validate it), Slurm 22.05.8 src/common/gres.c `_parse_gres_config`.

use slurm_wasm_sdk::codes::{EINVAL, ESLURM_INVALID_GRES};
use slurm_wasm_sdk::gres::{GresConfRecord, NodeHardware};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::settings::Settings;

/// Most device files one gres.conf line may name (Slurm's `MAX_GRES_BITMAP`).
pub const MAX_FILES: usize = 1024;

/// The vendor variables a record asks for (`GRES_CONF_ENV_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct EnvVendors(u8);

impl EnvVendors {
    /// `nvidia_gpu_env`: `CUDA_VISIBLE_DEVICES`.
    pub const NVIDIA: EnvVendors = EnvVendors(1);
    /// `amd_gpu_env`: `ROCR_VISIBLE_DEVICES`.
    pub const AMD: EnvVendors = EnvVendors(2);
    /// `intel_gpu_env`: `ZE_AFFINITY_MASK`.
    pub const INTEL: EnvVendors = EnvVendors(4);
    /// `opencl_env`: `GPU_DEVICE_ORDINAL`.
    pub const OPENCL: EnvVendors = EnvVendors(8);
    /// All four: the default when no env flag is given and nothing is detected.
    pub const ALL: EnvVendors = EnvVendors(15);
    /// `no_gpu_env`.
    pub const NONE: EnvVendors = EnvVendors(0);

    /// The bits as a byte (stepd format).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// From [`EnvVendors::bits`]; unknown bits are refused.
    pub fn from_bits(bits: u8) -> Option<Self> {
        (bits & !Self::ALL.0 == 0).then_some(EnvVendors(bits))
    }

    pub fn contains(self, other: EnvVendors) -> bool {
        self.0 & other.0 == other.0 && other.0 != 0
    }

    pub fn union(self, other: EnvVendors) -> EnvVendors {
        EnvVendors(self.0 | other.0)
    }

    /// The variables, in Slurm's order (CUDA, ROCR, ZE, GPU_DEVICE_ORDINAL).
    pub fn variables(self) -> impl Iterator<Item = &'static str> {
        [
            (Self::NVIDIA, "CUDA_VISIBLE_DEVICES"),
            (Self::AMD, "ROCR_VISIBLE_DEVICES"),
            (Self::INTEL, "ZE_AFFINITY_MASK"),
            (Self::OPENCL, "GPU_DEVICE_ORDINAL"),
        ]
        .into_iter()
        .filter(move |(flag, _)| self.contains(*flag))
        .map(|(_, name)| name)
    }

    fn tokens(self) -> Vec<String> {
        if self.0 == 0 {
            return vec!["no_gpu_env".into()];
        }
        [
            (Self::NVIDIA, "nvidia_gpu_env"),
            (Self::AMD, "amd_gpu_env"),
            (Self::INTEL, "intel_gpu_env"),
            (Self::OPENCL, "opencl_env"),
        ]
        .into_iter()
        .filter(|(flag, _)| self.contains(*flag))
        .map(|(_, t)| t.to_string())
        .collect()
    }
}

/// The `Flags=` of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordFlags {
    /// Env flags; `None` while neither given on the line nor inherited.
    pub env: Option<EnvVendors>,
    pub count_only: bool,
    pub explicit: bool,
    pub one_sharing: bool,
    pub all_sharing: bool,
}

impl RecordFlags {
    /// Parses `Flags=` tokens (case-insensitive). `env_uuid` (26.05) and
    /// anything else Slurm 22.05 does not know are refused.
    pub fn parse(origin: &str, tokens: &[String]) -> Result<Self, Error> {
        let mut flags = RecordFlags::default();
        let mut env = None::<EnvVendors>;
        let mut add = |v: EnvVendors| env = Some(env.unwrap_or_default().union(v));
        for token in tokens.iter().flat_map(|t| t.split(',')) {
            match token.trim().to_ascii_lowercase().as_str() {
                "" => {}
                "countonly" => flags.count_only = true,
                "explicit" => flags.explicit = true,
                "one_sharing" => flags.one_sharing = true,
                "all_sharing" => flags.all_sharing = true,
                "nvidia_gpu_env" => add(EnvVendors::NVIDIA),
                "amd_gpu_env" => add(EnvVendors::AMD),
                "intel_gpu_env" => add(EnvVendors::INTEL),
                "opencl_env" => add(EnvVendors::OPENCL),
                "no_gpu_env" => add(EnvVendors::NONE),
                other => {
                    return Err(Error::new(
                        EINVAL,
                        format!(
                            "{origin}: invalid Flags={other} (expected CountOnly, explicit, one_sharing, all_sharing, \
                             nvidia_gpu_env, amd_gpu_env, intel_gpu_env, opencl_env or no_gpu_env)"
                        ),
                    ))
                }
            }
        }
        if flags.one_sharing && flags.all_sharing {
            return Err(Error::new(
                EINVAL,
                format!("{origin}: Flags=one_sharing and all_sharing exclude each other"),
            ));
        }
        let no_env = tokens
            .iter()
            .flat_map(|t| t.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("no_gpu_env"));
        if no_env && env.is_some_and(|e| e != EnvVendors::NONE) {
            return Err(Error::new(
                EINVAL,
                format!("{origin}: Flags=no_gpu_env cannot be combined with other env flags"),
            ));
        }
        flags.env = env;
        Ok(flags)
    }

    fn tokens(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.count_only {
            out.push("CountOnly".into());
        }
        if self.explicit {
            out.push("explicit".into());
        }
        if self.one_sharing {
            out.push("one_sharing".into());
        }
        if self.all_sharing {
            out.push("all_sharing".into());
        }
        if let Some(env) = self.env {
            out.extend(env.tokens());
        }
        out
    }
}

/// One gres.conf record after validation (a typed `gres_slurmd_conf_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfRecord {
    pub origin: String,
    pub name: String,
    pub type_name: Option<String>,
    pub files: Vec<String>,
    pub count: u64,
    /// `Cores=` as core indices of the node.
    pub cores: Option<Bitmap>,
    /// `Links=` parsed.
    pub links: Option<Vec<i32>>,
    pub flags: RecordFlags,
    pub unique_id: Option<String>,
}

impl ConfRecord {
    /// The first device file, the merge's sort key.
    pub fn file(&self) -> Option<&str> {
        self.files.first().map(String::as_str)
    }

    /// Back to the contract's record (`Links=` re-joined, flags as tokens).
    pub fn to_record(&self) -> GresConfRecord {
        GresConfRecord {
            origin: self.origin.clone(),
            name: self.name.clone(),
            type_name: self.type_name.clone(),
            files: self.files.clone(),
            count: self.count,
            cores: self.cores.as_ref().map(Into::into),
            links: self
                .links
                .as_ref()
                .map(|l| l.iter().map(i32::to_string).collect::<Vec<_>>().join(",")),
            flags: self.flags.tokens(),
            unique_id: self.unique_id.clone(),
        }
    }
}

fn invalid(message: String) -> Error {
    Error::new(ESLURM_INVALID_GRES, message)
}

/// Parses `Links=`: comma-separated integers, `-1` for the device itself,
/// nothing below `-2`.
pub fn parse_links(origin: &str, links: &str) -> Result<Vec<i32>, Error> {
    links
        .split(',')
        .map(|t| {
            let t = t.trim();
            match t.parse::<i32>() {
                Ok(v) if v >= -2 => Ok(v),
                Ok(v) => Err(invalid(format!(
                    "{origin}: Links={links}: value {v} is invalid (expected link counts >= -2, -1 for the device itself)"
                ))),
                Err(_) => Err(invalid(format!(
                    "{origin}: Links={links}: `{t}` is not an integer (expected a comma list of link counts)"
                ))),
            }
        })
        .collect()
}

/// Checks `Cores=` against the node: every core must exist and each socket
/// is covered wholly or not at all (Slurm rejects the node otherwise).
fn check_cores(origin: &str, cores: &Bitmap, node: &NodeHardware) -> Result<(), Error> {
    let per_socket = usize::from(node.cores_per_socket);
    let total = usize::from(node.sockets) * per_socket;
    if let Some(past) = cores.ones().find(|c| *c >= total) {
        return Err(invalid(format!(
            "{origin}: Cores={} names core {past}, but node {} has only {total} cores (expected core ids 0-{})",
            cores.to_ranges(),
            node.name,
            total.saturating_sub(1)
        )));
    }
    for socket in 0..usize::from(node.sockets) {
        let range = socket * per_socket..(socket + 1) * per_socket;
        let set = range.clone().filter(|c| cores.get(*c)).count();
        if set != 0 && set != per_socket {
            return Err(invalid(format!(
                "{origin}: Cores={} covers only part of socket {socket} (cores {}-{}) of node {}: \
                 gres.conf Cores must cover whole sockets",
                cores.to_ranges(),
                range.start,
                range.end - 1,
                node.name
            )));
        }
    }
    Ok(())
}

/// Validates the node's records: names in `GresTypes`, `Flags`, `Count`
/// against `File` (GPU-like names; for `mps`/`shard` Count is the number of
/// shares), at most [`MAX_FILES`] files, `Cores` inside the node and
/// covering whole sockets, `Links` syntax and one device per `Links` line,
/// typed GPUs needing `File` unless detected, and no device file named twice
/// for one GRES name. Env flags are inherited from the previous line of the
/// same name and type when a line gives none. Errors name the record's
/// `origin`.
pub fn validate(
    records: &[GresConfRecord],
    node: &NodeHardware,
    settings: &Settings,
) -> Result<Vec<ConfRecord>, Error> {
    let mut out: Vec<ConfRecord> = Vec::with_capacity(records.len());
    for r in records {
        let origin = r.origin.as_str();
        if !settings
            .gres_types
            .iter()
            .any(|t| t.eq_ignore_ascii_case(&r.name))
        {
            return Err(invalid(format!(
                "{origin}: Name={} is not a GRES type of this cluster (GresTypes={}); expected one of them",
                r.name,
                settings.gres_types.join(",")
            )));
        }
        let name = r.name.to_ascii_lowercase();
        let shared = name == "mps" || name == "shard";
        let mut flags = RecordFlags::parse(origin, &r.flags)?;
        if r.files.len() > MAX_FILES {
            return Err(invalid(format!(
                "{origin}: File= names {} files, more than the {MAX_FILES} Slurm allows on one node",
                r.files.len()
            )));
        }
        if !shared && !r.files.is_empty() && r.count != r.files.len() as u64 {
            return Err(invalid(format!(
                "{origin}: Count={} does not match File= ({} device files); expected Count={} or no Count",
                r.count,
                r.files.len(),
                r.files.len()
            )));
        }
        if name == "gpu"
            && r.type_name.is_some()
            && r.files.is_empty()
            && settings.auto_detect == crate::settings::AutoDetect::Off
        {
            return Err(invalid(format!(
                "{origin}: Type={} needs File= (typed GPUs name their device files unless AutoDetect finds them)",
                r.type_name.as_deref().unwrap_or_default()
            )));
        }
        let cores = match &r.cores {
            Some(map) => {
                let map = Bitmap::try_from(map)
                    .map_err(|e| invalid(format!("{origin}: Cores=: {}", e.message)))?;
                check_cores(origin, &map, node)?;
                Some(map)
            }
            None => None,
        };
        let links = match &r.links {
            Some(l) => {
                if r.files.len() > 1 || (r.files.is_empty() && r.count > 1) {
                    return Err(invalid(format!(
                        "{origin}: Links={l} needs a line describing a single device (this line has {})",
                        r.files.len().max(r.count as usize)
                    )));
                }
                Some(parse_links(origin, l)?)
            }
            None => None,
        };
        for file in &r.files {
            let earlier = out
                .iter()
                .find(|o| o.name == name && o.files.contains(file))
                .map(|o| o.origin.as_str())
                .or_else(|| (r.files.iter().filter(|f| *f == file).count() > 1).then_some(origin));
            if let Some(earlier) = earlier {
                return Err(invalid(format!(
                    "{origin}: File={file} is already used by {earlier}; each {name} device file may appear once"
                )));
            }
        }
        if flags.env.is_none() {
            flags.env = out
                .iter()
                .rev()
                .find(|o| o.name == name && o.type_name == r.type_name)
                .and_then(|o| o.flags.env);
        }
        out.push(ConfRecord {
            origin: r.origin.clone(),
            name,
            type_name: r.type_name.clone(),
            files: r.files.clone(),
            count: r.count,
            cores,
            links,
            flags,
            unique_id: r.unique_id.clone(),
        });
    }
    Ok(out)
}

/// Checks the gres.conf total of `name` against the node's slurm.conf
/// `Gres=`: fewer than configured is an error (Slurm drains the node), more
/// is a warning; no `Gres=` entry for `name` while gres.conf has some is a
/// warning.
pub fn check_total(
    name: &str,
    records: &[ConfRecord],
    node: &NodeHardware,
    warnings: &mut Vec<String>,
) -> Result<(), Error> {
    let found: u64 = records
        .iter()
        .filter(|r| r.name == name)
        .map(|r| r.count)
        .sum();
    let configured: Vec<u64> = node
        .configured
        .iter()
        .filter(|g| g.name.eq_ignore_ascii_case(name))
        .map(|g| g.count)
        .collect();
    if configured.is_empty() {
        if found > 0 {
            warnings.push(format!(
                "gres/{name}: node {} has {found} {name} in gres.conf but none in slurm.conf Gres=",
                node.name
            ));
        }
        return Ok(());
    }
    let expected: u64 = configured.iter().sum();
    if found < expected {
        let lines: Vec<&str> = records
            .iter()
            .filter(|r| r.name == name)
            .map(|r| r.origin.as_str())
            .collect();
        return Err(invalid(format!(
            "gres/{name} count reported lower than configured ({found} < {expected}) on node {}: \
             slurm.conf Gres= expects {expected}, gres.conf ({}) gives {found}",
            node.name,
            if lines.is_empty() {
                "no lines".to_string()
            } else {
                lines.join(", ")
            }
        )));
    }
    if found > expected {
        warnings.push(format!(
            "gres/{name} count too high for node {} ({found} > {expected}): slurm.conf Gres= configures {expected}",
            node.name
        ));
    }
    Ok(())
}

/// When gres.conf (and detection) gave nothing for `name`, slurmd takes
/// the counts of the node's slurm.conf `Gres=` instead: one record per
/// configured entry, without device files (so no device can be listed in
/// the environment).
pub fn add_slurm_conf_counts(name: &str, records: &mut Vec<ConfRecord>, node: &NodeHardware) {
    if records.iter().any(|r| r.name == name) {
        return;
    }
    for g in node
        .configured
        .iter()
        .filter(|g| g.name.eq_ignore_ascii_case(name) && g.count > 0)
    {
        records.push(ConfRecord {
            origin: format!("slurm.conf Gres= of node {}", node.name),
            name: name.to_string(),
            type_name: g.type_name.clone(),
            files: Vec::new(),
            count: g.count,
            cores: None,
            links: None,
            flags: RecordFlags::default(),
            unique_id: None,
        });
    }
}

/// Fills env flags still unset after inheritance and merging: the
/// detector's flag when `AutoDetect` is on, otherwise all four vendors.
pub fn default_env(records: &mut [ConfRecord], detected: Option<EnvVendors>) {
    for r in records {
        if r.flags.env.is_none() {
            r.flags.env = Some(detected.unwrap_or(EnvVendors::ALL));
        }
    }
}

/// The node's env flags: the union over its records of `name`.
pub fn node_env(records: &[ConfRecord], name: &str) -> EnvVendors {
    records
        .iter()
        .filter(|r| r.name == name)
        .fold(EnvVendors::NONE, |acc, r| {
            acc.union(r.flags.env.unwrap_or(EnvVendors::ALL))
        })
}

#[cfg(test)]
mod tests;
