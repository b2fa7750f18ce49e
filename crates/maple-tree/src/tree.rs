//! SKELETON — public API surface only; bodies are being written.
use crate::*;
use core::ops::{RangeBounds, RangeInclusive};
use core::marker::PhantomData;

/// A B-tree of non-overlapping `u64` ranges.
pub struct MapleTree<V> { _v: PhantomData<V> }

impl<V> MapleTree<V> {
    /// A regular tree.
    pub fn new() -> Self { todo!() }
    /// An allocation tree: internal nodes track the largest gap of each child.
    pub fn new_alloc() -> Self { todo!() }
    /// Whether this is an allocation tree.
    pub fn is_alloc(&self) -> bool { todo!() }
    /// Number of entries.
    pub fn len(&self) -> usize { todo!() }
    /// No entries.
    pub fn is_empty(&self) -> bool { todo!() }
    /// mtree_load.
    pub fn get(&self, _index: u64) -> Option<&V> { todo!() }
    /// get_mut.
    pub fn get_mut(&mut self, _index: u64) -> Option<&mut V> { todo!() }
    /// get_key_value.
    pub fn get_key_value(&self, _index: u64) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// mtree_store_range.
    pub fn insert(&mut self, _range: impl RangeBounds<u64>, _value: V) where V: Clone { todo!() }
    /// insert with a split callback: called for each surviving piece of a cut entry.
    pub fn insert_with(&mut self, _range: impl RangeBounds<u64>, _value: V, _split: impl FnMut(&V, RangeInclusive<u64>) -> V) { todo!() }
    /// mtree_insert_range.
    pub fn try_insert(&mut self, _range: impl RangeBounds<u64>, _value: V) -> Result<(), OccupiedError<V>> { todo!() }
    /// mtree_erase.
    pub fn remove(&mut self, _index: u64) -> Option<(RangeInclusive<u64>, V)> { todo!() }
    /// store absent.
    pub fn remove_range(&mut self, _range: impl RangeBounds<u64>) where V: Clone { todo!() }
    /// remove_range with a split callback.
    pub fn remove_range_with(&mut self, _range: impl RangeBounds<u64>, _split: impl FnMut(&V, RangeInclusive<u64>) -> V) { todo!() }
    /// mtree_destroy.
    pub fn clear(&mut self) { todo!() }
    /// iter.
    pub fn iter(&self) -> Iter<'_, V> { todo!() }
    /// iter_mut.
    pub fn iter_mut(&mut self) -> IterMut<'_, V> { todo!() }
    /// entries overlapping.
    pub fn range(&self, _range: impl RangeBounds<u64>) -> Range<'_, V> { todo!() }
    /// first.
    pub fn first_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// last.
    pub fn last_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// mas_empty_area.
    pub fn find_gap(&self, _size: u64, _within: impl RangeBounds<u64>) -> Option<u64> { todo!() }
    /// mas_empty_area_rev.
    pub fn find_gap_rev(&self, _size: u64, _within: impl RangeBounds<u64>) -> Option<u64> { todo!() }
    /// mtree_alloc_range.
    pub fn alloc(&mut self, _size: u64, _within: impl RangeBounds<u64>, _value: V) -> Result<u64, NoSpace<V>> { todo!() }
    /// mtree_alloc_rrange.
    pub fn alloc_rev(&mut self, _size: u64, _within: impl RangeBounds<u64>, _value: V) -> Result<u64, NoSpace<V>> { todo!() }
    /// cursor.
    pub fn cursor(&self, _index: u64) -> Cursor<'_, V> { todo!() }
    /// cursor_mut.
    pub fn cursor_mut(&mut self, _index: u64) -> CursorMut<'_, V> { todo!() }
    /// validate.
    pub fn validate(&self) -> Result<(), CheckError> { todo!() }
    /// stats.
    pub fn stats(&self) -> Stats { todo!() }
    /// __mt_dup with a value map.
    pub fn dup_with<W>(&self, _f: impl FnMut(&V) -> W) -> MapleTree<W> { todo!() }
    /// Fallible duplication with a fallible value map: on error nothing leaks and
    /// every mapped value is dropped exactly once.
    pub fn try_dup_with<W, E>(&self, _f: impl FnMut(&V) -> Result<W, E>) -> Result<MapleTree<W>, DupError<E>> { todo!() }
    /// Turns the append fast path (seed 002) off or on, for measuring what it buys. On by default.
    pub fn set_append_path(&mut self, _enabled: bool) { todo!() }
    /// Fallible clone.
    pub fn try_clone(&self) -> Result<Self, AllocError> where V: Clone { todo!() }
}
impl<V: Clone> Clone for MapleTree<V> { fn clone(&self) -> Self { todo!() } }
impl<V: core::fmt::Debug> core::fmt::Debug for MapleTree<V> { fn fmt(&self, _f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result { todo!() } }
impl<V> Default for MapleTree<V> { fn default() -> Self { Self::new() } }
impl<V: PartialEq> PartialEq for MapleTree<V> { fn eq(&self, _o: &Self) -> bool { todo!() } }
impl<V: Eq> Eq for MapleTree<V> {}
impl<V: Clone, R: RangeBounds<u64>> FromIterator<(R, V)> for MapleTree<V> { fn from_iter<I: IntoIterator<Item = (R, V)>>(_i: I) -> Self { todo!() } }
impl<V: Clone, R: RangeBounds<u64>> Extend<(R, V)> for MapleTree<V> { fn extend<I: IntoIterator<Item = (R, V)>>(&mut self, _i: I) { todo!() } }
impl<V> IntoIterator for MapleTree<V> { type Item = (RangeInclusive<u64>, V); type IntoIter = IntoIter<V>; fn into_iter(self) -> IntoIter<V> { todo!() } }
impl<'a, V> IntoIterator for &'a MapleTree<V> { type Item = (RangeInclusive<u64>, &'a V); type IntoIter = Iter<'a, V>; fn into_iter(self) -> Iter<'a, V> { todo!() } }
impl<'a, V> IntoIterator for &'a mut MapleTree<V> { type Item = (RangeInclusive<u64>, &'a mut V); type IntoIter = IterMut<'a, V>; fn into_iter(self) -> IterMut<'a, V> { todo!() } }
