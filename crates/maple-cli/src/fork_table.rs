//! `maple fork-table`: the table of the `__mt_dup` series' cover letter. For each N: ns per
//! `dup`, ns per `rebuild`, their ratio, and in the same run a plain memory copy of
//! the same number of node bytes; plus the append fast path (`mas_wr_append`) before/after
//! on `seq_store` and `rebuild`.

use std::hint::black_box;
use std::time::Instant;

use maple_tree::MapleTree;

use crate::expected::Expectations;
use crate::measure::{self, median, paired_ratio, Measurement, Outcome, Plan};
use crate::registry;
use crate::report::{human_ns, render};
use crate::workloads::{dup_copies, Case, Workload};

/// One row of the table.
pub struct Row {
    pub n: u64,
    pub copies: u64,
    pub node_bytes: usize,
    pub dup: Measurement,
    pub rebuild: Measurement,
    pub rebuild_noappend: Measurement,
    /// Median ns per plain copy of `node_bytes`.
    pub memcpy_ns: f64,
    /// Median over repetitions of dup's ns / the memcpy's ns measured right
    /// after it (NaN when either is missing).
    pub dup_per_memcpy: f64,
}

/// The append path before/after on `seq_store`.
pub struct SeqRow {
    pub with: Measurement,
    pub without: Measurement,
}

/// Node bytes of the allocation tree `seq_store(n)` builds.
fn source_node_bytes(n: u64) -> usize {
    let mut t = MapleTree::new_alloc();
    for i in 0..n {
        t.insert(16 * i..=16 * i + 9, i + 1);
    }
    t.stats().node_bytes
}

/// R plain copies of `bytes` bytes, each into its own slice of one preallocated,
/// pre-faulted buffer (as `dup` makes R distinct copies).
struct PlainCopy {
    src: Vec<u8>,
    dst: Vec<u8>,
    bytes: usize,
    copies: usize,
}

impl PlainCopy {
    fn new(bytes: usize, copies: u64) -> Self {
        let copies = copies as usize;
        let src: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
        let mut dst = vec![1u8; bytes * copies];
        dst.iter_mut().step_by(4096).for_each(|b| *b = 2); // fault every page in
        PlainCopy {
            src,
            dst,
            bytes,
            copies,
        }
    }

    /// One repetition: ns per copy. The source is read first, untimed: the
    /// dup repetition just before has pushed it out of cache, and a copy from
    /// a source in cache is the harder yardstick for dup.
    fn rep(&mut self) -> f64 {
        black_box(self.src.iter().fold(0u8, |acc, &b| acc ^ b));
        let start = Instant::now();
        for chunk in self
            .dst
            .chunks_exact_mut(self.bytes.max(1))
            .take(self.copies)
        {
            chunk.copy_from_slice(black_box(&self.src[..chunk.len().min(self.bytes)]));
        }
        black_box(&mut self.dst);
        start.elapsed().as_nanos() as f64 / self.copies as f64
    }
}

/// Runs the table at `ns` (and the seq_store comparison at `seq_n`).
pub fn run(ns: &[u64], seq_n: u64, plan: Plan) -> (Vec<Row>, SeqRow) {
    let maple = registry::by_name("maple").expect("maple");
    let noappend = registry::by_name("maple-noappend").expect("maple-noappend");
    let mut exp = Expectations::default();
    let mut one = |imp: &registry::Impl, case: Case, between: &mut dyn FnMut()| -> Measurement {
        let e = exp.get(&case);
        let label = format!(
            "fork-table {} n={} impl={}",
            case.workload, case.n, imp.name
        );
        let mut progress = |m: &str| eprintln!("{label}: {m}");
        let m = measure::measure_paired(imp, case, e, plan, &mut progress, between);
        if m.is_failure() {
            eprintln!(
                "{label}: {}",
                crate::report::lines(std::slice::from_ref(&m)).trim_end()
            );
        }
        m
    };
    let mut rows = Vec::new();
    for &n in ns {
        let copies = dup_copies(n);
        let node_bytes = std::panic::catch_unwind(|| source_node_bytes(n)).unwrap_or(0);
        // A memcpy repetition right after each dup repetition, so that the
        // ratio compares times taken a few milliseconds apart.
        let mut plain = (node_bytes > 0).then(|| PlainCopy::new(node_bytes, copies));
        let mut memcpy_all = Vec::new();
        let dup = one(
            maple,
            Case {
                workload: Workload::Dup,
                n,
                q: None,
            },
            &mut || memcpy_all.extend(plain.as_mut().map(PlainCopy::rep)),
        );
        drop(plain);
        let rebuild = one(
            maple,
            Case {
                workload: Workload::Rebuild,
                n,
                q: None,
            },
            &mut || {},
        );
        let rebuild_noappend = one(
            noappend,
            Case {
                workload: Workload::Rebuild,
                n,
                q: None,
            },
            &mut || {},
        );
        let memcpy_ns = if memcpy_all.is_empty() {
            f64::NAN
        } else {
            median(&memcpy_all)
        };
        let dup_per_memcpy = match &dup.outcome {
            Outcome::Ok(t) => paired_ratio(&t.all_ns_per_op, &memcpy_all),
            _ => f64::NAN,
        };
        eprintln!(
            "fork-table n={n}: memcpy of {node_bytes} bytes: {} (dup/memcpy {dup_per_memcpy:.2})",
            measure::fmt_ns(memcpy_ns)
        );
        rows.push(Row {
            n,
            copies,
            node_bytes,
            dup,
            rebuild,
            rebuild_noappend,
            memcpy_ns,
            dup_per_memcpy,
        });
    }
    let seq = SeqRow {
        with: one(
            maple,
            Case {
                workload: Workload::SeqStore,
                n: seq_n,
                q: None,
            },
            &mut || {},
        ),
        without: one(
            noappend,
            Case {
                workload: Workload::SeqStore,
                n: seq_n,
                q: None,
            },
            &mut || {},
        ),
    };
    (rows, seq)
}

