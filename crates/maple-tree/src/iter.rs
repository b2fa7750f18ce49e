//! Iterators over entries: in order, both ways, over the whole tree or the
//! entries overlapping a range.

use crate::node::NodePtr;
use crate::tree::MapleTree;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::num::NonZeroU32;
use core::ops::RangeInclusive;

/// An entry handed out by an iteration: its leaf, its slot, and its range.
pub(crate) struct Found {
    pub(crate) leaf: NodePtr,
    pub(crate) slot: usize,
    pub(crate) range: RangeInclusive<u64>,
}

/// The leaf one end of an iteration stands in: everything a step from entry
/// to entry reads.
///
/// It is copied out of the tree when the end enters the leaf: its node,
/// bounds, last slot, and a mask of the present slots not yet handed out.
/// Stepping from entry to entry then touches only the mask and the leaf's
/// pivots and slots (the kernel's `mas_next` likewise stays in its leaf and
/// walks up only at the leaf's end). The out-of-line code that crosses
/// leaves takes and returns it by value, never by reference, so that the
/// optimiser can keep its five words in registers across a whole loop.
///
/// The header is read once per leaf visit, so the entries of one leaf agree
/// with one snapshot of its count and value bits even while an RCU writer
/// appends to it: pivots and slots below a snapshot's count never change
/// while the node is reachable (see `node.rs`).
#[derive(Clone, Copy)]
struct Leaf {
    node: NodePtr,
    min: u64,
    max: u64,
    /// The leaf's last slot in the snapshot (its range ends at `max`).
    last: usize,
    /// Present slots this end has yet to hand out, one bit each (bits 0..16
    /// only: the leaf's value bits, masked).
    todo: u32,
}

impl Leaf {
    /// A leaf to stand in nowhere (an empty tree): nothing to do.
    fn none() -> Leaf {
        Leaf {
            node: NodePtr::DANGLING,
            min: 0,
            max: 0,
            last: 0,
            todo: 0,
        }
    }

    /// Enters `node`, covering `min..=max`; `keep` selects the slots (by
    /// position) this end may hand out.
    #[inline(always)]
    fn enter(node: NodePtr, min: u64, max: u64, keep: u32) -> Leaf {
        let snap = node.peek();
        Leaf {
            node,
            min,
            max,
            last: snap.count() - 1,
            todo: u32::from(snap.present_bits()) & keep,
        }
    }

    /// The range of present slot `i` of the leaf.
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
                self.node.pivot_unchecked(i - 1) + 1
            };
            let end = if i == self.last {
                self.max
            } else {
                self.node.pivot_unchecked(i)
            };
            start..=end
        }
    }

    /// Hands out the lowest slot of `todo`, which is `todo` (not empty).
    #[inline(always)]
    fn take_first(&mut self, todo: NonZeroU32) -> Found {
        // `todo` holds bits 0..16 only, so the slot is below 16.
        let slot = todo.trailing_zeros() as usize;
        self.todo = todo.get() & (todo.get() - 1);
        Found {
            leaf: self.node,
            slot,
            range: self.range_of(slot),
        }
    }

    /// Hands out the highest slot of `todo`, which is `todo` (not empty).
    #[inline(always)]
    fn take_last(&mut self, todo: NonZeroU32) -> Found {
        let slot = (u32::BITS - 1 - todo.leading_zeros()) as usize;
        self.todo = todo.get() ^ 1 << slot;
        Found {
            leaf: self.node,
            slot,
            range: self.range_of(slot),
        }
    }

    /// `todo` without the slots that do not end before `bound`.
    #[inline(never)]
    fn ending_before(self, bound: u64) -> u32 {
        let mut bits = self.todo;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if *self.range_of(slot).end() >= bound {
                return self.todo & ((1 << slot) - 1);
            }
        }
        self.todo
    }

    /// `todo` without the slots that do not start after `bound`.
    #[inline(never)]
    fn starting_after(self, bound: u64) -> u32 {
        let mut bits = self.todo;
        while bits != 0 {
            let slot = (u32::BITS - 1 - bits.leading_zeros()) as usize;
            bits ^= 1 << slot;
            if *self.range_of(slot).start() <= bound {
                return self.todo & !((2 << slot) - 1);
            }
        }
        self.todo
    }
}

/// The parent of the leaf one end stands in, read only at a crossing: with
/// it, moving to a sibling leaf costs a child load.
#[derive(Clone, Copy)]
struct Parent {
    /// `DANGLING` when the leaf is the root (then `idx == last == 0`, and
    /// the leaf covers everything: there is no other leaf to cross to).
    node: NodePtr,
    /// The slot leading to the leaf.
    idx: usize,
    /// The parent's last slot, and its bounds.
    last: usize,
    min: u64,
    max: u64,
}

