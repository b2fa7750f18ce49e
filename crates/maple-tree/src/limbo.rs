//! Deferred reclamation for RCU mode: what a write replaced waits here until
//! no reader can still be looking at it.
//!
//! A tree in RCU mode never frees a node or drops a value that a reader may
//! reach. Everything a write unlinks goes into the current batch: nodes,
//! whole subtrees (a spanning store or `clear` unlinks them at once) and
//! values. When the write is done and its result published, the batch is
//! sealed with a generation number, and the concurrent tree asks the epoch
//! collector to raise `safe` to that generation once every reader pinned at
//! that moment has left (`rcu.rs`). Later writes free the batches whose
//! generation is at most `safe`.
//!
//! One note covers every batch sealed before it: whatever those batches
//! unlinked was unpublished before the note was made, so a reader that could
//! still see it was pinned at that moment, and the note waits for it. Small
//! batches are therefore not noted one by one: up to `FLUSH_PENDING` of them
//! wait, then one note is handed over for them all ([`Limbo::after_write`]).
//! A large batch is noted at once. A tree whose owner holds it exclusively
//! (drop, `into_inner`) frees everything at once: no reader can exist then.
//!
//! Values are dropped exactly once, here, after the grace period. A node
//! copied into a rebuilt node keeps a bitwise copy of each small value it
//! held; the old node is only ever freed as memory, its copies never dropped.
//! A small value without drop glue (an integer, say) is therefore not kept
//! here at all when it is removed: dropping it does nothing, and readers
//! read it in the old node, which waits here.

#![cfg_attr(not(feature = "std"), allow(dead_code))]

use crate::node::{is_inline, word_value, NodePtr, Word};
use crate::pool::NodePool;
use crate::teardown::{for_each_guarded, Teardown, Visit};
use crate::tree::MapleTree;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

/// A batch of at least this many items is large: it is noted at once (see
/// [`Limbo::after_write`]).
pub(crate) const LARGE_BATCH: usize = 64;

/// Up to this many small batches wait before one note is made for them all.
///
/// Every note costs the writer an epoch pin and a deferred function, and
/// handing notes over costs a bag and an attempt to advance the epoch, which
/// reads every pinned reader's epoch word (a reader that pins per lookup then
/// has to take that cache line back from the writer's CPU). Noting only when
/// this many batches wait bounds the memory they hold and makes that cost
/// rare: about one write in this many pays it, and the few after it pay a
/// pin and a flush that help the collector deliver the note.
pub(crate) const FLUSH_PENDING: usize = 128;

/// What the writer must do with the epoch collector after a write
/// ([`Limbo::after_write`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Handover {
    /// Nothing: no batch needs hurrying and no note is on its way.
    Nothing,
    /// Defer a note that raises `safe` to this generation, and hand it over
    /// to the collector at once.
    Note(u64),
    /// A note handed over earlier is on its way: help the collector along
    /// (advance the epoch, run what expired) so that it arrives within a
    /// few writes.
    Collect,
}

/// Something a write unlinked.
pub(crate) enum Garbage {
    /// A node whose contents were copied elsewhere: only its memory goes.
    Node(NodePtr),
    /// A subtree with its values.
    Subtree(NodePtr),
    /// A value (slot word) that was removed or replaced.
    Value(Word),
}

/// The garbage of one tree in RCU mode.
///
/// All of it lies in one ring, oldest first: the sealed batches, then the
/// current one. A batch is a count of items, not a vector of its own: with a
/// vector per batch, each write grew a new one from nothing and freeing a
/// batch gathered it into another, which cost the RCU writer about 900
/// instructions per store in `maple bench --workload rcu_write` (callgrind),
/// about as much as the store itself.
pub(crate) struct Limbo {
    items: VecDeque<Garbage>,
    /// The sealed batches, oldest first: generation and number of items.
    sealed: VecDeque<(u64, usize)>,
    /// Items of the current batch (the last ones in `items`).
    current: usize,
    /// Whether the current batch holds a whole subtree.
    current_has_subtree: bool,
    next_gen: u64,
    /// The generation of the last large batch (see [`Limbo::seal`]).
    last_large: u64,
    /// The generation of the last note handed to the collector: every batch
    /// up to it will become safe without another note.
    noted: u64,
    /// Batches of generation up to this one may be freed.
    pub(crate) safe: Arc<AtomicU64>,
}

