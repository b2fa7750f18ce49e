//! Bad command lines get a clear error and exit status 2, before anything runs.

use std::process::Command;

/// Runs the built `maple` with `args`; returns (exit code, stderr).
fn maple(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_maple"))
        .args(args)
        .output()
        .expect("run maple");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn zero_repetitions_are_refused() {
    let (code, err) = maple(&[
        "bench", "-w", "iter", "-i", "maple", "--n", "10", "--reps", "0",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--reps must be at least 1"), "{err}");
    let (code, err) = maple(&["fork-table", "--n", "21", "--reps", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--reps must be at least 1"), "{err}");
}

#[test]
fn a_zero_seq_n_is_refused() {
    let (code, err) = maple(&["fork-table", "--n", "21", "--seq-n", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--seq-n must be at least 1"), "{err}");
}

/// Sizes no machine of this kind can hold are refused at once instead of
/// computing a reference checksum for minutes while memory grows.
#[test]
fn sizes_beyond_the_memory_are_refused() {
    for args in [
        &["bench", "-w", "iter", "-i", "maple", "--n", "10000000000"][..],
        &["bench", "-w", "first_write", "--n", "17179869184"][..],
        &["fork-table", "--n", "21", "--seq-n", "10000000000"][..],
    ] {
        let (code, err) = maple(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("of memory"), "{args:?}: {err}");
        assert!(err.contains("choose a smaller --n"), "{args:?}: {err}");
    }
}

/// A small run through the fresh-process path reproduces the checksum.
#[test]
fn each_pair_runs_in_a_fresh_process() {
    let out = Command::new(env!("CARGO_BIN_EXE_maple"))
        .args([
            "bench",
            "-w",
            "iter",
            "-i",
            "maple,btreemap",
            "--n",
            "1000",
            "--reps",
            "1",
            "-f",
            "lines",
        ])
        .output()
        .expect("run maple");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("workload=iter impl=maple n=1000 ns_per_op="),
        "{text}"
    );
    assert!(
        text.contains("workload=iter impl=btreemap n=1000 ns_per_op="),
        "{text}"
    );
    assert_eq!(text.matches("checksum=500548").count(), 2, "{text}");
}
