//! The workload registry: every workload of BENCHMARKS.md, plus the RCU
//! benchmark, its tree kind, its sizes, and who provides it, one row per
//! workload ([`Workload::spec`]). The bodies (what is
//! timed) are in `bodies.rs` (range maps), `mm.rs` (address spaces) and `rcu.rs`.

use std::fmt;

/// One workload of BENCHMARKS.md.
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
    // This project's own iteration workloads (BENCHMARKS.md, "Iteration
    // workloads"): not part of the shared yardstick.
    IterRev,
    Range,
    IterMut,
    IntoIter,
    CursorNext,
    CursorPrev,
    // Address-space workloads (BENCHMARKS.md, "Address-space workloads"): run on
    // the maple-mm crate's `AddressSpace` (`mm.rs`).
    ForkVmas,
    ForkGb,
    FirstWrite,
    // The benchmark of the concurrent tree (`rcu.rs`; BENCHMARKS.md, "RCU workloads").
    /// `load`'s lookups by one reader thread through `RcuMapleTree::read`.
    RcuRead,
    /// The same reader while a writer thread runs `overwrite` continuously.
    RcuReadUnderWrite,
    /// `overwrite` through the RCU writer (`impl=maple-rcu`) or the plain tree.
    RcuWrite,
}

/// Who runs a workload: the groups of workloads, each with its own
/// implementations and its own tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// BENCHMARKS.md's tree workloads, against the range-map implementations in `peers/`.
    RangeMaps,
    /// BENCHMARKS.md's address-space workloads, on the maple-mm crate (`mm.rs`).
    MapleMm,
    /// The concurrent-tree benchmark (`rcu.rs`).
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

/// The N of the `__mt_dup` series' fork table (and BENCHMARKS.md's dup/rebuild sizes).
pub const FORK_TABLE_NS: [u64; 12] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221, 1_000_000,
];

/// The fork table's N without the 1,000,000 row (fork_vmas's sizes).
pub const FORK_VMAS_NS: [u64; 11] = [
    21, 121, 221, 421, 821, 1621, 3221, 6421, 12821, 25621, 51221,
];

/// `fork_vmas` with `--quick`: both ends of the table and two points between.
pub const QUICK_FORK_VMAS_NS: [u64; 4] = [21, 821, 12821, 51221];

/// What ns/op divides by (BENCHMARKS.md's "ns/op divides by" column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Divisor {
    /// N.
    N,
    /// 10·N (`iter`: ten full iterations).
    TenN,
    /// Q.
    Q,
    /// Q·W, W = min([`RANGE_WINDOW`], N): `range`'s entries handed out.
    QWindows,
    /// R = max(1, 2000000 / N) copies ([`dup_copies`]).
    DupCopies,
    /// R = max(3, 200000 / N) forks ([`fork_vmas_forks`]).
    ForkVmasForks,
    /// A fixed count.
    Fixed(u64),
}

/// Everything the harness knows about one workload, in one place: adding a
/// workload is a variant, its row in [`Workload::spec`], its timed part (in
/// `bodies.rs`, `mm.rs` or `rcu.rs`) and its checksum (`reference.rs`).
struct Spec {
    /// The name used on the command line and in the output.
    name: &'static str,
    provider: Provider,
    /// Default N values (BENCHMARKS.md, "Default sizes").
    ns: &'static [u64],
    /// Default Q; `None` for a workload without one.
    q: Option<u64>,
    /// `--quick` N values: small enough that every workload against every
    /// implementation finishes in about two minutes on two cores.
    quick_ns: &'static [u64],
    /// `--quick` Q.
    quick_q: Option<u64>,
    divisor: Divisor,
    /// What one operation is (chart labels: "ns per lookup").
    op: &'static str,
    /// What N counts (chart labels).
    n_counts: &'static str,
    /// The BENCHMARKS.md workload whose checksum this one reproduces at the same
    /// (N, Q), if another.
    checksum_of: Option<Workload>,
    /// Whether a run's checksum is determined by (N, Q).
    deterministic: bool,
}

/// A tree workload of BENCHMARKS.md at N = 1,000,000 (`--quick` 200,000).
const fn tree_spec(
    name: &'static str,
    q: Option<(u64, u64)>,
    divisor: Divisor,
    op: &'static str,
) -> Spec {
    Spec {
        name,
        provider: Provider::RangeMaps,
        ns: &[1_000_000],
        q: match q {
            Some((q, _)) => Some(q),
            None => None,
        },
        quick_ns: &[200_000],
        quick_q: match q {
            Some((_, quick)) => Some(quick),
            None => None,
        },
        divisor,
        op,
        n_counts: "entries",
        checksum_of: None,
        deterministic: true,
    }
}

