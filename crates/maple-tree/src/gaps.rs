//! Gaps as first-class citizens: the [`Gaps`] iterator over the free ranges
//! of a window, and gap search with alignment
//! ([`MapleTree::find_gap_aligned`], [`MapleTree::alloc_aligned`], and their
//! top-down `_rev` forms), on the tree and on [`RcuMapleTree`]'s guards.
//!
//! # Aligned search: the lowest aligned fit, O(log n) when there is room
//!
//! [`MapleTree::find_gap_aligned`] answers the lowest multiple of `align`
//! that starts `size` free indices inside the window ([`_rev`]: the
//! highest), as [`MapleTree::find_gap`] answers the lowest start. The
//! kernel asks its gap search for `size + align - 1` indices and aligns the
//! start it gets (`vm_unmapped_area`'s `length + align_mask`): quick, but
//! it misses a gap that is big enough for an aligned fit yet shorter than
//! `size + align - 1` (a *tight* fit), and so may answer a higher start
//! than the lowest. Here the search runs in two passes:
//!
//! 1. *Roomy*: the lowest free range, clipped to the window, of at least
//!    `size + align - 1` indices. Such a range certainly holds an aligned
//!    fit, so the gap records steer the descent exactly as in
//!    [`MapleTree::find_gap`]: O(log n) on an allocation tree. Its lowest
//!    aligned start is the answer unless a tight range below it fits.
//! 2. *Tight*, below that answer (or everywhere, if pass 1 found nothing):
//!    every free range of at least `size` indices, in order, is checked for
//!    an aligned fit, and the first one found is the answer. The gap
//!    records still skip every subtree without a range of `size`, but each
//!    tight range that turns out misaligned costs a visit, so this pass is
//!    O(log n) per tight range looked at.
//!
//! With alignment 1 every range of `size` is roomy, and the search is
//! [`MapleTree::find_gap`]'s. The `_rev` forms mirror this from the top.
//!
//! [`_rev`]: MapleTree::find_gap_aligned_rev
//! [`RcuMapleTree`]: crate::RcuMapleTree

use crate::displaced::Single;
use crate::error::NoSpace;
use crate::gap::{search, Want};
use crate::node::{span, NodePtr};
use crate::query::query_bounds;
use crate::tree::MapleTree;
use crate::walk::Path;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};

