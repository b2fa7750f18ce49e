//! The checksums a run must reproduce: BENCHMARKS.md's reference table at its own
//! sizes, the reference model (`reference.rs`) at any other size.

use std::collections::HashMap;
use std::fmt;

use crate::reference;
use crate::workloads::{Case, Workload, FORK_TABLE_NS};

/// BENCHMARKS.md, "Reference checksums" (and the iteration workloads' own
/// table), as (workload, N, Q, checksum).
const TABLE: &[(Workload, u64, Option<u64>, u64)] = &[
    (Workload::SeqStore, 1_000_000, None, 500_000_500_000),
    (Workload::RandStore, 1_000_000, None, 500_000_500_000),
    (
        Workload::Load,
        1_000_000,
        Some(10_000_000),
        3_126_729_663_903,
    ),
    (Workload::Iter, 1_000_000, None, 500_000_500_000),
    (Workload::Erase, 1_000_000, None, 0),
    (
        Workload::Overwrite,
        1_000_000,
        Some(1_000_000),
        513_537_956_813,
    ),
    (
        Workload::GapRev,
        100_000,
        Some(1_000_000),
        4_813_874_490_181,
    ),
    (Workload::GapFwd, 100_000, Some(1_000_000), 75_770_038_898),
    (
        Workload::GapWinRev,
        100_000,
        Some(1_000_000),
        2_359_439_146_016,
    ),
    (
        Workload::GapWinFwd,
        100_000,
        Some(1_000_000),
        2_355_743_818_707,
    ),
    // BENCHMARKS.md, "Iteration workloads" (this project's own table).
    (Workload::IterRev, 1_000_000, None, 500_000_500_000),
    (Workload::Range, 1_000_000, Some(100_000), 5_001_114_541_204),
    (Workload::IterMut, 1_000_000, None, 500_010_500_000),
    (Workload::IntoIter, 1_000_000, None, 500_000_500_000),
    (Workload::CursorNext, 1_000_000, None, 500_000_500_000),
    (Workload::CursorPrev, 1_000_000, None, 500_000_500_000),
];

/// The dup / rebuild row of the table, in the order of [`FORK_TABLE_NS`].
const DUP_TABLE: [u64; 12] = [
    270,
    7420,
    24538,
    88870,
    337_470,
    1_314_670,
    5_189_070,
    20_617_870,
    82_195_470,
    328_230_670,
    1_311_821_070,
    500_000_500_000,
];

/// The reference table's checksum for `case`, if the table lists its size
/// (`rcu_read` / `rcu_write` reproduce `load` / `overwrite`).
pub fn table_checksum(case: &Case) -> Option<u64> {
    match case.workload.checksum_of() {
        Workload::Dup | Workload::Rebuild => FORK_TABLE_NS
            .iter()
            .position(|&n| n == case.n)
            .map(|i| DUP_TABLE[i]),
        w => TABLE
            .iter()
            .find(|&&(tw, n, q, _)| tw == w && n == case.n && q == case.q)
            .map(|&(_, _, _, c)| c),
    }
}

/// Every case the reference table lists.
pub fn table_cases() -> Vec<Case> {
    let mut v: Vec<Case> = TABLE
        .iter()
        .map(|&(workload, n, q, _)| Case { workload, n, q })
        .collect();
    for w in [Workload::Dup, Workload::Rebuild] {
        v.extend(FORK_TABLE_NS.iter().map(|&n| Case {
            workload: w,
            n,
            q: None,
        }));
    }
    v
}

/// Where an expected checksum came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// BENCHMARKS.md's reference table.
    Table,
    /// Computed by the reference model for this size.
    Model,
    /// None: the result depends on thread timing (`rcu_read_under_write`); the run
    /// checks every value it reads instead.
    Unchecked,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Table => "BENCHMARKS.md reference table",
            Source::Model => "reference model",
            Source::Unchecked => "no checksum (depends on thread timing)",
        })
    }
}

/// Expected checksums, computed once per case.
#[derive(Default)]
pub struct Expectations {
    memo: HashMap<Case, (u64, Source)>,
}

impl Expectations {
    /// The checksum `case` must produce, and where that number comes from.
    pub fn get(&mut self, case: &Case) -> (u64, Source) {
        // `rcu_read` at (N, Q) expects what `load` at (N, Q) does: one entry for both.
        let key = Case {
            workload: case.workload.checksum_of(),
            ..*case
        };
        *self.memo.entry(key).or_insert_with(|| {
            if !case.workload.deterministic() {
                return (0, Source::Unchecked);
            }
            match table_checksum(case) {
                Some(c) => (c, Source::Table),
                None => (reference::expected_checksum(case), Source::Model),
            }
        })
    }
}
