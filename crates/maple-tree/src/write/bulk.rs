//! Bulk build: a tree made from entries in ascending order, packed bottom-up.
//!
//! Each level keeps the contents of the node it is filling. A full node is
//! written out and becomes one child in the level above; at the end the
//! partial node of each level is written out, bottom up, and the single node
//! left at the top is the root. Every node but the last of its level is full,
//! which the tree allows (the last node of a level may run short), and no node
//! is ever split or rewritten.

use super::content::Content;
use super::pack::fill;
use crate::node::{value_word, Kind, NodePtr};
use crate::tree::MapleTree;
use crate::walk::MAX_HEIGHT;
use alloc::vec::Vec;

/// Builds a tree from entries that arrive in ascending, non-overlapping order.
pub(crate) struct Bulk<V> {
    tree: MapleTree<V>,
    /// The node being filled at each level; `levels[0]` is the leaf level.
    levels: Vec<Content>,
    /// The first index not yet covered.
    next: u64,
    /// Whether `next` has passed `u64::MAX` (an entry ended there).
    full: bool,
}

impl<V> Bulk<V> {
    pub(crate) fn new(tree: MapleTree<V>) -> Self {
        debug_assert!(tree.root().is_none());
        Bulk {
            tree,
            levels: Vec::new(),
            next: 0,
            full: false,
        }
    }

    /// Whether `first..=last` can follow what was added so far.
    pub(crate) fn accepts(&self, first: u64) -> bool {
        !self.full && first >= self.next
    }

    /// Adds an entry; [`accepts`](Self::accepts) must have said yes.
    pub(crate) fn push(&mut self, first: u64, last: u64, value: V) {
        debug_assert!(self.accepts(first) && first <= last);
        if first > self.next {
            self.push_item(0, first - 1, None);
        }
        self.push_item(0, last, Some(value_word(value)));
        self.tree.entries_added(1);
        match last.checked_add(1) {
            Some(n) => self.next = n,
            None => self.full = true,
        }
    }

    fn kind(&self, level: usize) -> Kind {
        if level == 0 {
            Kind::Leaf
        } else {
            self.tree.internal_kind()
        }
    }

    fn push_item(&mut self, level: usize, end: u64, word: Option<crate::node::Word>) {
        if self.levels.len() == level {
            assert!(
                level < MAX_HEIGHT,
                "maple tree taller than {MAX_HEIGHT} levels"
            );
            // A level is started by its first node, which begins at index 0.
            self.levels.push(Content::new(0));
        }
        if self.levels[level].len == self.kind(level).capacity() {
            self.emit(level);
        }
        let c = &mut self.levels[level];
        match (level, word) {
            (0, w) => c.push_leaf(end, w),
            // SAFETY: words above level 0 are the children `emit` made.
            (_, Some(w)) => c.push_child(end, unsafe { crate::node::word_child(w) }, 0),
            (_, None) => unreachable!("an internal slot always has a child"),
        }
    }

    /// Writes out the node being filled at `level` as a child of the level above.
    fn emit(&mut self, level: usize) {
        let kind = self.kind(level);
        let node = self.tree.pool_mut().alloc_or_abort(kind);
        let c = &self.levels[level];
        let gap = fill(node, c.items(), c.min, self.tree.is_alloc());
        let max = c.max();
        self.levels[level].reset(max.wrapping_add(1));
        self.push_child(level + 1, node, max, gap);
    }

    fn push_child(&mut self, level: usize, node: NodePtr, max: u64, gap: u64) {
        self.push_item(level, max, Some(crate::node::child_word(node)));
        self.levels[level].last_mut().aux = gap;
    }

    /// Covers the rest of the space and returns the tree.
    pub(crate) fn finish(mut self) -> MapleTree<V> {
        self.complete();
        // `self` now owns an empty tree of the same kind; its drop is a no-op.
        let empty = MapleTree::empty_like(self.tree.is_alloc());
        core::mem::replace(&mut self.tree, empty)
    }

    /// Writes out every partial node and installs the root. Afterwards the
    /// tree owns every value pushed so far.
    fn complete(&mut self) {
        if self.levels.is_empty() {
            return;
        }
        if !self.full {
            self.push_item(0, u64::MAX, None);
        }
        let mut level = 0;
        while level + 1 < self.levels.len() {
            if self.levels[level].len > 0 {
                self.emit(level);
            }
            level += 1;
        }
        // The top level holds the root's contents.
        let kind = self.kind(level);
        let root = self.tree.pool_mut().alloc_or_abort(kind);
        let c = &self.levels[level];
        fill(root, c.items(), 0, self.tree.is_alloc());
        let mut root = root;
        let mut height = level + 1;
        while height > 1 && root.count() == 1 {
            let child = root.child(0);
            // SAFETY: a single-child root made just above and never linked:
            // its child becomes the root instead.
            unsafe { self.tree.pool_mut().free(root) };
            root = child;
            height -= 1;
        }
        self.tree.set_top(Some(root), height);
        // The tree owns every value now; nothing is left to write out.
        self.levels.clear();
    }
}

impl<V> Drop for Bulk<V> {
    /// A build abandoned part way (the input iterator or a range check
    /// panicked) still owns the values pushed so far: they become a tree,
    /// which drops them.
    fn drop(&mut self) {
        self.complete();
    }
}