impl Parent {
    /// The next sibling of the leaf `at` (all its present slots to do), if
    /// the parent has one.
    #[inline(always)]
    fn forward(&mut self, at: &Leaf) -> Option<Leaf> {
        if self.idx >= self.last {
            return None;
        }
        // The next sibling: it starts right after this leaf.
        self.idx += 1;
        let leaf = self.node.peek().child(self.idx);
        let max = if self.idx == self.last {
            self.max
        } else {
            // SAFETY: the parent is live (as the leaf), and `idx < last`,
            // where `last` is below the node's capacity: a stored pivot.
            unsafe { self.node.pivot_unchecked(self.idx) }
        };
        Some(Leaf::enter(leaf, at.max + 1, max, u32::MAX))
    }

    /// As [`forward`](Self::forward), toward lower indices.
    #[inline(always)]
    fn backward(&mut self, at: &Leaf) -> Option<Leaf> {
        if self.idx == 0 {
            return None;
        }
        // The previous sibling: it ends right before this leaf.
        self.idx -= 1;
        let leaf = self.node.peek().child(self.idx);
        let min = if self.idx == 0 {
            self.min
        } else {
            // SAFETY: the parent is live (as the leaf), and
            // `idx - 1 < last`, where `last` is below the node's capacity:
            // a stored pivot.
            unsafe { self.node.pivot_unchecked(self.idx - 1) + 1 }
        };
        Some(Leaf::enter(leaf, min, at.min - 1, u32::MAX))
    }
}

