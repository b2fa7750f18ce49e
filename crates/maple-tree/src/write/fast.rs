//! The in-place write paths: exact fit, append (`mas_wr_append`), and the in-place
//! leaf splice.
//!
//! Exact fit replaces one slot word; append writes the new slots past the
//! leaf's last one and then publishes them with one header store, so both
//! are safe with concurrent readers. The splice moves slots inside the leaf,
//! so it is used only outside RCU mode. All three keep the path valid.

use crate::displaced::Displace;
use crate::node::{value_word, Kind, LEAF_SLOTS};
use crate::tree::MapleTree;
use crate::walk::Path;
use core::ops::RangeInclusive;

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
            self.refresh_leaf_gap(path);
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
        self.refresh_leaf_gap(path);
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

    /// After an in-place change of the leaf `path` leads to, records its new
    /// largest gap in the levels above (allocation trees only).
    pub(crate) fn refresh_leaf_gap(&mut self, path: &Path) {
        if !self.is_alloc() || self.height() < 2 {
            return;
        }
        let leaf = path.leaf();
        let gap = crate::gap::leaf_gap(leaf.node, leaf.min, leaf.max);
        self.update_gaps(path, 1, gap);
    }
}

/// What goes into one new slot of an in-place leaf rewrite.
#[derive(Clone, Copy, PartialEq)]
enum Piece {
    Absent,
    /// The stored value.
    New,
    /// The part of the cut entry left of the range.
    Left,
    /// The part of the cut entry right of the range.
    Right,
}

/// An in-place rewrite of one leaf (the kernel's node store), worked out
/// before anything changes: slots `from..=to` are replaced by `items[..n]`,
/// of which the entries `a..=b` (`start..=end`) are what the store covers.
#[derive(Clone, Copy)]
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
}

impl<V> MapleTree<V> {
    /// Whether the store of `first..=last` (a value when `has_value`) can
    /// rewrite the leaf `path` leads to in place: it stays inside the leaf,
    /// no absent range reaches the leaf's edge (which would have to merge
    /// with a neighbour's), and the leaf neither overflows nor falls under
    /// its minimum. Changes nothing.
    #[inline(always)]
    pub(super) fn plan_splice(
        &self,
        path: &Path,
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
        // Slots a..=b are covered by the store.
        let a = leaf.idx;
        let mut b = a;
        while b + 1 < count && node.pivot(b) < last {
            b += 1;
        }
        let (s, e) = (node.slot_start(a, leaf.min), node.slot_end(b, leaf.max));
        // The new slots, before merging absent runs.
        let mut mid = [(0u64, Piece::Absent); 3];
        let mut m = 0;
        if first > s {
            mid[m] = (
                first - 1,
                if node.is_present(a) {
                    Piece::Left
                } else {
                    Piece::Absent
                },
            );
            m += 1;
        }
        mid[m] = (last, if has_value { Piece::New } else { Piece::Absent });
        m += 1;
        if last < e {
            mid[m] = (
                e,
                if node.is_present(b) {
                    Piece::Right
                } else {
                    Piece::Absent
                },
            );
            m += 1;
        }
        // Merge absent runs, and absorb absent neighbours.
        let mut items = [(0u64, Piece::Absent); 3];
        let mut n = 0;
        for &(end, p) in &mid[..m] {
            if p == Piece::Absent && n > 0 && items[n - 1].1 == Piece::Absent {
                items[n - 1].0 = end;
            } else {
                items[n] = (end, p);
                n += 1;
            }
        }
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
        // at the edge needs the neighbour (a rebuild merges the two).
        if (from == 0 && items[0].1 == Piece::Absent && leaf.min > 0 && node.is_present(0))
            || (to + 1 == count
                && items[n - 1].1 == Piece::Absent
                && leaf.max < u64::MAX
                && node.is_present(to))
        {
            return None;
        }
        let new_count = count - (to - from + 1) + n;
        // A root leaf left with one absent slot is an empty tree: edit.rs frees it.
        if new_count == 1 && items[0].1 == Piece::Absent {
            return None;
        }
        let exempt = self.height() == 1 || leaf.max == u64::MAX;
        if new_count > LEAF_SLOTS || (new_count < Kind::Leaf.min_slots() && !exempt) {
            return None;
        }

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
        })
    }

    /// Carries out `splice` (from [`plan_splice`](Self::plan_splice) for the
    /// same store, with nothing changed in between).
    pub(super) fn store_splice<S, D>(
        &mut self,
        path: &Path,
        splice: &Splice,
        (first, last): (u64, u64),
        mut value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: FnMut(&V, RangeInclusive<u64>) -> V,
        D: Displace<V>,
    {
        let Splice {
            a,
            b,
            start: s,
            end: e,
            from,
            to,
            items,
            n,
            new_count,
        } = *splice;
        let leaf = *path.leaf();
        let node = leaf.node;
        let count = node.count();
        // Make the pieces before changing anything (a panicking split
        // leaves the tree as it was).
        let left = (first > s && node.is_present(a)).then(|| {
            // SAFETY: a leaf of this tree, whose values are `V`s; the
            // reference ends with the call.
            split(unsafe { node.value::<V>(a) }, s..=first - 1)
        });
        let right = (last < e && node.is_present(b)).then(|| {
            // SAFETY: as above.
            split(unsafe { node.value::<V>(b) }, last + 1..=e)
        });
        let made = left.is_some() as usize + right.is_some() as usize + value.is_some() as usize;
        let (mut left, mut right) = (left.map(value_word), right.map(value_word));
        let mut new = value.take().map(value_word);
        for i in a..=b {
            if node.is_present(i) {
                let range = node.slot_start(i, leaf.min)..=node.slot_end(i, leaf.max);
                // SAFETY: a leaf of this tree, whose values are `V`s, written
                // under `&mut self`; the in-leaf splice is not taken in RCU
                // mode.
                let old = unsafe { node.take_value::<V>(i) };
                self.entries_removed(1);
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
        let mut bits = u32::from(node.present_bits()) & ((1u32 << from) - 1);
        bits |= tail_bits << (from + n);
        for (k, &(end, p)) in (from..).zip(&items[..n]) {
            if k + 1 < new_count {
                node.set_pivot(k, end);
            }
            let word = match p {
                Piece::Absent => None,
                Piece::New => new.take(),
                Piece::Left => left.take(),
                Piece::Right => right.take(),
            };
            if let Some(w) = word {
                // SAFETY: `w` encodes a `V` (the new value or a split piece).
                unsafe { node.set_value_word(k, w) };
                bits |= 1 << k;
            }
        }
        let bits = bits as u16;
        node.publish_leaf(new_count, bits);
        self.entries_added(made);
        self.count_path(|p| &mut p.node_rewrite);
        self.refresh_leaf_gap(path);
    }
}
