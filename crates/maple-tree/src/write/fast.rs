//! The one-leaf write paths: exact fit, append (`mas_wr_append`), and the
//! leaf splice, in place or into a copy of the leaf.
//!
//! Exact fit replaces one slot word; append writes the new slots past the
//! leaf's last one and then publishes them with one header store. The
//! in-place splice moves slots inside the leaf (and a leaf it overflows is
//! first split in place, its parent taking the new half), so it is used
//! only outside RCU mode; there, the copying splice writes the leaf's new
//! contents into a new leaf and links it with one pointer store. All of
//! them keep the path valid but the appending split, which leaves it to be
//! walked again.

use super::split::{kept_values, Split};
use crate::displaced::Displace;
use crate::gap::{beside, gap_after, leaf_gap};
use crate::node::{span, value_word, Kind, NodePtr, Word, LEAF_SLOTS};
use crate::tree::MapleTree;
use crate::walk::{Level, Path};

impl<V> MapleTree<V> {
    /// The range is exactly the slot `path` leads to.
    pub(super) fn store_exact<D: Displace<V>>(&mut self, path: &Path, value: V, displaced: &mut D) {
        let leaf = *path.leaf();
        let (node, i) = (leaf.node, leaf.idx);
        let word = value_word(value);
        if node.is_present(i) {
            // SAFETY: a leaf of this tree, whose values are `V`s, written
            // under `&mut self`; the exact-fit path is not taken in RCU mode.
            let old = unsafe { node.take_value::<V>(i) };
            node.set_word(i, word);
            node.set_present_bits(node.present_bits() | 1 << i);
            displaced.displace(leaf.start()..=leaf.end(), old);
        } else {
            node.set_word(i, word);
            node.set_present_bits(node.present_bits() | 1 << i);
            self.entries_added(1);
            if self.records_leaf_gaps() {
                self.free_run_shrank(path, &leaf, span(leaf.start(), leaf.end()), 0, || {
                    beside(&leaf)
                });
            }
        }
        self.count_path(|p| &mut p.exact_fit);
    }

    /// The range lies inside the absent last slot of the leaf, which has room
    /// for the extra slots.
    pub(super) fn store_append(&mut self, path: &Path, first: u64, last: u64, value: V) {
        let leaf = *path.leaf();
        let (node, i) = (leaf.node, leaf.idx);
        let (start, end) = (leaf.start(), leaf.end());
        let word = value_word(value);
        let mut bits = node.present_bits();
        let mut count = node.count();
        // Slot i stays absent before `first` (if anything is left of it there);
        // the value comes next; the rest of the old range stays absent.
        let at = if first > start { i + 1 } else { i };
        node.set_word(at, word);
        bits |= 1 << at;
        if at > i {
            count += 1;
        }
        if last < end {
            count += 1;
            node.set_pivot(at, last);
        }
        if at > i {
            node.set_pivot(i, first - 1);
        }
        // One store publishes the new slots to concurrent readers.
        node.publish_leaf(count, bits);
        self.entries_added(1);
        self.count_path(|p| &mut p.append);
        if self.records_leaf_gaps() {
            // The free range `start..=end` became what is left of it before
            // and after the value; the slots before it are as they were.
            let mut largest_remnant = 0;
            if at > i {
                largest_remnant = span(start, first - 1);
            }
            if last < end {
                largest_remnant = largest_remnant.max(span(last + 1, end));
            }
            let old = span(start, end);
            self.free_run_shrank(path, &leaf, old, largest_remnant, || start - leaf.min);
        }
    }

