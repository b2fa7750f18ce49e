//! Iterators over entries: in order, both ways, over the whole tree or the
//! entries overlapping a range.

use crate::node::{NodePtr, LEAF_SLOTS};
use crate::tree::MapleTree;
use crate::walk::Path;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::RangeInclusive;

/// An entry handed out by an iteration: its leaf, its slot, and its range.
pub(crate) struct Found {
    pub(crate) leaf: NodePtr,
    pub(crate) slot: usize,
    pub(crate) range: RangeInclusive<u64>,
}

/// One end of an iteration.
///
/// The leaf it stands in is copied out of the path when the end enters it:
/// its node, bounds, last slot, and a mask of the present slots not yet
/// handed out. Stepping from entry to entry then touches only the mask and
/// the leaf's pivots and slots (the kernel's `mas_next` likewise stays in its
/// leaf and walks up only at the leaf's end). The leaf's parent is copied
/// too, so that moving to a sibling leaf costs a child load; the path above
/// is read only when the parent is used up.
///
/// Headers are read once per node visit, so the entries of one leaf agree
/// with one snapshot of its count and value bits even while an RCU writer
/// appends to it: pivots and slots below a snapshot's count never change
/// while the node is reachable (see `node.rs`).
struct End {
    path: Path,
    leaf: NodePtr,
    min: u64,
    max: u64,
    /// The leaf's last slot in the snapshot (its range ends at `max`).
    last: usize,
    /// Present slots of the leaf this end has yet to hand out, one bit each.
    todo: u32,
    /// The leaf's parent (`DANGLING` when the leaf is the root), the slot
    /// leading to the leaf, the parent's last slot and its bounds. The path's
    /// copy of the parent's slot is stale until [`climb`](Self::climb).
    parent: NodePtr,
    pidx: usize,
    plast: usize,
    pmin: u64,
    pmax: u64,
}

impl End {
    /// An end that stands nowhere (an empty tree, or an iteration that ended).
    fn new() -> End {
        End {
            path: Path::new(),
            leaf: NodePtr::DANGLING,
            min: 0,
            max: 0,
            last: 0,
            todo: 0,
            parent: NodePtr::DANGLING,
            pidx: 0,
            plast: 0,
            pmin: 0,
            pmax: 0,
        }
    }

    /// Takes the path's leaf and its parent as the current ones; `keep`
    /// selects the slots (by position) this end may still hand out.
    #[inline]
    fn enter_path(&mut self, keep: u32) {
        let at = *self.path.leaf();
        self.enter_leaf(at.node, at.min, at.max, keep);
        if self.path.height >= 2 {
            let up = self.path.lv[1];
            self.parent = up.node;
            self.pidx = up.idx;
            self.plast = up.node.peek().count() - 1;
            self.pmin = up.min;
            self.pmax = up.max;
        } else {
            // No parent: no sibling to move to without the path.
            self.parent = NodePtr::DANGLING;
            self.pidx = 0;
            self.plast = 0;
        }
    }

    #[inline(always)]
    fn enter_leaf(&mut self, leaf: NodePtr, min: u64, max: u64, keep: u32) {
        let snap = leaf.peek();
        self.leaf = leaf;
        self.min = min;
        self.max = max;
        self.last = snap.count() - 1;
        self.todo = u32::from(snap.present_bits()) & keep;
    }

    /// Stops this end for good: no slot left, and nowhere to cross to.
    #[inline]
    fn stop(&mut self) {
        self.todo = 0;
        self.pidx = 0;
        self.plast = 0;
        self.path.height = 0;
    }

    /// The range of present slot `i` of the current leaf.
    #[inline(always)]
    fn range_of(&self, i: usize) -> RangeInclusive<u64> {
        // SAFETY: the leaf is live (the iterator borrows the tree, or an RCU
        // guard keeps it), and a present slot lies below the snapshot's count
        // (at most 16), so `i <= last <= 15`: pivot `i - 1` (for `i > 0`) and
        // pivot `i` (for `i < last`) are below the leaf's 15.
        unsafe {
            let start = if i == 0 {
                self.min
            } else {
                self.leaf.pivot_unchecked(i - 1) + 1
            };
            let end = if i == self.last {
                self.max
            } else {
                self.leaf.pivot_unchecked(i)
            };
            start..=end
        }
    }

    /// The next present slot going forward, crossing leaves as needed.
    #[inline(always)]
    fn next(&mut self) -> Option<Found> {
        if self.todo == 0 && !self.cross_forward() {
            return None;
        }
        // `todo` has bits 0..16 only, so the slot is below 16.
        let slot = self.todo.trailing_zeros() as usize & (LEAF_SLOTS - 1);
        self.todo &= self.todo - 1;
        Some(Found {
            leaf: self.leaf,
            slot,
            range: self.range_of(slot),
        })
    }