/// Walks from `root` (of a tree `height` levels high, at least 1) to the
/// leaf holding `index`, and returns the slot holding it, the leaf (with
/// all present slots to do) and its parent.
///
/// Iterators keep no path: when an end's parent is used up (once every 4
/// to 16 leaves) it walks down again from the root to the index after (or
/// before) its leaf. That keeps the iterator a handful of words that never
/// leave registers, where a recorded path would pin the whole iterator in
/// memory for the one step in a hundred that climbs.
#[inline(never)]
fn descend(root: NodePtr, height: usize, index: u64) -> (usize, Leaf, Parent) {
    let mut up = Parent {
        node: NodePtr::DANGLING,
        idx: 0,
        last: 0,
        min: 0,
        max: u64::MAX,
    };
    let mut node = root.snap();
    let (mut min, mut max) = (0, u64::MAX);
    for _ in 1..height {
        let idx = node.slot_of(index);
        up = Parent {
            node: node.node(),
            idx,
            last: node.count() - 1,
            min,
            max,
        };
        let (cmin, cmax) = (node.slot_start(idx, min), node.slot_end(idx, max));
        node = node.child(idx).snap();
        min = cmin;
        max = cmax;
    }
    let leaf = Leaf::enter(node.node(), min, max, u32::MAX);
    (node.slot_of(index), leaf, up)
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
///
/// A step inside a leaf is a few instructions inline in the caller's loop
/// (the lowest bit of the mask names the slot), and a step to a sibling
/// leaf a few more. Nothing here is passed by reference to code out of
/// line (the walk from the root takes and returns values), so the optimiser
/// can keep the whole iterator in registers.
pub(crate) struct Ends {
    front: Leaf,
    back: Leaf,
    fup: Parent,
    bup: Parent,
    root: NodePtr,
    height: usize,
    met: bool,
    /// Entries taken into either mask so far (for [`Ends::len`]).
    taken: usize,
}

impl Ends {
    #[inline(always)]
    pub(crate) fn new((root, height): (Option<NodePtr>, usize), lo: u64, hi: u64) -> Ends {
        let none = Parent {
            node: NodePtr::DANGLING,
            idx: 0,
            last: 0,
            min: 0,
            max: 0,
        };
        let Some(root) = root else {
            return Ends {
                front: Leaf::none(),
                back: Leaf::none(),
                fup: none,
                bup: none,
                root: NodePtr::DANGLING,
                height: 0,
                met: true,
                taken: 0,
            };
        };
        let (at, mut front, fup) = descend(root, height, lo);
        front.todo &= u32::MAX << at;
        let (at, mut back, bup) = descend(root, height, hi);
        // Slots 0..=at: a shift by at + 1 (up to 16) stays below 32.
        back.todo &= !(u32::MAX << (at + 1));
        let mut met = false;
        if front.node == back.node {
            // One leaf: the front's mask holds everything, the back takes from it.
            front.todo &= back.todo;
            back.todo = 0;
            met = true;
        } else if front.max >= back.min {
            front.todo = front.ending_before(back.min);
            met = true;
        }
        Ends {
            front,
            back,
            fup,
            bup,
            root,
            height,
            met,
            taken: ones(front.todo) + ones(back.todo),
        }
    }

    /// Entries left, for an iteration over a whole tree of `len` entries.
    #[inline]
    fn len(&self, len: usize) -> usize {
        let held = ones(self.front.todo) + ones(self.back.todo);
        len.saturating_sub(self.taken) + held
    }

    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<Found> {
        let todo = match NonZeroU32::new(self.front.todo) {
            Some(todo) => todo,
            None => self.refill_front()?,
        };
        Some(self.front.take_first(todo))
    }

    #[inline(always)]
    pub(crate) fn next_back(&mut self) -> Option<Found> {
        let todo = match NonZeroU32::new(self.back.todo) {
            Some(todo) => todo,
            None => self.refill_back()?,
        };
        Some(self.back.take_last(todo))
    }

    /// The leaf after the front's: a sibling, or (the parent used up) a walk
    /// from the root. `None` at the last leaf of the tree.
    #[inline(always)]
    fn front_leaf(&mut self) -> Option<Leaf> {
        if let Some(leaf) = self.fup.forward(&self.front) {
            return Some(leaf);
        }
        if self.front.max == u64::MAX {
            return None;
        }
        let (_, mut leaf, up) = descend(self.root, self.height, self.front.max + 1);
        // In RCU mode the leaf found may be a newer version, split
        // elsewhere: its slots up to the old leaf's end were handed out
        // (or passed over) already.
        if leaf.min <= self.front.max {
            leaf.todo = leaf.starting_after(self.front.max);
        }
        self.fup = up;
        Some(leaf)
    }

    /// As [`front_leaf`](Self::front_leaf), toward lower indices.
    #[inline(always)]
    fn back_leaf(&mut self) -> Option<Leaf> {
        if let Some(leaf) = self.bup.backward(&self.back) {
            return Some(leaf);
        }
        if self.back.min == 0 {
            return None;
        }
        let (_, mut leaf, up) = descend(self.root, self.height, self.back.min - 1);
        // As in `front_leaf`: keep only what lies before the old leaf.
        if leaf.max >= self.back.min {
            leaf.todo = leaf.ending_before(self.back.min);
        }
        self.bup = up;
        Some(leaf)
    }

    /// The front's mask is empty: cross into the next leaf with an entry,
    /// or (once met) take over the back's lowest entry. Returns the front's
    /// new mask; `None`, with the mask left empty, when nothing is left.
    /// Inline: it runs once per leaf, but a call would need the iterator in
    /// memory.
    #[inline(always)]
    fn refill_front(&mut self) -> Option<NonZeroU32> {
        while !self.met {
            self.front = self.front_leaf()?;
            if self.front.max >= self.back.min {
                self.front.todo = self.front.ending_before(self.back.min);
                self.met = true;
            }
            self.taken += ones(self.front.todo);
            if let Some(todo) = NonZeroU32::new(self.front.todo) {
                return Some(todo);
            }
        }
        // The front stands in the back's leaf from now on; it never crosses
        // again, so its parent is no longer needed.
        let todo = NonZeroU32::new(self.back.todo)?;
        let lowest = todo.get() & todo.get().wrapping_neg();
        self.back.todo ^= lowest;
        self.front = Leaf {
            todo: lowest,
            ..self.back
        };
        NonZeroU32::new(lowest)
    }

    /// As [`refill_front`](Self::refill_front), toward lower indices.
    #[inline(always)]
    fn refill_back(&mut self) -> Option<NonZeroU32> {
        while !self.met {
            self.back = self.back_leaf()?;
            if self.back.min <= self.front.max {
                self.back.todo = self.back.starting_after(self.front.max);
                self.met = true;
            }
            self.taken += ones(self.back.todo);
            if let Some(todo) = NonZeroU32::new(self.back.todo) {
                return Some(todo);
            }
        }
        let todo = NonZeroU32::new(self.front.todo)?;
        let highest = 1 << (u32::BITS - 1 - todo.leading_zeros());
        self.front.todo ^= highest;
        self.back = Leaf {
            todo: highest,
            ..self.front
        };
        NonZeroU32::new(highest)
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

    #[inline(always)]
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
    #[inline(always)]
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
            len: tree.len(),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (RangeInclusive<u64>, &'a mut V);

    #[inline(always)]
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
    #[inline(always)]
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

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // SAFETY: `raw` walks the tree this iterator borrows for `'a`, whose
        // values are `V`s.
        Some((found.range, unsafe { found.leaf.value(found.slot) }))
    }
}

impl<V> DoubleEndedIterator for Range<'_, V> {
    #[inline(always)]
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

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.raw.next().map(Self::take)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.raw.len(self.len);
        (left, Some(left))
    }
}

impl<V> DoubleEndedIterator for IntoIter<V> {
    #[inline(always)]
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
            len: self.len(),
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