impl Limbo {
    pub(crate) fn new() -> Self {
        Limbo {
            items: VecDeque::new(),
            sealed: VecDeque::new(),
            current: 0,
            current_has_subtree: false,
            next_gen: 1,
            last_large: 0,
            noted: 0,
            safe: Arc::new(AtomicU64::new(0)),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, g: Garbage) {
        self.current_has_subtree |= matches!(g, Garbage::Subtree(_));
        self.items.push_back(g);
        self.current += 1;
    }

    /// Retires a value of `V` that a write removed: it is dropped after
    /// the readers that may still see it have left. A value that lives in
    /// its slot word and has no drop glue owns nothing, so it is not kept:
    /// readers read it in the old node's copy, which waits here as a node.
    #[inline]
    pub(crate) fn push_value<V>(&mut self, word: Word) {
        if !is_inline::<V>() || core::mem::needs_drop::<V>() {
            self.push(Garbage::Value(word));
        }
    }

    /// Closes the current batch, if it holds anything, as the next
    /// generation.
    fn seal(&mut self) {
        if self.current == 0 {
            return;
        }
        let generation = self.next_gen;
        self.next_gen += 1;
        if self.current >= LARGE_BATCH || self.current_has_subtree {
            self.last_large = generation;
        }
        self.sealed.push_back((generation, self.current));
        self.current = 0;
        self.current_has_subtree = false;
    }

    /// Seals the write's batch (if it unlinked anything) and says what the
    /// writer must do with the epoch collector, after the write's result is
    /// published.
    ///
    /// A note is made for the newest sealed batch (it covers every older
    /// one) when more than [`FLUSH_PENDING`] batches wait and no note is on
    /// its way, or when a large batch is not yet covered by a note. While a
    /// note is on its way, every write helps the collector, so the note
    /// arrives within a few writes, not whenever the collector next looks;
    /// and no second note is made for small batches meanwhile, so a reader
    /// that stays pinned for long does not make every write hand over a
    /// bag of its own.
    pub(crate) fn after_write(&mut self) -> Handover {
        self.seal();
        let newest = self.next_gen - 1;
        let in_flight = self.safe.load(Ordering::Acquire) < self.noted;
        let backlog = self.pending() > FLUSH_PENDING && !in_flight;
        if newest > self.noted && (backlog || self.last_large > self.noted) {
            self.noted = newest;
            Handover::Note(newest)
        } else if in_flight {
            Handover::Collect
        } else {
            Handover::Nothing
        }
    }

    /// Batches still waiting.
    pub(crate) fn pending(&self) -> usize {
        self.sealed.len() + (self.current != 0) as usize
    }

    /// Whether the oldest batch is one no reader can see any more.
    #[inline]
    fn any_reclaimable(&self) -> bool {
        self.sealed
            .front()
            .is_some_and(|&(generation, _)| generation <= self.safe.load(Ordering::Acquire))
    }

    /// How many of the oldest items belong to batches no reader can see any
    /// more; forgets those batches (their items are the caller's to free).
    fn take_reclaimable(&mut self) -> usize {
        let safe = self.safe.load(Ordering::Acquire);
        let mut n = 0;
        while let Some(&(generation, count)) = self.sealed.front() {
            if generation > safe {
                break;
            }
            n += count;
            self.sealed.pop_front();
        }
        n
    }
}

impl<V> MapleTree<V> {
    /// Frees the batches no reader can see any more, handing each value
    /// they hold to `dispose` (which drops it, or keeps what it owns for
    /// reuse).
    ///
    /// Called after every write, and usually nothing is ready: that is
    /// checked inline, the freeing is a call.
    #[inline]
    pub(crate) fn reclaim(&mut self, dispose: impl FnMut(V)) {
        if self
            .limbo_mut()
            .is_some_and(|limbo| limbo.any_reclaimable())
        {
            self.reclaim_ready(dispose);
        }
    }

    #[inline(never)]
    fn reclaim_ready(&mut self, dispose: impl FnMut(V)) {
        let (pool, Some(limbo)) = self.pool_and_limbo_mut() else {
            return;
        };
        let n = limbo.take_reclaimable();
        if n != 0 {
            free_garbage(pool, limbo.items.drain(..n), dispose);
        }
    }

    /// Frees all garbage at once. Only for an owner that holds the tree
    /// exclusively (no reader can exist).
    pub(crate) fn reclaim_all(&mut self) {
        let (pool, Some(limbo)) = self.pool_and_limbo_mut() else {
            return;
        };
        limbo.sealed.clear();
        limbo.current = 0;
        limbo.current_has_subtree = false;
        free_garbage(pool, limbo.items.drain(..), drop::<V>);
    }
}

/// Frees what batches hold: nodes, whole subtrees with their values, and
/// values of a tree of `V`s, each value handed to `dispose`. A subtree's
/// values were counted out of the tree's `len` when it was unlinked. If
/// `dispose` (a value's `Drop`) panics, the rest are still disposed of and
/// the nodes still freed (`teardown.rs`), and the drain still removes every
/// item, so none is freed twice.
fn free_garbage<V>(
    pool: &mut NodePool,
    garbage: impl Iterator<Item = Garbage>,
    mut dispose: impl FnMut(V),
) {
    for_each_guarded(garbage, |g| match g {
        // SAFETY: a batch is freed after a grace period that outlasts
        // every reader that could see its nodes; the writer unlinked
        // them and retired each once.
        Garbage::Node(node) => unsafe { pool.free(node) },
        // SAFETY: as for a node; the subtree's values are retired with it.
        Garbage::Subtree(root) => unsafe { free_subtree(pool, root, &mut dispose) },
        // SAFETY: a retired value word holds a `V` of this tree that
        // no node or reader will use again; it is taken only here.
        Garbage::Value(word) => dispose(unsafe { word_value::<V>(word) }),
    });
}

/// Frees an unlinked subtree and disposes of its values (see
/// [`free_garbage`]). Out of line: subtrees are rare (a spanning store,
/// `clear`), and with the walk inline the step over each node and value
/// of a batch was a call of its own, about 19 instructions each
/// (callgrind).
///
/// # Safety
/// `root` is the root of a subtree of `V`s that no node links to and no
/// reader can reach any more, retired once.
#[inline(never)]
unsafe fn free_subtree<V>(pool: &mut NodePool, root: NodePtr, dispose: &mut impl FnMut(V)) {
    for_each_guarded(Teardown::new(root), |visit| match visit {
        // SAFETY: an unlinked subtree's values belong to no node or reader
        // any more (the caller's promise); the walk yields each one once.
        Visit::Value(word) => dispose(unsafe { word_value::<V>(word) }),
        // SAFETY: no reader can reach the subtree's nodes (the caller's
        // promise); the walk is done with the node (post-order).
        Visit::Node(node) => unsafe { pool.free(node) },
    })
}
