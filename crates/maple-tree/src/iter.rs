//! Iterators over entries: in order, both ways, over the whole tree or the
//! entries overlapping a range.

use crate::node::NodePtr;
use crate::tree::MapleTree;
use crate::walk::Path;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::ManuallyDrop;
use core::ops::RangeInclusive;

/// Two paths walking toward each other over the entries overlapping `lo..=hi`.
/// `lo`/`hi` shrink past every entry handed out, so the two ends never hand
/// out the same entry.
pub(crate) struct RawRange {
    front: Path,
    back: Path,
    lo: u64,
    hi: u64,
    front_started: bool,
    back_started: bool,
    done: bool,
}

/// An entry found by a walk: leaf, slot, and range.
pub(crate) type Found = (NodePtr, usize, RangeInclusive<u64>);

impl RawRange {
    pub(crate) fn new((root, height): (Option<NodePtr>, usize), lo: u64, hi: u64) -> RawRange {
        let mut r = RawRange {
            front: Path::new(),
            back: Path::new(),
            lo,
            hi,
            front_started: false,
            back_started: false,
            done: root.is_none(),
        };
        if !r.done {
            r.front.descend(root, height, lo);
            r.back.descend(root, height, hi);
        }
        r
    }

    #[inline]
    pub(crate) fn next(&mut self) -> Option<Found> {
        while !self.done {
            if self.front_started && !self.front.next_slot() {
                self.done = true;
                break;
            }
            self.front_started = true;
            let leaf = *self.front.leaf();
            // One header snapshot answers for the whole slot (RCU mode).
            let snap = leaf.node.peek();
            let start = snap.slot_start(leaf.idx, leaf.min);
            if start > self.hi {
                self.done = true;
                break;
            }
            if snap.is_present(leaf.idx) {
                let end = snap.slot_end(leaf.idx, leaf.max);
                if end >= self.hi {
                    self.done = true;
                } else {
                    self.lo = end + 1;
                }
                return Some((leaf.node, leaf.idx, start..=end));
            }
        }
        None
    }

    #[inline]
    pub(crate) fn next_back(&mut self) -> Option<Found> {
        while !self.done {
            if self.back_started && !self.back.prev_slot() {
                self.done = true;
                break;
            }
            self.back_started = true;
            let leaf = *self.back.leaf();
            let snap = leaf.node.peek();
            let end = snap.slot_end(leaf.idx, leaf.max);
            if end < self.lo {
                self.done = true;
                break;
            }
            if snap.is_present(leaf.idx) {
                let start = snap.slot_start(leaf.idx, leaf.min);
                if start <= self.lo {
                    self.done = true;
                } else {
                    self.hi = start - 1;
                }
                return Some((leaf.node, leaf.idx, start..=end));
            }
        }
        None
    }
}

/// The entries of a tree in order, as `(range, &value)`; from [`MapleTree::iter`].
pub struct Iter<'a, V> {
    raw: RawRange,
    remaining: usize,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Iter<'a, V> {
    /// Iterates over the tree `(root, height)` holding `len` entries.
    pub(crate) fn new(top: (Option<NodePtr>, usize), len: usize) -> Self {
        Iter {
            raw: RawRange::new(top, 0, u64::MAX),
            remaining: len,
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next()?;
        self.remaining -= 1;
        Some((range, leaf.value(i)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next_back()?;
        self.remaining -= 1;
        Some((range, leaf.value(i)))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}
impl<V> FusedIterator for Iter<'_, V> {}

/// The entries of a tree in order, as `(range, &mut value)`; from [`MapleTree::iter_mut`].
pub struct IterMut<'a, V> {
    raw: RawRange,
    remaining: usize,
    _tree: PhantomData<&'a mut MapleTree<V>>,
}

impl<'a, V> IterMut<'a, V> {
    pub(crate) fn new(tree: &'a mut MapleTree<V>) -> Self {
        IterMut {
            raw: RawRange::new(tree.top(), 0, u64::MAX),
            remaining: tree.len,
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (RangeInclusive<u64>, &'a mut V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next()?;
        self.remaining -= 1;
        // Each slot is handed out once (RawRange), so the borrows are disjoint.
        Some((range, leaf.value_mut(i)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<V> DoubleEndedIterator for IterMut<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next_back()?;
        self.remaining -= 1;
        Some((range, leaf.value_mut(i)))
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}
impl<V> FusedIterator for IterMut<'_, V> {}

/// The entries overlapping a range, in order; from [`MapleTree::range`].
pub struct Range<'a, V> {
    raw: RawRange,
    _tree: PhantomData<&'a MapleTree<V>>,
}

impl<'a, V> Range<'a, V> {
    pub(crate) fn new(top: (Option<NodePtr>, usize), lo: u64, hi: u64) -> Self {
        Range {
            raw: RawRange::new(top, lo, hi),
            _tree: PhantomData,
        }
    }
}

impl<'a, V> Iterator for Range<'a, V> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next()?;
        Some((range, leaf.value(i)))
    }
}

impl<V> DoubleEndedIterator for Range<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let (leaf, i, range) = self.raw.next_back()?;
        Some((range, leaf.value(i)))
    }
}

impl<V> FusedIterator for Range<'_, V> {}

/// The entries of a tree in order, by value; from `MapleTree::into_iter`.
/// Dropping it part way drops the entries not yet taken.
pub struct IntoIter<V> {
    raw: RawRange,
    remaining: usize,
    tree: ManuallyDrop<MapleTree<V>>,
}

impl<V> IntoIter<V> {
    fn take(&mut self, (leaf, i, range): Found) -> (RangeInclusive<u64>, V) {
        self.remaining -= 1;
        // Taking the value clears its bit, so the tree's drop will not see it.
        (range, leaf.take_value(i))
    }
}

impl<V> Iterator for IntoIter<V> {
    type Item = (RangeInclusive<u64>, V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let found = self.raw.next()?;
        Some(self.take(found))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<V> DoubleEndedIterator for IntoIter<V> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let found = self.raw.next_back()?;
        Some(self.take(found))
    }
}

impl<V> ExactSizeIterator for IntoIter<V> {}
impl<V> FusedIterator for IntoIter<V> {}

impl<V> Drop for IntoIter<V> {
    fn drop(&mut self) {
        // SAFETY: dropped exactly once, here; the tree frees what is left.
        unsafe { ManuallyDrop::drop(&mut self.tree) }
    }
}

impl<V> IntoIterator for MapleTree<V> {
    type Item = (RangeInclusive<u64>, V);
    type IntoIter = IntoIter<V>;

    fn into_iter(self) -> IntoIter<V> {
        let raw = RawRange::new(self.top(), 0, u64::MAX);
        IntoIter {
            raw,
            remaining: self.len,
            tree: ManuallyDrop::new(self),
        }
    }
}

impl<'a, V> IntoIterator for &'a MapleTree<V> {
    type Item = (RangeInclusive<u64>, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<'a, V> IntoIterator for &'a mut MapleTree<V> {
    type Item = (RangeInclusive<u64>, &'a mut V);
    type IntoIter = IterMut<'a, V>;

    fn into_iter(self) -> IterMut<'a, V> {
        self.iter_mut()
    }
}
