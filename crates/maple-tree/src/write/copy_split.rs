//! The copying split: a leaf splice that overflows its leaf, with readers
//! about (RCU mode).
//!
//! Outside RCU mode such a store splits the leaf in place under a parent
//! with room (`fast.rs`, as `BTreeMap` splits a full node). Readers must
//! not watch slots move, so in RCU mode the two halves are written into two
//! new leaves, the store done in the half that holds it, and the parent is
//! copied with the two in place of the old leaf (the kernel's
//! `mas_split` in RCU mode also replaces the parent). One pointer store,
//! in the grandparent or at the root, publishes all three; the old leaf and
//! parent wait in the limbo for the readers that may still be inside them.
//!
//! Without this path the store took the general rebuild (`edit.rs`), which
//! classifies every slot of the leaf into a list of contents and packs it
//! again; here the slots are copied as runs, as the copying splice copies
//! them.

use super::fast::{Pieces, Splice};
use super::pack::Packed;
use super::split::Split;
use crate::gap::leaf_gap;
use crate::node::{Kind, NodePtr};
use crate::tree::MapleTree;
use crate::walk::{Level, Path};

impl<V> MapleTree<V> {
    /// Carries out `splice`, which overflows the leaf `path` leads to (from
    /// [`plan_splice`](Self::plan_splice) for the same store), by splitting
    /// the leaf at `at` ([`Splice::split_point`]) into two new leaves under
    /// a copy of its parent, which has room for one more child. The path
    /// then leads to the new half that holds the store, under the new
    /// parent.
    pub(super) fn store_split_copy<S>(
        &mut self,
        path: &mut Path,
        splice: &Splice,
        at: (usize, bool),
        (first, last): (u64, u64),
        value: Option<V>,
        split: &mut S,
    ) where
        S: Split<V>,
    {
        let leaf = *path.leaf();
        let up = path.lv[1];
        let old = leaf.node;
        let count = old.count();
        let (m, right) = at;
        debug_assert!(self.height() >= 2 && 0 < m && m < count);
        // Made before anything changes: a panicking split leaves the tree
        // as it was.
        let pieces = Pieces::make(&leaf, splice, (first, last), value, split);
        let half = splice.in_half(at, count);
        debug_assert!(
            half.plain(),
            "maple tree: a split leaf's half takes the whole store"
        );
        let (left, right_leaf) = (
            self.pool_mut().alloc_or_abort(Kind::Leaf),
            self.pool_mut().alloc_or_abort(Kind::Leaf),
        );
        // The half without the store is copied as it is, as `copy_half`
        // says; the other gets the store.
        if right {
            copy_half(old, (0, m), left);
            pieces.write_copy(old, (m, count - m), &half, right_leaf);
        } else {
            pieces.write_copy(old, (0, m), &half, left);
            copy_half(old, (m, count - m), right_leaf);
        }
        let cut = old.pivot(m - 1);
        let gaps = self.is_alloc();
        let gap =
            |node: NodePtr, min: u64, max: u64| if gaps { leaf_gap(node, min, max) } else { 0 };
        let (left_len, right_len) = if right {
            (m, half.new_count())
        } else {
            (half.new_count(), count - m)
        };
        let halves = [
            Packed {
                node: left,
                max: cut,
                gap: gap(left, leaf.min, cut),
                len: left_len,
            },
            Packed {
                node: right_leaf,
                max: leaf.max,
                gap: gap(right_leaf, cut + 1, leaf.max),
                len: right_len,
            },
        ];
        let parent = self
            .copy_children(path, 1, up.idx, &halves)
            .expect("the copying split is planned only under a parent with room");
        self.retire_spliced_values(old, splice, &pieces);

        // Readers find the new nodes from here on.
        if self.height() == 2 {
            self.set_top(Some(parent.node), 2);
        } else {
            let top = path.lv[2];
            top.node.set_child(top.idx, parent.node);
            if gaps {
                self.update_gaps(path, 2, parent.gap);
            }
        }
        // SAFETY: the new parent is linked in the old one's place, and the
        // new leaves in the old leaf's: nothing links either any more, and
        // each is retired once; in RCU mode they wait for the readers.
        unsafe {
            self.retire_node(old);
            self.retire_node(up.node);
        }
        self.count_path(|p| &mut p.split);

        // The path now leads to the half that holds the store.
        path.lv[1].node = parent.node;
        if right {
            path.lv[1].idx = up.idx + 1;
            *path.leaf_mut() = Level {
                node: right_leaf,
                idx: leaf.idx - m,
                min: cut + 1,
                max: leaf.max,
            };
        } else {
            *path.leaf_mut() = Level {
                node: left,
                max: cut,
                ..leaf
            };
        }
    }
}

/// Writes the new leaf `new` (not yet linked) as a copy of the slots
/// `base..base + len` of leaf `old`, the last of which is not necessarily
/// the old leaf's last (its end, a pivot there, is the new leaf's bound).
/// The old leaf keeps the words copied out of it, as in
/// [`Pieces::write_copy`].
fn copy_half(old: NodePtr, (base, len): (usize, usize), new: NodePtr) {
    debug_assert!(len > 0 && base + len <= old.count());
    // SAFETY: two distinct leaves; the slots fit the new one, as slots
    // `..len`.
    unsafe { old.copy_leaf_slots(base, new, 0, len) };
    let bits = (u32::from(old.present_bits()) >> base) & ((1u32 << len) - 1);
    new.publish_leaf(len, bits as u16);
}
