//! Gap tracking and gap search.
//!
//! In an allocation tree every internal node records, for each child, the
//! largest run of absent indices inside that child. Because two absent slots
//! never sit side by side (not even across leaves), every maximal free range
//! is exactly one absent slot, so these records are exact: a child whose
//! record is below the requested size cannot hold a fit, and a child lying
//! wholly inside the search window whose record is big enough certainly does.
//!
//! # The search never rescans
//!
//! Take a search for the highest fit (`mas_empty_area_rev`; the lowest fit
//! is the mirror image). The window's top end is the *near* edge, its bottom
//! end the *far* edge. One walk goes down from the root along the near edge,
//! to the leaf slot holding it:
//!
//! * While the window lies inside one child, that child is the only place
//!   the answer can be: if its record is too small, there is no fit at all.
//! * Once the window spans several children, the near-edge child may hold
//!   the answer, but its big gap may also lie above the window. So the walk
//!   notes the level (the node and its near-edge child) before going down:
//!   the siblings on the far side may hold the answer instead. It only
//!   notes them: most searches end at the near edge, and never look at
//!   them.
//! * At the leaf the walk looks at the absent slots below the near edge. If
//!   none fits, it turns to the noted levels, deepest first (a deeper
//!   sibling lies nearer to the edge), and in each to the siblings on the
//!   far side, nearest first, up to the one holding the far edge: the first
//!   whose record fits holds the answer. A sibling wholly inside the window
//!   certainly holds a fit; one crossing the far edge (only at the node
//!   where the window splits) may not. Then a descent that takes the
//!   highest child whose record fits at every level, with no window to
//!   check (or, for a sibling crossing the far edge, a walk along that edge,
//!   which has no alternative left and so never turns back either).
//!
//! So a search costs one walk down plus at most one more; a node's records
//! are read at most once, a noted node's far-side ones only when the walk
//! below it failed, and leaves are scanned over their absent slots only (a
//! bit mask).
//!
//! A tree without gap records (a regular tree) is searched by a plain
//! depth-first scan, which backtracks.
//!
//! # Concurrent writers
//!
//! A reader of the concurrent tree may see a record that a writer is about
//! to change, so a descent that a record promised may come up empty. The
//! search then starts over with the depth-first scan, which needs no promise
//! and, like every read, sees each node as it was at some moment.
//!
//! Sizes are counted saturating: the whole space, 2^64 indices, counts as
//! `u64::MAX`, which is still at least any size that can be asked for.

use crate::node::{span, Kind, NodePtr, Snap};
use crate::walk::{Level, MAX_HEIGHT};
use core::mem::MaybeUninit;

/// Largest absent run in a leaf covering `min..=max`.
///
/// Reads the header once and visits only the absent slots (at most every
/// other one, since a leaf never holds two absent slots side by side).
pub(crate) fn leaf_gap(leaf: NodePtr, min: u64, max: u64) -> u64 {
    let snap = leaf.peek();
    let last = snap.count() - 1;
    let mut absent = !snap.present_bits() & ((1u32 << (last + 1)) - 1) as u16;
    if absent == 0 {
        return 0;
    }
    if last == 0 {
        return span(min, max);
    }
    // The first and last slots end at the node's bounds; the slots between
    // them lie between two pivots.
    let mut gap = 0;
    if absent & 1 != 0 {
        // SAFETY: the leaf is live (it is in the caller's tree), and
        // 0 < last = count - 1 <= capacity - 1: pivot 0 is stored.
        gap = span(min, unsafe { leaf.pivot_unchecked(0) });
    }
    if absent & (1 << last) != 0 {
        // SAFETY: as above; last - 1 < count - 1 <= capacity - 1.
        gap = gap.max(span(unsafe { leaf.pivot_unchecked(last - 1) } + 1, max));
    }
    absent &= !(1 | (1 << last));
    while absent != 0 {
        let i = absent.trailing_zeros() as usize;
        absent &= absent - 1;
        // SAFETY: as above; 0 < i < last, so pivots i - 1 and i (both below
        // count - 1) are stored.
        let (start, end) = unsafe { (leaf.pivot_unchecked(i - 1) + 1, leaf.pivot_unchecked(i)) };
        gap = gap.max(span(start, end));
    }
    gap
}

