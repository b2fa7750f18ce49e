//! Settling a spliced leaf with its neighbour, in place: what a splice
//! needs when it leaves its leaf under the minimum fill, or leaves a new
//! absent slot at the leaf's edge beside the neighbour's absent slot
//! (absent ranges never meet, across leaves too).
//!
//! First the left leaf of the two gives up an absent last slot that meets
//! the right one's absent first slot: the right one's now starts where it
//! did, and only the pivot that records their boundary moves. Then, for a
//! sibling under the same parent (the kernel's `mas_rebalance` into a
//! neighbour, done in place):
//!
//! * both keep their minimum: nothing more;
//! * together they fit one node, and the parent can spare a child: they
//!   merge;
//! * else, when each half can keep its minimum, slots move across the
//!   boundary until the two hold as many as each other;
//! * else they merge all the same, and the parent, now a child short of
//!   its minimum, settles with a sibling under the grandparent the same
//!   way (merging, if the grandparent can spare a child, or else evening
//!   out their children). Only one level up: a pair that would have to
//!   climb further rebuilds instead.
//!
//! A neighbour under another parent (a cousin) settles only when both keep
//! their minimum: the boundary is then a pivot of the lowest node above
//! both, and of the two absent slots that meet there the one whose leaf
//! can spare it goes (the left one's, or else the right one's).
//!
//! Values move as raw slot words: each stays owned by one present slot, and
//! no user code runs. A store whose pair fits none of these rebuilds
//! instead (`edit.rs`).

use super::fast::{Edge, Splice};
use crate::gap::{leaf_gap, node_gap};
use crate::node::{Kind, NodePtr, LEAF_SLOTS};
use crate::tree::MapleTree;
use crate::walk::Path;

/// What becomes of a spliced leaf and its neighbour, worked out before
/// anything changes.
#[derive(Clone, Copy)]
pub(super) struct Settle {
    with: With,
    /// The left leaf of the two drops its absent last slot, which meets the
    /// right one's absent first slot.
    drop: bool,
    then: Then,
}

/// The neighbouring leaf a spliced leaf settles with.
#[derive(Clone, Copy)]
enum With {
    /// A sibling: the boundary is between the parent's children `b` and
    /// `b + 1`.
    Sibling(usize),
    /// The next leaf (`after`) or the previous one, under another parent:
    /// the boundary is a pivot of the lowest node above both. Only an
    /// absent slot crosses it: of the two absent slots that meet there, the
    /// right leaf's first one is dropped when `right_drops` (the left
    /// leaf's last one grows to take its place), else the left leaf's last.
    Cousin { after: bool, right_drops: bool },
}

/// What the pair does once the absent slots between them are one.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Then {
    /// Both leaves keep their minimum.
    Keep,
    /// The right leaf's slots join the left one's.
    Merge,
    /// Slots cross the boundary until the left leaf holds this many.
    Even(usize),
    /// The leaves merge, and their parent settles with a sibling under the
    /// grandparent, across the grandparent's boundary `b` (between its
    /// children `b` and `b + 1`): the two merge (`even` is `None`), or
    /// children cross until the left one holds `even`.
    MergeUp { b: usize, even: Option<usize> },
}

