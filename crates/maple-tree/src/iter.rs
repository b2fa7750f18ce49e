//! Iterators over entries: in order, both ways, over the whole tree or the
//! entries overlapping a range.

use crate::node::{is_inline, Children, NodePtr};
use crate::tree::MapleTree;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::num::{NonZeroU32, NonZeroU64};
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
/// bounds, last slot, and the present slots not yet handed out, in two
/// parts. `fast` holds *interior* slots (neither slot 0 nor the last),
/// whose range is two stored pivots, `pivot[i-1] + 1 ..= pivot[i]`: a step
/// that takes one needs no test of where the slot lies. `rest` holds the
/// others, as a mask, which the slow path hands out with the leaf's bounds.
/// The split keeps the order: for the front end (ascending), either `fast`
/// is empty or `rest` holds at most the last slot (handed out after
/// `fast`); for the back end (descending), either `fast` is empty or `rest`
/// holds at most slot 0. Removing any one slot from either part keeps that
/// true.
///
/// The front end's `fast` is a mask too, whose lowest bit names the next
/// slot; the back end's is a list of slot numbers in the order it hands
/// them out (see [`descending`]), so that neither end's step scans for the
/// highest bit of a mask.
///
/// Stepping from entry to entry touches only the mask and the leaf's pivots
/// and slots (the kernel's `mas_next` likewise stays in its leaf and walks
/// up only at the leaf's end). The code that crosses leaves takes and
/// returns it by value, never by reference, so that the optimiser can keep
/// it in registers across a whole loop.
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
    /// Pending interior slots. For the front end one bit each (bits
    /// 1..last); for the back end their numbers, highest first, four bits
    /// each from the lowest, up to the first zero (never an interior slot).
    /// See [`descending`].
    fast: u64,
    /// The other pending slots (bits 0..16 only: the leaf's value bits,
    /// masked).
    rest: u32,
}

impl Leaf {
    /// A leaf to stand in nowhere (an empty tree): nothing to do.
    fn none() -> Leaf {
        Leaf {
            node: NodePtr::DANGLING,
            min: 0,
            max: 0,
            last: 0,
            fast: 0,
            rest: 0,
        }
    }

    /// Enters `node`, covering `min..=max`; `keep` selects the slots (by
    /// position) this end may hand out. Everything is in `rest` until the
    /// caller splits it for its direction.
    #[inline(always)]
    fn enter(node: NodePtr, min: u64, max: u64, keep: u32) -> Leaf {
        let snap = node.peek();
        Leaf {
            node,
            min,
            max,
            last: snap.count() - 1,
            fast: 0,
            rest: u32::from(snap.present_bits()) & keep,
        }
    }

    /// Every slot still to hand out, for the front end.
    #[inline(always)]
    fn pending_front(&self) -> u32 {
        self.fast as u32 | self.rest
    }

    /// Every slot still to hand out, for the back end.
    #[inline(always)]
    fn pending_back(&self) -> u32 {
        slots_listed(self.fast) | self.rest
    }

    /// Moves the front end's `fast` slots back into `rest`, for the slow
    /// paths that take from either end of the leaf.
    #[inline(always)]
    fn unsplit_front(&mut self) {
        self.rest = self.pending_front();
        self.fast = 0;
    }

    /// As [`unsplit_front`](Self::unsplit_front), for the back end.
    #[inline(always)]
    fn unsplit_back(&mut self) {
        self.rest = self.pending_back();
        self.fast = 0;
    }

    /// The interior slots, `1..last`.
    #[inline(always)]
    fn inner(&self) -> u32 {
        // `last <= 15`: the shift stays below 32.
        ((1u32 << self.last) - 1) & !1
    }

    /// Makes `pending` this end's work, split for the front (ascending):
    /// the interior slots go to `fast` unless slot 0 is still to come first.
    #[inline(always)]
    fn split_front(&mut self, pending: u32) {
        if pending & 1 == 0 {
            self.fast = u64::from(pending & self.inner());
            self.rest = pending & !self.inner();
        } else {
            self.fast = 0;
            self.rest = pending;
        }
    }

