//! What select/cray_aries adds to its inner plugin, as plain Rust (no
//! calls to the host, so it is tested natively): the blade map, the nodes
//! marked as running network performance counters (NPC), each job's
//! blades, and the state blob. Follows Slurm 22.05.8's
//! `src/plugins/select/cray_aries/select_cray_aries.c` as built without
//! `HAVE_NATIVE_CRAY` (no ALPS: a node's blade is its number mod 4);
//! docs/cray-aries.md is the specification, section by section.

use std::collections::BTreeMap;

use slurm_wasm_sdk::codes::{EINVAL, NO_VAL16, SLURM_ERROR};
use slurm_wasm_sdk::pack::{Packer, Unpacker};
use slurm_wasm_sdk::protocol::SLURM_22_05;
use slurm_wasm_sdk::{Bitmap, Error};

use crate::hexmap;

/// `NPC_NONE`: the job uses no network performance counters.
pub const NPC_NONE: u8 = 0;
/// `NPC_SYS`: `--network=system`, counters on the whole system.
pub const NPC_SYS: u8 = 1;
/// `NPC_BLADE`: `--network=blade`, counters on the job's blades.
pub const NPC_BLADE: u8 = 2;

/// `EFAULT`: a blade state of an incompatible version.
const EFAULT: i32 = 14;

/// The counter mode a `--network` string sets
/// (`select_p_select_jobinfo_set`, `SELECT_JOBDATA_NETWORK`): empty or
/// `none` clear it, `system` and `blade` set it (compared exactly);
/// anything else leaves it as it was (`None` here).
pub fn npc_of(network: &str) -> Option<u8> {
    match network {
        "" | "none" => Some(NPC_NONE),
        "system" => Some(NPC_SYS),
        "blade" => Some(NPC_BLADE),
        _ => None,
    }
}

/// The name `select_p_select_jobinfo_get(SELECT_JOBDATA_NETWORK)` gives a
/// counter mode.
pub fn npc_name(npc: u8) -> &'static str {
    match npc {
        NPC_NONE => "none",
        NPC_SYS => "system",
        NPC_BLADE => "blade",
        _ => "unknown",
    }
}

/// The node number select/cray_aries reads from a node name
/// (`select_p_node_init`): the first run of digits, as `atoll` reads it,
/// truncated to 32 bits; none when the name has no digit.
pub fn nid_of(name: &str) -> Option<u32> {
    let start = name.find(|c: char| c.is_ascii_digit())?;
    let digits = name[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .fold(0u64, |n, c| {
            n.wrapping_mul(10)
                .wrapping_add(u64::from(c.to_digit(10).unwrap_or(0)))
        });
    Some(digits as u32)
}

/// One blade (`blade_info_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blade {
    /// `x << 32 | y << 16 | z`; in emulation the node number mod 4 (z).
    pub id: u64,
    /// Running jobs with a node on the blade.
    pub job_cnt: u32,
    /// The blade's nodes.
    pub nodes: Bitmap,
}

/// What select/cray_aries keeps of a job (its `select_jobinfo` in C): the
/// counter mode, the blades it was started on (`blade_map`, one bit per
/// blade index) and those its running counter steps use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobBlades {
    /// `npc`.
    pub npc: u8,
    /// `blade_map`, bit `b` for blade index `b` (at most 4 blades in
    /// emulation, so a word holds them).
    pub blade_map: u64,
    /// `used_blades`: none until a counter step of the job started (C
    /// allocates the map then, and from then on restricts the job's
    /// steps, even once every such step ended).
    pub used_blades: Option<u64>,
}

/// The Slurm id of a job's extern step (`SLURM_EXTERN_CONT`), which
/// claims no blades.
pub const EXTERN_STEP: u32 = 0xffff_fffc;

