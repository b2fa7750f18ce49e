//! SKELETON
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};
/// A read cursor (kernel: ma_state)
pub struct Cursor<'a, V>(PhantomData<&'a V>);
/// A write cursor
pub struct CursorMut<'a, V>(PhantomData<&'a mut V>);
impl<'a, V> Cursor<'a, V> {
    /// The index the cursor is at.
    pub fn index(&self) -> u64 { todo!() }
    /// The range (entry or gap) that holds the index.
    pub fn range(&self) -> RangeInclusive<u64> { todo!() }
    /// The value of the entry at the cursor, if any.
    pub fn get(&self) -> Option<&'a V> { todo!() }
    /// The entry at the cursor, if any.
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &'a V)> { todo!() }
    /// Moves to `index`, walking only as far up as needed.
    pub fn seek(&mut self, _index: u64) { todo!() }
    /// Moves to the next entry after the current range and returns it (kernel: mas_next).
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> { todo!() }
    /// Moves to the previous entry before the current range and returns it (kernel: mas_prev).
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &'a V)> { todo!() }
    /// Steps to the adjacent range, an entry or a gap (kernel: mas_next_range). None at the end.
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> { todo!() }
    /// Steps to the previous range, an entry or a gap (kernel: mas_prev_range). None at 0.
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&'a V>)> { todo!() }
}
impl<'a, V> CursorMut<'a, V> {
    /// The index the cursor is at.
    pub fn index(&self) -> u64 { todo!() }
    /// The range (entry or gap) that holds the index.
    pub fn range(&self) -> RangeInclusive<u64> { todo!() }
    /// The value at the cursor.
    pub fn get(&self) -> Option<&V> { todo!() }
    /// The value at the cursor, mutably.
    pub fn get_mut(&mut self) -> Option<&mut V> { todo!() }
    /// The entry at the cursor.
    pub fn key_value(&self) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// Moves to `index`.
    pub fn seek(&mut self, _index: u64) { todo!() }
    /// Next entry.
    pub fn next_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// Previous entry.
    pub fn prev_entry(&mut self) -> Option<(RangeInclusive<u64>, &V)> { todo!() }
    /// Next range.
    pub fn next_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> { todo!() }
    /// Previous range.
    pub fn prev_range(&mut self) -> Option<(RangeInclusive<u64>, Option<&V>)> { todo!() }
    /// Stores `value` over `range` (mas_store); the cursor moves to `range.start()`.
    pub fn insert(&mut self, _range: impl RangeBounds<u64>, _value: V) where V: Clone { todo!() }
    /// insert with a split callback.
    pub fn insert_with(&mut self, _range: impl RangeBounds<u64>, _value: V, _split: impl FnMut(&V, RangeInclusive<u64>) -> V) { todo!() }
    /// Removes the entry at the cursor (mas_erase) and returns it; the cursor stays at its index.
    pub fn remove(&mut self) -> Option<(RangeInclusive<u64>, V)> { todo!() }
}
