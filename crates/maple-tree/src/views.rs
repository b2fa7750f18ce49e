//! Views of the entries like `BTreeMap`'s: [`MapleTree::range_mut`],
//! [`MapleTree::keys`], [`MapleTree::values`], [`MapleTree::values_mut`],
//! [`MapleTree::into_keys`], [`MapleTree::into_values`].

use crate::iter::{Ends, IntoIter, Iter, IterMut};
use crate::query::query_bounds;
use crate::tree::MapleTree;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};

impl<V> MapleTree<V> {
    /// Iterates over the entries that overlap `range`, in order, with
    /// mutable values. An empty range (`5..5`) yields nothing.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..=9, 1);
    /// t.insert(20..=29, 2);
    /// t.insert(40..=49, 3);
    /// for (_, v) in t.range_mut(5..=20) {
    ///     *v *= 10;
    /// }
    /// assert_eq!(t.values().copied().collect::<Vec<_>>(), [10, 20, 3]);
    /// assert_eq!(t.range_mut(5..5).count(), 0);
    /// ```
    ///
    /// # Panics
    /// If `range` is reversed (e.g. `7..=3`), as `BTreeMap::range_mut` does.
    #[track_caller]
    pub fn range_mut(&mut self, range: impl RangeBounds<u64>) -> RangeMut<'_, V> {
        let raw = match query_bounds(&range) {
            Some((first, last)) => Ends::new(self.top(), first, last),
            None => Ends::new((None, 0), 0, 0),
        };
        RangeMut {
            raw,
            _tree: PhantomData,
        }
    }

    /// The ranges of the entries, in order.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<_> = [(0..=9, 'a'), (20..=29, 'b')].into_iter().collect();
    /// assert_eq!(t.keys().collect::<Vec<_>>(), [0..=9, 20..=29]);
    /// ```
    pub fn keys(&self) -> Keys<'_, V> {
        Keys { inner: self.iter() }
    }

    /// The values of the entries, in the order of their ranges.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<_> = [(20..=29, 'b'), (0..=9, 'a')].into_iter().collect();
    /// assert_eq!(t.values().collect::<String>(), "ab");
    /// ```
    pub fn values(&self) -> Values<'_, V> {
        Values { inner: self.iter() }
    }

    /// The values of the entries, mutably, in the order of their ranges.
    ///
    /// ```
    /// let mut t: maple_tree::MapleTree<_> = [(0..=9, 1), (20..=29, 2)].into_iter().collect();
    /// t.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(t.values().copied().collect::<Vec<_>>(), [2, 3]);
    /// ```
    pub fn values_mut(&mut self) -> ValuesMut<'_, V> {
        ValuesMut {
            inner: self.iter_mut(),
        }
    }

    /// The ranges of the entries, in order, consuming the tree (its values
    /// are dropped).
    ///
    /// ```
    /// let t: maple_tree::MapleTree<_> = [(20..=29, 'b'), (0..=9, 'a')].into_iter().collect();
    /// assert_eq!(t.into_keys().collect::<Vec<_>>(), [0..=9, 20..=29]);
    /// ```
    pub fn into_keys(self) -> IntoKeys<V> {
        IntoKeys {
            inner: self.into_iter(),
        }
    }

    /// The values of the entries, in the order of their ranges, consuming
    /// the tree.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<_> = [(20..=29, 'b'), (0..=9, 'a')].into_iter().collect();
    /// assert_eq!(t.into_values().collect::<String>(), "ab");
    /// ```
    pub fn into_values(self) -> IntoValues<V> {
        IntoValues {
            inner: self.into_iter(),
        }
    }
}

/// The entries overlapping a range, in order, with mutable values; from
/// [`MapleTree::range_mut`].
pub struct RangeMut<'a, V> {
    raw: Ends,
    _tree: PhantomData<&'a mut MapleTree<V>>,
}