    /// The range lies inside the absent last slot of the tree's last leaf,
    /// which is too full for an append, and the leaf is the root or its
    /// parent has room for one more child.
    ///
    /// The leaf keeps its slots: only its absent last slot is cut short
    /// before `first` (or dropped, when the range starts with it). A new
    /// leaf holds the value and what is left of the absent range after it,
    /// and becomes the parent's last child (under a new root of two
    /// children when the leaf was the root). Nothing is copied, and a tree
    /// filled in ascending order keeps full leaves, as the kernel's split of
    /// a right-most node does. The new leaf may be short: the last node of a
    /// level is exempt from the minimum fill.
    pub(super) fn store_append_split(&mut self, path: &mut Path, first: u64, last: u64, value: V) {
        let leaf = *path.leaf();
        debug_assert!(leaf.max == u64::MAX && leaf.idx + 1 == leaf.node.count());
        // Taken before anything changes: the tree is untouched if it fails.
        let right = self.pool_mut().alloc_or_abort(Kind::Leaf);
        let new_root = (self.height() == 1).then(|| {
            let kind = self.internal_kind();
            self.pool_mut().alloc_or_abort(kind)
        });
        right.set_leaf_word(0, value_word(value));
        let right_count = if last < u64::MAX {
            right.set_pivot(0, last);
            2
        } else {
            1
        };
        right.publish_leaf(right_count, 1);

        let start = leaf.start();
        let left_max = if first > start {
            // The absent last slot now ends at `first - 1`: the leaf's end,
            // which its parent's pivot records.
            first - 1
        } else {
            // The range starts with the absent slot: the leaf ends before it.
            // The slot before it holds a value (absent slots never touch).
            leaf.node.set_count(leaf.idx);
            start - 1
        };
        let (parent, at) = match new_root {
            Some(root) => {
                root.set_child(0, leaf.node);
                (root, 0)
            }
            None => {
                let up = path.lv[1];
                debug_assert!(up.max == u64::MAX && up.idx + 1 == up.node.count());
                debug_assert!(up.node.count() < up.node.kind().capacity());
                (up.node, up.idx)
            }
        };
        parent.set_pivot(at, left_max);
        parent.set_child(at + 1, right);
        if self.is_alloc() {
            parent.set_gap(at, crate::gap::leaf_gap(leaf.node, leaf.min, left_max));
            parent.set_gap(at + 1, crate::gap::leaf_gap(right, first, u64::MAX));
        }
        parent.set_count(at + 2);
        if let Some(root) = new_root {
            self.set_top(Some(root), 2);
        }
        self.entries_added(1);
        self.count_path(|p| &mut p.split);
        if self.is_alloc() && new_root.is_none() {
            self.update_gaps(path, 2, crate::gap::node_gap(parent));
        }
        // The leaf level and its parent's slot no longer match the path (nor
        // its height, after a new root).
        path.low = 2;
    }

    /// Whether the tree records its leaves' largest gaps: an allocation tree
    /// whose root is not a leaf.
    #[inline(always)]
    fn records_leaf_gaps(&self) -> bool {
        self.is_alloc() && self.height() >= 2
    }

    /// After a free range of `old` indices in the leaf `path` leads to became
    /// free runs the largest of which holds `new` (0: none), records the
    /// leaf's new largest gap in the levels above, reading the leaf's other
    /// slots only when `beside`, a bound on their gaps, does not settle it
    /// (only where [`records_leaf_gaps`](Self::records_leaf_gaps)).
    #[inline(always)]
    fn free_run_shrank(
        &mut self,
        path: &Path,
        leaf: &Level,
        old: u64,
        new: u64,
        beside: impl FnOnce() -> u64,
    ) {
        let up = path.lv[1];
        let gap = gap_after(up.node.gap(up.idx), old, new, beside, || {
            leaf_gap(leaf.node, leaf.min, leaf.max)
        });
        self.update_gaps(path, 1, gap);
    }

    /// After an in-place change of the leaf `path` leads to, records its new
    /// largest gap in the levels above (allocation trees only).
    pub(crate) fn refresh_leaf_gap(&mut self, path: &Path) {
        if !self.records_leaf_gaps() {
            return;
        }
        let leaf = path.leaf();
        let gap = crate::gap::leaf_gap(leaf.node, leaf.min, leaf.max);
        self.update_gaps(path, 1, gap);
    }
}

/// What goes into one new slot of an in-place leaf rewrite. A value
/// piece's number less one is its place in [`Pieces::words`].
#[derive(Clone, Copy, PartialEq)]
enum Piece {
    Absent = 0,
    /// The stored value.
    New = 1,
    /// The part of the cut entry left of the range.
    Left = 2,
    /// The part of the cut entry right of the range.
    Right = 3,
}

/// The value words a leaf splice writes: the stored value and the parts of
/// the entries it cuts, made (by `split`) before anything changes.
struct Pieces {
    /// The words of [`Piece::New`], [`Piece::Left`] and [`Piece::Right`],
    /// in that order; a piece the splice does not place is left
    /// uninitialised (the plan places a piece only where it was made).
    words: [Word; 3],
    /// How many of them there are: the entries the splice adds.
    made: usize,
    /// The leaf slots (a bit each) whose value a part keeps
    /// ([`Split::MOVES`]): their word is copied into the part, and the
    /// value is not displaced.
    kept: u32,
    /// Which words hold a piece (bit `k` for `words[k]`), for the checks
    /// of debug builds: a word placed twice, or one never made, would be
    /// a value owned twice or read uninitialised.
    #[cfg(debug_assertions)]
    made_bits: u8,
}

