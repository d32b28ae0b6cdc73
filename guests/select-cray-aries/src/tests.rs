//! The C plugin's bookkeeping, natively: each test names the function of
//! src/plugins/select/cray_aries/select_cray_aries.c (Slurm 22.05.8) it
//! follows and the case of docs/cray-aries.md §11 it checks.

use slurm_wasm_sdk::codes::SLURM_ERROR;
use slurm_wasm_sdk::Bitmap;

use crate::blades::{nid_of, npc_of, Blades, EXTERN_STEP, NPC_BLADE, NPC_NONE, NPC_SYS};
use crate::jobinfo::cleaning_in_progress;
use crate::plugin_id;

fn nids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("nid{i:05}")).collect()
}

fn blades_of(names: &[String]) -> Blades {
    let mut b = Blades::default();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    b.node_init(&names).unwrap();
    b
}

fn nodes(n: usize, set: &[usize]) -> Bitmap {
    Bitmap::from_bits(n, set.iter().copied())
}

/// `select_p_node_init`: the first digit run of the name, mod 4; blades
/// in order of first appearance (§11.1, §11.2).
#[test]
fn node_init_numbers_blades_by_first_appearance() {
    let b = blades_of(&nids(8));
    let ids: Vec<u64> = b.blades.iter().map(|x| x.id).collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    assert_eq!(b.blades[0].nodes, nodes(8, &[0, 4]));
    let names: Vec<String> = (1..=8).map(|i| format!("node{i}")).collect();
    let b = blades_of(&names);
    let ids: Vec<u64> = b.blades.iter().map(|x| x.id).collect();
    assert_eq!(ids, [1, 2, 3, 0]);
    assert_eq!(b.blades[3].nodes, nodes(8, &[3, 7]));
    assert_eq!(nid_of("c0-0c1s2n3"), Some(0));
    assert_eq!(nid_of("node7b3"), Some(7));
}

/// `select_p_node_init`: a name without digits is "Node was not
/// recognizable" (`SLURM_ERROR`); names whose first number is the same
/// share one blade (§11.3).
#[test]
fn a_node_without_a_number_is_refused() {
    let mut b = Blades::default();
    let e = b.node_init(&["nid1", "login"]).unwrap_err();
    assert_eq!(e.code, SLURM_ERROR);
    assert!(e.message.contains("Node was not recognizable: login"));
    let names: Vec<String> = (1..=4).map(|i| format!("rack1-n{i:02}")).collect();
    assert_eq!(blades_of(&names).count(), 1);
}

/// `select_p_job_test` (§4.2, §11.4–6): blade jobs avoid marked nodes, a
/// system job needs none marked, jobs without counters and TEST_ONLY are
/// never filtered.
#[test]
fn counter_jobs_avoid_marked_nodes() {
    let mut b = blades_of(&nids(8));
    b.begin(1, NPC_BLADE, &nodes(8, &[0]), 100);
    assert_eq!(b.running_npc, nodes(8, &[0, 4]));
    assert_eq!(b.blades[0].job_cnt, 1);
    let all = Bitmap::full(8);
    let mut c = all.clone();
    b.filter(NPC_NONE, false, &mut c);
    assert_eq!(c, all);
    let mut c = all.clone();
    b.filter(NPC_BLADE, false, &mut c);
    assert_eq!(c, nodes(8, &[1, 2, 3, 5, 6, 7]));
    let mut c = all.clone();
    b.filter(NPC_BLADE, true, &mut c);
    assert_eq!(c, all);
    let mut c = all.clone();
    b.filter(NPC_SYS, false, &mut c);
    assert!(!c.any());
}