/// A job whose node health check was running when its state was saved
/// (`cleaning` started, not complete): what restarts the check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cleaning {
    /// The job's user (`-u`).
    pub user_id: u32,
    /// The job's nodes as the program takes them ([`Blades::nid_ranges`]).
    pub nodes: String,
}

/// The plugin's own state.
#[derive(Debug, Default)]
pub struct Blades {
    /// `blade_array`, in order of first appearance.
    pub blades: Vec<Blade>,
    /// The blade index of each node (`nodeinfo.blade_id`).
    node_blade: Vec<usize>,
    /// The number of each node (`nodeinfo.nid`).
    nids: Vec<u32>,
    /// Jobs whose node health check runs, by job id: saved with the
    /// state, restarted at `job_init` (18.08's `select_p_job_init`).
    pub cleaning: BTreeMap<u32, Cleaning>,
    /// `blade_nodes_running_npc`.
    pub running_npc: Bitmap,
    /// `last_npc_update`: when a counter job last began or ended.
    pub last_npc_update: i64,
    /// `last_set_all` of `select_p_select_nodeinfo_set_all`.
    last_set_all: i64,
    /// The jobs begun and not yet ended, and the counter modes the
    /// controller gave jobs, by job id.
    pub jobs: BTreeMap<u32, JobBlades>,
    /// The counter mode each job last set (`npc` of its jobinfo).
    npc: BTreeMap<u32, u8>,
    /// The blades of each running counter step (its step jobinfo's
    /// `blade_map`), by job and step id.
    pub steps: BTreeMap<(u32, u32), u64>,
    /// `job_init` already ran: later calls only forward.
    job_init_done: bool,
    /// `state_restore` already ran: later calls do nothing.
    restore_done: bool,
}

impl Blades {
    /// `select_p_node_init` (§3): each node's number from its name, its
    /// blade the number mod 4, blades numbered in order of first
    /// appearance. A later call (reconfigure) keeps the blades, their job
    /// counts and marks, and adds the nodes (C writes past its maps when
    /// the table grew; they grow here). A name without a digit is
    /// `SLURM_ERROR` ("Node was not recognizable"), which slurmctld treats
    /// as fatal.
    pub fn node_init(&mut self, names: &[&str]) -> Result<(), Error> {
        let n = names.len();
        if self.running_npc.len() < n {
            let mut grown = Bitmap::new(n);
            grown.or_at(0, &self.running_npc);
            self.running_npc = grown;
            for blade in &mut self.blades {
                let mut nodes = Bitmap::new(n);
                nodes.or_at(0, &blade.nodes);
                blade.nodes = nodes;
            }
        }
        self.node_blade.resize(n, 0);
        self.nids.resize(n, 0);
        for (i, name) in names.iter().enumerate() {
            let nid = nid_of(name).ok_or_else(|| {
                Error::new(SLURM_ERROR, format!("Node was not recognizable: {name}"))
            })?;
            let id = u64::from(nid % 4);
            let index = match self.blades.iter().position(|b| b.id == id) {
                Some(index) => index,
                None => {
                    self.blades.push(Blade {
                        id,
                        job_cnt: 0,
                        nodes: Bitmap::new(n),
                    });
                    self.blades.len() - 1
                }
            };
            self.blades[index].nodes.set(i);
            self.node_blade[i] = index;
            self.nids[i] = nid;
        }
        Ok(())
    }

    /// The node numbers of `nodes` as ranges (`1-3,7`, Slurm's `bit_fmt`
    /// over the numbers), as `cray_nodelist2nids`
    /// (src/common/slurm_protocol_defs.c) gave them to the node health
    /// program.
    pub fn nid_ranges(&self, nodes: &Bitmap) -> String {
        let nids: Vec<usize> = nodes
            .ones()
            .filter_map(|i| self.nids.get(i).map(|&nid| nid as usize))
            .collect();
        let len = nids.iter().max().map_or(0, |&max| max + 1);
        Bitmap::from_bits(len, nids).to_ranges()
    }

