//! Removing entries chosen by the caller: [`MapleTree::retain`],
//! [`MapleTree::extract_if`], [`MapleTree::pop_first`],
//! [`MapleTree::pop_last`] — and the [`MapleTree::contains`] query.
//!
//! Each walks one [`Path`] along the tree: looking at the next entry climbs
//! only as high as needed, and removing it reuses the walk.
//!
//! # Panics in the caller's predicate
//!
//! The predicate runs before anything is changed for the entry it is asked
//! about, so a predicate that panics leaves a valid tree: the entries removed
//! so far are gone, the others are all still there.

use crate::query::query_bounds;
use crate::tree::MapleTree;
use crate::walk::Path;
use core::fmt;
use core::iter::FusedIterator;
use core::ops::{RangeBounds, RangeInclusive};

impl<V> MapleTree<V> {
    /// Whether an entry contains `index`.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..20, ());
    /// assert!(t.contains(19));
    /// assert!(!t.contains(20));
    /// ```
    #[inline]
    pub fn contains(&self, index: u64) -> bool {
        self.get(index).is_some()
    }

    /// Removes the lowest entry and returns it.
    ///
    /// ```
    /// let mut t: maple_tree::MapleTree<_> = [(0..=9, 'a'), (20..=29, 'b')].into_iter().collect();
    /// assert_eq!(t.pop_first(), Some((0..=9, 'a')));
    /// assert_eq!(t.pop_first(), Some((20..=29, 'b')));
    /// assert_eq!(t.pop_first(), None);
    /// ```
    pub fn pop_first(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        let mut path = Path::new();
        path.descend(self.root(), self.height(), 0);
        let range = path.entry_until(u64::MAX)?;
        self.remove_at(&mut path, range)
    }

    /// Removes the highest entry and returns it.
    ///
    /// ```
    /// let mut t: maple_tree::MapleTree<_> = [(0..=9, 'a'), (20..=29, 'b')].into_iter().collect();
    /// assert_eq!(t.pop_last(), Some((20..=29, 'b')));
    /// assert_eq!(t.len(), 1);
    /// ```
    pub fn pop_last(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        let mut path = Path::new();
        path.descend(self.root(), self.height(), u64::MAX);
        if path.height == 0 {
            return None;
        }
        // Two absent slots never sit side by side, so if the last slot is a
        // gap the one before it (if any) is the last entry.
        if !path.is_present() && !path.prev_slot() {
            return None;
        }
        if !path.is_present() {
            return None;
        }
        let leaf = *path.leaf();
        let range = leaf.start()..=leaf.end();
        self.remove_at(&mut path, range)
    }

    /// Keeps only the entries for which `f(range, &mut value)` returns true,
    /// visiting them in order (`BTreeMap::retain`). Removed values are dropped.
    ///
    /// If `f` panics, the tree stays valid: the entries removed until then
    /// are gone, all others are kept.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// for i in 0..10u64 {
    ///     t.insert(i * 10..i * 10 + 5, i);
    /// }
    /// t.retain(|range, v| {
    ///     *v += 100;
    ///     *range.start() >= 50
    /// });
    /// assert_eq!(t.values().copied().collect::<Vec<_>>(), [105, 106, 107, 108, 109]);
    /// ```
    pub fn retain(&mut self, mut f: impl FnMut(RangeInclusive<u64>, &mut V) -> bool) {
        self.extract_if(.., |r, v| !f(r, v)).for_each(drop);
    }

    /// Removes, one at a time as the iterator is advanced, the entries that
    /// overlap `range` and for which `pred(range, &mut value)` returns true,
    /// and yields them in order (`BTreeMap::extract_if`). Entries are taken
    /// whole, even when they stick out of `range`; an empty range yields
    /// nothing.
    ///
    /// Entries not yet visited when the iterator is dropped stay in the tree.
    /// If `pred` panics, the tree stays valid: the entries extracted until
    /// then are gone, all others are kept.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// for i in 0..10u64 {
    ///     t.insert(i * 10..i * 10 + 5, i);
    /// }
    /// let odd: Vec<_> = t.extract_if(25..=62, |_, v| *v % 2 == 1).collect();
    /// assert_eq!(odd, [(30..=34, 3), (50..=54, 5)]);
    /// assert_eq!(t.len(), 8);
    /// ```
    ///
    /// # Panics
    /// If `range` is reversed (e.g. `7..=3`).
    #[track_caller]
    pub fn extract_if<F>(&mut self, range: impl RangeBounds<u64>, pred: F) -> ExtractIf<'_, V, F>
    where
        F: FnMut(RangeInclusive<u64>, &mut V) -> bool,
    {
        let (next, last, done) = match query_bounds(&range) {
            Some((first, last)) => (first, last, false),
            None => (0, 0, true),
        };
        ExtractIf {
            tree: self,
            path: Path::new(),
            next,
            last,
            done,
            pred,
        }
    }
}

/// The entries chosen by a predicate, removed as the iterator advances; from
/// [`MapleTree::extract_if`].
pub struct ExtractIf<'a, V, F> {
    tree: &'a mut MapleTree<V>,
    path: Path,
    /// The lowest index not looked at yet.
    next: u64,
    /// The last index of the range asked for.
    last: u64,
    done: bool,
    pred: F,
}

/// The part of the range asked for that the iterator has not looked at yet
/// (`None` once it has looked at all of it); the predicate is not printed.
impl<V, F> fmt::Debug for ExtractIf<'_, V, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unvisited = (!self.done).then_some(self.next..=self.last);
        f.debug_struct("ExtractIf")
            .field("unvisited", &unvisited)
            .finish_non_exhaustive()
    }
}

impl<V, F> Iterator for ExtractIf<'_, V, F>
where
    F: FnMut(RangeInclusive<u64>, &mut V) -> bool,
{
    type Item = (RangeInclusive<u64>, V);

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let tree = &mut *self.tree;
            self.path.seek(tree.root(), tree.height(), self.next);
            let Some(range) = self.path.entry_until(self.last) else {
                self.done = true;
                break;
            };
            match range.end().checked_add(1) {
                Some(next) if *range.end() < self.last => self.next = next,
                _ => self.done = true,
            }
            let leaf = *self.path.leaf();
            // SAFETY: the path walks the tree borrowed exclusively by this
            // iterator; the reference ends with the predicate call.
            if (self.pred)(range.clone(), unsafe { leaf.node.value_mut(leaf.idx) }) {
                return tree.remove_at(&mut self.path, range);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let most = if self.done { 0 } else { self.tree.len() };
        (0, Some(most))
    }
}

impl<V, F> FusedIterator for ExtractIf<'_, V, F> where F: FnMut(RangeInclusive<u64>, &mut V) -> bool {}
