//! `maple bench --plot DIR`: one SVG per workload, `DIR/WORKLOAD.svg`. Its left
//! panel is ns per operation of every implementation that ran it; the right
//! panel, when the run counted them (`--count instructions`), instructions per
//! operation. Against N on log axes where the workload ran at several N
//! (`dup`, `rebuild`, `fork_vmas`), as bars where it ran at one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plotters::style::RGBColor;

use super::{bar_panel, impl_color, line_panel, svg_file, Area, Bar, Series, Unit, REFERENCE};
use crate::measure::{Measurement, Outcome, Timing};
use crate::published::{LINUX_618_WRITTEN_PER_10S, MT_DUP_SERIES_FORKS_PER_10S};
use crate::workloads::Workload;

/// What a panel shows.
#[derive(Clone, Copy)]
enum Metric {
    Ns,
    Instructions,
}

impl Metric {
    fn of(self, t: &Timing) -> Option<f64> {
        match self {
            Metric::Ns => Some(t.ns_per_op),
            Metric::Instructions => t.instructions_per_op,
        }
    }

    fn desc(self, w: Workload) -> String {
        match self {
            Metric::Ns => format!("ns per {}", w.op_name()),
            Metric::Instructions => format!("instructions per {}", w.op_name()),
        }
    }

    fn unit(self) -> Unit {
        match self {
            Metric::Ns => Unit::Ns,
            Metric::Instructions => Unit::Count,
        }
    }
}

/// The results of one workload: (implementation, N, Q, timing), in run order.
type Results<'a> = Vec<(&'static str, u64, Option<u64>, &'a Timing)>;

/// Writes the charts of `ms` into `dir` (which must exist); returns their paths.
/// Workloads without a single result get no chart.
pub fn bench_charts(ms: &[Measurement], dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut workloads: Vec<Workload> = Vec::new();
    for m in ms {
        if !workloads.contains(&m.case.workload) {
            workloads.push(m.case.workload);
        }
    }
    let mut written = Vec::new();
    for w in workloads {
        let results: Results = ms
            .iter()
            .filter(|m| m.case.workload == w)
            .filter_map(|m| match &m.outcome {
                Outcome::Ok(t) => Some((m.impl_name, m.case.n, m.case.q, t)),
                _ => None,
            })
            .collect();
        if results.is_empty() {
            continue;
        }
        let counted = results.iter().any(|r| r.3.instructions_per_op.is_some());
        let path = dir.join(format!("{w}.svg"));
        let metrics: &[Metric] = if counted {
            &[Metric::Ns, Metric::Instructions]
        } else {
            &[Metric::Ns]
        };
        svg_file(&path, metrics.len(), |areas| {
            for (area, &metric) in areas.iter().zip(metrics) {
                panel(area, &path, w, &results, metric)?;
            }
            Ok(())
        })?;
        written.push(path);
    }
    Ok(written)
}

/// The implementations of `results`, in run order.
fn impls_of(results: &Results) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in results {
        if !out.contains(&r.0) {
            out.push(r.0);
        }
    }
    out
}

fn panel(
    area: &Area,
    path: &Path,
    w: Workload,
    results: &Results,
    metric: Metric,
) -> Result<(), String> {
    let ns: BTreeSet<u64> = results.iter().map(|r| r.1).collect();
    let impls = impls_of(results);
    if ns.len() > 1 {
        let mut series: Vec<Series> = impls
            .iter()
            .map(|&imp| Series {
                label: imp.to_string(),
                color: impl_color(imp),
                points: results
                    .iter()
                    .filter(|r| r.0 == imp)
                    .filter_map(|r| Some((r.1 as f64, metric.of(r.3)?)))
                    .collect(),
                reference: false,
            })
            .collect();
        if w == Workload::ForkVmas && matches!(metric, Metric::Ns) {
            series.extend(kernel_fork_series());
        }
        let title = format!("{w}: {} against N", metric.desc(w));
        let x_desc = format!("N ({}, log scale)", w.n_name());
        line_panel(
            area,
            path,
            &title,
            &x_desc,
            &metric.desc(w),
            metric.unit(),
            &series,
        )
    } else {
        let bars: Vec<Bar> = impls
            .iter()
            .filter_map(|&imp| {
                let r = results.iter().find(|r| r.0 == imp)?;
                Some(Bar {
                    label: imp.to_string(),
                    color: impl_color(imp),
                    value: metric.of(r.3)?,
                })
            })
            .collect();
        let (n, q) = (results[0].1, results[0].2);
        let size = match q {
            Some(q) => format!(
                "N = {}, Q = {}",
                super::count_label(n as f64),
                super::count_label(q as f64)
            ),
            None => format!("N = {}", super::count_label(n as f64)),
        };
        let title = format!("{w}: {} ({size})", metric.desc(w));
        bar_panel(area, path, &title, &metric.desc(w), metric.unit(), &bars)
    }
}