    /// The counter mode of job `job_id` after the controller's `network`
    /// for it: a string that sets no mode keeps the last one, and so does
    /// no string (a job without `--network` never had a mode; a job the
    /// controller has not told of since a restart keeps the mode its saved
    /// state had).
    pub fn npc_for(&mut self, job_id: u32, network: Option<&str>) -> u8 {
        if let Some(npc) = network.and_then(npc_of) {
            self.npc.insert(job_id, npc);
        }
        self.npc.get(&job_id).copied().unwrap_or(NPC_NONE)
    }

    /// Whether `select_p_job_test` filters a job's candidates (§4.2): a
    /// counter job in any mode but TEST_ONLY.
    pub fn filters(npc: u8, test_only: bool) -> bool {
        npc != NPC_NONE && !test_only
    }

    /// `select_p_job_test` before it forwards (§4.2): when it
    /// [`filters`](Self::filters), a counter job loses the nodes marked as
    /// running counters; a `system` job loses every node while any is
    /// marked.
    pub fn filter(&self, npc: u8, test_only: bool, candidates: &mut Bitmap) {
        if !Self::filters(npc, test_only) {
            return;
        }
        if npc == NPC_SYS {
            if self.running_npc.any() {
                *candidates = Bitmap::new(candidates.len());
            }
        } else if self.running_npc.len() == candidates.len() {
            candidates.and_not(&self.running_npc);
        } else {
            let len = candidates.len();
            for node in self.running_npc.ones().filter(|&n| n < len) {
                candidates.clear(node);
            }
        }
    }

    /// `_set_job_running` (§4.3, from `select_p_job_begin` and, for jobs
    /// running at a restart, `select_p_job_init`): each blade of the job's
    /// nodes counted once, and its nodes marked for a counter job (every
    /// node for `system`); `now` becomes the last counter event.
    pub fn begin(&mut self, job_id: u32, npc: u8, nodes: &Bitmap, now: i64) {
        let job = JobBlades {
            npc,
            blade_map: self.blades_of(nodes),
            used_blades: None,
        };
        self.count_job(job_id, job, now);
    }

    /// The blade indices of `nodes`, one bit each.
    fn blades_of(&self, nodes: &Bitmap) -> u64 {
        nodes
            .ones()
            .filter_map(|node| self.node_blade.get(node))
            .fold(0u64, |map, &b| map | (1 << b))
    }

    /// Counts `job` on each blade of its `blade_map` (marking them for a
    /// counter job) and keeps it: a job that begins, or one counted again
    /// from its saved record at job_init (its steps' `used_blades` kept).
    fn count_job(&mut self, job_id: u32, job: JobBlades, now: i64) {
        for b in (0..self.blades.len()).filter(|b| job.blade_map & (1 << b) != 0) {
            self.count_in(b, job.npc);
        }
        if job.npc != NPC_NONE {
            self.last_npc_update = now;
        }
        self.jobs.insert(job_id, job);
    }

    /// `select_p_step_start` (§4.5): a step of a counter job (`npc` is the
    /// job's mode now), other than the extern step, claims the blades of
    /// its nodes: they become its `blade_map` and are added to the job's
    /// `used_blades`. Other steps change nothing, and so does a job that
    /// has not begun.
    pub fn step_start(&mut self, job_id: u32, npc: u8, step_id: u32, nodes: &Bitmap) {
        if npc == NPC_NONE || step_id == EXTERN_STEP {
            return;
        }
        let map = self.blades_of(nodes);
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        job.used_blades = Some(job.used_blades.unwrap_or(0) | map);
        *self.steps.entry((job_id, step_id)).or_default() |= map;
    }

