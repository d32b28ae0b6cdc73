//! Every real trace in `../shared/traces` (or `$SLURM_WASM_TRACES`) reads,
//! with the job counts each one holds. The traces are public data that is
//! not copied into this repository: where the folder is absent each test
//! prints "skipped: <path> not present" and passes.
//!
//! Expected counts were taken independently of this reader: the SWF line
//! counts and hazard counts with a short Python script over the same files
//! (`float()` of each field, the replay rules of `hazards`), the sacct
//! record counts by reading the dumps by eye (a multi-line record counts
//! once, `.batch`/`.extern`/`.N` rows are steps).

use std::path::PathBuf;

use slurm_wasm_sim::hazards::ReplayOptions;
use slurm_wasm_sim::input::read_file;
use slurm_wasm_sim::workload::TraceStatus;
use slurm_wasm_sim::{sacct, swf};

fn traces() -> PathBuf {
    match std::env::var_os("SLURM_WASM_TRACES") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces"),
    }
}

/// The trace at `name`, or none (with the skip line printed) when absent.
fn trace(name: &str) -> Option<PathBuf> {
    let path = traces().join(name);
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} not present", path.display());
        None
    }
}

/// What a test checks of one SWF trace.
struct SwfCounts {
    /// Jobs in the file.
    raw: usize,
    /// Jobs replayed with the default hazard choices.
    kept: usize,
    notes: Vec<String>,
    nodes: Option<u32>,
    procs: Option<u32>,
}

fn swf_counts(name: &str) -> Option<SwfCounts> {
    let path = trace(name)?;
    let raw = swf::parse(&read_file(&path).unwrap(), name).unwrap();
    let workload = swf::read_path(&path, &ReplayOptions::default()).unwrap();
    assert!(workload
        .jobs
        .windows(2)
        .all(|w| (w[0].submit, w[0].id) < (w[1].submit, w[1].id)));
    Some(SwfCounts {
        raw: raw.jobs.len(),
        kept: workload.jobs.len(),
        notes: workload.notes,
        nodes: raw.max_nodes,
        procs: raw.max_procs,
    })
}

#[test]
fn hpc2n_subset() {
    let Some(SwfCounts {
        raw,
        kept,
        notes,
        nodes,
        procs,
    }) = swf_counts("HPC2N-2002-subset-alea-3170jobs.swf")
    else {
        return;
    };
    // 3,170 jobs (README); 25 have run time -1 or 0; 320 ran past their estimate.
    assert_eq!((raw, kept), (3170, 3145));
    assert_eq!((nodes, procs), (Some(240), Some(240)));
    assert!(
        notes.contains(
            &"25 jobs with run time <= 0 or unknown skipped (zero-run-time: skip)".to_owned()
        ),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("320 jobs ran longer than their estimate")),
        "{notes:?}"
    );
}

#[test]
fn unilu_gaia() {
    let Some(SwfCounts {
        raw,
        kept,
        notes,
        nodes,
        procs,
    }) = swf_counts("UniLu-Gaia-2014-1.swf")
    else {
        return;
    };
    // 51,987 jobs (README and the MaxJobs header); 128 with run time <= 0.
    assert_eq!((raw, kept), (51_987, 51_859));
    assert_eq!((nodes, procs), (Some(151), Some(2004)));
    assert!(
        notes.contains(
            &"128 jobs with run time <= 0 or unknown skipped (zero-run-time: skip)".to_owned()
        ),
        "{notes:?}"
    );
}

#[test]
fn cea_curie_gzip() {
    let Some(SwfCounts {
        raw,
        kept,
        notes,
        nodes,
        procs,
    }) = swf_counts("CEA-Curie-2011-2.1-cln.swf.gz")
    else {
        return;
    };
    // 312,826 jobs (README); 19 without processors, 14,715 cancelled before
    // starting, 2,552 more with run time <= 0; 84,585 give only allocated
    // processors.
    assert_eq!((raw, kept), (312_826, 295_540));
    assert_eq!((nodes, procs), (Some(5544), Some(93_312)));
    for expected in [
        "84585 jobs without requested processors use their allocated processors",
        "19 jobs without a processor count skipped",
        "14715 cancelled jobs that never started skipped (cancelled: skip-never-started)",
        "2552 jobs with run time <= 0 or unknown skipped (zero-run-time: skip)",
    ] {
        assert!(
            notes.contains(&expected.to_owned()),
            "{expected} not in {notes:?}"
        );
    }
}

