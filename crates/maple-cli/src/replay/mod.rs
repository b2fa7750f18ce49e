//! `maple replay DIR --out OUT`: replays a capture (written by
//! `maple capture`, format in `captures/FORMAT.md`) on the maple-mm
//! model and compares it with the kernel.
//!
//! Writes, for every snapshot that is not an `execexit` seed,
//! `OUT/maps.<tgid>.<seq>.<phase>` (the model's layout at that moment in
//! `/proc/PID/maps` format) and `OUT/vmflags.<…>`, and `OUT/placements.tsv`
//! (`tgid tid time syscall kernel_address model_address` per non-fixed
//! `mmap` and moving `mremap`); prints a report per process and a `summary:`
//! line of `key=value` figures.

mod compare;
mod decode;
mod engine;
mod exec_layout;
mod first_writes;
mod input;
mod races;
mod strace;
mod svg;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::time::Instant;

pub use engine::Outcome;
use input::{Capture, Phase};

/// The arguments of `maple replay`.
pub struct ReplayArgs {
    /// The capture directory.
    pub dir: PathBuf,
    /// Where to write the model's snapshots and placements.tsv.
    pub out: Option<PathBuf>,
    /// Draw a process's final layout to this SVG file.
    pub svg: Option<PathBuf>,
    /// The process to draw (default: the first with an `exit` snapshot).
    pub svg_tgid: Option<u32>,
    /// The commit limit of the machine the capture was taken on
    /// ([`maple_mm::Config::commit_limit`]).
    pub commit_limit: Option<u64>,
}

/// This machine's commit limit for the heuristic overcommit: `MemTotal` plus
/// `SwapTotal` of `/proc/meminfo` (`totalram_pages() + total_swap_pages`),
/// or None where that cannot be read.
pub fn host_commit_limit() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    };
    Some((kib("MemTotal:")? + kib("SwapTotal:").unwrap_or(0)) << 10)
}

/// The figures of a replay, summed over its processes.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Totals {
    pub processes: usize,
    pub calls: usize,
    pub placements: usize,
    pub placement_misses: usize,
    pub result_mismatches: usize,
    pub not_modelled: usize,
    pub snapshots: usize,
    pub snapshots_pages_equal: usize,
    pub final_layouts: usize,
    pub final_boundaries_exact: usize,
    pub flag_diffs: usize,
    pub empty_snapshots: usize,
    pub unreplayed: usize,
}

