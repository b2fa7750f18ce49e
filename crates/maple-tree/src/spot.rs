//! Where a read cursor stands: its leaf level and the two levels above it,
//! kept by value.
//!
//! A write needs the whole path from the root (every level it may replace),
//! so [`CursorMut`](crate::CursorMut) keeps one. A read cursor only steps and
//! seeks, and nearly every step stays in its leaf or moves to a sibling
//! leaf: it keeps the leaf, the leaf's parent and the parent's parent, and
//! walks down again from the root when it steps past the grandparent (once
//! every 16 to 256 leaves). That keeps it a handful of words with nothing
//! out of line taking its address, so a loop stepping it keeps the fields in
//! registers, as the iterators do; a recorded path would pin the whole
//! cursor in memory for the rare step that climbs.

use crate::node::{NodePtr, Snap};
use crate::walk::Level;
use core::ops::RangeInclusive;

/// A level the spot does not have (an empty tree's leaf, or the levels
/// above the root).
const NOWHERE: Level = Level {
    node: NodePtr::DANGLING,
    idx: 0,
    min: 0,
    max: 0,
};

/// A read cursor's position in a tree that stays borrowed (and so
/// unchanged) for as long as the position is used.
#[derive(Clone, Copy)]
pub(crate) struct Spot {
    /// The tree's root and height (0: empty, and every level is
    /// [`NOWHERE`]).
    root: Option<NodePtr>,
    height: usize,
    /// The leaf, with the slot the cursor is on.
    leaf: Level,
    /// The leaf's present slots, one bit each, and its last slot, read
    /// from its header when the spot enters it (0 and 0 in an empty tree):
    /// a step inside the leaf reads neither the header nor its own height.
    bits: u32,
    last: usize,
    /// The leaf's parent and the slot leading to the leaf (height 2 and up).
    up: Level,
    /// The parent's parent and the slot leading to the parent (height 3
    /// and up).
    grand: Level,
    /// The index the cursor was put at, or the start of the range it
    /// stepped to.
    index: u64,
}

impl Spot {
    /// The slot holding `index` in the tree `(root, height)`.
    pub(crate) fn new((root, height): (Option<NodePtr>, usize), index: u64) -> Spot {
        let mut spot = Spot {
            root,
            height,
            leaf: NOWHERE,
            bits: 0,
            last: 0,
            up: NOWHERE,
            grand: NOWHERE,
            index,
        };
        if let Some(root) = root {
            spot.descend(root, height - 1, 0, u64::MAX, index);
        }
        spot
    }

    /// The index the cursor was put at, or the start of the range it
    /// stepped to.
    #[inline]
    pub(crate) fn index(&self) -> u64 {
        self.index
    }

    /// The range (entry or gap) the cursor is on.
    pub(crate) fn range(&self) -> RangeInclusive<u64> {
        if self.height == 0 {
            return 0..=u64::MAX;
        }
        self.leaf.start()..=self.leaf.end()
    }

    /// The value at the position.
    ///
    /// # Safety
    /// The position is in a `MapleTree<V>` that stays borrowed and unchanged
    /// for `'a` (by the caller).
    pub(crate) unsafe fn get<'a, V>(&self) -> Option<&'a V> {
        if self.bits >> self.leaf.idx & 1 == 0 {
            return None;
        }
        // SAFETY: the caller's promise (type and lifetime); the slot is
        // present.
        Some(unsafe { self.leaf.node.value(self.leaf.idx) })
    }

    /// Moves to the slot holding `index`, walking down from the lowest
    /// level the spot keeps that covers it (from the root when none does).
    pub(crate) fn seek(&mut self, index: u64) {
        self.index = index;
        let Some(root) = self.root else {
            return;
        };
        let covers = |level: &Level| level.min <= index && index <= level.max;
        if covers(&self.leaf) {
            self.leaf.idx = self.leaf.node.peek().slot_of(index);
        } else if self.height >= 2 && covers(&self.up) {
            let up = self.up;
            self.descend(up.node, 1, up.min, up.max, index);
        } else if self.height >= 3 && covers(&self.grand) {
            let grand = self.grand;
            self.descend(grand.node, 2, grand.min, grand.max, index);
        } else {
            self.descend(root, self.height - 1, 0, u64::MAX, index);
        }
    }

    /// Walks down from `node`, `h` levels above the leaves, covering
    /// `min..=max` and `index`, to the leaf slot holding `index`, and keeps
    /// the levels it passes that the spot keeps.
    #[inline(always)]
    fn descend(&mut self, node: NodePtr, h: usize, min: u64, max: u64, index: u64) {
        let leaf;
        (leaf, self.up, self.grand) = walk_down(node, h, min, max, index, (self.up, self.grand));
        self.enter(leaf);
    }

