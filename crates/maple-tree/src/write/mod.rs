//! Write paths. A store is classified first and takes the cheapest path that
//! can do it:
//!
//! 1. **exact fit** (`fast.rs`): the range is exactly one existing slot and a
//!    value goes in: the slot word is replaced in place;
//! 2. **append** (`fast.rs`, the kernel's `mas_wr_append`): the range lies
//!    inside the last slot of a leaf, which is absent, and the leaf has room
//!    for the one or two extra slots: they are written past the end and the
//!    leaf's count grows;
//! 3. **in-place rewrite** (`fast.rs`, not in RCU mode): the store stays
//!    inside one leaf, which still fits and touches no neighbour: its slots
//!    are spliced in place (the kernel's node store);
//! 4. **rewrite** (`edit.rs`): everything else. The touched leaf (or leaves,
//!    for a spanning store) is rebuilt and the change carried up: a node
//!    rewrite when it still fits one node, a split when it does not, a
//!    rebalance when a node falls under its minimum, root growth and collapse
//!    at the top.
//!
//! Storing "absent" over an absent range changes nothing and returns at once.
//!
//! **No user code runs while nodes change.** `split` (and so `Clone`, for
//! `insert`) makes the pieces of cut entries before anything is changed;
//! the values a store removes are moved into a `Displaced` collection and
//! dropped (or handed to the caller) only once the tree is whole again. So a
//! panicking `split` leaves the tree as it was, and a panicking `Drop` finds
//! the store already done.
//!
//! A tree built from entries in ascending order (`FromIterator`) skips all
//! of this: `bulk.rs` packs full nodes bottom-up.

mod bulk;
mod content;
mod edit;
mod fast;
mod pack;
#[cfg(all(test, feature = "write-stats"))]
mod tests;

pub(crate) use bulk::Bulk;
use content::Content;
use pack::fill;
pub(crate) use pack::MAX_PACKED;

use crate::displaced::Displace;
use crate::node::{value_word, Kind, LEAF_SLOTS};
use crate::tree::MapleTree;
use crate::walk::Path;
use core::ops::RangeInclusive;

impl<V> MapleTree<V> {
    /// Stores `value` (or absence, for `None`) over `first..=last`.
    ///
    /// Parts of entries cut at the edges get `split(&old, piece)`; every value
    /// the store removes goes to `displaced`, in key order. `path` may hold a
    /// previous walk of this tree; afterwards it is left to be re-walked to
    /// `first` from the lowest level still valid.
    pub(crate) fn store_at<S, D>(
        &mut self,
        path: &mut Path,
        first: u64,
        last: u64,
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: FnMut(&V, RangeInclusive<u64>) -> V,
        D: Displace<V>,
    {
        debug_assert!(first <= last);
        if self.root.is_none() {
            if let Some(value) = value {
                self.store_into_empty(first, last, value);
            }
            path.height = 0;
            return;
        }
        path.seek(self.root, self.height(), first);
        let leaf = *path.leaf();
        let end = leaf.end();
        if last <= end {
            let present = leaf.node.is_present(leaf.idx);
            match value {
                None if !present => return,
                Some(value) if leaf.start() == first && end == last && self.limbo.is_none() => {
                    return self.store_exact(path, value, displaced);
                }
                Some(value)
                    if !present
                        && self.append_path
                        && leaf.idx + 1 == leaf.node.count()
                        && leaf.node.count()
                            + (first > leaf.start()) as usize
                            + (last < end) as usize
                            <= LEAF_SLOTS =>
                {
                    return self.store_append(path, first, last, value);
                }
                value => return self.store_rewrite(path, first, last, value, split, displaced),
            }
        }
        self.store_rewrite(path, first, last, value, split, displaced)
    }

    /// A store that moves slots: in place inside one leaf when it can, else
    /// by rebuilding nodes.
    fn store_rewrite<S, D>(
        &mut self,
        path: &mut Path,
        first: u64,
        last: u64,
        mut value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: FnMut(&V, RangeInclusive<u64>) -> V,
        D: Displace<V>,
    {
        if self.store_in_leaf(path, first, last, &mut value, split, displaced) {
            return;
        }
        path.low = self.store_general(path, first, last, value, split, displaced);
    }

    /// Gives back a node a write replaced (its contents now live elsewhere):
    /// in a plain tree straight to the pool, which hands the same memory to
    /// the next allocation while it is in cache; in RCU mode to the current
    /// garbage batch, since readers may still be walking it.
    ///
    /// # Safety
    /// `node` belongs to this tree, is retired once, and is no longer read
    /// by the write that retires it; when the write ends, nothing links it.
    #[inline]
    pub(crate) unsafe fn retire_node(&mut self, node: crate::node::NodePtr) {
        match &mut self.limbo {
            // SAFETY: the caller's promise; a plain tree has no readers
            // besides its writer.
            None => unsafe { self.pool.free(node) },
            Some(limbo) => limbo.push(crate::limbo::Garbage::Node(node)),
        }
    }

    /// The first entry of an empty tree: one leaf with up to three slots.
    fn store_into_empty(&mut self, first: u64, last: u64, value: V) {
        let mut c = Content::new(0);
        if first > 0 {
            c.push_leaf(first - 1, None);
        }
        c.push_leaf(last, Some(value_word(value)));
        if last < u64::MAX {
            c.push_leaf(u64::MAX, None);
        }
        let leaf = self.pool.alloc_or_abort(Kind::Leaf);
        fill(leaf, c.items(), 0, false);
        self.root = Some(leaf);
        self.set_height(1);
        self.len = 1;
    }
}
