//! `vm_allocator::AddressAllocator` (rust-vmm): the address-space allocator of
//! Cloud Hypervisor and other VMMs. It is an allocator, not a map, so it runs only
//! the gap workloads it can express:
//!
//! - Setup: each `store_range(s, s+len-1, _)` is `allocate(len, 1, ExactMatch(s))`
//!   (values are not stored; the gap workloads' checksum does not use them).
//! - The allocator manages one range fixed when it is made. It is made over
//!   `0..=u64::MAX-1` (the most `AddressAllocator::new` accepts), and before the
//!   queries (untimed) the range above `pos + 1000` is allocated, so that free space
//!   is exactly what `empty_area(_rev)(0, pos + 1000, size)` searches.
//! - It has no read-only search: a query is `allocate(size, 1, LastMatch)` (highest
//!   fit, for `gap_rev`) or `FirstMatch` (lowest, `gap_fwd`), then `free` of what it
//!   got; the time includes both.
//! - `gap_win_rev` / `gap_win_fwd` cannot be expressed: a query cannot be limited
//!   to a window `a..=a+4095` (`ExactMatch` takes one start address, not a range).
//! - `gap_fwd` cannot be answered correctly through allocate + free: `free` merges the
//!   freed range with a free neighbour only if that neighbour spans at least two
//!   addresses (it looks the neighbour up with `search_superset(end+1..=end+2)`), so a
//!   `FirstMatch` that leaves a one-address remnant splits the free gap in two for
//!   good, and later queries miss a gap that exists (the test below shows it; the
//!   checksum does not match). `gap_rev` is not affected in this workload: its highest
//!   fit is always in the 1000-address tail, which no query of size <= 64 can leave
//!   with a one-address remnant.

use vm_allocator::{AddressAllocator, AllocPolicy};

use crate::range_map::{Dir, RangeMapUnderTest};
use crate::workloads::{Support, Workload};

pub const ABOUT: &str = "vm_allocator::AddressAllocator (gap workloads only): \
     query = allocate(size, align 1, LastMatch/FirstMatch) then free";

const NOT_A_MAP: &str =
    "an address allocator, not a map: it stores no values and has no lookup, erase or iteration";
const NO_WINDOW: &str = "its search range is fixed when the allocator is made; \
     a query cannot be limited to a window a..=a+4095";

const FRAGMENTS: &str = "allocate+free (its only way to search) fragments the free space: \
     free() does not merge with a one-address free neighbour, so later FirstMatch \
     queries miss gaps that exist and the checksum does not match (see peers/vm_allocator.rs)";

/// Which workloads the allocator's API can express.
pub fn support(w: Workload) -> Support {
    match w {
        Workload::GapRev => Ok(()),
        Workload::GapFwd => Err(FRAGMENTS),
        Workload::GapWinRev | Workload::GapWinFwd => Err(NO_WINDOW),
        _ => Err(NOT_A_MAP),
    }
}

/// An `AddressAllocator` over `0..=u64::MAX-1`.
pub struct VmAllocator {
    alloc: AddressAllocator,
    entries: usize,
}

impl RangeMapUnderTest for VmAllocator {
    fn new_regular() -> Self {
        VmAllocator {
            alloc: AddressAllocator::new(0, u64::MAX).expect("AddressAllocator::new"),
            entries: 0,
        }
    }

    fn store(&mut self, first: u64, last: u64, _value: u64) {
        self.alloc
            .allocate(last - first + 1, 1, AllocPolicy::ExactMatch(first))
            .unwrap_or_else(|e| panic!("vm-allocator: ExactMatch({first:#x}) failed: {e}"));
        self.entries += 1;
    }

    fn load(&self, _index: u64) -> Option<u64> {
        unreachable!("{NOT_A_MAP}")
    }

    fn erase(&mut self, _index: u64) {
        unreachable!("{NOT_A_MAP}")
    }

    fn for_each_rev(&self, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn for_each_overlapping(&self, _first: u64, _last: u64, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn for_each_mut(&mut self, _f: impl FnMut(u64, u64, &mut u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn into_each(self, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn cursor_walk(&self, _dir: Dir, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn len(&self) -> usize {
        self.entries
    }

    fn for_each(&self, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NOT_A_MAP}")
    }

    fn dup(&self) -> Self {
        unreachable!("{NOT_A_MAP}")
    }

    fn prepare_gap_queries(&mut self, min: u64, max: u64) {
        assert_eq!(
            min,
            self.alloc.base(),
            "vm-allocator: the search must start at its base"
        );
        if max < self.alloc.end() {
            let size = self.alloc.end() - max;
            self.alloc
                .allocate(size, 1, AllocPolicy::ExactMatch(max + 1))
                .unwrap_or_else(|e| panic!("vm-allocator: reserving above {max:#x} failed: {e}"));
        }
    }

    #[inline]
    fn gap(&mut self, dir: Dir, _min: u64, _max: u64, size: u64) -> Option<u64> {
        let policy = match dir {
            Dir::Fwd => AllocPolicy::FirstMatch,
            Dir::Rev => AllocPolicy::LastMatch,
        };
        let r = self.alloc.allocate(size, 1, policy).ok()?;
        self.alloc
            .free(&r)
            .unwrap_or_else(|e| panic!("vm-allocator: free({r:?}) failed: {e}"));
        Some(r.start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why `gap_fwd` is excluded: after an allocate + free that left a one-address
    /// remnant, the free gap `0..=9` stays split in two and a size-10 request fails.
    #[test]
    fn free_does_not_merge_a_one_address_neighbour() {
        let mut a = AddressAllocator::new(0, 100).unwrap(); // 0..=99
        a.allocate(90, 1, AllocPolicy::ExactMatch(10)).unwrap(); // 10..=99 taken
        let r = a.allocate(10, 1, AllocPolicy::FirstMatch).unwrap();
        assert_eq!((r.start(), r.end()), (0, 9)); // 0..=9 is free
        a.free(&r).unwrap();
        let r = a.allocate(9, 1, AllocPolicy::FirstMatch).unwrap(); // leaves 9..=9
        assert_eq!((r.start(), r.end()), (0, 8));
        a.free(&r).unwrap(); // 0..=8 freed again, but not merged with 9..=9
        assert!(a.allocate(10, 1, AllocPolicy::FirstMatch).is_err()); // 0..=9 is free!
    }

    #[test]
    fn gap_rev_through_allocate_and_free() {
        let mut v = VmAllocator::new_regular();
        v.store(10, 19, 1);
        v.store(25, 29, 2);
        v.prepare_gap_queries(0, 40);
        assert_eq!(v.gap(Dir::Rev, 0, 40, 5), Some(36));
        assert_eq!(v.gap(Dir::Rev, 0, 40, 11), Some(30));
        assert_eq!(v.gap(Dir::Rev, 0, 40, 12), None);
        assert_eq!(v.gap(Dir::Rev, 0, 40, 11), Some(30)); // nothing leaked
    }
}
