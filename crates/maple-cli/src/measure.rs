//! One measurement: an implementation on a case, repeated (5 times by default) in
//! this process, the median ns/op, every repetition's checksum checked.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::alloc_count;
use crate::expected::Source;
use crate::registry::Impl;
use crate::rep::{Rep, Session, SharedRead};
use crate::workloads::{Case, Workload};

/// How to measure.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Repetitions (BENCHMARKS.md: 5).
    pub reps: usize,
    /// Wall-clock budget of one measurement; `None` = unlimited. A measurement whose
    /// projected time is over it runs fewer repetitions (at least one), or, if one
    /// repetition alone would not fit, is excluded and says so.
    pub budget: Option<Duration>,
}

/// The numbers of a measurement that ran.
#[derive(Debug, Clone)]
pub struct Timing {
    /// Median ns per operation.
    pub ns_per_op: f64,
    /// ns/op of every repetition, in run order.
    pub all_ns_per_op: Vec<f64>,
    /// The median ns/op of each round, in round order (one entry for a
    /// measurement taken once): what a ratio to another implementation
    /// measured in the same rounds pairs up (see [`paired_ratio`]).
    pub round_medians: Vec<f64>,
    /// The checksum every repetition produced.
    pub checksum: u64,
    /// Node bytes per entry, where the implementation can tell.
    pub bytes_per_entry: Option<f64>,
    /// Peak live heap bytes per entry while building `seq_store(N)` (seq_store only).
    pub heap_bytes_per_entry: Option<f64>,
    /// `rcu_read_under_write`: the medians of its repetitions' [`SharedRead`]s.
    pub shared: Option<SharedTiming>,
    /// Instructions per operation of the timed part (`--count instructions`).
    pub instructions_per_op: Option<f64>,
}

/// The medians over the repetitions of `rcu_read_under_write`.
#[derive(Debug, Clone, Copy)]
pub struct SharedTiming {
    /// The reader's ns per lookup while the writer was paused.
    pub solo_ns: f64,
    /// The writer's ns per store while the reader was timed.
    pub writer_ns: f64,
    /// The median of each repetition's `solo ns / under-write ns`: the share of
    /// its solo throughput the reader kept, paired within a repetition so that the
    /// machine's drift between repetitions cancels.
    pub kept: f64,
}

/// What became of a measurement.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Ran, and every checksum matched.
    Ok(Timing),
    /// Not run: the implementation cannot express the workload, or it would not fit
    /// the time budget. The reason says which.
    Excluded(String),
    /// Ran, and a checksum did not match: not a result.
    Mismatch { got: u64, rep: usize },
    /// Panicked.
    Failed(String),
}

/// One implementation on one case.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub case: Case,
    pub impl_name: &'static str,
    pub expected: u64,
    pub expected_from: Source,
    pub outcome: Outcome,
}

impl Measurement {
    /// The measurement of `imp` on `case`, whose checksum should be `expected`
    /// (with where that value comes from).
    pub fn new(imp: &Impl, case: Case, expected: (u64, Source), outcome: Outcome) -> Measurement {
        Measurement {
            case,
            impl_name: imp.name,
            expected: expected.0,
            expected_from: expected.1,
            outcome,
        }
    }

    /// The median ns/op, if the measurement is a result.
    pub fn ns_per_op(&self) -> Option<f64> {
        match &self.outcome {
            Outcome::Ok(t) => Some(t.ns_per_op),
            _ => None,
        }
    }
    /// Whether this measurement makes the run fail.
    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, Outcome::Mismatch { .. } | Outcome::Failed(_))
    }
}

/// Median of a non-empty slice.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The median of `a[i] / b[i]` over the pairs (NaN when there is none):
/// the ratio of two series measured side by side, turn by turn, so that
/// the machine's drift from one turn to the next, which slows both members
/// of a pair alike, cancels out of each ratio instead of landing in one
/// series' median and not the other's.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> f64 {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    if ratios.is_empty() {
        f64::NAN
    } else {
        median(&ratios)
    }
}

fn panic_message(e: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "panicked".to_string()
    }
}

fn run_caught(imp: &Impl, case: &Case) -> Result<Rep, String> {
    catch_unwind(AssertUnwindSafe(|| (imp.run)(case))).map_err(panic_message)
}

