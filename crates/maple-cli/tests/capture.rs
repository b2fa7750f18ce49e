//! `maple capture` end to end: captures a small shell pipeline under strace
//! and replays it. Needs strace (and ptrace allowed); without them the test
//! prints why and passes without checking (`.ci/run` installs strace).
//! The watcher must see each 150 ms stop; on a loaded machine it can miss
//! one (`maple capture` then warns), so a capture is retried up to 5 times,
//! and the test checks nothing (it says so) if all of them lost a stop.

use std::path::PathBuf;
use std::process::Command;

fn strace_works() -> Result<(), String> {
    match Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!(
            "`strace true` failed ({s}): ptrace not allowed here?"
        )),
        Err(e) => Err(format!("strace not found ({e}); `apt-get install strace`")),
    }
}

#[test]
fn capture_then_replay_a_pipeline() {
    if let Err(why) = strace_works() {
        eprintln!("SKIPPED capture_then_replay_a_pipeline: {why}");
        return;
    }
    let maple = env!("CARGO_BIN_EXE_maple");
    let base = std::env::temp_dir().join(format!("maple-capture-test-{}", std::process::id()));
    let mut last = String::new();
    for attempt in 0..5 {
        let dir: PathBuf = base.join(format!("try{attempt}"));
        let _ = std::fs::remove_dir_all(&dir);
        let o = Command::new(maple)
            .args(["capture", "--out"])
            .arg(&dir)
            .args(["--", "sh", "-c", "ls / | wc -l"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "capture failed: {err}");
        assert_eq!(std::fs::read_to_string(dir.join("rc")).unwrap(), "rc=0\n");
        assert!(std::fs::read_to_string(dir.join("command"))
            .unwrap()
            .starts_with("sh -c ls / | wc -l"));
        // Timing, not correctness: on a loaded machine the watcher can miss
        // a stop, or the process can leave its stop while smaps is read
        // (then the capture leaves that vmflags file out). Try again.
        if err.contains("missed a stop") || err.contains("left its stop") {
            last = err;
            continue;
        }
        let snaps = std::fs::read_to_string(dir.join("snapshots.tsv")).unwrap();
        // sh, ls and wc: an execexit and an exit each; the children's execentry.
        let count = |p: &str| {
            snaps
                .lines()
                .filter(|l| l.split('\t').nth(4) == Some(p))
                .count()
        };
        assert_eq!(count("execexit"), 3, "{snaps}");
        assert_eq!(count("exit"), 3, "{snaps}");
        assert!(count("execentry") >= 2, "{snaps}");
        for l in snaps.lines() {
            let c: Vec<&str> = l.split('\t').collect();
            let name = format!("{}.{}.{}", c[1], c[3], c[4]);
            let maps = std::fs::read_to_string(dir.join(format!("maps.{name}"))).unwrap();
            let flags = std::fs::read_to_string(dir.join(format!("vmflags.{name}"))).unwrap();
            assert_eq!(maps.lines().count(), flags.lines().count(), "{name}");
            assert!(maps.contains("[stack]"), "{name}");
        }
        let r = Command::new(maple)
            .arg("replay")
            .arg(&dir)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let summary = out.lines().find(|l| l.starts_with("summary:")).unwrap();
        assert!(summary.contains("processes=3 "), "{out}");
        assert!(summary.contains("unreplayed=0 "), "{out}");
        assert!(summary.contains("result_mismatches=0 "), "{out}");
        assert!(
            summary.contains("final_layouts=3 final_boundaries_exact=3 "),
            "{out}"
        );
        let _ = std::fs::remove_dir_all(&base);
        return;
    }
    // Five captures in a row lost a stop to the machine's load: that says
    // nothing about the code, so the test does not fail on it.
    eprintln!("SKIPPED capture_then_replay_a_pipeline: five captures missed a stop: {last}");
}
