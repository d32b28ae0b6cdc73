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
//!   blade maps) around the inner plugin's.
//!
//! Every other function is the inner plugin's, as in C (`other_*`).
//! Slurm 22.05 has no node health check (removed in 19.05): `job_ready`
//! is the inner plugin's and nothing sets the cleaning word but
//! `jobinfo.set`. Steps: the contract has no `step-start`, where C
//! records a counter step's blades (`used_blades`), so `step-pick-nodes`
//! never restricts a step (as in C for a job none of whose steps used
//! counters) and `step-finish` only forwards.

pub mod blades;
mod hexmap;
pub mod jobinfo;

use slurm_wasm_sdk::codes::{EINVAL, SLURM_NO_CHANGE_IN_DATA};
use slurm_wasm_sdk::host::{log, now, Level};
use slurm_wasm_sdk::types::{Job, JobState, Node, SelectTypeParams};
use slurm_wasm_sdk::{Bitmap, Error};
use slurm_wasm_select_wrapper::{
    job_network, Inner, JobTestMode, JobTestRequest, JobTestResult, SelectConfig, Wrapper,
};

use crate::blades::Blades;

/// The plugin: its blades and jobs ([`Blades`]).
#[derive(Debug, Default)]
pub struct CrayAries {
    /// The blade map, marks and jobs.
    pub blades: Blades,
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
        let npc = self.npc(&request.job);
        if npc == blades::NPC_NONE || request.mode == JobTestMode::TestOnly {
            return Inner::job_test(request);
        }
        let mut candidates = bitmap(&request.candidates)?;
        self.blades.filter(npc, false, &mut candidates);
        Inner::job_test(JobTestRequest {
            candidates: slurm_wasm_sdk::types::Bitmap {
                len: request.candidates.len,
                words: candidates.to_words(),
            },
            ..request
        })
    }

    /// `select_p_job_begin`: the job's blades counted and, for a counter
    /// job, marked; then the inner plugin's answer (cray's work stands
    /// even when the inner plugin fails, as in C).
    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        let npc = self.npc(job);
        if let Some(resources) = &job.resources {
            let nodes = bitmap(&resources.nodes)?;
            self.blades.begin(job.job_id, npc, &nodes, now());
        }
        Inner::job_begin(job)
    }

    /// `select_p_job_fini`: the inner plugin's (its error ignored, as C
    /// ignores its rc), then the job's blades uncounted and unmarked;
    /// always succeeds.
    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        if let Err(e) = Inner::job_fini(job) {
            log(Level::Debug, &format!("inner job_fini: {}", e.message));
        }
        let npc = self.npc(job);
        for line in self.blades.fini(job.job_id, npc, now()) {
            log(Level::Error, &line);
        }
        self.blades.forget(job.job_id);
        Ok(())
    }

    /// `select_p_select_nodeinfo_set_all`: the inner plugin refreshes
    /// only when a counter job began or ended since its last refresh;
    /// otherwise `SLURM_NO_CHANGE_IN_DATA` without asking it.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
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
