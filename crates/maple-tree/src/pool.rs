//! The tree's own node allocator: chunks of nodes and a LIFO free list.
//!
//! A `malloc` per node costs the kernel's own tree 1.5–2.5× on stores and 6–13×
//! on duplication (shared/bench/ANCHORS.md). Each tree therefore owns a pool:
//! nodes are carved from chunks that grow from 4 to 8192 nodes (2 MiB), and a
//! freed node goes on a LIFO list so the next allocation reuses it while it is
//! still in cache. A pool gives its memory back when the tree is cleared or
//! dropped; until then freed nodes stay on the list.
//!
//! [`NodePool::reserve`] makes room for `n` nodes in one chunk, so that a
//! duplication lays the copy out contiguously in DFS order.

use crate::error::AllocError;
use crate::node::{Kind, Node, NodePtr, NODE_SIZE};
use alloc::alloc::{alloc, dealloc, Layout};
use alloc::vec::Vec;
use core::ptr::NonNull;

const FIRST_CHUNK: usize = 4;
const MAX_CHUNK: usize = 8192;

/// A per-tree node allocator.
pub(crate) struct NodePool {
    /// Every chunk taken from the system: start and length in nodes.
    chunks: Vec<(NonNull<Node>, usize)>,
    /// The untouched tail of the newest chunk: `bump..bump_end`.
    bump: usize,
    bump_end: usize,
    /// Freed nodes, linked through their first word.
    free: Option<NonNull<Node>>,
    /// Nodes handed out and not yet freed.
    live: usize,
}

// SAFETY: the pool owns its chunks outright; the raw pointers are not shared
// with anything outside the tree that owns the pool.
unsafe impl Send for NodePool {}
// SAFETY: `&NodePool` only reads counters.
unsafe impl Sync for NodePool {}

impl NodePool {
    pub(crate) const fn new() -> Self {
        NodePool {
            chunks: Vec::new(),
            bump: 0,
            bump_end: 0,
            free: None,
            live: 0,
        }
    }

    /// Nodes in use.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Bytes held from the system.
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.chunks.iter().map(|&(_, n)| n * NODE_SIZE).sum()
    }

    /// A node of `kind` with an empty header and an uninitialised body.
    #[inline]
    pub(crate) fn alloc(&mut self, kind: Kind) -> Result<NodePtr, AllocError> {
        #[cfg(feature = "failpoints")]
        crate::failpoints::tick()?;
        let raw = if let Some(node) = self.free {
            // SAFETY: a node on the free list holds the next link in its first word.
            self.free = unsafe { node.as_ptr().cast::<Option<NonNull<Node>>>().read() };
            node
        } else {
            if self.bump == self.bump_end {
                let grow = self
                    .chunks
                    .last()
                    .map_or(FIRST_CHUNK, |&(_, n)| (n * 2).min(MAX_CHUNK));
                self.add_chunk(grow)?;
            }
            let node = self.bump;
            self.bump += NODE_SIZE;
            // SAFETY: `bump` lies inside a live chunk, so it is non-null.
            unsafe { NonNull::new_unchecked(node as *mut Node) }
        };
        self.live += 1;
        Ok(NodePtr::init(raw, kind))
    }

    /// The infallible form: aborts through `handle_alloc_error` when memory runs out,
    /// as `Box` and `Vec` do.
    #[inline]
    pub(crate) fn alloc_or_abort(&mut self, kind: Kind) -> NodePtr {
        match self.alloc(kind) {
            Ok(node) => node,
            Err(AllocError) => alloc::alloc::handle_alloc_error(chunk_layout(1)),
        }
    }

    /// Returns a node to the free list. Its contents are not dropped.
    #[inline]
    pub(crate) fn free(&mut self, node: NodePtr) {
        let raw = node.as_raw();
        // SAFETY: the node is no longer part of any tree; its first word
        // becomes the free-list link.
        unsafe {
            raw.as_ptr()
                .cast::<Option<NonNull<Node>>>()
                .write(self.free)
        };
        self.free = Some(raw);
        self.live -= 1;
    }

    /// Makes sure the next `n` allocations that miss the free list come from one
    /// contiguous run of memory.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), AllocError> {
        let room = (self.bump_end - self.bump) / NODE_SIZE;
        if room < n {
            self.add_chunk(n)?;
        }
        Ok(())
    }

    /// Gives all memory back. Every node handed out must be forgotten first.
    pub(crate) fn reset(&mut self) {
        for (start, n) in self.chunks.drain(..) {
            // SAFETY: allocated in `add_chunk` with this layout and not yet freed.
            unsafe { dealloc(start.as_ptr().cast(), chunk_layout(n)) };
        }
        self.bump = 0;
        self.bump_end = 0;
        self.free = None;
        self.live = 0;
    }

    fn add_chunk(&mut self, nodes: usize) -> Result<(), AllocError> {
        let layout = chunk_layout(nodes);
        // SAFETY: the layout has a non-zero size.
        let start = NonNull::new(unsafe { alloc(layout) }.cast::<Node>()).ok_or(AllocError)?;
        self.chunks.push((start, nodes));
        self.bump = start.as_ptr() as usize;
        self.bump_end = self.bump + nodes * NODE_SIZE;
        Ok(())
    }
}

impl Drop for NodePool {
    fn drop(&mut self) {
        self.reset();
    }
}

fn chunk_layout(nodes: usize) -> Layout {
    Layout::from_size_align(nodes * NODE_SIZE, NODE_SIZE).expect("node chunk size overflows")
}
