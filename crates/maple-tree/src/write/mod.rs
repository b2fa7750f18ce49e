//! Write paths. A store is first classified into a plan (`plan.rs`, the
//! kernel's `mas_wr_store_type`), once and before anything changes, and
//! takes the cheapest path that can do it:
//!
//! 1. **exact fit** (`fast.rs`): the range is exactly one existing slot and a
//!    value goes in: the slot word is replaced in place;
//! 2. **append** (`fast.rs`, the kernel's `mas_wr_append`): the range lies
//!    inside the last slot of a leaf, which is absent, and the leaf has room
//!    for the one or two extra slots: they are written past the end and the
//!    leaf's count grows;
//! 3. **splice** (`fast.rs`, the kernel's node store): the store stays
//!    inside one leaf and touches no neighbour: its slots are rewritten in
//!    place. When they overflow the leaf and its parent has room, the leaf
//!    is first split in place, as `BTreeMap` splits a full node (its later
//!    slots move to a new leaf, which the parent takes beside it), and the
//!    splice is done in the half that holds the store. A leaf left under
//!    its minimum, or with a new absent slot at its edge beside the
//!    neighbour's absent slot, is settled with that neighbour
//!    (`siblings.rs`): the absent slots become one by moving the boundary,
//!    and a sibling under the same parent merges with the leaf or shares
//!    its slots with it;
//! 4. **copying splice** (`fast.rs`, RCU mode only): a splice that fits its
//!    leaf and keeps to it, written into a new leaf that one pointer store
//!    links in the old one's place, for readers may be inside the old one;
//! 5. **rebuild** (`edit.rs`): everything else. The touched leaf (or leaves,
//!    for a spanning store) is rebuilt and the change carried up: a node
//!    rewrite when it still fits one node, a split when it does not, a
//!    rebalance when a node falls under its minimum, root growth and collapse
//!    at the top. New nodes are built and linked first; the nodes they
//!    replace are given back only then (`retired.rs`). When the replaced
//!    nodes share a parent that still fits, the new ones are put into it in
//!    place (not in RCU mode) instead of a new parent being built.
//!
//! Storing "absent" over an absent range changes nothing. In RCU mode the
//! plan avoids the paths readers must not watch (exact fit and the in-place
//! splice, which the copying splice replaces);
//! `plan.rs` is the only place that decides this, and the only place that
//! knows how many nodes each path can take ([`MapleTree::preallocate`]).
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
mod in_place;
mod pack;
mod plan;
mod retired;
mod siblings;
mod split;
#[cfg(all(test, feature = "write-stats", feature = "bench-internals"))]
mod tests;

pub(crate) use bulk::Bulk;
use content::Content;
use pack::fill;
pub(crate) use plan::worst_case_nodes;
use plan::Plan;
pub(crate) use split::{CloneOrMove, Split};

use crate::displaced::Displace;
use crate::node::{value_word, Kind};
use crate::tree::MapleTree;
use crate::walk::Path;

impl<V> MapleTree<V> {
    /// Stores `value` (or absence, for `None`) over `first..=last`.
    ///
    /// Parts of entries cut at the edges get `split(&old, piece)`; every value
    /// the store removes goes to `displaced`, in key order. `path` may hold a
    /// previous walk of this tree; afterwards it is left to be re-walked to
    /// `first` from the lowest level still valid.
    ///
    /// Always inlined: each caller stores a value or absence, never both,
    /// and the plan's branches for the other fold away. Left to LLVM, it
    /// went out of line into `insert` as soon as the plan grew a little.
    #[inline(always)]
    pub(crate) fn store_at<S, D>(
        &mut self,
        path: &mut Path,
        first: u64,
        last: u64,
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: Split<V>,
        D: Displace<V>,
    {
        debug_assert!(first <= last);
        let plan = self.plan(path, first, last, value.is_some());
        self.store_planned(path, plan, (first, last), value, split, displaced);
    }

    /// [`store_at`](Self::store_at) over exactly the slot `first..=last`
    /// that `path` leads to, as walked (nothing has changed the tree
    /// since): the walk is not checked again, and the plan folds the cases
    /// of a store that starts or ends inside its slot. Removing the entry a
    /// walk just found takes this way.
    #[inline(always)]
    pub(crate) fn store_at_slot<S, D>(
        &mut self,
        path: &mut Path,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: Split<V>,
        D: Displace<V>,
    {
        let plan = self.plan_at(path, (first, last), first, last, value.is_some());
        self.store_planned(path, plan, (first, last), value, split, displaced);
    }

    /// Carries out `plan`, worked out for this store by
    /// [`plan`](Self::plan) or [`plan_at`](Self::plan_at).
    #[inline(always)]
    fn store_planned<S, D>(
        &mut self,
        path: &mut Path,
        plan: Plan,
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) where
        S: Split<V>,
        D: Displace<V>,
    {
        // No path frees a node before it has taken all it needs (a rebuild
        // gives its old nodes back last), so the growth of the pool's live
        // count is what the store took; checked against the plan's bound.
        #[cfg(debug_assertions)]
        let (live_before, most) = (self.pool().live(), plan.max_new_nodes(self.height()));
        // Matched by reference, a splice stays where the plan was built;
        // bound by value, it was copied once more on the way.
        match (&plan, value) {
            (Plan::Nothing, _) => {
                if self.root().is_none() {
                    path.height = 0;
                }
            }
            (Plan::IntoEmpty, Some(value)) => {
                self.store_into_empty(first, last, value);
                path.height = 0;
            }
            (Plan::ExactFit, Some(value)) => self.store_exact(path, value, displaced),
            (Plan::Append, Some(value)) => self.store_append(path, first, last, value),
            (Plan::AppendSplit, Some(value)) => self.store_append_split(path, first, last, value),
            (Plan::Splice(splice), value) if splice.plain() => {
                self.store_splice(path, splice, (first, last), value, split, displaced);
                self.count_path(|p| &mut p.node_rewrite);
            }
            (Plan::Splice(splice), value) => {
                let done =
                    self.store_hard_splice(path, splice, (first, last), value, split, displaced);
                if let Err(value) = done {
                    path.low = self.store_general(path, first, last, value, split, displaced);
                    return;
                }
            }
            (Plan::CopySplice(splice), value) => {
                self.store_splice_copy(path, splice, (first, last), value, split);
            }
            (Plan::Rebuild, value) => {
                path.low = self.store_general(path, first, last, value, split, displaced);
                return;
            }
            (Plan::IntoEmpty | Plan::ExactFit | Plan::Append | Plan::AppendSplit, None) => {
                unreachable!("the plan of storing absence has no value to place")
            }
        }
        #[cfg(debug_assertions)]
        debug_assert!(
            self.pool().live() <= live_before + most,
            "a store took more nodes than its plan allows"
        );
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
        match self.limbo_mut() {
            // SAFETY: the caller's promise; a plain tree has no readers
            // besides its writer.
            None => unsafe { self.pool_mut().free(node) },
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
        let leaf = self.pool_mut().alloc_or_abort(Kind::Leaf);
        fill(leaf, c.items(), 0, false);
        self.set_top(Some(leaf), 1);
        self.entries_added(1);
    }
}