/// Largest absent run below an internal node of an allocation tree.
pub(crate) fn node_gap(node: NodePtr) -> u64 {
    debug_assert_eq!(node.kind(), Kind::ARange);
    (0..node.count()).map(|i| node.gap(i)).max().unwrap_or(0)
}

/// A node's largest gap after one part of it (a child, or a leaf's run of
/// slots) went from largest gap `old` to `new`, without reading the other
/// parts when that can be helped. `recorded` is the node's largest gap
/// before; `beside` bounds the other parts' gaps from above; `rescan` reads
/// them all.
///
/// A part that grew (or kept its gap) raises the node's gap to its own at
/// most. One that shrank changes nothing if it did not hold the node's gap,
/// and still holds it if it keeps at least what any other part can hold.
/// Only a part that held the gap and shrank below that bound makes the node
/// look at every part. Appending in ascending order (fork, a rebuild)
/// shrinks the free range at the end of the tree by each store: the bound
/// keeps those stores from reading every record on the way up.
#[inline]
pub(crate) fn gap_after(
    recorded: u64,
    old: u64,
    new: u64,
    beside: impl FnOnce() -> u64,
    rescan: impl FnOnce() -> u64,
) -> u64 {
    if new >= old {
        recorded.max(new)
    } else if old < recorded {
        recorded
    } else if new >= beside() {
        new
    } else {
        rescan()
    }
}

/// An upper bound on the largest gap of the slots of `at.node` other than
/// the one `at` takes (children, or a leaf's slots): each lies wholly before
/// that slot or wholly after it, so none holds a longer absent run than the
/// larger of those two stretches of the node's range.
#[inline]
pub(crate) fn beside(at: &Level) -> u64 {
    let before = if at.idx > 0 { at.start() - at.min } else { 0 };
    let after = if at.idx + 1 < at.node.count() {
        at.max - at.end()
    } else {
        0
    };
    before.max(after)
}

/// What a gap search looks for, as the walks below see it: a window, the
/// free indices a range must have for its gap record to be worth a look,
/// and where in a free range the fit starts.
///
/// The walks count on one promise: a free range wholly inside the window
/// with `need` indices holds a fit. Where it breaks, the search starts over
/// with the depth-first scan, so answers never depend on it; a search whose
/// fits can fail even then (the tight pass of an aligned search) says so
/// with `promised` and gets the scan straight away.
pub(crate) trait Want: Copy {
    /// The window `lo..=hi`.
    fn window(&self) -> (u64, u64);
    /// Free indices a range must have (before clipping) to be looked at.
    fn need(&self) -> u64;
    /// Whether every free range inside the window with `need` indices
    /// holds a fit.
    fn promised(&self) -> bool;
    /// The nearest fit (the lowest, or with `REV` the highest start) inside
    /// the free range `start..=end` clipped to the window.
    fn fit<const REV: bool>(&self, start: u64, end: u64) -> Option<u64>;
}

/// An unaligned search: `size` absent indices inside `lo..=hi`.
#[derive(Clone, Copy)]
pub(crate) struct GapQuery {
    pub(crate) size: u64,
    pub(crate) lo: u64,
    pub(crate) hi: u64,
}

impl Want for GapQuery {
    #[inline(always)]
    fn window(&self) -> (u64, u64) {
        (self.lo, self.hi)
    }

    #[inline(always)]
    fn need(&self) -> u64 {
        self.size
    }

    #[inline(always)]
    fn promised(&self) -> bool {
        true
    }

    #[inline(always)]
    fn fit<const REV: bool>(&self, start: u64, end: u64) -> Option<u64> {
        let (s, e) = (start.max(self.lo), end.min(self.hi));
        if s > e || span(s, e) < self.size {
            return None;
        }
        Some(if REV { e - (self.size - 1) } else { s })
    }
}

/// A descent that the gap records promised came up empty: a concurrent
/// writer changed the subtree under the reader.
struct Raced;

/// A fit, no fit, or a broken promise.
type Found = Result<Option<u64>, Raced>;

