//! Chunks of dropped trees, kept per thread for reuse (with `std`).
//!
//! A pool gives its chunks here when its tree is cleared or dropped, and the
//! next pool made on the same thread takes them back instead of asking the
//! system allocator: see the parent module for why and for the order in
//! which they come back.

use super::{class_nodes, Chunk, CACHE_LIMIT, CLASSES, NODE_SIZE};
use alloc::vec::Vec;
use core::cell::RefCell;

struct Cache {
    free: [Vec<Chunk>; CLASSES],
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
    fn pop(&mut self, class: usize) -> Option<Chunk> {
        let list = &mut self.free[class];
        let run = &mut list[self.run_from[class]..];
        let ascending = run
            .windows(2)
            .filter(|w| w[0].start() < w[1].start())
            .count();
        if 2 * ascending > run.len().saturating_sub(1) {
            run.reverse();
        }
        let start = list.pop()?;
        self.run_from[class] = list.len();
        self.bytes -= class_nodes(class) * NODE_SIZE;
        Some(start)
    }

    /// The chunk [`pop`](Self::pop) returns next, unless chunks were put
    /// since the last pop (they may yet be reordered): then none.
    fn peek(&self, class: usize) -> Option<Chunk> {
        let list = &self.free[class];
        if self.run_from[class] < list.len() {
            return None;
        }
        list.last().copied()
    }

    /// Forgets the run of a class whose list was shortened from the end.
    fn clamp_run(&mut self, class: usize) {
        self.run_from[class] = self.run_from[class].min(self.free[class].len());
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        for list in &mut self.free {
            for chunk in list.drain(..) {
                // SAFETY: a cached chunk is no pool's any more.
                unsafe { chunk.free() };
            }
        }
    }
}

std::thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache::new())
    };
}

/// The chunk of `class` that [`take`] would hand out next, if that is
/// known without reordering: right after a take, the one on top.
pub(super) fn peek(class: usize) -> Option<Chunk> {
    CACHE.try_with(|c| c.borrow().peek(class)).ok().flatten()
}

pub(super) fn take(class: usize) -> Option<Chunk> {
    CACHE.try_with(|c| c.borrow_mut().pop(class)).ok().flatten()
}

/// Keeps a chunk. When the cache is full, chunks of smaller classes make
/// room (they are cheap to make again, and trees grown store by store
/// leave many of them); if there are none, the chunk is freed.
pub(super) fn put(chunk: Chunk) {
    let class = chunk.class();
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
                // SAFETY: a cached chunk is no pool's any more.
                unsafe { victim.free() };
            }
            c.bytes += size;
            c.free[class].push(chunk);
            true
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: a pool's chunk, given up by it and no longer used.
        unsafe { chunk.free() };
    }
}

pub(super) fn release() {
    let _ = CACHE.try_with(|c| {
        drop(core::mem::replace(&mut *c.borrow_mut(), Cache::new()));
    });
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super as chunk_cache;
    use super::Chunk;
    use alloc::vec::Vec;

    /// `n` fresh class-0 chunks, in ascending address order.
    fn chunks(n: usize) -> Vec<Chunk> {
        let mut v: Vec<_> = (0..n).map(|_| Chunk::alloc(0).unwrap()).collect();
        v.sort_by_key(|c| c.start());
        v
    }

    fn take_all(n: usize) -> Vec<Chunk> {
        (0..n).map(|_| chunk_cache::take(0).unwrap()).collect()
    }

    // Each test runs on a thread of its own, so it starts with an empty cache;
    // the cache frees what is left when the thread ends.

    #[test]
    fn a_run_put_in_ascending_order_comes_back_lowest_first() {
        let c = chunks(64);
        c.iter().for_each(|&p| chunk_cache::put(p));
        assert_eq!(take_all(64), c);
        c.iter().for_each(|&p| chunk_cache::put(p));
    }

    #[test]
    fn a_run_put_in_descending_order_also_comes_back_lowest_first() {
        let c = chunks(64);
        c.iter().rev().for_each(|&p| chunk_cache::put(p));
        assert_eq!(take_all(64), c);
        c.iter().for_each(|&p| chunk_cache::put(p));
    }

    #[test]
    fn a_single_chunk_put_is_the_next_taken() {
        let c = chunks(8);
        c.iter().for_each(|&p| chunk_cache::put(p));
        let first = chunk_cache::take(0).unwrap();
        assert_eq!(first, c[0]);
        // Churn: one tree dropped, one made, reuses the chunk still in cache.
        chunk_cache::put(c[0]);
        assert_eq!(chunk_cache::take(0), Some(c[0]));
        chunk_cache::put(c[0]);
    }
}