impl<V> MapleTree<V> {
    /// How the leaf `path` leads to, after `splice` (which fits the leaf
    /// but is not [`plain`](Splice::plain)), settles with a neighbour: the
    /// one on the side of the edge the splice leaves absent (a sibling, or
    /// a leaf under another parent), or else the sibling before it (the
    /// one after, for a first child). `None` when the pair cannot be
    /// settled in place.
    #[inline(always)]
    pub(super) fn settle_for(&self, path: &Path, splice: &Splice) -> Option<Settle> {
        if self.height() < 2 {
            return None;
        }
        let up = path.lv[1];
        let parent = up.node.peek();
        let (pcount, j) = (parent.count(), up.idx);
        let (sibling, toward) = match splice.edge() {
            Edge::Left if j == 0 => return self.settle_with_cousin(path, splice, false),
            Edge::Right if j + 1 == pcount => return self.settle_with_cousin(path, splice, true),
            Edge::Left => (j - 1, true),
            Edge::Right => (j + 1, true),
            Edge::Inside if j > 0 => (j - 1, false),
            Edge::Inside => ((j + 1 < pcount).then_some(j + 1)?, false),
        };
        let b = j.min(sibling);
        let own_left = b == j;
        let other = parent.child(sibling);
        let (mut lc, rc) = if own_left {
            (splice.new_count(), other.count())
        } else {
            (other.count(), splice.new_count())
        };
        // The neighbour's slot at the boundary is absent, and so (the splice
        // leaves it so) is the spliced leaf's own.
        let drop = toward && {
            let at = if own_left { 0 } else { other.count() - 1 };
            !other.is_present(at)
        };
        if drop {
            if lc < 2 {
                return None;
            }
            lc -= 1;
        }
        let min = Kind::Leaf.min_slots();
        // The last leaf of the level may be short; the left one never is
        // the last.
        let right_exempt = b + 1 == pcount - 1 && up.max == u64::MAX;
        let then = if lc >= min && (rc >= min || right_exempt) {
            Then::Keep
        } else if lc + rc <= LEAF_SLOTS && self.spares_child(path, 1) {
            Then::Merge
        } else if lc + rc >= 2 * min {
            Then::Even((lc + rc) / 2)
        } else {
            // Fewer than `2 * min` slots: they fit one leaf.
            self.merge_up_for(path)?
        };
        Some(Settle {
            with: With::Sibling(b),
            drop,
            then,
        })
    }

    /// [`settle_for`](Self::settle_for) when the splice leaves an absent
    /// slot at the edge of its leaf that its parent has no sibling beside:
    /// the neighbour on that side, the next leaf (`after`) or the previous
    /// one, has another parent. Only a spliced leaf that keeps its minimum
    /// settles so, and only when one of the two can give up its absent
    /// slot at the boundary and keep its minimum (the left one, or else the
    /// right one, which may be the last leaf of the tree): their parents
    /// keep their children.
    fn settle_with_cousin(&self, path: &Path, splice: &Splice, after: bool) -> Option<Settle> {
        if splice.short() {
            return None;
        }
        let mut np = path.clone();
        if !(if after {
            np.next_leaf()
        } else {
            np.prev_leaf()
        }) {
            return None;
        }
        let other = np.leaf().node;
        let count = other.count();
        let min = Kind::Leaf.min_slots();
        // Whether the absent slots meet, the counts of the left and the
        // right leaf, and whether the right one is the tree's last.
        let (own, theirs) = (splice.new_count(), count);
        let (drop, (left_count, right_count), right_last) = if after {
            let last = np.leaf().max == u64::MAX;
            (!other.is_present(0), (own, theirs), last)
        } else {
            let last = path.leaf().max == u64::MAX;
            (!other.is_present(count - 1), (theirs, own), last)
        };
        let right_drops = if !drop || left_count > min {
            false
        } else if right_count > min || (right_last && right_count >= 2) {
            true
        } else {
            return None;
        };
        Some(Settle {
            with: With::Cousin { after, right_drops },
            drop,
            then: Then::Keep,
        })
    }

    /// [`settle_for`](Self::settle_for) when the spliced leaf and its
    /// sibling must merge but their parent cannot spare a child: how the
    /// parent, a child short after the merge, settles with its own sibling
    /// (the one before it, or else the one after) under the grandparent.
    /// `None` when the parent is the root, or when the pair of parents
    /// could settle neither way (the grandparent would have to settle in
    /// turn).
    fn merge_up_for(&self, path: &Path) -> Option<Then> {
        if self.height() < 3 {
            return None;
        }
        let up = path.lv[2];
        let grand = up.node.peek();
        let j = up.idx;
        let sibling = if j > 0 {
            j - 1
        } else if j + 1 < grand.count() {
            j + 1
        } else {
            return None;
        };
        let kind = grand.kind();
        // The parent loses a child to the merge below.
        let own = path.lv[1].node.count() - 1;
        let other = grand.child(sibling).count();
        let (lc, rc) = if sibling < j {
            (other, own)
        } else {
            (own, other)
        };
        let even = if lc + rc <= kind.capacity() && self.spares_child(path, 2) {
            None
        } else if lc + rc >= 2 * kind.min_slots() {
            Some((lc + rc) / 2)
        } else {
            return None;
        };
        Some(Then::MergeUp {
            b: j.min(sibling),
            even,
        })
    }

