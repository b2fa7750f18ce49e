//! The old nodes a rebuild of a plain tree writes new contents into, as a
//! B-tree splits a node in place, and the contents they are to take.
//!
//! At each level, the first node a rebuild packs goes into the old node the
//! left path passes through, instead of a new one; only the others are new.
//! Nothing is freed and taken again, so the nodes that sequential stores
//! make lie in key order in memory, which every walk over the leaves
//! (iteration, duplication) runs faster on.
//!
//! The writes wait until every new node of the store has been made and
//! linked: until then the old nodes keep their contents (less the values
//! the store has already taken out of them), so a store that stopped half
//! way (an allocation failure that unwinds) would leave a tree that can be
//! walked and dropped, with only its new nodes lost. The leaf level's contents
//! are still in the rebuild's leaf buffer by then; the levels above are
//! packed from one reused buffer, so theirs are copied here (a node's worth
//! of items, at the rare levels above the leaves that are rebuilt).

use super::content::{Content, Item};
use super::pack::fill;
use crate::node::{NodePtr, RANGE_SLOTS};
use core::mem::MaybeUninit;
use smallvec::SmallVec;

/// Writes a rebuild still owes to old nodes.
pub(super) struct InPlace {
    /// The old leaf and how many of the leaf contents' items go into it.
    leaf: Option<(NodePtr, usize)>,
    /// Old internal nodes with their new contents.
    upper: SmallVec<[Run; 2]>,
}

/// The new contents of one old internal node.
struct Run {
    node: NodePtr,
    min: u64,
    /// `items[..len]` are initialised.
    items: [MaybeUninit<Item>; RANGE_SLOTS],
    len: usize,
}

impl Run {
    fn items(&self) -> &[Item] {
        // SAFETY: `items[..len]` are initialised, and `MaybeUninit<Item>`
        // has the layout of `Item`.
        unsafe { core::slice::from_raw_parts(self.items.as_ptr().cast::<Item>(), self.len) }
    }
}

impl InPlace {
    pub(super) fn new() -> InPlace {
        InPlace {
            leaf: None,
            upper: SmallVec::new(),
        }
    }

    /// Notes that the old leaf `node` is to take the first `len` items of
    /// the leaf contents.
    pub(super) fn leaf(&mut self, node: NodePtr, len: usize) {
        debug_assert!(self.leaf.is_none());
        self.leaf = Some((node, len));
    }

    /// Notes that the old internal node `node` is to take the first `len`
    /// items of `c`, which are copied now.
    pub(super) fn upper(&mut self, node: NodePtr, c: &Content, len: usize) {
        let mut run = Run {
            node,
            min: c.min,
            items: [const { MaybeUninit::uninit() }; RANGE_SLOTS],
            len,
        };
        for (to, from) in run.items.iter_mut().zip(&c.items()[..len]) {
            *to = MaybeUninit::new(*from);
        }
        self.upper.push(run);
    }

    /// Makes every write noted, the leaf's from the leaf contents `leaf`.
    /// Call it once the new nodes are linked (or, for a root read right
    /// after, just before), with nothing left that can fail.
    ///
    /// The nodes' largest gaps were worked out when they were packed, so
    /// `fill` is not asked for them again.
    #[inline]
    pub(super) fn write(&mut self, leaf: &Content) {
        if let Some((node, len)) = self.leaf.take() {
            fill(node, &leaf.items()[..len], leaf.min, false);
        }
        if !self.upper.is_empty() {
            for run in self.upper.iter() {
                fill(run.node, run.items(), run.min, false);
            }
            self.upper.clear();
        }
    }
}