/// `_set_job_running` / `_remove_job_from_blades` (§4.3, §4.4, §11.6,
/// §11.7): a system job marks every node and its end clears every mark;
/// a job is counted once per blade; a job without counters marks nothing.
#[test]
fn begin_and_fini_count_blades_and_marks() {
    let mut b = blades_of(&nids(8));
    b.begin(7, NPC_NONE, &nodes(8, &[0, 4]), 100);
    assert_eq!(b.blades[0].job_cnt, 1);
    assert!(!b.running_npc.any());
    assert_eq!(b.last_npc_update, 0);
    b.begin(8, NPC_SYS, &nodes(8, &[1]), 200);
    assert_eq!(b.running_npc, Bitmap::full(8));
    assert_eq!(b.last_npc_update, 200);
    b.begin(9, NPC_BLADE, &nodes(8, &[2]), 210);
    assert!(b.fini(8, NPC_SYS, 300).is_empty());
    assert!(!b.running_npc.any(), "a system job's end clears every mark");
    assert_eq!(b.blades[1].job_cnt, 0);
    assert!(b.fini(9, NPC_BLADE, 310).is_empty());
    assert!(
        b.fini(9, NPC_BLADE, 320).is_empty(),
        "a second fini changes nothing"
    );
    assert_eq!(b.blades[2].job_cnt, 0);
    assert!(b.fini(42, NPC_BLADE, 330).is_empty(), "a job never begun");
}

/// `select_p_select_jobinfo_set(SELECT_JOBDATA_NETWORK)` (§4.1, §11.11):
/// exact names; others leave the mode.
#[test]
fn network_strings_set_modes_exactly() {
    assert_eq!(npc_of("system"), Some(NPC_SYS));
    assert_eq!(npc_of("blade"), Some(NPC_BLADE));
    assert_eq!(npc_of("none"), Some(NPC_NONE));
    assert_eq!(npc_of(""), Some(NPC_NONE));
    assert_eq!(npc_of("Blade"), None);
    let mut b = Blades::default();
    assert_eq!(b.npc_for(1, Some("blade")), NPC_BLADE);
    assert_eq!(b.npc_for(1, Some("foo")), NPC_BLADE);
    assert_eq!(b.npc_for(1, None), NPC_BLADE);
    assert_eq!(b.npc_for(1, Some("")), NPC_NONE);
}

/// `select_p_select_jobinfo_get(SELECT_JOBDATA_CLEANING)` (§5, §11.13).
#[test]
fn cleaning_is_started_and_not_complete() {
    assert!(cleaning_in_progress(1));
    assert!(!cleaning_in_progress(3));
    assert!(!cleaning_in_progress(2));
    assert!(cleaning_in_progress(5));
}

/// `select_p_select_nodeinfo_set_all` (§4.6, §11.19).
#[test]
fn nodeinfo_refreshes_only_after_a_counter_event() {
    let mut b = blades_of(&nids(8));
    assert!(b.refresh_nodeinfo());
    assert!(b.refresh_nodeinfo(), "before any counter event, every call");
    b.begin(1, NPC_BLADE, &nodes(8, &[0]), 500);
    assert!(b.refresh_nodeinfo());
    assert!(!b.refresh_nodeinfo());
    b.fini(1, NPC_BLADE, 500);
    assert!(!b.refresh_nodeinfo(), "an event in the same second");
    b.begin(2, NPC_BLADE, &nodes(8, &[1]), 501);
    assert!(b.refresh_nodeinfo());
}