    /// Whether the node at `level` of `path` (1: the leaf's parent) may
    /// lose a child: a root keeps two, another node its minimum unless it
    /// is the last of its level.
    fn spares_child(&self, path: &Path, level: usize) -> bool {
        let at = path.lv[level];
        let node = at.node.peek();
        let count = node.count();
        if level + 1 == self.height() {
            count > 2
        } else {
            count > node.kind().min_slots() || at.max == u64::MAX
        }
    }

    /// Carries out `settle` (from [`settle_for`](Self::settle_for)) after
    /// the splice it was worked out for. In an allocation tree the leaves'
    /// gap records are worked out again and carried up. The leaf level and
    /// the parent's slot may no longer match the path: it is left to be
    /// walked again from the parent.
    #[inline(always)]
    pub(super) fn settle(&mut self, path: &mut Path, settle: Settle) {
        match settle.with {
            With::Sibling(b) => self.settle_with_sibling(path, b, settle.drop, settle.then),
            With::Cousin { after, right_drops } => {
                if settle.drop {
                    self.hand_over_absent_slot(path, after, right_drops);
                }
                self.count_path(|p| &mut p.node_rewrite);
            }
        }
    }

    /// [`settle`](Self::settle) with the sibling on the other side of the
    /// parent's boundary `b`.
    #[inline(always)]
    fn settle_with_sibling(&mut self, path: &mut Path, b: usize, drop: bool, then: Then) {
        let up = path.lv[1];
        let parent = up.node;
        let (left, right) = (parent.child(b), parent.child(b + 1));
        if drop {
            let count = left.count();
            debug_assert!(count >= 2 && !left.is_present(count - 1) && !right.is_present(0));
            // The right leaf's absent first slot now starts where the
            // dropped one did; the dropped slot's bit is clear already.
            left.set_count(count - 1);
            parent.set_pivot(b, left.pivot(count - 2));
        }
        match then {
            Then::Keep => self.count_path(|p| &mut p.node_rewrite),
            Then::Merge | Then::MergeUp { .. } => {
                self.merge_leaves(parent, b, left, right);
                self.count_path(|p| &mut p.rebalance);
            }
            Then::Even(m) => {
                move_boundary(parent, b, left, right, m);
                self.count_path(|p| &mut p.rebalance);
            }
        }
        if self.is_alloc() {
            let children = if let Then::Merge | Then::MergeUp { .. } = then {
                b..=b
            } else {
                b..=b + 1
            };
            for k in children {
                let (min, max) = (parent.slot_start(k, up.min), parent.slot_end(k, up.max));
                parent.set_gap(k, leaf_gap(parent.child(k), min, max));
            }
            self.update_gaps(path, 2, node_gap(parent));
        }
        path.low = 1;
        if let Then::MergeUp { b, even } = then {
            self.settle_parents(path, b, even);
        }
    }

    /// The second half of [`Then::MergeUp`]: the parents on either side of
    /// the grandparent's boundary `b` merge (`even` is `None`) or even out
    /// to `even` children on the left. Gap records move with their
    /// children; the grandparent's are worked out again and carried up.
    fn settle_parents(&mut self, path: &mut Path, b: usize, even: Option<usize>) {
        let up = path.lv[2];
        let grand = up.node;
        let (left, right) = (grand.child(b), grand.child(b + 1));
        let gaps = self.is_alloc();
        match even {
            None => {
                move_children(grand, b, left, right, left.count() + right.count(), gaps);
                unlink_right_child(grand, b, gaps);
                // SAFETY: the right node belongs to this tree; its children
                // moved into the left one (its count is now 0) and nothing
                // links it any more.
                unsafe { self.retire_node(right) };
            }
            Some(m) => move_children(grand, b, left, right, m, gaps),
        }
        self.count_path(|p| &mut p.rebalance);
        if gaps {
            let children = if even.is_none() { b..=b } else { b..=b + 1 };
            for k in children {
                grand.set_gap(k, node_gap(grand.child(k)));
            }
            self.update_gaps(path, 3, node_gap(grand));
        }
        path.low = 2;
    }

