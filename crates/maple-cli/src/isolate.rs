//! Every (workload, implementation) pair in a fresh process, and instruction
//! counts under callgrind.
//!
//! Run in one process, an implementation measured late builds its structures
//! in a heap that earlier measurements have aged (freed chunks of every size,
//! scattered), while the first one gets a fresh heap: neither is a fair
//! comparison. So `maple bench` re-executes itself once per pair (`--child`,
//! hidden), handing over the expected checksum, and reads the measurement
//! back as JSON.
//!
//! `--count instructions` adds one more child per pair, run with one
//! repetition under `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect='*timed_part*'`: callgrind counts only the instructions of
//! the timed parts (see `timer.rs`), which are the same on every run however
//! noisy the machine. Hardware counters (`perf_event_open`) would be cheaper,
//! but the VMs this project is measured on expose none (`perf stat -e
//! instructions:u` says "not supported"), so callgrind is the one way that
//! works everywhere; it runs about 50 times slower than native.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::expected::Source;
use crate::measure::{Measurement, Outcome, Plan, SharedTiming, Timing};
use crate::registry::Impl;
use crate::timer::TOGGLE_PATTERN;
use crate::workloads::{Case, Workload};

/// The `--expect-from` names of [`Source`].
pub fn source_name(s: Source) -> &'static str {
    match s {
        Source::Table => "table",
        Source::Model => "model",
        Source::Unchecked => "unchecked",
    }
}

/// Parses [`source_name`]'s names.
pub fn parse_source(s: &str) -> Result<Source, String> {
    match s {
        "table" => Ok(Source::Table),
        "model" => Ok(Source::Model),
        "unchecked" => Ok(Source::Unchecked),
        _ => Err(format!("unknown checksum source {s:?}")),
    }
}

/// The arguments that make a child measure `imp` on `case`.
fn child_args(imp: &Impl, case: &Case, expected: (u64, Source), plan: Plan) -> Vec<String> {
    let mut a = vec![
        "bench".to_string(),
        "--child".into(),
        "--workload".into(),
        case.workload.name().into(),
        "--impl".into(),
        imp.name.into(),
        "--n".into(),
        case.n.to_string(),
        "--reps".into(),
        plan.reps.to_string(),
        "--budget".into(),
        plan.budget.map_or(0, |b| b.as_secs().max(1)).to_string(),
        "--format".into(),
        "json".into(),
        "--expect".into(),
        expected.0.to_string(),
        "--expect-from".into(),
        source_name(expected.1).into(),
    ];
    if let Some(q) = case.q {
        a.extend(["--q".into(), q.to_string()]);
    }
    a
}

fn this_program() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find this program to re-execute: {e}"))
}

/// Measures `imp` on `case` in a fresh process.
pub fn measure(imp: &'static Impl, case: Case, expected: (u64, Source), plan: Plan) -> Measurement {
    let outcome = run_child(imp, &case, expected, plan).unwrap_or_else(Outcome::Failed);
    Measurement::new(imp, case, expected, outcome)
}

fn run_child(
    imp: &Impl,
    case: &Case,
    expected: (u64, Source),
    plan: Plan,
) -> Result<Outcome, String> {
    let out = Command::new(this_program()?)
        .args(child_args(imp, case, expected, plan))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start the child process: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the child process ({}) printed no measurement: {e}",
            out.status
        )
    })?;
    let m = v
        .as_array()
        .and_then(|a| a.first())
        .ok_or("the child process printed an empty result")?;
    outcome_from_json(m)
}

fn f64_of(m: &Value, key: &str) -> Option<f64> {
    m.get(key).and_then(Value::as_f64)
}

