//! The table `sprio -l` prints (22.05 src/sprio/print.c): one row per job
//! with its priority and the weighted factors behind it.

use slurm_wasm_host::kinds::priority::PriorityFactors;

use super::{left, right};

/// `sprio -l` of `rows`, header included; `user_of` names a uid (the
/// uid itself where the site knows no name).
pub fn table(rows: &[PriorityFactors], user_of: impl Fn(u32) -> String) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
        right("JOBID", 15),
        left("PARTITION", 9),
        right("USER", 8),
        right("ACCOUNT", 8),
        right("PRIORITY", 10),
        right("SITE", 10),
        right("AGE", 10),
        right("ASSOC", 10),
        right("FAIRSHARE", 10),
        right("JOBSIZE", 10),
        right("PARTITION", 10),
        right("QOSNAME", 10),
        right("QOS", 10),
        right("NICE", 11),
        right("TRES", 20)
    ));
    out.push('\n');
    for r in rows {
        out.push_str(&format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            right(&r.job_id.to_string(), 15),
            left(&r.partition, 9),
            right(&user_of(r.user_id), 8),
            right(r.account.as_deref().unwrap_or(""), 8),
            right(&r.priority.to_string(), 10),
            right(&r.site.to_string(), 10),
            right(&format!("{:.0}", r.age), 10),
            right(&format!("{:.0}", r.association), 10),
            right(&format!("{:.0}", r.fair_share), 10),
            right(&format!("{:.0}", r.job_size), 10),
            right(&format!("{:.0}", r.partition_factor), 10),
            right(r.qos.as_deref().unwrap_or(""), 10),
            right(&format!("{:.0}", r.qos_factor), 10),
            right(&r.nice.to_string(), 11),
            right(&tres_text(&r.tres), 20)
        ));
        out.push('\n');
    }
    out
}

/// sprio's weighted TRES column: `name=value` for each TRES whose factor
/// is not exactly 0 (src/sprio/print.c's `_print_tres_weighted` skips those;
/// a factor that only rounds to 0 prints as `name=0`).
fn tres_text(tres: &[(String, f64)]) -> String {
    tres.iter()
        .filter(|(_, v)| *v != 0.0)
        .map(|(name, v)| format!("{name}={v:.0}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tres_factors_of_exactly_zero_are_left_out() {
        // Recorded sprio -l (tests/fixtures/anchor/priority/sample1): a
        // factor rounding to 0 prints (`mem=0`), one that is 0 does not
        // (job 86's `gres/gpu` is cut by the column, not absent).
        let tres = |list: &[(&str, f64)]| {
            list.iter()
                .map(|(n, v)| ((*n).to_string(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            tres_text(&tres(&[("cpu", 3.2), ("mem", 0.3), ("gres/gpu", 0.0)])),
            "cpu=3,mem=0"
        );
        assert_eq!(tres_text(&tres(&[("cpu", 0.0)])), "");
    }
}