impl<V> MapleTree<V> {
    /// The free ranges (runs of absent indices) inside `within`, in order and
    /// clipped to it; both directions. An empty `within` yields nothing.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..20, ());
    /// t.insert(30..40, ());
    /// assert_eq!(t.gaps(5..35).collect::<Vec<_>>(), [5..=9, 20..=29]);
    /// assert_eq!(t.gaps(..).next_back(), Some(40..=u64::MAX));
    /// ```
    ///
    /// # Panics
    /// If `within` is reversed (e.g. `7..=3`).
    #[track_caller]
    pub fn gaps(&self, within: impl RangeBounds<u64>) -> Gaps<'_, V> {
        Gaps::new(self.top(), &within)
    }

    /// The lowest `s`, a multiple of `align`, such that `s..=s+size-1` lies
    /// inside `within` and holds no entry; `None` if there is none. With
    /// `align` 1 this is [`find_gap`](Self::find_gap). O(log n) on an
    /// allocation tree when no free range shorter than `size + align - 1`
    /// lies below the answer (see the module docs).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0..0x1800, ());
    /// t.insert(0x3000..0x3800, ());
    /// // 0x1800..=0x2fff is free: 0x1000 aligned to 0x1000 fits at 0x2000.
    /// assert_eq!(t.find_gap_aligned(0x1000, 0x1000, ..0x3800), Some(0x2000));
    /// // The kernel's trick (a gap of 0x1fff) would have missed it:
    /// assert_eq!(t.find_gap(0x1fff, ..0x3800), None);
    /// // Room to spare above 0x3800: the aligned start there.
    /// assert_eq!(t.find_gap_aligned(0x1800, 0x1000, ..), Some(0x4000));
    /// ```
    ///
    /// # Panics
    /// If `size` or `align` is 0, or `within` is reversed.
    #[track_caller]
    pub fn find_gap_aligned(
        &self,
        size: u64,
        align: u64,
        within: impl RangeBounds<u64>,
    ) -> Option<u64> {
        aligned_search(self.root(), size, align, &within, false)
    }

    /// As [`find_gap_aligned`](Self::find_gap_aligned), from the top: the
    /// highest such `s`.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0x8000.., ());
    /// assert_eq!(t.find_gap_aligned_rev(0x1000, 0x4000, ..), Some(0x4000));
    /// ```
    ///
    /// # Panics
    /// If `size` or `align` is 0, or `within` is reversed.
    #[track_caller]
    pub fn find_gap_aligned_rev(
        &self,
        size: u64,
        align: u64,
        within: impl RangeBounds<u64>,
    ) -> Option<u64> {
        aligned_search(self.root(), size, align, &within, true)
    }

    /// Stores `value` at the start [`find_gap_aligned`](Self::find_gap_aligned)
    /// gives and returns it; hands the value back if no aligned fit exists.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// assert_eq!(t.alloc_aligned(0x100, 0x1000, 0x1001.., 'a'), Ok(0x2000));
    /// assert_eq!(t.alloc_aligned(0x100, 0x1000, 0x1001.., 'b'), Ok(0x3000));
    /// assert_eq!(t.alloc_aligned(0x100, 0x1000, 0x1001..0x2000, 'c').unwrap_err().value, 'c');
    /// ```
    ///
    /// # Panics
    /// If `size` or `align` is 0, or `within` is reversed.
    #[track_caller]
    pub fn alloc_aligned(
        &mut self,
        size: u64,
        align: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        let found = self.find_gap_aligned(size, align, within);
        self.store_found(found, size, value)
    }

    /// Stores `value` at the start
    /// [`find_gap_aligned_rev`](Self::find_gap_aligned_rev) gives and returns
    /// it; hands the value back if no aligned fit exists.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// assert_eq!(t.alloc_aligned_rev(0x100, 0x1000, ..0x3000, 'a'), Ok(0x2000));
    /// ```
    ///
    /// # Panics
    /// If `size` or `align` is 0, or `within` is reversed.
    #[track_caller]
    pub fn alloc_aligned_rev(
        &mut self,
        size: u64,
        align: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        let found = self.find_gap_aligned_rev(size, align, within);
        self.store_found(found, size, value)
    }

    fn store_found(&mut self, found: Option<u64>, size: u64, value: V) -> Result<u64, NoSpace<V>> {
        let Some(start) = found else {
            return Err(NoSpace { size, value });
        };
        let mut path = Path::new();
        let last = start + (size - 1);
        let mut displaced = Single(None);
        self.store_at(
            &mut path,
            start,
            last,
            Some(value),
            &mut |_: &V, _: RangeInclusive<u64>| -> V {
                unreachable!("maple tree: an allocation cut an entry")
            },
            &mut displaced,
        );
        debug_assert!(displaced.0.is_none(), "an allocation displaced an entry");
        Ok(start)
    }
}

/// The lowest multiple of `align` at or above `x`, if it is a `u64`.
#[inline]
fn align_up(x: u64, align: u64) -> Option<u64> {
    match x % align {
        0 => Some(x),
        r => x.checked_add(align - r),
    }
}

/// What an aligned gap search looks for in one pass.
#[derive(Clone, Copy)]
struct AlignedQuery {
    size: u64,
    align: u64,
    lo: u64,
    hi: u64,
    /// Free indices a range must have inside the window to be looked at:
    /// `size + align - 1` in the roomy pass, `size` in the tight one.
    need: u64,
}

impl AlignedQuery {
    /// The pass looks for roomy ranges: each one holds an aligned fit.
    fn roomy(&self) -> bool {
        self.need > self.size || self.align == 1
    }

    fn run(&self, root: Option<NodePtr>, rev: bool) -> Option<u64> {
        match root {
            None if rev => self.fit::<true>(self.lo, self.hi),
            None => self.fit::<false>(self.lo, self.hi),
            Some(root) => search(*self, root, rev),
        }
    }
}

impl Want for AlignedQuery {
    fn window(&self) -> (u64, u64) {
        (self.lo, self.hi)
    }

    fn need(&self) -> u64 {
        self.need
    }

    /// `size + align - 1` free indices hold an aligned fit wherever they
    /// start; a tight range (`need == size`) may not.
    fn promised(&self) -> bool {
        self.roomy()
    }

    /// The lowest (or, with `REV`, highest) aligned start of a fit in the
    /// free range `start..=end`, clipped to the window.
    fn fit<const REV: bool>(&self, start: u64, end: u64) -> Option<u64> {
        let (s, e) = (start.max(self.lo), end.min(self.hi));
        if s > e || span(s, e) < self.need {
            return None;
        }
        if REV {
            // `span(s, e) >= need >= size`, so this does not underflow `s`.
            let top = e - (self.size - 1);
            let aligned = top - top % self.align;
            (aligned >= s).then_some(aligned)
        } else {
            let aligned = align_up(s, self.align)?;
            let end = aligned.checked_add(self.size - 1)?;
            (end <= e).then_some(aligned)
        }
    }
}