    /// Drops one of the two absent slots that meet between the leaf `path`
    /// leads to and its neighbour (the next leaf when `after`, else the
    /// previous one), under another parent: the left one's last, whose
    /// range the right one's first then takes, or (`right_drops`) the
    /// right one's first, the left one's last taking its range. The
    /// boundary between them is a pivot of the lowest node above both, the
    /// only one that records it.
    fn hand_over_absent_slot(&mut self, path: &mut Path, after: bool, right_drops: bool) {
        let mut np = path.clone();
        let stepped = if after {
            np.next_leaf()
        } else {
            np.prev_leaf()
        };
        debug_assert!(stepped);
        // The lowest common node: the lowest level at which both paths
        // still meet, where they take neighbouring slots.
        let h = (1..self.height())
            .rev()
            .find(|&l| np.lv[l].idx != path.lv[l].idx)
            .expect("maple tree: neighbouring leaves share no node");
        let (lp, rp) = if after { (&*path, &np) } else { (&np, &*path) };
        let top = lp.lv[h];
        let (left, right) = (lp.leaf().node, rp.leaf().node);
        let (count, right_count) = (left.count(), right.count());
        debug_assert!(!left.is_present(count - 1) && !right.is_present(0));
        let end = if right_drops {
            debug_assert!(right_count >= 2);
            let end = right.pivot(0);
            // SAFETY: `right` is a leaf of `right_count` slots, of which the
            // last `right_count - 1` move down by one. The dropped first
            // slot is absent and owns nothing; the old last slot, past the
            // new count, has its present bit cleared by the shift below, so
            // each value stays owned by one present slot.
            unsafe { right.move_leaf_tail(1, 0, right_count - 1) };
            right.set_present_bits(right.present_bits() >> 1);
            right.set_count(right_count - 1);
            end
        } else {
            debug_assert!(count >= 2);
            left.set_count(count - 1);
            left.pivot(count - 2)
        };
        top.node.set_pivot(top.idx, end);
        if self.is_alloc() {
            let left_gap = leaf_gap(left, lp.leaf().min, end);
            let right_gap = leaf_gap(right, end + 1, rp.leaf().max);
            self.update_gaps(lp, 1, left_gap);
            self.update_gaps(rp, 1, right_gap);
        }
        // The levels below the common node have stale bounds.
        path.low = h;
    }

    /// Moves every slot of `right` (child `b + 1` of `parent`) to the end
    /// of `left` (child `b`), drops `right` from the parent and gives it
    /// back.
    fn merge_leaves(&mut self, parent: NodePtr, b: usize, left: NodePtr, right: NodePtr) {
        let rc = right.count();
        move_boundary(parent, b, left, right, left.count() + rc);
        unlink_right_child(parent, b, self.is_alloc());
        // SAFETY: the right leaf belongs to this tree; its slots moved into
        // the left one (its count is now 0, so it owns no value) and
        // nothing links it any more.
        unsafe { self.retire_node(right) };
    }
}

/// Drops child `b + 1` of `parent`, whose contents moved into child `b`:
/// child `b` now ends where it did (at its pivot, unless it was the last
/// child). `gaps`: the parent records gaps (an allocation tree).
fn unlink_right_child(parent: NodePtr, b: usize, gaps: bool) {
    let (kind, count) = (parent.kind(), parent.count());
    for k in b + 1..count - 1 {
        parent.set_child_of(kind, k, parent.child_of(kind, k + 1));
        if gaps {
            parent.set_gap(k, parent.gap(k + 1));
        }
    }
    for k in b..count - 2 {
        parent.set_pivot(k, parent.pivot(k + 1));
    }
    parent.set_count(count - 1);
}

