//! The read API that [`MapleTree`](crate::MapleTree) and the concurrent
//! tree's `ReadGuard` share, so that the two cannot drift apart: both hand
//! their root and height to a [`ReadCore`] and forward to it.
//!
//! A read never writes and never retries: under a concurrent writer every
//! node it reaches is internally consistent (old or new; see `rcu.rs`), so
//! the same code serves both trees.

use crate::gap::GapQuery;
use crate::iter::Range;
use crate::node::{span, NodePtr};
use crate::query::query_bounds;
use crate::walk::find_slot;
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};

/// A tree as one reader sees it: its root and height, and the lifetime for
/// which the values it reaches stay valid.
pub(crate) struct ReadCore<'a, V> {
    root: Option<NodePtr>,
    height: usize,
    _values: PhantomData<&'a V>,
}

impl<V> Clone for ReadCore<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V> Copy for ReadCore<'_, V> {}

impl<'a, V> ReadCore<'a, V> {
    /// A view of the tree below `root`. The caller keeps every node and
    /// value reachable from it alive for `'a` (a shared borrow of the tree,
    /// or an epoch pin).
    #[inline]
    pub(crate) fn new((root, height): (Option<NodePtr>, usize)) -> Self {
        ReadCore {
            root,
            height,
            _values: PhantomData,
        }
    }

    /// The value of the entry containing `index`.
    #[inline]
    pub(crate) fn get(self, index: u64) -> Option<&'a V> {
        let (leaf, i, _, _) = find_slot(self.root, self.height, index)?;
        // SAFETY: the core reads a tree of `V`s borrowed (or guarded) for `'a`.
        leaf.is_present(i).then(|| unsafe { leaf.value(i) })
    }

    /// The entry containing `index`.
    #[inline]
    pub(crate) fn get_key_value(self, index: u64) -> Option<(RangeInclusive<u64>, &'a V)> {
        let (leaf, i, min, max) = find_slot(self.root, self.height, index)?;
        leaf.is_present(i).then(|| {
            (
                leaf.slot_start(i, min)..=leaf.slot_end(i, max),
                // SAFETY: as in `get`.
                unsafe { leaf.value(i) },
            )
        })
    }

    /// The entries overlapping `range`, in order.
    /// An empty range yields nothing; a reversed one panics (the rule of
    /// `BTreeMap::range`).
    #[track_caller]
    // Inline for `MapleTree::range`'s reason.
    #[inline(always)]
    pub(crate) fn range(self, range: &impl RangeBounds<u64>) -> Range<'a, V> {
        match query_bounds(range) {
            Some((first, last)) => Range::new((self.root, self.height), first, last),
            None => Range::new((None, 0), 0, 0),
        }
    }

    /// The lowest entry.
    pub(crate) fn first_key_value(self) -> Option<(RangeInclusive<u64>, &'a V)> {
        Range::new((self.root, self.height), 0, u64::MAX).next()
    }

    /// The highest entry.
    pub(crate) fn last_key_value(self) -> Option<(RangeInclusive<u64>, &'a V)> {
        Range::new((self.root, self.height), 0, u64::MAX).next_back()
    }

    /// The lowest (or with `rev` the highest) start of `size` absent
    /// indices inside `within`; none in an empty window.
    #[track_caller]
    pub(crate) fn find_gap(
        self,
        size: u64,
        within: &impl RangeBounds<u64>,
        rev: bool,
    ) -> Option<u64> {
        assert!(size > 0, "maple tree: gap search for size 0");
        let (lo, hi) = query_bounds(within)?;
        let q = GapQuery { size, lo, hi };
        match self.root {
            Some(root) => crate::gap::search(q, root, rev),
            // An empty tree: the window itself is free.
            None if span(lo, hi) < size => None,
            None if rev => Some(hi - (size - 1)),
            None => Some(lo),
        }
    }
}
