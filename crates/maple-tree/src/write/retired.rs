//! The nodes a rebuild replaces, kept whole until the nodes that replace them
//! are linked.
//!
//! A rebuild first builds and links its new nodes, then gives back the old
//! ones: the tree never points at a freed node, and a node freed is never
//! written again by the store that freed it. (In a plain tree, one old node
//! per level is rewritten in place instead and never retired; see
//! `edit.rs`.)

use crate::node::NodePtr;
use crate::teardown::{Teardown, Visit};
use crate::tree::MapleTree;
use smallvec::SmallVec;

/// Nodes one store replaces.
pub(super) struct Retired {
    /// Single nodes, whose contents went into new nodes. A rebuild replaces
    /// a few per level, so these rarely leave the inline buffer.
    nodes: SmallVec<[NodePtr; 16]>,
    /// Roots of whole subtrees the store covers, whose values have already
    /// been moved out.
    subtrees: SmallVec<[NodePtr; 4]>,
}

impl Retired {
    pub(super) fn new() -> Self {
        Retired {
            nodes: SmallVec::new(),
            subtrees: SmallVec::new(),
        }
    }

    #[inline]
    pub(super) fn push(&mut self, node: NodePtr) {
        self.nodes.push(node);
    }

    /// Takes `node` off the list again: the store reuses it after all.
    #[inline]
    pub(super) fn take_back(&mut self, node: NodePtr) {
        let at = self.nodes.iter().rposition(|&n| n == node);
        debug_assert!(at.is_some(), "a node taken back was not retired");
        if let Some(at) = at {
            self.nodes.swap_remove(at);
        }
    }

    pub(super) fn push_subtree(&mut self, root: NodePtr) {
        self.subtrees.push(root);
    }
}

impl<V> MapleTree<V> {
    /// Gives back what `retired` holds: to the pool, or in RCU mode to the
    /// current garbage batch.
    ///
    /// Taken by reference: moving the list (about 180 bytes) into the call
    /// cost a `memcpy` per rebuild; and inlined: most rebuilds give back two
    /// or three nodes, which cost less than the call.
    ///
    /// # Safety
    /// Every node in `retired` belongs to this tree, is held once, and is
    /// linked from nowhere any more (the nodes that replace it are linked).
    /// The subtrees' values were moved out. `retired` is not released again.
    #[inline(always)]
    pub(super) unsafe fn release(&mut self, retired: &Retired) {
        match self.limbo_mut() {
            // SAFETY: the caller's promise; a plain tree has no readers
            // besides its writer.
            None => unsafe { self.pool_mut().free_all(&retired.nodes) },
            Some(limbo) => {
                for &node in retired.nodes.iter() {
                    limbo.push(crate::limbo::Garbage::Node(node));
                }
            }
        }
        if retired.subtrees.is_empty() {
            return;
        }
        for &root in retired.subtrees.iter() {
            for visit in Teardown::new(root) {
                match visit {
                    // SAFETY: the caller's promise; the walk is done with
                    // the node (post-order).
                    Visit::Node(node) => unsafe { self.retire_node(node) },
                    Visit::Value(_) => {
                        debug_assert!(false, "a retired subtree still held a value")
                    }
                }
            }
        }
    }
}