/// Aligned gap search below `root` (shared with the concurrent tree's guards).
#[track_caller]
pub(crate) fn aligned_search(
    root: Option<NodePtr>,
    size: u64,
    align: u64,
    within: &impl RangeBounds<u64>,
    rev: bool,
) -> Option<u64> {
    assert!(size > 0, "maple tree: gap search for size 0");
    assert!(align > 0, "maple tree: gap search with alignment 0");
    let (lo, hi) = query_bounds(within)?;
    let tight = AlignedQuery {
        size,
        align,
        lo,
        hi,
        need: size,
    };
    let roomy = size
        .checked_add(align - 1)
        .and_then(|need| AlignedQuery { need, ..tight }.run(root, rev));
    let Some(found) = roomy else {
        // No roomy range (with `align` 1, none of `size` at all).
        return if align == 1 {
            None
        } else {
            tight.run(root, rev)
        };
    };
    if align == 1 {
        return Some(found);
    }
    // A tight fit beyond `found`, in the search's order, comes first. None
    // lies in `found`'s own free range, whose first (last) aligned fit
    // `found` is, nor overlaps it: the window shrinks to what lies beyond.
    let beyond = if rev {
        found
            .checked_add(size)
            .filter(|&lo| lo <= hi)
            .and_then(|lo| AlignedQuery { lo, ..tight }.run(root, true))
    } else {
        found
            .checked_sub(1)
            .filter(|&hi| hi >= lo)
            .and_then(|hi| AlignedQuery { hi, ..tight }.run(root, false))
    };
    Some(beyond.unwrap_or(found))
}

/// Two paths walking toward each other over the free ranges inside
/// `lo..=hi`, which shrinks past every range handed out (as the entry
/// iterators do), so the two ends never hand out the same range.
#[derive(Clone)]
struct RawGaps {
    front: Path,
    back: Path,
    lo: u64,
    hi: u64,
    front_started: bool,
    back_started: bool,
    /// The tree is empty: the whole window is one gap, not yet handed out.
    whole: bool,
    done: bool,
}

impl RawGaps {
    fn new((root, height): (Option<NodePtr>, usize), window: Option<(u64, u64)>) -> RawGaps {
        let (lo, hi) = window.unwrap_or((0, 0));
        let mut g = RawGaps {
            front: Path::new(),
            back: Path::new(),
            lo,
            hi,
            front_started: false,
            back_started: false,
            whole: window.is_some() && root.is_none(),
            done: window.is_none() || root.is_none(),
        };
        if !g.done {
            g.front.descend(root, height, lo);
            g.back.descend(root, height, hi);
        }
        g
    }

    fn whole(&mut self) -> Option<RangeInclusive<u64>> {
        let whole = core::mem::take(&mut self.whole);
        whole.then_some(self.lo..=self.hi)
    }

    fn next(&mut self) -> Option<RangeInclusive<u64>> {
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
            if !snap.is_present(leaf.idx) {
                let end = snap.slot_end(leaf.idx, leaf.max).min(self.hi);
                let start = start.max(self.lo);
                if end >= self.hi {
                    self.done = true;
                } else {
                    self.lo = end + 1;
                }
                return Some(start..=end);
            }
        }
        self.whole()
    }

    fn next_back(&mut self) -> Option<RangeInclusive<u64>> {
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
            if !snap.is_present(leaf.idx) {
                let start = snap.slot_start(leaf.idx, leaf.min).max(self.lo);
                let end = end.min(self.hi);
                if start <= self.lo {
                    self.done = true;
                } else {
                    self.hi = start - 1;
                }
                return Some(start..=end);
            }
        }
        self.whole()
    }
}

/// The free ranges inside a window, in order, clipped to it; from
/// [`MapleTree::gaps`].
pub struct Gaps<'a, V> {
    raw: RawGaps,
    _tree: PhantomData<&'a MapleTree<V>>,
}

/// The free ranges left, as a list.
impl<V> fmt::Debug for Gaps<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// As for [`Iter`](crate::Iter): the copy goes on independently.
impl<V> Clone for Gaps<'_, V> {
    fn clone(&self) -> Self {
        Gaps {
            raw: self.raw.clone(),
            _tree: PhantomData,
        }
    }
}