    /// `select_p_step_pick_nodes` (§4.5): once a counter step of the job
    /// started, its next steps may use only the job's nodes (`job_nodes`)
    /// outside the blades its running counter steps use; before that, no
    /// restriction (none).
    pub fn step_avail(&self, job_id: u32, job_nodes: &Bitmap) -> Option<Bitmap> {
        let used = self.jobs.get(&job_id)?.used_blades?;
        let mut avail = job_nodes.clone();
        let len = avail.len();
        for blade in (0..self.blades.len()).filter(|b| used & (1 << b) != 0) {
            for node in self.blades[blade].nodes.ones().filter(|&n| n < len) {
                avail.clear(node);
            }
        }
        Some(avail)
    }

    /// `_remove_step_from_blades` (§4.5, `select_p_step_finish` after the
    /// inner plugin's): the step's blades leave the job's `used_blades`
    /// (a blade another running step also uses included, as in C). A step
    /// that claimed none changes nothing.
    pub fn step_finish(&mut self, job_id: u32, step_id: u32) {
        let Some(map) = self.steps.remove(&(job_id, step_id)) else {
            return;
        };
        if let Some(used) = self
            .jobs
            .get_mut(&job_id)
            .and_then(|job| job.used_blades.as_mut())
        {
            *used &= !map;
        }
    }

    fn count_in(&mut self, b: usize, npc: u8) {
        self.blades[b].job_cnt += 1;
        if npc == NPC_SYS {
            let all = Bitmap::full(self.running_npc.len());
            self.running_npc = all;
        } else if npc != NPC_NONE {
            let nodes = self.blades[b].nodes.clone();
            self.running_npc.or(&nodes);
        }
    }

    /// `_remove_job_from_blades` (§4.4, `select_p_job_fini` after the inner
    /// plugin's): each blade of the job uncounted (an underflow is logged,
    /// the count stays 0) and its marks cleared (all of them for a
    /// `system` job); the counter mode is the job's now (`scontrol update
    /// network=` may have changed it since it began). A job never begun
    /// changes nothing. Returns the underflow messages to log.
    ///
    /// C keeps the job's `blade_map` after its fini, so a second fini
    /// uncounts its blades again; here a job is forgotten at its fini, and
    /// a second fini changes nothing.
    pub fn fini(&mut self, job_id: u32, npc: u8, now: i64) -> Vec<String> {
        let mut underflows = Vec::new();
        let Some(job) = self.jobs.remove(&job_id) else {
            return underflows;
        };
        self.steps.retain(|&(job, _), _| job != job_id);
        for b in (0..self.blades.len()).filter(|b| job.blade_map & (1 << b) != 0) {
            match self.blades[b].job_cnt.checked_sub(1) {
                Some(left) => self.blades[b].job_cnt = left,
                None => underflows.push(format!("blade {b} job_cnt underflow")),
            }
            if npc == NPC_SYS {
                self.running_npc = Bitmap::new(self.running_npc.len());
            } else if npc != NPC_NONE {
                let nodes = self.blades[b].nodes.clone();
                self.running_npc.and_not(&nodes);
            }
        }
        if npc != NPC_NONE {
            self.last_npc_update = now;
        }
        underflows
    }

    /// Forgets what the controller said of a job's network once it ended.
    pub fn forget(&mut self, job_id: u32) {
        self.npc.remove(&job_id);
    }

    /// `select_p_job_init` (§7), first call only: each running job (base
    /// state RUNNING; suspended jobs are not counted, as in C) and each
    /// job saved while cleaning counted on its saved blades, or, without a
    /// saved record, on the blades of its nodes. Later calls change
    /// nothing. `jobs` is `(id, npc, running, nodes)`.
    pub fn job_init(
        &mut self,
        jobs: impl IntoIterator<Item = (u32, u8, bool, Option<Bitmap>)>,
        now: i64,
    ) {
        if std::mem::replace(&mut self.job_init_done, true) {
            return;
        }
        let saved = std::mem::take(&mut self.jobs);
        for (job_id, npc, running, nodes) in jobs {
            if !running {
                continue;
            }
            match (saved.get(&job_id), nodes) {
                (Some(&job), _) => self.count_job(job_id, JobBlades { npc, ..job }, now),
                (None, Some(nodes)) => self.begin(job_id, npc, &nodes, now),
                (None, None) => {}
            }
        }
        // A job still cleaning is no longer in the controller's list: its
        // saved blades are counted again until its check ends.
        let cleaning: Vec<u32> = self.cleaning.keys().copied().collect();
        for job_id in cleaning {
            if let Some(&job) = saved.get(&job_id) {
                self.count_job(job_id, job, now);
            }
        }
        // The steps of the jobs counted again keep their blades.
        let jobs = &self.jobs;
        self.steps.retain(|(job, _), _| jobs.contains_key(job));
    }

