//! One policy's simulated schedule in the formats other tools read: the
//! Standard Workload Format (the Parallel Workloads Archive's, version 2.2)
//! and Batsim's jobs file (`_jobs.csv`, which evalys loads for its Gantt
//! charts and metrics).
//!
//! Times are seconds from the workload's time zero, as everywhere in the
//! simulator.

use std::collections::BTreeMap;
use std::fmt::Write;

use slurm::hostlist;
use slurm_wasm_host::ranges;

use super::{Context, PolicyRun};

/// The schedule as an SWF file: a header naming the policy, the workload
/// and the cluster's CPUs, the partitions numbered from 1 (`; Partition:
/// <n> <name>`), then one line of the 18 fields per job in workload order.
/// A job that ran has its wait, its run time and the CPUs it was given,
/// status 1 (completed) or 0 (killed at its time limit, which SWF counts as
/// failed); one that never started has -1 there and status 5 (cancelled).
/// Fields the simulator does not model (CPU time and memory used,
/// executable, queue, dependencies) are -1.
pub fn swf(context: &Context<'_>, run: &PolicyRun<'_>) -> String {
    let partitions: BTreeMap<&str, usize> = {
        let mut names: Vec<&str> = run
            .outcomes
            .iter()
            .filter_map(|o| o.partition.as_deref())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n, i + 1))
            .collect()
    };
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "; Version: 2.2");
    let _ = writeln!(out, "; Computer: slurm-wasm simulate");
    let _ = writeln!(
        out,
        "; Note: the schedule {} gave {}; times are seconds from the workload's start",
        run.policy, context.workload
    );
    let _ = writeln!(out, "; MaxJobs: {}", run.outcomes.len());
    let _ = writeln!(out, "; MaxRecords: {}", run.outcomes.len());
    let _ = writeln!(out, "; MaxProcs: {}", context.cluster_cpus);
    for (name, number) in &partitions {
        let _ = writeln!(out, "; Partition: {number} {name}");
    }
    for o in run.outcomes {
        let (wait, time, procs, status) = match (o.start, o.end) {
            (Some(start), Some(end)) => (
                start - o.submit,
                end - start,
                i64::from(o.cpus),
                if o.killed_at_limit { 0 } else { 1 },
            ),
            _ => (-1, -1, -1, 5),
        };
        let partition = o
            .partition
            .as_deref()
            .and_then(|p| partitions.get(p))
            .map_or(-1, |&n| n as i64);
        let _ = writeln!(
            out,
            "{} {} {wait} {time} {procs} -1 -1 {} {} -1 {status} {} {} -1 -1 {partition} -1 -1",
            o.id,
            o.submit,
            o.requested_cpus,
            o.time_limit.unwrap_or(-1),
            o.user,
            o.group,
        );
    }
    out
}

/// The schedule as Batsim's jobs file, with a header line. Batsim's
/// resources are machines: here the cluster's nodes, numbered in
/// `node_names` order, so `allocated_resources` is an interval set of node
/// indices (`0-3 7`) and `requested_number_of_resources` the nodes the job
/// was given. `stretch` is turnaround over execution time, as Batsim
/// writes it. A job killed at its time limit is `success` 0 and
/// `COMPLETED_WALLTIME_REACHED`; jobs that never started are left out
/// (they have no allocation to draw). Energy is not modelled (-1).
///
/// # Errors
///
/// A node of a job's allocation that is not in `node_names`, as text.
pub fn batsim_jobs(run: &PolicyRun<'_>, node_names: &[String]) -> Result<String, String> {
    let index: BTreeMap<&str, u32> = node_names
        .iter()
        .zip(0u32..)
        .map(|(n, i)| (n.as_str(), i))
        .collect();
    let mut out = String::from(
        "job_id,workload_name,profile,submission_time,requested_number_of_resources,\
         requested_time,success,final_state,starting_time,execution_time,finish_time,\
         waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n",
    );
    for o in run.outcomes {
        let (Some(start), Some(end)) = (o.start, o.end) else {
            continue;
        };
        let names = hostlist::expand(&o.node_list)
            .map_err(|e| format!("job {}: node list `{}`: {e}", o.id, o.node_list))?;
        let mut nodes = names
            .iter()
            .map(|n| {
                index
                    .get(n.as_str())
                    .copied()
                    .ok_or_else(|| format!("job {}: node {n} is not in the cluster", o.id))
            })
            .collect::<Result<Vec<u32>, String>>()?;
        nodes.sort_unstable();
        let execution = end - start;
        let turnaround = end - o.submit;
        let stretch = if execution > 0 {
            turnaround as f64 / execution as f64
        } else {
            1.0
        };
        let (success, state) = if o.killed_at_limit {
            (0, "COMPLETED_WALLTIME_REACHED")
        } else {
            (1, "COMPLETED_SUCCESSFULLY")
        };
        let _ = writeln!(
            out,
            "{},w0,delay,{},{},{},{success},{state},{start},{execution},{end},{},{turnaround},{stretch},{},-1,",
            o.id,
            o.submit,
            nodes.len(),
            o.time_limit.unwrap_or(-1),
            start - o.submit,
            interval_set(&nodes),
        );
    }
    Ok(out)
}

