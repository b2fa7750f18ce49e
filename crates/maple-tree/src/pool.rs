//! The tree's own node allocator: chunks of nodes and a LIFO free list.
//!
//! A `malloc` per node costs the kernel's own tree 1.5–2.5× on stores and 6–13×
//! on duplication (shared/bench/ANCHORS.md). Each tree therefore owns a pool:
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
//! [`NodePool::reserve`] makes room for `n` nodes in one chunk, so that a
//! duplication lays the copy out contiguously in DFS order.

use crate::error::AllocError;
use crate::node::{Kind, Node, NodePtr, NODE_SIZE};
use alloc::alloc::{alloc, Layout};
use alloc::vec::Vec;
use core::ptr::NonNull;

/// Chunk size classes: class `c` holds `4 << c` nodes.
pub(crate) const CLASSES: usize = 12;
const MAX_CLASS: usize = CLASSES - 1;

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

/// A chunk: its start and size class.
#[derive(Clone, Copy)]
struct Chunk {
    start: NonNull<Node>,
    class: usize,
}

/// How many chunks a pool lists without allocating (trees of up to 60 nodes).
const INLINE_CHUNKS: usize = 4;

/// A per-tree node allocator.
pub(crate) struct NodePool {
    /// The first chunks, then the rest in `more`.
    inline: [Option<Chunk>; INLINE_CHUNKS],
    more: Vec<Chunk>,
    /// The untouched tail of the newest chunk: `bump..bump_end` (addresses).
    bump: usize,
    bump_end: usize,
    /// Class of the newest chunk (the next grows by one class).
    last_class: Option<usize>,
    /// Freed nodes, linked through their first word, and how many.
    free: Option<NonNull<Node>>,
    free_len: usize,
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
            inline: [None; INLINE_CHUNKS],
            more: Vec::new(),
            bump: 0,
            bump_end: 0,
            last_class: None,
            free: None,
            free_len: 0,
            live: 0,
        }
    }

    /// Nodes in use.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    fn chunks(&self) -> impl Iterator<Item = Chunk> + '_ {
        self.inline
            .iter()
            .flatten()
            .copied()
            .chain(self.more.iter().copied())
    }

    /// Bytes held from the system.
    pub(crate) fn reserved_bytes(&self) -> usize {
        self.chunks()
            .map(|c| class_nodes(c.class) * NODE_SIZE)
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
                let class = self.last_class.map_or(0, |c| (c + 1).min(MAX_CLASS));
                self.add_chunk(class)?;
            }
            let node = self.bump;
            self.bump += NODE_SIZE;
            // SAFETY: `bump` lies inside a live chunk, so it is non-null.
            unsafe { NonNull::new_unchecked(node as *mut Node) }
        };
        self.live += 1;
        Ok(raw)
    }

    /// Starts loading the memory of the node `ahead` allocations past the
    /// next one from the current chunk (nothing if the chunk ends before).
    #[inline(always)]
    pub(crate) fn prefetch_ahead(&self, ahead: usize) {
        let at = self.bump + ahead * NODE_SIZE;
        if at < self.bump_end {
            #[cfg(target_arch = "x86_64")]
            {
                use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                let p = at as *const i8;
                // SAFETY: prefetching never faults.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(p);
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
                    _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(192));
                }
            }
        }
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
        self.free_len += 1;
        self.live -= 1;
    }

    /// Makes sure the next `n` allocations that miss the free list come from
    /// contiguous memory: one chunk, or for more than 8192 nodes a 2 MiB chunk
    /// followed by more of the same size.
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), AllocError> {
        let room = (self.bump_end - self.bump) / NODE_SIZE;
        if room < n {
            self.add_chunk(class_for(n))?;
        }
        Ok(())
    }

    /// Makes sure `n` allocations can be served without asking the system.
    pub(crate) fn ensure_available(&mut self, n: usize) -> Result<(), AllocError> {
        let room = (self.bump_end - self.bump) / NODE_SIZE + self.free_len;
        if room < n {
            self.add_chunk(class_for(n - room))?;
        }
        Ok(())
    }

    /// Gives every chunk back (to this thread's cache, or to the system).
    /// Every node handed out must be forgotten first.
    pub(crate) fn reset(&mut self) {
        for c in self
            .inline
            .iter_mut()
            .filter_map(Option::take)
            .chain(self.more.drain(..))
        {
            chunk_cache::put(c.start, c.class);
        }
        self.bump = 0;
        self.bump_end = 0;
        self.last_class = None;
        self.free = None;
        self.free_len = 0;
        self.live = 0;
    }

    fn add_chunk(&mut self, class: usize) -> Result<(), AllocError> {
        let start = match chunk_cache::take(class) {
            Some(start) => start,
            // SAFETY: the layout has a non-zero size.
            None => NonNull::new(unsafe { alloc(chunk_layout(class)) }.cast::<Node>())
                .ok_or(AllocError)?,
        };
        let chunk = Chunk { start, class };
        match self.inline.iter_mut().find(|c| c.is_none()) {
            Some(free) => *free = Some(chunk),
            None => self.more.push(chunk),
        }
        self.bump = start.as_ptr() as usize;
        self.bump_end = self.bump + class_nodes(class) * NODE_SIZE;
        self.last_class = Some(class);
        Ok(())
    }
}

