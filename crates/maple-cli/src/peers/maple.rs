//! maple itself: `MapleTree<u64>`, and the same tree with the append fast path off.

use maple_tree::MapleTree;

use crate::range_map::{Dir, RangeMapUnderTest};

/// `MapleTree<u64>`, used through its public API.
pub struct Maple(pub MapleTree<u64>);

impl RangeMapUnderTest for Maple {
    fn new_regular() -> Self {
        Maple(MapleTree::new())
    }
    fn new_alloc() -> Self {
        Maple(MapleTree::new_alloc())
    }
    #[inline]
    fn store(&mut self, first: u64, last: u64, value: u64) {
        self.0.insert(first..=last, value);
    }
    #[inline]
    fn load(&self, index: u64) -> Option<u64> {
        self.0.get(index).copied()
    }
    #[inline]
    fn erase(&mut self, index: u64) {
        self.0.remove(index);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn for_each(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, &v) in self.0.iter() {
            f(*r.start(), *r.end(), v);
        }
    }
    #[inline]
    fn for_each_rev(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, &v) in self.0.iter().rev() {
            f(*r.start(), *r.end(), v);
        }
    }
    #[inline]
    fn for_each_overlapping(&self, first: u64, last: u64, mut f: impl FnMut(u64, u64, u64)) {
        for (r, &v) in self.0.range(first..=last) {
            f(*r.start(), *r.end(), v);
        }
    }
    #[inline]
    fn for_each_mut(&mut self, mut f: impl FnMut(u64, u64, &mut u64)) {
        for (r, v) in self.0.iter_mut() {
            f(*r.start(), *r.end(), v);
        }
    }
    #[inline]
    fn into_each(self, mut f: impl FnMut(u64, u64, u64)) {
        for (r, v) in self.0 {
            f(*r.start(), *r.end(), v);
        }
    }
    #[inline]
    fn cursor_walk(&self, dir: Dir, mut f: impl FnMut(u64, u64, u64)) {
        match dir {
            Dir::Fwd => {
                let mut c = self.0.cursor(0);
                if let Some((r, &v)) = c.key_value() {
                    f(*r.start(), *r.end(), v);
                }
                while let Some((r, &v)) = c.next_entry() {
                    f(*r.start(), *r.end(), v);
                }
            }
            Dir::Rev => {
                let mut c = self.0.cursor(u64::MAX);
                if let Some((r, &v)) = c.key_value() {
                    f(*r.start(), *r.end(), v);
                }
                while let Some((r, &v)) = c.prev_entry() {
                    f(*r.start(), *r.end(), v);
                }
            }
        }
    }
    fn dup(&self) -> Self {
        Maple(self.0.clone())
    }
    #[inline]
    fn gap(&mut self, dir: Dir, min: u64, max: u64, size: u64) -> Option<u64> {
        match dir {
            Dir::Fwd => self.0.find_gap(size, min..=max),
            Dir::Rev => self.0.find_gap_rev(size, min..=max),
        }
    }
    fn node_bytes(&self) -> Option<usize> {
        Some(self.0.stats().node_bytes)
    }
}

/// `MapleTree<u64>` with `set_append_path(false)` on every tree it makes
/// (`impl=maple-noappend`): the "before" of the append fast path
/// (`mas_wr_append`).
pub struct MapleNoAppend(Maple);

impl MapleNoAppend {
    fn off(mut t: MapleTree<u64>) -> Self {
        t.set_append_path(false);
        MapleNoAppend(Maple(t))
    }
}

impl RangeMapUnderTest for MapleNoAppend {
    fn new_regular() -> Self {
        Self::off(MapleTree::new())
    }
    fn new_alloc() -> Self {
        Self::off(MapleTree::new_alloc())
    }
    #[inline]
    fn store(&mut self, first: u64, last: u64, value: u64) {
        self.0.store(first, last, value)
    }
    #[inline]
    fn load(&self, index: u64) -> Option<u64> {
        self.0.load(index)
    }
    #[inline]
    fn erase(&mut self, index: u64) {
        self.0.erase(index)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn for_each(&self, f: impl FnMut(u64, u64, u64)) {
        self.0.for_each(f)
    }
    #[inline]
    fn for_each_rev(&self, f: impl FnMut(u64, u64, u64)) {
        self.0.for_each_rev(f)
    }
    #[inline]
    fn for_each_overlapping(&self, first: u64, last: u64, f: impl FnMut(u64, u64, u64)) {
        self.0.for_each_overlapping(first, last, f)
    }
    #[inline]
    fn for_each_mut(&mut self, f: impl FnMut(u64, u64, &mut u64)) {
        self.0.for_each_mut(f)
    }
    #[inline]
    fn into_each(self, f: impl FnMut(u64, u64, u64)) {
        self.0.into_each(f)
    }
    #[inline]
    fn cursor_walk(&self, dir: Dir, f: impl FnMut(u64, u64, u64)) {
        self.0.cursor_walk(dir, f)
    }
    fn dup(&self) -> Self {
        MapleNoAppend(self.0.dup())
    }
    #[inline]
    fn gap(&mut self, dir: Dir, min: u64, max: u64, size: u64) -> Option<u64> {
        self.0.gap(dir, min, max, size)
    }
    fn node_bytes(&self) -> Option<usize> {
        self.0.node_bytes()
    }
}
