//! Read paths: descending from the root, and paths that remember the way down.
//!
//! Nodes keep no parent pointers. A walk that must move sideways or come back
//! up (iteration, cursors, writes) records the node, slot and bounds of every
//! level in a [`Path`]. Without parent pointers a node's replacement never has
//! to re-point its children, which keeps writes cheap and, in RCU mode, makes a
//! new subtree visible by one pointer store.

use crate::node::{NodePtr, Snap};
use core::mem::MaybeUninit;
use core::ops::{Index, IndexMut, RangeInclusive};

/// More levels than any tree that fits in memory can have: a non-root node
/// has at least 4 children, and 4^24 nodes of 256 bytes is 64 PiB.
pub(crate) const MAX_HEIGHT: usize = 24;

/// One level of a path: a node, the slot taken in it, and the range it covers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Level {
    pub(crate) node: NodePtr,
    pub(crate) idx: usize,
    pub(crate) min: u64,
    pub(crate) max: u64,
}

impl Level {
    /// First index of the slot taken.
    #[inline]
    pub(crate) fn start(&self) -> u64 {
        self.node.slot_start(self.idx, self.min)
    }

    /// Last index of the slot taken.
    #[inline]
    pub(crate) fn end(&self) -> u64 {
        self.node.slot_end(self.idx, self.max)
    }
}

/// The levels of a path. Every `insert` and `remove` makes a path, so its
/// 24 levels are not initialised up front (copying 768 bytes of
/// placeholders cost a sixth of a small tree's build, per perf): a bit per
/// level records which ones were written, and reading any other panics.
///
/// The leaf level alone starts as a placeholder (a dangling node), so that
/// the steps of a cursor, which read it on every call, need not test its
/// bit: it is always initialised. Every reader of the leaf level first
/// checks that the path is not empty (`height > 0`), and every walk that
/// sets a height also writes the levels below it; debug builds (the
/// tests, Miri) check the bit as well.
#[derive(Clone)]
pub(crate) struct Levels {
    slots: [MaybeUninit<Level>; MAX_HEIGHT],
    written: u32,
}

impl Levels {
    #[inline]
    const fn new() -> Levels {
        let mut slots = [const { MaybeUninit::uninit() }; MAX_HEIGHT];
        slots[0] = MaybeUninit::new(Level {
            node: NodePtr::DANGLING,
            idx: 0,
            min: 0,
            max: 0,
        });
        Levels { slots, written: 0 }
    }

    /// The leaf level, which must have been walked.
    #[inline(always)]
    pub(crate) fn leaf(&self) -> &Level {
        debug_assert!(
            self.written & 1 != 0,
            "maple tree: leaf read before it was walked"
        );
        // SAFETY: slot 0 is initialised by `new` and only ever overwritten.
        unsafe { self.slots[0].assume_init_ref() }
    }

    /// As [`leaf`](Self::leaf), mutably.
    #[inline(always)]
    pub(crate) fn leaf_mut(&mut self) -> &mut Level {
        debug_assert!(
            self.written & 1 != 0,
            "maple tree: leaf read before it was walked"
        );
        // SAFETY: as for `leaf`.
        unsafe { self.slots[0].assume_init_mut() }
    }

    /// Writes level `h`.
    #[inline]
    pub(crate) fn set(&mut self, h: usize, level: Level) {
        self.slots[h] = MaybeUninit::new(level);
        self.written |= 1 << h;
    }

    /// Marks levels `0..=h` written, once a walk down has set each of
    /// them.
    #[inline(always)]
    fn mark_through(&mut self, h: usize) {
        self.written |= (2u32 << h) - 1;
    }

    #[inline]
    fn check(&self, h: usize) {
        assert!(
            self.written >> h & 1 != 0,
            "maple tree: path level {h} read before it was walked"
        );
    }
}

impl Index<usize> for Levels {
    type Output = Level;
    #[inline]
    fn index(&self, h: usize) -> &Level {
        self.check(h);
        // SAFETY: the bit of level `h` is set only by `set`, which wrote it.
        unsafe { self.slots[h].assume_init_ref() }
    }
}

impl IndexMut<usize> for Levels {
    #[inline]
    fn index_mut(&mut self, h: usize) -> &mut Level {
        self.check(h);
        // SAFETY: as for `index`.
        unsafe { self.slots[h].assume_init_mut() }
    }
}

/// The way from the root to a leaf slot. `lv[0]` is the leaf, `lv[height-1]`
/// the root. Levels below `low` are stale (a write replaced their nodes).
#[derive(Clone)]
pub(crate) struct Path {
    pub(crate) lv: Levels,
    pub(crate) height: usize,
    pub(crate) low: usize,
}

impl Path {
    /// A path that has walked nowhere (as for an empty tree).
    #[inline]
    pub(crate) fn new() -> Path {
        Path {
            lv: Levels::new(),
            height: 0,
            low: 0,
        }
    }

    /// The leaf level.
    #[inline]
    pub(crate) fn leaf(&self) -> &Level {
        self.lv.leaf()
    }