fn ns_cell(m: &Measurement) -> String {
    m.ns_per_op().map(human_ns).unwrap_or_else(|| "—".into())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => format!("{:.2}×", a / b),
        _ => "—".into(),
    }
}

/// The two tables, plain or Markdown.
pub fn render_tables(rows: &[Row], seq: &SeqRow, markdown: bool) -> String {
    let header: Vec<String> = [
        "N",
        "R",
        "node bytes",
        "dup ns",
        "rebuild ns",
        "rebuild/dup",
        "memcpy ns",
        "dup/memcpy",
        "rebuild no-append ns",
        "append speedup",
    ]
    .map(String::from)
    .to_vec();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let memcpy = Some(r.memcpy_ns).filter(|x| x.is_finite());
            vec![
                r.n.to_string(),
                r.copies.to_string(),
                r.node_bytes.to_string(),
                ns_cell(&r.dup),
                ns_cell(&r.rebuild),
                ratio(r.rebuild.ns_per_op(), r.dup.ns_per_op()),
                memcpy.map(human_ns).unwrap_or_else(|| "—".into()),
                if r.dup_per_memcpy.is_finite() {
                    format!("{:.2}×", r.dup_per_memcpy)
                } else {
                    "—".into()
                },
                ns_cell(&r.rebuild_noappend),
                ratio(r.rebuild_noappend.ns_per_op(), r.rebuild.ns_per_op()),
            ]
        })
        .collect();
    let mut out = render(&header, &body, markdown);
    out.push_str(
        "\nns are per copy (median of the repetitions); R = max(1, 2000000 / N) copies per \
         repetition; memcpy = R copies of the dup source's node bytes (stats().node_bytes) \
         into distinct slices of one preallocated, pre-faulted buffer, one repetition right \
         after each dup repetition; dup/memcpy = the median of those paired ratios. \
         append speedup = \
         rebuild with set_append_path(false) / rebuild with it on.\n\n",
    );
    let seq_header: Vec<String> = [
        "workload",
        "N",
        "maple ns/op",
        "maple-noappend ns/op",
        "append speedup",
    ]
    .map(String::from)
    .to_vec();
    let seq_body = vec![vec![
        "seq_store".to_string(),
        seq.with.case.n.to_string(),
        ns_cell(&seq.with),
        ns_cell(&seq.without),
        ratio(seq.without.ns_per_op(), seq.with.ns_per_op()),
    ]];
    out.push_str(&render(&seq_header, &seq_body, markdown));
    out
}

/// Every measurement of the run, for `--format lines` / `json`.
pub fn measurements(rows: &[Row], seq: &SeqRow) -> Vec<Measurement> {
    let mut v = Vec::new();
    for r in rows {
        v.extend([r.dup.clone(), r.rebuild.clone(), r.rebuild_noappend.clone()]);
    }
    v.extend([seq.with.clone(), seq.without.clone()]);
    v
}

/// The memcpy rows in the one-line format (`workload=memcpy impl=memcpy`; not a
/// BENCHMARKS.md workload, so no checksum).
pub fn memcpy_lines(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "workload=memcpy impl=memcpy n={} ns_per_op={:.1} bytes={}\n",
                r.n, r.memcpy_ns, r.node_bytes
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::PlainCopy;

    #[test]
    fn a_plain_copy_writes_every_copy() {
        let mut plain = PlainCopy::new(1000, 3);
        assert!(plain.rep() > 0.0);
        for copy in plain.dst.chunks_exact(1000) {
            assert_eq!(copy, &plain.src[..]);
        }
    }
}
