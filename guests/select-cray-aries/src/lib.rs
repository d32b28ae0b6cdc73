//! `select/cray_aries`: Slurm's Cray/Aries select plugin
//! (src/plugins/select/cray_aries/select_cray_aries.c, Slurm 22.05.8) as
//! built without `HAVE_NATIVE_CRAY` (no ALPS, no aeld, no CCM), written as
//! a select wrapper over the inner plugin the host wires: select/linear,
//! or select/cons_tres with `SelectTypeParameters=OTHER_CONS_TRES`, as
//! `other_select_init` chooses (src/plugins/select/other/other_select.c).
//! docs/cray-aries.md specifies it section by section.
//!
//! What it adds to the inner plugin:
//!
//! * [`blades`]: the blade map (`select_p_node_init`: a node's blade is
//!   the first number in its name mod 4), the nodes marked as running
//!   network performance counters, job counts per blade, the state blob;
//! * network performance counter jobs (`--network=system|blade`, read
//!   from the controller through the world's `job-network` import): in
//!   `select_p_job_test` a counter job may not use marked nodes (a
//!   `system` job needs no node marked), `select_p_job_begin` marks its
//!   blades (every node for `system`), `select_p_job_fini` clears them;
//! * `select_p_select_nodeinfo_set_all` refreshes the inner plugin's
//!   nodeinfo only after a counter job began or ended;
//! * [`jobinfo`]: its own `select_jobinfo` (counter mode, cleaning word,
//!   blade maps) around the inner plugin's;
//! * the node health check of Slurm 18.08's select/cray, the last release
//!   that had it (docs/cray-aries-nhc.md): when the administrator gave the
//!   plugin a program (the world's `node-health` import, denied by
//!   default), `job_fini` starts it on the job's nodes and defers the
//!   inner plugin's `job_fini` and the blade release until it ended (the
//!   job is *cleaning*: its nodes stay allocated), and `step_finish`
//!   does the same for a step (the extern step excepted). Without a
//!   program, `job_fini` and `step_finish` are 22.05's (no check).
//!
//! Every other function is the inner plugin's, as in C (`other_*`).
//! Checks are polled at the start of every call that reads or changes
//! allocations (`job_test`, `job_begin`, `job_ready`, `job_fini`,
//! `step_start`, `step_avail_nodes`, `step_finish`, `nodeinfo_set_all`,
//! `state_save`): a check that ended finishes its job then. While a job
//! is cleaning, `job_ready` answers false and `job_test` refuses it
//! (`ESLURM_NODES_BUSY`): slurmctld 18.08 kept a cleaning job pending
//! itself (`_job_runnable_test1`, `WAIT_CLEANING`), which a controller
//! cannot see through this contract.
//! A check's failure is logged and changes nothing else, as in C (no
//! drain).
//!
//! Steps (the world's `select-steps`): `select_p_step_start` records the
//! blades of a counter job's step in the job's `used_blades`, and from
//! then on `select_p_step_pick_nodes` keeps the job's next steps off the
//! blades its running counter steps use (what the inner plugin allows,
//! narrowed further); `select_p_step_finish` gives the step's blades back
//! (after its node health check, when one runs).

pub mod blades;
mod hexmap;
pub mod jobinfo;

use std::collections::BTreeMap;

use slurm_wasm_sdk::codes::{EINVAL, ESLURM_NODES_BUSY, SLURM_NO_CHANGE_IN_DATA};
use slurm_wasm_sdk::host::{log, now, Level};
use slurm_wasm_sdk::types::{Job, JobState, Node, SelectTypeParams, Step};
use slurm_wasm_sdk::{Bitmap, Error};
use slurm_wasm_select_wrapper::{
    job_network, node_health_poll, node_health_start, HealthCheck, HealthError, Inner, JobTestMode,
    JobTestRequest, JobTestResult, SelectConfig, Wrapper,
};

use crate::blades::{Blades, Cleaning, EXTERN_STEP};

