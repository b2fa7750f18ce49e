//! The interface every range-map implementation under test offers: a map of
//! non-overlapping inclusive `u64` ranges with the maple tree's semantics. The
//! tree workloads (`bodies.rs`) are written once against it; the implementations
//! are in `peers/`.

/// Direction of a gap search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `empty_area`: the lowest fit.
    Fwd,
    /// `empty_area_rev`: the highest fit.
    Rev,
}

/// A map of non-overlapping inclusive `u64` ranges to `u64` values, with the
/// maple tree's semantics: a store overwrites (cut entries keep their value
/// outside the new range), adjacent entries are never merged.
///
/// Methods are generic (no `dyn`): every workload is monomorphised per implementation.
pub trait RangeMapUnderTest: Sized {
    /// A regular tree (no gap tracking).
    fn new_regular() -> Self;
    /// An allocation tree (gap tracking, where the implementation has it).
    fn new_alloc() -> Self {
        Self::new_regular()
    }
    /// `store_range(first, last, value)`.
    fn store(&mut self, first: u64, last: u64, value: u64);
    /// `load(index)`.
    fn load(&self, index: u64) -> Option<u64>;
    /// `erase(index)`: removes the whole entry containing `index`.
    fn erase(&mut self, index: u64);
    /// Number of entries.
    fn len(&self) -> usize;
    /// Calls `f(first, last, value)` for every entry, in order.
    fn for_each(&self, f: impl FnMut(u64, u64, u64));
    /// Calls `f(first, last, value)` for every entry, in reverse order.
    fn for_each_rev(&self, f: impl FnMut(u64, u64, u64));
    /// Calls `f(first, last, value)` for every entry overlapping
    /// `first..=last`, in order (whole entries, not clipped).
    fn for_each_overlapping(&self, first: u64, last: u64, f: impl FnMut(u64, u64, u64));
    /// Calls `f(first, last, &mut value)` for every entry, in order. Only for
    /// implementations whose `support` admits `iter_mut`.
    fn for_each_mut(&mut self, f: impl FnMut(u64, u64, &mut u64));
    /// Consumes the map, calling `f(first, last, value)` for every entry in
    /// order with the value moved out; the emptied map is freed before it returns.
    fn into_each(self, f: impl FnMut(u64, u64, u64));
    /// Walks a cursor over every entry: put at index 0 (`Fwd`) or `u64::MAX`
    /// (`Rev`), the entry there if any, then each next (previous) entry.
    /// Only for implementations whose `support` admits the cursor workloads.
    fn cursor_walk(&self, dir: Dir, f: impl FnMut(u64, u64, u64));
    /// The duplicate operation (`clone`).
    fn dup(&self) -> Self;
    /// A new allocation tree filled by iterating `self` and storing every range in
    /// order (how fork built the child's tree before `__mt_dup`).
    fn rebuild(&self) -> Self {
        let mut t = Self::new_alloc();
        self.for_each(|f, l, v| t.store(f, l, v));
        t
    }
    /// Called once, untimed, before a run of gap queries that all use `min..=max`.
    fn prepare_gap_queries(&mut self, _min: u64, _max: u64) {}
    /// `empty_area(min, max, size)` / `empty_area_rev(min, max, size)`.
    fn gap(&mut self, dir: Dir, min: u64, max: u64, size: u64) -> Option<u64>;
    /// Bytes of tree nodes, where the implementation can tell.
    fn node_bytes(&self) -> Option<usize> {
        None
    }
}