impl Pieces {
    /// The pieces of `splice` storing `value` over `first..=last` in
    /// `leaf`: the part of the entry it cuts at each end gets
    /// `split.part(&old, part)`, or keeps the entry's value.
    #[inline(always)]
    fn make<V, S>(
        leaf: &Level,
        splice: &Splice,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
    ) -> Self
    where
        S: Split<V>,
    {
        let node = leaf.node;
        let (s, e) = (splice.start, splice.end);
        let (a, b) = (splice.a, splice.b);
        let left_cut = first > s && node.is_present(a);
        let right_cut = last < e && node.is_present(b);
        let (left_keeps, right_keeps) = kept_values::<V, S>(left_cut, right_cut, a == b);
        // The parts to make stay owned values until both exist: if the
        // second `part` panics, the first is dropped, not leaked.
        let left = (left_cut && !left_keeps).then(|| {
            // SAFETY: a leaf of this tree, whose values are `V`s; the
            // reference ends with the call.
            split.part(unsafe { node.value::<V>(a) }, s..=first - 1)
        });
        let right = (right_cut && !right_keeps).then(|| {
            // SAFETY: as above.
            split.part(unsafe { node.value::<V>(b) }, last + 1..=e)
        });
        // No user code runs from here on.
        let made = left_cut as usize + right_cut as usize + value.is_some() as usize;
        #[cfg(debug_assertions)]
        let made_bits = value.is_some() as u8 | (left_cut as u8) << 1 | (right_cut as u8) << 2;
        let word = |v: Option<V>| v.map_or(Word::uninit(), value_word);
        let piece = |v: Option<V>, keeps: bool, slot: usize| {
            if keeps {
                node.leaf_word(slot)
            } else {
                word(v)
            }
        };
        Pieces {
            words: [
                word(value),
                piece(left, left_keeps, a),
                piece(right, right_keeps, b),
            ],
            made,
            kept: (left_keeps as u32) << a | (right_keeps as u32) << b,
            #[cfg(debug_assertions)]
            made_bits,
        }
    }

    /// Writes the splice's new slots `from..from + n` into leaf `node`:
    /// their pivots (but the leaf's last) and their words, each piece moved
    /// into its slot. Returns their present bits.
    #[inline(always)]
    fn write(&self, node: NodePtr, splice: &Splice) -> u32 {
        let mut bits = 0;
        #[cfg(debug_assertions)]
        let mut placed = 0u8;
        for (k, &(end, p)) in (splice.from..).zip(&splice.items[..splice.n]) {
            if k + 1 < splice.new_count {
                node.set_pivot(k, end);
            }
            if p != Piece::Absent {
                #[cfg(debug_assertions)]
                {
                    let bit = 1u8 << (p as usize - 1);
                    assert!(
                        self.made_bits & bit != 0 && placed & bit == 0,
                        "maple tree: a splice places a piece it did not make, or twice"
                    );
                    placed |= bit;
                }
                // SAFETY: the plan places each piece once, and only one
                // that `make` made: the word encodes a `V` (the new value
                // or a split piece), which moves into the slot.
                unsafe { node.set_value_word(k, self.words[p as usize - 1]) };
                bits |= 1 << k;
            }
        }
        #[cfg(debug_assertions)]
        assert_eq!(
            placed, self.made_bits,
            "maple tree: a splice drops a piece it made"
        );
        bits
    }
}

/// Which edge of its leaf a splice leaves a new absent slot at, where the
/// neighbouring leaf's slot beside it may be absent too.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Edge {
    /// Neither: the splice touches no neighbour.
    Inside,
    /// Slot 0, which held a value, becomes absent.
    Left,
    /// The last slot, which held a value, becomes absent.
    Right,
}

/// An in-place rewrite of one leaf (the kernel's node store), worked out
/// before anything changes: slots `from..=to` are replaced by `items[..n]`,
/// of which the entries `a..=b` (`start..=end`) are what the store covers.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Splice {
    a: usize,
    b: usize,
    start: u64,
    end: u64,
    from: usize,
    to: usize,
    items: [(u64, Piece); 3],
    n: usize,
    new_count: usize,
    edge: Edge,
    /// The rewritten leaf falls under its minimum (it is not exempt).
    short: bool,
}

impl Splice {
    /// Whether the rewritten leaf fits one node and keeps to itself: the
    /// splice can be done as it is.
    #[inline(always)]
    pub(super) const fn plain(&self) -> bool {
        self.new_count <= LEAF_SLOTS && matches!(self.edge, Edge::Inside) && !self.short
    }

    /// The edge of the leaf the splice leaves a new absent slot at.
    pub(super) const fn edge(&self) -> Edge {
        self.edge
    }

    /// The leaf's slot count after the splice.
    pub(super) const fn new_count(&self) -> usize {
        self.new_count
    }

    /// Whether the splice leaves its leaf under the minimum (it is not
    /// exempt).
    pub(super) const fn short(&self) -> bool {
        self.short
    }