impl Drop for NodePool {
    fn drop(&mut self) {
        self.reset();
    }
}

fn chunk_layout(class: usize) -> Layout {
    Layout::from_size_align(class_nodes(class) * NODE_SIZE, NODE_SIZE).expect("node chunk size")
}

/// Gives every node chunk cached by the current thread back to the system.
///
/// Trees that are dropped or cleared leave their node memory in a cache of
/// the thread that dropped them (at most [`CACHE_LIMIT`] bytes), for the next
/// tree built on that thread. Call this after dropping large trees to return
/// the memory at once; a thread's cache is also freed when the thread ends.
pub fn release_cached_chunks() {
    chunk_cache::release();
}

#[cfg(feature = "std")]
mod chunk_cache {
    //! Chunks of dropped trees, kept per thread for reuse.
    use super::{chunk_layout, class_nodes, Node, CACHE_LIMIT, CLASSES, NODE_SIZE};
    use alloc::alloc::dealloc;
    use alloc::vec::Vec;
    use core::cell::RefCell;
    use core::ptr::NonNull;

    struct Cache {
        free: [Vec<NonNull<Node>>; CLASSES],
        /// Per class, where the chunks put since the last take begin.
        run_from: [usize; CLASSES],
        bytes: usize,
    }

    impl Cache {
        const fn new() -> Self {
            Cache {
                free: [const { Vec::new() }; CLASSES],
                run_from: [0; CLASSES],
                bytes: 0,
            }
        }

        /// The next chunk of `class`: the one put last, except that a run of
        /// chunks put one after another mostly in ascending address order
        /// (trees dropped in the order they were made) is handed out lowest
        /// address first, so that a burst of new trees writes memory upwards,
        /// as chunks carved from fresh memory would be. Popping such a run
        /// from its end would walk memory downwards: a 21-entry `dup` then
        /// took 250 ns instead of 72 on the benchmark machine. Each chunk put
        /// is looked at by one such pass only, so the pass costs O(1) per put.
        fn pop(&mut self, class: usize) -> Option<NonNull<Node>> {
            let list = &mut self.free[class];
            let run = &mut list[self.run_from[class]..];
            let ascending = run.windows(2).filter(|w| w[0] < w[1]).count();
            if 2 * ascending > run.len().saturating_sub(1) {
                run.reverse();
            }
            let start = list.pop()?;
            self.run_from[class] = list.len();
            self.bytes -= class_nodes(class) * NODE_SIZE;
            Some(start)
        }

        /// Forgets the run of a class whose list was shortened from the end.
        fn clamp_run(&mut self, class: usize) {
            self.run_from[class] = self.run_from[class].min(self.free[class].len());
        }
    }

    impl Drop for Cache {
        fn drop(&mut self) {
            for (class, list) in self.free.iter_mut().enumerate() {
                for start in list.drain(..) {
                    // SAFETY: every cached chunk was allocated with this class's layout.
                    unsafe { dealloc(start.as_ptr().cast(), chunk_layout(class)) };
                }
            }
        }
    }

    std::thread_local! {
        static CACHE: RefCell<Cache> = const {
            RefCell::new(Cache::new())
        };
    }

