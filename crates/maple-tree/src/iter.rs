//! SKELETON
use core::marker::PhantomData;
use core::ops::RangeInclusive;
/// iter
pub struct Iter<'a, V>(PhantomData<&'a V>);
/// iter_mut
pub struct IterMut<'a, V>(PhantomData<&'a mut V>);
/// range
pub struct Range<'a, V>(PhantomData<&'a V>);
/// into_iter
pub struct IntoIter<V>(PhantomData<V>);
impl<'a, V> Iterator for Iter<'a, V> { type Item = (RangeInclusive<u64>, &'a V); fn next(&mut self) -> Option<Self::Item> { todo!() } }
impl<'a, V> DoubleEndedIterator for Iter<'a, V> { fn next_back(&mut self) -> Option<Self::Item> { todo!() } }
impl<'a, V> Iterator for IterMut<'a, V> { type Item = (RangeInclusive<u64>, &'a mut V); fn next(&mut self) -> Option<Self::Item> { todo!() } }
impl<'a, V> DoubleEndedIterator for IterMut<'a, V> { fn next_back(&mut self) -> Option<Self::Item> { todo!() } }
impl<'a, V> Iterator for Range<'a, V> { type Item = (RangeInclusive<u64>, &'a V); fn next(&mut self) -> Option<Self::Item> { todo!() } }
impl<'a, V> DoubleEndedIterator for Range<'a, V> { fn next_back(&mut self) -> Option<Self::Item> { todo!() } }
impl<V> Iterator for IntoIter<V> { type Item = (RangeInclusive<u64>, V); fn next(&mut self) -> Option<Self::Item> { todo!() } }
impl<V> DoubleEndedIterator for IntoIter<V> { fn next_back(&mut self) -> Option<Self::Item> { todo!() } }