    /// Where to cut a leaf of `count` slots that this splice overflows, so
    /// that the splice then fits the half holding it: a slot `m`, the
    /// halves being slots `..m` and `m..`, and whether the splice lands in
    /// the right half. The rewritten slots and the neighbours the splice
    /// looked at (`from - 1` and `to + 1`) stay inside that half and off its
    /// cut edge, so the splice worked out again on the half is this one,
    /// shifted. Both halves keep the minimum fill, except the right one at
    /// the right edge of the tree (`last_leaf`), where the last node of a
    /// level is exempt. Of the cuts that do, the most even one; at the right
    /// edge the one that leaves the left half fullest, as a rebuild packs
    /// there, so that stores in ascending order leave full leaves behind.
    /// `None` if there is none.
    pub(super) fn split_point(&self, count: usize, last_leaf: bool) -> Option<(usize, bool)> {
        let grow = self.new_count - count;
        let min = Kind::Leaf.min_slots();
        let right_min = if last_leaf { 1 } else { min };
        // The cuts allowed, for each side the splice may land in: both
        // bounds come from the halves' sizes (at most a node, at least the
        // minimum) and from keeping the splice off the cut. The halves are
        // most even (or, at the right edge, the left one fullest) at one
        // cut; the nearest allowed one is the best.
        let (want_left, want_right) = if last_leaf {
            (usize::MAX, usize::MAX)
        } else {
            ((count - grow) / 2, (count + grow) / 2)
        };
        let in_left = cut_near(
            (self.to + 2).max(min.saturating_sub(grow)),
            (count - 1)
                .min(LEAF_SLOTS - grow)
                .min(count - right_min.min(count)),
            want_left,
        );
        let in_right = cut_near(
            min.max((count + grow).saturating_sub(LEAF_SLOTS)),
            (self.from.saturating_sub(1)).min((count + grow).saturating_sub(right_min)),
            want_right,
        );
        // How far a cut is from the best: the halves' difference, or at the
        // right edge the room left in the left half.
        let worse = |m: usize, right: bool| {
            let (left_len, right_len) = if right {
                (m, count - m + grow)
            } else {
                (m + grow, count - m)
            };
            if last_leaf {
                LEAF_SLOTS - left_len
            } else {
                left_len.abs_diff(right_len)
            }
        };
        match (in_left, in_right) {
            (Some(l), Some(r)) if worse(r, true) < worse(l, false) => Some((r, true)),
            (Some(l), _) => Some((l, false)),
            (None, Some(r)) => Some((r, true)),
            (None, None) => None,
        }
    }

    /// This splice of a leaf of `count` slots, worked out again for the half
    /// a cut at slot `m` leaves it in (`right`: slots `m..`), where
    /// [`split_point`](Self::split_point) chose the cut: the same slots,
    /// shifted, and the half's count. The neighbours it looked at stay in
    /// the half and off its edge, so nothing else changes, and the half
    /// keeps its minimum.
    fn in_half(&self, (m, right): (usize, bool), count: usize) -> Splice {
        let mut half = *self;
        if right {
            half.a -= m;
            half.b -= m;
            half.from -= m;
            half.to -= m;
            half.new_count -= m;
        } else {
            half.new_count -= count - m;
        }
        half.short = false;
        half
    }
}

/// The cut of `lo..=hi` nearest `want`; `None` when there is none (a cut
/// at slot 0 leaves the left half empty).
#[inline(always)]
fn cut_near(lo: usize, hi: usize, want: usize) -> Option<usize> {
    (lo != 0 && lo <= hi).then(|| want.clamp(lo, hi))
}