    /// The next present slot going backward, crossing leaves as needed.
    #[inline(always)]
    fn next_back(&mut self) -> Option<Found> {
        if self.todo == 0 && !self.cross_backward() {
            return None;
        }
        let slot = (u32::BITS - 1 - self.todo.leading_zeros()) as usize & (LEAF_SLOTS - 1);
        self.todo ^= 1 << slot;
        Some(Found {
            leaf: self.leaf,
            slot,
            range: self.range_of(slot),
        })
    }

    /// Enters the following leaves until one has a present slot. Out of line:
    /// it runs once per leaf, and keeping it out keeps the per-entry loop small.
    #[inline(never)]
    fn cross_forward(&mut self) -> bool {
        loop {
            if self.pidx < self.plast {
                // The next sibling: it starts right after this leaf.
                self.pidx += 1;
                let leaf = self.parent.peek().child(self.pidx);
                let min = self.max + 1;
                let max = if self.pidx == self.plast {
                    self.pmax
                } else {
                    self.parent.pivot(self.pidx)
                };
                self.enter_leaf(leaf, min, max, u32::MAX);
            } else if self.climb() && self.path.next_leaf() {
                self.enter_path(u32::MAX);
            } else {
                self.stop();
                return false;
            }
            if self.todo != 0 {
                return true;
            }
        }
    }

    /// As [`cross_forward`](Self::cross_forward), toward lower indices.
    #[inline(never)]
    fn cross_backward(&mut self) -> bool {
        loop {
            if self.pidx > 0 {
                // The previous sibling: it ends right before this leaf.
                self.pidx -= 1;
                let leaf = self.parent.peek().child(self.pidx);
                let max = self.min - 1;
                let min = if self.pidx == 0 {
                    self.pmin
                } else {
                    self.parent.pivot(self.pidx - 1) + 1
                };
                self.enter_leaf(leaf, min, max, u32::MAX);
            } else if self.climb() && self.path.prev_leaf() {
                self.enter_path(u32::MAX);
            } else {
                self.stop();
                return false;
            }
            if self.todo != 0 {
                return true;
            }
        }
    }

    /// Writes the parent's slot back into the path, so that the path can
    /// climb from the current leaf. False when there is nothing above.
    #[inline]
    fn climb(&mut self) -> bool {
        if self.path.height < 2 {
            return false;
        }
        self.path.lv[1].idx = self.pidx;
        true
    }
}

/// The two ends of an iteration over the entries overlapping `lo..=hi`,
/// each standing in the leaf slot holding its bound.
fn ends((root, height): (Option<NodePtr>, usize), lo: u64, hi: u64) -> (End, End) {
    let (mut front, mut back) = (End::new(), End::new());
    if root.is_some() {
        front.path.descend(root, height, lo);
        front.enter_path(u32::MAX << front.path.leaf().idx);
        back.path.descend(root, height, hi);
        // Slots 0..=idx: a shift by idx + 1 (up to 16) stays below 32.
        back.enter_path(!(u32::MAX << (back.path.leaf().idx + 1)));
    }
    (front, back)
}

/// An iteration over every entry of a tree whose number of entries is known:
/// the two ends have met when they have handed out that many between them,
/// so the only per-entry bookkeeping is one count.
pub(crate) struct Counted {
    front: End,
    back: End,
    remaining: usize,
}