/// `select_p_state_save` (§7, §11.1): the blade state file's bytes, then
/// the jobs, then the inner plugin's state; `select_p_state_restore`
/// restores nothing of the blades, keeps the jobs for `select_p_job_init`,
/// refuses version `NO_VAL16` and survives a truncated blob (§11.16).
#[test]
fn state_saves_blades_and_restores_jobs_for_job_init() {
    let mut b = blades_of(&nids(8));
    b.begin(5, NPC_BLADE, &nodes(8, &[1, 5]), 10);
    let data = b.state_save(b"inner");
    assert_eq!(&data[..6], &[0x26, 0x00, 0, 0, 0, 4]);
    assert_eq!(
        &data[6..6 + 8 + 4 + 4 + 4 + 5],
        b"\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x08\0\0\0\x050x11\0"
    );
    let mut fresh = blades_of(&nids(8));
    let mut log = Vec::new();
    let inner = fresh.state_restore(&data, &mut log).unwrap();
    assert_eq!(inner, Some(&b"inner"[..]));
    assert!(log.is_empty(), "{log:?}");
    assert_eq!(fresh.blades[1].job_cnt, 0, "restore counts nothing");
    fresh.job_init([(5, NPC_BLADE, true, None)], 20);
    assert_eq!(fresh.blades[1].job_cnt, 1);
    assert_eq!(fresh.running_npc, nodes(8, &[1, 5]));
    assert_eq!(
        fresh.state_restore(&data, &mut log).unwrap(),
        None,
        "second call"
    );

    let mut bad = blades_of(&nids(8));
    let e = bad.state_restore(&[0xff, 0xfe], &mut log).unwrap_err();
    assert_eq!(e.code, 14);
    let mut cut = blades_of(&nids(8));
    let mut log = Vec::new();
    assert_eq!(cut.state_restore(&data[..20], &mut log).unwrap(), None);
    assert!(
        log.iter().any(|l| l.contains("Incomplete blade data")),
        "{log:?}"
    );
}

/// `select_p_step_start`, `select_p_step_pick_nodes` and
/// `_remove_step_from_blades` (§4.5, §11.18): a `blade` job on nid[0-3];
/// step 1 on nid0 claims blade 0, so the next step may use nid1-3 only;
/// once step 1 ends the job's four nodes are available again (the map
/// stays allocated: an answer, not "no restriction"). The extern step
/// claims nothing; a job without counters is never restricted.
#[test]
fn counter_steps_keep_the_next_steps_off_their_blades() {
    let mut b = blades_of(&nids(8));
    let job = nodes(8, &[0, 1, 2, 3]);
    b.begin(7, NPC_BLADE, &job, 10);
    assert_eq!(b.step_avail(7, &job), None, "no counter step yet");
    b.step_start(7, NPC_BLADE, EXTERN_STEP, &nodes(8, &[0, 1, 2, 3]));
    assert_eq!(
        b.step_avail(7, &job),
        None,
        "the extern step claims nothing"
    );
    b.step_start(7, NPC_BLADE, 1, &nodes(8, &[0]));
    assert_eq!(b.jobs[&7].used_blades, Some(0b1));
    assert_eq!(b.step_avail(7, &job), Some(nodes(8, &[1, 2, 3])));
    b.step_start(7, NPC_BLADE, 2, &nodes(8, &[1, 2]));
    assert_eq!(b.step_avail(7, &job), Some(nodes(8, &[3])));
    b.step_finish(7, 1);
    assert_eq!(b.step_avail(7, &job), Some(nodes(8, &[0, 3])));
    b.step_finish(7, 2);
    assert_eq!(b.jobs[&7].used_blades, Some(0));
    assert_eq!(b.step_avail(7, &job), Some(job.clone()));

    b.begin(8, NPC_NONE, &nodes(8, &[4, 5]), 10);
    b.step_start(8, NPC_NONE, 1, &nodes(8, &[4]));
    assert_eq!(b.step_avail(8, &nodes(8, &[4, 5])), None);
    b.fini(7, NPC_BLADE, 20);
    assert!(b.steps.is_empty(), "a job's steps go with its fini");
}

