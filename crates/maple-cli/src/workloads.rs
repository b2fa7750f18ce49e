//! The workload registry: every workload of BENCHMARKS.md, plus the RCU
//! benchmark, its tree kind, its sizes, and who provides it. The bodies (what is
//! timed) are in `bodies.rs` (range maps), `mm.rs` (address spaces) and `rcu.rs`.

use std::fmt;

/// One workload of `shared/bench/WORKLOADS.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    SeqStore,
    RandStore,
    Load,
    Iter,
    Erase,
    Overwrite,
    Dup,
    Rebuild,
    GapRev,
    GapFwd,
    GapWinRev,
    GapWinFwd,
    // Address-space workloads (WORKLOADS.md, "Address-space workloads"): run on
    // the maple-mm crate's `AddressSpace` (`mm.rs`).
    ForkVmas,
    ForkGb,
    FirstWrite,
    // Issue 4's benchmark of the concurrent tree (`rcu.rs`); not in WORKLOADS.md.
    /// `load`'s lookups by one reader thread through `RcuMapleTree::read`.
    RcuRead,
    /// The same reader while a writer thread runs `overwrite` continuously.
    RcuReadUnderWrite,
    /// `overwrite` through the RCU writer (`impl=maple-rcu`) or the plain tree.
    RcuWrite,
}

/// Which kind of tree a workload builds (WORKLOADS.md's "tree" column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeKind {
    /// No gap tracking.
    Regular,
    /// Gap tracking on (MT_FLAGS_ALLOC_RANGE).
    Alloc,
    /// Not a tree workload (an address-space workload).
    AddressSpace,
}

/// Who runs a workload: the groups of workloads, each with its own
/// implementations and its own tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// WORKLOADS.md's tree workloads, against the range-map implementations in `peers/`.
    RangeMaps,
    /// WORKLOADS.md's address-space workloads, on the maple-mm crate (`mm.rs`).
    MapleMm,
    /// Issue 4's concurrent-tree benchmark (`rcu.rs`).
    Rcu,
}

impl Provider {
    /// Every group, in output order.
    pub const ALL: [Provider; 3] = [Provider::RangeMaps, Provider::MapleMm, Provider::Rcu];

    /// The name `--workload` accepts for the whole group.
    pub fn name(self) -> &'static str {
        match self {
            Provider::RangeMaps => "tree",
            Provider::MapleMm => "mm",
            Provider::Rcu => "rcu",
        }
    }
}

/// The N of the fork table in the seed material (and WORKLOADS.md's dup/rebuild sizes).
pub const FORK_TABLE_NS: [u64; 12] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221, 1_000_000,
];

/// The fork table's N without the 1,000,000 row (fork_vmas's sizes).
pub const FORK_VMAS_NS: [u64; 11] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221,
];

/// `fork_vmas` with `--quick`: both ends of the table and two points between.
pub const QUICK_FORK_VMAS_NS: [u64; 4] = [21, 821, 12821, 51221];

