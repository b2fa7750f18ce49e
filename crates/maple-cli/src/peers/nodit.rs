//! `nodit::NoditMap` (the successor of discrete_range_map): a discrete interval map
//! on a B-tree. Its `insert_overwrite` has the maple tree's store semantics (cut,
//! then insert; no merging). `erase(index)` is `get_key_value_at_point` then
//! `remove_overlapping(interval)`. Lowest fit: `gaps_trimmed(outer)`; highest fit:
//! `overlapping(outer)` walked backwards (its gap iterators run forwards only).

use nodit::interval::ii;
use nodit::{Interval, NoditMap};

use super::gap_scan::last_fit;
use crate::range_map::{Dir, RangeMapUnderTest};
use crate::workloads::{Support, Workload};

const NO_CURSOR: &str = "nodit has no cursor";

/// Which workloads it runs: all but the cursor workloads.
pub fn support(w: Workload) -> Support {
    match w {
        Workload::CursorNext | Workload::CursorPrev => Err(NO_CURSOR),
        _ => Ok(()),
    }
}

/// `NoditMap<u64, Interval<u64>, u64>`.
#[derive(Clone)]
pub struct Nodit {
    map: NoditMap<u64, Interval<u64>, u64>,
}

impl RangeMapUnderTest for Nodit {
    fn new_regular() -> Self {
        Nodit {
            map: NoditMap::new(),
        }
    }

    #[inline]
    fn store(&mut self, first: u64, last: u64, value: u64) {
        // The returned iterator holds the cut pieces; dropping it is the cost of the API.
        drop(self.map.insert_overwrite(ii(first, last), value));
    }

    #[inline]
    fn load(&self, index: u64) -> Option<u64> {
        self.map.get_at_point(&index).copied()
    }

    #[inline]
    fn erase(&mut self, index: u64) {
        if let Ok((k, _)) = self.map.get_key_value_at_point(&index) {
            let k = *k;
            drop(self.map.remove_overlapping(&k));
        }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (k, &v) in self.map.iter() {
            f(*k.start(), *k.end(), v);
        }
    }

    #[inline]
    fn for_each_rev(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (k, &v) in self.map.iter().rev() {
            f(*k.start(), *k.end(), v);
        }
    }

    #[inline]
    fn for_each_overlapping(&self, first: u64, last: u64, mut f: impl FnMut(u64, u64, u64)) {
        for (k, &v) in self.map.overlapping(&ii(first, last)) {
            f(*k.start(), *k.end(), v);
        }
    }

    #[inline]
    fn for_each_mut(&mut self, mut f: impl FnMut(u64, u64, &mut u64)) {
        for (k, v) in self.map.iter_mut() {
            f(*k.start(), *k.end(), v);
        }
    }

    #[inline]
    fn into_each(self, mut f: impl FnMut(u64, u64, u64)) {
        for (k, v) in self.map {
            f(*k.start(), *k.end(), v);
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
        let outer = ii(min, max);
        match dir {
            Dir::Fwd => self
                .map
                .gaps_trimmed(&outer)
                .find(|g| g.end() - g.start() >= size - 1)
                .map(|g| *g.start()),
            Dir::Rev => {
                let entries = self.map.overlapping(&outer).rev();
                last_fit(entries.map(|(k, _)| (*k.start(), *k.end())), min, max, size)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overwrite_cuts_without_merging() {
        let mut m = Nodit::new_regular();
        m.store(0, 99, 1);
        m.store(10, 19, 2);
        m.store(20, 29, 2);
        m.store(15, 24, 3);
        let mut v = Vec::new();
        m.for_each(|a, b, c| v.push((a, b, c)));
        assert_eq!(
            v,
            vec![
                (0, 9, 1),
                (10, 14, 2),
                (15, 24, 3),
                (25, 29, 2),
                (30, 99, 1)
            ]
        );
        m.erase(27);
        assert_eq!(m.load(27), None);
        assert_eq!(m.len(), 4);
        assert_eq!(m.gap(Dir::Fwd, 0, 200, 5), Some(25));
        assert_eq!(m.gap(Dir::Rev, 0, 200, 5), Some(196));
        assert_eq!(m.gap(Dir::Rev, 0, 99, 5), Some(25));
    }
}
