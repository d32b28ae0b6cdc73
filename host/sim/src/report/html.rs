//! The self-contained HTML report: the experiment, the replay notes, the
//! metrics table and three plots (inline SVG, one line per policy): the
//! distribution of wait times, utilization over time and queue length over
//! time. Nothing is loaded from elsewhere: the file can be mailed or
//! archived as is.

use std::fmt::Write;

use super::plots::{self, Line, XAxis, MAX_POINTS};
use super::{duration, Context, PolicyRun};
use crate::metrics;

/// The report page.
///
/// # Errors
///
/// A plot that could not be drawn, as text.
pub fn html(context: &Context<'_>, runs: &[PolicyRun<'_>]) -> Result<String, String> {
    let mut page = String::new();
    let title = format!("slurm-wasm simulation: {}", context.workload);
    // Writing to a String cannot fail.
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 2em; max-width: 960px; }}\n\
         table {{ border-collapse: collapse; }}\n\
         th, td {{ border: 1px solid #bbb; padding: 4px 8px; text-align: right; }}\n\
         th:first-child, td:first-child {{ text-align: left; }}\n\
         figure {{ margin: 1.5em 0; }}\n\
         </style>\n</head>\n<body>\n<h1>{}</h1>\n<p>Workload <code>{}</code> on {} CPUs; {} policies.</p>\n",
        escape(&title),
        escape(&title),
        escape(context.workload),
        context.cluster_cpus,
        runs.len()
    );
    if !context.notes.is_empty() {
        page.push_str("<h2>Replay notes</h2>\n<ul>\n");
        for note in context.notes {
            let _ = writeln!(page, "<li>{}</li>", escape(note));
        }
        page.push_str("</ul>\n");
    }
    page.push_str(&metrics_table(context, runs));
    page.push_str(
        "<p>Bounded slowdown: max(1, (wait + run) / max(run, 10 s)). Utilization: \
         sum(run x CPUs) / (cluster CPUs x (last end - first submit)).</p>\n<h2>Plots</h2>\n",
    );
    for svg in plots_of(context, runs)? {
        let _ = writeln!(page, "<figure>\n{svg}\n</figure>");
    }
    page.push_str("</body>\n</html>\n");
    Ok(page)
}

fn metrics_table(context: &Context<'_>, runs: &[PolicyRun<'_>]) -> String {
    let mut out = String::from(
        "<h2>Metrics</h2>\n<table>\n<tr><th>policy</th><th>jobs</th><th>ran</th><th>mean wait</th>\
         <th>median wait</th><th>mean bounded slowdown</th><th>utilization</th><th>makespan</th>\
         <th>backfilled</th><th>killed at limit</th></tr>\n",
    );
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    for m in super::all_metrics(runs, context.cluster_cpus, &context.measure) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&m.policy),
            m.jobs,
            m.completed,
            dash(m.mean_wait.map(duration)),
            dash(m.median_wait.map(duration)),
            dash(m.mean_bounded_slowdown.map(|s| format!("{s:.2}"))),
            dash(m.utilization.map(|u| format!("{:.1}%", u * 100.0))),
            dash(m.makespan.map(|s| duration(s as f64))),
            m.backfilled,
            m.killed_at_limit
        );
    }
    out.push_str("</table>\n");
    out
}

fn plots_of(context: &Context<'_>, runs: &[PolicyRun<'_>]) -> Result<Vec<String>, String> {
    let waits: Vec<Line> = runs
        .iter()
        .map(|r| Line {
            label: r.policy.to_owned(),
            points: plots::cdf(
                &r.outcomes
                    .iter()
                    .filter_map(|o| Some(o.start? - o.submit))
                    .collect::<Vec<_>>(),
            ),
        })
        .collect();
    let start = runs
        .iter()
        .flat_map(|r| r.outcomes.iter().map(|o| o.submit))
        .min()
        .unwrap_or(0);
    let end = runs
        .iter()
        .flat_map(|r| {
            r.outcomes
                .iter()
                .filter_map(|o| o.end.or(o.start).max(Some(o.submit)))
        })
        .max()
        .unwrap_or(start);
    let hours = |t: i64| (t - start) as f64 / 3600.0;
    let over_time = |series: &dyn Fn(&PolicyRun<'_>) -> metrics::Series| -> Vec<Line> {
        runs.iter()
            .map(|r| Line {
                label: r.policy.to_owned(),
                points: series(r)
                    .bucket_means(end, MAX_POINTS)
                    .into_iter()
                    .map(|(t, v)| (hours(t), v))
                    .collect(),
            })
            .collect()
    };
    let utilization = over_time(&|r| metrics::utilization_series(r.outcomes, context.cluster_cpus));
    let queue = over_time(&|r| metrics::queue_length_series(r.outcomes));
    let queue_max = queue
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    Ok(vec![
        plots::line_chart(
            "Wait time distribution (share of jobs that waited at most x)",
            "wait + 1 (seconds, log scale)",
            "share of jobs",
            XAxis::Log,
            1.0,
            &waits,
        )?,
        plots::line_chart(
            "Utilization over time",
            "hours since the first submit",
            "busy CPUs / all CPUs",
            XAxis::Linear,
            1.0,
            &utilization,
        )?,
        plots::line_chart(
            "Queue length over time",
            "hours since the first submit",
            "jobs waiting (time average)",
            XAxis::Linear,
            (queue_max * 1.1).max(1.0),
            &queue,
        )?,
    ])
}

/// `text` safe inside HTML elements and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::two_runs;

    #[test]
    fn self_contained_page_with_three_plots() {
        let (a, b) = two_runs();
        let runs = [
            PolicyRun {
                policy: "fifo<1>",
                outcomes: &a,
                agreement: None,
            },
            PolicyRun {
                policy: "bf",
                outcomes: &b,
                agreement: None,
            },
        ];
        let notes = vec!["25 jobs with run time <= 0 skipped".to_owned()];
        let context = Context {
            workload: "w.swf",
            cluster_cpus: 4,
            notes: &notes,
            measure: metrics::Measure::default(),
        };
        let page = html(&context, &runs).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_eq!(page.matches("<svg").count(), 3);
        // Nothing loaded from elsewhere.
        assert!(!page.contains("src=") && !page.contains("<link") && !page.contains("<script"));
        assert!(page.contains("<li>25 jobs with run time &lt;= 0 skipped</li>"));
        // The policy label is escaped in the table.
        assert!(page.contains("<td>fifo&lt;1&gt;</td><td>5</td><td>4</td><td>1m01s</td>"));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
