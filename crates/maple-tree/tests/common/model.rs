//! The one reference model of the tree's semantics, shared by the
//! integration tests and the fuzz targets (`fuzz/` includes this file by
//! path, so it depends on `std` only).
//!
//! It is deliberately naive (a `BTreeMap` from an entry's first index to its
//! last index and value) so that it is obviously correct.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::ops::RangeInclusive;

/// The largest index.
pub const MAX: u64 = u64::MAX;

/// Entries as `first -> (last, value)`; never overlapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Model<V> {
    pub map: BTreeMap<u64, (u64, V)>,
}

impl<V> Default for Model<V> {
    fn default() -> Self {
        Model {
            map: BTreeMap::new(),
        }
    }
}

impl<V: Clone + PartialEq + Debug> Model<V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn get(&self, i: u64) -> Option<(RangeInclusive<u64>, &V)> {
        let (&s, (e, v)) = self.map.range(..=i).next_back()?;
        (*e >= i).then_some((s..=*e, v))
    }

    pub fn get_mut(&mut self, i: u64) -> Option<&mut V> {
        let (_, (e, v)) = self.map.range_mut(..=i).next_back()?;
        if *e >= i {
            Some(v)
        } else {
            None
        }
    }

    /// First indices of the entries overlapping `a..=b`, in order.
    fn overlapping_keys(&self, a: u64, b: u64) -> Vec<u64> {
        let mut keys = Vec::new();
        if let Some((&s, (e, _))) = self.map.range(..a).next_back() {
            if *e >= a {
                keys.push(s);
            }
        }
        keys.extend(self.map.range(a..=b).map(|(&s, _)| s));
        keys
    }

    /// Entries overlapping `a..=b`, in order.
    pub fn range(&self, a: u64, b: u64) -> Vec<(RangeInclusive<u64>, V)> {
        self.overlapping_keys(a, b)
            .into_iter()
            .map(|s| {
                let (e, v) = &self.map[&s];
                (s..=*e, v.clone())
            })
            .collect()
    }

    pub fn entries(&self) -> Vec<(RangeInclusive<u64>, V)> {
        self.map
            .iter()
            .map(|(&s, (e, v))| (s..=*e, v.clone()))
            .collect()
    }

    /// Stores `value` (or absence) over `a..=b`; each surviving piece of a cut
    /// entry gets `split(&old, piece)`. Returns the number of split calls.
    pub fn store_with(
        &mut self,
        a: u64,
        b: u64,
        value: Option<V>,
        split: &mut dyn FnMut(&V, RangeInclusive<u64>) -> V,
    ) -> usize {
        assert!(a <= b);
        let mut calls = 0;
        for s in self.overlapping_keys(a, b) {
            let (e, v) = self.map.remove(&s).unwrap();
            if s < a {
                calls += 1;
                let nv = split(&v, s..=a - 1);
                self.map.insert(s, (a - 1, nv));
            }
            if e > b {
                calls += 1;
                let nv = split(&v, b + 1..=e);
                self.map.insert(b + 1, (e, nv));
            }
        }
        if let Some(v) = value {
            self.map.insert(a, (b, v));
        }
        calls
    }

    pub fn insert(&mut self, a: u64, b: u64, v: V) {
        self.store_with(a, b, Some(v), &mut |old, _| old.clone());
    }

    pub fn remove_range(&mut self, a: u64, b: u64) {
        self.store_with(a, b, None, &mut |old, _| old.clone());
    }

    /// `Err(lowest overlapping entry)` when any index of `a..=b` is occupied.
    pub fn try_insert(&mut self, a: u64, b: u64, v: V) -> Result<(), RangeInclusive<u64>> {
        if let Some(&s) = self.overlapping_keys(a, b).first() {
            return Err(s..=self.map[&s].0);
        }
        self.map.insert(a, (b, v));
        Ok(())
    }

    pub fn remove(&mut self, i: u64) -> Option<(RangeInclusive<u64>, V)> {
        let (r, _) = self.get(i)?;
        let s = *r.start();
        let (e, v) = self.map.remove(&s).unwrap();
        Some((s..=e, v))
    }

    /// The maximal absent ranges inside `lo..=hi`, in order.
    pub fn gaps_within(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut pos = lo as u128; // next index not yet accounted for
        for s in self.overlapping_keys(lo, hi) {
            let e = self.map[&s].0;
            if (s as u128) > pos {
                out.push((pos as u64, s - 1));
            }
            pos = e as u128 + 1;
        }
        if pos <= hi as u128 {
            out.push((pos as u64, hi));
        }
        out
    }

    /// The maximal absent range containing `i` (which must be absent).
    pub fn gap_at(&self, i: u64) -> (u64, u64) {
        assert!(self.get(i).is_none());
        let lo = self
            .map
            .range(..i)
            .next_back()
            .map_or(0, |(_, (e, _))| e + 1);
        let hi = self.map.range(i..).next().map_or(MAX, |(&s, _)| s - 1);
        (lo, hi)
    }

    pub fn find_gap(&self, size: u64, lo: u64, hi: u64) -> Option<u64> {
        assert!(size > 0);
        self.gaps_within(lo, hi)
            .into_iter()
            .find(|&(s, e)| (e - s) as u128 + 1 >= size as u128)
            .map(|(s, _)| s)
    }

    pub fn find_gap_rev(&self, size: u64, lo: u64, hi: u64) -> Option<u64> {
        assert!(size > 0);
        self.gaps_within(lo, hi)
            .into_iter()
            .rev()
            .find(|&(s, e)| (e - s) as u128 + 1 >= size as u128)
            .map(|(_, e)| e - (size - 1))
    }

    /// First entry starting after `x` (`None` if `x == MAX`).
    pub fn next_after(&self, x: u64) -> Option<(RangeInclusive<u64>, &V)> {
        let x1 = x.checked_add(1)?;
        self.map.range(x1..).next().map(|(&s, (e, v))| (s..=*e, v))
    }

    /// Last entry ending before `x` (`None` if `x == 0`).
    pub fn prev_before(&self, x: u64) -> Option<(RangeInclusive<u64>, &V)> {
        if x == 0 {
            return None;
        }
        // The entry containing x-1 if any, else the last entry starting before x.
        let (&s, (e, v)) = self.map.range(..x).next_back()?;
        debug_assert!(*e < x);
        Some((s..=*e, v))
    }

    /// Slots a minimal leaf layout needs: entries plus maximal gaps.
    pub fn min_slots(&self) -> usize {
        self.map.len() + self.gaps_within(0, MAX).len()
    }
}