impl<V> Gaps<'_, V> {
    #[track_caller]
    pub(crate) fn new(top: (Option<NodePtr>, usize), within: &impl RangeBounds<u64>) -> Self {
        Gaps {
            raw: RawGaps::new(top, query_bounds(within)),
            _tree: PhantomData,
        }
    }
}

impl<V> Iterator for Gaps<'_, V> {
    type Item = RangeInclusive<u64>;

    #[inline]
    fn next(&mut self) -> Option<RangeInclusive<u64>> {
        self.raw.next()
    }
}

impl<V> DoubleEndedIterator for Gaps<'_, V> {
    #[inline]
    fn next_back(&mut self) -> Option<RangeInclusive<u64>> {
        self.raw.next_back()
    }
}

impl<V> FusedIterator for Gaps<'_, V> {}

#[cfg(feature = "std")]
mod concurrent {
    use super::{aligned_search, Gaps};
    use crate::error::NoSpace;
    use crate::rcu::{release_no_space, ReadGuard, WriteGuard};
    use crate::rcu_storage::Storage;
    use core::ops::RangeBounds;

    /// The gap searches both guards have, over their `top()` (the tree as
    /// last published, or the writer's own).
    macro_rules! gap_api {
        () => {
            /// As [`MapleTree::gaps`](crate::MapleTree::gaps), against the
            /// tree as the guard sees it.
            ///
            /// ```
            /// let tree = maple_tree::RcuMapleTree::new();
            /// tree.write().insert(10..20, 1u32);
            /// assert_eq!(tree.read().gaps(..30).collect::<Vec<_>>(), [0..=9, 20..=29]);
            /// ```
            ///
            /// # Panics
            /// If `within` is reversed.
            #[track_caller]
            pub fn gaps(&self, within: impl RangeBounds<u64>) -> Gaps<'_, V> {
                Gaps::new(self.top(), &within)
            }

            /// As [`MapleTree::find_gap_aligned`](crate::MapleTree::find_gap_aligned),
            /// against the published tree.
            ///
            /// # Panics
            /// If `size` or `align` is 0, or `within` is reversed.
            #[track_caller]
            pub fn find_gap_aligned(
                &self,
                size: u64,
                align: u64,
                within: impl RangeBounds<u64>,
            ) -> Option<u64> {
                aligned_search(self.top().0, size, align, &within, false)
            }

            /// As [`MapleTree::find_gap_aligned_rev`](crate::MapleTree::find_gap_aligned_rev),
            /// against the published tree.
            ///
            /// # Panics
            /// If `size` or `align` is 0, or `within` is reversed.
            #[track_caller]
            pub fn find_gap_aligned_rev(
                &self,
                size: u64,
                align: u64,
                within: impl RangeBounds<u64>,
            ) -> Option<u64> {
                aligned_search(self.top().0, size, align, &within, true)
            }
        };
    }

    impl<V, S: Storage<V>> ReadGuard<'_, V, S> {
        gap_api!();
    }

    impl<V, S: Storage<V>> WriteGuard<'_, V, S> {
        gap_api!();

        /// As [`MapleTree::alloc_aligned`](crate::MapleTree::alloc_aligned).
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new_alloc();
        /// assert_eq!(tree.write().alloc_aligned(16, 64, 1.., 'a'), Ok(64));
        /// assert_eq!(tree.read().get(70), Some(&'a'));
        /// ```
        ///
        /// # Panics
        /// If `size` or `align` is 0, or `within` is reversed.
        #[track_caller]
        pub fn alloc_aligned(
            &mut self,
            size: u64,
            align: u64,
            within: impl RangeBounds<u64>,
            value: V,
        ) -> Result<u64, NoSpace<V>> {
            let found = self.find_gap_aligned(size, align, within);
            self.write(|t, spares| t.store_found(found, size, S::hold_value(spares, value)))
                .map_err(release_no_space::<V, S>)
        }

        /// As [`MapleTree::alloc_aligned_rev`](crate::MapleTree::alloc_aligned_rev).
        ///
        /// # Panics
        /// If `size` or `align` is 0, or `within` is reversed.
        #[track_caller]
        pub fn alloc_aligned_rev(
            &mut self,
            size: u64,
            align: u64,
            within: impl RangeBounds<u64>,
            value: V,
        ) -> Result<u64, NoSpace<V>> {
            let found = self.find_gap_aligned_rev(size, align, within);
            self.write(|t, spares| t.store_found(found, size, S::hold_value(spares, value)))
                .map_err(release_no_space::<V, S>)
        }
    }
}
