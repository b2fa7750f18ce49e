//! `maple fork-table --plot DIR`: the fork table as two SVGs.
//!
//! * `fork_table.svg`: ns per copy of a tree of N entries against N — `dup`
//!   (`__mt_dup`'s way), `rebuild` (iterate and store in order, as fork did
//!   before), `rebuild` without the append fast path, and a plain memory copy of
//!   the same node bytes.
//! * `fork_rate.svg`: the fork-rate curves. Left, copies per second of maple's
//!   `dup` and `rebuild` beside the kernel's forks per second before and with the
//!   `__mt_dup` series (its cover letter; a kernel fork does much more than copy
//!   the tree, so compare the slopes, not the heights). Right, what duplication
//!   buys at each N: maple's rebuild / dup against the kernel's after / before.

use std::path::{Path, PathBuf};

use super::{color, line_panel, svg_file, Series, Unit, REFERENCE};
use crate::fork_table::Row;
use crate::published::MT_DUP_SERIES_FORKS_PER_10S;

/// Writes the two charts of `rows` into `dir` (which must exist); returns their paths.
pub fn fork_table_charts(rows: &[Row], dir: &Path) -> Result<Vec<PathBuf>, String> {
    let n = |r: &Row| r.n as f64;
    let line = |k: usize, label: &str, f: &dyn Fn(&Row) -> Option<f64>| Series {
        label: label.to_string(),
        color: color(k),
        points: rows.iter().filter_map(|r| Some((n(r), f(r)?))).collect(),
        reference: false,
    };

    let table = dir.join("fork_table.svg");
    let copies = [
        line(0, "dup (maple)", &|r| r.dup.ns_per_op()),
        line(1, "rebuild (maple)", &|r| r.rebuild.ns_per_op()),
        line(2, "rebuild, append path off", &|r| {
            r.rebuild_noappend.ns_per_op()
        }),
        line(3, "memcpy of the node bytes", &|r| {
            Some(r.memcpy_ns).filter(|x| x.is_finite())
        }),
    ];
    svg_file(&table, 1, |areas| {
        line_panel(
            &areas[0],
            &table,
            "Copying a tree of N entries: dup vs rebuild vs memcpy",
            "N (entries, log scale)",
            "ns per copy",
            Unit::Ns,
            &copies,
        )
    })?;

    let rate = dir.join("fork_rate.svg");
    let per_second = |ns: Option<f64>| ns.filter(|&x| x > 0.0).map(|x| 1e9 / x);
    let kernel = |label: &str, shade: u8, pick: fn(&(u64, u64, u64)) -> u64| Series {
        label: label.to_string(),
        color: if shade == 0 {
            REFERENCE
        } else {
            plotters::style::RGBColor(shade, shade, shade)
        },
        points: MT_DUP_SERIES_FORKS_PER_10S
            .iter()
            .map(|s| (s.0 as f64, pick(s) as f64 / 10.0))
            .collect(),
        reference: true,
    };
    let rates = [
        line(0, "maple dup: copies/s", &|r| per_second(r.dup.ns_per_op())),
        line(1, "maple rebuild: copies/s", &|r| {
            per_second(r.rebuild.ns_per_op())
        }),
        kernel("kernel before __mt_dup: forks/s", 0, |s| s.1),
        kernel("kernel with __mt_dup: forks/s", 130, |s| s.2),
    ];
    let speedups = [
        line(0, "maple: rebuild ns / dup ns", &|r| {
            Some(r.rebuild.ns_per_op()? / r.dup.ns_per_op()?)
        }),
        Series {
            label: "kernel: forks/s with / before __mt_dup".into(),
            color: REFERENCE,
            points: MT_DUP_SERIES_FORKS_PER_10S
                .iter()
                .map(|&(n, before, after)| (n as f64, after as f64 / before as f64))
                .collect(),
            reference: true,
        },
    ];
    svg_file(&rate, 2, |areas| {
        line_panel(
            &areas[0],
            &rate,
            "Fork rate: maple's tree copies vs the kernel's forks",
            "N (entries or VMAs, log scale)",
            "per second",
            Unit::Count,
            &rates,
        )?;
        line_panel(
            &areas[1],
            &rate,
            "What duplication buys against N",
            "N (entries or VMAs, log scale)",
            "speedup",
            Unit::Ratio,
            &speedups,
        )
    })?;
    Ok(vec![table, rate])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::testing::{chart_dir, result};
    use crate::workloads::Workload;

    fn row(n: u64) -> Row {
        let f = n as f64;
        Row {
            n,
            copies: 2_000_000 / n,
            node_bytes: 40 * n as usize,
            dup: result(Workload::Dup, n, "maple", 20.0 * f),
            rebuild: result(Workload::Rebuild, n, "maple", 100.0 * f),
            rebuild_noappend: result(Workload::Rebuild, n, "maple-noappend", 120.0 * f),
            memcpy_ns: 5.0 * f,
            dup_per_memcpy: 4.0,
        }
    }

    #[test]
    fn the_table_and_the_fork_rates_are_drawn() {
        let dir = chart_dir("fork-table");
        let paths = fork_table_charts(&[row(21), row(821), row(12821)], &dir).unwrap();
        assert_eq!(
            paths,
            [dir.join("fork_table.svg"), dir.join("fork_rate.svg")]
        );
        let table = std::fs::read_to_string(&paths[0]).unwrap();
        for want in [
            "dup (maple)",
            "rebuild, append path off",
            "memcpy of the node bytes",
        ] {
            assert!(table.contains(want), "fork_table.svg lacks {want}");
        }
        let rate = std::fs::read_to_string(&paths[1]).unwrap();
        for want in [
            "maple dup: copies/s",
            "kernel before __mt_dup: forks/s",
            "rebuild ns / dup ns",
            "forks/s with / before __mt_dup",
        ] {
            assert!(rate.contains(want), "fork_rate.svg lacks {want}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