/// Where a search may go when the near edge fails: child `slot` of the
/// internal node `node`, a sibling on the far side of the near-edge child.
/// Its bounds are pivots except on the far side, where the node's own bound
/// `edge` (its `min` in a top-down search, else its `max`) may be needed.
/// The node is read again when the fallback is taken: an internal node's
/// count never changes while readers can see it, only its child pointers
/// and records do.
#[derive(Clone, Copy)]
struct Fallback {
    node: NodePtr,
    slot: usize,
    edge: u64,
}

/// A level of the near-edge walk whose far-side siblings may hold the
/// answer: the internal node, the near-edge child it took, and the node's
/// bound on the far side (as in [`Fallback`]).
#[derive(Clone, Copy)]
struct Note {
    node: NodePtr,
    near: usize,
    edge: u64,
}

/// The levels a near-edge walk noted, root first. Not initialised up front:
/// a search is a few hundred instructions, and zeroing room for the tallest
/// tree would add a tenth.
struct Notes {
    levels: [MaybeUninit<Note>; MAX_HEIGHT],
    len: usize,
}

impl Notes {
    #[inline(always)]
    fn new() -> Notes {
        Notes {
            levels: [const { MaybeUninit::uninit() }; MAX_HEIGHT],
            len: 0,
        }
    }

    /// Notes the next level down. A walk passes fewer internal nodes than
    /// the tree's height, which never exceeds `MAX_HEIGHT`; a push past
    /// that would mean a broken tree, and panics.
    #[inline(always)]
    fn push(&mut self, note: Note) {
        self.levels[self.len] = MaybeUninit::new(note);
        self.len += 1;
    }

    /// The levels noted, deepest first.
    fn deepest_first(&self) -> impl Iterator<Item = Note> + '_ {
        self.levels[..self.len].iter().rev().map(|note| {
            // SAFETY: `push` wrote every level below `len`.
            unsafe { note.assume_init() }
        })
    }
}

/// The slots of a leaf that hold no value, as bits.
#[inline(always)]
fn absent_bits(leaf: &Snap) -> u32 {
    !u32::from(leaf.present_bits()) & ((1u32 << leaf.count()) - 1)
}

/// Takes the nearest slot of `bits` (the highest with `REV`, else the lowest).
#[inline(always)]
fn take_nearest<const REV: bool>(bits: &mut u32) -> usize {
    let i = if REV {
        31 - bits.leading_zeros()
    } else {
        bits.trailing_zeros()
    } as usize;
    *bits &= !(1 << i);
    i
}

/// The nearest fit for `want` below `root` (the lowest, or with `rev` the
/// highest).
pub(crate) fn search<W: Want>(want: W, root: NodePtr, rev: bool) -> Option<u64> {
    let w = Walk(want);
    if rev {
        w.find::<true>(root)
    } else {
        w.find::<false>(root)
    }
}

/// The walks of one search.
struct Walk<W>(W);

impl<W: Want> Walk<W> {
    #[inline(always)]
    fn find<const REV: bool>(&self, root: NodePtr) -> Option<u64> {
        if self.0.promised() && root.kind() != Kind::Range {
            if let Ok(found) = self.near_edge::<REV>(root) {
                return found;
            }
        }
        self.scan::<REV>(root, 0, u64::MAX)
    }

    /// Whether `s..=e` lies wholly inside the window.
    #[inline(always)]
    fn holds(&self, s: u64, e: u64) -> bool {
        let (lo, hi) = self.0.window();
        lo <= s && e <= hi
    }