    /// As [`split_front`](Self::split_front), for the back (descending):
    /// unless the last slot is still to come first.
    #[inline(always)]
    fn split_back(&mut self, pending: u32) {
        if pending >> self.last & 1 == 0 {
            self.fast = descending(pending & self.inner());
            self.rest = pending & !self.inner();
        } else {
            self.fast = 0;
            self.rest = pending;
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

    /// The range of interior slot `i` (`0 < i < last`): two stored pivots.
    #[inline(always)]
    fn inner_range(&self, i: usize) -> RangeInclusive<u64> {
        debug_assert!(0 < i && i < self.last);
        // SAFETY: the leaf is live (as in `range_of`), and `1 <= i < last
        // <= 15`: pivots `i - 1` and `i` are stored pivots below 15.
        unsafe { self.node.pivot_unchecked(i - 1) + 1..=self.node.pivot_unchecked(i) }
    }

    /// Hands out the lowest slot of the front end's `fast`, which is
    /// `fast` (not empty).
    #[inline(always)]
    fn take_first_fast(&mut self, fast: NonZeroU64) -> Found {
        // `fast` holds bits 1..15 only, so the slot is an interior one.
        let slot = fast.trailing_zeros() as usize;
        self.fast = fast.get() & (fast.get() - 1);
        Found {
            leaf: self.node,
            slot,
            range: self.inner_range(slot),
        }
    }

    /// Hands out `slot`, the first of the back end's `fast` list (not 0).
    #[inline(always)]
    fn take_last_fast(&mut self, slot: usize) -> Found {
        self.fast >>= 4;
        Found {
            leaf: self.node,
            slot,
            range: self.inner_range(slot),
        }
    }

    /// Slot 0, present, as an entry (its bit already cleared).
    #[inline(always)]
    fn first_slot(&self) -> Found {
        let end = if self.last == 0 {
            self.max
        } else {
            // SAFETY: the leaf is live (as in `range_of`), and `0 < last
            // <= 15`: pivot 0 is stored.
            unsafe { self.node.pivot_unchecked(0) }
        };
        Found {
            leaf: self.node,
            slot: 0,
            range: self.min..=end,
        }
    }

    /// The last slot, present, as an entry (its bit already cleared).
    #[inline(always)]
    fn last_slot(&self) -> Found {
        let start = if self.last == 0 {
            self.min
        } else {
            // SAFETY: the leaf is live (as in `range_of`), and `0 < last
            // <= 15`: pivot `last - 1` is stored.
            unsafe { self.node.pivot_unchecked(self.last - 1) + 1 }
        };
        Found {
            leaf: self.node,
            slot: self.last,
            range: start..=self.max,
        }
    }

    /// Hands out the lowest slot of `rest`; `fast` is empty.
    #[inline(always)]
    fn take_lowest(&mut self) -> Option<Found> {
        debug_assert_eq!(self.fast, 0);
        let pending = NonZeroU32::new(self.rest)?;
        let slot = pending.trailing_zeros() as usize;
        self.rest &= !(1 << slot);
        Some(Found {
            leaf: self.node,
            slot,
            range: self.range_of(slot),
        })
    }

    /// Hands out the highest slot of `rest`; `fast` is empty.
    #[inline(always)]
    fn take_highest(&mut self) -> Option<Found> {
        debug_assert_eq!(self.fast, 0);
        let pending = NonZeroU32::new(self.rest)?;
        let slot = (u32::BITS - 1 - pending.leading_zeros()) as usize;
        self.rest &= !(1 << slot);
        Some(Found {
            leaf: self.node,
            slot,
            range: self.range_of(slot),
        })
    }

    /// The slots of `rest` without those that do not end before `bound`
    /// (on a leaf just entered: `fast` is empty).
    #[inline(never)]
    fn ending_before(self, bound: u64) -> u32 {
        debug_assert_eq!(self.fast, 0);
        let todo = self.rest;
        let mut bits = todo;
        while bits != 0 {
            let slot = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if *self.range_of(slot).end() >= bound {
                return todo & ((1 << slot) - 1);
            }
        }
        todo
    }

    /// The slots of `rest` that start at or before `bound` (on a leaf just
    /// entered: `fast` is empty).
    #[inline(never)]
    fn starting_until(self, bound: u64) -> u32 {
        self.rest & !self.starting_after(bound)
    }

    /// The slots of `rest` without those that do not start after `bound`
    /// (on a leaf just entered: `fast` is empty).
    #[inline(never)]
    fn starting_after(self, bound: u64) -> u32 {
        debug_assert_eq!(self.fast, 0);
        let todo = self.rest;
        let mut bits = todo;
        while bits != 0 {
            let slot = (u32::BITS - 1 - bits.leading_zeros()) as usize;
            bits ^= 1 << slot;
            if *self.range_of(slot).start() <= bound {
                return todo & !((2 << slot) - 1);
            }
        }
        todo
    }
}

/// The parent of the leaf one end stands in, read only at a crossing: with
/// it, moving to a sibling leaf costs a child load. The same for the
/// parent's own parent (the end's grandparent), one level up.
#[derive(Clone, Copy)]
struct Parent {
    /// `DANGLING` when the level below is the root (then
    /// `idx == last == 0`, and that level covers everything: there is no
    /// other node to cross to).
    node: NodePtr,
    /// Its children, where the node's kind says they are (read once, when
    /// the parent is entered, rather than at every crossing).
    children: Children,
    /// The slot leading to the level below.
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
        // SAFETY: the parent is live (as the leaf), and `idx <= last`, below
        // the count.
        let leaf = unsafe { self.children.get_unchecked(self.idx) };
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
        // SAFETY: the parent is live (as the leaf); `idx` was below the
        // parent's count (`last + 1`) and has just been lowered.
        let leaf = unsafe { self.children.get_unchecked(self.idx) };
        // A reverse walk reads memory downwards, which the hardware's
        // prefetchers follow less well than a forward one: ask for the leaf
        // two back, so that its lines arrive while this one and the next
        // are handed out (one back is too late to hide a miss to memory).
        if self.idx > 1 {
            // SAFETY: `idx - 2 < idx`, below the count.
            unsafe { self.children.get_unchecked(self.idx - 2) }.prefetch_ahead();
        }
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

    /// A parent that has no other child to offer (the root's own level).
    const NONE: Parent = Parent {
        node: NodePtr::DANGLING,
        children: Children::NONE,
        idx: 0,
        last: 0,
        min: 0,
        max: u64::MAX,
    };

    /// Enters internal node `node`, covering `min..=max`, at its first
    /// (`last_child` false) or last child.
    #[inline(always)]
    fn enter(node: NodePtr, min: u64, max: u64, last_child: bool) -> Parent {
        let snap = node.peek();
        let last = snap.count() - 1;
        Parent {
            node,
            children: snap.children(),
            idx: if last_child { last } else { 0 },
            last,
            min,
            max,
        }
    }

    /// The leaf under the slot taken (all its present slots to do).
    #[inline(always)]
    fn leaf(&self) -> Leaf {
        let node = self.node.peek();
        Leaf::enter(
            // SAFETY: the parent is live (as the leaf it was entered from),
            // and `idx <= last`, below the count.
            unsafe { self.children.get_unchecked(self.idx) },
            node.slot_start(self.idx, self.min),
            node.slot_end(self.idx, self.max),
            u32::MAX,
        )
    }

    /// The next sibling of the parent `at` (standing at its first child),
    /// if this grandparent has one: as [`forward`](Self::forward), one
    /// level up.
    #[inline(always)]
    fn forward_parent(&mut self, at: &Parent) -> Option<Parent> {
        if self.idx >= self.last {
            return None;
        }
        self.idx += 1;
        // SAFETY: as in `forward`.
        let node = unsafe { self.children.get_unchecked(self.idx) };
        let max = if self.idx == self.last {
            self.max
        } else {
            // SAFETY: as in `forward`.
            unsafe { self.node.pivot_unchecked(self.idx) }
        };
        Some(Parent::enter(node, at.max + 1, max, false))
    }

    /// As [`forward_parent`](Self::forward_parent), toward lower indices
    /// (standing at the parent's last child).
    #[inline(always)]
    fn backward_parent(&mut self, at: &Parent) -> Option<Parent> {
        if self.idx == 0 {
            return None;
        }
        self.idx -= 1;
        // SAFETY: as in `backward`.
        let node = unsafe { self.children.get_unchecked(self.idx) };
        let min = if self.idx == 0 {
            self.min
        } else {
            // SAFETY: as in `backward`.
            unsafe { self.node.pivot_unchecked(self.idx - 1) + 1 }
        };
        Some(Parent::enter(node, min, at.min - 1, true))
    }
}

/// Walks from `root` (of a tree `height` levels high, at least 1) to the
/// leaf holding `index`, and returns the slot holding it, the leaf (with
/// all present slots to do), its parent and its grandparent.
///
/// Iterators keep no path, only those two levels: when an end's
/// grandparent is used up too (once every 16 to 256 leaves) it walks down
/// again from the root to the index after (or before) its leaf. That keeps
/// the iterator a handful of words that stay in registers through the loop
/// over a leaf, where a recorded path would pin the whole iterator in
/// memory for the rare step that climbs.
#[inline(never)]
fn descend(root: NodePtr, height: usize, index: u64) -> (usize, Leaf, Parent, Parent) {
    let (mut grand, mut up) = (Parent::NONE, Parent::NONE);
    let mut node = root.snap();
    let (mut min, mut max) = (0, u64::MAX);
    for _ in 1..height {
        let (idx, cmin, cmax) = node.step(index, min, max);
        grand = up;
        up = Parent {
            node: node.node(),
            children: node.children(),
            idx,
            last: node.count() - 1,
            min,
            max,
        };
        node = node.child(idx).snap();
        min = cmin;
        max = cmax;
    }
    let leaf = Leaf::enter(node.node(), min, max, u32::MAX);
    (node.slot_of(index), leaf, up, grand)
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
#[derive(Clone)]
pub(crate) struct Ends {
    front: Leaf,
    back: Leaf,
    fup: Parent,
    bup: Parent,
    /// The parents' parents: with them, moving to the next parent costs a
    /// child load too, and the walk from the root comes once every 16 to
    /// 256 leaves instead of every 4 to 16.
    fgrand: Parent,
    bgrand: Parent,
    root: NodePtr,
    height: usize,
    met: bool,
    /// The back end has not walked down yet: it stands for `hi` (in
    /// `back.min`) until `next_back` is first called, so a forward-only
    /// iteration walks from the root once, not twice. The front meets it
    /// in the leaf that reaches `hi`, and keeps that leaf's entries that
    /// start at or before `hi`.
    lazy_back: bool,
    /// Entries taken into either mask so far (for [`Ends::len`]).
    taken: usize,
}

impl Ends {
    #[inline(always)]
    pub(crate) fn new((root, height): (Option<NodePtr>, usize), lo: u64, hi: u64) -> Ends {
        let none = Parent::NONE;
        let Some(root) = root else {
            return Ends {
                front: Leaf::none(),
                back: Leaf::none(),
                fup: none,
                bup: none,
                fgrand: none,
                bgrand: none,
                root: NodePtr::DANGLING,
                height: 0,
                met: true,
                lazy_back: false,
                taken: 0,
            };
        };
        let (at, mut front, fup, fgrand) = descend(root, height, lo);
        let mut front_todo = front.rest & u32::MAX << at;
        let mut met = false;
        if front.max >= hi {
            front.rest = front_todo;
            front_todo = front.starting_until(hi);
            met = true;
        }
        front.split_front(front_todo);
        // The back waits (`lazy_back`), standing for `hi`.
        let back = Leaf {
            min: hi,
            ..Leaf::none()
        };
        Ends {
            front,
            back,
            fup,
            bup: none,
            fgrand,
            bgrand: none,
            root,
            height,
            met,
            lazy_back: true,
            taken: ones(front_todo),
        }
    }

    /// The back end's first walk, from the root to the slot holding `hi`:
    /// what [`new`](Self::new) would have done, now that the front has moved.
    /// Inline, although it runs once: a call would need the iterator in
    /// memory for the whole loop.
    #[inline(always)]
    fn walk_back(&mut self) {
        self.lazy_back = false;
        let hi = self.back.min;
        if self.met {
            // The front stands in the leaf reaching `hi` and holds every
            // entry left: the back takes from it.
            return;
        }
        let (at, mut back, bup, bgrand) = descend(self.root, self.height, hi);
        // Slots 0..=at: a shift by at + 1 (up to 16) stays below 32.
        let mut back_todo = back.rest & !(u32::MAX << (at + 1));
        if self.front.node == back.node {
            // One leaf: the front's masks hold everything, the back takes
            // from them.
            let keep = self.front.pending_front() & back_todo;
            self.taken -= ones(self.front.pending_front()) - ones(keep);
            self.front.split_front(keep);
            back_todo = 0;
            self.met = true;
        } else if back.min <= self.front.max {
            // Two versions of one part of the tree (RCU mode).
            back.rest = back_todo;
            back_todo = back.starting_after(self.front.max);
            self.met = true;
        }
        back.split_back(back_todo);
        self.taken += ones(back_todo);
        self.back = back;
        self.bup = bup;
        self.bgrand = bgrand;
    }

    /// The entries still to hand out, by shared reference, in order,
    /// without moving either end: what the `Debug` of an iterator prints.
    ///
    /// # Safety
    /// The tree this walks holds `V`s and lives for `'b`, and nothing holds
    /// a `&mut` to the value of an entry still to hand out: none of them has
    /// been handed out, and the iterator that owns `self` stays borrowed
    /// (so cannot hand one out) for `'b`.
    pub(crate) unsafe fn pending<'b, V: 'b>(
        &'b self,
    ) -> impl Iterator<Item = (RangeInclusive<u64>, &'b V)> + 'b {
        let mut rest = self.clone();
        core::iter::from_fn(move || {
            let found = rest.next()?;
            // SAFETY: the caller's promise; `rest` hands out only slots that
            // `self` still holds, each once.
            Some((found.range, unsafe { found.leaf.value::<V>(found.slot) }))
        })
    }

    /// Entries left, for an iteration over a whole tree of `len` entries.
    #[inline]
    fn len(&self, len: usize) -> usize {
        let held = ones(self.front.pending_front()) + ones(self.back.pending_back());
        len.saturating_sub(self.taken) + held
    }

    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<Found> {
        match NonZeroU64::new(self.front.fast) {
            Some(fast) => Some(self.front.take_first_fast(fast)),
            None => self.next_slow(),
        }
    }

    #[inline(always)]
    pub(crate) fn next_back(&mut self) -> Option<Found> {
        match (self.back.fast & 0xf) as usize {
            0 => self.next_back_slow(),
            slot => Some(self.back.take_last_fast(slot)),
        }
    }

    /// [`next_back`](Self::next_back), with the entry turned into `T` (the
    /// caller's item) on each path before the two join in the caller's
    /// loop, rather than after.
    ///
    /// `Iter`'s `next_back` uses it because its code is measurably shorter
    /// that way, not by design: the step inside a leaf compiles the same,
    /// but the leaf crossing keeps more of the iterator in registers (0.3
    /// to 0.4 fewer instructions per entry in a reverse iteration; see the
    /// README's iteration results). The other iterators were not measured
    /// in reverse and keep `next_back`.
    #[inline(always)]
    pub(crate) fn next_back_map<T>(&mut self, f: impl FnOnce(Found) -> T) -> Option<T> {
        match (self.back.fast & 0xf) as usize {
            0 => self.next_back_slow().map(f),
            slot => Some(f(self.back.take_last_fast(slot))),
        }
    }

    /// The leaf after the front's: a sibling, or (the parent used up) a walk
    /// from the root. `None` at the last leaf of the tree.
    #[inline(always)]
    fn front_leaf(&mut self) -> Option<Leaf> {
        if let Some(leaf) = self.fup.forward(&self.front) {
            return Some(leaf);
        }
        if let Some(up) = self.fgrand.forward_parent(&self.fup) {
            self.fup = up;
            return Some(up.leaf());
        }
        if self.front.max == u64::MAX {
            return None;
        }
        let (_, mut leaf, up, grand) = descend(self.root, self.height, self.front.max + 1);
        // In RCU mode the leaf found may be a newer version, split
        // elsewhere: its slots up to the old leaf's end were handed out
        // (or passed over) already.
        if leaf.min <= self.front.max {
            leaf.rest = leaf.starting_after(self.front.max);
        }
        self.fup = up;
        self.fgrand = grand;
        Some(leaf)
    }

    /// As [`front_leaf`](Self::front_leaf), toward lower indices.
    #[inline(always)]
    fn back_leaf(&mut self) -> Option<Leaf> {
        if let Some(leaf) = self.bup.backward(&self.back) {
            return Some(leaf);
        }
        if let Some(up) = self.bgrand.backward_parent(&self.bup) {
            self.bup = up;
            return Some(up.leaf());
        }
        if self.back.min == 0 {
            return None;
        }
        let (_, mut leaf, up, grand) = descend(self.root, self.height, self.back.min - 1);
        // As in `front_leaf`: keep only what lies before the old leaf.
        if leaf.max >= self.back.min {
            leaf.rest = leaf.ending_before(self.back.min);
        }
        self.bup = up;
        self.bgrand = grand;
        Some(leaf)
    }

    /// The front's `fast` mask is empty: hand out the lowest of its other
    /// slots, or cross into the next leaf with an entry, or (once met) take
    /// the back's lowest entry. `None` when nothing is left. Inline: it runs
    /// about once per leaf, but a call would need the iterator in memory.
    #[inline(always)]
    fn next_slow(&mut self) -> Option<Found> {
        loop {
            if self.front.rest != 0 {
                // The lowest pending slot (`fast` is empty); the rest is
                // split again, now that it starts after that slot.
                let found = self.front.take_lowest();
                self.front.split_front(self.front.rest);
                return found;
            }
            if self.met {
                // The front stands in the back's leaf, or behind it with
                // nothing left: take from the back.
                self.back.unsplit_back();
                return self.back.take_lowest();
            }
            self.front = self.front_leaf()?;
            let mut todo = self.front.rest;
            if self.front.max >= self.back.min {
                self.met = true;
                if self.lazy_back {
                    // The leaf reaching `hi`: its entries starting at or
                    // before it.
                    todo = self.front.starting_until(self.back.min);
                    self.taken += ones(todo);
                } else if self.front.node == self.back.node {
                    // The back's own leaf: take over what it has left
                    // (counted when the back took it).
                    todo = self.back.pending_back();
                    self.back.fast = 0;
                    self.back.rest = 0;
                } else {
                    // Two versions of one part of the tree (RCU mode): keep
                    // what ends before the back's leaf.
                    todo = self.front.ending_before(self.back.min);
                    self.taken += ones(todo);
                }
            } else {
                self.taken += ones(todo);
            }
            if todo & 1 != 0 {
                // Slot 0 comes first: hand it out here, where its bounds
                // are at hand, and leave the rest split.
                self.front.split_front(todo & !1);
                return Some(self.front.first_slot());
            }
            self.front.split_front(todo);
            if let Some(fast) = NonZeroU64::new(self.front.fast) {
                return Some(self.front.take_first_fast(fast));
            }
        }
    }

    /// As [`next_slow`](Self::next_slow), toward lower indices.
    ///
    /// Slot 0 of a leaf (handed out last) lies outside the fast list, as
    /// its range starts at the leaf's bound. When it is the last slot left,
    /// the back end also crosses into the previous leaf right away: the next
    /// step then takes that leaf's fast list without coming here again, so a
    /// leaf whose slot 0 holds an entry costs one trip through this path,
    /// not two.
    #[inline(always)]
    fn next_back_slow(&mut self) -> Option<Found> {
        // The list is used up; bits past its end may be left.
        self.back.fast = 0;
        if self.lazy_back {
            self.walk_back();
            if let slot @ 1.. = (self.back.fast & 0xf) as usize {
                return Some(self.back.take_last_fast(slot));
            }
        }
        loop {
            if self.back.rest == 1 && self.back.last != 0 {
                // Only slot 0 is left (the common case).
                let found = self.back.first_slot();
                self.back.rest = 0;
                if !self.met {
                    if let Some(leaf) = self.back_leaf() {
                        self.enter_back(leaf);
                    }
                }
                return Some(found);
            }
            if self.back.rest != 0 {
                if self.back.rest >> self.back.last & 1 != 0 {
                    // The last slot, first to go in a leaf just entered (its
                    // range ends at the leaf's bound, so it is not listed).
                    self.back.rest ^= 1 << self.back.last;
                    self.back.split_back(self.back.rest);
                    return Some(self.back.last_slot());
                }
                let found = self.back.take_highest();
                self.back.split_back(self.back.rest);
                return found;
            }
            if self.met {
                self.front.unsplit_front();
                return self.front.take_highest();
            }
            // Crossing into the previous leaf, once per leaf: marked cold, so
            // that the loop over a leaf keeps the leaf pointer in a register
            // rather than this path's state.
            cold();
            let leaf = self.back_leaf()?;
            self.enter_back(leaf);
            if let slot @ 1.. = (self.back.fast & 0xf) as usize {
                return Some(self.back.take_last_fast(slot));
            }
        }
    }

    /// Makes `leaf` (just crossed into, below the back's old leaf) the back
    /// end's, with the slots it is to hand out split for a descending walk;
    /// takes over the front's slots if the ends meet there.
    #[inline(always)]
    fn enter_back(&mut self, leaf: Leaf) {
        self.back = leaf;
        let mut todo = self.back.rest;
        if self.back.min <= self.front.max {
            self.met = true;
            if self.back.node == self.front.node {
                todo = self.front.pending_front();
                self.front.fast = 0;
                self.front.rest = 0;
            } else {
                todo = self.back.starting_after(self.front.max);
                self.taken += ones(todo);
            }
        } else {
            self.taken += ones(todo);
        }
        self.back.split_back(todo);
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

/// The slots of `mask` (interior ones: bits 1..15) as a list, highest
/// first, four bits each from the lowest, ending at the first zero (bits
/// past it are not read): what the back end's step reads with a mask and a
/// shift. Finding the highest bit of a mask on every step instead puts a
/// bit scan (`bsr`, as generic x86-64 has no `lzcnt`) and a bit clear on
/// the chain from one step to the next, where the forward step's chain is
/// only a clear of the lowest bit (see the README's iteration results).
///
/// Two table lookups, one per byte of the mask: the high byte's entry holds
/// its slots' list and, in its top six bits, how far to shift the low
/// byte's list (four bits per slot of the high byte). An interior mask has
/// at most 14 slots, so the list ends by bit 56, and bits 56..60 stay zero.
#[inline(always)]
fn descending(mask: u32) -> u64 {
    /// The set bits of a byte, highest first, as such a list, each plus
    /// `offset`; with four times their count in bits 58..64 if `count`.
    const fn lists(offset: u64, count: bool) -> [u64; 256] {
        let mut t = [0u64; 256];
        let mut byte = 0;
        while byte < 256 {
            let (mut list, mut shift, mut bit) = (0u64, 0u64, 8);
            while bit > 0 {
                bit -= 1;
                if byte >> bit & 1 != 0 {
                    list |= (bit + offset) << shift;
                    shift += 4;
                }
            }
            t[byte] = if count { list | shift << 58 } else { list };
            byte += 1;
        }
        t
    }
    const HIGH: [u64; 256] = lists(8, true);
    const LOW: [u64; 256] = lists(0, false);
    let high = HIGH[(mask >> 8 & 0xff) as usize];
    high | LOW[(mask & 0xff) as usize] << (high >> 58)
}

/// The slots in a list built by [`descending`], as a mask.
fn slots_listed(mut list: u64) -> u32 {
    let mut mask = 0;
    while list & 0xf != 0 {
        mask |= 1 << (list & 0xf);
        list >>= 4;
    }
    mask
}

/// Marks the path that calls it as rarely taken, for the compiler's
/// register allocation around it (stable Rust has no `likely`): a call
/// that does nothing, cheap where it is placed, once per leaf.
///
/// Only the back end's leaf crossing calls it: without it, the loop of a
/// reverse iteration reloaded the leaf pointer from the stack on every
/// entry, and loaded and stored the caller's running value there; with
/// it, both can stay in registers. On the front end's crossing the same
/// mark made forward iteration dearer, so it is not there.
#[cold]
#[inline(never)]
fn cold() {}

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
        self.raw.next_back_map(|found| {
            // SAFETY: `raw` walks the tree this iterator borrows for `'a`,
            // whose values are `V`s.
            (found.range, unsafe { found.leaf.value(found.slot) })
        })
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}
impl<V> FusedIterator for Iter<'_, V> {}

/// The entries left, as a list of `(range, value)` pairs.
impl<V: fmt::Debug> fmt::Debug for Iter<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// An iterator that goes on independently from where this one stands (as
/// `BTreeMap`'s does); no bound on `V`, since only the position is copied.
impl<V> Clone for Iter<'_, V> {
    fn clone(&self) -> Self {
        Iter {
            raw: self.raw.clone(),
            len: self.len,
            _tree: PhantomData,
        }
    }
}

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

impl<V> IterMut<'_, V> {
    /// The entries left, by shared reference, for as long as `self` is
    /// borrowed (for `Debug`).
    pub(crate) fn pending(&self) -> impl Iterator<Item = (RangeInclusive<u64>, &V)> {
        // SAFETY: the tree is borrowed for the iterator's lifetime, which
        // outlives `&self`; the entries left have not been handed out, and
        // `&self` keeps the iterator from handing them out meanwhile.
        unsafe { self.raw.pending::<V>() }
    }
}

/// The entries left, as a list of `(range, value)` pairs.
impl<V: fmt::Debug> fmt::Debug for IterMut<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.pending()).finish()
    }
}

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

