//! The workload registry: every workload of WORKLOADS.md, its tree kind, its sizes,
//! and who provides it. The bodies (what is timed) are in `bodies.rs`.

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
    // Address-space workloads: provided by the maple-mm crate (another engineer's);
    // registered here so that names, sizes and the CLI already know them.
    ForkVmas,
    ForkGb,
    FirstWrite,
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

/// Who runs a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// This crate, against the range-map implementations in `peers/`.
    RangeMaps,
    /// The maple-mm crate (not wired in yet).
    MapleMm,
}

/// The N of the fork table in the seed material (and WORKLOADS.md's dup/rebuild sizes).
pub const FORK_TABLE_NS: [u64; 12] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221, 1_000_000,
];

/// The fork table's N without the 1,000,000 row (fork_vmas's sizes).
pub const FORK_VMAS_NS: [u64; 11] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221,
];

impl Workload {
    /// Every workload, in WORKLOADS.md's order.
    pub const ALL: [Workload; 15] = [
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
            | Workload::Overwrite => TreeKind::Regular,
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
        match self.tree() {
            TreeKind::AddressSpace => Provider::MapleMm,
            _ => Provider::RangeMaps,
        }
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
            Workload::Load => Some(10_000_000),
            Workload::Overwrite
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
            Workload::ForkVmas => vec![21, 821, 12821],
            Workload::ForkGb | Workload::FirstWrite => vec![262_144],
            _ => vec![200_000],
        }
    }

    /// `--quick` Q.
    pub fn quick_q(self) -> Option<u64> {
        match self {
            Workload::Load => Some(2_000_000),
            Workload::Overwrite => Some(200_000),
            Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
                Some(200_000)
            }
            _ => None,
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
            | Workload::GapWinFwd => q,
            Workload::Dup | Workload::Rebuild => dup_copies(n),
            Workload::ForkVmas => (200_000 / n.max(1)).max(3),
            Workload::ForkGb => 16,
            Workload::FirstWrite => 1024,
        }
    }
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
    fn dup_copies_is_max_1_2m_over_n() {
        assert_eq!(dup_copies(21), 95238);
        assert_eq!(dup_copies(1_000_000), 2);
        assert_eq!(dup_copies(3_000_000), 1);
    }
}