    /// The walk along the near edge (see the module docs), from the root of
    /// an allocation tree.
    #[inline]
    fn near_edge<const REV: bool>(&self, root: NodePtr) -> Found {
        let (lo, hi) = self.0.window();
        let need = self.0.need();
        let (mut node, mut min, mut max) = (root, 0, u64::MAX);
        let mut notes = Notes::new();
        loop {
            // No prefetch of the node's other lines (`snap`): the walk reads
            // the header, the pivots up to the edge, one record and one
            // child, and a search at the end of the address space walks the
            // same cached spine every time.
            let n = node.peek();
            if n.is_leaf() {
                if let Some(found) = self.leaf::<REV>(&n, min, max) {
                    return Ok(Some(found));
                }
                break;
            }
            let count = n.count();
            // The child holding the near edge.
            let (j, s, e) = if REV {
                if hi >= max {
                    (count - 1, n.slot_start(count - 1, min), max)
                } else {
                    n.step_rev(hi, min, max)
                }
            } else if lo <= min {
                (0, min, n.slot_end(0, max))
            } else {
                n.step(lo, min, max)
            };
            // With the far edge beyond this child, its far-side siblings
            // may hold the answer if the walk fails below: note the level.
            let far_inside = if REV { s > lo } else { e < hi };
            if far_inside {
                notes.push(Note {
                    node,
                    near: j,
                    edge: if REV { min } else { max },
                });
            }
            if n.gap(j) < need {
                break;
            }
            if self.holds(s, e) {
                return self.inside::<REV>(n.arange_child(j), s, e);
            }
            (node, min, max) = (n.arange_child(j), s, e);
        }
        let Some(f) = self.fallback::<REV>(&notes) else {
            return Ok(None);
        };
        // The slot lies on the far side of the near-edge child, so only
        // its far bound can be the node's.
        let n = f.node.peek();
        let (s, e) = (n.slot_start(f.slot, f.edge), n.slot_end(f.slot, f.edge));
        let child = n.arange_child(f.slot);
        if self.holds(s, e) {
            self.inside::<REV>(child, s, e)
        } else {
            self.far_edge::<REV>(child, s, e)
        }
    }

    /// Where to go when the near edge fails: at the deepest noted level
    /// that has one (it lies nearest to the edge), the nearest sibling on
    /// the far side of the near-edge child whose record fits, looking no
    /// further than the one holding the far edge.
    #[inline(always)]
    fn fallback<const REV: bool>(&self, notes: &Notes) -> Option<Fallback> {
        let (lo, hi) = self.0.window();
        let need = self.0.need();
        for Note { node, near, edge } in notes.deepest_first() {
            // An internal node's count never changes while it is reachable.
            let n = node.peek();
            let count = n.count();
            let mut i = near;
            while if REV { i > 0 } else { i + 1 < count } {
                i = if REV { i - 1 } else { i + 1 };
                if n.gap(i) >= need {
                    return Some(Fallback {
                        node,
                        slot: i,
                        edge,
                    });
                }
                let reaches = if REV {
                    n.slot_start(i, edge) <= lo
                } else {
                    n.slot_end(i, edge) >= hi
                };
                if reaches {
                    break;
                }
            }
        }
        None
    }

    /// The nearest fit in a leaf covering `min..=max`, clipped to the window.
    #[inline(always)]
    fn leaf<const REV: bool>(&self, n: &Snap, min: u64, max: u64) -> Option<u64> {
        let (lo, hi) = self.0.window();
        let mut absent = absent_bits(n);
        while absent != 0 {
            let i = take_nearest::<REV>(&mut absent);
            let (s, e) = (n.slot_start(i, min), n.slot_end(i, max));
            // Slots beyond the near edge are skipped; past the far edge the
            // search is over.
            let (before, past) = if REV {
                (s > hi, e < lo)
            } else {
                (e < lo, s > hi)
            };
            if past {
                return None;
            }
            if before {
                continue;
            }
            if let Some(found) = self.0.fit::<REV>(s, e) {
                return Some(found);
            }
        }
        None
    }

    /// The nearest fit below a child covering `min..=max` that lies wholly
    /// inside the window and whose record fits: take the nearest child whose
    /// record fits at every level, then the nearest absent slot that is big
    /// enough.
    #[inline]
    fn inside<const REV: bool>(&self, mut node: NodePtr, mut min: u64, mut max: u64) -> Found {
        let need = self.0.need();
        loop {
            let n = node.snap();
            let count = n.count();
            if n.is_leaf() {
                let mut absent = absent_bits(&n);
                while absent != 0 {
                    let i = take_nearest::<REV>(&mut absent);
                    let (s, e) = (n.slot_start(i, min), n.slot_end(i, max));
                    if span(s, e) >= need {
                        return self.0.fit::<REV>(s, e).map(Some).ok_or(Raced);
                    }
                }
                return Err(Raced);
            }
            let fits = |&i: &usize| n.gap(i) >= need;
            let i = if REV {
                (0..count).rev().find(fits)
            } else {
                (0..count).find(fits)
            };
            let Some(i) = i else {
                return Err(Raced);
            };
            (node, min, max) = (n.arange_child(i), n.slot_start(i, min), n.slot_end(i, max));
        }
    }

