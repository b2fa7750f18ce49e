//! Chunks of dropped trees, kept per thread for reuse (with `std`).
//!
//! A pool gives its chunks here when its tree is cleared or dropped, and the
//! next pool made on the same thread takes them back instead of asking the
//! system allocator: see the parent module for why and for the order in
//! which they come back.

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

pub(crate) fn take(class: usize) -> Option<NonNull<Node>> {
    CACHE.try_with(|c| c.borrow_mut().pop(class)).ok().flatten()
}

/// Keeps a chunk. When the cache is full, chunks of smaller classes make
/// room (they are cheap to make again, and trees grown store by store
/// leave many of them); if there are none, the chunk is freed.
pub(crate) fn put(start: NonNull<Node>, class: usize) {
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

pub(crate) fn release() {
    let _ = CACHE.try_with(|c| {
        drop(core::mem::replace(&mut *c.borrow_mut(), Cache::new()));
    });
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super as chunk_cache;
    use super::super::{chunk_layout, Node};
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