    /// Stands in `leaf`, reading its header once.
    #[inline(always)]
    fn enter(&mut self, leaf: Level) {
        let snap = leaf.node.peek();
        self.leaf = leaf;
        self.bits = u32::from(snap.present_bits());
        self.last = snap.count() - 1;
    }

    /// Steps to the nearest entry after (or before) the current range.
    ///
    /// The leaf's present bits name the entry's slot directly, so absent
    /// slots are skipped without being visited; a step inside the leaf reads
    /// only the entry's two bounds and its value. The levels above the leaf
    /// are read only when a leaf is crossed. With no entry left, the cursor
    /// ends on the last (first) range of the space, as stepping range by
    /// range would have left it.
    ///
    /// # Safety
    /// As for [`get`](Self::get).
    #[inline(always)]
    pub(crate) unsafe fn step_to_entry<'a, V>(
        &mut self,
        forward: bool,
    ) -> Option<(RangeInclusive<u64>, &'a V)> {
        // Slots strictly after (before) the current one, in its leaf; the
        // shift by `idx <= 15` stays below 32. (An empty tree has none.)
        let keep = if forward {
            (u32::MAX << 1) << self.leaf.idx
        } else {
            !(u32::MAX << self.leaf.idx)
        };
        let present = self.bits & keep;
        let leaf = self.leaf;
        if present != 0 {
            // Inside the leaf, one of the bounds is always a stored pivot:
            // an entry after the current slot is not slot 0, one before it
            // is not the last.
            // SAFETY: the leaf is live (the cursor borrows the tree). Going
            // forward, `idx < slot <= last <= 15` (a present slot lies below
            // the leaf's count, at most 16): pivot `slot - 1` is stored, and
            // so is pivot `slot` when `slot < last`. Going back,
            // `slot < idx <= last`: pivot `slot` is stored, and so is pivot
            // `slot - 1` when `slot > 0`.
            let (slot, range) = unsafe {
                if forward {
                    let slot = present.trailing_zeros() as usize;
                    let start = leaf.node.pivot_unchecked(slot - 1) + 1;
                    let end = if slot == self.last {
                        leaf.max
                    } else {
                        leaf.node.pivot_unchecked(slot)
                    };
                    (slot, start..=end)
                } else {
                    let slot = (u32::BITS - 1 - present.leading_zeros()) as usize;
                    let start = if slot == 0 {
                        leaf.min
                    } else {
                        leaf.node.pivot_unchecked(slot - 1) + 1
                    };
                    (slot, start..=leaf.node.pivot_unchecked(slot))
                }
            };
            // SAFETY: the caller's promise; the slot is present.
            return Some(unsafe { self.hand_out(slot, range) });
        }
        if !self.cross_to_entry(forward) {
            return None;
        }
        // The first (last) present slot of the leaf crossed into.
        let slot = if forward {
            self.bits.trailing_zeros() as usize
        } else {
            (u32::BITS - 1 - self.bits.leading_zeros()) as usize
        };
        self.leaf.idx = slot;
        let range = self.leaf.start()..=self.leaf.end();
        // SAFETY: the caller's promise; the slot is present.
        Some(unsafe { self.hand_out(slot, range) })
    }

    /// Stands on present slot `slot` of the leaf, whose range is `range`,
    /// and hands out its entry.
    ///
    /// # Safety
    /// As for [`get`](Self::get).
    #[inline(always)]
    unsafe fn hand_out<'a, V>(
        &mut self,
        slot: usize,
        range: RangeInclusive<u64>,
    ) -> (RangeInclusive<u64>, &'a V) {
        self.leaf.idx = slot;
        self.index = *range.start();
        // SAFETY: the caller's promise (type and lifetime); the slot is
        // present.
        (range, unsafe { self.leaf.node.value(slot) })
    }

    /// For [`step_to_entry`](Self::step_to_entry) when the current leaf has
    /// no entry left in that direction: crosses leaves until one has some
    /// slot present, and stands in it. With none (or in an empty tree),
    /// false, and the spot on the last (first) slot of the tree.
    ///
    /// Inline, as is everything it calls but the rare walk from the root,
    /// which takes and returns levels by value: nothing takes the address of
    /// the caller's spot, which therefore stays in registers.
    #[inline(always)]
    fn cross_to_entry(&mut self, forward: bool) -> bool {
        if self.height == 0 {
            return false;
        }
        let from = self.leaf.idx;
        let mut crossed_any = false;
        loop {
            let crossed = if forward {
                self.next_leaf()
            } else {
                self.prev_leaf()
            };
            if !crossed {
                // The last (first) slot of the last (first) leaf.
                let edge = if forward { self.last } else { 0 };
                if crossed_any || from != edge {
                    self.leaf.idx = edge;
                    self.index = self.leaf.start();
                }
                return false;
            }
            crossed_any = true;
            if self.bits != 0 {
                return true;
            }
        }
    }

    /// Steps one range forward (or back); false (staying put) at the end
    /// of the space.
    pub(crate) fn step(&mut self, forward: bool) -> bool {
        if self.height == 0 {
            return false;
        }
        let moved = if forward {
            if self.leaf.idx < self.last {
                self.leaf.idx += 1;
                true
            } else {
                self.next_leaf()
            }
        } else if self.leaf.idx > 0 {
            self.leaf.idx -= 1;
            true
        } else {
            self.prev_leaf()
        };
        if moved {
            self.index = self.leaf.start();
        }
        moved
    }

    /// Moves to slot 0 of the next leaf: the parent's next child, the
    /// grandparent's next child's first, or from the root. False (staying
    /// put) in the last leaf. The tree is not empty.
    #[inline(always)]
    fn next_leaf(&mut self) -> bool {
        if self.leaf.max == u64::MAX {
            return false;
        }
        let next = self.leaf.max + 1;
        if self.height >= 2 {
            let up = self.up.node.peek();
            if self.up.idx + 1 < up.count() {
                self.up.idx += 1;
                self.enter(first_child(up, self.up.idx, next, self.up.max));
                return true;
            }
        }
        if self.height >= 3 {
            let grand = self.grand.node.peek();
            if self.grand.idx + 1 < grand.count() {
                self.grand.idx += 1;
                self.up = first_child(grand, self.grand.idx, next, self.grand.max);
                self.enter(first_child(self.up.node.peek(), 0, next, self.up.max));
                return true;
            }
        }
        let root = self
            .root
            .expect("maple tree: a spot with height has a root");
        self.descend(root, self.height - 1, 0, u64::MAX, next);
        true
    }

    /// Moves to the last slot of the leaf before: as
    /// [`next_leaf`](Self::next_leaf), toward lower indices.
    #[inline(always)]
    fn prev_leaf(&mut self) -> bool {
        if self.leaf.min == 0 {
            return false;
        }
        let prev = self.leaf.min - 1;
        if self.height >= 2 && self.up.idx > 0 {
            let up = self.up.node.peek();
            self.up.idx -= 1;
            self.enter(last_child(up, self.up.idx, self.up.min, prev));
            return true;
        }
        if self.height >= 3 && self.grand.idx > 0 {
            let grand = self.grand.node.peek();
            self.grand.idx -= 1;
            self.up = last_child(grand, self.grand.idx, self.grand.min, prev);
            let up = self.up.node.peek();
            self.enter(last_child(up, self.up.idx, self.up.min, prev));
            return true;
        }
        let root = self
            .root
            .expect("maple tree: a spot with height has a root");
        self.descend(root, self.height - 1, 0, u64::MAX, prev);
        true
    }
}

