//! How a store makes the value of each part of an entry it cuts that
//! survives outside the stored range.
//!
//! A caller's `split(&old, part)` closure is called for each such part (at
//! most two per store), and the cut entry's own value leaves the tree with
//! what the store displaced. A store whose caller would only clone the
//! value and drop the original ([`MapleTree::insert`](crate::MapleTree::insert),
//! [`MapleTree::remove_range`](crate::MapleTree::remove_range)) does better
//! with [`CloneOrMove`]: an entry that keeps one part keeps its value,
//! moved into that part, and only an entry cut into two (the stored range
//! inside it) needs a clone. No clone, no drop of the original, and in RCU
//! mode no trip through the limbo: the value, still in the tree, stays
//! readable where readers of the old node find it.

use core::ops::RangeInclusive;

/// The value of each part of a cut entry that survives a store.
pub(crate) trait Split<V> {
    /// Whether an entry cut at one end may keep its own value on the part
    /// that survives (the part before the stored range of an entry cut at
    /// both ends still gets [`part`](Self::part), and the part after it the
    /// value). A value kept is not displaced: it never leaves the tree.
    const MOVES: bool;

    /// The value of `part` of the entry holding `old`.
    fn part(&mut self, old: &V, part: RangeInclusive<u64>) -> V;
}

/// A caller's closure: called for every surviving part.
impl<V, F: FnMut(&V, RangeInclusive<u64>) -> V> Split<V> for F {
    const MOVES: bool = false;

    #[inline(always)]
    fn part(&mut self, old: &V, part: RangeInclusive<u64>) -> V {
        self(old, part)
    }
}

/// Keeps a cut entry's value on the part that survives; clones it only for
/// the part before a store inside the entry.
pub(crate) struct CloneOrMove;

impl<V: Clone> Split<V> for CloneOrMove {
    const MOVES: bool = true;

    #[inline(always)]
    fn part(&mut self, old: &V, _: RangeInclusive<u64>) -> V {
        old.clone()
    }
}

/// Which of the entries a store cuts keep their value (see
/// [`Split::MOVES`]): `(left, right)` for the entry cut at the store's
/// first index (`left_cut`) and the one cut at its last (`right_cut`),
/// which are one entry when `same`.
#[inline(always)]
pub(crate) fn kept_values<V, S: Split<V>>(
    left_cut: bool,
    right_cut: bool,
    same: bool,
) -> (bool, bool) {
    let right = S::MOVES && right_cut;
    let left = S::MOVES && left_cut && !(same && right_cut);
    (left, right)
}
