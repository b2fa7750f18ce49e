//! Cursors: a remembered position in the tree (kernel: `ma_state`).
//!
//! Stepping to the next or previous range costs O(1) amortised, and seeking
//! to a nearby index walks down only from a level that covers it. A
//! [`CursorMut`] keeps the whole path from the root to its slot, so that
//! after a write through it only the levels the write replaced are walked
//! again. A read [`Cursor`] keeps only its leaf and the two levels above
//! it, by value (see `spot.rs`), so that a loop stepping it keeps them in
//! registers.

use crate::node::Snap;
use crate::spot::Spot;
use crate::tree::{bounds, MapleTree};
use crate::walk::Path;
use core::fmt;
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};

/// The write cursor's position: the whole path from the root (a write may
/// replace any level of it).
struct Position {
    path: Path,
    index: u64,
}

impl Position {
    fn new<V>(tree: &MapleTree<V>, index: u64) -> Self {
        let mut path = Path::new();
        path.descend(tree.root(), tree.height(), index);
        Position { path, index }
    }

    fn range(&self) -> RangeInclusive<u64> {
        if self.path.height == 0 {
            return 0..=u64::MAX;
        }
        let leaf = self.path.leaf();
        leaf.start()..=leaf.end()
    }

    /// The value at the position.
    ///
    /// # Safety
    /// The position walks a `MapleTree<V>` that stays borrowed and unchanged
    /// for `'a` (by the caller).
    unsafe fn get<'a, V>(&self) -> Option<&'a V> {
        if self.path.height == 0 || !self.path.is_present() {
            return None;
        }
        let leaf = self.path.leaf();
        // SAFETY: the caller's promise (type and lifetime).
        Some(unsafe { leaf.node.value(leaf.idx) })
    }

    fn seek<V>(&mut self, tree: &MapleTree<V>, index: u64) {
        self.path.seek(tree.root(), tree.height(), index);
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
    /// slots are skipped without being visited; a step inside the leaf reads
    /// the leaf level of the path once, the header once and the entry's two
    /// bounds, inline in the caller's loop. The path above the leaf is read
    /// only when a leaf is crossed, out of line. With no entry left, the
    /// cursor ends on the last (first) range of the space, as stepping range
    /// by range would have left it.
    ///
    /// # Safety
    /// As for [`get`](Self::get).
    #[inline(always)]
    unsafe fn step_to_entry<'a, V>(
        &mut self,
        forward: bool,
    ) -> Option<(RangeInclusive<u64>, &'a V)> {
        if self.path.height == 0 {
            return None;
        }
        let leaf = self.path.leaf();
        let mut snap = leaf.node.peek();
        // Slots strictly after (before) the current one, in its leaf; the
        // shift by `idx + 1 <= 16` stays below 32.
        let keep = if forward {
            u32::MAX << (leaf.idx + 1)
        } else {
            !(u32::MAX << leaf.idx)
        };
        let mut present = u32::from(snap.present_bits()) & keep;
        if present == 0 {
            snap = self.cross_to_entry(forward)?;
            present = u32::from(snap.present_bits());
        }
        let slot = if forward {
            present.trailing_zeros() as usize
        } else {
            (u32::BITS - 1 - present.leading_zeros()) as usize
        };
        let leaf = self.path.leaf_mut();
        let last = snap.count() - 1;
        // SAFETY: the leaf is live (the cursor borrows the tree), and a
        // present slot lies below the snapshot's count (at most 16), so
        // `slot <= last <= 15`: pivot `slot - 1` (for `slot > 0`) and pivot
        // `slot` (for `slot < last`) are stored pivots below 15.
        let range = unsafe {
            let start = if slot == 0 {
                leaf.min
            } else {
                leaf.node.pivot_unchecked(slot - 1) + 1
            };
            let end = if slot == last {
                leaf.max
            } else {
                leaf.node.pivot_unchecked(slot)
            };
            start..=end
        };
        leaf.idx = slot;
        self.index = *range.start();
        // SAFETY: the caller's promise (type and lifetime); the slot is
        // present in the snapshot.
        Some((range, unsafe { snap.value(slot) }))
    }

