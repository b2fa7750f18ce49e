//! `maple bench`: picks the cases, computes what each must checksum to, measures
//! every implementation on every case, one at a time.

use std::time::Instant;

use crate::expected::{Expectations, Source};
use crate::measure::{self, Measurement, Plan};
use crate::peers::Impl;
use crate::workloads::{Case, Workload};

/// Sizes to run at.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sizes {
    /// `--n`: one N for every selected workload.
    pub n: Option<u64>,
    /// `--q`: one Q for every selected workload that has one.
    pub q: Option<u64>,
    /// `--quick`: the quick preset (`--n` / `--q` still win).
    pub quick: bool,
}

/// The cases of `workloads` at `sizes`, in order.
pub fn cases(workloads: &[Workload], sizes: Sizes) -> Vec<Case> {
    let mut out = Vec::new();
    for &w in workloads {
        let ns = match sizes.n {
            Some(n) => vec![n],
            None if sizes.quick => w.quick_ns(),
            None => w.default_ns(),
        };
        let q = if w.has_q() {
            sizes.q.or(if sizes.quick {
                w.quick_q()
            } else {
                w.default_q()
            })
        } else {
            None
        };
        out.extend(ns.into_iter().map(|n| Case { workload: w, n, q }));
    }
    out
}

/// Rejects sizes the workloads cannot run at (N = 0 would divide by zero in
/// `next() % (16N)`; the gap workloads need `pos > 0`).
pub fn check_sizes(cases: &[Case]) -> Result<(), String> {
    for c in cases {
        if c.n == 0 {
            return Err(format!("{}: N must be at least 1", c.workload));
        }
        if c.q == Some(0) && c.workload.has_q() {
            return Err(format!("{}: Q must be at least 1", c.workload));
        }
        if c.n > (u64::MAX / 16) - 64 {
            return Err(format!(
                "{}: N is too large for 16·N to fit in u64",
                c.workload
            ));
        }
        let max_map_count = maple_mm::Config::default().max_map_count as u64;
        if c.workload == Workload::ForkVmas && c.n > max_map_count {
            return Err(format!(
                "fork_vmas: N = {} VMAs is over vm.max_map_count ({max_map_count})",
                c.n
            ));
        }
        // 2^47 bytes of user address space, less the top 128 MiB.
        if matches!(c.workload, Workload::ForkGb | Workload::FirstWrite) && c.n > (1 << 34) {
            return Err(format!(
                "{}: N = {} pages do not fit in the address space",
                c.workload, c.n
            ));
        }
    }
    Ok(())
}

/// The measurements to make: every case with every selected implementation whose
/// domain holds it, in order.
pub fn pairs(cases: &[Case], impls: &[&'static Impl]) -> Vec<(Case, &'static Impl)> {
    let mut out = Vec::new();
    for c in cases {
        out.extend(
            impls
                .iter()
                .filter(|i| (i.domain)(c.workload))
                .map(|&i| (*c, i)),
        );
    }
    out
}

/// Measures every implementation on every case of its domain; progress goes to stderr.
pub fn run(cases: &[Case], impls: &[&'static Impl], plan: Plan) -> Vec<Measurement> {
    let mut expectations = Expectations::default();
    let total = pairs(cases, impls).len();
    let mut k = 0;
    let mut out = Vec::with_capacity(total);
    let started = Instant::now();
    for case in cases {
        let impls: Vec<&'static Impl> = impls
            .iter()
            .copied()
            .filter(|i| (i.domain)(case.workload))
            .collect();
        let label = match case.q {
            Some(q) => format!("{} n={} q={}", case.workload, case.n, q),
            None => format!("{} n={}", case.workload, case.n),
        };
        let expected = if impls.iter().any(|i| i.runs(case.workload)) {
            let t = Instant::now();
            let e = expectations.get(case);
            if e.1 == Source::Model {
                eprintln!(
                    "[{:>6.1}s] {label}: expected checksum {} from the reference model ({:.1}s)",
                    started.elapsed().as_secs_f64(),
                    e.0,
                    t.elapsed().as_secs_f64()
                );
            }
            e
        } else {
            (0, Source::Model)
        };
        for imp in &impls {
            k += 1;
            let prefix = format!(
                "[{:>6.1}s] [{k}/{total}] {label} impl={}",
                started.elapsed().as_secs_f64(),
                imp.name
            );
            let mut progress = |msg: &str| eprintln!("{prefix}: {msg}");
            let m = measure::measure(imp, *case, expected, plan, &mut progress);
            match &m.outcome {
                measure::Outcome::Ok(t) if e_unchecked(&m) => eprintln!(
                    "{prefix}: median {} (no checksum: every value read was checked)",
                    measure::fmt_ns(t.ns_per_op),
                ),
                measure::Outcome::Ok(t) => eprintln!(
                    "{prefix}: median {} checksum {} ok",
                    measure::fmt_ns(t.ns_per_op),
                    t.checksum
                ),
                measure::Outcome::Excluded(why) => eprintln!("{prefix}: excluded: {why}"),
                measure::Outcome::Mismatch { got, rep } => eprintln!(
                    "{prefix}: CHECKSUM MISMATCH in repetition {rep}: got {got}, expected {} \
                     (from the {})",
                    m.expected, m.expected_from
                ),
                measure::Outcome::Failed(e) => eprintln!("{prefix}: FAILED: {e}"),
            }
            out.push(m);
        }
    }
    out
}

fn e_unchecked(m: &Measurement) -> bool {
    m.expected_from == Source::Unchecked
}
