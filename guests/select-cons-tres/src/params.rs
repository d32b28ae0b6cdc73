//! `SelectTypeParameters` and the other slurm.conf settings cons_tres reads
//! (`parse_select_type_param`, common/slurm_selecttype_info.c;
//! `select_p_node_init`, cons_common/cons_common.c).

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
    /// Parses the `SelectTypeParameters` tokens (each may itself hold
    /// comma-separated tokens), as Slurm 22.05's `parse_select_type_param`
    /// (common/slurm_selecttype_info.c) and `select_p_node_init`
    /// (cons_common.c:1087) do:
    /// * no token at all (the key absent) means `CR_Core_Memory`;
    /// * `CR_ALLOCATE_FULL_SOCKET` is accepted and changes nothing (it is
    ///   deprecated; whole sockets are what CR_Socket allocates);
    /// * the tokens later releases added are accepted as well.
    ///
    /// Fails, as Slurm does at startup, on an unknown token, on more than
    /// one of CR_CPU/CR_Core/CR_Socket/CR_Memory (in any `_Memory` form),
    /// on `CR_ONE_TASK_PER_CORE` with CR_CPU, and when tokens are given but
    /// none of CR_CPU/CR_Core/CR_Socket is.
    pub fn parse(tokens: &[String]) -> Result<Params, String> {
        let mut p = Params {
            unit: Unit::Core,
            memory: false,
            one_task_per_core: false,
            lln: false,
            pack_nodes: false,
            default_dist_block: false,
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
        let mut unit = None;
        // Tokens seen, and those naming a unit or CR_Memory (at most one).
        let (mut seen, mut units) = (0, Vec::new());
        for tok in tokens.iter().flat_map(|t| t.split(',')) {
            let tok = tok.trim();
            if tok.is_empty() {
                continue;
            }
            seen += 1;
            let (u, mem) = match tok.to_ascii_uppercase().as_str() {
                "CR_CPU" => (Some(Unit::Cpu), false),
                "CR_CPU_MEMORY" => (Some(Unit::Cpu), true),
                "CR_CORE" => (Some(Unit::Core), false),
                "CR_CORE_MEMORY" => (Some(Unit::Core), true),
                "CR_SOCKET" => (Some(Unit::Socket), false),
                "CR_SOCKET_MEMORY" => (Some(Unit::Socket), true),
                "CR_MEMORY" => (None, true),
                "CR_ONE_TASK_PER_CORE" => {
                    p.one_task_per_core = true;
                    (None, false)
                }
                "CR_LLN" => {
                    p.lln = true;
                    (None, false)
                }
                "CR_PACK_NODES" => {
                    p.pack_nodes = true;
                    (None, false)
                }
                "CR_CORE_DEFAULT_DIST_BLOCK" => {
                    p.default_dist_block = true;
                    (None, false)
                }
                // The rest of what 22.05's parse_select_type_param
                // (common/slurm_selecttype_info.c) takes; later releases'
                // tokens (CR_LL_SHARED_GRES, MULTIPLE_SHARING_GRES_PJ, ...)
                // are "Bad SelectTypeParameter" there.
                "CR_ALLOCATE_FULL_SOCKET" | "OTHER_CONS_RES" | "OTHER_CONS_TRES" => (None, false),
                _ => {
                    return Err(format!(
                        "SelectTypeParameters: unknown token `{tok}` (expected CR_CPU, CR_Core, CR_Socket, \
                         their _Memory forms, CR_ONE_TASK_PER_CORE, CR_LLN, CR_Pack_Nodes, \
                         CR_CORE_DEFAULT_DIST_BLOCK, ...)"
                    ))
                }
            };
            if u.is_some() || mem {
                units.push(tok);
            }
            if let Some(u) = u {
                unit = Some(u);
            }
            p.memory |= mem;
        }
        if seen == 0 {
            p.memory = true;
            return Ok(p);
        }
        if units.len() > 1 {
            return Err(format!(
                "SelectTypeParameters: `{}` name more than one allocation unit (expected only one \
                 of CR_CPU, CR_Core, CR_Socket, their _Memory forms or CR_Memory)",
                units.join(",")
            ));
        }
        if unit == Some(Unit::Cpu) && p.one_task_per_core {
            return Err(
                "SelectTypeParameters: CR_ONE_TASK_PER_CORE does not go with CR_CPU (expected \
                 CR_Core or CR_Socket, with or without _Memory)"
                    .to_string(),
            );
        }
        p.unit = unit.ok_or_else(|| {
            "SelectTypeParameters: select/cons_tres needs one of CR_CPU, CR_Core or CR_Socket (with or \
             without _Memory)"
                .to_string()
        })?;
        Ok(p)
    }

    /// Reads `SchedulerParameters` and `PreemptMode` tokens.
    pub fn apply_scheduler(
        &mut self,
        sched: &[String],
        preempt_mode: &[String],
    ) -> Result<(), String> {
        for tok in sched.iter().flat_map(|t| t.split(',')) {
            let tok = tok.trim();
            if tok.eq_ignore_ascii_case("time_min_as_soft_limit") {
                self.time_min_as_soft_limit = true;
            } else if tok.eq_ignore_ascii_case("bf_busy_nodes") {
                self.bf_busy_nodes = true;
            } else if tok.eq_ignore_ascii_case("pack_serial_at_end") {
                self.pack_serial_at_end = true;
            } else if let Some(v) = tok.strip_prefix("bf_window_linear=") {
                self.bf_window_linear = v.parse().map_err(|_| {
                    format!(
                        "SchedulerParameters: bf_window_linear=`{v}` is not a number of seconds"
                    )
                })?;
            } else if tok.eq_ignore_ascii_case("preempt_strict_order") {
                self.preempt_strict_order = true;
            } else if let Some(v) = tok.strip_prefix("preempt_reorder_count=") {
                // 22.05 logs a negative count and keeps the default.
                let n: i64 = v.parse().map_err(|_| {
                    format!("SchedulerParameters: preempt_reorder_count=`{v}` is not a number")
                })?;
                self.preempt_reorder_count = u32::try_from(n).unwrap_or(1);
            }
        }
        self.gang = preempt_mode
            .iter()
            .flat_map(|t| t.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("GANG"));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_units_and_flags() {
        // parse_select_type_param (common/slurm_selecttype_info.c).
        let p = Params::parse(&s(&["CR_Core_Memory", "CR_LLN,CR_ONE_TASK_PER_CORE"])).unwrap();
        assert_eq!(p.unit, Unit::Core);
        assert!(p.memory && p.lln && p.one_task_per_core && !p.pack_nodes);
        let p = Params::parse(&s(&["CR_Socket"])).unwrap();
        assert_eq!(p.unit, Unit::Socket);
        assert!(!p.memory);
        let p = Params::parse(&s(&["CR_CPU", "CR_CORE_DEFAULT_DIST_BLOCK"])).unwrap();
        assert_eq!(p.unit, Unit::Cpu);
        assert!(p.default_dist_block && !p.memory && !p.lln);
    }

    #[test]
    fn preemption_reorder_settings() {
        // cons_common.c:1099-1111: preempt_strict_order, and
        // preempt_reorder_count= (default 1; a negative one keeps it).
        let mut p = Params::parse(&[]).unwrap();
        p.apply_scheduler(&[], &[]).unwrap();
        assert_eq!(
            (p.preempt_reorder_count, p.preempt_strict_order),
            (1, false)
        );
        p.apply_scheduler(
            &s(&["bf_continue,preempt_reorder_count=3,preempt_strict_order"]),
            &[],
        )
        .unwrap();
        assert_eq!((p.preempt_reorder_count, p.preempt_strict_order), (3, true));
        p.apply_scheduler(&s(&["preempt_reorder_count=-2"]), &[])
            .unwrap();
        assert_eq!(p.preempt_reorder_count, 1);
        let e = p
            .apply_scheduler(&s(&["preempt_reorder_count=many"]), &[])
            .unwrap_err();
        assert_eq!(
            e,
            "SchedulerParameters: preempt_reorder_count=`many` is not a number"
        );
    }

    #[test]
    fn preempt_mode_sets_gang() {
        // slurm.conf(5): PreemptMode defaults to OFF; GANG may join another mode.
        let mut p = Params::parse(&[]).unwrap();
        p.apply_scheduler(&[], &[]).unwrap();
        assert!(!p.gang);
        p.apply_scheduler(&[], &s(&["SUSPEND,GANG"])).unwrap();
        assert!(p.gang);
        p.apply_scheduler(&[], &s(&["OFF"])).unwrap();
        assert!(!p.gang);
    }

    #[test]
    fn needs_a_unit() {
        // select_p_node_init (cons_common/cons_common.c): at least one of
        // CR_CPU/CR_Core/CR_Socket, fatal otherwise.
        assert!(Params::parse(&s(&["CR_Memory"]))
            .unwrap_err()
            .contains("CR_CPU"));
        assert!(Params::parse(&s(&["CR_Bogus"]))
            .unwrap_err()
            .contains("CR_Bogus"));
    }

    #[test]
    fn no_parameters_mean_cr_core_memory() {
        // cons_common.c:1087-1091 (select_p_node_init, 22.05): without
        // SelectTypeParameters, CR_Core_Memory.
        for none in [s(&[]), s(&[""]), s(&[" , "])] {
            let p = Params::parse(&none).unwrap();
            assert_eq!((p.unit, p.memory), (Unit::Core, true));
            assert!(!p.one_task_per_core && !p.lln && !p.pack_nodes && !p.default_dist_block);
        }
    }

    #[test]
    fn allocate_full_socket_is_a_deprecated_no_op() {
        // common/slurm_selecttype_info.c (22.05 parse_select_type_param):
        // accepted with a "deprecated" message, no bit set.
        assert_eq!(
            Params::parse(&s(&["CR_Socket_Memory,CR_ALLOCATE_FULL_SOCKET"])).unwrap(),
            Params::parse(&s(&["CR_Socket_Memory"])).unwrap()
        );
    }

    #[test]
    fn one_unit_and_no_one_task_per_core_with_cr_cpu() {
        // common/slurm_selecttype_info.c (22.05 parse_select_type_param):
        // more than one of CR_CPU/CR_Core/CR_Socket (any _Memory form) or
        // CR_Memory is an error (param_cnt > 1), so is CR_ONE_TASK_PER_CORE
        // with CR_CPU*.
        for two in [
            &["CR_Core", "CR_CPU"][..],
            &["CR_Core_Memory,CR_Socket"],
            &["CR_CPU", "CR_Memory"],
        ] {
            let e = Params::parse(&s(two)).unwrap_err();
            assert!(e.contains("expected only one of CR_CPU, CR_Core"), "{e}");
        }
        let e = Params::parse(&s(&["CR_CPU_Memory", "CR_ONE_TASK_PER_CORE"])).unwrap_err();
        assert!(e.contains("expected CR_Core or CR_Socket"), "{e}");
    }

    #[test]
    fn later_releases_tokens_are_unknown() {
        // 22.05's parse_select_type_param knows none of the GRES sharing
        // tokens later releases added: "Bad SelectTypeParameter".
        for later in [
            "CR_LL_SHARED_GRES",
            "MULTIPLE_SHARING_GRES_PJ",
            "ENFORCE_BINDING_GRES",
            "ONE_TASK_PER_SHARING_GRES",
        ] {
            let e = Params::parse(&s(&["CR_Core_Memory", later])).unwrap_err();
            assert!(e.contains("unknown token"), "{later}: {e}");
        }
    }
}
