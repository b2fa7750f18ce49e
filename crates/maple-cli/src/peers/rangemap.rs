//! `rangemap::RangeInclusiveMap`, the range map most Rust users pick.
//!
//! Semantics differ in one way: rangemap merges adjacent ranges whose values are
//! equal, the maple tree never merges. How each workload is mapped faithfully:
//!
//! - In every workload but `overwrite`, no store can land next to an equal value:
//!   the values are `i + 1`, distinct for distinct entries, and the two pieces left
//!   of a cut entry are never adjacent. Those run with plain `u64` values, and a merge,
//!   if one happened, would change the entry count and the checksum and be caught.
//! - In `overwrite`, the store of value `q + 1` can land next to the `seq_store`
//!   entry `q`, whose value is also `q + 1`, and rangemap would merge the two. There
//!   values are [`Stamped`]: the value plus the serial number of the store that wrote
//!   it, so that no two stores are ever equal (what a user who needs the maple tree's
//!   semantics from rangemap has to do). The checksum uses the value alone.
//! - `erase(index)` (remove the whole entry containing `index`) is `get_key_value`
//!   then `remove(range)`: rangemap has no single call for it.
//! - Gap search (no gap tracking): `gaps(outer)` for the lowest fit. For the highest,
//!   `gaps` only runs forwards, and `overlapping(outer).rev()` starts from the end of
//!   the whole map (its B-tree range is unbounded above), costing every entry above
//!   `outer`. So: when no entry lies above `outer`, walk `overlapping(outer)`
//!   backwards; otherwise walk `gaps(outer)` forwards and keep the last fit.

use rangemap::RangeInclusiveMap;

use super::gap_scan::last_fit;
use crate::bodies;
use crate::range_map::{Dir, RangeMapUnderTest};
use crate::rep::Rep;
use crate::workloads::{Case, Support, Workload};

pub const ABOUT: &str = "rangemap::RangeInclusiveMap<u64, V>; V = u64, or (value, store serial) \
     in overwrite so that rangemap never merges adjacent equal values";

const NO_ITER_MUT: &str = "rangemap hands out no mutable access to values (no iter_mut or get_mut)";
const NO_CURSOR: &str = "rangemap has no cursor";

/// Which workloads it runs: all but `iter_mut` and the cursor workloads.
pub fn support(w: Workload) -> Support {
    match w {
        Workload::IterMut => Err(NO_ITER_MUT),
        Workload::CursorNext | Workload::CursorPrev => Err(NO_CURSOR),
        _ => Ok(()),
    }
}

/// Runs `case` with the value type that keeps rangemap from merging.
pub fn run(case: &Case) -> Rep {
    match case.workload {
        Workload::Overwrite => bodies::run::<RangeMap<Stamped>>(case),
        _ => bodies::run::<RangeMap<u64>>(case),
    }
}

/// A value rangemap can store for us.
pub trait Value: Eq + Clone {
    fn make(value: u64, serial: u64) -> Self;
    fn value(&self) -> u64;
}

impl Value for u64 {
    #[inline]
    fn make(value: u64, _serial: u64) -> Self {
        value
    }
    #[inline]
    fn value(&self) -> u64 {
        *self
    }
}

/// A value and the serial number of the store that wrote it: never equal to the
/// value of another store, so never merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamped {
    value: u64,
    serial: u64,
}

impl Value for Stamped {
    #[inline]
    fn make(value: u64, serial: u64) -> Self {
        Stamped { value, serial }
    }
    #[inline]
    fn value(&self) -> u64 {
        self.value
    }
}

/// `RangeInclusiveMap<u64, V>` and a store counter.
#[derive(Clone)]
pub struct RangeMap<V: Value> {
    map: RangeInclusiveMap<u64, V>,
    serial: u64,
}

impl<V: Value> RangeMapUnderTest for RangeMap<V> {
    fn new_regular() -> Self {
        RangeMap {
            map: RangeInclusiveMap::new(),
            serial: 0,
        }
    }

    #[inline]
    fn store(&mut self, first: u64, last: u64, value: u64) {
        self.serial += 1;
        self.map.insert(first..=last, V::make(value, self.serial));
    }