/// The entries left, as a list of `(range, value)` pairs.
impl<V: fmt::Debug> fmt::Debug for Range<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// As for [`Iter`]: the copy goes on independently.
impl<V> Clone for Range<'_, V> {
    fn clone(&self) -> Self {
        Range {
            raw: self.raw.clone(),
            _tree: PhantomData,
        }
    }
}

/// The entries of a tree in order, by value; from `MapleTree::into_iter`.
/// Dropping it part way drops the entries not yet taken.
pub struct IntoIter<V> {
    raw: Ends,
    len: usize,
    tree: ManuallyDrop<MapleTree<V>>,
}

impl<V> IntoIter<V> {
    #[inline(always)]
    fn take(found: Found) -> (RangeInclusive<u64>, V) {
        if !core::mem::needs_drop::<V>() && is_inline::<V>() {
            // A value with nothing to drop, in the slot word itself: the
            // tree's teardown never reads such values (`MapleTree::clear`
            // only gives the nodes back), so a copy of its bits is the one
            // value from now on, and the slot need not be marked.
            // SAFETY: the iterator owns the tree, whose values are `V`s, and
            // lends nothing out; each slot is handed out once (`Ends`), and
            // the bits left in the slot are never read as a `V` again.
            (found.range, unsafe {
                core::ptr::read(found.leaf.value::<V>(found.slot))
            })
        } else {
            // SAFETY: the iterator owns the tree, whose values are `V`s, and
            // lends nothing out. Taking the value clears its bit, so the
            // tree's drop will not see it.
            (found.range, unsafe { found.leaf.take_value(found.slot) })
        }
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

impl<V> IntoIter<V> {
    /// The entries left, by shared reference, for as long as `self` is
    /// borrowed (for `Debug`).
    pub(crate) fn pending(&self) -> impl Iterator<Item = (RangeInclusive<u64>, &V)> {
        // SAFETY: the iterator owns the tree; the values of the entries left
        // are still in it (taking one moves past its slot for good), nothing
        // else refers to them, and `&self` keeps them from being taken
        // meanwhile.
        unsafe { self.raw.pending::<V>() }
    }
}

/// The entries left, as a list of `(range, value)` pairs.
impl<V: fmt::Debug> fmt::Debug for IntoIter<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.pending()).finish()
    }
}

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

#[cfg(test)]
mod tests {
    use super::{descending, slots_listed};

    /// Every interior mask a leaf can have (slots 1..15) comes out of
    /// `descending` as its slots, highest first, then a zero; and
    /// `slots_listed` gives the mask back.
    #[test]
    fn descending_lists_every_interior_mask_highest_first() {
        for mask in (0u32..1 << 14).map(|m| m << 1) {
            let list = descending(mask);
            let mut rest = list;
            let mut want = mask;
            while want != 0 {
                let highest = 31 - want.leading_zeros();
                assert_eq!(rest & 0xf, u64::from(highest), "mask {mask:#x}: {list:#x}");
                want ^= 1 << highest;
                rest >>= 4;
            }
            assert_eq!(rest & 0xf, 0, "mask {mask:#x}: {list:#x} does not end");
            assert_eq!(slots_listed(list), mask, "mask {mask:#x}: {list:#x}");
        }
    }
}
