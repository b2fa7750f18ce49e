//! The tree's own node allocator: chunks of nodes and a LIFO free list.
//!
//! A `malloc` per node costs the kernel's own tree 1.5–2.5× on stores and 6–13×
//! on duplication (BENCHMARKS.md, kernel reference numbers). Each tree therefore owns a pool:
//! nodes are carved from chunks whose sizes are powers of two from 4 to 8192
//! nodes (1 KiB to 2 MiB), and a freed node goes on a LIFO list so the next
//! allocation reuses it while it is still in cache.
//!
//! When a tree is cleared or dropped its chunks go to a cache of the current
//! thread (`chunk_cache`), from which the next pool on that thread takes them:
//! the chunk put last first, except that a run of chunks put together (trees
//! dropped together) comes back in ascending address order, so that a burst
//! of new trees writes memory upwards as fresh memory would be written.
//! Without it, every duplication would pay for `malloc` (most of the time of a
//! small copy) or, for a large one, for the kernel zeroing fresh pages (70% of
//! the time of a 1,000,000-entry copy, measured with `perf`). The cache holds
//! at most [`CACHE_LIMIT`] bytes per thread; [`release_cached_chunks`] gives
//! it back at once. Without the `std` feature there is no cache.
//!
//! [`NodePool::reserve_copy`] makes room for `n` nodes in one chunk, so that
//! a duplication lays the copy out contiguously in DFS order.

mod chunks;

use crate::error::AllocError;
use crate::node::{Kind, Node, NodePtr, NODE_SIZE};
use alloc::alloc::Layout;
use chunks::{Chunk, ChunkList};
use core::ptr::{self, NonNull};

/// Chunk size classes: class `c` holds `4 << c` nodes.
pub(crate) const CLASSES: usize = 12;
const MAX_CLASS: usize = CLASSES - 1;

/// The class of a tree's first chunk when it grows one node at a time: 4
/// nodes, which hold a tree of up to about 24 ranges. A rebuild of a plain
/// tree writes one node per level in place, so a small tree's splits fit
/// in it; the memory a small tree does not use is what many small trees
/// (a process's `fork`s, `rebuild` at N = 21) pay for in cache misses.
const FIRST_CLASS: usize = 0;

/// Most bytes of chunks one thread keeps for reuse.
pub const CACHE_LIMIT: usize = 128 << 20;

/// Nodes in a chunk of `class`.
#[inline]
const fn class_nodes(class: usize) -> usize {
    4 << class
}

/// The smallest class with room for `n` nodes (the largest class for more).
fn class_for(n: usize) -> usize {
    (0..MAX_CLASS)
        .find(|&c| class_nodes(c) >= n)
        .unwrap_or(MAX_CLASS)
}

/// Most nodes a pool hands out at once (and keeps freed): the counts are
/// 32-bit to keep the tree struct small. That is 1 TiB of nodes; past it,
/// allocation fails as if memory had run out.
const MAX_NODES: usize = u32::MAX as usize;

/// Where a copy's prefetch reads ([`NodePool::reserve_copy`]). Only ever
/// prefetched, never dereferenced: the next chunk belongs to the thread's
/// cache, and may go to another tree or back to the system.
pub(crate) struct CopyStream {
    /// The address one past the copy's last node in its chunk.
    end: usize,
    /// Past `end`, up to this address the prefetch goes to the next chunk
    /// (`limit == end` when there is none)...
    limit: usize,
    /// ...at this distance (wrapping) from where it would go in this one.
    shift: usize,
}

/// A per-tree node allocator.
///
/// 48 bytes: it lives in every tree struct (see `chunks` for why that matters).
pub(crate) struct NodePool {
    /// The untouched tail of the newest chunk: `bump..bump_end` (null when
    /// there is no chunk). Pointers, not addresses, so that nodes carved
    /// from the chunk keep its provenance.
    bump: *mut Node,
    bump_end: *mut Node,
    /// Freed nodes, linked through their first word.
    free: Option<NonNull<Node>>,
    /// How many nodes are on the free list.
    free_len: u32,
    /// Nodes handed out and not yet freed.
    live: u32,
    /// Every chunk, oldest first; the newest's class sets the next's.
    chunks: ChunkList,
}