/// The kernel's fork, in ns per fork, beside `fork_vmas`: before and with the
/// `__mt_dup` series (its cover letter), and real fork on Linux 6.18 here. A
/// kernel fork also creates a task and waits for its exit: compare slopes.
fn kernel_fork_series() -> Vec<Series> {
    let per_fork = |forks_per_10s: u64| 1e10 / forks_per_10s as f64;
    vec![
        Series {
            label: "kernel fork before __mt_dup (cover letter)".into(),
            color: REFERENCE,
            points: MT_DUP_SERIES_FORKS_PER_10S
                .iter()
                .map(|&(n, before, _)| (n as f64, per_fork(before)))
                .collect(),
            reference: true,
        },
        Series {
            label: "kernel fork with __mt_dup (cover letter)".into(),
            color: RGBColor(120, 120, 120),
            points: MT_DUP_SERIES_FORKS_PER_10S
                .iter()
                .map(|&(n, _, after)| (n as f64, per_fork(after)))
                .collect(),
            reference: true,
        },
        Series {
            label: "Linux 6.18 fork here, pages written".into(),
            color: RGBColor(170, 170, 170),
            points: LINUX_618_WRITTEN_PER_10S
                .iter()
                .map(|&(n, forks)| (n as f64, per_fork(forks)))
                .collect(),
            reference: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::testing::{chart_dir, result};

    #[test]
    fn a_workload_at_several_n_is_a_line_chart_with_an_instruction_panel() {
        let dir = chart_dir("bench");
        let mut ms = Vec::new();
        for (k, n) in [21u64, 821, 12821].into_iter().enumerate() {
            for (imp, ns) in [("maple", 100.0), ("btreemap", 150.0)] {
                let mut m = result(Workload::Dup, n, imp, ns * (k + 1) as f64);
                if let Outcome::Ok(t) = &mut m.outcome {
                    t.instructions_per_op = Some(ns * 3.0);
                }
                ms.push(m);
            }
        }
        ms.push(result(Workload::Load, 1000, "maple", 40.0));
        // A failed measurement is left out, not drawn as zero.
        let mut failed = result(Workload::Load, 1000, "nodit", 1.0);
        failed.outcome = Outcome::Failed("panicked".into());
        ms.push(failed);
        let paths = bench_charts(&ms, &dir).unwrap();
        assert_eq!(paths, [dir.join("dup.svg"), dir.join("load.svg")]);
        let dup = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(dup.starts_with("<svg width=\"1360\""), "two panels");
        for want in [
            "ns per copy against N",
            "instructions per copy",
            "<polyline",
        ] {
            assert!(dup.contains(want), "dup.svg lacks {want}");
        }
        let load = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(load.starts_with("<svg width=\"680\""), "one panel");
        assert!(load.contains("ns per lookup (N = 1k, Q = 1k)"));
        assert!(!load.contains("nodit"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fork_vmas_is_drawn_beside_the_kernels_fork() {
        let dir = chart_dir("fork-vmas");
        let ms: Vec<Measurement> = [21, 821, 51221]
            .into_iter()
            .map(|n| result(Workload::ForkVmas, n, "mm-dup", 50.0 * n as f64))
            .collect();
        let paths = bench_charts(&ms, &dir).unwrap();
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.contains("kernel fork with __mt_dup"));
        assert!(svg.contains("N (VMAs, log scale)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