/// As [`move_boundary`], for two internal nodes: children (with their
/// pivots, and their gap records when `gaps`) cross the boundary between
/// `left` and `right`, children `b` and `b + 1` of `parent`, until `left`
/// holds `m` of them (all, leaving `right` empty, for a merge), and the
/// parent's pivot between them follows (unless `right` is left empty).
fn move_children(parent: NodePtr, b: usize, left: NodePtr, right: NodePtr, m: usize, gaps: bool) {
    let (kind, lc, rc) = (left.kind(), left.count(), right.count());
    let boundary = parent.pivot(b);
    debug_assert!(m <= kind.capacity() && m <= lc + rc && lc + rc - m <= kind.capacity());
    if m > lc {
        // Right to left: the right node's first `k` children follow the
        // left one's last, which now ends at the old boundary.
        let k = m - lc;
        left.set_pivot(lc - 1, boundary);
        for i in 0..k {
            left.set_child_of(kind, lc + i, right.child_of(kind, i));
            if gaps {
                left.set_gap(lc + i, right.gap(i));
            }
            if i + 1 < k {
                left.set_pivot(lc + i, right.pivot(i));
            }
        }
        left.set_count(m);
        if k < rc {
            parent.set_pivot(b, right.pivot(k - 1));
            for i in k..rc {
                right.set_child_of(kind, i - k, right.child_of(kind, i));
                if gaps {
                    right.set_gap(i - k, right.gap(i));
                }
                if i + 1 < rc {
                    right.set_pivot(i - k, right.pivot(i));
                }
            }
        }
        right.set_count(rc - k);
    } else if m < lc {
        // Left to right: the left node's last `k` children go before the
        // right one's first, the last of them ending at the old boundary.
        let k = lc - m;
        right.set_count(rc + k);
        for i in (0..rc).rev() {
            right.set_child_of(kind, i + k, right.child_of(kind, i));
            if gaps {
                right.set_gap(i + k, right.gap(i));
            }
            if i + 1 < rc {
                right.set_pivot(i + k, right.pivot(i));
            }
        }
        for i in 0..k {
            right.set_child_of(kind, i, left.child_of(kind, m + i));
            if gaps {
                right.set_gap(i, left.gap(m + i));
            }
            if i + 1 < k {
                right.set_pivot(i, left.pivot(m + i));
            }
        }
        right.set_pivot(k - 1, boundary);
        parent.set_pivot(b, left.pivot(m - 1));
        left.set_count(m);
    }
}

/// Moves slots across the boundary between `left` and `right`, children
/// `b` and `b + 1` of `parent`, so that `left` holds `m` of their slots
/// (all of them, leaving `right` empty, for a merge), and sets the parent's
/// pivot between them to the new boundary (unless `right` is left empty).
/// The slots meet as they are: the caller has made sure that no two absent
/// ones do.
fn move_boundary(parent: NodePtr, b: usize, left: NodePtr, right: NodePtr, m: usize) {
    let (lc, rc) = (left.count(), right.count());
    let boundary = parent.pivot(b);
    let (lbits, rbits) = (
        u32::from(left.present_bits()),
        u32::from(right.present_bits()),
    );
    debug_assert!(m <= LEAF_SLOTS && m <= lc + rc && lc + rc - m <= LEAF_SLOTS);
    if m > lc {
        // Right to left: the right leaf's first `k` slots follow the left
        // one's last, which now ends at the old boundary.
        let k = m - lc;
        left.set_pivot(lc - 1, boundary);
        // SAFETY: two distinct leaves; the right one's first `k` slots
        // follow the left one's `lc` (`m <= LEAF_SLOTS`); they leave the
        // right one below, by the move over them or its count.
        unsafe { right.copy_leaf_slots(0, left, lc, k) };
        let bits = lbits | (rbits & ((1 << k) - 1)) << lc;
        left.publish_leaf(m, bits as u16);
        if k < rc {
            parent.set_pivot(b, right.pivot(k - 1));
            // SAFETY: slots `k..rc` are the right leaf's last and move to
            // its front; the slots they leave behind lie past its new
            // count, and its bits are set below.
            unsafe { right.move_leaf_tail(k, 0, rc - k) };
        }
        right.publish_leaf(rc - k, (rbits >> k) as u16);
    } else if m < lc {
        // Left to right: the left leaf's last `k` slots go before the right
        // one's first, the last of them ending at the old boundary.
        let k = lc - m;
        // SAFETY: all of the right leaf's slots move up by `k`; they end at
        // `rc + k = lc + rc - m <= LEAF_SLOTS`, and the slots they leave
        // behind are overwritten below.
        unsafe { right.move_leaf_tail(0, k, rc) };
        // SAFETY: two distinct leaves; the left one's last `k` slots go to
        // the right one's first, just emptied; they leave the left one
        // below, by its count.
        unsafe { left.copy_leaf_slots(m, right, 0, k) };
        right.set_pivot(k - 1, boundary);
        parent.set_pivot(b, left.pivot(m - 1));
        right.publish_leaf(rc + k, (rbits << k | lbits >> m) as u16);
        left.publish_leaf(m, (lbits & ((1 << m) - 1)) as u16);
    }
}
