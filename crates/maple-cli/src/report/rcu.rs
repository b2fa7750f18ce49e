//! The RCU tables: the reader alone and under a writer, and the writer in RCU
//! mode against the plain tree.

use std::fmt::Write as _;

use super::{human_ns, render};
use crate::measure::{Measurement, Outcome};
use crate::rcu::{domain, SEGMENTS};
use crate::workloads::Workload;

/// The goal: the reader keeps at least this share of its solo throughput.
pub const TARGET_KEPT: f64 = 0.80;

fn find<'a>(ms: &'a [Measurement], w: Workload, imp: &str) -> Option<&'a Measurement> {
    ms.iter()
        .find(|m| m.case.workload == w && m.impl_name == imp && m.ns_per_op().is_some())
}

/// The RCU implementations in table order.
const RCU_IMPLS: [&str; 3] = ["maple-rcu", "maple-rcu-b64", "maple-rcu-inline"];

/// Operations per guard, and how values are held, of implementation `imp`.
fn shape(imp: &str) -> (&'static str, &'static str) {
    match imp {
        "maple-rcu" => ("1", "boxed"),
        "maple-rcu-b64" => ("64", "boxed"),
        "maple-rcu-inline" => ("1", "inline"),
        _ => ("—", "inline"),
    }
}

fn cell(m: Option<&Measurement>) -> String {
    m.and_then(|m| m.ns_per_op())
        .map(human_ns)
        .unwrap_or_else(|| "—".into())
}

/// The RCU table: the reader alone and under the writer (and what share of its
/// throughput it keeps), the writer in RCU mode against the plain tree. Empty when
/// `ms` has no RCU result.
pub fn table(ms: &[Measurement], markdown: bool) -> String {
    if !ms
        .iter()
        .any(|m| domain(m.case.workload) && matches!(m.outcome, Outcome::Ok(_)))
    {
        return String::new();
    }
    let mut out = String::new();
    let readers: Vec<&str> = RCU_IMPLS
        .into_iter()
        .filter(|i| {
            find(ms, Workload::RcuRead, i).is_some()
                || find(ms, Workload::RcuReadUnderWrite, i).is_some()
        })
        .collect();
    let mut kept_main: Option<f64> = None;
    if !readers.is_empty() {
        let header: Vec<String> = [
            "impl",
            "lookups per guard",
            "values",
            "alone (rcu_read) ns/lookup",
            "writer paused ns/lookup",
            "under write ns/lookup",
            "reader keeps",
            "writer ns/store meanwhile",
        ]
        .map(String::from)
        .to_vec();
        let mut rows = Vec::new();
        for imp in &readers {
            let solo = find(ms, Workload::RcuRead, imp);
            let under = find(ms, Workload::RcuReadUnderWrite, imp);
            let shared = under.and_then(|m| match &m.outcome {
                Outcome::Ok(t) => t.shared,
                _ => None,
            });
            if *imp == "maple-rcu" {
                kept_main = shared.map(|sh| sh.kept);
            }
            let dash = || "—".to_string();
            rows.push(vec![
                imp.to_string(),
                shape(imp).0.to_string(),
                shape(imp).1.to_string(),
                cell(solo),
                shared.map(|sh| human_ns(sh.solo_ns)).unwrap_or_else(dash),
                cell(under),
                shared
                    .map(|sh| format!("{:.1}%", 100.0 * sh.kept))
                    .unwrap_or_else(dash),
                shared.map(|sh| human_ns(sh.writer_ns)).unwrap_or_else(dash),
            ]);
        }
        if let Some(load) = find(ms, Workload::Load, "maple") {
            rows.push(vec![
                "maple (load)".into(),
                "no guard".into(),
                "inline".into(),
                cell(Some(load)),
                "—".into(),
                "—".into(),
                "—".into(),
                "—".into(),
            ]);
        }
        let size = ms
            .iter()
            .find(|m| {
                matches!(
                    m.case.workload,
                    Workload::RcuRead | Workload::RcuReadUnderWrite
                )
            })
            .map(|m| format!("N={} Q={}", m.case.n, m.case.q.unwrap_or(0)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "rcu_read, rcu_read_under_write — lock-free readers (RCU mode): one reader thread ({size}), alone and \
             while a writer thread stores without pause"
        );
        if markdown {
            out.push('\n');
        }
        out.push_str(&render(&header, &rows, markdown));
        if markdown {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "Each rcu_read_under_write repetition alternates {SEGMENTS} segments with the writer \
             paused and {SEGMENTS} with it storing (overwrite's stores, one write() guard each, \
             on the other CPU), Q lookups per half, on one tree; reader keeps = the median over \
             the repetitions of paused ns / under-write ns (the share of its solo throughput \
             kept). 'meanwhile' = the reader's time under write / the writer's stores in it. \
             rcu_read is the reader alone on a fresh seq_store tree, in its own repetitions."
        );
        if let Some(k) = kept_main {
            let _ = writeln!(
                out,
                "Target: the reader keeps at least {:.0}% of its solo throughput while \
                 the writer runs: {:.1}% (maple-rcu) — {}.",
                100.0 * TARGET_KEPT,
                100.0 * k,
                if k >= TARGET_KEPT { "met" } else { "NOT met" }
            );
        }
    }
    let writers: Vec<&str> = ["maple"]
        .into_iter()
        .chain(RCU_IMPLS)
        .filter(|i| find(ms, Workload::RcuWrite, i).is_some())
        .collect();
    if !writers.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let base = find(ms, Workload::RcuWrite, "maple").and_then(|m| m.ns_per_op());
        let size = find(ms, Workload::RcuWrite, writers[0])
            .map(|m| format!("N={} Q={}", m.case.n, m.case.q.unwrap_or(0)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "rcu_write — RCU mode's writer: overwrite ({size}) through the RCU writer vs the plain tree, \
             no reader"
        );
        if markdown {
            out.push('\n');
        }
        let header: Vec<String> = [
            "impl",
            "stores per guard",
            "values",
            "ns/store",
            "× plain tree",
        ]
        .map(String::from)
        .to_vec();
        let rows: Vec<Vec<String>> = writers
            .iter()
            .map(|imp| {
                let m = find(ms, Workload::RcuWrite, imp);
                let ns = m.and_then(|m| m.ns_per_op());
                vec![
                    imp.to_string(),
                    shape(imp).0.to_string(),
                    shape(imp).1.to_string(),
                    cell(m),
                    match (ns, base) {
                        (Some(a), Some(b)) => format!("{:.2}", a / b),
                        _ => "—".into(),
                    },
                ]
            })
            .collect();
        out.push_str(&render(&header, &rows, markdown));
    }
    out
}