impl<'a, V> Iterator for RangeMut<'a, V> {
    type Item = (RangeInclusive<u64>, &'a mut V);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        // SAFETY: `raw` walks the tree borrowed exclusively for `'a`; `Ends`
        // hands out each slot once, from either end, so the mutable borrows
        // are disjoint.
        Some((found.range, unsafe { found.leaf.value_mut(found.slot) }))
    }
}

impl<V> DoubleEndedIterator for RangeMut<'_, V> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        // SAFETY: as in `next`.
        Some((found.range, unsafe { found.leaf.value_mut(found.slot) }))
    }
}

impl<V> FusedIterator for RangeMut<'_, V> {}

/// The entries left, as a list of `(range, value)` pairs.
impl<V: fmt::Debug> fmt::Debug for RangeMut<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: as for `IterMut`'s `Debug`: the tree is borrowed for longer
        // than `&self`, and the entries left have not been handed out.
        f.debug_list()
            .entries(unsafe { self.raw.pending::<V>() })
            .finish()
    }
}

/// The ranges of a tree's entries, in order; from [`MapleTree::keys`].
pub struct Keys<'a, V> {
    inner: Iter<'a, V>,
}

impl<V> Iterator for Keys<'_, V> {
    type Item = RangeInclusive<u64>;

    #[inline]
    fn next(&mut self) -> Option<RangeInclusive<u64>> {
        self.inner.next().map(|(r, _)| r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for Keys<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<RangeInclusive<u64>> {
        self.inner.next_back().map(|(r, _)| r)
    }
}

impl<V> ExactSizeIterator for Keys<'_, V> {}
impl<V> FusedIterator for Keys<'_, V> {}

/// The ranges left, as a list.
impl<V> fmt::Debug for Keys<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl<V> Clone for Keys<'_, V> {
    fn clone(&self) -> Self {
        Keys {
            inner: self.inner.clone(),
        }
    }
}

/// The values of a tree's entries, in order; from [`MapleTree::values`].
pub struct Values<'a, V> {
    inner: Iter<'a, V>,
}

impl<'a, V> Iterator for Values<'a, V> {
    type Item = &'a V;

    #[inline]
    fn next(&mut self) -> Option<&'a V> {
        self.inner.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for Values<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(_, v)| v)
    }
}

impl<V> ExactSizeIterator for Values<'_, V> {}
impl<V> FusedIterator for Values<'_, V> {}

/// The values left, as a list.
impl<V: fmt::Debug> fmt::Debug for Values<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

impl<V> Clone for Values<'_, V> {
    fn clone(&self) -> Self {
        Values {
            inner: self.inner.clone(),
        }
    }
}

/// The values of a tree's entries, mutably, in order; from
/// [`MapleTree::values_mut`].
pub struct ValuesMut<'a, V> {
    inner: IterMut<'a, V>,
}

impl<'a, V> Iterator for ValuesMut<'a, V> {
    type Item = &'a mut V;

    #[inline]
    fn next(&mut self) -> Option<&'a mut V> {
        self.inner.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for ValuesMut<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(_, v)| v)
    }
}

impl<V> ExactSizeIterator for ValuesMut<'_, V> {}
impl<V> FusedIterator for ValuesMut<'_, V> {}

/// The values left, as a list.
impl<V: fmt::Debug> fmt::Debug for ValuesMut<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.inner.pending().map(|(_, v)| v))
            .finish()
    }
}

/// The ranges of a tree's entries, in order, by value; from
/// [`MapleTree::into_keys`]. The values are dropped as the iterator passes
/// them, or with it.
pub struct IntoKeys<V> {
    inner: IntoIter<V>,
}

impl<V> Iterator for IntoKeys<V> {
    type Item = RangeInclusive<u64>;

    #[inline]
    fn next(&mut self) -> Option<RangeInclusive<u64>> {
        self.inner.next().map(|(r, _)| r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for IntoKeys<V> {
    #[inline]
    fn next_back(&mut self) -> Option<RangeInclusive<u64>> {
        self.inner.next_back().map(|(r, _)| r)
    }
}

impl<V> ExactSizeIterator for IntoKeys<V> {}
impl<V> FusedIterator for IntoKeys<V> {}

/// The ranges left, as a list.
impl<V> fmt::Debug for IntoKeys<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.inner.pending().map(|(r, _)| r))
            .finish()
    }
}

/// The values of a tree's entries, in the order of their ranges, by value;
/// from [`MapleTree::into_values`].
pub struct IntoValues<V> {
    inner: IntoIter<V>,
}

impl<V> Iterator for IntoValues<V> {
    type Item = V;

    #[inline]
    fn next(&mut self) -> Option<V> {
        self.inner.next().map(|(_, v)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for IntoValues<V> {
    #[inline]
    fn next_back(&mut self) -> Option<V> {
        self.inner.next_back().map(|(_, v)| v)
    }
}

impl<V> ExactSizeIterator for IntoValues<V> {}
impl<V> FusedIterator for IntoValues<V> {}

/// The values left, as a list.
impl<V: fmt::Debug> fmt::Debug for IntoValues<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.inner.pending().map(|(_, v)| v))
            .finish()
    }
}
