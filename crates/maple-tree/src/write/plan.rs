//! Classifying a store: which write path it takes, decided once, before
//! anything changes (the kernel's `mas_wr_store_type`).
//!
//! This is the one place that knows which paths concurrent readers (RCU mode)
//! may watch, and how many new nodes each path can take from the pool, which
//! is what [`MapleTree::preallocate`] reserves.

use super::fast::Splice;
use super::pack::MAX_PACKED;
use crate::node::LEAF_SLOTS;
use crate::tree::MapleTree;
use crate::walk::Path;

/// The write path of one store.
pub(super) enum Plan {
    /// Absence stored over an absent range: nothing changes.
    Nothing,
    /// A value into an empty tree: one new leaf becomes the root.
    IntoEmpty,
    /// The range is exactly one existing slot: its word is replaced.
    ExactFit,
    /// The range lies in the absent last slot of a leaf with room for the
    /// extra slots, which are written past the end and published with one
    /// header store (`mas_wr_append`).
    Append,
    /// The range lies in the absent last slot of the tree's last leaf, which
    /// has no room: the leaf keeps its slots, and a new leaf after it, which
    /// the parent (with room, or a new root) takes as its last child, holds
    /// the rest.
    AppendSplit,
    /// The slots of one leaf are rewritten in place (the kernel's node
    /// store). When they overflow the leaf, leave a new absent slot at its
    /// edge, or leave it under its minimum ([`Splice::plain`] says none of
    /// these), the store splits the leaf in place first, or settles it
    /// with its neighbour after (moving their boundary, or merging with a
    /// sibling: `fast.rs`, `store_hard_splice`), or else rebuilds after
    /// all.
    Splice(Splice),
    /// With readers about (RCU mode), a [`plain`](Splice::plain) splice
    /// written into a new leaf, which replaces the old one with one pointer
    /// store (the kernel's node store in RCU mode).
    CopySplice(Splice),
    /// The touched leaves are rebuilt into new nodes and the change carried
    /// up: node rewrite, split, spanning store, rebalance, root growth or
    /// collapse (`edit.rs`).
    Rebuild,
}

/// A write path without its details, for the questions asked before it is
/// chosen.
#[derive(Clone, Copy)]
enum Route {
    ExactFit,
    Append,
    AppendSplit,
    Splice,
    CopySplice,
    /// Within a rebuild: the new nodes are put into their parent in place
    /// of the old ones, instead of a new parent being built.
    ParentSplice,
    /// Within a rebuild: the parent is copied into a new node with the new
    /// nodes in place of the old ones, instead of being rebuilt from its
    /// contents.
    ParentCopy,
}

impl Route {
    /// Whether readers walking the tree concurrently (RCU mode) may watch
    /// this path's changes.
    ///
    /// An append writes only slots past the leaf's published count and then
    /// publishes them with one release store of the header; a copying
    /// splice, a parent's copy and a rebuild publish finished nodes with one
    /// pointer store.
    /// They leave every node a reader can reach whole at every moment. An exact fit would drop the
    /// value a reader may be reading, and a splice (of a leaf's slots or a
    /// parent's children) moves slots under readers, so none is taken then.
    const fn safe_with_readers(self) -> bool {
        match self {
            Route::ExactFit | Route::AppendSplit | Route::Splice | Route::ParentSplice => false,
            Route::Append | Route::CopySplice | Route::ParentCopy => true,
        }
    }
}

impl Plan {
    /// The most nodes this plan takes from the pool, in a tree of `height`
    /// levels.
    ///
    /// A rebuild packs each level's new contents into at most `MAX_PACKED`
    /// nodes (`pack`) and, when the top level packs into more than one,
    /// adds one new root above them. It frees the nodes it replaces only
    /// after the new ones are linked, so it cannot take them again; in a
    /// plain tree it writes one node per level in place, which only lowers
    /// the count.
    ///
    /// Debug builds check every store against it.
    #[cfg(debug_assertions)]
    pub(super) const fn max_new_nodes(&self, height: usize) -> usize {
        match self {
            Plan::Nothing | Plan::ExactFit | Plan::Append => 0,
            Plan::Splice(splice) if splice.plain() => 0,
            Plan::IntoEmpty | Plan::CopySplice(_) => 1,
            // A split takes one leaf (a boundary move or a merge, none); a
            // rebuild, when none of them can be done in place, its own
            // bound.
            Plan::Splice(_) => worst_case_nodes(height),
            // A new leaf, and a new root when the leaf was the root.
            Plan::AppendSplit => 2,
            Plan::Rebuild => worst_case_nodes(height),
        }
    }
}