// SAFETY: the pool owns its chunks outright; the raw pointers are not shared
// with anything outside the tree that owns the pool.
unsafe impl Send for NodePool {}
// SAFETY: `&NodePool` only reads counters.
unsafe impl Sync for NodePool {}

impl NodePool {
    pub(crate) const fn new() -> Self {
        NodePool {
            bump: ptr::null_mut(),
            bump_end: ptr::null_mut(),
            free: None,
            free_len: 0,
            live: 0,
            chunks: ChunkList::new(),
        }
    }

    /// Nodes in use.
    pub(crate) fn live(&self) -> usize {
        self.live as usize
    }

    /// Chunks held.
    #[cfg(test)]
    pub(crate) fn chunk_count(&self) -> usize {
        self.chunks.iter().count()
    }

    /// Bytes held from the system.
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| class_nodes(c.class()) * NODE_SIZE)
            .sum()
    }

    /// A node of `kind` with an empty header and an uninitialised body.
    #[inline]
    pub(crate) fn alloc(&mut self, kind: Kind) -> Result<NodePtr, AllocError> {
        Ok(NodePtr::init(self.alloc_raw()?, kind))
    }

    /// Memory for one node, entirely uninitialised.
    #[inline]
    pub(crate) fn alloc_raw(&mut self) -> Result<NonNull<Node>, AllocError> {
        #[cfg(feature = "failpoints")]
        crate::failpoints::tick()?;
        let raw = if let Some(node) = self.free {
            // SAFETY: a node on the free list holds the next link in its first word.
            self.free = unsafe { node.as_ptr().cast::<Option<NonNull<Node>>>().read() };
            self.free_len -= 1;
            node
        } else {
            if self.bump == self.bump_end {
                let class = self
                    .chunks
                    .last()
                    .map_or(FIRST_CLASS, |c| (c.class() + 1).min(MAX_CLASS));
                self.add_chunk(class)?;
            }
            let node = self.bump;
            // Stays inside the chunk or one past its end.
            self.bump = self.bump.wrapping_add(1);
            // SAFETY: `bump` lies inside a live chunk, so it is non-null.
            unsafe { NonNull::new_unchecked(node) }
        };
        self.live += 1;
        Ok(raw)
    }

    /// Makes sure the next `n` allocations that miss the free list come from
    /// contiguous memory: one chunk, or for more than 8192 nodes a 2 MiB chunk
    /// followed by more of the same size. Returns the stream a copy of `n`
    /// nodes then writes, for [`prefetch_copy`](Self::prefetch_copy)
    /// `ahead` nodes ahead.
    ///
    /// Copies made one after another (a process forking many children, a
    /// program duplicating many small trees) each take the next chunk of the
    /// thread's cache, and those come in ascending address order. A copy that
    /// fills its chunk is written as one stream with the next copy, which the
    /// hardware's prefetcher follows; one that leaves part of its chunk
    /// unused breaks that stream at every copy, and the next copy's first
    /// nodes then miss. So a copy's prefetch goes on past its own last node
    /// into the chunk the cache hands out next.
    #[inline]
    pub(crate) fn reserve_copy(
        &mut self,
        n: usize,
        ahead: usize,
    ) -> Result<CopyStream, AllocError> {
        let mut next = None;
        if self.bump_room() < n {
            let class = class_for(n);
            self.add_chunk(class)?;
            if n > class_nodes(class) {
                // The copy spans chunks: prefetch ahead regardless of chunk
                // ends. A prefetch never faults; past the end of a 2 MiB
                // chunk a few lines are read for nothing.
                return Ok(CopyStream {
                    end: usize::MAX,
                    limit: usize::MAX,
                    shift: 0,
                });
            }
            // The next chunk is of the same class; a copy so small that the
            // prefetch passes that chunk too before the copy starts never
            // reads it.
            if n + class_nodes(class) > ahead {
                next = chunk_cache::peek(class);
            }
        }
        let end = self.bump.wrapping_add(n).addr();
        Ok(match next {
            Some(chunk) => CopyStream {
                end,
                limit: end + class_nodes(chunk.class()) * NODE_SIZE,
                shift: chunk.start().as_ptr().addr().wrapping_sub(end),
            },
            None => CopyStream {
                end,
                limit: end,
                shift: 0,
            },
        })
    }

    /// Starts loading the memory of the node `ahead` allocations past the
    /// next one of the copy writing `stream`: in its own chunk, or past its
    /// last node, in the chunk that comes next (nothing beyond either).
    #[inline(always)]
    pub(crate) fn prefetch_copy(&self, ahead: usize, stream: &CopyStream) {
        let mut at = self.bump.wrapping_add(ahead);
        if at.addr() >= stream.end {
            if at.addr() >= stream.limit {
                return;
            }
            at = at.wrapping_byte_add(stream.shift);
        }
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = at.cast::<i8>().cast_const();
            // SAFETY: prefetching never faults, whatever the address.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(192));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// The infallible form: aborts through `handle_alloc_error` when memory runs out,
    /// as `Box` and `Vec` do.
    #[inline]
    pub(crate) fn alloc_or_abort(&mut self, kind: Kind) -> NodePtr {
        match self.alloc(kind) {
            Ok(node) => node,
            Err(AllocError) => alloc::alloc::handle_alloc_error(chunk_layout(0)),
        }
    }

    /// Returns a node to the free list. Its contents are not dropped.
    ///
    /// # Safety
    /// `node` came from this pool, is not already free, and is unreachable:
    /// no tree links it and no `NodePtr` to it (or reference into it) is used
    /// again — in RCU mode, not even by a reader that started before it was
    /// unlinked (such nodes go through the tree's grace-period machinery).
    #[inline]
    pub(crate) unsafe fn free(&mut self, node: NodePtr) {
        let raw = node.as_raw();
        // SAFETY: the caller's promise: the node is no longer part of any
        // tree; its first word becomes the free-list link.
        unsafe {
            raw.as_ptr()
                .cast::<Option<NonNull<Node>>>()
                .write(self.free)
        };
        self.free = Some(raw);
        self.free_len += 1;
        self.live -= 1;
    }

    /// Returns every node of `nodes` to the free list (the last one ends up
    /// on top), as [`free`](Self::free) would one by one, but with the list
    /// head and the counts updated once.
    ///
    /// # Safety
    /// As for [`free`](Self::free), for each node; no node appears twice.
    #[inline]
    pub(crate) unsafe fn free_all(&mut self, nodes: &[NodePtr]) {
        let mut head = self.free;
        for node in nodes {
            let raw = node.as_raw();
            // SAFETY: the caller's promise: the node is no longer part of
            // any tree; its first word becomes the free-list link.
            unsafe { raw.as_ptr().cast::<Option<NonNull<Node>>>().write(head) };
            head = Some(raw);
        }
        self.free = head;
        // Fewer than `live` nodes, so both stay within 32 bits.
        self.free_len += nodes.len() as u32;
        self.live -= nodes.len() as u32;
    }

    /// Makes sure `n` allocations can be served without asking the system.
    pub(crate) fn ensure_available(&mut self, n: usize) -> Result<(), AllocError> {
        let room = self.bump_room() + self.free_len as usize;
        if room < n {
            self.add_chunk(class_for(n - room))?;
        }
        Ok(())
    }

    /// Gives every chunk back (to this thread's cache, or to the system).
    /// Every node handed out must be forgotten first.
    pub(crate) fn reset(&mut self) {
        for c in self.chunks.take_all() {
            chunk_cache::put(c);
        }
        self.bump = ptr::null_mut();
        self.bump_end = ptr::null_mut();
        self.free = None;
        self.free_len = 0;
        self.live = 0;
    }

    fn add_chunk(&mut self, class: usize) -> Result<(), AllocError> {
        // Every node handed out from now until the next chunk comes from
        // this one, so checking here keeps both counts within 32 bits.
        let carved = self.live as usize + self.free_len as usize;
        if carved + class_nodes(class) > MAX_NODES {
            return Err(AllocError);
        }
        let chunk = match chunk_cache::take(class) {
            Some(chunk) => chunk,
            None => Chunk::alloc(class).ok_or(AllocError)?,
        };
        self.chunks.push(chunk);
        self.bump = chunk.start().as_ptr();
        // One past the end of the chunk.
        self.bump_end = self.bump.wrapping_add(class_nodes(class));
        Ok(())
    }

    /// Nodes left in the untouched tail of the newest chunk.
    fn bump_room(&self) -> usize {
        (self.bump_end.addr() - self.bump.addr()) / NODE_SIZE
    }
}

