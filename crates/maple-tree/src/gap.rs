//! Gap tracking and gap search.
//!
//! In an allocation tree every internal node records, for each child, the
//! largest run of absent indices inside that child. Because two absent slots
//! never sit side by side (not even across leaves), every maximal free range
//! is exactly one absent slot, so these records are exact: a child whose
//! record is below the requested size cannot hold a fit, and a child lying
//! wholly inside the search window whose record is big enough certainly does.
//! A search therefore descends only where a fit may be, and backs out at most
//! along the two window edges: O(log n).
//!
//! Sizes are counted saturating: the whole space, 2^64 indices, counts as
//! `u64::MAX`, which is still at least any size that can be asked for.

use crate::node::{span, Kind, NodePtr};

/// Largest absent run in a leaf covering `min..=max`.
pub(crate) fn leaf_gap(leaf: NodePtr, min: u64, max: u64) -> u64 {
    let mut gap = 0;
    for i in 0..leaf.count() {
        if !leaf.is_present(i) {
            gap = gap.max(span(leaf.slot_start(i, min), leaf.slot_end(i, max)));
        }
    }
    gap
}

/// Largest absent run below an internal node of an allocation tree.
pub(crate) fn node_gap(node: NodePtr) -> u64 {
    debug_assert_eq!(node.kind(), Kind::ARange);
    (0..node.count()).map(|i| node.gap(i)).max().unwrap_or(0)
}

/// What a gap search looks for: `size` absent indices inside `lo..=hi`.
#[derive(Clone, Copy)]
pub(crate) struct GapQuery {
    pub(crate) size: u64,
    pub(crate) lo: u64,
    pub(crate) hi: u64,
}

impl GapQuery {
    /// The lowest (or, with `rev`, the highest) start of a fit inside the free
    /// range `start..=end`.
    #[inline]
    fn fit(&self, start: u64, end: u64, rev: bool) -> Option<u64> {
        let (s, e) = (start.max(self.lo), end.min(self.hi));
        if s > e || span(s, e) < self.size {
            return None;
        }
        Some(if rev { e - (self.size - 1) } else { s })
    }

    /// Searches the subtree of `node` (covering `min..=max`, which overlaps
    /// the window). Slots are tried from the window's near end (its start,
    /// or with `rev` its end) and the scan stops at the first slot past the
    /// other end, so a node wholly inside the window costs no pivot search.
    pub(crate) fn search(&self, node: NodePtr, min: u64, max: u64, rev: bool) -> Option<u64> {
        let node = node.snap();
        let count = node.count();
        let kind = node.kind();
        let try_slot = |i: usize, s: u64, e: u64| -> Option<u64> {
            match kind {
                Kind::Leaf => (!node.is_present(i)).then(|| self.fit(s, e, rev)).flatten(),
                Kind::ARange if node.gap(i) < self.size => None,
                _ => self.search(node.child(i), s, e, rev),
            }
        };
        if rev {
            let mut i = if self.hi >= max {
                count - 1
            } else {
                node.slot_of_rev(self.hi)
            };
            loop {
                let s = node.slot_start(i, min);
                if let Some(found) = try_slot(i, s, node.slot_end(i, max)) {
                    return Some(found);
                }
                if s <= self.lo || i == 0 {
                    return None;
                }
                i -= 1;
            }
        } else {
            let mut i = if self.lo <= min {
                0
            } else {
                node.slot_of(self.lo)
            };
            loop {
                let e = node.slot_end(i, max);
                if let Some(found) = try_slot(i, node.slot_start(i, min), e) {
                    return Some(found);
                }
                if e >= self.hi || i + 1 == count {
                    return None;
                }
                i += 1;
            }
        }
    }
}