impl<V> MapleTree<V> {
    /// Whether the store of `first..=last` (a value when `has_value`) can
    /// rewrite the leaf `path` leads to in place: it stays inside the leaf,
    /// no absent range reaches the leaf's edge where it would have to merge
    /// with a neighbour's, and the leaf does not fall under its minimum. The
    /// leaf may overflow, or a new absent slot may reach its edge
    /// ([`Splice::plain`] says neither does): the caller then splits the
    /// leaf first or moves its boundary after
    /// ([`store_hard_splice`](Self::store_hard_splice)), or rebuilds.
    /// `(s, e)` are the bounds of the path's leaf slot, as the walk found
    /// them. Changes nothing.
    #[inline(always)]
    pub(super) fn plan_splice(
        &self,
        path: &Path,
        (s, mut e): (u64, u64),
        first: u64,
        last: u64,
        has_value: bool,
    ) -> Option<Splice> {
        let leaf = *path.leaf();
        let node = leaf.node;
        let count = node.count();
        if last > leaf.max {
            return None;
        }
        // Slots a..=b are covered by the store; `s..=e` are slot a's bounds.
        let a = leaf.idx;
        debug_assert_eq!((s, e), (leaf.start(), leaf.end()));
        let mut b = a;
        // Ends at the last slot at the latest: it ends at `leaf.max`.
        while e < last {
            b += 1;
            e = node.slot_end(b, leaf.max);
        }
        let mut items = [(0u64, Piece::Absent); 3];
        let n = if !has_value && first == s && last == e {
            // Whole slots become absent (an erase): one absent slot, as
            // the build below would give, without building the pieces.
            items[0] = (e, Piece::Absent);
            1
        } else {
            // The new slots, before merging absent runs.
            let mut mid = [(0u64, Piece::Absent); 3];
            let mut m = 0;
            if first > s {
                let left = if node.is_present(a) {
                    Piece::Left
                } else {
                    Piece::Absent
                };
                mid[m] = (first - 1, left);
                m += 1;
            }
            mid[m] = (last, if has_value { Piece::New } else { Piece::Absent });
            m += 1;
            if last < e {
                let right = if node.is_present(b) {
                    Piece::Right
                } else {
                    Piece::Absent
                };
                mid[m] = (e, right);
                m += 1;
            }
            // Merge absent runs.
            let mut n = 0;
            for &(end, p) in &mid[..m] {
                if p == Piece::Absent && n > 0 && items[n - 1].1 == Piece::Absent {
                    items[n - 1].0 = end;
                } else {
                    items[n] = (end, p);
                    n += 1;
                }
            }
            n
        };
        // Absorb absent neighbours.
        let (mut from, mut to) = (a, b);
        if items[0].1 == Piece::Absent && from > 0 && !node.is_present(from - 1) {
            from -= 1;
        }
        if items[n - 1].1 == Piece::Absent && to + 1 < count && !node.is_present(to + 1) {
            to += 1;
            // `slot_end`, with the count at hand.
            items[n - 1].0 = if to + 1 == count {
                leaf.max
            } else {
                node.pivot(to)
            };
        }
        // An absent slot at the leaf's edge might meet an absent slot of the
        // neighbouring leaf, unless it replaces an absent edge slot: that
        // one's neighbour holds a value (no two absent slots sit side by
        // side, across leaves too), so only a value's slot turning absent
        // at the edge needs the neighbour (`store_hard_splice`).
        let left = from == 0 && items[0].1 == Piece::Absent && leaf.min > 0 && node.is_present(0);
        let right = to + 1 == count
            && items[n - 1].1 == Piece::Absent
            && leaf.max < u64::MAX
            && node.is_present(to);
        let edge = match (left, right) {
            (false, false) => Edge::Inside,
            (true, false) => Edge::Left,
            (false, true) => Edge::Right,
            (true, true) => return None,
        };
        let new_count = count - (to - from + 1) + n;
        // A root leaf left with one absent slot is an empty tree: edit.rs frees it.
        if new_count == 1 && items[0].1 == Piece::Absent {
            return None;
        }
        let exempt = self.height() == 1 || leaf.max == u64::MAX;
        let short = new_count < Kind::Leaf.min_slots() && !exempt;

        Some(Splice {
            a,
            b,
            start: s,
            end: e,
            from,
            to,
            items,
            n,
            new_count,
            edge,
            short,
        })
    }

