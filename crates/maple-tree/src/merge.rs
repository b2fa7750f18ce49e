//! Moving entries between trees: [`MapleTree::split_off`] and
//! [`MapleTree::append`].

use crate::displaced::DropLater;
use crate::tree::MapleTree;
use crate::walk::Path;
use crate::write::Bulk;
use core::ops::RangeInclusive;

/// An empty tree of the same kind (regular or allocation) as `tree`.
fn empty_like<V>(tree: &MapleTree<V>) -> MapleTree<V> {
    if tree.is_alloc() {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    }
}

impl<V> MapleTree<V> {
    /// Moves every index from `at` up into a new tree of the same kind and
    /// returns it (`BTreeMap::split_off`). An entry that spans `at` is cut:
    /// the part below `at` stays with a clone of its value, the rest moves.
    ///
    /// ```
    /// let mut low = maple_tree::MapleTree::new();
    /// low.insert(0..=9, 'a');
    /// low.insert(20..=29, 'b');
    /// let high = low.split_off(25);
    /// assert_eq!(low.iter().collect::<Vec<_>>(), [(0..=9, &'a'), (20..=24, &'b')]);
    /// assert_eq!(high.iter().collect::<Vec<_>>(), [(25..=29, &'b')]);
    /// ```
    pub fn split_off(&mut self, at: u64) -> Self
    where
        V: Clone,
    {
        self.split_off_with(at, |v, _| v.clone())
    }

    /// [`split_off`](Self::split_off) for values that are not `Clone` or
    /// must change when cut: an entry that spans `at` keeps its value on the
    /// part from `at` up (which moves), and the part below `at` (which stays)
    /// gets `split(&value, part)`.
    ///
    /// If `split` panics, `self` is left as it was.
    ///
    /// ```
    /// // Values that record their own start, like a VMA's file offset.
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert_with(100..200, 100u64, |_, r| *r.start());
    /// let high = t.split_off_with(150, |_, r| *r.start());
    /// assert_eq!(t.get_key_value(120), Some((100..=149, &100)));
    /// assert_eq!(high.get_key_value(170), Some((150..=199, &100)));
    /// ```
    pub fn split_off_with(
        &mut self,
        at: u64,
        split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) -> Self {
        if at == 0 {
            let empty = empty_like(self);
            return core::mem::replace(self, empty);
        }
        // What the store displaces comes clipped to `at..`, in key order
        // and without overlaps: exactly what the bulk build takes.
        let moved = self.remove_range_displaced_with(at.., split);
        let mut bulk = Bulk::new(empty_like(self));
        for (range, value) in moved {
            bulk.push(*range.start(), *range.end(), value);
        }
        bulk.finish()
    }

    /// Moves every entry of `other` into `self`, leaving `other` empty.
    /// `other`'s entries overwrite: an entry of `self` that they cut keeps
    /// a clone of its value on the parts outside them, as with
    /// [`insert`](Self::insert).
    ///
    /// Entries of `other` that all lie above `self`'s last one (the usual
    /// case, e.g. to undo [`split_off`](Self::split_off)) take the append
    /// fast path.
    ///
    /// ```
    /// let mut a = maple_tree::MapleTree::new();
    /// a.insert(0..=9, 'a');
    /// let mut b = maple_tree::MapleTree::new();
    /// b.insert(5..=14, 'b');
    /// a.append(&mut b);
    /// assert!(b.is_empty());
    /// assert_eq!(a.iter().collect::<Vec<_>>(), [(0..=4, &'a'), (5..=14, &'b')]);
    /// ```
    pub fn append(&mut self, other: &mut Self)
    where
        V: Clone,
    {
        self.append_with(other, |v, _| v.clone())
    }

    /// [`append`](Self::append) for values that are not `Clone` or must
    /// change when cut: each part of an entry of `self` that survives outside
    /// `other`'s entries gets `split(&old, part)`.
    ///
    /// `other` is emptied first. If `split` panics, `self` stays valid and
    /// holds the entries moved so far; `other`'s remaining entries are
    /// dropped.
    pub fn append_with(
        &mut self,
        other: &mut Self,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() && self.is_alloc() == other.is_alloc() {
            core::mem::swap(self, other);
            return;
        }
        let empty = empty_like(other);
        let moved = core::mem::replace(other, empty);
        let mut path = Path::new();
        for (range, value) in moved {
            let mut displaced = DropLater::new(*range.start(), *range.end());
            self.store_at(
                &mut path,
                *range.start(),
                *range.end(),
                Some(value),
                &mut split,
                &mut displaced,
            );
            // Dropped once the store is done (a panicking `Drop` finds the
            // tree whole).
            drop(displaced);
        }
    }
}