/// The plugin: its blades and jobs ([`Blades`]), and the node health
/// checks running.
#[derive(Default)]
pub struct CrayAries {
    /// The blade map, marks and jobs.
    pub blades: Blades,
    /// Jobs whose check runs: the check and the job, whose inner
    /// `job_fini` waits for it (none for a job restored after a restart,
    /// which the inner plugin no longer holds).
    checks: BTreeMap<u32, (u64, Option<Job>)>,
    /// Steps whose check runs, by job and step id.
    step_checks: BTreeMap<(u32, u32), (u64, Step)>,
    /// Each begun job's nodes as the program takes them.
    job_nodes: BTreeMap<u32, String>,
    /// Each started step's nodes as the program takes them, by job and
    /// step id (18.08 checked a step's own nodes, `step_layout`).
    step_nodes: BTreeMap<(u32, u32), String>,
}

/// `plugin_id` after `init` (`SELECT_PLUGIN_CRAY_*` of select.h): 108
/// over cons_res, 110 over cons_tres, 107 over linear.
pub fn plugin_id(params: SelectTypeParams) -> u32 {
    if params.contains(SelectTypeParams::OTHER_CONS_RES) {
        108
    } else if params.contains(SelectTypeParams::OTHER_CONS_TRES) {
        110
    } else {
        107
    }
}

impl CrayAries {
    fn npc(&mut self, job: &Job) -> u8 {
        let network = job_network(job.job_id);
        self.blades.npc_for(job.job_id, network.as_deref())
    }

    /// Starts the administrator's check: its id, or none when no program
    /// is configured or it could not start (logged as C's fork error).
    fn start_check(check: &HealthCheck) -> Option<u64> {
        match node_health_start(check) {
            Ok(id) => Some(id),
            Err(HealthError::Denied) => None,
            Err(HealthError::Failed(e)) => {
                log(Level::Error, &format!("_run_nhc fork error: {e}"));
                None
            }
        }
    }

    /// Whether check `id` ended; a failed poll counts as ended (logged).
    fn ended(id: u64, what: &str) -> bool {
        let status = match node_health_poll(id) {
            Ok(None) => return false,
            Ok(Some(status)) => status,
            Err(e) => {
                log(
                    Level::Error,
                    &format!("{what}: node health check {id}: {e:?}"),
                );
                return true;
            }
        };
        if status != 0 {
            log(
                Level::Error,
                &format!("_run_nhc {what} exit status {status}"),
            );
        }
        true
    }

    /// Finishes the jobs and steps whose check ended (18.08's `_job_fini`
    /// and `_step_fini` after `_run_nhc`): the inner plugin's `job_fini`
    /// or `step_finish`, then the job's blades released.
    fn reap(&mut self) {
        let ended: Vec<u32> = self
            .checks
            .iter()
            .filter(|(job_id, (id, _))| Self::ended(*id, &format!("jobid {job_id} and apid 0")))
            .map(|(&job_id, _)| job_id)
            .collect();
        for job_id in ended {
            let Some((_, job)) = self.checks.remove(&job_id) else {
                continue;
            };
            if let Some(job) = job {
                if let Err(e) = Inner::job_fini(&job) {
                    log(Level::Debug, &format!("inner job_fini: {}", e.message));
                }
            }
            self.release(job_id);
        }
        let ended: Vec<(u32, u32)> = self
            .step_checks
            .iter()
            .filter(|((job, step), (id, _))| {
                let apid = (u64::from(*step) << 32) + u64::from(*job);
                Self::ended(*id, &format!("jobid {job} and apid {apid}"))
            })
            .map(|(&key, _)| key)
            .collect();
        for key in ended {
            if let Some((_, step)) = self.step_checks.remove(&key) {
                self.finish_step(&step, false);
            }
        }
    }

    /// The inner plugin's `step_finish` (its error ignored, as C ignores
    /// its rc), then the step's blades given back.
    fn finish_step(&mut self, step: &Step, killing: bool) {
        if let Err(e) = Inner::step_finish(step, killing) {
            log(Level::Debug, &format!("inner step_finish: {}", e.message));
        }
        self.blades.step_finish(step.job_id, step.step_id);
        self.step_nodes.remove(&(step.job_id, step.step_id));
    }