    /// For [`step_to_entry`](Self::step_to_entry) when the current leaf has
    /// no entry left in that direction: crosses leaves until one has, and
    /// returns a snapshot of that leaf's header (some slot present), the
    /// path standing in it. With none, `None`, and the path on the last
    /// (first) slot of the tree.
    #[inline(never)]
    fn cross_to_entry(&mut self, forward: bool) -> Option<Snap> {
        let from = self.path.leaf().idx;
        let mut crossed_any = false;
        loop {
            let leaf = *self.path.leaf();
            let crossed = if forward {
                self.path.next_leaf()
            } else {
                self.path.prev_leaf()
            };
            if !crossed {
                // The last (first) slot of the last (first) leaf.
                let edge = if forward { leaf.node.count() - 1 } else { 0 };
                if crossed_any || from != edge {
                    self.path.leaf_mut().idx = edge;
                    self.index = self.path.leaf().start();
                }
                return None;
            }
            crossed_any = true;
            let snap = self.path.leaf().node.peek();
            if snap.present_bits() != 0 {
                return Some(snap);
            }
        }
    }

    /// # Safety
    /// As for [`get`](Self::get).
    unsafe fn step_range<'a, V>(
        &mut self,
        forward: bool,
    ) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        // SAFETY: the caller's promise.
        self.step(forward)
            .then(|| (self.range(), unsafe { self.get() }))
    }
}

/// A read cursor; from [`MapleTree::cursor`].
///
/// It sits on one *range*: an entry, or a gap between entries. Stepping past
/// the first or last range of the space returns `None` and leaves the cursor
/// on that range.
pub struct Cursor<'a, V> {
    /// The position is in this tree, borrowed for `'a`.
    _tree: PhantomData<&'a MapleTree<V>>,
    pos: Spot,
}

/// Where the cursor stands: its index, the range holding it, and that
/// range's value (`None` in a gap).
impl<V: fmt::Debug> fmt::Debug for Cursor<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cursor")
            .field("index", &self.index())
            .field("range", &self.range())
            .field("value", &self.get())
            .finish()
    }
}

/// A second cursor on the same range, which then moves on its own.
impl<V> Clone for Cursor<'_, V> {
    fn clone(&self) -> Self {
        Cursor {
            _tree: PhantomData,
            pos: self.pos,
        }
    }
}

impl<'a, V> Cursor<'a, V> {
    pub(crate) fn new(tree: &'a MapleTree<V>, index: u64) -> Self {
        Cursor {
            _tree: PhantomData,
            pos: Spot::new(tree.top(), index),
        }
    }

    /// The index the cursor was put at, or the start of the range it stepped to.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(15);
    /// assert_eq!(c.index(), 15);
    /// c.next_entry();
    /// assert_eq!(c.index(), 30); // the start of the range it stepped to
    /// ```
    pub fn index(&self) -> u64 {
        self.pos.index()
    }

    /// The range (entry or gap) holding the cursor's index.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let c = t.cursor(25);
    /// assert_eq!(c.range(), 20..=29); // a gap
    /// assert_eq!(c.get(), None);
    /// ```
    pub fn range(&self) -> RangeInclusive<u64> {
        self.pos.range()
    }

    /// The value of the entry at the cursor, if it is on an entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(12);
    /// assert_eq!(c.get(), Some(&'a'));
    /// c.seek(20);
    /// assert_eq!(c.get(), None);
    /// ```
    pub fn get(&self) -> Option<&'a V> {
        // SAFETY: the position is in the `MapleTree<V>` the cursor borrows for `'a`.
        unsafe { self.pos.get() }
    }

    /// The entry at the cursor, if it is on an entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let c = t.cursor(12);
    /// assert_eq!(c.key_value(), Some((10..=19, &'a')));
    /// ```
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &'a V)> {
        self.get().map(|v| (self.range(), v))
    }

    /// Moves to `index`, climbing only as high as needed.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(0);
    /// c.seek(35);
    /// assert_eq!(c.key_value(), Some((30..=39, &'b')));
    /// ```
    #[doc(alias = "mas_set")]
    pub fn seek(&mut self, index: u64) {
        self.pos.seek(index)
    }

    /// Moves to the next entry after the current range and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(0);
    /// assert_eq!(c.next_entry(), Some((10..=19, &'a')));
    /// assert_eq!(c.next_entry(), Some((30..=39, &'b')));
    /// assert_eq!(c.next_entry(), None);
    /// ```
    #[doc(alias = "mas_next")]
    #[doc(alias = "mas_find")]
    #[inline]
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> {
        // SAFETY: the position is in the `MapleTree<V>` the cursor borrows for `'a`.
        unsafe { self.pos.step_to_entry(true) }
    }

    /// Moves to the previous entry before the current range and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(u64::MAX);
    /// assert_eq!(c.prev_entry(), Some((30..=39, &'b')));
    /// assert_eq!(c.prev_entry(), Some((10..=19, &'a')));
    /// assert_eq!(c.prev_entry(), None);
    /// ```
    #[doc(alias = "mas_prev")]
    #[inline]
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> {
        // SAFETY: the position is in the `MapleTree<V>` the cursor borrows for `'a`.
        unsafe { self.pos.step_to_entry(false) }
    }

    /// Steps to the next range, entry or gap.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(15);
    /// assert_eq!(c.next_range(), Some((20..=29, None)));
    /// assert_eq!(c.next_range(), Some((30..=39, Some(&'b'))));
    /// assert_eq!(c.next_range(), Some((40..=u64::MAX, None)));
    /// assert_eq!(c.next_range(), None);
    /// ```
    #[doc(alias = "mas_next_range")]
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        if !self.pos.step(true) {
            return None;
        }
        // SAFETY: as for `get`.
        let value = unsafe { self.pos.get() };
        Some((self.range(), value))
    }

    /// Steps to the previous range, entry or gap.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(35);
    /// assert_eq!(c.prev_range(), Some((20..=29, None)));
    /// assert_eq!(c.prev_range(), Some((10..=19, Some(&'a'))));
    /// assert_eq!(c.prev_range(), Some((0..=9, None)));
    /// assert_eq!(c.prev_range(), None);
    /// ```
    #[doc(alias = "mas_prev_range")]
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> {
        if !self.pos.step(false) {
            return None;
        }
        // SAFETY: as for `get`.
        let value = unsafe { self.pos.get() };
        Some((self.range(), value))
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

/// As for [`Cursor`]: its index, range and value.
impl<V: fmt::Debug> fmt::Debug for CursorMut<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorMut")
            .field("index", &self.index())
            .field("range", &self.range())
            .field("value", &self.get())
            .finish()
    }
}

