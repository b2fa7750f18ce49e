//! Deferred reclamation for RCU mode: what a write replaced waits here until
//! no reader can still be looking at it.
//!
//! A tree in RCU mode never frees a node or drops a value that a reader may
//! reach. Everything a write unlinks goes into the current batch: nodes,
//! whole subtrees (a spanning store or `clear` unlinks them at once) and
//! values. When the write is done and its result published, the batch
//! closes. From time to time the concurrent tree hands the epoch collector a
//! note (`rcu.rs`), which raises `safe` to the note's generation once every
//! reader pinned at that moment has left; later writes free what the notes
//! up to `safe` cover.
//!
//! One note covers every batch closed before it: whatever those batches
//! unlinked was unpublished before the note was made, so a reader that could
//! still see it was pinned at that moment, and the note waits for it. Small
//! batches are therefore not noted one by one: up to `FLUSH_PENDING` of them
//! wait, then one note is handed over for them all ([`Limbo::after_write`]).
//! A large batch is noted at once. Since nothing is freed but what a note
//! covers, a batch needs no mark of its own: the limbo keeps one mark per
//! note, the number of items and batches it covers. A tree whose owner holds
//! it exclusively (drop, `into_inner`) frees everything at once: no reader
//! can exist then.
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
use alloc::vec::Vec;
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
#[derive(Clone, Copy)]
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
/// All of it lies in one vector, oldest first: what the notes handed over
/// cover, then the closed batches no note covers yet, then the current one.
/// A note is a count of items, not a vector of its own: with a vector per
/// batch, each write grew a new one from nothing and freeing a batch
/// gathered it into another, which cost the RCU writer about 900
/// instructions per store in `maple bench --workload rcu_write` (callgrind),
/// about as much as the store itself.
///
/// Items are freed from the front, a note's worth at a time, by moving
/// `oldest` past them; the vector is emptied, or its rest moved down, once
/// at least half of it is freed. A `VecDeque` would need no moves, but each
/// push and each step of the freeing loop would work out where the item
/// lies in its ring; a vector is pushed and read as a slice.
pub(crate) struct Limbo {
    items: Vec<Garbage>,
    /// Items before this one are freed.
    oldest: usize,
    /// The notes handed to the collector whose items wait, oldest first.
    notes: VecDeque<Note>,
    /// Where the current batch starts in `items` (it runs to the end).
    current_start: usize,
    /// Whether the current batch holds a whole subtree.
    current_has_subtree: bool,
    /// Closed batches no note covers yet (before the current one in
    /// `items`): how many and their items, as the note that will cover them
    /// (its generation is given when it is made), and whether one of them
    /// is large.
    unnoted: Note,
    unnoted_large: bool,
    /// Batches closed and not yet freed, noted or not.
    waiting: usize,
    /// The generation of the last note handed to the collector.
    noted: u64,
    /// Notes of generation up to this one have arrived: what they cover may
    /// be freed.
    pub(crate) safe: Arc<AtomicU64>,
}

/// What one note covers: the batches closed since the note before it.
#[derive(Clone, Copy, Default)]
struct Note {
    generation: u64,
    items: usize,
    batches: usize,
}

