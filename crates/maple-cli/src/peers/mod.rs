//! The range-map implementations under test: maple and the Rust peers a user
//! would pick instead, each behind
//! [`RangeMapUnderTest`](crate::range_map::RangeMapUnderTest), so that every tree
//! workload is written once (`bodies.rs`) and every implementation runs the same
//! code. Their entries in the registry of implementations are in `registry.rs`.

pub mod btreemap;
pub mod gap_scan;
pub mod maple;
pub mod nodit;
pub mod rangemap;
pub mod vm_allocator;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::checksum;
    use crate::range_map::RangeMapUnderTest;
    use crate::reference::expected_checksum;
    use crate::workloads::{Case, Workload};

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