    /// Carries out `splice` (from [`plan_splice`](Self::plan_splice) for the
    /// same store, with nothing changed in between).
    ///
    /// Inlined into both callers: as a call of its own, the store path of
    /// `remove` stopped being inlined too (about 85 instructions per
    /// `erase`, callgrind).
    #[inline(always)]
    pub(super) fn store_splice<S, D>(
        &mut self,
        path: &Path,
        splice: &Splice,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: Split<V>,
        D: Displace<V>,
    {
        let Splice {
            a,
            b,
            from,
            to,
            n,
            new_count,
            ..
        } = *splice;
        let leaf = *path.leaf();
        let node = leaf.node;
        let count = node.count();
        // Make the pieces before changing anything (a panicking split
        // leaves the tree as it was).
        let pieces = Pieces::make(&leaf, splice, (first, last), value, split);
        for i in a..=b {
            if node.is_present(i) {
                self.entries_removed(1);
                if pieces.kept >> i & 1 != 0 {
                    // Its value lives on in a part; the slot is rewritten
                    // below, its bit rebuilt.
                    continue;
                }
                let range = node.slot_start(i, leaf.min)..=node.slot_end(i, leaf.max);
                // SAFETY: a leaf of this tree, whose values are `V`s, written
                // under `&mut self`; the in-leaf splice is not taken in RCU
                // mode.
                let old = unsafe { node.take_value::<V>(i) };
                displaced.displace(range, old);
            }
        }

        // The slots after the rewrite move as they are, in one `memmove`
        // (the covered slots' values were taken above).
        let tail_len = count - to - 1;
        let tail_bits = u32::from(node.present_bits()) >> (to + 1);
        // SAFETY: slots `to + 1..count` are the leaf's last; they end at
        // `from + n + tail_len = new_count <= LEAF_SLOTS`. Every slot they
        // leave behind is either overwritten below (`from..from + n`) or
        // lies past the new count, and the bits are rebuilt from scratch.
        unsafe { node.move_leaf_tail(to + 1, from + n, tail_len) };
        let mut bits = pieces.write(node, splice);
        bits |= u32::from(node.present_bits()) & ((1u32 << from) - 1);
        bits |= tail_bits << (from + n);
        node.publish_leaf(new_count, bits as u16);
        self.entries_added(pieces.made);
        self.refresh_leaf_gap(path);
    }

    /// Carries out a [`plain`](Splice::plain) `splice` (from
    /// [`plan_splice`](Self::plan_splice) for the same store) with readers
    /// about (RCU mode): the leaf's new contents are written into a new
    /// leaf, which one pointer store puts in the old one's place, as the
    /// kernel's node store does in RCU mode. The old leaf and the values
    /// the store removes wait in the limbo for the readers that may still
    /// see them.
    ///
    /// This is the work of a rebuild of one leaf without the rebuild's
    /// generality: the slots before and after the rewrite are copied as
    /// they are, and nothing above the leaf but its parent's child pointer
    /// (and recorded gaps) changes.
    pub(super) fn store_splice_copy<S>(
        &mut self,
        path: &mut Path,
        splice: &Splice,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
    ) where
        S: Split<V>,
    {
        debug_assert!(splice.plain());
        let Splice {
            a,
            b,
            from,
            to,
            n,
            new_count,
            ..
        } = *splice;
        let leaf = *path.leaf();
        let old = leaf.node;
        let count = old.count();
        // Made before anything changes: a panicking split leaves the tree
        // as it was.
        let pieces = Pieces::make(&leaf, splice, (first, last), value, split);
        let new = self.pool_mut().alloc_or_abort(Kind::Leaf);
        // The old leaf keeps the words copied out of it: this tree never
        // reads it as a whole again, only readers that started before the
        // new leaf is linked do, and its memory is freed without dropping
        // them.
        // SAFETY: two distinct leaves; slots `..from` of the old one land
        // at `..from` of the new one.
        unsafe { old.copy_leaf_slots(0, new, 0, from) };
        if from > 0 {
            // Slot `from - 1` is not the old leaf's last: its end is a pivot.
            new.set_pivot(from - 1, old.pivot(from - 1));
        }
        let tail_len = count - to - 1;
        // SAFETY: two distinct leaves; slots `to + 1..count` of the old one
        // land at `from + n..new_count` of the new one, and `new_count <=
        // LEAF_SLOTS` (the splice is plain).
        unsafe { old.copy_leaf_slots(to + 1, new, from + n, tail_len) };
        let old_bits = u32::from(old.present_bits());
        let mut bits = old_bits & ((1u32 << from) - 1);
        bits |= (old_bits >> (to + 1)) << (from + n);
        bits |= pieces.write(new, splice);
        new.publish_leaf(new_count, bits as u16);

        // The covered entries' values stay readable in the old leaf until
        // the readers that may hold them have left (a value a part keeps
        // stays in the tree).
        let limbo = self
            .limbo_mut()
            .expect("the copying splice is taken only in RCU mode");
        let mut removed = 0;
        for i in (a..=b).filter(|&i| old.is_present(i)) {
            if pieces.kept >> i & 1 == 0 {
                limbo.push_value::<V>(old.leaf_word(i));
            }
            removed += 1;
        }
        self.entries_removed(removed);
        self.entries_added(pieces.made);

        // Readers find the new leaf from here on.
        path.leaf_mut().node = new;
        if self.height() == 1 {
            self.set_top(Some(new), 1);
        } else {
            let up = path.lv[1];
            up.node.set_child(up.idx, new);
            self.refresh_leaf_gap(path);
        }
        // SAFETY: the new leaf is linked in the old one's place, which
        // nothing links any more and which is retired once; in RCU mode it
        // waits for the readers.
        unsafe { self.retire_node(old) };
        self.count_path(|p| &mut p.node_rewrite);
    }

    /// Carries out a splice that is not [`plain`](Splice::plain): one that
    /// overflows its leaf (split first, under a parent with room), or
    /// leaves it under its minimum or a new absent slot at its edge (settled
    /// with a neighbouring leaf after, `siblings.rs`). `Err(value)`, having changed
    /// nothing, when neither can be done in place: the caller rebuilds.
    #[inline(never)]
    pub(super) fn store_hard_splice<S, D>(
        &mut self,
        path: &mut Path,
        splice: &Splice,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) -> Result<(), Option<V>>
    where
        S: Split<V>,
        D: Displace<V>,
    {
        if splice.new_count > LEAF_SLOTS {
            let Some((at, parent_full)) = self.split_for(path, splice) else {
                return Err(value);
            };
            if parent_full {
                self.split_parent(path);
            }
            let count = path.leaf().node.count();
            self.split_leaf(path, at);
            // `split_point` chose the cut so that the splice fits the half
            // holding it, as the same splice shifted: the walk and slot
            // reads of a second plan are saved (debug builds make one, to
            // check).
            let half = splice.in_half(at, count);
            debug_assert!(
                self.plan_splice(
                    path,
                    (path.leaf().start(), path.leaf().end()),
                    first,
                    last,
                    value.is_some()
                ) == Some(half)
                    && half.plain(),
                "maple tree: a split leaf's half takes the store as worked out for the whole"
            );
            self.store_splice(path, &half, (first, last), value, split, displaced);
            return Ok(());
        }
        let Some(settle) = self.settle_for(path, splice) else {
            return Err(value);
        };
        self.store_splice(path, splice, (first, last), value, split, displaced);
        self.settle(path, settle);
        Ok(())
    }

    /// Where to split the leaf `path` leads to, which `splice` overflows, so
    /// that the splice fits one half ([`Splice::split_point`]), and whether
    /// its parent, full, must split first: only under a parent with room
    /// for one more child, or a full parent (not the root) whose own parent
    /// has room.
    pub(super) fn split_for(&self, path: &Path, splice: &Splice) -> Option<((usize, bool), bool)> {
        if self.height() < 2 || splice.edge != Edge::Inside {
            return None;
        }
        let has_room = |node: NodePtr| node.count() < node.kind().capacity();
        let parent_full = !has_room(path.lv[1].node);
        if parent_full && (self.height() < 3 || !has_room(path.lv[2].node)) {
            return None;
        }
        let leaf = path.leaf();
        let at = splice.split_point(leaf.node.count(), leaf.max == u64::MAX)?;
        Some((at, parent_full))
    }

    /// Splits the full parent of the leaf `path` leads to in place, as
    /// [`split_leaf`](Self::split_leaf) splits a leaf: its
    /// second half of children (with their pivots and gap records) moves to
    /// a new node, which the grandparent (with room) takes right after it.
    /// The path then leads through the half that holds the leaf. The
    /// halves are even, except at the right edge of the tree, where the
    /// new node (the last of its level, exempt from the minimum) takes only
    /// the last child: stores in ascending order leave full nodes behind,
    /// as a rebuild packs them. The levels above keep their gap records
    /// (the larger of the two halves' is the old node's).
    fn split_parent(&mut self, path: &mut Path) {
        let (up, top) = (path.lv[1], path.lv[2]);
        let (parent, grand, g) = (up.node, top.node, top.idx);
        let kind = parent.kind();
        let (count, gcount) = (parent.count(), grand.count());
        debug_assert!(count == kind.capacity() && gcount < kind.capacity());
        let new = self.pool_mut().alloc_or_abort(kind);
        let gaps = self.is_alloc();
        // The new node: children `m..count`, and the pivots between them.
        let m = if up.max == u64::MAX {
            count - 1
        } else {
            count / 2
        };
        for i in m..count {
            new.set_child_of(kind, i - m, parent.child_of(kind, i));
            if gaps {
                new.set_gap(i - m, parent.gap(i));
            }
            if i + 1 < count {
                new.set_pivot(i - m, parent.pivot(i));
            }
        }
        new.publish_count(kind, count - m);
        let cut = parent.pivot(m - 1);
        parent.set_count(m);
        // The grandparent takes it after the old one, its later children
        // (and their pivots and gaps) moving up one slot.
        for k in (g..gcount - 1).rev() {
            grand.set_pivot(k + 1, grand.pivot(k));
        }
        for k in (g + 1..gcount).rev() {
            grand.set_child_of(kind, k + 1, grand.child_of(kind, k));
            if gaps {
                grand.set_gap(k + 1, grand.gap(k));
            }
        }
        grand.set_pivot(g, cut);
        grand.set_child_of(kind, g + 1, new);
        if gaps {
            grand.set_gap(g, crate::gap::node_gap(parent));
            grand.set_gap(g + 1, crate::gap::node_gap(new));
        }
        grand.set_count(gcount + 1);
        self.count_path(|p| &mut p.split);
        if up.idx >= m {
            path.lv[2].idx = g + 1;
            path.lv[1] = Level {
                node: new,
                idx: up.idx - m,
                min: cut + 1,
                max: up.max,
            };
        } else {
            path.lv[1].max = cut;
        }
    }

    /// Splits the leaf `path` leads to at slot `m` in place, as `BTreeMap`
    /// splits a full node: slots `m..` move to a new leaf, which the parent
    /// (with room) takes right after the old one. The path then leads to
    /// the half `right` names, where the store goes
    /// ([`Splice::split_point`] chose `m` so that it fits).
    ///
    /// No value is made, moved out or dropped: the tree is whole after the
    /// split, and the splice's `split` calls and drops come after, as in a
    /// splice of a leaf with room.
    #[inline(always)]
    fn split_leaf(&mut self, path: &mut Path, (m, right): (usize, bool)) {
        let leaf = *path.leaf();
        let up = path.lv[1];
        let (node, parent, j) = (leaf.node, up.node, up.idx);
        let (count, pcount) = (node.count(), parent.count());
        debug_assert!(0 < m && m < count && pcount < parent.kind().capacity());
        // Taken before anything changes: the tree is untouched if it fails.
        let new = self.pool_mut().alloc_or_abort(Kind::Leaf);
        // The new leaf: slots `m..count`, their words moved as they are
        // (each value stays owned by one present slot: the old leaf's count
        // drops below them), and the pivots between them.
        // SAFETY: two distinct leaves; slots `m..count` of the old one fit
        // the new one, whose first slots they become; the old leaf's count
        // drops to `m` below, before anything reads it.
        unsafe { node.copy_leaf_slots(m, new, 0, count - m) };
        let bits = node.present_bits();
        new.publish_leaf(count - m, bits >> m);
        let cut = node.pivot(m - 1);
        node.publish_leaf(m, bits & ((1u16 << m) - 1));
        // The parent takes the new leaf after the old one, in place: its
        // later children (and their pivots and gaps) move up one slot.
        let (gaps, kind) = (self.is_alloc(), parent.kind());
        for k in (j..pcount - 1).rev() {
            parent.set_pivot(k + 1, parent.pivot(k));
        }
        for k in (j + 1..pcount).rev() {
            parent.set_child_of(kind, k + 1, parent.child_of(kind, k));
            if gaps {
                parent.set_gap(k + 1, parent.gap(k));
            }
        }
        parent.set_pivot(j, cut);
        parent.set_child(j + 1, new);
        if gaps {
            // The two gaps' larger one is the old leaf's: the levels above
            // keep their records.
            parent.set_gap(j, crate::gap::leaf_gap(node, leaf.min, cut));
            parent.set_gap(j + 1, crate::gap::leaf_gap(new, cut + 1, leaf.max));
        }
        parent.set_count(pcount + 1);
        self.count_path(|p| &mut p.split);
        // The path now leads to the half that holds the store.
        let (at, half) = if right {
            (
                j + 1,
                Level {
                    node: new,
                    idx: leaf.idx - m,
                    min: cut + 1,
                    max: leaf.max,
                },
            )
        } else {
            (j, Level { max: cut, ..leaf })
        };
        path.lv[1].idx = at;
        *path.leaf_mut() = half;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A splice replacing slots `from..=to` of a leaf of `count` slots and
    /// growing it by `grow`; only what `split_point` reads is meaningful.
    fn splice(count: usize, from: usize, to: usize, grow: usize) -> Splice {
        Splice {
            a: from,
            b: to,
            start: 0,
            end: 0,
            from,
            to,
            items: [(0, Piece::Absent); 3],
            n: to - from + 1 + grow,
            new_count: count + grow,
            edge: Edge::Inside,
            short: false,
        }
    }

    /// `split_point` against its definition, for every overflowing splice
    /// of a leaf: the cut it picks keeps both halves between their minimum
    /// and a node, and the splice with its neighbours inside its half and
    /// off the cut, and no allowed cut is more even (or, at the right edge,
    /// leaves the left half fuller); it finds none only when none is
    /// allowed.
    #[test]
    fn split_point_picks_the_best_allowed_cut() {
        let min = Kind::Leaf.min_slots();
        let mut cuts = 0;
        for count in 1..=LEAF_SLOTS {
            for grow in 1..=2 {
                if count + grow <= LEAF_SLOTS {
                    continue;
                }
                for from in 0..count {
                    for to in from..count {
                        for last_leaf in [false, true] {
                            let s = splice(count, from, to, grow);
                            let right_min = if last_leaf { 1 } else { min };
                            let sizes = |m: usize, right: bool| {
                                if right {
                                    (m, count - m + grow)
                                } else {
                                    (m + grow, count - m)
                                }
                            };
                            let allowed = |m: usize, right: bool| {
                                let (l, r) = sizes(m, right);
                                let off_cut = if right { m < from } else { m >= to + 2 };
                                (1..count).contains(&m)
                                    && off_cut
                                    && (min..=LEAF_SLOTS).contains(&l)
                                    && (right_min..=LEAF_SLOTS).contains(&r)
                            };
                            let worse = |m: usize, right: bool| {
                                let (l, r) = sizes(m, right);
                                if last_leaf {
                                    LEAF_SLOTS - l
                                } else {
                                    l.abs_diff(r)
                                }
                            };
                            let best = (1..count)
                                .flat_map(|m| [(m, false), (m, true)])
                                .filter(|&(m, right)| allowed(m, right))
                                .map(|(m, right)| worse(m, right))
                                .min();
                            let got = s.split_point(count, last_leaf);
                            match (got, best) {
                                (None, None) => {}
                                (Some((m, right)), Some(best)) => {
                                    assert!(allowed(m, right), "{count} {from}..={to} +{grow}");
                                    assert_eq!(worse(m, right), best, "{count} {from}..={to} +{grow}");
                                    cuts += 1;
                                }
                                _ => panic!("{count} {from}..={to} +{grow} {last_leaf}: {got:?}, best {best:?}"),
                            }
                        }
                    }
                }
            }
        }
        assert!(cuts > 100);
    }
}