    /// The nearest fit below a child covering `min..=max` that holds the far
    /// edge of the window (and none of the near one): children wholly inside
    /// come first, the one crossing the edge last, so this walk never needs
    /// to turn back.
    fn far_edge<const REV: bool>(&self, mut node: NodePtr, mut min: u64, mut max: u64) -> Found {
        let (lo, hi) = self.0.window();
        let need = self.0.need();
        loop {
            let n = node.snap();
            if n.is_leaf() {
                return Ok(self.leaf::<REV>(&n, min, max));
            }
            let count = n.count();
            let mut i = if REV { count - 1 } else { 0 };
            loop {
                let (s, e) = (n.slot_start(i, min), n.slot_end(i, max));
                let crosses = if REV { s < lo } else { e > hi };
                if n.gap(i) >= need {
                    if !crosses {
                        return self.inside::<REV>(n.arange_child(i), s, e);
                    }
                    (node, min, max) = (n.arange_child(i), s, e);
                    break;
                }
                let last = if REV {
                    s <= lo || i == 0
                } else {
                    e >= hi || i + 1 == count
                };
                if last {
                    return Ok(None);
                }
                i = if REV { i - 1 } else { i + 1 };
            }
        }
    }

    /// Depth-first search of the subtree of `node` (covering `min..=max`,
    /// which overlaps the window), for trees without gap records, searches
    /// without a promise, and after a broken one. Slots are tried from the
    /// window's near end and the scan stops at the first slot past the
    /// other end.
    fn scan<const REV: bool>(&self, node: NodePtr, min: u64, max: u64) -> Option<u64> {
        let (lo, hi) = self.0.window();
        let node = node.snap();
        let count = node.count();
        let kind = node.kind();
        let try_slot = |i: usize, s: u64, e: u64| -> Option<u64> {
            match kind {
                Kind::Leaf if node.is_present(i) => None,
                Kind::Leaf => self.0.fit::<REV>(s, e),
                // A recorded gap is the largest free range of the child;
                // clipping to the window only makes it smaller.
                Kind::ARange if node.gap(i) < self.0.need() => None,
                _ => self.scan::<REV>(node.child(i), s, e),
            }
        };
        if REV {
            let mut i = if hi >= max {
                count - 1
            } else {
                node.slot_of_rev(hi)
            };
            loop {
                let s = node.slot_start(i, min);
                if let Some(found) = try_slot(i, s, node.slot_end(i, max)) {
                    return Some(found);
                }
                if s <= lo || i == 0 {
                    return None;
                }
                i -= 1;
            }
        } else {
            let mut i = if lo <= min { 0 } else { node.slot_of(lo) };
            loop {
                let e = node.slot_end(i, max);
                if let Some(found) = try_slot(i, node.slot_start(i, min), e) {
                    return Some(found);
                }
                if e >= hi || i + 1 == count {
                    return None;
                }
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::gap_after;
    use core::cell::Cell;

    /// Every way one of three parts (gaps 0..=4) can change, with every
    /// valid bound on the other parts: `gap_after` gives the largest gap of
    /// the parts afterwards, and reads them all only when a part that held
    /// the largest gap shrank below what the others may hold.
    #[test]
    fn gap_after_is_the_largest_part_and_rescans_only_when_it_must() {
        for parts in (0..125).map(|n| [n % 5, n / 5 % 5, n / 25]) {
            let recorded = *parts.iter().max().unwrap();
            for k in 0..3 {
                let others = parts.iter().enumerate().filter(|&(i, _)| i != k);
                let others = others.map(|(_, &g)| g).max().unwrap();
                for new in 0..6 {
                    for slack in 0..3 {
                        let bound = others + slack;
                        let rescans = Cell::new(0);
                        let got = gap_after(
                            recorded,
                            parts[k],
                            new,
                            || bound,
                            || {
                                rescans.set(rescans.get() + 1);
                                others.max(new)
                            },
                        );
                        let case = (parts, k, new, bound);
                        assert_eq!(got, others.max(new), "{case:?}");
                        let must = parts[k] == recorded && new < parts[k] && new < bound;
                        assert_eq!(rescans.get(), usize::from(must), "{case:?}");
                    }
                }
            }
        }
    }
}
