//! `SelectTypeParameters` and the other slurm.conf settings cons_tres reads
//! (`parse_select_type_param`, common/slurm_selecttype_info.c;
//! `select_p_node_init`, cons_common/cons_common.c).

use slurm_wasm_sdk::types::{PreemptModes, SelectTypeParams};

/// The allocation unit (`CR_CPU`, `CR_Core` or `CR_Socket`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// `CR_CPU`: one CPU (thread).
    Cpu,
    /// `CR_Core`: whole cores.
    Core,
    /// `CR_Socket`: whole sockets.
    Socket,
}

/// The parsed `SelectTypeParameters` plus the scheduler settings used here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub unit: Unit,
    /// `*_Memory`: memory is a consumable resource.
    pub memory: bool,
    /// `CR_ONE_TASK_PER_CORE`.
    pub one_task_per_core: bool,
    /// `CR_LLN`.
    pub lln: bool,
    /// `CR_Pack_Nodes` (only changes step layout, kept for `config-info`).
    pub pack_nodes: bool,
    /// `CR_CORE_DEFAULT_DIST_BLOCK`.
    pub default_dist_block: bool,
    /// `select/cons_res` instead of cons_tres: GPU-specific options refused.
    pub cons_res: bool,
    /// `PreemptMode` includes `GANG`.
    pub gang: bool,
    /// `PreemptType=preempt/partition_prio`: a job may only count on the
    /// cores of partitions it could preempt (see `ConsTres::test_on`).
    pub preempt_by_part: bool,
    /// `PreemptType=preempt/qos` (22.05 tests the name for "qos",
    /// cons_common.c:1143): every partition has one row more, kept for
    /// QOS preemptors (see `crate::num_rows` and the `crate::preempt`
    /// module).
    pub preempt_by_qos: bool,
    /// `SchedulerParameters=time_min_as_soft_limit`.
    pub time_min_as_soft_limit: bool,
    /// `SchedulerParameters=bf_busy_nodes`: will-run tests after releasing
    /// jobs prefer nodes already running jobs (see `eval_nodes`).
    pub bf_busy_nodes: bool,
    /// `SchedulerParameters=pack_serial_at_end`: one-CPU one-node jobs
    /// take the last nodes first (see `eval_nodes`).
    pub pack_serial_at_end: bool,
    /// `SchedulerParameters=bf_window_linear=` seconds (0 = doubling windows).
    pub bf_window_linear: i64,
    /// `SchedulerParameters=preempt_reorder_count=` (default 1): how many
    /// times a RUN_NOW test that fits by preempting reorders its candidates
    /// and tries again (see `ConsTres::preempt_run_now`).
    pub preempt_reorder_count: u32,
    /// `SchedulerParameters=preempt_strict_order`: a reordering moves the
    /// last preempted candidate to the front instead of sorting by the
    /// nodes each would free.
    pub preempt_strict_order: bool,
    /// `OverTimeLimit` (minutes) and `KillWait` (seconds), for end-time guesses.
    pub over_time_limit: u16,
    pub kill_wait: u16,
    /// The cluster-wide `DefCpuPerGPU` and `DefMemPerGPU` (MB); a
    /// partition's own values come first (see `JobView::new`).
    pub def_cpu_per_gpu: Option<u64>,
    pub def_mem_per_gpu: Option<u64>,
}

