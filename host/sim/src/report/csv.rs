//! Per-job CSV: one row per job per policy, for analysis elsewhere.

use super::PolicyRun;

/// The CSV text, with a header line; times in seconds from the workload's
/// time zero, empty where the job never started. `nodes`, `cpus` and
/// `node_list` are what the job was given; after `rejected` come the
/// trace's user and group ids, partition, requested CPUs and nodes, time
/// estimate and run time (empty where the trace has none). Fields with a
/// comma, a quote or a line break are quoted (RFC 4180).
pub fn csv(runs: &[PolicyRun<'_>]) -> String {
    let mut out = String::from(
        "policy,job,submit,start,end,wait,nodes,cpus,node_list,backfilled,killed_at_limit,rejected,\
         user,group,partition,requested_cpus,requested_nodes,time_limit,trace_run_time\n",
    );
    let opt = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
    for run in runs {
        for o in run.outcomes {
            let cells = [
                quote(run.policy),
                o.id.to_string(),
                o.submit.to_string(),
                opt(o.start),
                opt(o.end),
                opt(o.start.map(|s| s - o.submit)),
                o.nodes.to_string(),
                o.cpus.to_string(),
                quote(&o.node_list),
                o.backfilled.to_string(),
                o.killed_at_limit.to_string(),
                quote(o.rejected.as_deref().unwrap_or("")),
                o.user.to_string(),
                o.group.to_string(),
                quote(o.partition.as_deref().unwrap_or("")),
                o.requested_cpus.to_string(),
                opt(o.requested_nodes.map(i64::from)),
                opt(o.time_limit),
                o.trace_run_time.to_string(),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
    }
    out
}

fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::outcome;

    #[test]
    fn rows_and_quoting() {
        let mut a = outcome(7, 10, Some(25), Some(40), 4);
        a.nodes = 2;
        a.node_list = "n[01-02],n05".into();
        a.backfilled = true;
        a.user = 1001;
        a.group = 100;
        a.partition = Some("batch".into());
        a.requested_cpus = 3;
        a.requested_nodes = Some(2);
        a.time_limit = Some(60);
        a.trace_run_time = 15;
        let mut b = outcome(8, 12, None, None, 1);
        b.rejected = Some("too big: needs \"8\" nodes".into());
        let jobs = [a, b];
        let text = csv(&[PolicyRun {
            policy: "a,b",
            outcomes: &jobs,
            agreement: None,
        }]);
        assert_eq!(
            text,
            "policy,job,submit,start,end,wait,nodes,cpus,node_list,backfilled,killed_at_limit,rejected,\
             user,group,partition,requested_cpus,requested_nodes,time_limit,trace_run_time\n\
             \"a,b\",7,10,25,40,15,2,4,\"n[01-02],n05\",true,false,,1001,100,batch,3,2,60,15\n\
             \"a,b\",8,12,,,,1,1,,false,false,\"too big: needs \"\"8\"\" nodes\",0,0,,1,,,0\n"
        );
    }
}