    /// `_remove_job_from_blades` for an ended job, with its counter mode
    /// as last known.
    fn release(&mut self, job_id: u32) {
        let npc = self.blades.npc_for(job_id, None);
        for line in self.blades.fini(job_id, npc, now()) {
            log(Level::Error, &line);
        }
        self.blades.forget(job_id);
        self.blades.cleaning.remove(&job_id);
        self.job_nodes.remove(&job_id);
        self.step_nodes.retain(|&(job, _), _| job != job_id);
    }
}

fn bitmap(map: &slurm_wasm_sdk::types::Bitmap) -> Result<Bitmap, Error> {
    Bitmap::from_words(map.len, &map.words)
        .map_err(|e| Error::invalid(format!("select/cray_aries: {e}")))
}

impl Wrapper for CrayAries {
    const TYPE: &'static str = "select/cray_aries";
    const NAME: &'static str = "Cray/Aries node selection plugin";

    /// `init`: refuses what `select_g_init` refuses of a cray plugin over
    /// linear (`select_running_linear_based`: `CR_CPU`, `CR_Core` or
    /// `CR_Socket` without `OTHER_CONS_RES`/`OTHER_CONS_TRES`).
    fn init(config: &SelectConfig) -> Result<Self, Error> {
        let params = config.cluster.select_type_parameters;
        let per_cpu = SelectTypeParams::CPU | SelectTypeParams::CORE | SelectTypeParams::SOCKET;
        if plugin_id(params) == 107 && params.intersects(per_cpu) {
            return Err(Error::new(
                EINVAL,
                "select/cray_aries over select/linear: SelectTypeParameters can't contain \
                 CR_(CPU|CORE|SOCKET)",
            ));
        }
        log(Level::Info, &format!("{} loaded", Self::NAME));
        Ok(CrayAries::default())
    }

