//! `--plot DIR`: `maple bench` writes its charts as SVG files, and a DIR that
//! cannot take them is refused before anything runs, by `bench` and `fork-table`.
//! (`fork-table`'s charts are tested on made-up rows in `src/plot/fork_table.rs`:
//! its smallest run copies 2,000,000 entries per N, too slow for a debug build.)

use std::path::{Path, PathBuf};
use std::process::Command;

use svg::node::element::tag::Type;
use svg::parser::Event;

/// Runs the built `maple` with `args`; returns (exit code, stdout, stderr).
fn maple(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_maple"))
        .args(args)
        .output()
        .expect("run maple");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh, empty directory of this test's own.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("maple-plot-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Parses `path` as SVG: every tag well formed, one `<svg>` root opened and
/// closed; returns the file's text content (titles, labels, legends).
fn svg_text(path: &Path) -> String {
    let content =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut depth = 0i32;
    let mut roots = 0;
    let mut shapes = 0;
    let mut text = String::new();
    for event in svg::read(&content).expect("an SVG document") {
        match event {
            Event::Error(e) => panic!("{}: not valid SVG: {e}", path.display()),
            Event::Tag("svg", Type::Start, _) => {
                roots += 1;
                depth += 1;
            }
            Event::Tag("svg", Type::End, _) => depth -= 1,
            Event::Tag("polyline" | "rect" | "circle", _, _) => shapes += 1,
            Event::Text(t) => {
                text.push_str(t.trim());
                text.push('\n');
            }
            _ => {}
        }
    }
    assert_eq!(
        (roots, depth),
        (1, 0),
        "{}: one closed <svg> root",
        path.display()
    );
    assert!(shapes > 3, "{}: nothing drawn", path.display());
    text
}

#[test]
fn bench_writes_one_chart_per_workload() {
    let dir = fresh_dir("bench");
    let d = dir.to_str().unwrap();
    let (code, out, err) = maple(&[
        "bench",
        "-w",
        "load,iter",
        "-i",
        "maple,btreemap",
        "--n",
        "300",
        "--q",
        "3000",
        "--reps",
        "1",
        "--in-process",
        "--format",
        "lines",
        "--plot",
        d,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("workload=iter impl=btreemap n=300"), "{out}");
    assert!(err.contains("wrote 2 chart(s)"), "{err}");
    for (file, op) in [("load.svg", "ns per lookup"), ("iter.svg", "ns per entry")] {
        let text = svg_text(&dir.join(file));
        for want in [op, "maple", "btreemap", "N = 300"] {
            assert!(text.contains(want), "{file} lacks {want:?}:\n{text}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_plot_directory_is_refused_before_anything_runs() {
    let file = fresh_dir("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let f = file.to_str().unwrap();
    let under = format!("{f}/charts");
    for args in [
        vec![
            "bench", "-w", "iter", "-i", "maple", "--n", "10", "--plot", f,
        ],
        vec!["fork-table", "--n", "21", "--plot", f],
        vec![
            "bench", "-w", "iter", "-i", "maple", "--n", "10", "--plot", &under,
        ],
    ] {
        let (code, out, err) = maple(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} measured something: {out}");
        assert!(
            err.contains("not a directory") || err.contains("cannot create the directory"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_file(&file).unwrap();
}