impl<'a, V> CursorMut<'a, V> {
    pub(crate) fn new(tree: &'a mut MapleTree<V>, index: u64) -> Self {
        let pos = Position::new(tree, index);
        CursorMut { tree, pos }
    }

    /// The index the cursor is at.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(15);
    /// assert_eq!(c.index(), 15);
    /// c.next_entry();
    /// assert_eq!(c.index(), 30); // the start of the range it stepped to
    /// ```
    pub fn index(&self) -> u64 {
        self.pos.index
    }

    /// The range (entry or gap) holding the cursor's index.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let c = t.cursor_mut(25);
    /// assert_eq!(c.range(), 20..=29); // a gap
    /// assert_eq!(c.get(), None);
    /// ```
    pub fn range(&self) -> RangeInclusive<u64> {
        self.pos.range()
    }

    /// The value at the cursor.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(12);
    /// assert_eq!(c.get(), Some(&'a'));
    /// c.seek(20);
    /// assert_eq!(c.get(), None);
    /// ```
    pub fn get(&self) -> Option<&V> {
        // SAFETY: the cursor walks `self.tree`, borrowed exclusively; the
        // result borrows the cursor, so nothing writes the tree meanwhile.
        unsafe { self.pos.get() }
    }

    /// The value at the cursor, mutably.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 1);
    /// let mut c = t.cursor_mut(12);
    /// *c.get_mut().unwrap() *= 7;
    /// assert_eq!(t.get(10), Some(&7));
    /// ```
    pub fn get_mut(&mut self) -> Option<&mut V> {
        if self.pos.path.height == 0 || !self.pos.path.is_present() {
            return None;
        }
        let leaf = self.pos.path.leaf();
        // SAFETY: the cursor walks `self.tree`, borrowed exclusively; the
        // result borrows the cursor mutably, so nothing else reaches the
        // value while it lives.
        Some(unsafe { leaf.node.value_mut(leaf.idx) })
    }

