//! `maple`: the command of the maple project. `maple bench` runs the workloads of
//! `shared/bench/WORKLOADS.md` against maple and the Rust peers, checks every
//! checksum, and prints WORKLOADS.md's one-line format and a ratio table;
//! `maple fork-table` prints the dup / rebuild / memcpy table of issue 3.

mod alloc_count;
mod bench;
mod bodies;
mod expected;
mod fork_table;
mod malloc_tuning;
mod measure;
mod peers;
mod reference;
mod report;
mod rng;
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
    about = "The maple tree's command: benchmarks and tools"
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
    /// Run the workloads of WORKLOADS.md against maple and the peers, check every
    /// checksum, print the results.
    Bench(BenchArgs),
    /// Issue 3's table: dup vs rebuild vs a plain memory copy, and the append path.
    ForkTable(ForkArgs),
    /// Print the reference model's checksums (and compare with WORKLOADS.md's table).
    Reference(RefArgs),
    /// List the workloads, the implementations, and which runs which.
    List,
}

#[derive(Args)]
struct BenchArgs {
    /// Workloads to run (repeatable, or a comma list). Default: every tree workload.
    #[arg(short, long = "workload", value_delimiter = ',')]
    workloads: Vec<String>,
    /// Implementations (repeatable, or a comma list). Default: maple and every peer.
    #[arg(short, long = "impl", value_delimiter = ',')]
    impls: Vec<String>,
    /// N for every selected workload (default: WORKLOADS.md's sizes).
    #[arg(long)]
    n: Option<u64>,
    /// Q for every selected workload that has one.
    #[arg(long)]
    q: Option<u64>,
    /// Smaller sizes: everything in about two minutes on two cores. Expected
    /// checksums then come from the reference model.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    common: Common,
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
    /// Output formats (comma list): lines = WORKLOADS.md's one-line format,
    /// table / markdown = the ratio table, json.
    #[arg(short, long, value_delimiter = ',', default_value = "lines,table")]
    format: Vec<Format>,
    /// Repetitions per measurement (WORKLOADS.md: 5).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Time budget of one measurement, in seconds (0 = none). Over it, fewer
    /// repetitions run (the table says so), or, if one alone would not fit, the
    /// measurement is excluded with its projected time. Default: 600, or 30 with --quick.
    #[arg(long)]
    budget: Option<u64>,
}

#[derive(Args)]
struct RefArgs {
    /// Workloads (default: every tree workload).
    #[arg(short, long = "workload", value_delimiter = ',')]
    workloads: Vec<String>,
    #[arg(long)]
    n: Option<u64>,
    #[arg(long)]
    q: Option<u64>,
    #[arg(long)]
    quick: bool,
    /// Every case of WORKLOADS.md's reference table, at its own sizes.
    #[arg(long)]
    table: bool,
}

fn parse_workloads(names: &[String]) -> Result<Vec<Workload>, String> {
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(Workload::ALL
            .into_iter()
            .filter(|w| w.provider() == Provider::RangeMaps)
            .collect());
    }
    let mut out = Vec::new();
    for n in names {
        let w = Workload::from_name(n.trim()).ok_or_else(|| {
            let all: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
            format!("unknown workload {n:?}; known: {}", all.join(", "))
        })?;
        if !out.contains(&w) {
            out.push(w);
        }
    }
    Ok(out)
}

fn parse_impls(names: &[String]) -> Result<Vec<&'static peers::Impl>, String> {
    if names.is_empty() {
        return Ok(peers::IMPLS.iter().filter(|i| i.default).collect());
    }
    let mut out: Vec<&'static peers::Impl> = Vec::new();
    for n in names {
        if n == "all" {
            return Ok(peers::IMPLS.iter().collect());
        }
        let i = peers::by_name(n.trim()).ok_or_else(|| {
            let all: Vec<&str> = peers::IMPLS.iter().map(|i| i.name).collect();
            format!("unknown implementation {n:?}; known: {}", all.join(", "))
        })?;
        if !out.iter().any(|o| o.name == i.name) {
            out.push(i);
        }
    }
    Ok(out)
}

fn plan(common: &Common, quick: bool) -> Plan {
    let budget = common.budget.unwrap_or(if quick { 30 } else { 600 });
    Plan {
        reps: common.reps.max(1),
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
            Format::Table => print!("{}", report::table(ms, impls, reps, false)),
            Format::Markdown => print!("{}", report::table(ms, impls, reps, true)),
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
    let cases = bench::cases(&workloads, sizes);
    bench::check_sizes(&cases)?;
    let plan = plan(&a.common, a.quick);
    let ms = bench::run(&cases, &impls, plan);
    let names: Vec<&str> = impls.iter().map(|i| i.name).collect();
    Ok(finish(&ms, &names, &a.common.format, plan.reps, ""))
}

fn cmd_fork_table(a: ForkArgs) -> Result<ExitCode, String> {
    let ns: Vec<u64> = if !a.n.is_empty() {
        a.n.clone()
    } else if a.quick {
        Workload::Dup.quick_ns()
    } else {
        FORK_TABLE_NS.to_vec()
    };
    let seq_n = a.seq_n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    let cases: Vec<Case> = ns
        .iter()
        .map(|&n| Case {
            workload: Workload::Dup,
            n,
            q: None,
        })
        .collect();
    bench::check_sizes(&cases)?;
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
    for c in cases
        .iter()
        .filter(|c| c.workload.provider() == Provider::RangeMaps)
    {
        let t = std::time::Instant::now();
        let got = reference::expected_checksum(c);
        let q = c.q.map(|q| format!(" q={q}")).unwrap_or_default();
        let verdict = match expected::table_checksum(c) {
            Some(want) if want == got => "matches WORKLOADS.md".to_string(),
            Some(want) => {
                ok = false;
                format!("DIFFERS from WORKLOADS.md's {want}")
            }
            None => "(size not in WORKLOADS.md's table)".to_string(),
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
    println!("workloads (WORKLOADS.md):");
    for w in Workload::ALL {
        let by = match w.provider() {
            Provider::RangeMaps => "",
            Provider::MapleMm => "  [address space: maple-mm, not wired in yet]",
        };
        println!(
            "  {:<12} default N {:?} Q {:?}{by}",
            w.name(),
            w.default_ns(),
            w.default_q()
        );
    }
    println!("\nimplementations:");
    for i in peers::IMPLS {
        let d = if i.default {
            ""
        } else {
            " (not in the default set)"
        };
        println!("  {:<15} {}{d}", i.name, i.about);
        for w in Workload::ALL
            .into_iter()
            .filter(|w| w.provider() == Provider::RangeMaps)
        {
            if let Err(why) = (i.support)(w) {
                println!("  {:<15}   excluded from {}: {why}", "", w.name());
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    };
    r.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}