/// The inverse of `report::json` for one measurement.
fn outcome_from_json(m: &Value) -> Result<Outcome, String> {
    let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Ok(match m.get("status").and_then(Value::as_str) {
        Some("ok") => {
            let shared = match (
                f64_of(m, "solo_ns_per_op"),
                f64_of(m, "writer_ns_per_store"),
                f64_of(m, "reader_keeps"),
            ) {
                (Some(solo_ns), Some(writer_ns), Some(kept)) => Some(SharedTiming {
                    solo_ns,
                    writer_ns,
                    kept,
                }),
                _ => None,
            };
            let ns_per_op = f64_of(m, "ns_per_op").ok_or("no ns_per_op")?;
            Outcome::Ok(Timing {
                ns_per_op,
                // The child measured one turn.
                round_medians: vec![ns_per_op],
                all_ns_per_op: m
                    .get("repetitions_ns_per_op")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_f64).collect())
                    .unwrap_or_default(),
                checksum: m.get("checksum").and_then(Value::as_u64).unwrap_or(0),
                bytes_per_entry: f64_of(m, "bytes_per_entry"),
                heap_bytes_per_entry: f64_of(m, "heap_bytes_per_entry"),
                shared,
                instructions_per_op: None,
            })
        }
        Some("excluded") => Outcome::Excluded(text("reason")),
        Some("checksum_mismatch") => Outcome::Mismatch {
            got: m.get("checksum").and_then(Value::as_u64).unwrap_or(0),
            rep: m.get("repetition").and_then(Value::as_u64).unwrap_or(0) as usize,
        },
        Some("failed") => Outcome::Failed(text("reason")),
        other => return Err(format!("the child process reported status {other:?}")),
    })
}

/// Instructions per operation of `imp` on `case`: one repetition in a child
/// under callgrind, counting only the timed part.
pub fn count_instructions(imp: &Impl, case: &Case, expected: (u64, Source)) -> Result<f64, String> {
    if case.workload == Workload::RcuReadUnderWrite {
        // A writer thread runs through the reader's timed part, and the
        // reader waits on it (spinning, which valgrind's one-thread-at-a-time
        // schedule makes very slow): no count per lookup would mean much.
        return Err("not counted for a reader paired with a writer thread".into());
    }
    let file = std::env::temp_dir().join(format!(
        "maple-callgrind-{}-{}-{}.out",
        std::process::id(),
        imp.name,
        case.workload.name()
    ));
    let plan = Plan {
        reps: 1,
        budget: None,
    };
    let status = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--collect-atstart=no",
            &format!("--toggle-collect={TOGGLE_PATTERN}"),
            &format!("--callgrind-out-file={}", file.display()),
        ])
        .arg(this_program()?)
        .args(child_args(imp, case, expected, plan))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| {
            format!("cannot run valgrind (apt-get install valgrind) for --count instructions: {e}")
        })?;
    let text = std::fs::read_to_string(&file);
    let _ = std::fs::remove_file(&file);
    if !status.success() {
        return Err(format!("the callgrind run failed ({status})"));
    }
    let text = text.map_err(|e| format!("callgrind wrote no profile: {e}"))?;
    let total = callgrind_total(&text).ok_or("the callgrind profile has no total")?;
    if total == 0 {
        // A timed part that does not go through `timed_part` is a bug of
        // this harness; say so rather than report 0.
        return Err("its timed part never ran through timed_part".into());
    }
    Ok(total as f64 / case.ops() as f64)
}

/// The instruction total of a callgrind profile (its `summary:` or `totals:` line).
fn callgrind_total(profile: &str) -> Option<u64> {
    profile.lines().find_map(|l| {
        let rest = l
            .strip_prefix("summary:")
            .or_else(|| l.strip_prefix("totals:"))?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_totals_are_read() {
        let p = "version: 1\nevents: Ir\nfn=(1) main\n16 3\nsummary: 463808\ntotals: 463808\n";
        assert_eq!(callgrind_total(p), Some(463808));
        assert_eq!(callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn sources_round_trip() {
        for s in [Source::Table, Source::Model, Source::Unchecked] {
            assert_eq!(parse_source(source_name(s)), Ok(s));
        }
        assert!(parse_source("guess").is_err());
    }
}
