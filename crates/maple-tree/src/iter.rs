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

    /// Hands out the lowest slot of `todo`, which must not be empty.
    #[inline(always)]
    fn take_first(&mut self) -> Found {
        debug_assert!(self.todo != 0);
        // `todo` holds bits 0..16 only, so the slot is below 16.
        let slot = self.todo.trailing_zeros() as usize & (LEAF_SLOTS - 1);
        self.todo &= self.todo.wrapping_sub(1);
        Found {
            leaf: self.leaf,
            slot,
            range: self.range_of(slot),
        }
    }

    /// Hands out the highest slot of `todo`, which must not be empty.
    #[inline(always)]
    fn take_last(&mut self) -> Found {
        debug_assert!(self.todo != 0);
        let slot = (u32::BITS - 1 - self.todo.leading_zeros()) as usize & (LEAF_SLOTS - 1);
        self.todo ^= 1 << slot;
        Found {
            leaf: self.leaf,
            slot,
            range: self.range_of(slot),
        }
    }

    /// Drops from `todo` the slots that do not end before `bound`.
    fn keep_ending_before(&mut self, bound: u64) {
        let mut bits = self.todo;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if *self.range_of(slot).end() >= bound {
                self.todo &= (1 << slot) - 1;
                return;
            }
        }
    }

    /// Drops from `todo` the slots that do not start after `bound`.
    fn keep_starting_after(&mut self, bound: u64) {
        let mut bits = self.todo;
        while bits != 0 {
            let slot = (u32::BITS - 1 - bits.leading_zeros()) as usize;
            bits ^= 1 << slot;
            if *self.range_of(slot).start() <= bound {
                self.todo &= !((2 << slot) - 1);
                return;
            }
        }
    }

    /// Enters the next leaf (all its present slots to do). False, staying
    /// put, at the last leaf of the tree.
    #[inline]
    fn cross_forward(&mut self) -> bool {
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
            true
        } else {
            self.climb_forward()
        }
    }

    /// As [`cross_forward`](Self::cross_forward), toward lower indices.
    #[inline]
    fn cross_backward(&mut self) -> bool {
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
            true
        } else {
            self.climb_backward()
        }
    }

    /// Crossing where the parent is used up: through the path, once every
    /// 4 to 16 leaves, so kept out of the sibling step.
    #[cold]
    #[inline(never)]
    fn climb_forward(&mut self) -> bool {
        let crossed = self.climb() && self.path.next_leaf();
        if crossed {
            self.enter_path(u32::MAX);
        }
        crossed
    }

    /// As [`climb_forward`](Self::climb_forward), toward lower indices.
    #[cold]
    #[inline(never)]
    fn climb_backward(&mut self) -> bool {
        let crossed = self.climb() && self.path.prev_leaf();
        if crossed {
            self.enter_path(u32::MAX);
        }
        crossed
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

/// Two ends walking toward each other over the entries overlapping
/// `lo..=hi`: the front from the slot holding `lo`, the back from the slot
/// holding `hi`.
///
/// Each end's `todo` holds only entries the other end will never hand out,
/// so handing out an entry checks nothing but the mask. The ends keep that
/// promise when they cross into a leaf, the one slow step: an end entering
/// a leaf that reaches the other end's leaf keeps only the entries before
/// the other end's leaf (none, in a tree that does not change under the
/// iteration, where that leaf is the other end's own), and from then on the
/// two have *met*: an end whose mask runs out takes the nearest entry from
/// the other end's mask, until both are empty. Comparing bounds rather than
/// nodes keeps this true when (RCU mode) the two ends stand in two versions
/// of one part of the tree; nothing depends on the tree's `len`.
pub(crate) struct Ends {
    front: End,
    back: End,
    met: bool,
    /// Entries taken into either mask so far (for [`Ends::len`]).
    taken: usize,
}

impl Ends {
    pub(crate) fn new((root, height): (Option<NodePtr>, usize), lo: u64, hi: u64) -> Ends {
        let (mut front, mut back) = (End::new(), End::new());
        let mut met = false;
        if root.is_some() {
            front.path.descend(root, height, lo);
            front.enter_path(u32::MAX << front.path.leaf().idx);
            back.path.descend(root, height, hi);
            // Slots 0..=idx: a shift by idx + 1 (up to 16) stays below 32.
            back.enter_path(!(u32::MAX << (back.path.leaf().idx + 1)));
            if front.leaf == back.leaf {
                // One leaf: the front's mask holds everything, the back takes from it.
                front.todo &= back.todo;
                back.todo = 0;
                met = true;
            } else if front.max >= back.min {
                front.keep_ending_before(back.min);
                met = true;
            }
        }
        let taken = ones(front.todo) + ones(back.todo);
        Ends {
            front,
            back,
            met,
            taken,
        }
    }

    /// Entries left, for an iteration over a whole tree of `len` entries.
    fn len(&self, len: usize) -> usize {
        let held = ones(self.front.todo) + ones(self.back.todo);
        len.saturating_sub(self.taken) + held
    }

    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<Found> {
        if self.front.todo == 0 && !self.refill_front() {
            return None;
        }
        Some(self.front.take_first())
    }

    #[inline(always)]
    pub(crate) fn next_back(&mut self) -> Option<Found> {
        if self.back.todo == 0 && !self.refill_back() {
            return None;
        }
        Some(self.back.take_last())
    }

    /// The front's mask is empty: cross into the next leaf with an entry,
    /// or (once met) take over the back's lowest entry. False when nothing
    /// is left. Out of line: it runs once per leaf, and keeping it out keeps
    /// the per-entry loop small.
    #[inline(never)]
    fn refill_front(&mut self) -> bool {
        while !self.met {
            if !self.front.cross_forward() {
                return false;
            }
            if self.front.max >= self.back.min {
                self.front.keep_ending_before(self.back.min);
                self.met = true;
            }
            self.taken += ones(self.front.todo);
            if self.front.todo != 0 {
                return true;
            }
        }
        let (front, back) = (&mut self.front, &self.back);
        if back.todo == 0 {
            return false;
        }
        // The front stands in the back's leaf from now on; it never crosses
        // again, so its path and parent are no longer needed.
        front.leaf = back.leaf;
        front.min = back.min;
        front.max = back.max;
        front.last = back.last;
        front.todo = back.todo & back.todo.wrapping_neg();
        self.back.todo ^= front.todo;
        true
    }

    /// As [`refill_front`](Self::refill_front), toward lower indices.
    #[inline(never)]
    fn refill_back(&mut self) -> bool {
        while !self.met {
            if !self.back.cross_backward() {
                return false;
            }
            if self.back.min <= self.front.max {
                self.back.keep_starting_after(self.front.max);
                self.met = true;
            }
            self.taken += ones(self.back.todo);
            if self.back.todo != 0 {
                return true;
            }
        }
        let (back, front) = (&mut self.back, &self.front);
        if front.todo == 0 {
            return false;
        }
        back.leaf = front.leaf;
        back.min = front.min;
        back.max = front.max;
        back.last = front.last;
        back.todo = 1 << (u32::BITS - 1 - front.todo.leading_zeros());
        self.front.todo ^= back.todo;
        true
    }
}

/// The number of slots in a mask (bits 0..16): two table lookups, where a
/// generic x86-64 build would count bits in a dozen instructions.
#[inline]
fn ones(mask: u32) -> usize {
    const BYTE: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = (i as u32).count_ones() as u8;
            i += 1;
        }
        t
    };
    usize::from(BYTE[(mask & 0xff) as usize]) + usize::from(BYTE[(mask >> 8 & 0xff) as usize])
}