impl Limbo {
    pub(crate) fn new() -> Self {
        Limbo {
            items: Vec::new(),
            oldest: 0,
            notes: VecDeque::new(),
            current_start: 0,
            current_has_subtree: false,
            unnoted: Note::default(),
            unnoted_large: false,
            waiting: 0,
            noted: 0,
            safe: Arc::new(AtomicU64::new(0)),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, g: Garbage) {
        self.current_has_subtree |= matches!(g, Garbage::Subtree(_));
        self.items.push(g);
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

    /// Closes the current batch, if it holds anything: it joins those no
    /// note covers yet.
    #[inline]
    fn close_batch(&mut self) {
        let current = self.items.len() - self.current_start;
        if current == 0 {
            return;
        }
        self.unnoted.items += current;
        self.unnoted.batches += 1;
        self.waiting += 1;
        self.unnoted_large |= current >= LARGE_BATCH || self.current_has_subtree;
        self.current_start = self.items.len();
        self.current_has_subtree = false;
    }

    /// Closes the write's batch (if it unlinked anything) and says what the
    /// writer must do with the epoch collector, after the write's result is
    /// published.
    ///
    /// A note is made for the batches no note covers yet when more than
    /// [`FLUSH_PENDING`] of them wait and no note is on its way, or when one
    /// of them is large. While a note is on its way, every write helps the
    /// collector, so the note arrives within a few writes, not whenever the
    /// collector next looks; and no second note is made for small batches
    /// meanwhile, so a reader that stays pinned for long does not make
    /// every write hand over a bag of its own.
    #[inline]
    pub(crate) fn after_write(&mut self) -> Handover {
        self.close_batch();
        let in_flight = self.safe.load(Ordering::Acquire) < self.noted;
        let backlog = self.unnoted.batches > FLUSH_PENDING && !in_flight;
        if self.unnoted.batches != 0 && (backlog || self.unnoted_large) {
            self.noted += 1;
            let note = Note {
                generation: self.noted,
                ..self.unnoted
            };
            self.notes.push_back(note);
            self.unnoted = Note::default();
            self.unnoted_large = false;
            Handover::Note(note.generation)
        } else if in_flight {
            Handover::Collect
        } else {
            Handover::Nothing
        }
    }

    /// Batches still waiting.
    pub(crate) fn pending(&self) -> usize {
        self.waiting + (self.items.len() != self.current_start) as usize
    }

    /// Whether the oldest note has arrived: what it covers no reader can see
    /// any more.
    #[inline]
    fn any_reclaimable(&self) -> bool {
        self.notes
            .front()
            .is_some_and(|note| note.generation <= self.safe.load(Ordering::Acquire))
    }

    /// How many of the oldest items the arrived notes cover; forgets those
    /// notes (their items are the caller's to free, then to
    /// [`forget_oldest`](Self::forget_oldest)).
    fn take_reclaimable(&mut self) -> usize {
        let safe = self.safe.load(Ordering::Acquire);
        let mut n = 0;
        while let Some(&note) = self.notes.front() {
            if note.generation > safe {
                break;
            }
            n += note.items;
            self.waiting -= note.batches;
            self.notes.pop_front();
        }
        n
    }

    /// Forgets the oldest `n` items, which were freed. The rest move to the
    /// front once at least half of the vector is freed: a move then never
    /// takes more items than were freed since the one before.
    fn forget_oldest(&mut self, n: usize) {
        self.oldest += n;
        if self.oldest == self.items.len() {
            // `Garbage` has no drop glue: this only sets the length.
            self.items.clear();
        } else if 2 * self.oldest >= self.items.len() {
            self.items.drain(..self.oldest);
        } else {
            return;
        }
        self.current_start -= self.oldest;
        self.oldest = 0;
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
            free_oldest(pool, limbo, n, dispose);
        }
    }

    /// Frees all garbage at once. Only for an owner that holds the tree
    /// exclusively (no reader can exist).
    pub(crate) fn reclaim_all(&mut self) {
        let (pool, Some(limbo)) = self.pool_and_limbo_mut() else {
            return;
        };
        limbo.notes.clear();
        limbo.current_start = limbo.items.len();
        limbo.current_has_subtree = false;
        limbo.unnoted = Note::default();
        limbo.unnoted_large = false;
        limbo.waiting = 0;
        let n = limbo.items.len() - limbo.oldest;
        free_oldest(pool, limbo, n, drop::<V>);
    }
}

/// Frees the oldest `n` items of `limbo` and forgets them: nodes, whole
/// subtrees with their values, and values of a tree of `V`s, each value
/// handed to `dispose`. A subtree's values were counted out of the tree's
/// `len` when it was unlinked. If `dispose` (a value's `Drop`) panics, the
/// rest are still disposed of and the nodes still freed (`teardown.rs`), and
/// the `n` items are still forgotten, so none is freed twice.
fn free_oldest<V>(pool: &mut NodePool, limbo: &mut Limbo, n: usize, mut dispose: impl FnMut(V)) {
    /// Forgets the freed items when done, or when a `dispose` panics (after
    /// `for_each_guarded` has freed the rest).
    struct ForgetOnExit<'a> {
        limbo: &'a mut Limbo,
        n: usize,
    }
    impl Drop for ForgetOnExit<'_> {
        fn drop(&mut self) {
            self.limbo.forget_oldest(self.n);
        }
    }
    let freed = ForgetOnExit { limbo, n };
    let start = freed.limbo.oldest;
    let garbage = freed.limbo.items[start..start + n].iter().copied();
    for_each_guarded(garbage, |g| match g {
        // SAFETY: a batch is freed after a grace period that outlasts
        // every reader that could see its nodes; the writer unlinked
        // them and retired each once.
        Garbage::Node(node) => unsafe { pool.free(node) },
        // SAFETY: as for a node; the subtree's values are retired with it.
        Garbage::Subtree(root) => unsafe { free_subtree(pool, root, &mut dispose) },
        // SAFETY: a retired value word holds a `V` of this tree that
        // no node or reader will use again; it is taken only here, and
        // the item is forgotten after this call.
        Garbage::Value(word) => dispose(unsafe { word_value::<V>(word) }),
    });
}

/// Frees an unlinked subtree and disposes of its values (see
/// [`free_oldest`]). Out of line: subtrees are rare (a spanning store,
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