impl Drop for NodePool {
    fn drop(&mut self) {
        self.reset();
    }
}

/// The layout reported when a chunk cannot be allocated.
fn chunk_layout(class: usize) -> Layout {
    chunks::alloc_layout(class)
}

/// Gives every node chunk cached by the current thread back to the system.
///
/// Trees that are dropped or cleared leave their node memory in a cache of
/// the thread that dropped them (at most [`CACHE_LIMIT`] bytes), for the next
/// tree built on that thread. Call this after dropping large trees to return
/// the memory at once; a thread's cache is also freed when the thread ends.
///
/// ```
/// let big: maple_tree::MapleTree<u64> = (0..10_000u64).map(|i| (i..=i, i)).collect();
/// drop(big); // its nodes go to this thread's cache, for the next tree
/// maple_tree::release_cached_chunks(); // and now back to the system
/// ```
pub fn release_cached_chunks() {
    chunk_cache::release();
}

#[cfg(feature = "std")]
mod chunk_cache;

#[cfg(not(feature = "std"))]
mod chunk_cache {
    //! Without `std` there are no thread-locals: chunks go straight back.
    use super::Chunk;

    pub(super) fn take(_class: usize) -> Option<Chunk> {
        None
    }

    pub(super) fn peek(_class: usize) -> Option<Chunk> {
        None
    }