    pub(super) fn take(class: usize) -> Option<NonNull<Node>> {
        CACHE.try_with(|c| c.borrow_mut().pop(class)).ok().flatten()
    }

    /// Keeps a chunk. When the cache is full, chunks of smaller classes make
    /// room (they are cheap to make again, and trees grown store by store
    /// leave many of them); if there are none, the chunk is freed.
    pub(super) fn put(start: NonNull<Node>, class: usize) {
        let size = class_nodes(class) * NODE_SIZE;
        let kept = CACHE
            .try_with(|c| {
                let mut c = c.borrow_mut();
                while c.bytes + size > CACHE_LIMIT {
                    let Some(small) = (0..class).find(|&k| !c.free[k].is_empty()) else {
                        return false;
                    };
                    let victim = c.free[small].pop().expect("non-empty class");
                    c.clamp_run(small);
                    c.bytes -= class_nodes(small) * NODE_SIZE;
                    // SAFETY: cached chunks of class `small` have its layout.
                    unsafe { dealloc(victim.as_ptr().cast(), chunk_layout(small)) };
                }
                c.bytes += size;
                c.free[class].push(start);
                true
            })
            .unwrap_or(false);
        if !kept {
            // SAFETY: allocated with this class's layout and no longer used.
            unsafe { dealloc(start.as_ptr().cast(), chunk_layout(class)) };
        }
    }

    pub(super) fn release() {
        let _ = CACHE.try_with(|c| {
            drop(core::mem::replace(&mut *c.borrow_mut(), Cache::new()));
        });
    }
}

#[cfg(not(feature = "std"))]
mod chunk_cache {
    //! Without `std` there are no thread-locals: chunks go straight back.
    use super::{chunk_layout, Node};
    use alloc::alloc::dealloc;
    use core::ptr::NonNull;

    pub(super) fn take(_class: usize) -> Option<NonNull<Node>> {
        None
    }

    pub(super) fn put(start: NonNull<Node>, class: usize) {
        // SAFETY: allocated with this class's layout and no longer used.
        unsafe { dealloc(start.as_ptr().cast(), chunk_layout(class)) };
    }

    pub(super) fn release() {}
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::{chunk_cache, chunk_layout, Node};
    use alloc::alloc::alloc;
    use alloc::vec::Vec;
    use core::ptr::NonNull;

    /// `n` fresh class-0 chunks, in ascending address order.
    fn chunks(n: usize) -> Vec<NonNull<Node>> {
        let mut v: Vec<_> = (0..n)
            // SAFETY: the layout has a non-zero size.
            .map(|_| NonNull::new(unsafe { alloc(chunk_layout(0)) }.cast::<Node>()).unwrap())
            .collect();
        v.sort();
        v
    }

    fn take_all(n: usize) -> Vec<NonNull<Node>> {
        (0..n).map(|_| chunk_cache::take(0).unwrap()).collect()
    }

    // Each test runs on a thread of its own, so it starts with an empty cache;
    // the cache frees what is left when the thread ends.

    #[test]
    fn a_run_put_in_ascending_order_comes_back_lowest_first() {
        let c = chunks(64);
        c.iter().for_each(|&p| chunk_cache::put(p, 0));
        assert_eq!(take_all(64), c);
        c.iter().for_each(|&p| chunk_cache::put(p, 0));
    }

    #[test]
    fn a_run_put_in_descending_order_also_comes_back_lowest_first() {
        let c = chunks(64);
        c.iter().rev().for_each(|&p| chunk_cache::put(p, 0));
        assert_eq!(take_all(64), c);
        c.iter().for_each(|&p| chunk_cache::put(p, 0));
    }

    #[test]
    fn a_single_chunk_put_is_the_next_taken() {
        let c = chunks(8);
        c.iter().for_each(|&p| chunk_cache::put(p, 0));
        let first = chunk_cache::take(0).unwrap();
        assert_eq!(first, c[0]);
        // Churn: one tree dropped, one made, reuses the chunk still in cache.
        chunk_cache::put(c[0], 0);
        assert_eq!(chunk_cache::take(0), Some(c[0]));
        chunk_cache::put(c[0], 0);
    }
}
