//! The address-space workloads of BENCHMARKS.md ("Address-space workloads") on the
//! maple-mm crate, as the registry's `mm-*` implementations run them: which
//! workloads each strategy runs, and one measurement's repetitions on a shared
//! setup. Their tables (the `__mt_dup` series' fork rates, the COW PTE series'
//! fork latency per GiB) are in `report/mm.rs`.
//!
//! The workloads themselves are in `mm_workloads.rs`: its setups
//! (`vmas_parent`, `gb_parent`) are built once per measurement, untimed, and each
//! repetition is one call of its `*_once` function, so that this harness checks the
//! checksum of every repetition against the reference (`reference.rs`).

use crate::mm_workloads as mmb;
use maple_mm::{PtStrategy, TreeStrategy, PAGE_SIZE};

use crate::rep::{Rep, Session};
use crate::workloads::{Case, Workload};

/// What an `mm-*` implementation varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// How fork builds the child's VMA tree (`fork_vmas`; page tables `mm-copy`).
    Tree(TreeStrategy),
    /// How fork gives the child page tables (`fork_gb`, `first_write`; tree `mm-dup`).
    PageTables(PtStrategy),
}

/// The ways of building the child's VMA tree, in the order of the benchmark
/// tables (`mm-insert`, `mm-append`, `mm-dup`).
#[cfg(test)]
pub const TREE_STRATEGIES: [TreeStrategy; 3] = [
    TreeStrategy::Insert,
    TreeStrategy::Append,
    TreeStrategy::Dup,
];

/// The ways of giving the child page tables, in the order of the benchmark
/// tables (`mm-copy`, `mm-cowpte`).
#[cfg(test)]
pub const PT_STRATEGIES: [PtStrategy; 2] = [PtStrategy::Copy, PtStrategy::CowPte];

/// The domain of `mm-insert`, `mm-append`, `mm-dup`.
pub fn tree_workloads(w: Workload) -> bool {
    w == Workload::ForkVmas
}

/// The domain of `mm-copy`, `mm-cowpte`.
pub fn page_table_workloads(w: Workload) -> bool {
    matches!(w, Workload::ForkGb | Workload::FirstWrite)
}

/// Builds the setup of `case` (untimed) and returns its repetitions.
///
/// `fork_vmas`: N one-page VMAs; a repetition is R = max(3, 200000 / N) forks, each
/// child torn down (exit) inside the timer. `fork_gb`: one mapping of N pages (1 GiB
/// = 262144) with every page written; a repetition is 16 forks, the children kept
/// until the 16th and torn down after the timer. `first_write`: the same parent; a
/// repetition forks one child untimed and times its 1024 writes. A mapping of other
/// than 262144 pages (`--n`) draws its pages with `next() % N`.
///
/// # Panics
/// If the workload is not one of `s`'s, or maple-mm refuses a step (a bug).
pub fn session(case: &Case, s: Strategy) -> Session {
    let n = case.n;
    match (case.workload, s) {
        (Workload::ForkVmas, Strategy::Tree(t)) => {
            let mut parent = mmb::vmas_parent(n as usize);
            let forks = case.ops() as usize;
            Box::new(move || {
                let (elapsed, checksum) = mmb::fork_vmas_once(&mut parent, t, forks);
                Rep::timed(elapsed, checksum)
            })
        }
        (Workload::ForkGb, Strategy::PageTables(pt)) => {
            let (mut parent, _) = mmb::gb_parent(n);
            Box::new(move || {
                let (elapsed, checksum) = mmb::fork_gb_once(&mut parent, pt);
                Rep::timed(elapsed, checksum)
            })
        }
        (Workload::FirstWrite, Strategy::PageTables(pt)) => {
            let (mut parent, base) = mmb::gb_parent(n);
            Box::new(move || {
                let (elapsed, checksum) = mmb::first_write_once(&mut parent, base, n, pt);
                Rep::timed(elapsed, checksum)
            })
        }
        (w, s) => panic!("{w} is not a workload of {s:?}"),
    }
}

/// GiB of a `fork_gb` mapping of `pages` pages.
pub fn gib(pages: u64) -> f64 {
    (pages * PAGE_SIZE) as f64 / (1u64 << 30) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::expected_checksum;

    fn check(w: Workload, n: u64, s: Strategy) -> u64 {
        let case = Case {
            workload: w,
            n,
            q: None,
        };
        let mut run = session(&case, s);
        let a = run().checksum;
        let b = run().checksum; // a second repetition on the same setup
        assert_eq!(a, b, "{w} n={n} {s:?}: repetitions differ");
        assert_eq!(a, expected_checksum(&case), "{w} n={n} {s:?}");
        a
    }

    #[test]
    fn fork_vmas_checksum_is_the_vma_count_for_every_strategy() {
        for t in TREE_STRATEGIES {
            // N large enough that R = max(3, 200000/N) stays small in a debug build.
            assert_eq!(check(Workload::ForkVmas, 20_000, Strategy::Tree(t)), 20_000);
            assert_eq!(check(Workload::ForkVmas, 21, Strategy::Tree(t)), 21);
        }
    }

    #[test]
    fn small_fork_gb_and_first_write_match_the_reference() {
        for pt in PT_STRATEGIES {
            assert_eq!(
                check(Workload::ForkGb, 2048, Strategy::PageTables(pt)),
                2048
            );
            // 1024 writes into 700 pages: many pages written twice (last write wins).
            check(Workload::FirstWrite, 700, Strategy::PageTables(pt));
            check(Workload::FirstWrite, 1, Strategy::PageTables(pt));
        }
    }

    #[test]
    #[should_panic(expected = "is not a workload of")]
    fn a_tree_strategy_does_not_run_fork_gb() {
        let case = Case {
            workload: Workload::ForkGb,
            n: 16,
            q: None,
        };
        let _ = session(&case, Strategy::Tree(TreeStrategy::Dup));
    }
}
