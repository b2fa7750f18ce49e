//! Charts as SVG files (`maple bench --plot DIR`, `maple fork-table --plot DIR`),
//! drawn with plotters: a line chart against N on log axes where N varies, a bar
//! chart where a workload ran at one size. This file holds what every chart
//! shares (the directory check, colours, axis labels, the two kinds of panel);
//! `bench.rs` and `fork_table.rs` choose what to draw.

mod bench;
mod fork_table;

pub use bench::bench_charts;
pub use fork_table::fork_table_charts;

use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One drawing area of an SVG file.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Width and height of one panel, in pixels.
pub const PANEL: (u32, u32) = (680, 460);

/// Checks, before anything is measured, that the charts can be written to `dir`:
/// creates it (and its parents) if it is missing, then writes and removes a
/// probe file, so that a bad `--plot` fails at once and not after a long run.
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    if dir.as_os_str().is_empty() {
        return Err("--plot needs a directory".into());
    }
    if dir.exists() && !dir.is_dir() {
        return Err(format!("--plot {shown}: exists and is not a directory"));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--plot {shown}: cannot create the directory: {e}"))?;
    let probe = dir.join(".maple-plot-probe");
    std::fs::write(&probe, b"")
        .map_err(|e| format!("--plot {shown}: cannot write a file there: {e}"))?;
    // Best effort: the probe is empty and hidden; failing to remove it harms nothing.
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A drawing error, as text naming the file.
fn drawing_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("cannot draw {}: {e}", path.display())
}

/// Tableau's ten colours: distinct, and legible for the common colour blindnesses.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
];

/// The colour of the `k`-th line or bar.
pub fn color(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// The colour of an implementation: the same in every chart (by its place in the
/// registry, so maple is always the first colour).
pub fn impl_color(name: &str) -> RGBColor {
    let k = crate::registry::IMPLS
        .iter()
        .position(|i| i.name == name)
        .unwrap_or(PALETTE.len() - 1);
    color(k)
}

/// Published figures (the kernel's) are drawn dashed in this colour.
pub const REFERENCE: RGBColor = RGBColor(40, 40, 40);

/// `x` with three significant digits at most, trailing zeros dropped.
fn short(x: f64) -> String {
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// What a value axis counts, for its tick labels.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Nanoseconds, shown as ns, µs, ms or s.
    Ns,
    /// A plain count (instructions, operations per second), shown with k / M / G.
    Count,
    /// A ratio, shown as `2.5×`.
    Ratio,
}

impl Unit {
    fn label(self, v: f64) -> String {
        match self {
            Unit::Ns => {
                let (scale, unit) = [(1e9, "s"), (1e6, "ms"), (1e3, "µs")]
                    .into_iter()
                    .find(|&(s, _)| v >= s)
                    .unwrap_or((1.0, "ns"));
                format!("{} {unit}", short(v / scale))
            }
            Unit::Count => count_label(v),
            Unit::Ratio => format!("{}×", short(v)),
        }
    }
}

/// `12821` -> `12.8k`, `1000000` -> `1M`.
pub fn count_label(v: f64) -> String {
    let (scale, suffix) = [(1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|&(s, _)| v >= s)
        .unwrap_or((1.0, ""));
    format!("{}{suffix}", short(v / scale))
}

/// One line of a line chart.
pub struct Series {
    pub label: String,
    pub color: RGBColor,
    /// (x, y) points; those not positive and finite (no log axis holds them) are left out.
    pub points: Vec<(f64, f64)>,
    /// A published figure: drawn dashed.
    pub reference: bool,
}

/// The range of a log axis holding `values`, with some room around them.
fn log_range(values: impl Iterator<Item = f64>, pad: f64) -> Option<std::ops::Range<f64>> {
    let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if hi <= 0.0 {
        return None;
    }
    if lo == hi {
        return Some(lo / 2.0..hi * 2.0);
    }
    Some(lo / pad..hi * pad)
}

fn usable(p: &(f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0 > 0.0 && p.1 > 0.0
}

/// A line chart on log-log axes: `series` against N (or whatever `x_desc` says).
/// The legend goes to the upper corner the lines leave free.
pub fn line_panel(
    area: &Area,
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    y_unit: Unit,
    series: &[Series],
) -> Result<(), String> {
    let err = |e| drawing_error(path, e);
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().copied().filter(usable).collect())
        .collect();
    let all = || points.iter().flatten();
    let (Some(xs), Some(ys)) = (
        log_range(all().map(|p| p.0), 1.25),
        log_range(all().map(|p| p.1), 1.6),
    ) else {
        return Err(format!("{}: nothing to draw for {title}", path.display()));
    };
    // Lines that rise leave the upper left free; falling ones the upper right.
    let rising = points
        .iter()
        .find(|p| p.len() > 1)
        .is_none_or(|p| p[p.len() - 1].1 >= p[0].1);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 17))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(xs.log_scale(), ys.log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|x| count_label(*x))
        .y_label_formatter(&|y| y_unit.label(*y))
        .label_style(("sans-serif", 12))
        // Only the labelled grid lines: a log axis's unlabelled ones crowd the chart.
        .max_light_lines(1)
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()
        .map_err(err)?;
    for (s, pts) in series.iter().zip(&points) {
        if pts.is_empty() {
            continue;
        }
        let style = ShapeStyle::from(&s.color).stroke_width(2);
        let anno = if s.reference {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 7, 5, style))
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))
        }
        .map_err(err)?;
        let anno = anno.label(s.label.as_str());
        if s.reference {
            anno.legend(move |(x, y)| {
                DashedPathElement::new(vec![(x, y), (x + 22, y)], 5, 3, style)
            });
        } else {
            anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
        }
        let marker = if s.reference { 2 } else { 3 };
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, marker, style.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(if rising {
            SeriesLabelPosition::UpperLeft
        } else {
            SeriesLabelPosition::UpperRight
        })
        .label_font(("sans-serif", 12))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .draw()
        .map_err(err)?;
    Ok(())
}

