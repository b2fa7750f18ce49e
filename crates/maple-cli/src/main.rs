//! `maple`: the command of the maple project. `maple bench` runs the workloads of
//! the repository's BENCHMARKS.md against maple and the Rust peers, and its
//! address-space workloads on maple-mm, plus the RCU benchmark; it checks every
//! checksum, and prints BENCHMARKS.md's one-line format and tables (the ratio table,
//! fork by VMA count and per GiB, RCU readers under a writer); `maple fork-table`
//! prints the dup / rebuild / memcpy table; both draw SVG charts with `--plot DIR`
//! (the `plot` module); `maple capture` records a real
//! program's memory system calls and layouts under strace, and `maple replay`
//! replays them on maple-mm and compares (see the `capture` and `replay`
//! modules).

mod alloc_count;
mod bench;
mod bodies;
mod capture;
mod expected;
mod fork_table;
mod isolate;
mod malloc_tuning;
mod measure;
mod mm;
mod mm_workloads;
mod peers;
mod plot;
mod published;
mod range_map;
mod rcu;
mod reference;
mod registry;
mod rep;
mod replay;
mod report;
mod rng;
mod timer;
mod workloads;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::measure::{Measurement, Plan};
use crate::report::Format;
use crate::workloads::{Case, Provider, Workload, FORK_TABLE_NS};

#[global_allocator]
static ALLOC: alloc_count::Counting = alloc_count::Counting;