fn sacct_jobs(name: &str) -> Option<(Vec<u32>, Vec<String>, usize)> {
    let path = trace(&format!("sacct/{name}"))?;
    let raw = sacct::parse(&read_file(&path).unwrap(), name).unwrap();
    let ids = raw.jobs.iter().map(|j| j.id).collect();
    Some((
        ids,
        raw.notes,
        raw.jobs.iter().filter(|j| j.started).count(),
    ))
}

#[test]
fn sacct_simple_with_pipes_in_job_names() {
    let Some((ids, notes, started)) = sacct_jobs("ubccr_sacct_simple.log") else {
        return;
    };
    assert_eq!(ids, vec![1, 2, 3, 4]);
    assert_eq!(started, 4);
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn sacct_dump_with_a_record_cut_short() {
    let Some((ids, notes, started)) = sacct_jobs("ubccr_sacct_dump2101.log") else {
        return;
    };
    // The six array tasks were cancelled while pending (`None assigned`).
    assert_eq!(started, 6);
    // Lines 2-15 are 14 records, two of them steps of 4822203; line 16 is a
    // record missing its first 33 columns.
    assert_eq!(
        ids,
        vec![
            4745200, 4801839, 4814432, 4810966, 4814635, 4814654, 4822203, 4830973, 4830974,
            4830975, 4830976, 4830977
        ]
    );
    assert_eq!(
        notes,
        vec![
            "ubccr_sacct_dump2101.log:16: last record ends with 74 of 107 fields (dump cut short); skipped".to_owned(),
            "2 job step rows skipped".to_owned()
        ]
    );
}

#[test]
fn sacct_dump_with_pipes_in_several_columns() {
    let Some((ids, notes, _)) = sacct_jobs("ubccr_sacct_dump2110.log") else {
        return;
    };
    // Seven records: job 7957382 five times (with `|` in SubmitLine, JobName
    // and Constraints in turn) and its two steps.
    assert_eq!(ids, vec![7957382; 5]);
    assert_eq!(notes, vec!["2 job step rows skipped".to_owned()]);
    // Wherever the stray `|`s are, the five copies read the same as the
    // clean row 2 reads by column: ReqCPUS 1, ReqMem 4000M, ElapsedRaw 56,
    // Timelimit 1-00:00:00, CANCELLED by 75200 after starting.
    let path = trace("sacct/ubccr_sacct_dump2110.log").unwrap();
    let raw = sacct::parse(&read_file(&path).unwrap(), "d").unwrap();
    for job in &raw.jobs {
        assert_eq!(job, &raw.jobs[0]);
    }
    let job = &raw.jobs[0];
    assert_eq!(
        (job.cpus, job.nodes, job.memory_mb_per_node),
        (Some(1), Some(1), Some(4000))
    );
    assert_eq!(
        (job.run_time, job.time_limit, job.user),
        (Some(56), Some(86_400), 75200)
    );
    assert_eq!((job.status, job.started), (TraceStatus::Cancelled, true));
    assert_eq!(job.partition.as_deref(), Some("partition001"));
}

#[test]
fn sacct_dump_with_multi_line_submit_line() {
    let Some((ids, notes, _)) = sacct_jobs("ubccr_sacct_submitline_multiline.log") else {
        return;
    };
    // 13 records (lines 8-12 are one: its SubmitLine is a shell script),
    // seven of them steps; job 7957382 appears five times.
    assert_eq!(
        ids,
        vec![7957382, 9067954, 7957382, 7957382, 7957382, 7957382]
    );
    assert_eq!(notes, vec!["7 job step rows skipped".to_owned()]);
    let path = trace("sacct/ubccr_sacct_submitline_multiline.log").unwrap();
    let workload = sacct::read_path(&path, &ReplayOptions::default()).unwrap();
    assert_eq!(
        workload.notes,
        vec![
            "7 job step rows skipped".to_owned(),
            "4 jobs repeat an earlier job number and were skipped".to_owned()
        ]
    );
    // Job 9067954 (the multi-line record): ReqCPUS 16, ReqTRES node=16,
    // ReqMem 16G per node, Elapsed 02:40:00, submitted 25,684,306 s after
    // job 7957382 (2022-07-29T17:57:58 minus 2021-10-05T11:26:12).
    let job = workload.jobs.iter().find(|j| j.id == 9067954).unwrap();
    assert_eq!(
        (job.cpus, job.nodes, job.memory_mb_per_node, job.run_time),
        (16, Some(16), Some(16_384), 9600)
    );
    assert_eq!(job.submit, 25_684_306);
}
