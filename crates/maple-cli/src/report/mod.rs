//! Output: BENCHMARKS.md's one-line format, a ratio table (plain or markdown), JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::expected::Source;
use crate::measure::{paired_ratio, Measurement, Outcome, Timing};
use crate::workloads::{Case, Provider, Workload};

mod mm;
mod rcu;

/// Output format of `maple bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One line per measurement, exactly BENCHMARKS.md's format.
    Lines,
    /// A plain-text table: each peer's time as a ratio to maple's.
    Table,
    /// The same table in Markdown (for README.md).
    Markdown,
    /// Every measurement as a JSON array.
    Json,
}

/// `12345.6` -> `"12,346"`, `41.72` -> `"41.7"`.
pub fn human_ns(ns: f64) -> String {
    if ns < 1000.0 {
        return format!("{ns:.1}");
    }
    let digits = format!("{:.0}", ns);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `112100.4` -> `"112,100"`: rounded, thousands grouped.
pub fn grouped(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    if x < 0.0 && digits != "0" {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// BENCHMARKS.md's format, one line per result:
/// `workload=load impl=maple n=1000000 q=10000000 ns_per_op=41.7 checksum=3126729663903 bytes_per_entry=16.4`.
/// `fork_gb` adds `ns_per_gib`; `rcu_read_under_write` has no checksum
/// (`checksum=-`) and adds `writer_ns_per_store`, `solo_ns_per_op` (the reader
/// while the writer paused, interleaved) and `reader_keeps` (the median of the
/// repetitions' solo / under-write ratios).
/// A measurement that is not a result is a `#` comment line saying why.
pub fn lines(ms: &[Measurement]) -> String {
    let mut s = String::new();
    for m in ms {
        let c = &m.case;
        let q = c.q.map(|q| format!(" q={q}")).unwrap_or_default();
        match &m.outcome {
            Outcome::Ok(t) => {
                let checksum = if m.expected_from == Source::Unchecked {
                    "-".to_string()
                } else {
                    t.checksum.to_string()
                };
                let _ = write!(
                    s,
                    "workload={} impl={} n={}{q} ns_per_op={:.1} checksum={checksum}",
                    c.workload, m.impl_name, c.n, t.ns_per_op
                );
                if let Some(b) = t.bytes_per_entry {
                    let _ = write!(s, " bytes_per_entry={b:.1}");
                }
                if let Some(i) = t.instructions_per_op {
                    let _ = write!(s, " instructions_per_op={i:.1}");
                }
                if c.workload == Workload::ForkGb {
                    let _ = write!(s, " ns_per_gib={:.1}", t.ns_per_op / crate::mm::gib(c.n));
                }
                if let Some(sh) = t.shared {
                    let _ = write!(
                        s,
                        " writer_ns_per_store={:.1} solo_ns_per_op={:.1} reader_keeps={:.3}",
                        sh.writer_ns, sh.solo_ns, sh.kept
                    );
                }
                s.push('\n');
            }
            other => {
                let _ = writeln!(
                    s,
                    "# workload={} impl={} n={}{q} {}",
                    c.workload,
                    m.impl_name,
                    c.n,
                    not_a_result(m, other)
                );
            }
        }
    }
    s
}

fn not_a_result(m: &Measurement, o: &Outcome) -> String {
    match o {
        Outcome::Ok(_) => String::new(),
        Outcome::Excluded(why) => format!("excluded: {why}"),
        Outcome::Mismatch { got, rep } => format!(
            "CHECKSUM MISMATCH: got {got}, expected {} ({}), repetition {rep}",
            m.expected, m.expected_from
        ),
        Outcome::Failed(e) => format!("FAILED: {e}"),
    }
}

/// Every table of a `maple bench` run: the ratio table of the tree workloads, the
/// fork tables (address-space workloads) and the RCU table; each only
/// when the run has its workloads.
pub fn tables(ms: &[Measurement], impls: &[&str], reps: usize, markdown: bool) -> String {
    let tree: Vec<Measurement> = ms
        .iter()
        .filter(|m| m.case.workload.provider() == Provider::RangeMaps)
        .cloned()
        .collect();
    let tree_impls: Vec<&str> = impls
        .iter()
        .copied()
        .filter(|i| tree.iter().any(|m| m.impl_name == *i))
        .collect();
    let mut parts = Vec::new();
    if !tree.is_empty() {
        parts.push(table(&tree, &tree_impls, reps, markdown));
    }
    parts.push(mm::fork_vmas_table(ms, markdown));
    parts.push(mm::fork_gb_table(ms, markdown));
    parts.push(rcu::table(ms, markdown));
    let others: Vec<Measurement> = ms
        .iter()
        .filter(|m| m.case.workload.provider() != Provider::RangeMaps && m.is_failure())
        .cloned()
        .collect();
    if !others.is_empty() {
        parts.push(format!(
            "NOT RESULTS (address-space / RCU measurements):\n{}",
            lines(&others)
        ));
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n")
}

/// The ratio table: one row per case, one column per implementation; each peer's
/// median ns/op and, in parentheses, its time divided by maple's.
pub fn table(ms: &[Measurement], impls: &[&str], reps: usize, markdown: bool) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut note = |text: String| -> usize {
        match notes.iter().position(|n| *n == text) {
            Some(i) => i + 1,
            None => {
                notes.push(text);
                notes.len()
            }
        }
    };
    let mut cases: Vec<Case> = Vec::new();
    let mut by: BTreeMap<(Case, &str), &Measurement> = BTreeMap::new();
    for m in ms {
        if !cases.contains(&m.case) {
            cases.push(m.case);
        }
        by.insert((m.case, m.impl_name), m);
    }
    let has_maple = impls.contains(&"maple");
    let mut header = vec!["workload".to_string(), "N".into(), "Q".into()];
    header.extend(impls.iter().map(|i| format!("{i} ns/op")));
    if has_maple {
        header.push("maple B/entry".into());
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    for c in &cases {
        let maple = by.get(&(*c, "maple")).and_then(|m| match &m.outcome {
            Outcome::Ok(t) => Some(t),
            _ => None,
        });
        let mut row = vec![
            c.workload.name().to_string(),
            c.n.to_string(),
            c.q.map(|q| q.to_string()).unwrap_or_else(|| "—".into()),
        ];
        for &i in impls {
            let Some(m) = by.get(&(*c, i)) else {
                row.push(String::new());
                continue;
            };
            let cell = match &m.outcome {
                Outcome::Ok(t) => {
                    let mut cell = human_ns(t.ns_per_op);
                    if t.all_ns_per_op.len() < reps {
                        let k = note(format!(
                            "median of {} repetitions, not {reps}: the time budget (--budget) \
                             stopped the rest",
                            t.all_ns_per_op.len()
                        ));
                        let _ = write!(cell, " [{k}]");
                    }
                    let cell = match maple {
                        Some(base) if i != "maple" => {
                            format!("{cell} (×{:.2})", ratio(t, base))
                        }
                        _ => cell,
                    };
                    match t.instructions_per_op {
                        Some(ins) => format!("{cell}; {ins:.1} ins"),
                        None => cell,
                    }
                }
                other => {
                    let label = match other {
                        Outcome::Excluded(_) => "excluded",
                        Outcome::Mismatch { .. } => "MISMATCH",
                        _ => "FAILED",
                    };
                    let k = match other {
                        // One note per implementation and reason, whatever the workload.
                        Outcome::Excluded(_) => note(format!("{i}: {}", not_a_result(m, other))),
                        _ => note(format!(
                            "{i}, {} n={}: {}",
                            c.workload,
                            c.n,
                            not_a_result(m, other)
                        )),
                    };
                    format!("{label} [{k}]")
                }
            };
            row.push(cell);
        }
        if has_maple {
            let b = by
                .get(&(*c, "maple"))
                .and_then(|m| match &m.outcome {
                    Outcome::Ok(t) => t.bytes_per_entry,
                    _ => None,
                })
                .map(|b| format!("{b:.1}"))
                .unwrap_or_default();
            row.push(b);
        }
        rows.push(row);
    }
    let mut out = render(&header, &rows, markdown);
    if has_maple {
        out.push_str(if markdown { "\n" } else { "" });
        out.push_str(
            "(×k) = the peer's time divided by maple's (with several rounds, the median over \
             the rounds of that ratio within a round): above 1, maple is faster.\n",
        );
    }
    let mem = memory_rows(ms, impls);
    if !mem.is_empty() {
        out.push('\n');
        out.push_str(&render(
            &[
                "impl".into(),
                "N".into(),
                "heap bytes/entry after seq_store".into(),
            ],
            &mem,
            markdown,
        ));
    }
    if !notes.is_empty() {
        out.push('\n');
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(out, "[{}] {n}", i + 1);
            if markdown {
                out.push('\n');
            }
        }
    }
    out
}

/// `t`'s time divided by `base`'s: paired round by round when both were
/// measured in the same rounds (the implementations of a case take their
/// turns a few seconds apart, while a case's rounds lie minutes apart, so a
/// slower stretch of the machine moves a round's pair alike), otherwise the
/// ratio of the medians.
fn ratio(t: &Timing, base: &Timing) -> f64 {
    if t.round_medians.len() > 1 && t.round_medians.len() == base.round_medians.len() {
        paired_ratio(&t.round_medians, &base.round_medians)
    } else {
        t.ns_per_op / base.ns_per_op
    }
}

fn memory_rows(ms: &[Measurement], impls: &[&str]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for &i in impls {
        for m in ms.iter().filter(|m| m.impl_name == i) {
            if let Outcome::Ok(t) = &m.outcome {
                if let Some(h) = t.heap_bytes_per_entry {
                    rows.push(vec![i.to_string(), m.case.n.to_string(), format!("{h:.1}")]);
                }
            }
        }
    }
    rows
}

/// Renders a table, aligned plain text or Markdown.
pub fn render(header: &[String], rows: &[Vec<String>], markdown: bool) -> String {
    let cols = header.len();
    let mut width = vec![0usize; cols];
    for r in std::iter::once(header).chain(rows.iter().map(|r| r.as_slice())) {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |r: &[String]| -> String {
        let cells: Vec<String> = r
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(k, (c, &w))| {
                let pad = w - c.chars().count();
                if k < 1 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        if markdown {
            format!("| {} |\n", cells.join(" | "))
        } else {
            format!("{}\n", cells.join("  ").trim_end())
        }
    };
    let mut out = line(header);
    if markdown {
        let seps: Vec<String> = width
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                if k < 1 {
                    "-".repeat(w.max(3))
                } else {
                    format!("{}:", "-".repeat(w.max(3) - 1))
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", seps.join(" | ")));
    } else {
        let total: usize = width.iter().sum::<usize>() + 2 * (cols - 1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
    }
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// Every measurement as JSON.
pub fn json(ms: &[Measurement]) -> String {
    let v: Vec<Value> = ms
        .iter()
        .map(|m| {
            let mut o = json!({
                "workload": m.case.workload.name(),
                "impl": m.impl_name,
                "n": m.case.n,
                "q": m.case.q,
                "ops": m.case.ops(),
                "expected_checksum": (m.expected_from != Source::Unchecked).then_some(m.expected),
                "expected_from": m.expected_from.to_string(),
            });
            let checked = m.expected_from != Source::Unchecked;
            let extra = match &m.outcome {
                Outcome::Ok(t) => json!({
                    "status": "ok",
                    "ns_per_op": t.ns_per_op,
                    "instructions_per_op": t.instructions_per_op,
                    "repetitions_ns_per_op": t.all_ns_per_op,
                    "round_medians_ns_per_op": t.round_medians,
                    "checksum": checked.then_some(t.checksum),
                    "bytes_per_entry": t.bytes_per_entry,
                    "heap_bytes_per_entry": t.heap_bytes_per_entry,
                    "ns_per_gib": (m.case.workload == Workload::ForkGb)
                        .then(|| t.ns_per_op / crate::mm::gib(m.case.n)),
                    "writer_ns_per_store": t.shared.map(|sh| sh.writer_ns),
                    "solo_ns_per_op": t.shared.map(|sh| sh.solo_ns),
                    "reader_keeps": t.shared.map(|sh| sh.kept),
                }),
                Outcome::Excluded(why) => json!({"status": "excluded", "reason": why}),
                Outcome::Mismatch { got, rep } => {
                    json!({"status": "checksum_mismatch", "checksum": got, "repetition": rep})
                }
                Outcome::Failed(e) => json!({"status": "failed", "reason": e}),
            };
            if let (Value::Object(a), Value::Object(b)) = (&mut o, extra) {
                a.extend(b);
            }
            o
        })
        .collect();
    serde_json::to_string_pretty(&v).expect("JSON") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::Source;
    use crate::workloads::Workload;

    fn ok(impl_name: &'static str, ns: f64, bpe: Option<f64>) -> Measurement {
        Measurement {
            case: Case {
                workload: Workload::Load,
                n: 1_000_000,
                q: Some(10_000_000),
            },
            impl_name,
            expected: 3126729663903,
            expected_from: Source::Table,
            outcome: Outcome::Ok(Timing {
                ns_per_op: ns,
                all_ns_per_op: vec![ns; 5],
                round_medians: vec![ns],
                checksum: 3126729663903,
                bytes_per_entry: bpe,
                heap_bytes_per_entry: None,
                shared: None,
                instructions_per_op: None,
            }),
        }
    }

    #[test]
    fn lines_is_the_benchmarks_md_format() {
        let s = lines(&[ok("maple", 41.72, Some(16.4))]);
        assert_eq!(
            s,
            "workload=load impl=maple n=1000000 q=10000000 ns_per_op=41.7 \
             checksum=3126729663903 bytes_per_entry=16.4\n"
        );
    }

    #[test]
    fn table_shows_ratios_to_maple() {
        let ms = [ok("maple", 40.0, Some(16.4)), ok("btreemap", 100.0, None)];
        let t = table(&ms, &["maple", "btreemap"], 5, false);
        assert!(t.contains("100.0 (×2.50)"), "{t}");
        assert!(t.contains("16.4"), "{t}");
    }

    #[test]
    fn ratios_over_rounds_pair_each_round() {
        // Rounds at 2, 2 and 3 times maple's speed, the slowest round of
        // each falling at different times: the median of the three ratios
        // (2.00), not the ratio of the medians (100 / 40 = 2.50).
        let with_rounds = |name, rounds: [f64; 3]| {
            let mut m = ok(name, rounds[1], None);
            if let Outcome::Ok(t) = &mut m.outcome {
                t.ns_per_op = crate::measure::median(&rounds);
                t.round_medians = rounds.to_vec();
            }
            m
        };
        let ms = [
            with_rounds("maple", [50.0, 30.0, 40.0]),
            with_rounds("btreemap", [100.0, 60.0, 120.0]),
        ];
        let t = table(&ms, &["maple", "btreemap"], 5, false);
        assert!(t.contains("100.0 (×2.00)"), "{t}");
    }

    #[test]
    fn human_ns_groups_thousands() {
        assert_eq!(human_ns(41.72), "41.7");
        assert_eq!(human_ns(856000.4), "856,000");
        assert_eq!(human_ns(1234.0), "1,234");
    }
}