    /// `select_p_select_nodeinfo_set_all` (§4.6): whether the inner
    /// plugin is asked to refresh; C answers `SLURM_NO_CHANGE_IN_DATA`
    /// without asking it when no counter job began or ended since the last
    /// refresh (before the first counter event, every call refreshes).
    pub fn refresh_nodeinfo(&mut self) -> bool {
        if self.last_set_all != 0 && self.last_npc_update <= self.last_set_all {
            return false;
        }
        self.last_set_all = self.last_npc_update;
        true
    }

    /// `select_p_state_save` (§7): the blade state file's bytes
    /// (`blade_state`: protocol version, blade count, each blade's id, job
    /// count and nodes), then, as the contract has one blob where C also
    /// had the job state file, each begun job's id, counter mode, blades
    /// and `used_blades` (its packed jobinfo in C), each running counter
    /// step's job, id and blades (its step's packed jobinfo), the jobs
    /// still cleaning (their user and nodes: C's jobinfo `cleaning` word,
    /// with the job record), then the inner plugin's state.
    pub fn state_save(&self, inner: &[u8]) -> Vec<u8> {
        let mut p = Packer::new();
        p.u16(SLURM_22_05).u32(self.blades.len() as u32);
        for blade in &self.blades {
            p.u64(blade.id).u32(blade.job_cnt);
            hexmap::pack(&mut p, Some(&blade.nodes));
        }
        p.u32(self.jobs.len() as u32);
        for (&job_id, job) in &self.jobs {
            p.u32(job_id).u8(job.npc);
            hexmap::pack(&mut p, Some(&self.blade_bits(job.blade_map)));
            let used = job.used_blades.map(|used| self.blade_bits(used));
            hexmap::pack(&mut p, used.as_ref());
        }
        p.u32(self.steps.len() as u32);
        for (&(job_id, step_id), &map) in &self.steps {
            p.u32(job_id).u32(step_id);
            hexmap::pack(&mut p, Some(&self.blade_bits(map)));
        }
        p.u32(self.cleaning.len() as u32);
        for (&job_id, cleaning) in &self.cleaning {
            p.u32(job_id)
                .u32(cleaning.user_id)
                .str(Some(&cleaning.nodes));
        }
        p.bytes(inner);
        p.finish()
    }

    fn blade_bits(&self, blade_map: u64) -> Bitmap {
        Bitmap::from_bits(
            self.blades.len(),
            (0..self.blades.len()).filter(|b| blade_map & (1 << b) != 0),
        )
    }