/// Walks down from `node`, `h` levels above the leaves, covering
/// `min..=max` and `index`, to the leaf slot holding `index`. Returns the
/// leaf level and the two above it: those it passed (`node`'s among them),
/// and for a level above `node`, which it did not pass, `up` or `grand` as
/// given.
#[inline(never)]
fn walk_down(
    mut node: NodePtr,
    mut h: usize,
    mut min: u64,
    mut max: u64,
    index: u64,
    (mut up, mut grand): (Level, Level),
) -> (Level, Level, Level) {
    while h > 0 {
        let snap = node.snap();
        let (idx, child_min, child_max) = snap.step(index, min, max);
        let level = Level {
            node,
            idx,
            min,
            max,
        };
        match h {
            1 => up = level,
            2 => grand = level,
            _ => {}
        }
        node = snap.child(idx);
        (min, max) = (child_min, child_max);
        h -= 1;
    }
    let leaf = Level {
        node,
        idx: node.snap().slot_of(index),
        min,
        max,
    };
    (leaf, up, grand)
}

/// Child `idx` of internal node `parent` (covering up to `parent_max`),
/// entered from the left: its range starts at `min`, and it stands at its
/// slot 0.
fn first_child(parent: Snap, idx: usize, min: u64, parent_max: u64) -> Level {
    Level {
        node: parent.child(idx),
        idx: 0,
        min,
        max: parent.slot_end(idx, parent_max),
    }
}

/// Child `idx` of internal node `parent` (covering from `parent_min`),
/// entered from the right: its range ends at `max`, and it stands at its
/// last slot.
fn last_child(parent: Snap, idx: usize, parent_min: u64, max: u64) -> Level {
    let node = parent.child(idx);
    Level {
        node,
        idx: node.count() - 1,
        min: parent.slot_start(idx, parent_min),
        max,
    }
}