/// A gap workload: N = 100,000 (`--quick` 20,000), Q = 1,000,000 (200,000).
const fn gap_spec(name: &'static str) -> Spec {
    Spec {
        ns: &[100_000],
        quick_ns: &[20_000],
        ..tree_spec(name, Some((1_000_000, 200_000)), Divisor::Q, "query")
    }
}

/// `dup` or `rebuild`: every N of the fork table.
const fn copy_spec(name: &'static str) -> Spec {
    Spec {
        ns: &FORK_TABLE_NS,
        quick_ns: &[21, 821, 12821, 100_000],
        ..tree_spec(name, None, Divisor::DupCopies, "copy")
    }
}

/// An address-space workload (maple-mm).
const fn mm_spec(
    name: &'static str,
    ns: &'static [u64],
    quick_ns: &'static [u64],
    divisor: Divisor,
    op: &'static str,
    n_counts: &'static str,
) -> Spec {
    Spec {
        name,
        provider: Provider::MapleMm,
        ns,
        q: None,
        quick_ns,
        quick_q: None,
        divisor,
        op,
        n_counts,
        checksum_of: None,
        deterministic: true,
    }
}

/// An RCU workload: a regular tree of N = 1,000,000 (`--quick` 200,000), Q
/// operations.
const fn rcu_spec(name: &'static str, q: (u64, u64), op: &'static str) -> Spec {
    Spec {
        provider: Provider::Rcu,
        ..tree_spec(name, Some(q), Divisor::Q, op)
    }
}

/// The lookups' Q: 10,000,000 (`--quick` 2,000,000).
const LOOKUP_Q: (u64, u64) = (10_000_000, 2_000_000);
/// The stores' Q: 1,000,000 (`--quick` 200,000).
const STORE_Q: (u64, u64) = (1_000_000, 200_000);
/// `range`'s windows: 100,000 (`--quick` 20,000), of 100 entries each.
const RANGE_Q: (u64, u64) = (100_000, 20_000);

impl Workload {
    /// Every workload, in BENCHMARKS.md's order, then the RCU benchmark.
    pub const ALL: [Workload; 24] = [
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
        Workload::IterRev,
        Workload::Range,
        Workload::IterMut,
        Workload::IntoIter,
        Workload::CursorNext,
        Workload::CursorPrev,
        Workload::ForkVmas,
        Workload::ForkGb,
        Workload::FirstWrite,
        Workload::RcuRead,
        Workload::RcuReadUnderWrite,
        Workload::RcuWrite,
    ];

    /// Everything about the workload: one row per workload.
    fn spec(self) -> Spec {
        use Divisor::*;
        match self {
            Workload::SeqStore => tree_spec("seq_store", None, N, "store"),
            Workload::RandStore => tree_spec("rand_store", None, N, "store"),
            Workload::Load => tree_spec("load", Some(LOOKUP_Q), Q, "lookup"),
            Workload::Iter => tree_spec("iter", None, TenN, "entry"),
            Workload::Erase => tree_spec("erase", None, N, "erase"),
            Workload::Overwrite => tree_spec("overwrite", Some(STORE_Q), Q, "store"),
            Workload::Dup => copy_spec("dup"),
            Workload::Rebuild => copy_spec("rebuild"),
            Workload::GapRev => gap_spec("gap_rev"),
            Workload::GapFwd => gap_spec("gap_fwd"),
            Workload::GapWinRev => gap_spec("gap_win_rev"),
            Workload::GapWinFwd => gap_spec("gap_win_fwd"),
            Workload::IterRev => tree_spec("iter_rev", None, TenN, "entry"),
            Workload::Range => tree_spec("range", Some(RANGE_Q), QWindows, "entry"),
            Workload::IterMut => tree_spec("iter_mut", None, TenN, "entry"),
            Workload::IntoIter => tree_spec("into_iter", None, TenN, "entry"),
            Workload::CursorNext => tree_spec("cursor_next", None, TenN, "entry"),
            Workload::CursorPrev => tree_spec("cursor_prev", None, TenN, "entry"),
            Workload::ForkVmas => mm_spec(
                "fork_vmas",
                &FORK_VMAS_NS,
                &QUICK_FORK_VMAS_NS,
                ForkVmasForks,
                "fork",
                "VMAs",
            ),
            // `--quick` keeps 1 GiB: its setup takes about a second, and
            // BENCHMARKS.md's `next() % 262144` is defined for it.
            Workload::ForkGb => mm_spec(
                "fork_gb",
                &[262_144],
                &[262_144],
                Fixed(16),
                "fork",
                "pages",
            ),
            Workload::FirstWrite => mm_spec(
                "first_write",
                &[262_144],
                &[262_144],
                Fixed(1024),
                "write",
                "pages",
            ),
            Workload::RcuRead => Spec {
                checksum_of: Some(Workload::Load),
                ..rcu_spec("rcu_read", LOOKUP_Q, "lookup")
            },
            // What the reader sees depends on how far the writer has got; every
            // value it reads is checked instead (`rcu.rs`).
            Workload::RcuReadUnderWrite => Spec {
                deterministic: false,
                ..rcu_spec("rcu_read_under_write", LOOKUP_Q, "lookup")
            },
            Workload::RcuWrite => Spec {
                checksum_of: Some(Workload::Overwrite),
                ..rcu_spec("rcu_write", STORE_Q, "store")
            },
        }
    }