    /// The leaf level, mutably.
    #[inline]
    pub(crate) fn leaf_mut(&mut self) -> &mut Level {
        self.lv.leaf_mut()
    }

    /// Walks from the root to the slot holding `index`, and returns that
    /// slot's bounds (`None` for an empty tree).
    #[inline(always)]
    pub(crate) fn descend(
        &mut self,
        root: Option<NodePtr>,
        height: usize,
        index: u64,
    ) -> Option<(u64, u64)> {
        let Some(root) = root else {
            self.height = 0;
            self.low = 0;
            return None;
        };
        assert!(
            height <= MAX_HEIGHT,
            "maple tree taller than {MAX_HEIGHT} levels"
        );
        self.height = height;
        // The walk writes the root's level too: it is not written first
        // only to be read back.
        Some(self.walk_down(height - 1, (root, 0, u64::MAX), index))
    }

    /// Walks down from level `h`, whose node must cover `index`, and
    /// returns the bounds of the leaf slot holding it.
    #[inline(always)]
    pub(crate) fn descend_from(&mut self, top: usize, index: u64) -> (u64, u64) {
        let Level { node, min, max, .. } = self.lv[top];
        self.walk_down(top, (node, min, max), index)
    }

    /// Walks down from the node `top_node` (covering `min..=max`) at level
    /// `top`, writing levels `top` to 0, and returns the bounds of the leaf
    /// slot holding `index`.
    #[inline(always)]
    fn walk_down(
        &mut self,
        top: usize,
        (top_node, mut min, mut max): (NodePtr, u64, u64),
        index: u64,
    ) -> (u64, u64) {
        let mut node = top_node.snap();
        // The levels the walk writes, with one bounds check for all of
        // them; they are marked written at the end, all at once.
        let (leaf, upper) = self.lv.slots[..=top]
            .split_first_mut()
            .expect("`..=top` holds a level");
        for slot in upper.iter_mut().rev() {
            let (idx, cmin, cmax) = node.step(index, min, max);
            *slot = MaybeUninit::new(Level {
                node: node.node(),
                idx,
                min,
                max,
            });
            node = node.child(idx).snap();
            min = cmin;
            max = cmax;
        }
        let (idx, start, end) = node.step(index, min, max);
        *leaf = MaybeUninit::new(Level {
            node: node.node(),
            idx,
            min,
            max,
        });
        self.lv.mark_through(top);
        self.low = 0;
        (start, end)
    }

    /// Moves to the slot holding `index`, climbing only as high as needed,
    /// and returns that slot's bounds (for an empty tree, `0..=u64::MAX`:
    /// one absent range).
    ///
    /// Staying put is checked inline: that is the case of a removal, which
    /// stores over the entry it has just found. The bounds are returned
    /// because every walk works them out on its way: a store that needs
    /// them need not read the leaf's pivots again.
    #[inline(always)]
    pub(crate) fn seek(&mut self, root: Option<NodePtr>, height: usize, index: u64) -> (u64, u64) {
        if self.height == 0 {
            // A new path (every `insert` makes one): the walk from the root,
            // inline.
            return self.descend(root, height, index).unwrap_or((0, u64::MAX));
        }
        if self.low == 0 && self.height == height {
            // The slot taken (a write may have shortened the leaf since)
            // still holds `index`.
            let leaf = self.lv.leaf();
            if leaf.idx < leaf.node.count() {
                let (start, end) = (leaf.start(), leaf.end());
                if start <= index && index <= end {
                    return (start, end);
                }
            }
        }
        self.climb_and_descend(root, height, index)
    }

    /// [`seek`](Self::seek) when the path's slot does not hold `index`.
    #[inline(never)]
    fn climb_and_descend(
        &mut self,
        root: Option<NodePtr>,
        height: usize,
        index: u64,
    ) -> (u64, u64) {
        if self.height != height || height == 0 || self.low >= height {
            return self.descend(root, height, index).unwrap_or((0, u64::MAX));
        }
        let mut h = self.low;
        while h < height && !(self.lv[h].min <= index && index <= self.lv[h].max) {
            h += 1;
        }
        if h == height {
            self.descend(root, height, index).unwrap_or((0, u64::MAX))
        } else {
            self.descend_from(h, index)
        }
    }

    /// Walks from level `h` down to level `to` along the first (or, with
    /// `last`, the final) child of each node, so that those levels lead to the
    /// edge of `lv[h]`'s slot.
    #[inline]
    pub(crate) fn descend_edge(&mut self, h: usize, to: usize, last: bool) {
        for l in (to..h).rev() {
            let up = self.lv[l + 1];
            let node = up.node.child(up.idx);
            let idx = if last { node.count() - 1 } else { 0 };
            self.lv.set(
                l,
                Level {
                    node,
                    idx,
                    min: up.start(),
                    max: up.end(),
                },
            );
        }
    }