/// The repetitions of a measurement: the implementation's session (its setup built
/// once, here), or one call of `run` per repetition.
fn start_session(imp: &Impl, case: &Case) -> Result<Session, String> {
    match imp.session {
        Some(start) => catch_unwind(AssertUnwindSafe(|| start(case))).map_err(panic_message),
        None => {
            let (run, case) = (imp.run, *case);
            Ok(Box::new(move || run(&case)))
        }
    }
}

/// Measures `imp` on `case`; `progress` is told about each repetition.
pub fn measure(
    imp: &Impl,
    case: Case,
    expected: (u64, Source),
    plan: Plan,
    progress: &mut dyn FnMut(&str),
) -> Measurement {
    measure_paired(imp, case, expected, plan, progress, &mut || {})
}

/// [`measure`], running `between` after every repetition (outside its timer):
/// a reference measured the same number of times, each right after the
/// repetition it is compared with, so that the VM's speed drifting over the
/// run moves both alike.
pub fn measure_paired(
    imp: &Impl,
    case: Case,
    expected: (u64, Source),
    plan: Plan,
    progress: &mut dyn FnMut(&str),
    between: &mut dyn FnMut(),
) -> Measurement {
    let outcome = measure_outcome(imp, &case, expected, plan, progress, between);
    Measurement::new(imp, case, expected, outcome)
}

fn measure_outcome(
    imp: &Impl,
    case: &Case,
    (expected, source): (u64, Source),
    plan: Plan,
    progress: &mut dyn FnMut(&str),
    between: &mut dyn FnMut(),
) -> Outcome {
    // Without a checksum (rcu_read_under_write), a repetition checks what it reads
    // itself and panics (FAILED) on a wrong value.
    let checked = source != Source::Unchecked;
    if let Err(why) = (imp.support)(case.workload) {
        return Outcome::Excluded(why.to_string());
    }
    let ops = case.ops() as f64;

    // A probe with 1% of the queries tells whether one repetition fits the budget.
    if let (Some(budget), Some(q)) = (plan.budget, case.q) {
        if q >= 1000 {
            let probe = Case {
                q: Some(q / 100),
                ..*case
            };
            match run_caught(imp, &probe) {
                Err(e) => return Outcome::Failed(e),
                Ok(rep) => {
                    let projected = rep.elapsed.as_secs_f64() * 100.0;
                    if projected > budget.as_secs_f64() {
                        return Outcome::Excluded(format!(
                            "too slow for the time budget: one repetition would take about \
                             {projected:.0} s (timed from {} queries), over --budget {} s",
                            q / 100,
                            budget.as_secs()
                        ));
                    }
                }
            }
        }
    }

    let mut all = Vec::with_capacity(plan.reps);
    let mut shared = Vec::new();
    let mut last: Option<Rep> = None;
    let started = Instant::now();
    let mut session = match start_session(imp, case) {
        Ok(s) => s,
        Err(e) => return Outcome::Failed(e),
    };
    for r in 0..plan.reps {
        let rep_started = Instant::now();
        let rep = match catch_unwind(AssertUnwindSafe(&mut session)) {
            Ok(rep) => rep,
            Err(e) => return Outcome::Failed(panic_message(e)),
        };
        if checked && rep.checksum != expected {
            return Outcome::Mismatch {
                got: rep.checksum,
                rep: r + 1,
            };
        }
        let ns = rep.elapsed.as_nanos() as f64 / ops;
        all.push(ns);
        shared.extend(rep.shared.map(|sh| (sh, ns)));
        let alone = rep
            .shared
            .map(|sh| {
                format!(
                    " (alone {}: keeps {:.1}%)",
                    fmt_ns(sh.solo_ns),
                    100.0 * sh.solo_ns / ns
                )
            })
            .unwrap_or_default();
        progress(&format!(
            "rep {}/{}: {}{alone}",
            r + 1,
            plan.reps,
            fmt_ns(ns)
        ));
        last = Some(rep);
        between();
        if let Some(budget) = plan.budget {
            let spent = started.elapsed();
            if r + 1 < plan.reps && spent + rep_started.elapsed() > budget {
                progress(&format!(
                    "stopping after {} repetitions: the next would pass --budget {} s",
                    r + 1,
                    budget.as_secs()
                ));
                break;
            }
        }
    }
    drop(session); // the setup, untimed
    let rep = last.expect("at least one repetition");
    let bytes_per_entry = rep
        .node_bytes
        .filter(|_| rep.entries > 0)
        .map(|b| b as f64 / rep.entries as f64);
    let heap_bytes_per_entry = (case.workload == Workload::SeqStore && case.n > 0)
        .then(|| {
            // maple keeps the chunks of dropped trees in a per-thread cache; empty it so
            // that this build allocates (and counts) its own.
            maple_tree::release_cached_chunks();
            let (r, peak) = alloc_count::peak_bytes_during(|| run_caught(imp, case));
            r.ok().map(|_| peak as f64 / case.n as f64)
        })
        .flatten();
    Outcome::Ok(Timing {
        ns_per_op: median(&all),
        round_medians: vec![median(&all)],
        all_ns_per_op: all,
        checksum: rep.checksum,
        bytes_per_entry,
        heap_bytes_per_entry,
        shared: shared_timing(&shared),
        instructions_per_op: None,
    })
}