/// Sorted indices as Batsim's interval set: `0-3 7 9-10` (Slurm's ranges,
/// `slurm_wasm_host::ranges`, with spaces between them).
fn interval_set(sorted: &[u32]) -> String {
    ranges::format(sorted.iter().copied()).replace(',', " ")
}

/// A file name part for a policy: `select/linear,priority/basic` gives
/// `select-linear+priority-basic`; other characters outside letters,
/// digits, `.`, `-` and `_` become `_`.
pub fn slug(policy: &str) -> String {
    policy
        .chars()
        .map(|c| match c {
            '/' => '-',
            ',' => '+',
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') => c,
            _ => '_',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::outcome;
    use crate::metrics::Measure;

    fn context() -> Context<'static> {
        Context {
            workload: "t.swf",
            cluster_cpus: 4,
            notes: &[],
            measure: Measure::default(),
        }
    }

    fn jobs() -> Vec<crate::outcome::JobOutcome> {
        let mut a = outcome(7, 10, Some(25), Some(40), 4);
        a.nodes = 2;
        a.node_list = "n[1-2]".into();
        a.requested_cpus = 3;
        a.time_limit = Some(60);
        a.user = 1001;
        a.group = 100;
        a.partition = Some("big".into());
        let mut b = outcome(8, 12, Some(40), Some(100), 1);
        b.node_list = "n4".into();
        b.killed_at_limit = true;
        b.partition = Some("hw".into());
        let c = outcome(9, 20, None, None, 8);
        vec![a, b, c]
    }

    #[test]
    fn swf_lines_carry_the_schedule_and_the_request() {
        let outcomes = jobs();
        let text = swf(
            &context(),
            &PolicyRun {
                policy: "select/linear,priority/basic",
                outcomes: &outcomes,
                agreement: None,
            },
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"; MaxProcs: 4"), "{text}");
        assert!(lines.contains(&"; Partition: 1 big"), "{text}");
        assert!(lines.contains(&"; Partition: 2 hw"), "{text}");
        let jobs: Vec<&str> = lines
            .iter()
            .filter(|l| !l.starts_with(';'))
            .copied()
            .collect();
        assert_eq!(
            jobs,
            [
                "7 10 15 15 4 -1 -1 3 60 -1 1 1001 100 -1 -1 1 -1 -1",
                "8 12 28 60 1 -1 -1 1 -1 -1 0 0 0 -1 -1 2 -1 -1",
                "9 20 -1 -1 -1 -1 -1 8 -1 -1 5 0 0 -1 -1 -1 -1 -1",
            ]
        );
        // Each job line has SWF's 18 fields.
        assert!(jobs.iter().all(|l| l.split(' ').count() == 18));
    }

    #[test]
    fn batsim_jobs_number_nodes_and_leave_out_jobs_that_never_ran() {
        let outcomes = jobs();
        let nodes: Vec<String> = ["n1", "n2", "n3", "n4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let run = PolicyRun {
            policy: "p",
            outcomes: &outcomes,
            agreement: None,
        };
        let text = batsim_jobs(&run, &nodes).unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            rows,
            [
                "7,w0,delay,10,2,60,1,COMPLETED_SUCCESSFULLY,25,15,40,15,30,2,0-1,-1,",
                "8,w0,delay,12,1,-1,0,COMPLETED_WALLTIME_REACHED,40,60,100,28,88,1.4666666666666666,3,-1,",
            ]
        );
        let unknown = vec!["n1".to_string()];
        assert!(batsim_jobs(&run, &unknown)
            .unwrap_err()
            .contains("node n2 is not in the cluster"));
    }

    #[test]
    fn interval_sets_and_slugs() {
        assert_eq!(interval_set(&[0, 1, 2, 3, 7, 9, 10]), "0-3 7 9-10");
        assert_eq!(interval_set(&[]), "");
        assert_eq!(
            slug("select/linear,priority/basic"),
            "select-linear+priority-basic"
        );
        assert_eq!(slug("select=my plugin.wasm"), "select_my_plugin.wasm");
    }
}
