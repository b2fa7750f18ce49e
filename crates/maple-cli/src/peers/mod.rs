//! The implementations under test: maple and the Rust peers a user would pick
//! instead, each behind [`RangeMapUnderTest`], so that every workload is written once
//! (`bodies.rs`) and every implementation runs the same code; and, in the same
//! registry, the address-space strategies (`mm.rs`) and the concurrent tree (`rcu.rs`).

pub mod btreemap;
pub mod gap_scan;
pub mod maple;
pub mod nodit;
pub mod rangemap;
pub mod vm_allocator;

use crate::bodies::{self, Rep, Session};
use crate::workloads::{Case, Provider, Workload};
use crate::{mm, rcu};
use maple_mm::{PtStrategy, TreeStrategy};

/// Direction of a gap search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `empty_area`: the lowest fit.
    Fwd,
    /// `empty_area_rev`: the highest fit.
    Rev,
}

/// A map of non-overlapping inclusive `u64` ranges to `u64` values, with the
/// maple tree's semantics: a store overwrites (cut entries keep their value
/// outside the new range), adjacent entries are never merged.
///
/// Methods are generic (no `dyn`): every workload is monomorphised per implementation.
pub trait RangeMapUnderTest: Sized {
    /// A regular tree (no gap tracking).
    fn new_regular() -> Self;
    /// An allocation tree (gap tracking, where the implementation has it).
    fn new_alloc() -> Self {
        Self::new_regular()
    }
    /// `store_range(first, last, value)`.
    fn store(&mut self, first: u64, last: u64, value: u64);
    /// `load(index)`.
    fn load(&self, index: u64) -> Option<u64>;
    /// `erase(index)`: removes the whole entry containing `index`.
    fn erase(&mut self, index: u64);
    /// Number of entries.
    fn len(&self) -> usize;
    /// Calls `f(first, last, value)` for every entry, in order.
    fn for_each(&self, f: impl FnMut(u64, u64, u64));
    /// The duplicate operation (`clone`).
    fn dup(&self) -> Self;
    /// A new allocation tree filled by iterating `self` and storing every range in
    /// order (how fork built the child's tree before `__mt_dup`).
    fn rebuild(&self) -> Self {
        let mut t = Self::new_alloc();
        self.for_each(|f, l, v| t.store(f, l, v));
        t
    }
    /// Called once, untimed, before a run of gap queries that all use `min..=max`.
    fn prepare_gap_queries(&mut self, _min: u64, _max: u64) {}
    /// `empty_area(min, max, size)` / `empty_area_rev(min, max, size)`.
    fn gap(&mut self, dir: Dir, min: u64, max: u64, size: u64) -> Option<u64>;
    /// Bytes of tree nodes, where the implementation can tell.
    fn node_bytes(&self) -> Option<usize> {
        None
    }
}

/// Whether an implementation runs a workload, and if not, why.
pub type Support = Result<(), &'static str>;

/// One implementation in the registry.
pub struct Impl {
    /// The `impl=` name.
    pub name: &'static str,
    /// One line: what it is and how the workloads map onto its API.
    pub about: &'static str,
    /// In the default `--impl` set.
    pub default: bool,
    /// The workloads it is measured on (a column of their tables); it is not paired
    /// with any other.
    pub domain: fn(Workload) -> bool,
    /// Within its domain: whether it runs `workload`, and if not, why (an
    /// excluded measurement, reported as such).
    pub support: fn(Workload) -> Support,
    /// One repetition of a case, setup included.
    pub run: fn(&Case) -> Rep,
    /// For implementations whose setup the repetitions of one measurement share
    /// (as the address-space workloads do): builds the setup, untimed, and returns
    /// one repetition at each call. `None`: every repetition is a call of `run`.
    pub session: Option<fn(&Case) -> Session>,
}

impl Impl {
    /// Whether it is paired with `w` and runs it.
    pub fn runs(&self, w: Workload) -> bool {
        (self.domain)(w) && (self.support)(w).is_ok()
    }
}

fn tree_workloads(w: Workload) -> bool {
    w.provider() == Provider::RangeMaps
}

/// maple: the tree workloads, and the plain-tree side of `rcu_write`.
fn maple_domain(w: Workload) -> bool {
    tree_workloads(w) || w == Workload::RcuWrite
}

fn all_supported(_: Workload) -> Support {
    Ok(())
}

