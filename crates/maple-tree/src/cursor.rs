//! Cursors: a remembered position in the tree (kernel: `ma_state`).
//!
//! A cursor keeps the whole path from the root to its slot, so stepping to the
//! next or previous range costs O(1) amortised, seeking to a nearby index
//! climbs only as high as the common ancestor, and after a write through a
//! [`CursorMut`] only the levels the write replaced are walked again.

use crate::tree::{bounds, MapleTree};
use crate::walk::Path;
use core::ops::{RangeBounds, RangeInclusive};

/// Position shared by both cursor kinds.
struct Position {
    path: Path,
    index: u64,
}

impl Position {
    fn new<V>(tree: &MapleTree<V>, index: u64) -> Self {
        let mut path = Path::new();
        path.descend(tree.root, tree.height(), index);
        Position { path, index }
    }

    fn range(&self) -> RangeInclusive<u64> {
        if self.path.height == 0 {
            return 0..=u64::MAX;
        }
        let leaf = self.path.leaf();
        leaf.start()..=leaf.end()
    }

    fn get<'a, V>(&self) -> Option<&'a V> {
        if self.path.height == 0 || !self.path.is_present() {
            return None;
        }
        let leaf = self.path.leaf();
        Some(leaf.node.value(leaf.idx))
    }

    fn seek<V>(&mut self, tree: &MapleTree<V>, index: u64) {
        self.path.seek(tree.root, tree.height(), index);
        self.index = index;
    }

    /// Steps one range forward (or back); false at the end of the space.
    fn step(&mut self, forward: bool) -> bool {
        if self.path.height == 0 {
            return false;
        }
        let moved = if forward {
            self.path.next_slot()
        } else {
            self.path.prev_slot()
        };
        if moved {
            self.index = self.path.leaf().start();
        }
        moved
    }

    /// Steps to the nearest entry after (or before) the current range.
    ///
    /// The leaf's present bits name the entry's slot directly, so absent
    /// slots are skipped without being visited, and the path above the leaf
    /// is read only when a leaf is crossed. With no entry left, the cursor
    /// ends on the last (first) range of the space, as stepping range by
    /// range would have left it.
    fn step_to_entry<'a, V>(&mut self, forward: bool) -> Option<(RangeInclusive<u64>, &'a V)> {
        if self.path.height == 0 {
            return None;
        }
        let from = self.path.leaf().idx;
        // Slots strictly after (before) the current one, in its leaf.
        let mut keep = if forward {
            u32::MAX << (from + 1)
        } else {
            !(u32::MAX << from)
        };
        let mut crossed_any = false;
        loop {
            let leaf = *self.path.leaf();
            let present = u32::from(leaf.node.present_bits()) & keep;
            if present != 0 {
                let slot = if forward {
                    present.trailing_zeros()
                } else {
                    u32::BITS - 1 - present.leading_zeros()
                };
                self.path.lv[0].idx = slot as usize;
                self.index = self.path.leaf().start();
                let v = leaf.node.value(slot as usize);
                return Some((self.range(), v));
            }
            let crossed = if forward {
                self.path.next_leaf()
            } else {
                self.path.prev_leaf()
            };
            if !crossed {
                // The last (first) slot of the last (first) leaf.
                let edge = if forward { leaf.node.count() - 1 } else { 0 };
                if crossed_any || from != edge {
                    self.path.lv[0].idx = edge;
                    self.index = self.path.leaf().start();
                }
                return None;
            }
            keep = u32::MAX;
            crossed_any = true;
        }
    }

    fn step_range<'a, V>(&mut self, forward: bool) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        self.step(forward).then(|| (self.range(), self.get()))
    }
}

/// A read cursor; from [`MapleTree::cursor`].
///
/// It sits on one *range*: an entry, or a gap between entries. Stepping past
/// the first or last range of the space returns `None` and leaves the cursor
/// on that range.
pub struct Cursor<'a, V> {
    tree: &'a MapleTree<V>,
    pos: Position,
}

impl<'a, V> Cursor<'a, V> {
    pub(crate) fn new(tree: &'a MapleTree<V>, index: u64) -> Self {
        Cursor {
            tree,
            pos: Position::new(tree, index),
        }
    }

    /// The index the cursor was put at, or the start of the range it stepped to.
    pub fn index(&self) -> u64 {
        self.pos.index
    }

    /// The range (entry or gap) holding the cursor's index.
    pub fn range(&self) -> RangeInclusive<u64> {
        self.pos.range()
    }