    /// `select_p_state_restore` (§7), first call only: the blade records
    /// are checked against the blades `node_init` built (differences are
    /// logged; C restores nothing from them), the jobs' records kept for
    /// `job_init`, and the inner plugin's state returned for it to
    /// restore. `Ok(None)`: nothing for the inner plugin (no state, a
    /// later call, or a truncated blob, which C logs and survives).
    /// A blob of version `NO_VAL16` is `EFAULT`; an unknown version
    /// `EINVAL`. Log lines go to `log`.
    pub fn state_restore<'a>(
        &mut self,
        data: &'a [u8],
        log: &mut Vec<String>,
    ) -> Result<Option<&'a [u8]>, Error> {
        if std::mem::replace(&mut self.restore_done, true) {
            return Ok(None);
        }
        if data.is_empty() {
            log.push("No blade state file to recover".into());
            return Ok(None);
        }
        let mut u = Unpacker::new(data, "select/cray_aries state");
        let version = u.u16("protocol version")?;
        if version == NO_VAL16 {
            return Err(Error::new(
                EFAULT,
                "Can not recover blade state, data version incompatible",
            ));
        }
        slurm_wasm_sdk::protocol::check(version, "select/cray_aries state")?;
        match self.read_state(&mut u, log) {
            Ok(inner) => Ok(Some(inner)),
            Err(e) => {
                log.push(format!("Problem unpacking blade info: {}", e.message));
                log.push("Incomplete blade data checkpoint file".into());
                Ok(None)
            }
        }
    }

    fn read_state<'a>(
        &mut self,
        u: &mut Unpacker<'a>,
        log: &mut Vec<String>,
    ) -> Result<&'a [u8], Error> {
        let count = u.u32("blade count")?;
        if count as usize != self.blades.len() {
            log.push(format!(
                "For some reason we have a different blade_cnt than we did before, this may \
                 cause issue.  Got {count} expecting {}.",
                self.blades.len()
            ));
        }
        for i in 0..count as usize {
            let id = u.u64("blade id")?;
            let _job_cnt = u.u32("blade job count")?;
            let nodes = hexmap::unpack(u, "blade nodes")?;
            let Some(nodes) = nodes else {
                log.push(format!(
                    "Blade {id} doesn't have any nodes from the state file!"
                ));
                continue;
            };
            match self.blades.get(i) {
                Some(blade) if blade.id == id => {
                    if blade.nodes != nodes {
                        log.push(format!("Blade {id} has changed it's nodes"));
                    }
                }
                _ => {
                    let at = self
                        .blades
                        .iter()
                        .position(|b| b.id == id)
                        .unwrap_or(self.blades.len());
                    log.push(format!(
                        "Blade {id} is no longer at location {i}, but at {at}"
                    ));
                }
            }
        }
        let jobs = u.u32("job count")?;
        for _ in 0..jobs {
            let job_id = u.u32("job id")?;
            let npc = u.u8("job network counters")?;
            let blade_map = word(hexmap::unpack(u, "job blades")?);
            let used_blades = hexmap::unpack(u, "job used blades")?.map(|m| word(Some(m)));
            self.npc.insert(job_id, npc);
            self.jobs.insert(
                job_id,
                JobBlades {
                    npc,
                    blade_map,
                    used_blades,
                },
            );
        }
        let steps = u.u32("step count")?;
        for _ in 0..steps {
            let job_id = u.u32("step job id")?;
            let step_id = u.u32("step id")?;
            let map = word(hexmap::unpack(u, "step blades")?);
            self.steps.insert((job_id, step_id), map);
        }
        let cleaning = u.u32("cleaning job count")?;
        for _ in 0..cleaning {
            let job_id = u.u32("cleaning job id")?;
            let user_id = u.u32("cleaning job user")?;
            let nodes = u.str("cleaning job nodes")?.unwrap_or_default();
            self.cleaning.insert(job_id, Cleaning { user_id, nodes });
        }
        let inner = u.bytes("inner plugin state")?;
        if u.remaining() != 0 {
            return Err(Error::new(EINVAL, "bytes after the inner plugin's state"));
        }
        Ok(inner)
    }

    /// The number of blades (`blade_cnt`).
    pub fn count(&self) -> usize {
        self.blades.len()
    }
}

/// A blade map as a word (bit `b` for blade index `b`); none is empty.
fn word(map: Option<Bitmap>) -> u64 {
    map.map_or(0, |m| {
        m.ones()
            .filter(|&b| b < 64)
            .fold(0u64, |acc, b| acc | (1 << b))
    })
}