    /// Steps the leaf slot forward by one, crossing into the next leaf when
    /// needed. Returns false (and stays put) at the last slot of the tree.
    #[inline]
    pub(crate) fn next_slot(&mut self) -> bool {
        let leaf = self.lv.leaf_mut();
        if leaf.idx + 1 < leaf.node.count() {
            leaf.idx += 1;
            return true;
        }
        self.next_leaf()
    }

    /// Moves to slot 0 of the leaf after this path's leaf, climbing only as
    /// high as the nearest ancestor with a slot to the right. Returns false
    /// (and stays put) in the tree's last leaf.
    #[inline]
    pub(crate) fn next_leaf(&mut self) -> bool {
        // Most crossings stay under the leaf's parent: then the next leaf is
        // the parent's next child, one load away.
        if self.height >= 2 {
            let up = &mut self.lv[1];
            let parent = up.node.peek();
            let last = parent.count() - 1;
            if up.idx < last {
                up.idx += 1;
                let (idx, max) = (up.idx, up.max);
                // SAFETY: the parent is live (the path walks a live tree),
                // and `1 <= idx <= last`, below the node's capacity: pivot
                // `idx - 1`, and pivot `idx` when `idx < last`, are stored.
                let (min, max) = unsafe {
                    let min = parent.node().pivot_unchecked(idx - 1) + 1;
                    let max = if idx == last {
                        max
                    } else {
                        parent.node().pivot_unchecked(idx)
                    };
                    (min, max)
                };
                *self.lv.leaf_mut() = Level {
                    node: parent.child(idx),
                    idx: 0,
                    min,
                    max,
                };
                return true;
            }
        }
        let mut h = 2;
        while h < self.height && self.lv[h].idx + 1 >= self.lv[h].node.count() {
            h += 1;
        }
        if h >= self.height {
            return false;
        }
        self.lv[h].idx += 1;
        self.descend_edge(h, 0, false);
        true
    }

    /// Steps the leaf slot back by one. Returns false (and stays put) at slot 0
    /// of the tree.
    #[inline]
    pub(crate) fn prev_slot(&mut self) -> bool {
        let leaf = self.lv.leaf_mut();
        if leaf.idx > 0 {
            leaf.idx -= 1;
            return true;
        }
        self.prev_leaf()
    }

    /// Moves to the last slot of the leaf before this path's leaf. Returns
    /// false (and stays put) in the tree's first leaf.
    #[inline]
    pub(crate) fn prev_leaf(&mut self) -> bool {
        // As in `next_leaf`: the parent's previous child, when it has one.
        if self.height >= 2 {
            let up = &mut self.lv[1];
            if up.idx > 0 {
                up.idx -= 1;
                let (idx, min) = (up.idx, up.min);
                let parent = up.node.peek();
                // SAFETY: the parent is live (the path walks a live tree),
                // and `idx` is below its last slot, below the node's
                // capacity: pivot `idx`, and pivot `idx - 1` when `idx > 0`,
                // are stored.
                let (min, max) = unsafe {
                    let min = if idx == 0 {
                        min
                    } else {
                        parent.node().pivot_unchecked(idx - 1) + 1
                    };
                    (min, parent.node().pivot_unchecked(idx))
                };
                let node = parent.child(idx);
                *self.lv.leaf_mut() = Level {
                    node,
                    idx: node.count() - 1,
                    min,
                    max,
                };
                return true;
            }
        }
        let mut h = 2;
        while h < self.height && self.lv[h].idx == 0 {
            h += 1;
        }
        if h >= self.height {
            return false;
        }
        self.lv[h].idx -= 1;
        self.descend_edge(h, 0, true);
        true
    }

    /// The first entry from the path's slot on that starts at or before
    /// `last`, stepping the path forward while it looks (at most one step:
    /// an absent slot is always followed by an entry).
    pub(crate) fn entry_until(&mut self, last: u64) -> Option<RangeInclusive<u64>> {
        if self.height == 0 {
            return None;
        }
        loop {
            let leaf = *self.lv.leaf();
            if leaf.start() > last {
                return None;
            }
            if leaf.node.is_present(leaf.idx) {
                return Some(leaf.start()..=leaf.end());
            }
            if leaf.end() >= last || !self.next_slot() {
                return None;
            }
        }
    }

    /// Whether the leaf slot holds a value.
    #[inline]
    pub(crate) fn is_present(&self) -> bool {
        let leaf = self.lv.leaf();
        leaf.node.is_present(leaf.idx)
    }
}

/// Finds the leaf slot holding `index` without recording a path (the fast
/// path of `get`). Returns the leaf, the slot, and the leaf's bounds. The
/// internal levels are scanned, the leaf counted (see
/// [`Snap::slot_by_count`]).
#[inline]
pub(crate) fn find_slot(
    root: Option<NodePtr>,
    height: usize,
    index: u64,
) -> Option<(Snap, usize, u64, u64)> {
    let mut node = root?.snap();
    let (mut min, mut max) = (0, u64::MAX);
    for _ in 1..height {
        let (idx, cmin, cmax) = node.step(index, min, max);
        node = node.child(idx).snap();
        min = cmin;
        max = cmax;
    }
    Some((node, node.slot_by_count(index), min, max))
}