impl Params {
    /// Reads `SelectTypeParameters` (the host parsed the tokens as 22.05's
    /// `parse_select_type_param`, common/slurm_selecttype_info.c, does) as
    /// `select_p_node_init` (cons_common.c:1087) does: no flag at all (the
    /// key absent) means `CR_Core_Memory`.
    ///
    /// Fails, as Slurm does at startup, on more than one of CR_CPU, CR_Core
    /// and CR_Socket, on `CR_ONE_TASK_PER_CORE` with CR_CPU, and when flags
    /// are given but none of CR_CPU/CR_Core/CR_Socket is.
    pub fn from_flags(flags: SelectTypeParams) -> Result<Params, String> {
        let mut p = Params {
            unit: Unit::Core,
            memory: true,
            one_task_per_core: flags.contains(SelectTypeParams::ONE_TASK_PER_CORE),
            lln: flags.contains(SelectTypeParams::LLN),
            pack_nodes: flags.contains(SelectTypeParams::PACK_NODES),
            default_dist_block: flags.contains(SelectTypeParams::CORE_DEFAULT_DIST_BLOCK),
            cons_res: false,
            gang: false,
            preempt_by_part: false,
            preempt_by_qos: false,
            time_min_as_soft_limit: false,
            bf_busy_nodes: false,
            pack_serial_at_end: false,
            bf_window_linear: 0,
            preempt_reorder_count: 1,
            preempt_strict_order: false,
            over_time_limit: 0,
            kill_wait: 30,
            def_cpu_per_gpu: None,
            def_mem_per_gpu: None,
        };
        if flags.is_empty() {
            return Ok(p);
        }
        p.memory = flags.contains(SelectTypeParams::MEMORY);
        let units: Vec<(Unit, &str)> = [
            (SelectTypeParams::CPU, Unit::Cpu, "CR_CPU"),
            (SelectTypeParams::CORE, Unit::Core, "CR_Core"),
            (SelectTypeParams::SOCKET, Unit::Socket, "CR_Socket"),
        ]
        .into_iter()
        .filter(|(flag, _, _)| flags.contains(*flag))
        .map(|(_, unit, name)| (unit, name))
        .collect();
        match units[..] {
            [(unit, _)] => p.unit = unit,
            [] => {
                return Err(
                    "SelectTypeParameters: select/cons_tres needs one of CR_CPU, CR_Core \
                            or CR_Socket (with or without _Memory)"
                        .to_string(),
                )
            }
            _ => {
                let names: Vec<&str> = units.iter().map(|(_, name)| *name).collect();
                return Err(format!(
                    "SelectTypeParameters: {} name more than one allocation unit (expected \
                     only one of CR_CPU, CR_Core or CR_Socket)",
                    names.join(" and ")
                ));
            }
        }
        if p.unit == Unit::Cpu && p.one_task_per_core {
            return Err(
                "SelectTypeParameters: CR_ONE_TASK_PER_CORE does not go with CR_CPU (expected \
                 CR_Core or CR_Socket, with or without _Memory)"
                    .to_string(),
            );
        }
        Ok(p)
    }

    /// Reads `SchedulerParameters` tokens and `PreemptMode`. Option names
    /// match whatever their case, as cons_common's `select_p_node_init`
    /// finds them with `xstrcasestr`.
    pub fn apply_scheduler(
        &mut self,
        sched: &[String],
        preempt_mode: PreemptModes,
    ) -> Result<(), String> {
        for tok in sched.iter().flat_map(|t| t.split(',')) {
            let tok = tok.trim();
            if tok.eq_ignore_ascii_case("time_min_as_soft_limit") {
                self.time_min_as_soft_limit = true;
            } else if tok.eq_ignore_ascii_case("bf_busy_nodes") {
                self.bf_busy_nodes = true;
            } else if tok.eq_ignore_ascii_case("pack_serial_at_end") {
                self.pack_serial_at_end = true;
            } else if let Some(v) = value_of(tok, "bf_window_linear=") {
                self.bf_window_linear = v.parse().map_err(|_| {
                    format!(
                        "SchedulerParameters: bf_window_linear=`{v}` is not a number of seconds"
                    )
                })?;
            } else if tok.eq_ignore_ascii_case("preempt_strict_order") {
                self.preempt_strict_order = true;
            } else if let Some(v) = value_of(tok, "preempt_reorder_count=") {
                // 22.05 logs a negative count and keeps the default.
                let n: i64 = v.parse().map_err(|_| {
                    format!("SchedulerParameters: preempt_reorder_count=`{v}` is not a number")
                })?;
                self.preempt_reorder_count = u32::try_from(n).unwrap_or(1);
            }
        }
        self.gang = preempt_mode.contains(PreemptModes::GANG);
        Ok(())
    }
}