    #[inline]
    fn load(&self, index: u64) -> Option<u64> {
        self.map.get(&index).map(V::value)
    }

    #[inline]
    fn erase(&mut self, index: u64) {
        if let Some((r, _)) = self.map.get_key_value(&index) {
            let r = r.clone();
            self.map.remove(r);
        }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, v) in self.map.iter() {
            f(*r.start(), *r.end(), v.value());
        }
    }

    #[inline]
    fn for_each_rev(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, v) in self.map.iter().rev() {
            f(*r.start(), *r.end(), v.value());
        }
    }

    #[inline]
    fn for_each_overlapping(&self, first: u64, last: u64, mut f: impl FnMut(u64, u64, u64)) {
        for (r, v) in self.map.overlapping(first..=last) {
            f(*r.start(), *r.end(), v.value());
        }
    }

    fn for_each_mut(&mut self, _f: impl FnMut(u64, u64, &mut u64)) {
        unreachable!("{NO_ITER_MUT}")
    }

    #[inline]
    fn into_each(self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, v) in self.map {
            f(*r.start(), *r.end(), v.value());
        }
    }

    fn cursor_walk(&self, _dir: Dir, _f: impl FnMut(u64, u64, u64)) {
        unreachable!("{NO_CURSOR}")
    }

    fn dup(&self) -> Self {
        self.clone()
    }

    #[inline]
    fn gap(&mut self, dir: Dir, min: u64, max: u64, size: u64) -> Option<u64> {
        let outer = min..=max;
        match dir {
            Dir::Fwd => self
                .map
                .gaps(&outer)
                .find(|g| g.end() - g.start() >= size - 1)
                .map(|g| *g.start()),
            Dir::Rev => {
                let above = self
                    .map
                    .last_range_value()
                    .is_some_and(|(r, _)| *r.start() > max);
                if above {
                    self.map
                        .gaps(&outer)
                        .filter(|g| g.end() - g.start() >= size - 1)
                        .last()
                        .map(|g| g.end() - (size - 1))
                } else {
                    let entries = self.map.overlapping(&outer).rev();
                    last_fit(entries.map(|(r, _)| (*r.start(), *r.end())), min, max, size)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries<V: Value>(m: &RangeMap<V>) -> Vec<(u64, u64, u64)> {
        let mut v = Vec::new();
        m.for_each(|a, b, c| v.push((a, b, c)));
        v
    }

    #[test]
    fn plain_values_merge_stamped_values_do_not() {
        let mut plain = RangeMap::<u64>::new_regular();
        plain.store(0, 9, 7);
        plain.store(10, 19, 7);
        assert_eq!(entries(&plain), vec![(0, 19, 7)]); // rangemap merged them
        let mut stamped = RangeMap::<Stamped>::new_regular();
        stamped.store(0, 9, 7);
        stamped.store(10, 19, 7);
        assert_eq!(entries(&stamped), vec![(0, 9, 7), (10, 19, 7)]);
    }

    #[test]
    fn erase_and_gaps() {
        let mut m = RangeMap::<u64>::new_regular();
        m.store(10, 19, 1);
        m.store(25, 29, 2);
        m.erase(12);
        assert_eq!(entries(&m), vec![(25, 29, 2)]);
        m.store(10, 19, 1);
        assert_eq!(m.gap(Dir::Fwd, 0, 40, 5), Some(0));
        assert_eq!(m.gap(Dir::Fwd, 6, 40, 5), Some(20));
        assert_eq!(m.gap(Dir::Rev, 0, 40, 5), Some(36));
        assert_eq!(m.gap(Dir::Rev, 0, 28, 6), Some(4));
        assert_eq!(m.gap(Dir::Rev, 12, 28, 6), None);
        // Entries above the window: the forward-gaps path.
        assert_eq!(m.gap(Dir::Rev, 0, 22, 3), Some(20));
        assert_eq!(m.gap(Dir::Rev, 0, 22, 4), Some(6));
        assert_eq!(m.gap(Dir::Rev, 11, 22, 4), None);
    }
}
