//! Runs the address-space workloads of WORKLOADS.md once and prints one line
//! per measurement (the `maple bench` CLI wires the same functions).
//!
//! `cargo run --release -p maple-mm --example mm_bench [fork_vmas|fork_gb|first_write|all] [N...]`

use maple_mm::bench::{self, FORK_VMAS_N};
use maple_mm::{PtStrategy, TreeStrategy};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let what = args.first().map(String::as_str).unwrap_or("all");
    let ns: Vec<usize> = if args.len() > 1 {
        args[1..].iter().filter_map(|a| a.parse().ok()).collect()
    } else {
        FORK_VMAS_N.to_vec()
    };
    if what == "all" || what == "fork_vmas" {
        for &n in &ns {
            let mut rates = Vec::new();
            for t in TreeStrategy::ALL {
                let r = bench::fork_vmas(n, t);
                println!("{}", r.line());
                rates.push(1e9 / r.ns_per_op);
            }
            println!(
                "# n={n} forks/s: insert {:.0} append {:.0} dup {:.0}  dup/insert {:.2}x  dup/append {:.2}x",
                rates[0],
                rates[1],
                rates[2],
                rates[2] / rates[0],
                rates[2] / rates[1]
            );
        }
    }
    if what == "all" || what == "fork_gb" {
        let mut ns = Vec::new();
        for p in PtStrategy::ALL {
            let r = bench::fork_gb(p);
            println!("{}", r.line());
            ns.push(r.ns_per_op);
        }
        println!(
            "# fork latency per GiB: copy {:.0} ns, cowpte {:.0} ns, ratio {:.1}x",
            ns[0],
            ns[1],
            ns[0] / ns[1]
        );
    }
    if what == "all" || what == "first_write" {
        for p in PtStrategy::ALL {
            println!("{}", bench::first_write(p).line());
        }
    }
}