impl Counted {
    fn new(top: (Option<NodePtr>, usize), len: usize) -> Counted {
        let (front, back) = ends(top, 0, u64::MAX);
        Counted {
            front,
            back,
            remaining: len,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<Found> {
        if self.remaining == 0 {
            return None;
        }
        let found = self.front.next()?;
        self.remaining -= 1;
        Some(found)
    }

    #[inline(always)]
    fn next_back(&mut self) -> Option<Found> {
        if self.remaining == 0 {
            return None;
        }
        let found = self.back.next_back()?;
        self.remaining -= 1;
        Some(found)
    }
}

/// An iteration over the entries overlapping `lo..=hi`. `lo`/`hi` shrink past
/// every entry handed out, so the two ends never hand out the same entry,
/// even when (RCU mode) they stand in two versions of one leaf.
pub(crate) struct Bounded {
    front: End,
    back: End,
    lo: u64,
    hi: u64,
}

impl Bounded {
    pub(crate) fn new(top: (Option<NodePtr>, usize), lo: u64, hi: u64) -> Bounded {
        let (front, back) = ends(top, lo, hi);
        Bounded {
            front,
            back,
            lo,
            hi,
        }
    }

    #[inline]
    fn stop(&mut self) {
        self.front.stop();
        self.back.stop();
    }

    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<Found> {
        let found = self.front.next()?;
        let (start, end) = (*found.range.start(), *found.range.end());
        if start > self.hi {
            self.stop();
            return None;
        }
        if end >= self.hi {
            self.stop();
        } else {
            self.lo = end + 1;
        }
        Some(found)
    }

    #[inline(always)]
    pub(crate) fn next_back(&mut self) -> Option<Found> {
        let found = self.back.next_back()?;
        let (start, end) = (*found.range.start(), *found.range.end());
        if end < self.lo {
            self.stop();
            return None;
        }
        if start <= self.lo {
            self.stop();
        } else {
            self.hi = start - 1;
        }
        Some(found)
    }
}

/// The entries of a tree in order, as `(range, &value)`; from [`MapleTree::iter`].
pub struct Iter<'a, V> {
    raw: Counted,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Iter<'a, V> {
    /// Iterates over the tree `(root, height)` holding `len` entries.
    pub(crate) fn new(top: (Option<NodePtr>, usize), len: usize) -> Self {
        Iter {
            raw: Counted::new(top, len),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        Some((found.range, found.leaf.value(found.slot)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.raw.remaining, Some(self.raw.remaining))
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        Some((found.range, found.leaf.value(found.slot)))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}
impl<V> FusedIterator for Iter<'_, V> {}

/// The entries of a tree in order, as `(range, &mut value)`; from [`MapleTree::iter_mut`].
pub struct IterMut<'a, V> {
    raw: Counted,
    _tree: PhantomData<&'a mut MapleTree<V>>,
}

impl<'a, V> IterMut<'a, V> {
    pub(crate) fn new(tree: &'a mut MapleTree<V>) -> Self {
        IterMut {
            raw: Counted::new(tree.top(), tree.len),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (RangeInclusive<u64>, &'a mut V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // Each slot is handed out once (`Counted`), so the borrows are disjoint.
        Some((found.range, found.leaf.value_mut(found.slot)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.raw.remaining, Some(self.raw.remaining))
    }
}

impl<V> DoubleEndedIterator for IterMut<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        Some((found.range, found.leaf.value_mut(found.slot)))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}
impl<V> FusedIterator for IterMut<'_, V> {}

/// The entries overlapping a range, in order; from [`MapleTree::range`].
pub struct Range<'a, V> {
    raw: Bounded,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Range<'a, V> {
    pub(crate) fn new(top: (Option<NodePtr>, usize), lo: u64, hi: u64) -> Self {
        Range {
            raw: Bounded::new(top, lo, hi),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Range<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        Some((found.range, found.leaf.value(found.slot)))
    }
}

impl<V> DoubleEndedIterator for Range<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        Some((found.range, found.leaf.value(found.slot)))
    }
}

impl<V> FusedIterator for Range<'_, V> {}

/// The entries of a tree in order, by value; from `MapleTree::into_iter`.
/// Dropping it part way drops the entries not yet taken.
pub struct IntoIter<V> {
    raw: Counted,
    tree: ManuallyDrop<MapleTree<V>>,
}

impl<V> IntoIter<V> {
    #[inline]
    fn take(found: Found) -> (RangeInclusive<u64>, V) {
        // Taking the value clears its bit, so the tree's drop will not see it.
        (found.range, found.leaf.take_value(found.slot))
    }
}

impl<V> Iterator for IntoIter<V> {
    type Item = (RangeInclusive<u64>, V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.raw.next().map(Self::take)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.raw.remaining, Some(self.raw.remaining))
    }
}

impl<V> DoubleEndedIterator for IntoIter<V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.raw.next_back().map(Self::take)
    }
}

impl<V> ExactSizeIterator for IntoIter<V> {}
impl<V> FusedIterator for IntoIter<V> {}

impl<V> Drop for IntoIter<V> {
    fn drop(&mut self) {
        // SAFETY: dropped exactly once, here; the tree frees what is left.
        unsafe { ManuallyDrop::drop(&mut self.tree) }
    }
}

impl<V> IntoIterator for MapleTree<V> {
    type Item = (RangeInclusive<u64>, V);
    type IntoIter = IntoIter<V>;

    fn into_iter(self) -> IntoIter<V> {
        IntoIter {
            raw: Counted::new(self.top(), self.len),
            tree: ManuallyDrop::new(self),
        }
    }
}

impl<'a, V> IntoIterator for &'a MapleTree<V> {
    type Item = (RangeInclusive<u64>, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<'a, V> IntoIterator for &'a mut MapleTree<V> {
    type Item = (RangeInclusive<u64>, &'a mut V);
    type IntoIter = IterMut<'a, V>;

    fn into_iter(self) -> IterMut<'a, V> {
        self.iter_mut()
    }
}
