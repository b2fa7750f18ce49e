//! `maple bench`: picks the cases, computes what each must checksum to, measures
//! every implementation on every case, one at a time.

use std::time::Instant;

use crate::expected::{Expectations, Source};
use crate::isolate;
use crate::measure::{self, Measurement, Plan};
use crate::registry::Impl;
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

/// Bytes a case needs at least: its structures and the reference model's
/// (about 256 bytes per entry between them), or a page frame per page of
/// the address-space workloads that write every page.
fn bytes_needed(c: &Case) -> u128 {
    let n = u128::from(c.n);
    match c.workload {
        Workload::ForkGb | Workload::FirstWrite => n * 4096,
        _ => n * 256,
    }
}

/// The memory this machine has available (`MemAvailable` of /proc/meminfo).
fn available_memory() -> Option<u128> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses sizes that cannot fit in this machine's memory, before anything
/// runs (a run would otherwise grow until the kernel kills it, or swap for
/// hours), saying how much it would need.
pub fn check_memory(cases: &[Case]) -> Result<(), String> {
    check_memory_against(cases, available_memory())
}

fn check_memory_against(cases: &[Case], available: Option<u128>) -> Result<(), String> {
    let Some(available) = available else {
        return Ok(());
    };
    for c in cases {
        let need = bytes_needed(c);
        if need > available {
            return Err(format!(
                "{} at N = {} needs about {:.1} GiB of memory, and this machine has {:.1} GiB \
                 available: choose a smaller --n",
                c.workload,
                c.n,
                need as f64 / (1u64 << 30) as f64,
                available as f64 / (1u64 << 30) as f64
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

/// Where and how often each measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isolation {
    /// Each pair in a fresh process (see `isolate.rs`); otherwise in this one.
    pub fresh_process: bool,
    /// Also count instructions per operation under callgrind.
    pub count_instructions: bool,
    /// Rounds (at least 1): every pair is measured this many times, each
    /// turn a whole measurement (its repetitions), and the median over the
    /// turns is reported. A round is a sweep over every case, in which the
    /// implementations of a case take turns one after the other. On a
    /// machine whose speed drifts (a shared VM, whose memory can be slower
    /// for minutes at a time), the implementations of a case then run close
    /// together, so that a slow stretch slows them alike, and a case's
    /// turns lie a sweep apart, so that its median does not rest on one
    /// stretch of the run: the ratios between implementations are what
    /// reproduce.
    pub rounds: usize,
}

impl Default for Isolation {
    fn default() -> Self {
        Isolation {
            fresh_process: false,
            count_instructions: false,
            rounds: 1,
        }
    }
}

/// One implementation's turns on a case, folded into one measurement: the
/// median over the turns' medians, every repetition and every turn's median
/// kept (the latter for ratios paired turn by turn). A turn that did
/// not run cleanly (excluded, mismatched, failed) decides the outcome.
fn fold_rounds(turns: Vec<Measurement>) -> Measurement {
    let mut turns = turns.into_iter();
    let mut first = turns.next().expect("at least one round");
    let measure::Outcome::Ok(timing) = &mut first.outcome else {
        return first;
    };
    let mut medians = vec![timing.ns_per_op];
    for turn in turns {
        match turn.outcome {
            measure::Outcome::Ok(t) => {
                medians.push(t.ns_per_op);
                timing.all_ns_per_op.extend(t.all_ns_per_op);
            }
            _ => return turn,
        }
    }
    timing.ns_per_op = measure::median(&medians);
    timing.round_medians = medians;
    first
}

/// Measures every implementation on every case of its domain, in this
/// process; progress goes to stderr.
#[cfg(test)]
pub fn run(cases: &[Case], impls: &[&'static Impl], plan: Plan) -> Vec<Measurement> {
    run_isolated(cases, impls, plan, Isolation::default())
}

/// Measures every implementation on every case of its domain, each
/// measurement where `isolation` says (in this process or a fresh one);
/// progress goes to stderr.
///
/// With several rounds, each round is a sweep over every case (the
/// implementations of a case taking turns within it), so that a case's turns
/// lie minutes apart, spread over the whole run: see [`Isolation::rounds`].
pub fn run_isolated(
    cases: &[Case],
    impls: &[&'static Impl],
    plan: Plan,
    isolation: Isolation,
) -> Vec<Measurement> {
    let started = Instant::now();
    let rounds = isolation.rounds.max(1);
    let runs: Vec<Vec<&'static Impl>> = cases
        .iter()
        .map(|case| {
            impls
                .iter()
                .copied()
                .filter(|i| (i.domain)(case.workload))
                .collect()
        })
        .collect();
    let total = runs.iter().map(Vec::len).sum();
    let mut expectations = Expectations::default();
    let expected: Vec<(u64, Source)> = cases
        .iter()
        .zip(&runs)
        .map(|(case, impls)| expected_checksum(&mut expectations, case, impls, started))
        .collect();
    // turns[case][implementation]: that pair's measurement in each round so far.
    let mut turns: Vec<Vec<Vec<Measurement>>> = runs
        .iter()
        .map(|impls| impls.iter().map(|_| Vec::new()).collect())
        .collect();
    for round in 0..rounds {
        let turn = (rounds > 1).then_some((round + 1, rounds));
        let mut k = 0;
        for (c, case) in cases.iter().enumerate() {
            let label = case_label(case);
            for (imp, turns) in runs[c].iter().zip(&mut turns[c]) {
                k += 1;
                // A pair that did not run cleanly once is not run again: its
                // first unclean turn is what gets reported.
                if turns
                    .last()
                    .is_some_and(|m| !matches!(m.outcome, measure::Outcome::Ok(_)))
                {
                    continue;
                }
                let prefix = progress_prefix(started, k, total, &label, imp, turn);
                let mut progress = |msg: &str| eprintln!("{prefix}: {msg}");
                turns.push(if isolation.fresh_process {
                    isolate::measure(imp, *case, expected[c], plan)
                } else {
                    measure::measure(imp, *case, expected[c], plan, &mut progress)
                });
                if rounds > 1 {
                    if let Some(measure::Outcome::Ok(t)) = turns.last().map(|m| &m.outcome) {
                        progress(&format!("median {}", measure::fmt_ns(t.ns_per_op)));
                    }
                }
            }
        }
    }
    let mut out = Vec::with_capacity(total);
    let mut k = 0;
    for ((case, impls), turns) in cases.iter().zip(&runs).zip(turns) {
        let label = case_label(case);
        for (imp, turns) in impls.iter().zip(turns) {
            k += 1;
            let prefix = progress_prefix(started, k, total, &label, imp, None);
            let progress = |msg: &str| eprintln!("{prefix}: {msg}");
            let mut m = fold_rounds(turns);
            if isolation.count_instructions {
                if let measure::Outcome::Ok(t) = &mut m.outcome {
                    match isolate::count_instructions(imp, case, (m.expected, m.expected_from)) {
                        Ok(ins) => t.instructions_per_op = Some(ins),
                        Err(e) => progress(&format!("no instruction count: {e}")),
                    }
                }
            }
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

/// A case as the progress lines name it.
fn case_label(case: &Case) -> String {
    match case.q {
        Some(q) => format!("{} n={} q={}", case.workload, case.n, q),
        None => format!("{} n={}", case.workload, case.n),
    }
}

/// The checksum `case` must produce (nothing to check if none of `impls`
/// runs it), saying so on stderr when the reference model had to compute it.
fn expected_checksum(
    expectations: &mut Expectations,
    case: &Case,
    impls: &[&'static Impl],
    started: Instant,
) -> (u64, Source) {
    if !impls.iter().any(|i| i.runs(case.workload)) {
        return (0, Source::Model);
    }
    let t = Instant::now();
    let e = expectations.get(case);
    if e.1 == Source::Model {
        eprintln!(
            "[{:>6.1}s] {}: expected checksum {} from the reference model ({:.1}s)",
            started.elapsed().as_secs_f64(),
            case_label(case),
            e.0,
            t.elapsed().as_secs_f64()
        );
    }
    e
}

/// The start of a progress line: time, pair number, case, implementation,
/// and the round (`(round, rounds)`) when there are several.
fn progress_prefix(
    started: Instant,
    k: usize,
    total: usize,
    label: &str,
    imp: &Impl,
    round: Option<(usize, usize)>,
) -> String {
    let round = round.map_or(String::new(), |(r, of)| format!(" round {r}/{of}"));
    format!(
        "[{:>6.1}s] [{k}/{total}] {label} impl={}{round}",
        started.elapsed().as_secs_f64(),
        imp.name
    )
}

fn e_unchecked(m: &Measurement) -> bool {
    m.expected_from == Source::Unchecked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(outcome: measure::Outcome) -> Measurement {
        Measurement {
            case: Case {
                workload: Workload::Iter,
                n: 1000,
                q: None,
            },
            impl_name: "maple",
            expected: 7,
            expected_from: Source::Table,
            outcome,
        }
    }

    fn timed(reps: &[f64]) -> Measurement {
        turn(measure::Outcome::Ok(measure::Timing {
            ns_per_op: measure::median(reps),
            all_ns_per_op: reps.to_vec(),
            round_medians: vec![measure::median(reps)],
            checksum: 7,
            bytes_per_entry: None,
            heap_bytes_per_entry: None,
            shared: None,
            instructions_per_op: None,
        }))
    }

    #[test]
    fn rounds_fold_into_the_median_of_their_medians() {
        let m = fold_rounds(vec![
            timed(&[9.0, 10.0, 11.0]),
            timed(&[29.0, 30.0, 31.0]),
            timed(&[19.0, 20.0, 21.0]),
        ]);
        let measure::Outcome::Ok(t) = m.outcome else {
            panic!("three clean rounds fold into a timing");
        };
        assert_eq!(t.ns_per_op, 20.0);
        assert_eq!(t.all_ns_per_op.len(), 9);
        assert_eq!(t.all_ns_per_op[3], 29.0);
        assert_eq!(t.round_medians, [10.0, 30.0, 20.0]);
    }

    #[test]
    fn a_round_that_did_not_run_cleanly_decides_the_outcome() {
        let m = fold_rounds(vec![
            timed(&[10.0]),
            turn(measure::Outcome::Mismatch { got: 8, rep: 0 }),
            timed(&[10.0]),
        ]);
        assert!(matches!(
            m.outcome,
            measure::Outcome::Mismatch { got: 8, .. }
        ));
        let m = fold_rounds(vec![
            turn(measure::Outcome::Excluded("no".into())),
            timed(&[1.0]),
        ]);
        assert!(matches!(m.outcome, measure::Outcome::Excluded(_)));
    }

    #[test]
    fn every_round_measures_every_pair_and_the_report_keeps_case_order() {
        let cases = [Workload::Iter, Workload::Load].map(|workload| Case {
            workload,
            n: 300,
            q: workload.has_q().then_some(1000),
        });
        let impls = ["maple", "btreemap"].map(|n| crate::registry::by_name(n).unwrap());
        let plan = Plan {
            reps: 2,
            budget: None,
        };
        let isolation = Isolation {
            rounds: 3,
            ..Isolation::default()
        };
        let ms = run_isolated(&cases, &impls, plan, isolation);
        let order: Vec<(Workload, &str)> =
            ms.iter().map(|m| (m.case.workload, m.impl_name)).collect();
        assert_eq!(
            order,
            [
                (Workload::Iter, "maple"),
                (Workload::Iter, "btreemap"),
                (Workload::Load, "maple"),
                (Workload::Load, "btreemap"),
            ]
        );
        for m in &ms {
            let measure::Outcome::Ok(t) = &m.outcome else {
                panic!("{} on {} did not run cleanly", m.impl_name, m.case.workload);
            };
            // Three rounds of two repetitions each.
            assert_eq!(t.all_ns_per_op.len(), 6);
        }
    }

    #[test]
    fn sizes_over_the_memory_are_refused() {
        let big = Case {
            workload: Workload::Iter,
            n: 10_000_000_000,
            q: None,
        };
        let small = Case { n: 1000, ..big };
        let gib = Some(24u128 << 30);
        let e = check_memory_against(&[small, big], gib).unwrap_err();
        assert!(e.contains("needs about 2384.2 GiB"), "{e}");
        assert!(check_memory_against(&[small], gib).is_ok());
        let pages = Case {
            workload: Workload::FirstWrite,
            n: 17_179_869_184,
            q: None,
        };
        assert!(check_memory_against(&[pages], gib).is_err());
        assert!(check_memory_against(&[big], None).is_ok());
    }
}