/// The most nodes any store can take from the pool in a tree of `height`
/// levels: what a rebuild can take (an empty tree, `height == 0`, takes 1).
pub(crate) const fn worst_case_nodes(height: usize) -> usize {
    MAX_PACKED * height + 1
}

impl<V> MapleTree<V> {
    /// Whether a rebuild may put its new nodes into their parent in place
    /// (`edit.rs`): it takes no node, so the rebuild's bound holds.
    #[inline]
    pub(super) fn may_splice_parent(&self) -> bool {
        !self.in_rcu_mode() || Route::ParentSplice.safe_with_readers()
    }

    /// Whether a rebuild may copy the parent of its new nodes with them in
    /// place of the old ones (`edit.rs`): it takes one node for the parent,
    /// as rebuilding the parent would at least, so the rebuild's bound
    /// holds. Only in RCU mode: elsewhere the parent is spliced in place,
    /// which fits whenever the copy would.
    #[inline]
    pub(super) fn may_copy_parent(&self) -> bool {
        self.in_rcu_mode() && Route::ParentCopy.safe_with_readers()
    }

    /// Chooses the path of storing a value (`has_value`) or absence over
    /// `first..=last`, walking `path` to `first`. Changes nothing.
    ///
    /// Inlined into the store: as a call, returning the plan through memory
    /// cost `rand_store` about 40 instructions per store (callgrind).
    #[inline(always)]
    pub(super) fn plan(&self, path: &mut Path, first: u64, last: u64, has_value: bool) -> Plan {
        if self.root().is_none() {
            return if has_value {
                Plan::IntoEmpty
            } else {
                Plan::Nothing
            };
        }
        let bounds = path.seek(self.root(), self.height(), first);
        self.plan_at(path, bounds, first, last, has_value)
    }

    /// [`plan`](Self::plan) once `path` leads, as walked, to the slot
    /// `start..=end` of a non-empty tree, which holds `first`.
    #[inline(always)]
    pub(super) fn plan_at(
        &self,
        path: &mut Path,
        (start, end): (u64, u64),
        first: u64,
        last: u64,
        has_value: bool,
    ) -> Plan {
        debug_assert!(
            self.root().is_some()
                && path.height == self.height()
                && path.low == 0
                && (path.leaf().start(), path.leaf().end()) == (start, end)
                && start <= first
                && first <= end,
            "maple tree: a store planned at a slot its path does not lead to"
        );
        let readers = self.in_rcu_mode();
        let may = |route: Route| !readers || route.safe_with_readers();
        let leaf = *path.leaf();
        if last <= end {
            let present = leaf.node.is_present(leaf.idx);
            if !present && !has_value {
                return Plan::Nothing;
            }
            if has_value && start == first && end == last && may(Route::ExactFit) {
                return Plan::ExactFit;
            }
            let count = leaf.node.count();
            let appending = has_value && !present && self.append_path() && leaf.idx + 1 == count;
            if appending {
                if count + (first > start) as usize + (last < end) as usize <= LEAF_SLOTS {
                    if may(Route::Append) {
                        return Plan::Append;
                    }
                } else if end == u64::MAX && may(Route::AppendSplit) {
                    let room = self.height() == 1 || {
                        let parent = path.lv[1].node;
                        parent.count() < parent.kind().capacity()
                    };
                    if room {
                        return Plan::AppendSplit;
                    }
                }
            }
        }
        if may(Route::Splice) {
            if let Some(splice) = self.plan_splice(path, (start, end), first, last, has_value) {
                return Plan::Splice(splice);
            }
        } else if may(Route::CopySplice) {
            if let Some(splice) = self.plan_splice(path, (start, end), first, last, has_value) {
                if splice.plain() {
                    return Plan::CopySplice(splice);
                }
            }
        }
        Plan::Rebuild
    }
}
