//! The registry of implementations: the root of the harness. Every implementation
//! that `maple bench` can measure is one entry of [`IMPLS`], which names the
//! workloads it runs and how one repetition runs. The entries hang the measured
//! code from here: the range-map peers (`peers/`, each behind
//! [`RangeMapUnderTest`](crate::range_map::RangeMapUnderTest), running the shared
//! bodies of `bodies.rs`), the address-space strategies (`mm.rs`) and the
//! concurrent tree (`rcu.rs`). Nothing below imports this file back; the
//! measuring and reporting code (`measure.rs`, `bench.rs`, `report/`) sits above it.
//!
//! Adding an implementation: write it (for a range map, a `peers/` file
//! implementing `RangeMapUnderTest`) and add its entry here.

use crate::bodies;
use crate::peers::{btreemap, maple, nodit, rangemap, vm_allocator};
use crate::rep::{Rep, Session};
use crate::workloads::{Case, Provider, Support, Workload};
use crate::{mm, rcu};
use maple_mm::{PtStrategy, TreeStrategy};
use maple_tree::{Boxed, Inline};

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
        support: btreemap::support,
        run: |c| bodies::run::<btreemap::BTreeRangeMap>(c),
        session: None,
    },
    Impl {
        name: "rangemap",
        about: rangemap::ABOUT,
        default: true,
        domain: tree_workloads,
        support: rangemap::support,
        run: rangemap::run,
        session: None,
    },
    Impl {
        name: "nodit",
        about: "nodit::NoditMap<u64, Interval<u64>, u64> with insert_overwrite",
        default: true,
        domain: tree_workloads,
        support: nodit::support,
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
        run: |c| rcu::session::<1, Boxed>(c)(),
        session: Some(rcu::session::<1, Boxed>),
    },
    Impl {
        name: "maple-rcu-b64",
        about: "RcuMapleTree<u64>: one guard per 64 lookups (readers) / 64 stores (rcu_write)",
        default: true,
        domain: rcu::domain,
        support: all_supported,
        run: |c| rcu::session::<{ rcu::BATCH }, Boxed>(c)(),
        session: Some(rcu::session::<{ rcu::BATCH }, Boxed>),
    },
    Impl {
        name: "maple-rcu-inline",
        about: "RcuMapleTree<u64, Inline>: values inside the nodes (no box per value); one guard per lookup or store",
        default: true,
        domain: rcu::domain,
        support: all_supported,
        run: |c| rcu::session::<1, Inline>(c)(),
        session: Some(rcu::session::<1, Inline>),
    },
];

/// The implementation called `name`.
pub fn by_name(name: &str) -> Option<&'static Impl> {
    IMPLS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