#[derive(Parser)]
#[command(
    name = "maple",
    version,
    about = "Benchmarks the maple tree and the maple-mm address space against BTreeMap, rangemap, nodit and vm-allocator, checking every result"
)]
struct Cli {
    /// Leave glibc's malloc defaults (by default freed memory stays in the process,
    /// so that no repetition pays page faults another does not; see malloc_tuning.rs).
    #[arg(long, global = true)]
    malloc_default: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the workloads of BENCHMARKS.md against maple and the peers (and its
    /// address-space workloads on maple-mm, and the RCU benchmark), check every
    /// checksum, print the results.
    Bench(BenchArgs),
    /// Duplication: dup vs rebuild vs a plain memory copy, and the append path.
    ForkTable(ForkArgs),
    /// Print the reference model's checksums (and compare with BENCHMARKS.md's table).
    Reference(RefArgs),
    /// List the workloads, the implementations, and which runs which.
    List,
    /// Run a command under strace (randomization off) and write a capture of its
    /// memory system calls and /proc/PID/maps snapshots (captures/FORMAT.md).
    Capture(CaptureCli),
    /// Replay a capture on the maple-mm model and compare it with the kernel's
    /// layouts: a report per process, OUT/maps.* and OUT/placements.tsv.
    Replay(ReplayCli),
    /// The wrapper `maple capture` starts the command through (execs its arguments).
    #[command(name = "__capture-exec", hide = true)]
    CaptureExec {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

#[derive(Args)]
struct ReplayCli {
    /// The capture directory.
    dir: std::path::PathBuf,
    /// Write the model's snapshots (maps.*, vmflags.*) and placements.tsv here.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Draw a process's final layout (kernel above model, differences marked) as SVG.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// The process --svg draws (default: the first with an exit snapshot).
    #[arg(long)]
    svg_tgid: Option<u32>,
    /// The commit limit of the machine the capture was taken on, in bytes
    /// (its RAM plus swap): under Linux's default heuristic overcommit one
    /// charge above it fails with ENOMEM. Captures do not record it; by
    /// default the replay takes this machine's (MemTotal + SwapTotal of
    /// /proc/meminfo), right for a capture of the same machine class.
    /// `none`: no limit (as vm.overcommit_memory = 1).
    #[arg(long, value_parser = parse_commit_limit)]
    commit_limit: Option<CommitLimit>,
}

/// `--commit-limit`: bytes, or `none`.
#[derive(Clone, Copy)]
enum CommitLimit {
    Bytes(u64),
    None,
}

fn parse_commit_limit(s: &str) -> Result<CommitLimit, String> {
    if s == "none" {
        return Ok(CommitLimit::None);
    }
    s.parse()
        .map(CommitLimit::Bytes)
        .map_err(|_| format!("'{s}' is neither a number of bytes nor 'none'"))
}

#[derive(Args)]
struct CaptureCli {
    /// The capture directory to write (created; must be empty).
    #[arg(long)]
    out: std::path::PathBuf,
    /// Also trace open/openat/openat2/creat/memfd_create/dup*/close and
    /// pkey_alloc/pkey_free and shmget, so that the replay knows each mapped
    /// file's open mode, the allocated protection keys and the size of each
    /// System V segment (an extension of the capture format: the replay
    /// reads captures with or without them).
    #[arg(long)]
    state_calls: bool,
    /// The command and its arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<std::ffi::OsString>,
}

#[derive(Args)]
struct BenchArgs {
    /// Workloads to run (repeatable, or a comma list); `tree`, `mm`, `rcu` name
    /// groups, `all` every workload. Default: all.
    #[arg(short, long = "workload", value_delimiter = ',')]
    workloads: Vec<String>,
    /// Implementations (repeatable, or a comma list). Default: maple, every peer,
    /// the mm-* strategies and maple-rcu(-b64); each runs only its own workloads.
    #[arg(short, long = "impl", value_delimiter = ',')]
    impls: Vec<String>,
    /// N for every selected workload (default: BENCHMARKS.md's sizes).
    #[arg(long)]
    n: Option<u64>,
    /// Q for every selected workload that has one.
    #[arg(long)]
    q: Option<u64>,
    /// Smaller sizes: everything in about two minutes on two cores. Expected
    /// checksums then come from the reference model.
    #[arg(long)]
    quick: bool,
    /// Run every measurement in this process instead of a fresh process per
    /// (workload, implementation) pair: quicker to start, but later
    /// implementations then build in a heap aged by earlier ones.
    #[arg(long)]
    in_process: bool,
    /// Rounds: sweeps over every case, in each of which the implementations
    /// of a case take turns, each turn a whole measurement; the median over
    /// the turns is reported, and a peer's ratio to maple is the median over
    /// the rounds of its ratio within a round. A slow stretch of the machine
    /// then slows a round's pair alike, and no case rests on one stretch of
    /// the run (what `scripts/results.sh` uses for the README's table).
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Also count instructions per operation of the timed parts (`instructions`:
    /// one extra repetition per pair under valgrind's callgrind, about 50× slower).
    #[arg(long, value_enum)]
    count: Option<CountKind>,
    /// Internal: measure one pair here and print it as JSON (how each pair
    /// runs in a fresh process).
    #[arg(long, hide = true)]
    child: bool,
    /// Internal, with --child: the checksum the parent expects.
    #[arg(long, hide = true)]
    expect: Option<u64>,
    /// Internal, with --child: where the expected checksum comes from.
    #[arg(long, hide = true)]
    expect_from: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// What `--count` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CountKind {
    /// Instructions executed in the timed part, per operation (callgrind).
    Instructions,
}

#[derive(Args)]
struct ForkArgs {
    /// The N values (comma list). Default: the fork table's 21 .. 51221 and 1000000.
    #[arg(long, value_delimiter = ',')]
    n: Vec<u64>,
    /// N of the seq_store append comparison (default 1000000; 100000 with --quick).
    #[arg(long)]
    seq_n: Option<u64>,
    /// Smaller N set (21, 821, 12821, 100000).
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct Common {
    /// Output formats (comma list): lines = BENCHMARKS.md's one-line format,
    /// table / markdown = the ratio table, json.
    #[arg(short, long, value_delimiter = ',', default_value = "lines,table")]
    format: Vec<Format>,
    /// Repetitions per measurement (BENCHMARKS.md: 5).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Time budget of one measurement, in seconds (0 = none). Over it, fewer
    /// repetitions run (the table says so), or, if one alone would not fit, the
    /// measurement is excluded with its projected time. Default: 600, or 30 with --quick.
    #[arg(long)]
    budget: Option<u64>,
    /// Also draw the results as SVG charts into this directory (created if missing):
    /// `bench`, one per workload (ns/op and, with `--count instructions`,
    /// instructions/op of every implementation, against N where N varies);
    /// `fork-table`, `fork_table.svg` and `fork_rate.svg`.
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
}

#[derive(Args)]
struct RefArgs {
    /// Workloads (default: all; `tree`, `mm`, `rcu` name groups).
    #[arg(short, long = "workload", value_delimiter = ',')]
    workloads: Vec<String>,
    #[arg(long)]
    n: Option<u64>,
    #[arg(long)]
    q: Option<u64>,
    #[arg(long)]
    quick: bool,
    /// Every case of BENCHMARKS.md's reference table, at its own sizes.
    #[arg(long)]
    table: bool,
}

/// The workloads `--workload` names: none or `all` = every workload; `tree`, `mm`,
/// `rcu` = a group (`maple list`).
fn parse_workloads(names: &[String]) -> Result<Vec<Workload>, String> {
    if names.is_empty() || names.iter().any(|n| n.trim() == "all") {
        return Ok(Workload::ALL.to_vec());
    }
    let mut out = Vec::new();
    for n in names {
        let n = n.trim();
        let ws: Vec<Workload> = match Provider::ALL.into_iter().find(|p| p.name() == n) {
            Some(p) => Workload::ALL
                .into_iter()
                .filter(|w| w.provider() == p)
                .collect(),
            None => vec![Workload::from_name(n).ok_or_else(|| {
                let all: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!(
                    "unknown workload {n:?}; known: {}, or a group: tree, mm, rcu, all",
                    all.join(", ")
                )
            })?],
        };
        for w in ws {
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    Ok(out)
}

fn parse_impls(names: &[String]) -> Result<Vec<&'static registry::Impl>, String> {
    if names.is_empty() {
        return Ok(registry::IMPLS.iter().filter(|i| i.default).collect());
    }
    let mut out: Vec<&'static registry::Impl> = Vec::new();
    for n in names {
        if n == "all" {
            return Ok(registry::IMPLS.iter().collect());
        }
        let i = registry::by_name(n.trim()).ok_or_else(|| {
            let all: Vec<&str> = registry::IMPLS.iter().map(|i| i.name).collect();
            format!("unknown implementation {n:?}; known: {}", all.join(", "))
        })?;
        if !out.iter().any(|o| o.name == i.name) {
            out.push(i);
        }
    }
    Ok(out)
}

/// Refuses `--reps 0`: a measurement needs at least one repetition.
fn check_reps(common: &Common) -> Result<(), String> {
    if common.reps == 0 {
        return Err("--reps must be at least 1 (BENCHMARKS.md: 5)".into());
    }
    Ok(())
}

fn plan(common: &Common, quick: bool) -> Plan {
    let budget = common.budget.unwrap_or(if quick { 30 } else { 600 });
    Plan {
        reps: common.reps,
        budget: (budget > 0).then(|| Duration::from_secs(budget)),
    }
}

/// Prints the results; returns whether every measurement passed.
fn finish(
    ms: &[Measurement],
    impls: &[&str],
    formats: &[Format],
    reps: usize,
    extra_lines: &str,
) -> ExitCode {
    for (k, f) in formats.iter().enumerate() {
        if k > 0 {
            println!();
        }
        match f {
            Format::Lines => print!("{}{extra_lines}", report::lines(ms)),
            Format::Table => print!("{}", report::tables(ms, impls, reps, false)),
            Format::Markdown => print!("{}", report::tables(ms, impls, reps, true)),
            Format::Json => print!("{}", report::json(ms)),
        }
    }
    let failures: Vec<&Measurement> = ms.iter().filter(|m| m.is_failure()).collect();
    if failures.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "\nerror: {} measurement(s) are not results:",
        failures.len()
    );
    eprint!(
        "{}",
        report::lines(&failures.into_iter().cloned().collect::<Vec<_>>())
    );
    ExitCode::FAILURE
}

fn cmd_bench(a: BenchArgs) -> Result<ExitCode, String> {
    let workloads = parse_workloads(&a.workloads)?;
    let impls = parse_impls(&a.impls)?;
    let sizes = bench::Sizes {
        n: a.n,
        q: a.q,
        quick: a.quick,
    };
    check_reps(&a.common)?;
    if a.rounds == 0 {
        return Err("--rounds must be at least 1".into());
    }
    let cases = bench::cases(&workloads, sizes);
    bench::check_sizes(&cases)?;
    bench::check_memory(&cases)?;
    let pairs = bench::pairs(&cases, &impls);
    if pairs.is_empty() {
        return Err(
            "none of the selected implementations runs any of the selected workloads \
             (see `maple list`)"
                .into(),
        );
    }
    for w in &workloads {
        if !pairs.iter().any(|(c, _)| c.workload == *w) {
            eprintln!("note: no selected implementation runs {w} (see `maple list`)");
        }
    }
    let plan = plan(&a.common, a.quick);
    if a.child {
        return bench_child(&a, &pairs, plan);
    }
    if let Some(dir) = &a.common.plot {
        plot::prepare_dir(dir)?;
    }
    let isolation = bench::Isolation {
        fresh_process: !a.in_process,
        count_instructions: a.count == Some(CountKind::Instructions),
        rounds: a.rounds,
    };
    let ms = bench::run_isolated(&cases, &impls, plan, isolation);
    let names: Vec<&str> = impls.iter().map(|i| i.name).collect();
    let code = finish(&ms, &names, &a.common.format, plan.reps, "");
    if let Some(dir) = &a.common.plot {
        let charts = plot::bench_charts(&ms, dir)?;
        eprintln!("wrote {} chart(s) to {}", charts.len(), dir.display());
    }
    Ok(code)
}

/// `maple bench --child`: one pair, measured here, printed as JSON.
fn bench_child(
    a: &BenchArgs,
    pairs: &[(Case, &'static registry::Impl)],
    plan: Plan,
) -> Result<ExitCode, String> {
    let [(case, imp)] = pairs else {
        return Err(format!(
            "--child measures exactly one pair, not {}",
            pairs.len()
        ));
    };
    let (Some(want), Some(from)) = (a.expect, a.expect_from.as_deref()) else {
        return Err("--child needs --expect and --expect-from".into());
    };
    let expected = (want, isolate::parse_source(from)?);
    let m = measure::measure(imp, *case, expected, plan, &mut |msg| {
        eprintln!("  {} n={} impl={}: {msg}", case.workload, case.n, imp.name)
    });
    print!("{}", report::json(&[m]));
    Ok(ExitCode::SUCCESS)
}

fn cmd_fork_table(a: ForkArgs) -> Result<ExitCode, String> {
    let ns: Vec<u64> = if !a.n.is_empty() {
        a.n.clone()
    } else if a.quick {
        Workload::Dup.quick_ns()
    } else {
        FORK_TABLE_NS.to_vec()
    };
    check_reps(&a.common)?;
    let seq_n = a.seq_n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    if seq_n == 0 {
        return Err("--seq-n must be at least 1".into());
    }
    let cases: Vec<Case> = ns
        .iter()
        .map(|&n| Case {
            workload: Workload::Dup,
            n,
            q: None,
        })
        .collect();
    bench::check_sizes(&cases)?;
    bench::check_memory(&cases)?;
    bench::check_memory(&[Case {
        workload: Workload::SeqStore,
        n: seq_n,
        q: None,
    }])?;
    if let Some(dir) = &a.common.plot {
        plot::prepare_dir(dir)?;
    }
    let plan = plan(&a.common, a.quick);
    let (rows, seq) = fork_table::run(&ns, seq_n, plan);
    let ms = fork_table::measurements(&rows, &seq);
    let mut code = ExitCode::SUCCESS;
    for (k, f) in a.common.format.iter().enumerate() {
        if k > 0 {
            println!();
        }
        match f {
            Format::Lines => print!("{}{}", report::lines(&ms), fork_table::memcpy_lines(&rows)),
            Format::Table => print!("{}", fork_table::render_tables(&rows, &seq, false)),
            Format::Markdown => print!("{}", fork_table::render_tables(&rows, &seq, true)),
            Format::Json => print!("{}", report::json(&ms)),
        }
    }
    let failures: Vec<Measurement> = ms.iter().filter(|m| m.is_failure()).cloned().collect();
    if !failures.is_empty() {
        eprintln!(
            "\nerror: {} measurement(s) are not results:",
            failures.len()
        );
        eprint!("{}", report::lines(&failures));
        code = ExitCode::FAILURE;
    }
    if let Some(dir) = &a.common.plot {
        let charts = plot::fork_table_charts(&rows, dir)?;
        eprintln!("wrote {} chart(s) to {}", charts.len(), dir.display());
    }
    Ok(code)
}

fn cmd_reference(a: RefArgs) -> Result<ExitCode, String> {
    let workloads = parse_workloads(&a.workloads)?;
    let cases = if a.table {
        expected::table_cases()
    } else {
        bench::cases(
            &workloads,
            bench::Sizes {
                n: a.n,
                q: a.q,
                quick: a.quick,
            },
        )
    };
    bench::check_sizes(&cases)?;
    let mut ok = true;
    for c in &cases {
        let q = c.q.map(|q| format!(" q={q}")).unwrap_or_default();
        if !c.workload.deterministic() {
            println!(
                "workload={} n={}{q} checksum=-  # no checksum: depends on thread timing",
                c.workload, c.n
            );
            continue;
        }
        let t = std::time::Instant::now();
        let got = reference::expected_checksum(c);
        let verdict = match expected::table_checksum(c) {
            Some(want) if want == got => "matches BENCHMARKS.md".to_string(),
            Some(want) => {
                ok = false;
                format!("DIFFERS from BENCHMARKS.md's {want}")
            }
            None if c.workload.provider() == Provider::MapleMm => {
                "(from BENCHMARKS.md's definition: no table row)".to_string()
            }
            None => "(size not in BENCHMARKS.md's table)".to_string(),
        };
        println!(
            "workload={} n={}{q} checksum={got}  # {verdict}, {:.1}s",
            c.workload,
            c.n,
            t.elapsed().as_secs_f64()
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn cmd_list() -> ExitCode {
    for p in Provider::ALL {
        let title = match p {
            Provider::RangeMaps => "tree workloads (BENCHMARKS.md)",
            Provider::MapleMm => "address-space workloads (BENCHMARKS.md, on maple-mm)",
            Provider::Rcu => "RCU workloads (two threads)",
        };
        println!("{title}, group `{}`:", p.name());
        for w in Workload::ALL.into_iter().filter(|w| w.provider() == p) {
            let q = w.default_q().map(|q| format!(" Q {q}")).unwrap_or_default();
            let qq = w.quick_q().map(|q| format!(" Q {q}")).unwrap_or_default();
            let imps: Vec<&str> = registry::IMPLS
                .iter()
                .filter(|i| (i.domain)(w))
                .map(|i| i.name)
                .collect();
            println!(
                "  {:<21} N {:?}{q}; --quick N {:?}{qq}; impl {}",
                w.name(),
                w.default_ns(),
                w.quick_ns(),
                imps.join(", ")
            );
        }
        println!();
    }
    println!("implementations:");
    for i in registry::IMPLS {
        let d = if i.default {
            ""
        } else {
            " (not in the default set)"
        };
        println!("  {:<15} {}{d}", i.name, i.about);
        for w in Workload::ALL.into_iter().filter(|&w| (i.domain)(w)) {
            if let Err(why) = (i.support)(w) {
                println!("  {:<15}   excluded from {}: {why}", "", w.name());
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Cmd::CaptureExec { args } = &cli.cmd {
        eprintln!("{}", capture::exec_wrapper(args));
        return ExitCode::from(127);
    }
    if !cli.malloc_default {
        malloc_tuning::keep_freed_memory();
    }
    if matches!(cli.cmd, Cmd::Bench(_) | Cmd::ForkTable(_)) {
        eprintln!(
            "allocator: {}",
            malloc_tuning::describe(!cli.malloc_default)
        );
    }
    let r = match cli.cmd {
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::ForkTable(a) => cmd_fork_table(a),
        Cmd::Reference(a) => cmd_reference(a),
        Cmd::List => Ok(cmd_list()),
        Cmd::Capture(a) => capture::capture(&capture::CaptureArgs {
            out: a.out,
            command: a.command,
            state_calls: a.state_calls,
        })
        .map(|rc| ExitCode::from(rc.clamp(0, 255) as u8)),
        Cmd::Replay(a) => replay::run(&replay::ReplayArgs {
            dir: a.dir,
            out: a.out,
            svg: a.svg,
            svg_tgid: a.svg_tgid,
            commit_limit: match a.commit_limit {
                Some(CommitLimit::Bytes(b)) => Some(b),
                Some(CommitLimit::None) => None,
                None => replay::host_commit_limit(),
            },
        })
        .map(|_| ExitCode::SUCCESS),
        Cmd::CaptureExec { .. } => unreachable!("handled above"),
    };
    r.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::Source;
    use crate::measure::Outcome;
    use crate::workloads::{FORK_VMAS_NS, QUICK_FORK_VMAS_NS};

    /// The (case, impl) pairs `maple bench ARGS` would measure.
    fn planned(args: &[&str]) -> Result<Vec<(Case, &'static str)>, String> {
        let mut argv = vec!["maple", "bench"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let Cmd::Bench(a) = cli.cmd else {
            unreachable!()
        };
        let ws = parse_workloads(&a.workloads)?;
        let is = parse_impls(&a.impls)?;
        let cases = bench::cases(
            &ws,
            bench::Sizes {
                n: a.n,
                q: a.q,
                quick: a.quick,
            },
        );
        bench::check_sizes(&cases)?;
        Ok(bench::pairs(&cases, &is)
            .into_iter()
            .map(|(c, i)| (c, i.name))
            .collect())
    }

    fn names(p: &[(Case, &'static str)]) -> Vec<String> {
        p.iter()
            .map(|(c, i)| format!("{} {} {}", c.workload, c.n, i))
            .collect()
    }

    #[test]
    fn fork_vmas_runs_the_three_tree_strategies_at_the_seed_sizes() {
        let p = planned(&["--workload", "fork_vmas"]).unwrap();
        assert_eq!(p.len(), 3 * FORK_VMAS_NS.len());
        for (k, &n) in FORK_VMAS_NS.iter().enumerate() {
            assert_eq!(
                names(&p[3 * k..3 * k + 3]),
                ["mm-insert", "mm-append", "mm-dup"].map(|i| format!("fork_vmas {n} {i}"))
            );
        }
        let p = planned(&["--workload", "fork_vmas", "--impl", "mm-dup", "--quick"]).unwrap();
        let want: Vec<String> = QUICK_FORK_VMAS_NS
            .iter()
            .map(|n| format!("fork_vmas {n} mm-dup"))
            .collect();
        assert_eq!(names(&p), want);
    }

    #[test]
    fn fork_gb_and_first_write_run_the_page_table_strategies_at_1_gib() {
        for quick in [false, true] {
            let mut args = vec!["-w", "fork_gb", "-w", "first_write"];
            if quick {
                args.push("--quick");
            }
            let p = planned(&args).unwrap();
            assert_eq!(
                names(&p),
                [
                    "fork_gb 262144 mm-copy",
                    "fork_gb 262144 mm-cowpte",
                    "first_write 262144 mm-copy",
                    "first_write 262144 mm-cowpte"
                ]
            );
        }
        let p = planned(&["--workload", "mm", "--impl", "mm-cowpte"]).unwrap();
        assert_eq!(
            names(&p),
            ["fork_gb 262144 mm-cowpte", "first_write 262144 mm-cowpte"]
        );
    }

    #[test]
    fn rcu_workloads_and_their_implementations() {
        let p = planned(&["--workload", "rcu"]).unwrap();
        assert_eq!(
            names(&p),
            [
                "rcu_read 1000000 maple-rcu",
                "rcu_read 1000000 maple-rcu-b64",
                "rcu_read 1000000 maple-rcu-inline",
                "rcu_read_under_write 1000000 maple-rcu",
                "rcu_read_under_write 1000000 maple-rcu-b64",
                "rcu_read_under_write 1000000 maple-rcu-inline",
                "rcu_write 1000000 maple",
                "rcu_write 1000000 maple-rcu",
                "rcu_write 1000000 maple-rcu-b64",
                "rcu_write 1000000 maple-rcu-inline",
            ]
        );
        assert_eq!(p[0].0.q, Some(10_000_000));
        assert_eq!(p[6].0.q, Some(1_000_000));
        let p = planned(&["-w", "rcu_write", "-i", "maple,btreemap", "--quick"]).unwrap();
        assert_eq!(names(&p), ["rcu_write 200000 maple"]);
        assert_eq!(p[0].0.q, Some(200_000));
    }

    #[test]
    fn the_default_run_is_every_workload_with_its_own_implementations() {
        let p = planned(&[]).unwrap();
        for w in Workload::ALL {
            assert!(p.iter().any(|(c, _)| c.workload == w), "{w}");
        }
        // No address-space or RCU implementation is paired with a tree workload,
        // and no peer with an address-space or RCU workload.
        for (c, i) in &p {
            let mm = i.starts_with("mm-");
            let rcu = i.starts_with("maple-rcu");
            match c.workload.provider() {
                Provider::RangeMaps => assert!(!mm && !rcu, "{c:?} {i}"),
                Provider::MapleMm => assert!(mm, "{c:?} {i}"),
                Provider::Rcu => assert!(rcu || *i == "maple", "{c:?} {i}"),
            }
        }
        assert!(planned(&["-w", "tree"])
            .unwrap()
            .iter()
            .all(|(c, _)| c.workload.provider() == Provider::RangeMaps));
    }

    #[test]
    fn bad_selections_are_refused() {
        assert!(planned(&["-w", "fork_vmaz"]).is_err());
        assert!(planned(&["-i", "mm-dupe"]).is_err());
        assert!(planned(&["-w", "load", "-i", "mm-dup"]).unwrap().is_empty());
        assert!(planned(&["-w", "fork_vmas", "--n", "70000"]).is_err());
    }

    /// The new workloads end to end through the harness at tiny sizes: every
    /// measurement a result whose checksum is the reference's.
    #[test]
    fn address_space_and_rcu_measurements_at_tiny_sizes() {
        let cases = [
            (Workload::ForkVmas, 20_000, None),
            (Workload::ForkGb, 1024, None),
            (Workload::FirstWrite, 1024, None),
            (Workload::RcuRead, 300, Some(5000)),
            (Workload::RcuReadUnderWrite, 300, Some(100_000)),
            (Workload::RcuWrite, 300, Some(5000)),
        ]
        .map(|(workload, n, q)| Case { workload, n, q });
        let impls = parse_impls(&[]).unwrap();
        let plan = Plan {
            reps: 2,
            budget: None,
        };
        let ms = bench::run(&cases, &impls, plan);
        assert_eq!(ms.len(), 3 + 2 + 2 + 3 + 3 + 4);
        for m in &ms {
            let Outcome::Ok(t) = &m.outcome else {
                panic!("{}", report::lines(std::slice::from_ref(m)))
            };
            if m.case.workload == Workload::RcuReadUnderWrite {
                assert_eq!(m.expected_from, Source::Unchecked);
                let sh = t.shared.expect("rcu_read_under_write reports the writer");
                assert!(sh.writer_ns > 0.0 && sh.solo_ns > 0.0 && sh.kept > 0.0);
            } else {
                assert_eq!(t.checksum, reference::expected_checksum(&m.case));
            }
        }
        let lines = report::lines(&ms);
        assert!(lines.contains("workload=fork_vmas impl=mm-dup n=20000 ns_per_op="));
        assert!(lines.contains("workload=fork_gb impl=mm-cowpte n=1024 ns_per_op="));
        assert!(lines.contains(" checksum=1024 ns_per_gib="));
        assert!(lines.contains("workload=rcu_read_under_write impl=maple-rcu n=300 q=100000"));
        assert!(lines.contains(" checksum=- writer_ns_per_store="));
        assert!(lines.contains(" solo_ns_per_op="));
        assert!(lines.contains(" reader_keeps="));
        let tables = report::tables(&ms, &[], 2, false);
        assert!(
            tables.contains("the __mt_dup series' fork table"),
            "{tables}"
        );
        assert!(
            tables.contains("the COW PTE series' experiment"),
            "{tables}"
        );
        assert!(tables.contains("reader keeps"), "{tables}");
        assert!(tables.contains("× plain tree"), "{tables}");
    }

    /// A wrong checksum of an address-space workload fails the measurement.
    #[test]
    fn a_wrong_address_space_checksum_is_a_mismatch() {
        let imp = registry::by_name("mm-cowpte").unwrap();
        let case = Case {
            workload: Workload::FirstWrite,
            n: 64,
            q: None,
        };
        let want = reference::expected_checksum(&case);
        let plan = Plan {
            reps: 1,
            budget: None,
        };
        let m = measure::measure(imp, case, (want + 1, Source::Model), plan, &mut |_| {});
        assert!(m.is_failure());
        assert!(matches!(m.outcome, Outcome::Mismatch { got, .. } if got == want));
    }
}