    /// `select_p_state_save`: cray's blade state and jobs, then the inner
    /// plugin's state ([`Blades::state_save`]).
    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        self.reap();
        let inner = Inner::state_save()?;
        Ok(self.blades.state_save(&inner))
    }

    /// `select_p_state_restore`: checks the blades, keeps the jobs for
    /// `job_init`, and has the inner plugin restore its part; C's
    /// "nothing to recover" and truncated-file paths succeed without
    /// asking the inner plugin.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        let mut lines = Vec::new();
        let inner = self.blades.state_restore(data, &mut lines);
        for line in &lines {
            log(Level::Error, line);
        }
        match inner? {
            Some(inner) => Inner::state_restore(inner),
            None => Ok(()),
        }
    }

    /// `select_p_job_init`: running jobs counted on their blades (first
    /// call only), then the inner plugin's.
    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        let mut init = Vec::with_capacity(jobs.len());
        for job in jobs {
            let npc = self.npc(job);
            let nodes = job
                .resources
                .as_ref()
                .map(|r| bitmap(&r.nodes))
                .transpose()?;
            init.push((job.job_id, npc, job.state == JobState::Running, nodes));
        }
        self.blades.job_init(init, now());
        // 18.08's `select_p_job_init`: a job saved while cleaning runs its
        // check again.
        let restored: Vec<(u32, Cleaning)> = self
            .blades
            .cleaning
            .iter()
            .filter(|(job_id, _)| !self.checks.contains_key(job_id))
            .map(|(&job_id, c)| (job_id, c.clone()))
            .collect();
        for (job_id, cleaning) in restored {
            let check = HealthCheck {
                job_id,
                step_id: None,
                user_id: cleaning.user_id,
                apid: 0,
                exit_code: 1,
                nodes: cleaning.nodes.clone(),
            };
            match Self::start_check(&check) {
                Some(id) => {
                    self.checks.insert(job_id, (id, None));
                }
                None => self.release(job_id),
            }
        }
        Inner::job_init(jobs)
    }

    /// `select_p_node_init`: the blade map, then the inner plugin's.
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        if let Err(e) = self.blades.node_init(&names) {
            log(Level::Error, &e.message);
            return Err(e);
        }
        for (i, node) in nodes.iter().enumerate() {
            log(
                Level::Debug,
                &format!(
                    "got {}({}) blade {}",
                    node.name,
                    blades::nid_of(&node.name).unwrap_or(0),
                    self.blades
                        .blades
                        .iter()
                        .position(|b| b.nodes.get(i))
                        .unwrap_or(0)
                ),
            );
        }
        Inner::node_init(nodes)
    }

    /// `select_p_job_test`: a counter job loses the marked nodes (all of
    /// them for `system` while any is marked) unless the mode is
    /// TEST_ONLY; the inner plugin answers on what is left.
    fn job_test(&mut self, request: JobTestRequest) -> Result<JobTestResult, Error> {
        self.reap();
        if self.checks.contains_key(&request.job.job_id) {
            return Err(Error::new(
                ESLURM_NODES_BUSY,
                format!(
                    "job {}: Cleaning (its node health check still runs)",
                    request.job.job_id
                ),
            ));
        }
        let npc = self.npc(&request.job);
        let test_only = request.mode == JobTestMode::TestOnly;
        if !Blades::filters(npc, test_only) {
            return Inner::job_test(request);
        }
        let mut candidates = bitmap(&request.candidates)?;
        self.blades.filter(npc, test_only, &mut candidates);
        Inner::job_test(JobTestRequest {
            candidates: candidates.into(),
            ..request
        })
    }

    /// `select_p_job_begin`: the job's blades counted and, for a counter
    /// job, marked; then the inner plugin's answer (cray's work stands
    /// even when the inner plugin fails, as in C).
    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        self.reap();
        let npc = self.npc(job);
        if let Some(resources) = &job.resources {
            let nodes = bitmap(&resources.nodes)?;
            self.blades.begin(job.job_id, npc, &nodes, now());
            self.job_nodes
                .insert(job.job_id, self.blades.nid_ranges(&nodes));
        }
        Inner::job_begin(job)
    }

    /// `select_p_job_ready`: the inner plugin's answer, false while the
    /// job is cleaning.
    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        self.reap();
        if self.checks.contains_key(&job.job_id) {
            return Ok(false);
        }
        Inner::job_ready(job)
    }

    /// `select_p_job_fini`. With a node health program (18.08): the check
    /// starts on the job's nodes (`-a 0 -e 1`) and the job is cleaning;
    /// the inner plugin's `job_fini` and the blade release wait for the
    /// check's end. A job already cleaning is left alone ("Cleaning flag
    /// already set", logged). Without one (22.05): the inner plugin's
    /// (its error ignored, as C ignores its rc), then the job's blades
    /// uncounted and unmarked. Always succeeds.
    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        self.reap();
        if self.checks.contains_key(&job.job_id) {
            log(
                Level::Error,
                &format!(
                    "select_p_job_fini: Cleaning flag already set for JobId={}, this should never happen",
                    job.job_id
                ),
            );
            return Ok(());
        }
        self.npc(job);
        let nodes = match &job.resources {
            Some(resources) => Some(bitmap(&resources.nodes)?),
            None => None,
        };
        if let Some(nodes) = nodes.filter(Bitmap::any) {
            let check = HealthCheck {
                job_id: job.job_id,
                step_id: None,
                user_id: job.user_id,
                apid: 0,
                exit_code: 1,
                nodes: self.blades.nid_ranges(&nodes),
            };
            if let Some(id) = Self::start_check(&check) {
                self.blades.cleaning.insert(
                    job.job_id,
                    Cleaning {
                        user_id: job.user_id,
                        nodes: check.nodes,
                    },
                );
                self.checks.insert(job.job_id, (id, Some(job.clone())));
                return Ok(());
            }
        }
        if let Err(e) = Inner::job_fini(job) {
            log(Level::Debug, &format!("inner job_fini: {}", e.message));
        }
        self.release(job.job_id);
        Ok(())
    }

    /// `select_p_step_start`: a counter job's step claims its nodes'
    /// blades ([`Blades::step_start`]); then the inner plugin's.
    fn step_start(
        &mut self,
        job: &Job,
        step_id: u32,
        nodes: &slurm_wasm_sdk::types::Bitmap,
    ) -> Result<(), Error> {
        self.reap();
        let npc = self.npc(job);
        let map = bitmap(nodes)?;
        self.blades.step_start(job.job_id, npc, step_id, &map);
        if step_id != EXTERN_STEP {
            self.step_nodes
                .insert((job.job_id, step_id), self.blades.nid_ranges(&map));
        }
        Inner::step_start(job, step_id, nodes)
    }

    /// `select_p_step_pick_nodes`'s `avail_nodes`: once a counter step of
    /// the job started, the job's nodes off its running counter steps'
    /// blades ([`Blades::step_avail`]), within what the inner plugin
    /// allows (C sets them, then asks `other_step_pick_nodes`).
    fn step_avail_nodes(
        &mut self,
        job: &Job,
    ) -> Result<Option<slurm_wasm_sdk::types::Bitmap>, Error> {
        self.reap();
        let own = match &job.resources {
            Some(resources) => self
                .blades
                .step_avail(job.job_id, &bitmap(&resources.nodes)?),
            None => None,
        };
        let inner = Inner::step_avail_nodes(job)?;
        let avail = match (own, inner) {
            (Some(mut own), Some(inner)) => {
                own.and(&bitmap(&inner)?);
                Some(own)
            }
            (Some(own), None) => Some(own),
            (None, inner) => return Ok(inner),
        };
        Ok(avail.map(Into::into))
    }

    /// `select_p_step_finish`. With a node health program (18.08): the
    /// check starts on the step's nodes (the job's when the step's start
    /// was not seen; `-a (step << 32) + job`, `-e 9` for a killed step,
    /// else 0: the contract's step carries no exit code) and the inner
    /// plugin's `step_finish` and the return of the step's blades wait
    /// for its end; the extern step gets none. Without one (22.05): the
    /// inner plugin's, then the step's blades given back.
    fn step_finish(&mut self, step: &Step, killing: bool) -> Result<(), Error> {
        self.reap();
        if step.step_id != EXTERN_STEP {
            let nodes = self
                .step_nodes
                .get(&(step.job_id, step.step_id))
                .or_else(|| self.job_nodes.get(&step.job_id))
                .cloned()
                .or_else(|| blades::nid_of(&step.node_name).map(|n| n.to_string()))
                .unwrap_or_default();
            let check = HealthCheck {
                job_id: step.job_id,
                step_id: Some(step.step_id),
                user_id: step.user_id,
                apid: (u64::from(step.step_id) << 32) + u64::from(step.job_id),
                exit_code: if killing { 9 } else { 0 },
                nodes,
            };
            if let Some(id) = Self::start_check(&check) {
                self.step_checks
                    .insert((step.job_id, step.step_id), (id, step.clone()));
                return Ok(());
            }
        }
        self.finish_step(step, killing);
        Ok(())
    }

    /// `select_p_ba_get_dims`: none, as select/cray answered (18.08, the
    /// last release that had the function; it did not ask the inner
    /// plugin).
    fn ba_get_dims(&mut self) -> Option<Vec<u32>> {
        None
    }

    /// `select_p_select_nodeinfo_set_all`: the inner plugin refreshes
    /// only when a counter job began or ended since its last refresh;
    /// otherwise `SLURM_NO_CHANGE_IN_DATA` without asking it.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        self.reap();
        if self.blades.refresh_nodeinfo() {
            return Inner::nodeinfo_set_all();
        }
        Err(Error::new(
            SLURM_NO_CHANGE_IN_DATA,
            format!(
                "select/cray_aries: node data hasn't changed since {}",
                self.blades.last_npc_update
            ),
        ))
    }
}

slurm_wasm_select_wrapper::export_select_wrapper!(CrayAries, jobinfo = crate::jobinfo::CrayJobinfo);

#[cfg(test)]
mod tests;