    /// The entry at the cursor.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let c = t.cursor_mut(12);
    /// assert_eq!(c.key_value(), Some((10..=19, &'a')));
    /// ```
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
        self.get().map(|v| (self.range(), v))
    }

    /// Moves to `index`, climbing only as high as needed.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(0);
    /// c.seek(35);
    /// assert_eq!(c.key_value(), Some((30..=39, &'b')));
    /// ```
    pub fn seek(&mut self, index: u64) {
        self.pos.seek(self.tree, index)
    }

    /// Moves to the next entry after the current range and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(0);
    /// assert_eq!(c.next_entry(), Some((10..=19, &'a')));
    /// assert_eq!(c.next_entry(), Some((30..=39, &'b')));
    /// assert_eq!(c.next_entry(), None);
    /// ```
    #[inline]
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> {
        // SAFETY: as for `get`.
        unsafe { self.pos.step_to_entry(true) }
    }

    /// Moves to the previous entry before the current range and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(u64::MAX);
    /// assert_eq!(c.prev_entry(), Some((30..=39, &'b')));
    /// assert_eq!(c.prev_entry(), Some((10..=19, &'a')));
    /// assert_eq!(c.prev_entry(), None);
    /// ```
    #[inline]
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> {
        // SAFETY: as for `get`.
        unsafe { self.pos.step_to_entry(false) }
    }

    /// Steps to the next range, entry or gap.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(15);
    /// assert_eq!(c.next_range(), Some((20..=29, None)));
    /// assert_eq!(c.next_range(), Some((30..=39, Some(&'b'))));
    /// assert_eq!(c.next_range(), Some((40..=u64::MAX, None)));
    /// assert_eq!(c.next_range(), None);
    /// ```
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> {
        // SAFETY: as for `get`.
        unsafe { self.pos.step_range(true) }
    }

    /// Steps to the previous range, entry or gap.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor_mut(35);
    /// assert_eq!(c.prev_range(), Some((20..=29, None)));
    /// assert_eq!(c.prev_range(), Some((10..=19, Some(&'a'))));
    /// assert_eq!(c.prev_range(), Some((0..=9, None)));
    /// assert_eq!(c.prev_range(), None);
    /// ```
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> {
        // SAFETY: as for `get`.
        unsafe { self.pos.step_range(false) }
    }

    /// Stores `value` over `range` (as [`MapleTree::insert`]); the cursor
    /// moves to the start of `range`.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// let mut c = t.cursor_mut(0);
    /// c.insert(0..100, 'a');
    /// c.insert(40..60, 'b'); // cuts 'a'; the cursor moves to 40
    /// assert_eq!(c.key_value(), Some((40..=59, &'b')));
    /// assert_eq!(t.len(), 3);
    /// ```
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
    /// ```
    /// // Values that record their own start, like a VMA's file offset.
    /// let mut t = maple_tree::MapleTree::new();
    /// let mut c = t.cursor_mut(0);
    /// c.insert_with(100..200, 100u64, |_, part| *part.start());
    /// c.insert_with(150..160, 150, |_, part| *part.start());
    /// assert_eq!(t.get_key_value(170), Some((160..=199, &160)));
    /// ```
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
        let mut displaced = crate::displaced::DropLater::new(first, last);
        // The store walks the cursor's path to `first` before `split` or a
        // `Clone` runs; if one panics, the tree is left as it was and the
        // guard walks the path back to the cursor's index.
        let mut store = Resync {
            cursor: self,
            to: None,
        };
        let c = &mut *store.cursor;
        c.tree.store_at(
            &mut c.pos.path,
            first,
            last,
            Some(value),
            &mut split,
            &mut displaced,
        );
        store.to = Some(first);
        drop(store);
        // Dropped once the tree and the cursor are whole again.
        drop(displaced);
    }

    /// Removes the entry at the cursor and returns it; the cursor stays at
    /// its index, now in a gap.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..20, "x");
    /// let mut c = t.cursor_mut(12);
    /// assert_eq!(c.remove(), Some((10..=19, "x")));
    /// assert_eq!(c.index(), 12); // now in a gap
    /// assert_eq!(c.remove(), None);
    /// ```
    #[doc(alias = "mas_erase")]
    pub fn remove(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        self.get()?;
        let range = self.range();
        let out = self.tree.remove_at(&mut self.pos.path, range);
        self.pos.seek(self.tree, self.pos.index);
        out
    }
}

/// Walks a [`CursorMut`]'s path to `to` when dropped (a store done), or
/// back to the cursor's own index (a store that unwound): the path is then
/// whole again whatever the store did with it.
struct Resync<'c, 'a, V> {
    cursor: &'c mut CursorMut<'a, V>,
    to: Option<u64>,
}

impl<V> Drop for Resync<'_, '_, V> {
    fn drop(&mut self) {
        let c = &mut *self.cursor;
        let index = self.to.unwrap_or(c.pos.index);
        c.pos.seek(c.tree, index);
    }
}

impl<'a, V> CursorMut<'a, V> {
    /// The value at the cursor for the rest of the cursor's borrow of the
    /// tree (the entry API's `into_mut`).
    pub(crate) fn into_value_mut(self) -> Option<&'a mut V> {
        if self.pos.path.height == 0 || !self.pos.path.is_present() {
            return None;
        }
        let leaf = self.pos.path.leaf();
        // SAFETY: the cursor walks `self.tree`, whose exclusive borrow for
        // `'a` it gives up here.
        Some(unsafe { leaf.node.value_mut(leaf.idx) })
    }
}