    /// The name used on the command line and in the output.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The workload called `name`.
    pub fn from_name(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Who runs it.
    pub fn provider(self) -> Provider {
        self.spec().provider
    }

    /// The BENCHMARKS.md workload whose checksum this one reproduces at the same
    /// (N, Q): `rcu_read` is `load`'s lookups, `rcu_write` is `overwrite`.
    pub fn checksum_of(self) -> Workload {
        self.spec().checksum_of.unwrap_or(self)
    }

    /// Whether a run's checksum is determined by (N, Q). Not for
    /// `rcu_read_under_write`: what the reader sees depends on how far the writer
    /// has got; every value it reads is checked instead (`rcu.rs`).
    pub fn deterministic(self) -> bool {
        self.spec().deterministic
    }

    /// Whether the workload has a Q (a number of queries separate from N).
    pub fn has_q(self) -> bool {
        self.spec().q.is_some()
    }

    /// The default N values (BENCHMARKS.md, "Default sizes").
    pub fn default_ns(self) -> Vec<u64> {
        self.spec().ns.to_vec()
    }

    /// The default Q, for workloads that have one.
    pub fn default_q(self) -> Option<u64> {
        self.spec().q
    }

    /// `--quick` sizes: small enough that every workload against every
    /// implementation finishes in about two minutes on two cores.
    pub fn quick_ns(self) -> Vec<u64> {
        self.spec().quick_ns.to_vec()
    }

    /// `--quick` Q.
    pub fn quick_q(self) -> Option<u64> {
        self.spec().quick_q
    }

    /// What one operation of the ns/op figure is (for chart labels).
    pub fn op_name(self) -> &'static str {
        self.spec().op
    }

    /// What N counts (for chart labels).
    pub fn n_name(self) -> &'static str {
        self.spec().n_counts
    }

    /// What the ns/op figure divides by, for a run of size (n, q).
    pub fn ops(self, n: u64, q: u64) -> u64 {
        match self.spec().divisor {
            Divisor::N => n,
            Divisor::TenN => 10 * n,
            Divisor::Q => q,
            Divisor::QWindows => q * range_window(n),
            Divisor::DupCopies => dup_copies(n),
            Divisor::ForkVmasForks => fork_vmas_forks(n),
            Divisor::Fixed(k) => k,
        }
    }
}

/// Entries in one window of the `range` workload (fewer when N is smaller).
pub const RANGE_WINDOW: u64 = 100;

/// `range`'s window: W = min(100, N) entries.
pub fn range_window(n: u64) -> u64 {
    RANGE_WINDOW.min(n)
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

    /// What ns/op divides by, for every workload (BENCHMARKS.md's column).
    #[test]
    fn every_workload_divides_by_its_own_count() {
        let got: Vec<(&str, u64)> = Workload::ALL
            .iter()
            .map(|w| (w.name(), w.ops(1000, 7)))
            .collect();
        let want = [
            ("seq_store", 1000),
            ("rand_store", 1000),
            ("load", 7),
            ("iter", 10_000),
            ("erase", 1000),
            ("overwrite", 7),
            ("dup", 2000),
            ("rebuild", 2000),
            ("gap_rev", 7),
            ("gap_fwd", 7),
            ("gap_win_rev", 7),
            ("gap_win_fwd", 7),
            ("iter_rev", 10_000),
            ("range", 700),
            ("iter_mut", 10_000),
            ("into_iter", 10_000),
            ("cursor_next", 10_000),
            ("cursor_prev", 10_000),
            ("fork_vmas", 200),
            ("fork_gb", 16),
            ("first_write", 1024),
            ("rcu_read", 7),
            ("rcu_read_under_write", 7),
            ("rcu_write", 7),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn dup_copies_is_max_1_2m_over_n() {
        assert_eq!(dup_copies(21), 95238);
        assert_eq!(dup_copies(1_000_000), 2);
        assert_eq!(dup_copies(3_000_000), 1);
    }
}