impl Workload {
    /// Every workload, in WORKLOADS.md's order, then the RCU benchmark.
    pub const ALL: [Workload; 18] = [
        Workload::SeqStore,
        Workload::RandStore,
        Workload::Load,
        Workload::Iter,
        Workload::Erase,
        Workload::Overwrite,
        Workload::Dup,
        Workload::Rebuild,
        Workload::GapRev,
        Workload::GapFwd,
        Workload::GapWinRev,
        Workload::GapWinFwd,
        Workload::ForkVmas,
        Workload::ForkGb,
        Workload::FirstWrite,
        Workload::RcuRead,
        Workload::RcuReadUnderWrite,
        Workload::RcuWrite,
    ];

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Workload::SeqStore => "seq_store",
            Workload::RandStore => "rand_store",
            Workload::Load => "load",
            Workload::Iter => "iter",
            Workload::Erase => "erase",
            Workload::Overwrite => "overwrite",
            Workload::Dup => "dup",
            Workload::Rebuild => "rebuild",
            Workload::GapRev => "gap_rev",
            Workload::GapFwd => "gap_fwd",
            Workload::GapWinRev => "gap_win_rev",
            Workload::GapWinFwd => "gap_win_fwd",
            Workload::ForkVmas => "fork_vmas",
            Workload::ForkGb => "fork_gb",
            Workload::FirstWrite => "first_write",
            Workload::RcuRead => "rcu_read",
            Workload::RcuReadUnderWrite => "rcu_read_under_write",
            Workload::RcuWrite => "rcu_write",
        }
    }

    /// The workload called `name`.
    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == name)
    }

    /// The kind of tree the workload builds.
    pub fn tree(self) -> TreeKind {
        match self {
            Workload::SeqStore
            | Workload::RandStore
            | Workload::Load
            | Workload::Iter
            | Workload::Erase
            | Workload::Overwrite
            | Workload::RcuRead
            | Workload::RcuReadUnderWrite
            | Workload::RcuWrite => TreeKind::Regular,
            Workload::Dup
            | Workload::Rebuild
            | Workload::GapRev
            | Workload::GapFwd
            | Workload::GapWinRev
            | Workload::GapWinFwd => TreeKind::Alloc,
            Workload::ForkVmas | Workload::ForkGb | Workload::FirstWrite => TreeKind::AddressSpace,
        }
    }

    /// Who runs it.
    pub fn provider(self) -> Provider {
        match self {
            Workload::RcuRead | Workload::RcuReadUnderWrite | Workload::RcuWrite => Provider::Rcu,
            _ if self.tree() == TreeKind::AddressSpace => Provider::MapleMm,
            _ => Provider::RangeMaps,
        }
    }

    /// The WORKLOADS.md workload whose checksum this one reproduces at the same
    /// (N, Q): `rcu_read` is `load`'s lookups, `rcu_write` is `overwrite`.
    pub fn checksum_of(self) -> Workload {
        match self {
            Workload::RcuRead => Workload::Load,
            Workload::RcuWrite => Workload::Overwrite,
            w => w,
        }
    }

    /// Whether a run's checksum is determined by (N, Q). Not for
    /// `rcu_read_under_write`: what the reader sees depends on how far the writer
    /// has got; every value it reads is checked instead (`rcu.rs`).
    pub fn deterministic(self) -> bool {
        self != Workload::RcuReadUnderWrite
    }

    /// Whether the workload has a Q (a number of queries separate from N).
    pub fn has_q(self) -> bool {
        matches!(
            self,
            Workload::Load
                | Workload::Overwrite
                | Workload::GapRev
                | Workload::GapFwd
                | Workload::GapWinRev
                | Workload::GapWinFwd
                | Workload::RcuRead
                | Workload::RcuReadUnderWrite
                | Workload::RcuWrite
        )
    }

    /// The default N values (WORKLOADS.md, "Default sizes").
    pub fn default_ns(self) -> Vec<u64> {
        match self {
            Workload::Dup | Workload::Rebuild => FORK_TABLE_NS.to_vec(),
            Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
                vec![100_000]
            }
            Workload::ForkVmas => FORK_VMAS_NS.to_vec(),
            Workload::ForkGb | Workload::FirstWrite => vec![262_144],
            _ => vec![1_000_000],
        }
    }

    /// The default Q, for workloads that have one.
    pub fn default_q(self) -> Option<u64> {
        match self {
            Workload::Load | Workload::RcuRead | Workload::RcuReadUnderWrite => Some(10_000_000),
            Workload::Overwrite
            | Workload::RcuWrite
            | Workload::GapRev
            | Workload::GapFwd
            | Workload::GapWinRev
            | Workload::GapWinFwd => Some(1_000_000),
            _ => None,
        }
    }

    /// `--quick` sizes: small enough that every workload against every
    /// implementation finishes in about two minutes on two cores.
    pub fn quick_ns(self) -> Vec<u64> {
        match self {
            Workload::Dup | Workload::Rebuild => vec![21, 821, 12821, 100_000],
            Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
                vec![20_000]
            }
            Workload::ForkVmas => QUICK_FORK_VMAS_NS.to_vec(),
            // 1 GiB still: its setup takes about a second, and WORKLOADS.md's
            // `next() % 262144` is defined for it.
            Workload::ForkGb | Workload::FirstWrite => vec![262_144],
            _ => vec![200_000],
        }
    }

    /// `--quick` Q.
    pub fn quick_q(self) -> Option<u64> {
        match self {
            Workload::Load | Workload::RcuRead | Workload::RcuReadUnderWrite => Some(2_000_000),
            Workload::Overwrite | Workload::RcuWrite => Some(200_000),
            Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
                Some(200_000)
            }
            _ => None,
        }
    }

    /// What one operation of the ns/op figure is (for chart labels).
    pub fn op_name(self) -> &'static str {
        match self {
            Workload::SeqStore | Workload::RandStore | Workload::Overwrite | Workload::RcuWrite => {
                "store"
            }
            Workload::Load | Workload::RcuRead | Workload::RcuReadUnderWrite => "lookup",
            Workload::Iter => "entry",
            Workload::Erase => "erase",
            Workload::Dup | Workload::Rebuild => "copy",
            Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
                "query"
            }
            Workload::ForkVmas | Workload::ForkGb => "fork",
            Workload::FirstWrite => "write",
        }
    }

    /// What N counts (for chart labels).
    pub fn n_name(self) -> &'static str {
        match self {
            Workload::ForkVmas => "VMAs",
            Workload::ForkGb | Workload::FirstWrite => "pages",
            _ => "entries",
        }
    }

    /// What the ns/op figure divides by, for a run of size (n, q).
    pub fn ops(self, n: u64, q: u64) -> u64 {
        match self {
            Workload::SeqStore | Workload::RandStore | Workload::Erase => n,
            Workload::Iter => 10 * n,
            Workload::Load
            | Workload::Overwrite
            | Workload::GapRev
            | Workload::GapFwd
            | Workload::GapWinRev
            | Workload::GapWinFwd
            | Workload::RcuRead
            | Workload::RcuReadUnderWrite
            | Workload::RcuWrite => q,
            Workload::Dup | Workload::Rebuild => dup_copies(n),
            Workload::ForkVmas => fork_vmas_forks(n),
            Workload::ForkGb => 16,
            Workload::FirstWrite => 1024,
        }
    }
}