    pub(super) fn put(chunk: Chunk) {
        // SAFETY: a pool's chunk, given up by it and no longer used.
        unsafe { chunk.free() };
    }

    pub(super) fn release() {}
}

#[cfg(test)]
mod tests {
    use super::{class_nodes, AllocError, NodePool, MAX_NODES, NODE_SIZE};
    use alloc::vec::Vec;

    #[test]
    fn a_pool_refuses_a_chunk_that_could_take_its_counts_past_32_bits() {
        let mut pool = NodePool::new();
        // As if that many nodes had been handed out: room for 4 more.
        pool.live = (MAX_NODES - 4) as u32;
        pool.free_len = 0;
        assert!(pool.add_chunk(0).is_ok(), "4 more nodes fit");
        pool.live += 1;
        assert_eq!(pool.add_chunk(0), Err(AllocError), "5 more would not");
        // Nothing was really handed out; drop gives the chunk back.
        pool.live = 0;
    }

    // Each test runs on a thread of its own, with an empty chunk cache.

    #[cfg(feature = "std")]
    #[test]
    fn a_copy_prefetches_into_the_chunk_the_next_copy_takes() {
        // Three 32-node chunks in the cache, as dropped trees leave them.
        let pools: Vec<NodePool> = (0..3)
            .map(|_| {
                let mut p = NodePool::new();
                p.reserve_copy(20, 16).unwrap();
                p
            })
            .collect();
        drop(pools);
        let mut first = NodePool::new();
        let stream = first.reserve_copy(20, 16).unwrap();
        assert_eq!(stream.end, first.bump.wrapping_add(20).addr());
        assert_eq!(stream.limit - stream.end, class_nodes(3) * NODE_SIZE);
        let mut second = NodePool::new();
        second.reserve_copy(20, 16).unwrap();
        assert_eq!(
            stream.end.wrapping_add(stream.shift),
            second.bump.addr(),
            "past its end, the first copy prefetches the second's first nodes"
        );
    }

    #[test]
    fn a_copy_prefetches_nothing_it_cannot_reach_or_does_not_know() {
        // No chunk cached: nothing past the copy's end.
        let mut alone = NodePool::new();
        let stream = alone.reserve_copy(20, 16).unwrap();
        assert_eq!(stream.limit, stream.end);
        // Three nodes in a 4-node chunk, prefetching 16 ahead: the next
        // 4-node chunk lies wholly behind the prefetch when the copy starts.
        let small = (0..2)
            .map(|_| {
                let mut p = NodePool::new();
                p.reserve_copy(3, 16).unwrap();
                p
            })
            .collect::<Vec<_>>();
        drop(small);
        let mut tiny = NodePool::new();
        let stream = tiny.reserve_copy(3, 16).unwrap();
        assert_eq!(stream.limit, stream.end);
        // A copy over several chunks prefetches within them only.
        let mut big = NodePool::new();
        let stream = big.reserve_copy(class_nodes(11) + 1, 16).unwrap();
        assert_eq!((stream.end, stream.limit), (usize::MAX, usize::MAX));
    }
}
