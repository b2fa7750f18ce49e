//! `Hash`, `PartialOrd` and `Ord` of a tree as the sequence of its entries,
//! and `Extend` by reference for `Copy` values — as `BTreeMap` has them.
//!
//! Like `PartialEq`, they look only at the entries (ranges and values), never
//! at the tree's kind or node layout, so they agree with each other.

use crate::tree::MapleTree;
use core::cmp::Ordering;
use core::hash::{Hash, Hasher};
use core::ops::{RangeBounds, RangeInclusive};

/// An entry as a tuple that orders by first index, then last, then value.
fn key<V>((range, value): (RangeInclusive<u64>, &V)) -> (u64, u64, &V) {
    (*range.start(), *range.end(), value)
}

impl<V: Hash> Hash for MapleTree<V> {
    /// Hashes the number of entries, then each entry's first and last index
    /// and value, in order.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for entry in self.iter() {
            key(entry).hash(state);
        }
    }
}

impl<V: PartialOrd> PartialOrd for MapleTree<V> {
    /// Compares the entries in order, lexicographically, each as
    /// `(first, last, value)`.
    ///
    /// ```
    /// let a: maple_tree::MapleTree<_> = [(0..=9, 1)].into_iter().collect();
    /// let b: maple_tree::MapleTree<_> = [(0..=9, 2)].into_iter().collect();
    /// let c: maple_tree::MapleTree<_> = [(1..=9, 0)].into_iter().collect();
    /// assert!(a < b && b < c);
    /// ```
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.iter().map(key).partial_cmp(other.iter().map(key))
    }
}

impl<V: Ord> Ord for MapleTree<V> {
    /// Compares the entries in order, lexicographically, each as
    /// `(first, last, value)`.
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter().map(key).cmp(other.iter().map(key))
    }
}

impl<'a, V: Copy + 'a, R: RangeBounds<u64>> Extend<(&'a R, &'a V)> for MapleTree<V> {
    /// Stores a copy of each value over its range in turn, as
    /// [`insert`](MapleTree::insert) (`BTreeMap`'s `Extend<(&K, &V)>`).
    ///
    /// ```
    /// let pairs = [(0..10, 1), (5..15, 2)];
    /// let mut t = maple_tree::MapleTree::new();
    /// t.extend(pairs.iter().map(|(r, v)| (r, v)));
    /// assert_eq!(t.iter().collect::<Vec<_>>(), [(0..=4, &1), (5..=14, &2)]);
    /// ```
    ///
    /// # Panics
    /// If a range is empty or reversed.
    #[track_caller]
    fn extend<I: IntoIterator<Item = (&'a R, &'a V)>>(&mut self, iter: I) {
        self.extend(
            iter.into_iter()
                .map(|(range, &value)| ((range.start_bound(), range.end_bound()), value)),
        );
    }
}

impl<'a, V: Copy + 'a> Extend<(RangeInclusive<u64>, &'a V)> for MapleTree<V> {
    /// Stores a copy of each value over its range in turn, as
    /// [`insert`](MapleTree::insert): takes what [`iter`](MapleTree::iter)
    /// yields.
    ///
    /// ```
    /// let a: maple_tree::MapleTree<_> = [(0..=9, 1)].into_iter().collect();
    /// let mut b = maple_tree::MapleTree::new();
    /// b.insert(5..=19, 2);
    /// b.extend(a.iter());
    /// assert_eq!(b.iter().collect::<Vec<_>>(), [(0..=9, &1), (10..=19, &2)]);
    /// ```
    ///
    /// # Panics
    /// If a range is reversed.
    #[track_caller]
    fn extend<I: IntoIterator<Item = (RangeInclusive<u64>, &'a V)>>(&mut self, iter: I) {
        self.extend(iter.into_iter().map(|(range, &value)| (range, value)));
    }
}
