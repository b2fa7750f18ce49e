//! A range map hand-written on std's `BTreeMap`, the way a user would write one:
//! `start -> (end, value)`, splitting the entries a store overlaps.

use std::collections::BTreeMap;

use super::gap_scan::{first_fit, last_fit};
use crate::range_map::{Dir, RangeMapUnderTest};
use crate::workloads::{Support, Workload};

/// Why the cursor workloads exclude it.
pub const NO_CURSOR: &str = "BTreeMap's cursors (lower_bound, upper_bound) are unstable \
     (feature btree_cursors, nightly only)";

/// Which workloads it runs: all but the cursor workloads.
pub fn support(w: Workload) -> Support {
    match w {
        Workload::CursorNext | Workload::CursorPrev => Err(NO_CURSOR),
        _ => Ok(()),
    }
}

/// `BTreeMap<start, (end, value)>`.
#[derive(Clone, Default)]
pub struct BTreeRangeMap {
    map: BTreeMap<u64, (u64, u64)>,
}

impl RangeMapUnderTest for BTreeRangeMap {
    fn new_regular() -> Self {
        Self::default()
    }

    #[inline]
    fn store(&mut self, first: u64, last: u64, value: u64) {
        // An entry starting before `first` that reaches into the range: keep its head
        // (and its tail, if it also reaches past `last`).
        if let Some((&s, &(e, v))) = self.map.range(..first).next_back() {
            if e >= first {
                self.map.insert(s, (first - 1, v));
                if e > last {
                    self.map.insert(last + 1, (e, v));
                }
            }
        }
        // Entries starting inside the range: remove; keep the tail of the last one.
        while let Some((&s, &(e, v))) = self.map.range(first..=last).next() {
            self.map.remove(&s);
            if e > last {
                self.map.insert(last + 1, (e, v));
            }
        }
        self.map.insert(first, (last, value));
    }

    #[inline]
    fn load(&self, index: u64) -> Option<u64> {
        match self.map.range(..=index).next_back() {
            Some((_, &(e, v))) if e >= index => Some(v),
            _ => None,
        }
    }

    #[inline]
    fn erase(&mut self, index: u64) {
        if let Some((&s, &(e, _))) = self.map.range(..=index).next_back() {
            if e >= index {
                self.map.remove(&s);
            }
        }
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    #[inline]
    fn for_each(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (&s, &(e, v)) in &self.map {
            f(s, e, v);
        }
    }

    #[inline]
    fn for_each_rev(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (&s, &(e, v)) in self.map.iter().rev() {
            f(s, e, v);
        }
    }

    #[inline]
    fn for_each_overlapping(&self, first: u64, last: u64, mut f: impl FnMut(u64, u64, u64)) {
        // The entry that starts before `first` may reach into the range.
        if let Some((&s, &(e, v))) = self.map.range(..first).next_back() {
            if e >= first {
                f(s, e, v);
            }
        }
        for (&s, &(e, v)) in self.map.range(first..=last) {
            f(s, e, v);
        }
    }

    #[inline]
    fn for_each_mut(&mut self, mut f: impl FnMut(u64, u64, &mut u64)) {
        for (&s, (e, v)) in self.map.iter_mut() {
            f(s, *e, v);
        }
    }

    #[inline]
    fn into_each(self, mut f: impl FnMut(u64, u64, u64)) {
        for (s, (e, v)) in self.map {
            f(s, e, v);
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
        // The entry that starts before `min` may still cover it.
        let before = self
            .map
            .range(..min)
            .next_back()
            .filter(|(_, &(e, _))| e >= min)
            .map(|(&s, &(e, _))| (s, e));
        let inside = self.map.range(min..=max).map(|(&s, &(e, _))| (s, e));
        match dir {
            Dir::Fwd => first_fit(before.into_iter().chain(inside), min, max, size),
            Dir::Rev => last_fit(inside.rev().chain(before), min, max, size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_splits_and_does_not_merge() {
        let mut m = BTreeRangeMap::new_regular();
        m.store(0, 99, 1);
        m.store(10, 19, 2);
        m.store(20, 29, 2);
        m.store(50, 59, 4);
        m.store(15, 55, 3);
        let mut v = Vec::new();
        m.for_each(|a, b, c| v.push((a, b, c)));
        assert_eq!(
            v,
            vec![
                (0, 9, 1),
                (10, 14, 2),
                (15, 55, 3),
                (56, 59, 4),
                (60, 99, 1)
            ]
        );
        assert_eq!(m.load(14), Some(2));
        m.erase(57);
        assert_eq!(m.load(57), None);
        assert_eq!(m.gap(Dir::Fwd, 0, 200, 4), Some(56));
        assert_eq!(m.gap(Dir::Rev, 0, 200, 4), Some(197));
        assert_eq!(m.gap(Dir::Rev, 0, 99, 4), Some(56));
        assert_eq!(m.gap(Dir::Fwd, 0, 99, 5), None);
    }
}