/// The value of `token` when it is `key` (ending in `=`, any case) and a
/// value.
fn value_of<'a>(token: &'a str, key: &str) -> Option<&'a str> {
    token
        .get(..key.len())
        .filter(|k| k.eq_ignore_ascii_case(key))
        .map(|_| &token[key.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    const CORE_MEMORY: SelectTypeParams = SelectTypeParams::CORE.union(SelectTypeParams::MEMORY);

    #[test]
    fn reads_units_and_flags() {
        // parse_select_type_param (common/slurm_selecttype_info.c) sets
        // these bits for CR_Core_Memory,CR_LLN,CR_ONE_TASK_PER_CORE, then
        // CR_Socket, then CR_CPU,CR_CORE_DEFAULT_DIST_BLOCK.
        let p = Params::from_flags(
            CORE_MEMORY | SelectTypeParams::LLN | SelectTypeParams::ONE_TASK_PER_CORE,
        )
        .unwrap();
        assert_eq!(p.unit, Unit::Core);
        assert!(p.memory && p.lln && p.one_task_per_core && !p.pack_nodes);
        let p = Params::from_flags(SelectTypeParams::SOCKET).unwrap();
        assert_eq!(p.unit, Unit::Socket);
        assert!(!p.memory);
        let p =
            Params::from_flags(SelectTypeParams::CPU | SelectTypeParams::CORE_DEFAULT_DIST_BLOCK)
                .unwrap();
        assert_eq!(p.unit, Unit::Cpu);
        assert!(p.default_dist_block && !p.memory && !p.lln);
    }

    #[test]
    fn preemption_reorder_settings() {
        // cons_common.c:1099-1111: preempt_strict_order, and
        // preempt_reorder_count= (default 1; a negative one keeps it).
        let none = PreemptModes::empty();
        let mut p = Params::from_flags(SelectTypeParams::empty()).unwrap();
        p.apply_scheduler(&[], none).unwrap();
        assert_eq!(
            (p.preempt_reorder_count, p.preempt_strict_order),
            (1, false)
        );
        p.apply_scheduler(
            &s(&["bf_continue,preempt_reorder_count=3,preempt_strict_order"]),
            none,
        )
        .unwrap();
        assert_eq!((p.preempt_reorder_count, p.preempt_strict_order), (3, true));
        // Any case, as xstrcasestr finds them (cons_common.c select_p_node_init).
        p.apply_scheduler(&s(&["Preempt_Reorder_Count=4,BF_WINDOW_LINEAR=60"]), none)
            .unwrap();
        assert_eq!((p.preempt_reorder_count, p.bf_window_linear), (4, 60));
        p.apply_scheduler(&s(&["preempt_reorder_count=-2"]), none)
            .unwrap();
        assert_eq!(p.preempt_reorder_count, 1);
        let e = p
            .apply_scheduler(&s(&["preempt_reorder_count=many"]), none)
            .unwrap_err();
        assert_eq!(
            e,
            "SchedulerParameters: preempt_reorder_count=`many` is not a number"
        );
    }

    #[test]
    fn preempt_mode_sets_gang() {
        // slurm.conf(5): PreemptMode defaults to OFF; GANG may join another mode.
        let mut p = Params::from_flags(SelectTypeParams::empty()).unwrap();
        p.apply_scheduler(&[], PreemptModes::empty()).unwrap();
        assert!(!p.gang);
        p.apply_scheduler(&[], PreemptModes::SUSPEND | PreemptModes::GANG)
            .unwrap();
        assert!(p.gang);
        p.apply_scheduler(&[], PreemptModes::empty()).unwrap();
        assert!(!p.gang);
    }

    #[test]
    fn needs_one_unit() {
        // select_p_node_init (cons_common/cons_common.c): at least one of
        // CR_CPU/CR_Core/CR_Socket, fatal otherwise; parse_select_type_param:
        // never two.
        assert!(Params::from_flags(SelectTypeParams::MEMORY)
            .unwrap_err()
            .contains("needs one of CR_CPU"));
        let e = Params::from_flags(SelectTypeParams::CORE | SelectTypeParams::CPU).unwrap_err();
        assert!(e.contains("CR_CPU and CR_Core name more than one"), "{e}");
    }

    #[test]
    fn no_parameters_mean_cr_core_memory() {
        // cons_common.c:1087-1091 (select_p_node_init, 22.05): without
        // SelectTypeParameters, CR_Core_Memory.
        let p = Params::from_flags(SelectTypeParams::empty()).unwrap();
        assert_eq!((p.unit, p.memory), (Unit::Core, true));
        assert!(!p.one_task_per_core && !p.lln && !p.pack_nodes && !p.default_dist_block);
    }

    #[test]
    fn no_one_task_per_core_with_cr_cpu() {
        // common/slurm_selecttype_info.c (22.05 parse_select_type_param):
        // CR_ONE_TASK_PER_CORE with CR_CPU* is an error.
        let e = Params::from_flags(
            SelectTypeParams::CPU | SelectTypeParams::MEMORY | SelectTypeParams::ONE_TASK_PER_CORE,
        )
        .unwrap_err();
        assert!(e.contains("expected CR_Core or CR_Socket"), "{e}");
    }
}