/// The steps' blades are saved with the job (C packs `used_blades` in the
/// job's jobinfo and `blade_map` in each step's) and restrict the job's
/// steps again after `select_p_job_init`.
#[test]
fn counter_steps_survive_a_restart() {
    let mut b = blades_of(&nids(8));
    let job = nodes(8, &[0, 1]);
    b.begin(7, NPC_BLADE, &job, 10);
    b.step_start(7, NPC_BLADE, 3, &nodes(8, &[1]));
    let data = b.state_save(&[]);
    let mut fresh = blades_of(&nids(8));
    fresh.state_restore(&data, &mut Vec::new()).unwrap();
    fresh.job_init([(7, NPC_BLADE, true, Some(job.clone()))], 20);
    assert_eq!(fresh.step_avail(7, &job), Some(nodes(8, &[0])));
    fresh.step_finish(7, 3);
    assert_eq!(fresh.step_avail(7, &job), Some(job));
}

/// `select_p_job_init` (§7, §11.17): first call only; suspended jobs are
/// not counted; without a saved record, the blades of the job's nodes.
#[test]
fn job_init_counts_running_jobs_once() {
    let mut b = blades_of(&nids(8));
    b.job_init(
        [
            (1, NPC_BLADE, true, Some(nodes(8, &[1]))),
            (2, NPC_BLADE, false, Some(nodes(8, &[2]))),
        ],
        30,
    );
    assert_eq!(b.running_npc, nodes(8, &[1, 5]));
    assert_eq!(b.blades[2].job_cnt, 0);
    b.job_init([(3, NPC_BLADE, true, Some(nodes(8, &[3])))], 40);
    assert_eq!(b.blades[3].job_cnt, 0, "later calls change nothing");
}

/// `select_p_node_init` called again (reconfigure, §11.24): blades, counts
/// and marks kept; a new node joins its blade and the maps grow.
#[test]
fn a_second_node_init_keeps_blades_and_grows() {
    let mut b = blades_of(&nids(8));
    b.begin(1, NPC_BLADE, &nodes(8, &[0]), 1);
    let names = nids(9);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    b.node_init(&names).unwrap();
    assert_eq!(b.blades[0].nodes, nodes(9, &[0, 4, 8]));
    assert_eq!(b.blades[0].job_cnt, 1);
    assert_eq!(b.running_npc, nodes(9, &[0, 4]));
}

/// `init` / `other_select_init`: the plugin id by the other-plugin bits.
#[test]
fn plugin_id_follows_the_inner_plugin() {
    use slurm_wasm_sdk::types::SelectTypeParams as P;
    assert_eq!(plugin_id(P::empty()), 107);
    assert_eq!(plugin_id(P::OTHER_CONS_TRES), 110);
    assert_eq!(plugin_id(P::OTHER_CONS_RES | P::OTHER_CONS_TRES), 108);
}

/// `cray_nodelist2nids` (src/common/slurm_protocol_defs.c, 18.08): the
/// node numbers the node health program gets, consecutive ones as ranges.
#[test]
fn node_numbers_are_given_as_ranges() {
    let b = blades_of(&nids(8));
    assert_eq!(b.nid_ranges(&nodes(8, &[0, 1, 2, 5, 7])), "0-2,5,7");
    assert_eq!(b.nid_ranges(&nodes(8, &[3])), "3");
}

/// 18.08's `select_p_state_save`/`select_p_job_init`: a job saved while
/// cleaning keeps its blades counted after a restart, though the
/// controller no longer lists it.
#[test]
fn a_job_saved_while_cleaning_keeps_its_blades() {
    let mut b = blades_of(&nids(8));
    b.begin(4, NPC_BLADE, &nodes(8, &[2]), 10);
    b.cleaning.insert(
        4,
        crate::blades::Cleaning {
            user_id: 1000,
            nodes: "2".into(),
        },
    );
    let data = b.state_save(&[]);
    let mut after = blades_of(&nids(8));
    after.state_restore(&data, &mut Vec::new()).unwrap();
    after.job_init([], 20);
    assert_eq!(after.blades[2].job_cnt, 1);
    assert_eq!(after.running_npc, nodes(8, &[2, 6]));
    assert_eq!(after.cleaning[&4].nodes, "2");
}
