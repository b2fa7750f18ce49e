//! Views of the entries like `BTreeMap`'s: [`MapleTree::range_mut`],
//! [`MapleTree::keys`], [`MapleTree::values`], [`MapleTree::values_mut`].

use crate::iter::{Ends, Iter, IterMut};
use crate::query::query_bounds;
use crate::tree::MapleTree;
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