/// Every implementation, maple first.
pub const IMPLS: &[Impl] = &[
    Impl {
        name: "maple",
        about: "maple_tree::MapleTree<u64> (this project); in rcu_write, the plain tree",
        default: true,
        domain: maple_domain,
        support: all_supported,
        run: |c| bodies::run::<maple::Maple>(c),
        session: None,
    },
    Impl {
        name: "maple-noappend",
        about: "MapleTree<u64> with set_append_path(false): what the append fast path buys",
        default: false,
        domain: tree_workloads,
        support: all_supported,
        run: |c| bodies::run::<maple::MapleNoAppend>(c),
        session: None,
    },
    Impl {
        name: "btreemap",
        about: "std BTreeMap<start, (end, value)> range map, hand-written as a user would",
        default: true,
        domain: tree_workloads,
        support: all_supported,
        run: |c| bodies::run::<btreemap::BTreeRangeMap>(c),
        session: None,
    },
    Impl {
        name: "rangemap",
        about: rangemap::ABOUT,
        default: true,
        domain: tree_workloads,
        support: all_supported,
        run: rangemap::run,
        session: None,
    },
    Impl {
        name: "nodit",
        about: "nodit::NoditMap<u64, Interval<u64>, u64> with insert_overwrite",
        default: true,
        domain: tree_workloads,
        support: all_supported,
        run: |c| bodies::run::<nodit::Nodit>(c),
        session: None,
    },
    Impl {
        name: "vm-allocator",
        about: vm_allocator::ABOUT,
        default: true,
        domain: tree_workloads,
        support: vm_allocator::support,
        run: |c| bodies::run::<vm_allocator::VmAllocator>(c),
        session: None,
    },
    Impl {
        name: "mm-insert",
        about: "maple-mm fork: each VMA inserted into an empty tree, append path off (before mas_wr_append and __mt_dup)",
        default: true,
        domain: mm::tree_workloads,
        support: all_supported,
        run: |c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Insert))(),
        session: Some(|c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Insert))),
    },
    Impl {
        name: "mm-append",
        about: "maple-mm fork: VMAs stored in order with the append fast path (mas_wr_append)",
        default: true,
        domain: mm::tree_workloads,
        support: all_supported,
        run: |c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Append))(),
        session: Some(|c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Append))),
    },
    Impl {
        name: "mm-dup",
        about: "maple-mm fork: the VMA tree duplicated with a value map (__mt_dup)",
        default: true,
        domain: mm::tree_workloads,
        support: all_supported,
        run: |c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Dup))(),
        session: Some(|c| mm::session(c, mm::Strategy::Tree(TreeStrategy::Dup))),
    },
    Impl {
        name: "mm-copy",
        about: "maple-mm fork: every present PTE copied, frame refcounts (Linux's copy_page_range)",
        default: true,
        domain: mm::page_table_workloads,
        support: all_supported,
        run: |c| mm::session(c, mm::Strategy::PageTables(PtStrategy::Copy))(),
        session: Some(|c| mm::session(c, mm::Strategy::PageTables(PtStrategy::Copy))),
    },
    Impl {
        name: "mm-cowpte",
        about: "maple-mm fork: whole PTE tables shared copy-on-write (the proposed Copy-On-Write to Page Table series)",
        default: true,
        domain: mm::page_table_workloads,
        support: all_supported,
        run: |c| mm::session(c, mm::Strategy::PageTables(PtStrategy::CowPte))(),
        session: Some(|c| mm::session(c, mm::Strategy::PageTables(PtStrategy::CowPte))),
    },
    Impl {
        name: "maple-rcu",
        about: "maple_tree::RcuMapleTree<u64>: one read() guard per lookup, one write() guard per store",
        default: true,
        domain: rcu::domain,
        support: all_supported,
        run: |c| rcu::session::<1>(c)(),
        session: Some(rcu::session::<1>),
    },
    Impl {
        name: "maple-rcu-b64",
        about: "RcuMapleTree<u64>: one guard per 64 lookups (readers) / 64 stores (rcu_write)",
        default: true,
        domain: rcu::domain,
        support: all_supported,
        run: |c| rcu::session::<{ rcu::BATCH }>(c)(),
        session: Some(rcu::session::<{ rcu::BATCH }>),
    },
];

/// The implementation called `name`.
pub fn by_name(name: &str) -> Option<&'static Impl> {
    IMPLS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::checksum;
    use crate::reference::expected_checksum;

    /// Every implementation, on every workload it supports, at small sizes,
    /// reproduces the reference model's checksum. (`dup` / `rebuild` always copy
    /// about 2,000,000 entries, R = 2000000 / N: too slow for a debug build; their
    /// copy operations are checked by `copies_equal_the_source` instead, and at full
    /// size by every `maple bench` run.)
    #[test]
    fn every_impl_matches_the_reference_model_at_small_sizes() {
        let workloads = Workload::ALL.into_iter().filter(|w| {
            w.provider() == Provider::RangeMaps && !matches!(w, Workload::Dup | Workload::Rebuild)
        });
        for w in workloads {
            for n in [1, 21, 700] {
                let case = Case {
                    workload: w,
                    n,
                    q: w.has_q().then_some(3000),
                };
                let want = expected_checksum(&case);
                for imp in IMPLS.iter().filter(|i| i.runs(w)) {
                    let got = (imp.run)(&case).checksum;
                    assert_eq!(got, want, "impl={} {case:?}", imp.name);
                }
            }
        }
    }

    fn copies_of<P: RangeMapUnderTest>() {
        for n in [0, 1, 21, 700] {
            let mut src = P::new_alloc();
            for i in 0..n {
                src.store(16 * i, 16 * i + 9, i + 1);
            }
            let want = expected_checksum(&Case {
                workload: Workload::Dup,
                n,
                q: None,
            });
            assert_eq!(checksum(&src), want);
            let d = src.dup();
            let r = src.rebuild();
            drop(src);
            assert_eq!((checksum(&d), d.len()), (want, n as usize));
            assert_eq!((checksum(&r), r.len()), (want, n as usize));
        }
    }

    #[test]
    fn copies_equal_the_source() {
        copies_of::<maple::Maple>();
        copies_of::<maple::MapleNoAppend>();
        copies_of::<btreemap::BTreeRangeMap>();
        copies_of::<rangemap::RangeMap<u64>>();
        copies_of::<rangemap::RangeMap<rangemap::Stamped>>();
        copies_of::<nodit::Nodit>();
    }
}