/// The medians of the repetitions' [`SharedRead`]s, each with its timed ns/op.
fn shared_timing(reps: &[(SharedRead, f64)]) -> Option<SharedTiming> {
    if reps.is_empty() {
        return None;
    }
    let of = |f: fn(&(SharedRead, f64)) -> f64| median(&reps.iter().map(f).collect::<Vec<_>>());
    Some(SharedTiming {
        solo_ns: of(|(sh, _)| sh.solo_ns),
        writer_ns: of(|(sh, _)| sh.writer_ns),
        kept: of(|(sh, under)| sh.solo_ns / under),
    })
}

/// ns with a unit for progress messages.
pub fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms/op", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs/op", ns / 1e3)
    } else {
        format!("{ns:.1} ns/op")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Impl;

    fn fake(run: fn(&Case) -> Rep) -> Impl {
        Impl {
            name: "fake",
            about: "",
            default: false,
            domain: |_| true,
            support: |_| Ok(()),
            run,
            session: None,
        }
    }

    fn measure_fake(run: fn(&Case) -> Rep) -> Measurement {
        let case = Case {
            workload: Workload::SeqStore,
            n: 21,
            q: None,
        };
        let plan = Plan {
            reps: 5,
            budget: None,
        };
        measure(&fake(run), case, (270, Source::Table), plan, &mut |_| {})
    }

    fn rep(checksum: u64) -> Rep {
        Rep {
            elapsed: Duration::from_nanos(2100),
            checksum,
            node_bytes: Some(2100),
            entries: 21,
            shared: None,
        }
    }

    #[test]
    fn a_right_checksum_is_a_result() {
        let m = measure_fake(|_| rep(270));
        assert!(!m.is_failure());
        let Outcome::Ok(t) = m.outcome else { panic!() };
        assert_eq!(t.ns_per_op, 100.0);
        assert_eq!(t.all_ns_per_op.len(), 5);
        assert_eq!(t.bytes_per_entry, Some(100.0));
    }

    #[test]
    fn a_wrong_checksum_is_a_failure() {
        let m = measure_fake(|_| rep(271));
        assert!(m.is_failure());
        assert!(matches!(m.outcome, Outcome::Mismatch { got: 271, rep: 1 }));
    }

    #[test]
    fn a_panic_is_a_failure() {
        let m = measure_fake(|_| panic!("not yet implemented"));
        assert!(matches!(&m.outcome, Outcome::Failed(e) if e.contains("not yet implemented")));
    }

    #[test]
    fn an_unsupported_workload_is_excluded_not_failed() {
        let imp = Impl {
            support: |_| Err("cannot"),
            ..fake(|_| rep(270))
        };
        let case = Case {
            workload: Workload::SeqStore,
            n: 21,
            q: None,
        };
        let m = measure(
            &imp,
            case,
            (270, Source::Table),
            Plan {
                reps: 5,
                budget: None,
            },
            &mut |_| {},
        );
        assert!(!m.is_failure());
        assert!(matches!(m.outcome, Outcome::Excluded(_)));
    }

    #[test]
    fn the_paired_ratio_is_the_median_of_per_turn_ratios() {
        // Ratios 2, 4, 3: the median of the ratios (3), not the ratio of the
        // medians (4 / 1 = 4).
        assert_eq!(paired_ratio(&[2.0, 4.0, 9.0], &[1.0, 1.0, 3.0]), 3.0);
        assert!(paired_ratio(&[1.0], &[]).is_nan());
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(&[5.0, 1.0, 3.0, 2.0, 4.0]), 3.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
    }
}