/// R = max(3, 200000 / N): the forks of one `fork_vmas` repetition.
pub fn fork_vmas_forks(n: u64) -> u64 {
    (200_000 / n.max(1)).max(3)
}

/// R = max(1, 2000000 / N): the number of copies of a `dup` or `rebuild` run.
pub fn dup_copies(n: u64) -> u64 {
    (2_000_000 / n.max(1)).max(1)
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether an implementation runs a workload, and if not, why.
pub type Support = Result<(), &'static str>;

/// One measurement point: a workload at a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Case {
    pub workload: Workload,
    pub n: u64,
    /// `Some` exactly when the workload has a Q.
    pub q: Option<u64>,
}

impl Case {
    /// The number ns/op divides by.
    pub fn ops(&self) -> u64 {
        self.workload.ops(self.n, self.q.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::from_name(w.name()), Some(w));
        }
        assert_eq!(Workload::from_name("nope"), None);
    }

    #[test]
    fn q_exactly_where_the_table_has_one() {
        for w in Workload::ALL {
            assert_eq!(w.has_q(), w.default_q().is_some(), "{w}");
            assert_eq!(w.has_q(), w.quick_q().is_some(), "{w}");
        }
    }

    #[test]
    fn fork_vmas_forks_is_max_3_200k_over_n() {
        assert_eq!(fork_vmas_forks(21), 9523);
        assert_eq!(fork_vmas_forks(51221), 3);
        assert_eq!(
            Case {
                workload: Workload::ForkVmas,
                n: 821,
                q: None
            }
            .ops(),
            243
        );
    }

    #[test]
    fn groups_partition_the_workloads() {
        for w in Workload::ALL {
            assert_eq!(
                Provider::ALL.iter().filter(|&&p| p == w.provider()).count(),
                1
            );
        }
        assert_eq!(Workload::RcuRead.checksum_of(), Workload::Load);
        assert_eq!(Workload::RcuWrite.checksum_of(), Workload::Overwrite);
        assert!(!Workload::RcuReadUnderWrite.deterministic());
        assert!(Workload::ALL
            .iter()
            .filter(|w| **w != Workload::RcuReadUnderWrite)
            .all(|w| w.deterministic()));
    }

    #[test]
    fn dup_copies_is_max_1_2m_over_n() {
        assert_eq!(dup_copies(21), 95238);
        assert_eq!(dup_copies(1_000_000), 2);
        assert_eq!(dup_copies(3_000_000), 1);
    }
}
