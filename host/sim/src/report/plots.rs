//! The HTML report's plots as SVG text (plotters' SVG backend, its
//! built-in text layout: no font files are read).

use plotters::prelude::*;

/// Plot size in pixels.
const SIZE: (u32, u32) = (860, 380);
/// At most this many points per line: long runs are summarised first.
pub const MAX_POINTS: usize = 600;

/// One line of a plot: its label and its points.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// How the x axis is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    Linear,
    /// Logarithmic; every x must be at least 1.
    Log,
}

/// A line chart of `lines` (one color each, with a legend).
///
/// # Errors
///
/// The drawing error as text (plotters reports layout failures, such as an
/// empty range, this way).
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_axis: XAxis,
    y_max: f64,
    lines: &[Line],
) -> Result<String, String> {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60);
        match x_axis {
            XAxis::Linear => {
                let mut chart = builder
                    .build_cartesian_2d(0f64..x_max, 0f64..y_max)
                    .map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .draw()
                    .map_err(|e| e.to_string())?;
                draw_lines(&mut chart, lines)?;
            }
            XAxis::Log => {
                let mut chart = builder
                    .build_cartesian_2d((1f64..x_max.max(10.0)).log_scale(), 0f64..y_max)
                    .map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .x_desc(x_label)
                    .y_desc(y_label)
                    .draw()
                    .map_err(|e| e.to_string())?;
                draw_lines(&mut chart, lines)?;
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn draw_lines<'a, X>(
    chart: &mut ChartContext<
        'a,
        SVGBackend<'a>,
        Cartesian2d<X, plotters::coord::types::RangedCoordf64>,
    >,
    lines: &[Line],
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
{
    for (i, line) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                line.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(line.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// The empirical CDF of `values` as at most [`MAX_POINTS`] points
/// `(value + 1, fraction at or below)`: `+ 1` so a log axis can show 0.
pub fn cdf(values: &[i64]) -> Vec<(f64, f64)> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let steps = n.min(MAX_POINTS);
    (1..=steps)
        .map(|k| {
            let rank = (k * n).div_ceil(steps);
            (sorted[rank - 1] as f64 + 1.0, rank as f64 / n as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_points() {
        // Four waits: each point is (wait + 1, share of jobs waiting at most that).
        assert_eq!(
            cdf(&[30, 0, 10, 10]),
            vec![(1.0, 0.25), (11.0, 0.5), (11.0, 0.75), (31.0, 1.0)]
        );
        assert!(cdf(&[]).is_empty());
        let many: Vec<i64> = (0..10_000).collect();
        let points = cdf(&many);
        assert_eq!(points.len(), MAX_POINTS);
        assert_eq!(points.last(), Some(&(10_000.0, 1.0)));
    }

    /// The contents of the SVG's `<text>` elements, trimmed (plotters puts
    /// each on its own line).
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_owned())
            })
            .collect()
    }

    #[test]
    fn chart_is_svg_with_legend() {
        let lines = [
            Line {
                label: "fifo".into(),
                points: vec![(0.0, 0.5), (2.0, 1.0)],
            },
            Line {
                label: "backfill".into(),
                points: vec![(0.0, 0.2), (2.0, 0.4)],
            },
        ];
        let svg = line_chart("Utilization", "hours", "busy", XAxis::Linear, 1.0, &lines).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        let labels = texts(&svg);
        for label in ["fifo", "backfill", "Utilization"] {
            assert!(
                labels.iter().any(|t| t == label),
                "{label} not in {labels:?}"
            );
        }
        assert!(svg.matches("<polyline").count() >= 2);
        let svg = line_chart(
            "Waits",
            "wait + 1 (s)",
            "jobs",
            XAxis::Log,
            1.0,
            &[Line {
                label: "a".into(),
                points: cdf(&[0, 5, 500]),
            }],
        )
        .unwrap();
        assert!(svg.contains("<polyline"));
    }
}
