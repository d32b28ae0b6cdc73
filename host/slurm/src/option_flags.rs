//! The slurm.conf options the contract passes as flags, read as 22.05
//! reads them: `SelectTypeParameters` (common/slurm_selecttype_info.c
//! `parse_select_type_param`) and `TaskPluginParam` (read_config.c
//! `_validate_and_set_task_plugin_param`). `PreemptMode` is read with the
//! preemption rules ([`crate::setup::preemption`]).
//!
//! Each parser takes the option's value as written and answers the flags
//! slurmctld would hold, or the message slurmctld refuses to start with.

use slurm_wasm_host::bindings::types::{SelectTypeParams, TaskPluginParams};

/// The allocation units of 22.05 (each counts once in `param_cnt`).
const UNITS: [&str; 7] = [
    "CR_Socket",
    "CR_Socket_Memory",
    "CR_Core",
    "CR_Core_Memory",
    "CR_Memory",
    "CR_CPU",
    "CR_CPU_Memory",
];

/// The other tokens 22.05 takes.
const OTHERS: [&str; 7] = [
    "other_cons_res",
    "other_cons_tres",
    "CR_ALLOCATE_FULL_SOCKET",
    "CR_ONE_TASK_PER_CORE",
    "CR_CORE_DEFAULT_DIST_BLOCK",
    "CR_LLN",
    "CR_PACK_NODES",
];

/// `SelectTypeParameters=<value>` (comma-separated, case-insensitive): the
/// `CR_*` bits 22.05 sets. The empty value gives no flag.
///
/// # Errors
///
/// `Bad SelectTypeParameter: ...` for a token outside 22.05's list (later
/// releases' `CR_LL_SHARED_GRES` included), more than one of `CR_CPU`,
/// `CR_Core`, `CR_Socket` (any `_Memory` form) and `CR_Memory`, or
/// `CR_ONE_TASK_PER_CORE` with `CR_CPU*`.
pub fn select_type_params(value: &str) -> Result<SelectTypeParams, String> {
    let tokens: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let is = |list: &[&str], token: &str| list.iter().any(|k| k.eq_ignore_ascii_case(token));
    let bad = |why: String| format!("Bad SelectTypeParameter: {why}");
    if let Some(unknown) = tokens.iter().find(|t| !is(&UNITS, t) && !is(&OTHERS, t)) {
        return Err(bad(format!(
            "`{unknown}` is not a parameter of Slurm 22.05 (expected {}, {})",
            UNITS.join(", "),
            OTHERS.join(", ")
        )));
    }
    let units: Vec<&&str> = tokens.iter().filter(|t| is(&UNITS, t)).collect();
    if units.len() > 1 {
        return Err(bad(format!(
            "{} name more than one allocation unit",
            units
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    let flags = tokens.iter().fold(SelectTypeParams::empty(), |all, t| {
        all | select_type_flags(t)
    });
    let cpu_one_task = SelectTypeParams::CPU | SelectTypeParams::ONE_TASK_PER_CORE;
    if flags & cpu_one_task == cpu_one_task {
        return Err(bad(
            "CR_ONE_TASK_PER_CORE is not compatible with CR_CPU*, use CR_Core* instead".into(),
        ));
    }
    Ok(flags)
}

/// The bits 22.05's `parse_select_type_param` sets for one known token
/// (none for `CR_ALLOCATE_FULL_SOCKET`, deprecated).
fn select_type_flags(token: &str) -> SelectTypeParams {
    type F = SelectTypeParams;
    match token.to_ascii_uppercase().as_str() {
        "CR_SOCKET" => F::SOCKET,
        "CR_SOCKET_MEMORY" => F::SOCKET | F::MEMORY,
        "CR_CORE" => F::CORE,
        "CR_CORE_MEMORY" => F::CORE | F::MEMORY,
        "CR_MEMORY" => F::MEMORY,
        "CR_CPU" => F::CPU,
        "CR_CPU_MEMORY" => F::CPU | F::MEMORY,
        "OTHER_CONS_RES" => F::OTHER_CONS_RES,
        "OTHER_CONS_TRES" => F::OTHER_CONS_TRES,
        "CR_ONE_TASK_PER_CORE" => F::ONE_TASK_PER_CORE,
        "CR_CORE_DEFAULT_DIST_BLOCK" => F::CORE_DEFAULT_DIST_BLOCK,
        "CR_LLN" => F::LLN,
        "CR_PACK_NODES" => F::PACK_NODES,
        _ => F::empty(),
    }
}

/// `TaskPluginParam=<value>` (comma-separated, case-insensitive): the
/// `CPU_BIND_*` bits 22.05 sets: at most one of `None`, `Sockets`,
/// `Cores`, `Threads`; `Verbose`; at most one
/// `Autobind=none|threads|cores|sockets`; `SlurmdOffSpec`.
///
/// # Errors
///
/// Slurm's message for anything else (later releases' words such as
/// `OOMKillStep` included).
pub fn task_plugin_params(value: &str) -> Result<TaskPluginParams, String> {
    type F = TaskPluginParams;
    let (mut flags, mut unit_set, mut autobind_set) = (F::empty(), false, false);
    for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let lower = word.to_ascii_lowercase();
        let unit = match lower.as_str() {
            "none" => Some(F::NONE),
            "sockets" => Some(F::SOCKETS),
            "cores" => Some(F::CORES),
            "threads" => Some(F::THREADS),
            _ => None,
        };
        if let Some(unit) = unit {
            if unit_set {
                return Err(format!("Bad TaskPluginParam: {word}"));
            }
            unit_set = true;
            flags |= unit;
        } else if lower == "verbose" {
            flags |= F::VERBOSE;
        } else if lower == "slurmdoffspec" {
            flags |= F::SLURMD_OFF_SPEC;
        } else if let Some(bind) = lower.strip_prefix("autobind=") {
            if autobind_set {
                return Err("Bad TaskPluginParam: autobind already set".into());
            }
            autobind_set = true;
            flags |= match bind {
                "none" => F::empty(),
                "threads" => F::AUTOBIND_THREADS,
                "cores" => F::AUTOBIND_CORES,
                "sockets" => F::AUTOBIND_SOCKETS,
                _ => {
                    return Err(format!(
                        "Bad TaskPluginParam autobind value: {}",
                        &word["autobind=".len()..]
                    ))
                }
            };
        } else {
            return Err(format!("Bad TaskPluginParam: {word}"));
        }
    }
    Ok(flags)
}