fn totals(o: &Outcome) -> Totals {
    let mut t = Totals {
        unreplayed: o.unreplayed.len(),
        ..Default::default()
    };
    for p in o.procs.values() {
        t.processes += 1;
        t.calls += p.calls;
        t.placements += p.placements;
        t.placement_misses += p.placement_misses;
        t.result_mismatches += p.result_mismatches;
        t.not_modelled += p.not_modelled.values().sum::<usize>();
        t.empty_snapshots += p.empty_snapshots;
        for s in &p.snapshots {
            t.snapshots += 1;
            t.snapshots_pages_equal += (s.diff.pages_differ == 0) as usize;
            t.flag_diffs += s.diff.flag_diffs;
            if s.phase == Phase::Exit {
                t.final_layouts += 1;
                t.final_boundaries_exact += (s.diff.boundary_diffs == 0) as usize;
            }
        }
    }
    t
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// The per-process report.
fn report(o: &Outcome) -> String {
    let mut s = String::new();
    for p in o.procs.values() {
        let _ = writeln!(
            s,
            "process {} ({}): {} memory calls replayed, placements {}/{} at the kernel's address, {} result mismatches",
            p.tgid,
            if p.exe.is_empty() { "?" } else { &p.exe },
            p.calls,
            p.placements - p.placement_misses,
            p.placements,
            p.result_mismatches
        );
        if p.before_seed > 0 {
            let _ = writeln!(
                s,
                "  {} calls before the first execexit snapshot (the capture wrapper) not replayed",
                p.before_seed
            );
        }
        if p.stack_growths > 0 {
            let _ = writeln!(
                s,
                "  {} stack growths (page faults, not in the trace) taken from snapshots",
                p.stack_growths
            );
        }
        if p.empty_snapshots > 0 {
            let _ = writeln!(
                s,
                "  {} empty snapshots (the process's memory already released) not compared",
                p.empty_snapshots
            );
        }
        if p.before_seed_snapshots > 0 {
            let _ = writeln!(
                s,
                "  {} execentry snapshots before the first execexit (strace's child, the capture wrapper) not compared",
                p.before_seed_snapshots
            );
        }
        if !p.not_modelled.is_empty() {
            let list: Vec<String> = p
                .not_modelled
                .iter()
                .map(|(k, v)| format!("{k} ×{v}"))
                .collect();
            let _ = writeln!(s, "  not expressible in the model: {}", list.join(", "));
        }
        for m in &p.mismatch_examples {
            let _ = writeln!(s, "  result differs: {m}");
        }
        for snap in &p.snapshots {
            let d = &snap.diff;
            let _ = writeln!(
                s,
                "  snapshot {}: VMAs kernel {} model {}; pages {} ({} of {} differ); boundaries {} ({} differ); VmFlags differ on {} VMAs",
                snap.name,
                snap.vmas.0,
                snap.vmas.1,
                if d.pages_differ == 0 { "equal" } else { "DIFFER" },
                d.pages_differ,
                d.pages,
                if d.boundary_diffs == 0 { "exact" } else { "DIFFER" },
                d.boundary_diffs,
                d.flag_diffs
            );
            for (k, m) in &d.examples {
                let _ = writeln!(s, "    kernel {k:<60} | model {m}");
            }
            for f in &d.flag_examples {
                let _ = writeln!(s, "    flags  {f}");
            }
        }
    }
    for u in &o.unreplayed {
        let _ = writeln!(s, "not replayed: {u}");
    }
    s
}

/// The `summary:` line.
fn summary_line(t: &Totals, secs: f64) -> String {
    format!(
        "summary: processes={} calls={} placements={} placement_hits={} placement_hit_rate={} result_mismatches={} not_modelled={} snapshots={} snapshots_pages_equal={} final_layouts={} final_boundaries_exact={} vmflags_diffs={} empty_snapshots={} unreplayed={} replay_seconds={:.3}",
        t.processes,
        t.calls,
        t.placements,
        t.placements - t.placement_misses,
        pct(t.placements - t.placement_misses, t.placements),
        t.result_mismatches,
        t.not_modelled,
        t.snapshots,
        t.snapshots_pages_equal,
        t.final_layouts,
        t.final_boundaries_exact,
        t.flag_diffs,
        t.empty_snapshots,
        t.unreplayed,
        secs
    )
}

/// Runs `maple replay`; prints the report.
pub fn run(a: &ReplayArgs) -> Result<Totals, String> {
    let t0 = Instant::now();
    let cap = Capture::open(&a.dir)?;
    let outcome = engine::replay(&cap, a.commit_limit)?;
    let secs = t0.elapsed().as_secs_f64();
    if let Some(out) = &a.out {
        fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let write = |name: String, text: &str| -> Result<(), String> {
            let p = out.join(name);
            fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
        };
        write("placements.tsv".into(), &outcome.placements_tsv)?;
        for p in outcome.procs.values() {
            for s in &p.snapshots {
                write(format!("maps.{}", s.name), &s.model_maps)?;
                write(format!("vmflags.{}", s.name), &s.model_vmflags)?;
            }
        }
    }
    if let Some(path) = &a.svg {
        let pick = outcome
            .procs
            .values()
            .filter(|p| a.svg_tgid.is_none_or(|t| t == p.tgid))
            .find_map(|p| {
                p.snapshots
                    .iter()
                    .rev()
                    .find(|s| s.phase == Phase::Exit)
                    .or(p.snapshots.last())
                    .map(|s| (p, s))
            });
        let Some((p, s)) = pick else {
            return Err(match a.svg_tgid {
                Some(t) => format!("--svg: process {t} has no compared snapshot"),
                None => "--svg: no process has a compared snapshot".into(),
            });
        };
        let title = format!("{} — {} ({})", cap.command, s.name, p.exe);
        let doc = svg::draw(&title, &s.kernel_lines, &s.model_lines);
        fs::write(path, doc).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let t = totals(&outcome);
    print!("{}", report(&outcome));
    println!("{}", summary_line(&t, secs));
    Ok(t)
}
