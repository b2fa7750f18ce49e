//! What a store took out of the tree: the entries (or parts of entries) that
//! lay inside the stored range, with their values.
//!
//! Every write collects what it removes here instead of dropping it on the
//! spot. The values are moved out of their slots while the write rebuilds
//! nodes, and only once the tree is whole again are they handed to the caller
//! or dropped. So a value whose `Drop` panics can never interrupt a write half
//! way: the tree is consistent before any user code runs, and dropping the
//! collection keeps dropping the other values when one panics (as a `Vec`
//! does).

use crate::teardown::for_each_guarded;
use core::fmt;
use core::iter::FusedIterator;
use core::ops::RangeInclusive;
use smallvec::SmallVec;

/// One displaced entry: first, last, value.
type Item<V> = (u64, u64, V);

/// Where a store puts the values it takes out of the tree. Implementations
/// run no user code (no `Drop` of a value that has one), so a store is never
/// interrupted half way; the values are dropped or handed out afterwards.
pub(crate) trait Displace<V> {
    /// Takes the value of the entry `range`, which overlaps the stored
    /// range; a store calls this in key order.
    fn displace(&mut self, range: RangeInclusive<u64>, value: V);
}

impl<V> Displace<V> for Displaced<V> {
    #[inline]
    fn displace(&mut self, range: RangeInclusive<u64>, value: V) {
        self.push(range, value);
    }
}

/// For stores whose caller only drops what they displace (`insert`,
/// `remove_range`): values without drop glue go at once (freeing a boxed one
/// runs no user code), others wait in a [`Displaced`] that the caller drops
/// once the store is done.
pub(crate) struct DropLater<V>(pub(crate) Displaced<V>);

impl<V> DropLater<V> {
    #[inline]
    pub(crate) fn new(first: u64, last: u64) -> Self {
        DropLater(Displaced::new(first, last))
    }
}

impl<V> Displace<V> for DropLater<V> {
    #[inline]
    fn displace(&mut self, range: RangeInclusive<u64>, value: V) {
        if core::mem::needs_drop::<V>() {
            self.0.push(range, value);
        }
    }
}

/// For the removal of one whole entry (`remove`): the one value it takes.
pub(crate) struct Single<V>(pub(crate) Option<(RangeInclusive<u64>, V)>);

impl<V> Displace<V> for Single<V> {
    #[inline]
    fn displace(&mut self, range: RangeInclusive<u64>, value: V) {
        debug_assert!(self.0.is_none(), "an exact removal took two entries");
        self.0 = Some((range, value));
    }
}

/// The entries a store displaced, in ascending order of their ranges; from
/// [`MapleTree::insert_displaced`](crate::MapleTree::insert_displaced) and
/// [`MapleTree::remove_range_displaced`](crate::MapleTree::remove_range_displaced).
///
/// Each item is `(range, value)`: an entry that lay wholly inside the stored
/// range comes with its own range; an entry that was cut comes with the part
/// of it inside the stored range and its original value (the parts that
/// survive outside got values from `split`). Up to two items are held without
/// a heap allocation, which covers a store that cuts or replaces at most two
/// entries.
///
/// ```
/// use maple_tree::MapleTree;
///
/// let mut t = MapleTree::new();
/// t.insert(0..=9, 'a');
/// t.insert(10..=19, 'b');
/// let out: Vec<_> = t.insert_displaced(5..=12, 'c').into_iter().collect();
/// assert_eq!(out, [(5..=9, 'a'), (10..=12, 'b')]);
/// ```
pub struct Displaced<V> {
    items: SmallVec<[Item<V>; 2]>,
    /// The stored range: what a cut entry loses is its part inside it.
    first: u64,
    last: u64,
}

impl<V> Displaced<V> {
    /// An empty collection for a store over `first..=last`.
    pub(crate) fn new(first: u64, last: u64) -> Self {
        Displaced {
            items: SmallVec::new(),
            first,
            last,
        }
    }

    /// Records a value taken out of the tree from the entry `range`, which
    /// overlaps the stored range; writes push in key order.
    #[inline]
    pub(crate) fn push(&mut self, range: RangeInclusive<u64>, value: V) {
        let first = (*range.start()).max(self.first);
        let last = (*range.end()).min(self.last);
        debug_assert!(first <= last, "a displaced entry outside the store");
        debug_assert!(self.items.last().is_none_or(|&(_, l, _)| l < first));
        self.items.push((first, last, value));
    }

    /// The number of displaced entries.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, ());
    /// assert_eq!(t.remove_range_displaced(20..30).len(), 0);
    /// assert_eq!(t.remove_range_displaced(5..30).len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing was displaced (the stored range was absent).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// assert!(t.insert_displaced(0..10, 'a').is_empty());
    /// assert!(!t.insert_displaced(5..6, 'b').is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The displaced entries by reference, in order.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, 1);
    /// let d = t.remove_range_displaced(8..20);
    /// assert_eq!(d.iter().collect::<Vec<_>>(), [(8..=9, &1)]);
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (RangeInclusive<u64>, &V)> + '_ {
        self.items.iter().map(|(f, l, v)| (*f..=*l, v))
    }
}

impl<V> IntoIterator for Displaced<V> {
    type Item = (RangeInclusive<u64>, V);
    type IntoIter = DisplacedIntoIter<V>;

    fn into_iter(self) -> DisplacedIntoIter<V> {
        DisplacedIntoIter {
            inner: self.items.into_iter(),
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for Displaced<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The entries of a [`Displaced`], by value, in order.
pub struct DisplacedIntoIter<V> {
    inner: smallvec::IntoIter<[Item<V>; 2]>,
}

impl<V> Iterator for DisplacedIntoIter<V> {
    type Item = (RangeInclusive<u64>, V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(f, l, v)| (f..=l, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for DisplacedIntoIter<V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(f, l, v)| (f..=l, v))
    }
}

impl<V> ExactSizeIterator for DisplacedIntoIter<V> {}
impl<V> FusedIterator for DisplacedIntoIter<V> {}

/// Drops the entries not taken; if one's `Drop` panics, the others are
/// still dropped (smallvec's own iterator would leak them).
impl<V> Drop for DisplacedIntoIter<V> {
    fn drop(&mut self) {
        for_each_guarded(&mut self.inner, drop);
    }
}