/// One bar of a bar chart.
pub struct Bar {
    pub label: String,
    pub color: RGBColor,
    pub value: f64,
}

/// A bar chart from zero, each bar with its value written above it.
pub fn bar_panel(
    area: &Area,
    path: &Path,
    title: &str,
    y_desc: &str,
    y_unit: Unit,
    bars: &[Bar],
) -> Result<(), String> {
    let err = |e| drawing_error(path, e);
    let top = bars
        .iter()
        .map(|b| b.value)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    if bars.is_empty() || top <= 0.0 {
        return Err(format!("{}: nothing to draw for {title}", path.display()));
    }
    // `0..=last` makes `last + 1` segments, one per bar; a lone bar gets an empty
    // neighbour (plotters cannot divide a range of width zero).
    let last = (bars.len() as u32).max(2) - 1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 17))
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d((0..last).into_segmented(), 0.0..top * 1.15)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        .x_labels(bars.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => bars
                .get(*i as usize)
                .map(|b| b.label.clone())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .y_label_formatter(&|y| y_unit.label(*y))
        .label_style(("sans-serif", 12))
        // Only the labelled grid lines: a log axis's unlabelled ones crowd the chart.
        .max_light_lines(1)
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(bars.iter().zip(0u32..).map(|(b, i)| {
            let mut r = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), b.value),
                ],
                b.color.filled(),
            );
            r.set_margin(0, 0, 8, 8);
            r
        }))
        .map_err(err)?;
    let value_style = ("sans-serif", 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(bars.iter().zip(0u32..).map(|(b, i)| {
            Text::new(
                y_unit.label(b.value),
                (SegmentValue::CenterOf(i), b.value),
                value_style.clone(),
            )
        }))
        .map_err(err)?;
    Ok(())
}

/// Creates `path` as an SVG of `panels` panels side by side, lets `draw` fill
/// them, and writes the file.
pub fn svg_file(
    path: &Path,
    panels: usize,
    draw: impl FnOnce(&[Area]) -> Result<(), String>,
) -> Result<(), String> {
    let size = (PANEL.0 * panels as u32, PANEL.1);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| drawing_error(path, e))?;
    let areas = root.split_evenly((1, panels));
    draw(&areas)?;
    root.present().map_err(|e| drawing_error(path, e))
}

/// Made-up measurements for the chart tests.
#[cfg(test)]
pub mod testing {
    use crate::expected::Source;
    use crate::measure::{Measurement, Outcome, Timing};
    use crate::workloads::{Case, Workload};

    /// A result of `imp` on `workload` at N = `n`.
    pub fn result(workload: Workload, n: u64, imp: &'static str, ns: f64) -> Measurement {
        Measurement {
            case: Case {
                workload,
                n,
                q: workload.has_q().then_some(1000),
            },
            impl_name: imp,
            expected: 0,
            expected_from: Source::Model,
            outcome: Outcome::Ok(Timing {
                ns_per_op: ns,
                all_ns_per_op: vec![ns],
                round_medians: vec![ns],
                checksum: 0,
                bytes_per_entry: None,
                heap_bytes_per_entry: None,
                shared: None,
                instructions_per_op: None,
            }),
        }
    }

    /// A fresh directory for one test's charts.
    pub fn chart_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("maple-plot-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        super::prepare_dir(&dir).unwrap();
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels() {
        assert_eq!(count_label(21.0), "21");
        assert_eq!(count_label(12821.0), "12.8k");
        assert_eq!(count_label(1_000_000.0), "1M");
        assert_eq!(Unit::Ns.label(41.7), "41.7 ns");
        assert_eq!(Unit::Ns.label(1500.0), "1.5 µs");
        assert_eq!(Unit::Ns.label(2.0e6), "2 ms");
        assert_eq!(Unit::Ratio.label(2.5), "2.5×");
    }

    #[test]
    fn a_file_in_place_of_the_directory_is_refused() {
        let dir = std::env::temp_dir().join(format!("maple-plot-test-{}", std::process::id()));
        std::fs::write(&dir, b"x").unwrap();
        let e = prepare_dir(&dir).unwrap_err();
        std::fs::remove_file(&dir).unwrap();
        assert!(e.contains("not a directory"), "{e}");
        assert!(prepare_dir(Path::new("")).is_err());
    }
}