/// The entries of a tree in order, as `(range, &value)`; from [`MapleTree::iter`].
pub struct Iter<'a, V> {
    raw: Ends,
    len: usize,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Iter<'a, V> {
    /// Iterates over the tree `(root, height)` holding `len` entries.
    pub(crate) fn new(top: (Option<NodePtr>, usize), len: usize) -> Self {
        Iter {
            raw: Ends::new(top, 0, u64::MAX),
            len,
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // SAFETY: `raw` walks the tree this iterator borrows for `'a`, whose
        // values are `V`s.
        Some((found.range, unsafe { found.leaf.value(found.slot) }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.raw.len(self.len);
        (left, Some(left))
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        // SAFETY: `raw` walks the tree this iterator borrows for `'a`, whose
        // values are `V`s.
        Some((found.range, unsafe { found.leaf.value(found.slot) }))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}
impl<V> FusedIterator for Iter<'_, V> {}

/// The entries of a tree in order, as `(range, &mut value)`; from [`MapleTree::iter_mut`].
pub struct IterMut<'a, V> {
    raw: Ends,
    len: usize,
    _tree: PhantomData<&'a mut MapleTree<V>>,
}

impl<'a, V> IterMut<'a, V> {
    pub(crate) fn new(tree: &'a mut MapleTree<V>) -> Self {
        IterMut {
            raw: Ends::new(tree.top(), 0, u64::MAX),
            len: tree.len,
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (RangeInclusive<u64>, &'a mut V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // SAFETY: `raw` walks the tree this iterator borrows exclusively for
        // `'a`; each slot is handed out once (`Ends`), so the borrows are
        // disjoint.
        Some((found.range, unsafe { found.leaf.value_mut(found.slot) }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.raw.len(self.len);
        (left, Some(left))
    }
}

impl<V> DoubleEndedIterator for IterMut<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        // SAFETY: as in `next`.
        Some((found.range, unsafe { found.leaf.value_mut(found.slot) }))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}
impl<V> FusedIterator for IterMut<'_, V> {}

/// The entries overlapping a range, in order; from [`MapleTree::range`].
pub struct Range<'a, V> {
    raw: Ends,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Range<'a, V> {
    pub(crate) fn new(top: (Option<NodePtr>, usize), lo: u64, hi: u64) -> Self {
        Range {
            raw: Ends::new(top, lo, hi),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Range<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // SAFETY: `raw` walks the tree this iterator borrows for `'a`, whose
        // values are `V`s.
        Some((found.range, unsafe { found.leaf.value(found.slot) }))
    }
}

impl<V> DoubleEndedIterator for Range<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        // SAFETY: `raw` walks the tree this iterator borrows for `'a`, whose
        // values are `V`s.
        Some((found.range, unsafe { found.leaf.value(found.slot) }))
    }
}

impl<V> FusedIterator for Range<'_, V> {}

/// The entries of a tree in order, by value; from `MapleTree::into_iter`.
/// Dropping it part way drops the entries not yet taken.
pub struct IntoIter<V> {
    raw: Ends,
    len: usize,
    tree: ManuallyDrop<MapleTree<V>>,
}

impl<V> IntoIter<V> {
    #[inline]
    fn take(found: Found) -> (RangeInclusive<u64>, V) {
        // SAFETY: the iterator owns the tree, whose values are `V`s, and
        // lends nothing out. Taking the value clears its bit, so the tree's
        // drop will not see it.
        (found.range, unsafe { found.leaf.take_value(found.slot) })
    }
}

impl<V> Iterator for IntoIter<V> {
    type Item = (RangeInclusive<u64>, V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.raw.next().map(Self::take)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.raw.len(self.len);
        (left, Some(left))
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
            raw: Ends::new(self.top(), 0, u64::MAX),
            len: self.len,
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