    /// The value of the entry at the cursor, if it is on an entry.
    pub fn get(&self) -> Option<&'a V> {
        self.pos.get()
    }

    /// The entry at the cursor, if it is on an entry.
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &'a V)> {
        self.get().map(|v| (self.range(), v))
    }

    /// Moves to `index`, climbing only as high as needed.
    #[doc(alias = "mas_set")]
    pub fn seek(&mut self, index: u64) {
        self.pos.seek(self.tree, index)
    }

    /// Moves to the next entry after the current range and returns it.
    #[doc(alias = "mas_next")]
    #[doc(alias = "mas_find")]
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> {
        self.pos.step_to_entry(true)
    }

    /// Moves to the previous entry before the current range and returns it.
    #[doc(alias = "mas_prev")]
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> {
        self.pos.step_to_entry(false)
    }

    /// Steps to the next range, entry or gap.
    #[doc(alias = "mas_next_range")]
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        self.pos.step_range(true)
    }

    /// Steps to the previous range, entry or gap.
    #[doc(alias = "mas_prev_range")]
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        self.pos.step_range(false)
    }
}

/// A write cursor; from [`MapleTree::cursor_mut`]. Reads as a [`Cursor`];
/// writes re-walk only the levels they replaced.
///
/// ```
/// let mut t = maple_tree::MapleTree::new();
/// let mut c = t.cursor_mut(0);
/// for i in 0..100u64 {
///     c.insert(i * 10..=i * 10 + 4, i);   // sequential: appends in place
/// }
/// c.seek(503);
/// assert_eq!(c.remove(), Some((500..=504, 50)));
/// assert_eq!(t.len(), 99);
/// ```
pub struct CursorMut<'a, V> {
    tree: &'a mut MapleTree<V>,
    pos: Position,
}

impl<'a, V> CursorMut<'a, V> {
    pub(crate) fn new(tree: &'a mut MapleTree<V>, index: u64) -> Self {
        let pos = Position::new(tree, index);
        CursorMut { tree, pos }
    }

    /// The index the cursor is at.
    pub fn index(&self) -> u64 {
        self.pos.index
    }

    /// The range (entry or gap) holding the cursor's index.
    pub fn range(&self) -> RangeInclusive<u64> {
        self.pos.range()
    }

    /// The value at the cursor.
    pub fn get(&self) -> Option<&V> {
        self.pos.get()
    }

    /// The value at the cursor, mutably.
    pub fn get_mut(&mut self) -> Option<&mut V> {
        if self.pos.path.height == 0 || !self.pos.path.is_present() {
            return None;
        }
        let leaf = self.pos.path.leaf();
        Some(leaf.node.value_mut(leaf.idx))
    }

    /// The entry at the cursor.
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
        self.get().map(|v| (self.range(), v))
    }

    /// Moves to `index`, climbing only as high as needed.
    pub fn seek(&mut self, index: u64) {
        self.pos.seek(self.tree, index)
    }

    /// Moves to the next entry after the current range and returns it.
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> {
        self.pos.step_to_entry(true)
    }

    /// Moves to the previous entry before the current range and returns it.
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> {
        self.pos.step_to_entry(false)
    }

    /// Steps to the next range, entry or gap.
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> {
        self.pos.step_range(true)
    }

    /// Steps to the previous range, entry or gap.
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> {
        self.pos.step_range(false)
    }

    /// Stores `value` over `range` (as [`MapleTree::insert`]); the cursor
    /// moves to the start of `range`.
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[doc(alias = "mas_store")]
    #[track_caller]
    pub fn insert(&mut self, range: impl RangeBounds<u64>, value: V)
    where
        V: Clone,
    {
        self.insert_with(range, value, |v, _| v.clone())
    }

    /// Stores `value` over `range` (as [`MapleTree::insert_with`]); the cursor
    /// moves to the start of `range`.
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn insert_with(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        let (first, last) = bounds(&range);
        self.tree.store_at(
            &mut self.pos.path,
            first,
            last,
            Some(value),
            &mut split,
            &mut |_, _| {},
        );
        self.pos.seek(self.tree, first);
    }

    /// Removes the entry at the cursor and returns it; the cursor stays at
    /// its index, now in a gap.
    #[doc(alias = "mas_erase")]
    pub fn remove(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        self.get()?;
        let range = self.range();
        let out = self.tree.remove_at(&mut self.pos.path, range);
        self.pos.seek(self.tree, self.pos.index);
        out
    }
}
