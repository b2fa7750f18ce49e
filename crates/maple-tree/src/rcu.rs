//! The concurrent tree (kernel: a maple tree in RCU mode): readers never lock
//! and never wait while one writer writes.
//!
//! # How readers stay safe
//!
//! * The root pointer and the height are published together in one atomic
//!   word (nodes are 256-aligned, so the height fits in the low bits).
//! * A writer never changes a node a reader can reach, except by single
//!   atomic stores: a child pointer (a rebuilt subtree covering the same
//!   range), a recorded gap, or a leaf header whose larger count and new value
//!   bits make appended slots visible (`mas_wr_append`). Everything else is built in
//!   new nodes and published by one of those stores or by the root word.
//!   See the "Concurrent readers" section of `node.rs` for the orderings.
//! * A reader walks down without retrying: every node it reaches is
//!   internally consistent (old or new), and the slot ranges of a parent do not
//!   change under an in-place publish, so what it reads is always a value that
//!   was stored at that index at some moment during the read.
//! * Nothing a reader may reach is freed while it reads: nodes and values a
//!   write unlinks wait in the tree's limbo (`limbo.rs`), and a batch is freed
//!   only after `crossbeam-epoch` reports that every thread pinned when it was
//!   unlinked has unpinned. A [`ReadGuard`] is such a pin, so a reference it
//!   hands out stays valid until the guard is dropped, even if a writer
//!   replaces or removes the value meanwhile.
//!
//! # Values
//!
//! A value is dropped exactly once, after the last reader that could see it
//! has left. A reader holds references to values while the writer rebuilds
//! the nodes around them, copying their slots. By default
//! ([`Boxed`](crate::Boxed)) the concurrent tree keeps every value in a
//! `Box` of its own and moves only the pointer, so a value never moves. (A
//! plain [`MapleTree`] keeps values of at most 8 bytes inside its nodes;
//! copying such a value while a reader holds a reference to it would lose
//! what the reader writes through interior mutability, an atomic say, or
//! race with it.) So [`RcuMapleTree::from`] and
//! [`RcuMapleTree::into_inner`] take O(1) for values of more than 8 bytes,
//! which a plain tree boxes too, and O(n) for smaller ones, each boxed or
//! unboxed in turn.
//!
//! Values free of interior mutability ([`Frozen`]: integers, pointers,
//! `Box`, `Arc`, …) can live inside the nodes as in a plain tree
//! ([`Inline`](crate::Inline), from [`RcuMapleTree::new_inline`] or
//! [`RcuMapleTree::from_inline`]): no allocation per store and no pointer
//! to follow per lookup, since two copies of such a value are the same
//! value. See `rcu_storage.rs`.
//!
//! [`WriteGuard::remove`] returns a clone of the removed value, as readers
//! may still be using the tree's own, which is dropped after the grace
//! period; [`WriteGuard::erase`] returns only the range, for any `V`.

use crate::error::{AllocError, CheckError, NoSpace, OccupiedError};
use crate::iter::Range;
use crate::limbo::{Handover, Limbo};
use crate::node::{Node, NodePtr};
use crate::rcu_storage::{held_split, Boxed, Frozen, HeldCloneOrMove, Inline, Storage};
use crate::read::ReadCore;
use crate::stats::Stats;
use crate::sync::{AtomicPtr, AtomicUsize, Ordering};
use crate::tree::{bounds, fmt_entries, MapleTree};
use alloc::boxed::Box;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ops::{RangeBounds, RangeInclusive};
use core::ptr::{self, NonNull};
use crossbeam_epoch as epoch;
use crossbeam_utils::CachePadded;
use std::sync::{Mutex, MutexGuard};

/// A maple tree in RCU mode: any number of lock-free readers and one writer
/// at a time.
///
/// ```
/// use maple_tree::RcuMapleTree;
/// use std::thread;
///
/// let tree = RcuMapleTree::new();
/// tree.write().insert(0..100, 1u64);
/// thread::scope(|s| {
///     s.spawn(|| {
///         let r = tree.read();             // never blocks
///         assert!(matches!(r.get(50), Some(&1) | Some(&2)));
///     });
///     tree.write().insert(40..60, 2);      // one writer at a time
/// });
/// assert_eq!(tree.read().get(50), Some(&2));
/// let plain = tree.into_inner();           // O(n): u64s leave their boxes
/// assert_eq!(plain.len(), 3);
/// ```
///
/// `S` is how the tree holds its values: [`Boxed`] (the default, any `V`)
/// or [`Inline`] (`V:` [`Frozen`]; from [`new_inline`](Self::new_inline)).
pub struct RcuMapleTree<V, S: Storage<V> = Boxed> {
    /// Root pointer | height (null when empty): the one word of the tree
    /// every read loads, on a cache line of its own, apart from the count,
    /// mutex and tree that every write changes; in their line, each lookup
    /// on another CPU would first fetch the line back from the writer's.
    top: CachePadded<AtomicPtr<Node>>,
    len: AtomicUsize,
    /// The writer's tree and what it keeps between writes.
    writer: Mutex<Writer<V, S>>,
    /// Readers hand out `&V` across threads: `Sync` needs `V: Sync`.
    _values: PhantomData<V>,
}

// SAFETY: the tree owns its values (held as `V` or `Box<V>`, each `Send`
// when `V` is) and its nodes; the atomics are `Send`. So it may move to
// another thread when `V` may.
unsafe impl<V: Send, S: Storage<V>> Send for RcuMapleTree<V, S> {}
// SAFETY: shared, it lets any thread write (under the mutex, which needs
// the owned tree to be `Send`: `V: Send`) and read, handing out `&V` on
// any thread (`V: Sync`); the rest is atomics.
unsafe impl<V: Send + Sync, S: Storage<V>> Sync for RcuMapleTree<V, S> {}

/// What the writer's mutex guards.
struct Writer<V, S: Storage<V>> {
    /// The writer's tree, each value as `S` holds it (see "Values" above).
    tree: MapleTree<S::Held>,
    /// What `S` keeps to hold the next values cheaply: for [`Boxed`], the
    /// boxes of reclaimed values (`spare_boxes.rs`).
    spares: S::Spares,
}

impl<V, S: Storage<V>> Writer<V, S> {
    /// Frees the batches no reader can see any more, their values
    /// disposed of as `S` does.
    #[inline]
    fn reclaim(&mut self) {
        let spares = &mut self.spares;
        self.tree.reclaim(|held| S::dispose_value(spares, held));
    }
}

/// The root pointer with the height in its low bits (nodes are 256-aligned),
/// a pointer throughout so that it keeps the root's provenance.
fn encode(root: Option<NodePtr>, height: usize) -> *mut Node {
    debug_assert!(height < 256);
    root.map_or(ptr::null_mut(), |r| {
        r.as_raw().as_ptr().map_addr(|a| a | height)
    })
}

fn decode(word: *mut Node) -> (Option<NodePtr>, usize) {
    let height = word.addr() & 0xff;
    // SAFETY: the word was made by `encode` from a live root, which is freed
    // only after a grace period that outlasts every reader holding it.
    let root = NonNull::new(word.map_addr(|a| a & !0xff)).map(|r| unsafe { NodePtr::from_raw(r) });
    (root, height)
}

impl<V: Send + Sync> RcuMapleTree<V> {
    /// An empty regular tree in RCU mode, each value in a box of its own.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..10, "a");
    /// assert_eq!(tree.read().get(5), Some(&"a"));
    /// ```
    pub fn new() -> Self {
        Self::from(MapleTree::new())
    }

    /// An empty allocation tree in RCU mode.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new_alloc();
    /// tree.write().insert(0..0x1000, ());
    /// assert_eq!(tree.read().find_gap(0x1000, ..), Some(0x1000));
    /// ```
    pub fn new_alloc() -> Self {
        Self::from(MapleTree::new_alloc())
    }
}

impl<V: Send + Sync + Frozen> RcuMapleTree<V, Inline> {
    /// An empty regular tree in RCU mode that keeps its values inside its
    /// nodes, as a plain [`MapleTree`] does: no allocation per stored
    /// value and no pointer to follow per lookup (see [`Inline`]).
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new_inline();
    /// tree.write().insert(0..10, 7u64);
    /// assert_eq!(tree.read().get(5), Some(&7));
    /// ```
    pub fn new_inline() -> Self {
        Self::from_inline(MapleTree::new())
    }

    /// As [`new_inline`](Self::new_inline), an allocation tree.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new_alloc_inline();
    /// tree.write().insert(0..0x1000, 1u32);
    /// assert_eq!(tree.read().find_gap(0x1000, ..), Some(0x1000));
    /// ```
    pub fn new_alloc_inline() -> Self {
        Self::from_inline(MapleTree::new_alloc())
    }

    /// Enters RCU mode, values kept inside the nodes: O(1).
    ///
    /// ```
    /// let mut plain = maple_tree::MapleTree::new();
    /// plain.insert(0..10, 1u8);
    /// let tree = maple_tree::RcuMapleTree::from_inline(plain);
    /// assert_eq!(tree.read().get(9), Some(&1));
    /// ```
    pub fn from_inline(tree: MapleTree<V>) -> Self {
        Self::enter(tree)
    }
}

impl<V: Send + Sync, S: Storage<V>> RcuMapleTree<V, S> {
    /// Enters RCU mode: the values as `S` holds them, the tree given a
    /// limbo, the root published.
    fn enter(tree: MapleTree<V>) -> Self {
        let mut tree = S::into_held_tree(tree);
        tree.set_limbo(Some(Box::new(Limbo::new())));
        RcuMapleTree {
            top: CachePadded::new(AtomicPtr::new(encode(tree.root(), tree.height()))),
            len: AtomicUsize::new(tree.len()),
            writer: Mutex::new(Writer {
                tree,
                spares: S::Spares::default(),
            }),
            _values: PhantomData,
        }
    }

    /// Starts a read. Never locks and never waits.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..10, 1);
    /// let r = tree.read();
    /// let v = r.get(3).unwrap();
    /// assert_eq!(tree.write().erase(3), Some(0..=9)); // gone for new readers...
    /// assert_eq!(*v, 1); // ...but alive for this one until its guard drops
    /// assert_eq!(tree.read().get(3), None);
    /// ```
    #[doc(alias = "rcu_read_lock")]
    pub fn read(&self) -> ReadGuard<'_, V, S> {
        ReadGuard {
            tree: self,
            _pin: epoch::pin(),
        }
    }

    /// Starts a write, waiting for the writer before (if any) to finish.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.insert(0..10, 'a');
    /// w.insert(10..20, 'b');
    /// assert_eq!(w.len(), 2); // the guard reads the writer's own latest state
    /// drop(w);
    /// assert_eq!(tree.read().get(15), Some(&'b'));
    /// ```
    pub fn write(&self) -> WriteGuard<'_, V, S> {
        // A writer that panicked left the tree consistent (a store changes
        // nothing before its last fallible step), so poisoning is ignored.
        let inner = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let mut w = WriteGuard { tree: self, inner };
        w.inner.reclaim();
        w
    }

    /// Leaves RCU mode, freeing what waits for readers to leave: in O(1)
    /// for values kept [`Inline`] or of more than 8 bytes, else in O(n),
    /// each value taken out of its box (see the module docs).
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..10, 1);
    /// let plain: maple_tree::MapleTree<i32> = tree.into_inner();
    /// assert_eq!(plain.get(5), Some(&1));
    /// ```
    pub fn into_inner(self) -> MapleTree<V> {
        let Writer { mut tree, .. } = self.writer.into_inner().unwrap_or_else(|e| e.into_inner());
        // `self` is owned: no reader can exist any more.
        tree.reclaim_all();
        tree.set_limbo(None);
        S::from_held_tree(tree)
    }
}

impl<V: Send + Sync> From<MapleTree<V>> for RcuMapleTree<V> {
    /// Enters RCU mode: in O(1) for values of more than 8 bytes, else in
    /// O(n), each value moved into a box of its own (see the module docs).
    fn from(tree: MapleTree<V>) -> Self {
        Self::enter(tree)
    }
}

impl<V: Send + Sync> Default for RcuMapleTree<V> {
    fn default() -> Self {
        Self::new()
    }
}

/// An empty regular tree, values kept inside the nodes.
///
/// ```
/// let tree: maple_tree::RcuMapleTree<u32, maple_tree::Inline> = Default::default();
/// tree.write().insert(0..10, 3);
/// assert_eq!(tree.read().get(4), Some(&3));
/// ```
impl<V: Send + Sync + Frozen> Default for RcuMapleTree<V, Inline> {
    fn default() -> Self {
        Self::new_inline()
    }
}

/// The entries as last published, as a map (as [`MapleTree`]'s `Debug`
/// prints them); takes a read.
impl<V: Send + Sync + fmt::Debug, S: Storage<V>> fmt::Debug for RcuMapleTree<V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.read().fmt(f)
    }
}

/// The entries as last published, as a map (as [`MapleTree`]'s `Debug`
/// prints them).
impl<V: fmt::Debug, S: Storage<V>> fmt::Debug for ReadGuard<'_, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_entries(f, self.iter())
    }
}

/// A read of an [`RcuMapleTree`]; from [`RcuMapleTree::read`].
///
/// References it hands out live as long as the guard. Each call sees the
/// tree as the writer last published it.
pub struct ReadGuard<'a, V, S: Storage<V> = Boxed> {
    tree: &'a RcuMapleTree<V, S>,
    _pin: epoch::Guard,
}

/// The entries of an [`RcuMapleTree`] in order, as `(range, &value)`; from
/// [`ReadGuard::iter`] and [`ReadGuard::range`] (or the writer's).
pub struct RcuRange<'a, V, S: Storage<V> = Boxed>(Range<'a, S::Held>);

impl<'a, V: 'a, S: Storage<V>> Iterator for RcuRange<'a, V, S> {
    type Item = (RangeInclusive<u64>, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(unhold::<V, S>)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<'a, V: 'a, S: Storage<V>> DoubleEndedIterator for RcuRange<'a, V, S> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(unhold::<V, S>)
    }
}

impl<'a, V: 'a, S: Storage<V>> FusedIterator for RcuRange<'a, V, S> {}

// SAFETY: the iterator hands out `&V`s and reads the nodes and held values
// (`V` or `Box<V>`) through shared references only: like `&V`, it may move
// to or be shared with another thread when `V: Sync`.
unsafe impl<V: Sync, S: Storage<V>> Send for RcuRange<'_, V, S> {}
// SAFETY: as above.
unsafe impl<V: Sync, S: Storage<V>> Sync for RcuRange<'_, V, S> {}

/// An iterator that goes on independently from where this one stands.
impl<V, S: Storage<V>> Clone for RcuRange<'_, V, S> {
    fn clone(&self) -> Self {
        RcuRange(self.0.clone())
    }
}

/// The entries left, as a list of `(range, value)` pairs.
impl<'a, V: fmt::Debug + 'a, S: Storage<V>> fmt::Debug for RcuRange<'a, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// An allocation's error with the value that was not stored as the value.
pub(crate) fn release_no_space<V, S: Storage<V>>(e: NoSpace<S::Held>) -> NoSpace<V> {
    NoSpace {
        size: e.size,
        value: S::release_value(e.value),
    }
}

/// A reference to a held value's entry as one to the value.
#[inline(always)]
fn unhold<V, S: Storage<V>>(
    (range, held): (RangeInclusive<u64>, &S::Held),
) -> (RangeInclusive<u64>, &V) {
    (range, S::held_value(held))
}

/// The read methods both guards have, over what their `core()` reads (the
/// tree as last published, for a [`ReadGuard`]; the writer's own, which it
/// publishes with every write, for a [`WriteGuard`]).
macro_rules! read_api {
    () => {
        /// The value of the entry containing `index`.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(10..=19, 'a');
        /// let r = tree.read();
        /// assert_eq!(r.get(15), Some(&'a'));
        /// assert_eq!(r.get(20), None);
        /// ```
        #[inline]
        pub fn get(&self, index: u64) -> Option<&V> {
            self.core().get(index).map(S::held_value)
        }

        /// The entry containing `index`.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(0x1000..0x2000, "text");
        /// assert_eq!(tree.read().get_key_value(0x1abc), Some((0x1000..=0x1fff, &"text")));
        /// ```
        pub fn get_key_value(&self, index: u64) -> Option<(RangeInclusive<u64>, &V)> {
            self.core().get_key_value(index).map(unhold::<V, S>)
        }

        /// The entries in order (strictly increasing, never overlapping, each
        /// one stored at some moment during the walk).
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(0..10, 1);
        /// tree.write().insert(20..30, 2);
        /// let r = tree.read();
        /// assert_eq!(r.iter().collect::<Vec<_>>(), [(0..=9, &1), (20..=29, &2)]);
        /// ```
        pub fn iter(&self) -> RcuRange<'_, V, S> {
            RcuRange(self.core().range(&..))
        }

        /// The entries overlapping `range`, in order.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// let mut w = tree.write();
        /// w.insert(0..=9, 'a');
        /// w.insert(20..=29, 'b');
        /// w.insert(40..=49, 'c');
        /// drop(w);
        /// let r = tree.read();
        /// assert_eq!(r.range(5..=20).map(|(_, v)| *v).collect::<String>(), "ab");
        /// ```
        ///
        /// # Panics
        /// If `range` is reversed; an empty range yields nothing.
        #[track_caller]
        pub fn range(&self, range: impl RangeBounds<u64>) -> RcuRange<'_, V, S> {
            RcuRange(self.core().range(&range))
        }

        /// Whether an entry contains `index`.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(10..20, ());
        /// assert!(tree.read().contains(19));
        /// assert!(!tree.read().contains(20));
        /// ```
        #[inline]
        pub fn contains(&self, index: u64) -> bool {
            self.get(index).is_some()
        }

        /// Whether any entry overlaps `range`.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(10..=19, 'a');
        /// assert!(tree.read().overlaps(15..30));
        /// assert!(!tree.read().overlaps(20..30));
        /// ```
        ///
        /// # Panics
        /// If `range` is reversed; an empty range overlaps nothing.
        #[track_caller]
        pub fn overlaps(&self, range: impl RangeBounds<u64>) -> bool {
            self.range(range).next().is_some()
        }

        /// The lowest entry.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(50..60, 'b');
        /// tree.write().insert(10..20, 'a');
        /// assert_eq!(tree.read().first_key_value(), Some((10..=19, &'a')));
        /// ```
        pub fn first_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
            self.core().first_key_value().map(unhold::<V, S>)
        }

        /// The highest entry.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new();
        /// tree.write().insert(50..60, 'b');
        /// tree.write().insert(10..20, 'a');
        /// assert_eq!(tree.read().last_key_value(), Some((50..=59, &'b')));
        /// ```
        pub fn last_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
            self.core().last_key_value().map(unhold::<V, S>)
        }

        /// As [`MapleTree::find_gap`], against the published tree.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new_alloc();
        /// tree.write().insert(0..0x1000, ());
        /// tree.write().insert(0x1800..0x3000, ());
        /// let r = tree.read();
        /// assert_eq!(r.find_gap(0x800, ..), Some(0x1000));
        /// assert_eq!(r.find_gap(0x1000, ..), Some(0x3000));
        /// ```
        ///
        /// # Panics
        /// If `size` is 0, or `within` is reversed (an empty window finds
        /// nothing).
        #[track_caller]
        pub fn find_gap(&self, size: u64, within: impl RangeBounds<u64>) -> Option<u64> {
            self.core().find_gap(size, &within, false)
        }

        /// As [`MapleTree::find_gap_rev`], against the published tree.
        ///
        /// ```
        /// let tree = maple_tree::RcuMapleTree::new_alloc();
        /// tree.write().insert(0x8000.., ());
        /// assert_eq!(tree.read().find_gap_rev(0x1000, ..), Some(0x7000));
        /// ```
        ///
        /// # Panics
        /// If `size` is 0, or `within` is reversed (an empty window finds
        /// nothing).
        #[track_caller]
        pub fn find_gap_rev(&self, size: u64, within: impl RangeBounds<u64>) -> Option<u64> {
            self.core().find_gap(size, &within, true)
        }
    };
}

impl<V, S: Storage<V>> ReadGuard<'_, V, S> {
    #[inline]
    pub(crate) fn top(&self) -> (Option<NodePtr>, usize) {
        decode(self.tree.top.load(Ordering::Acquire))
    }

    /// The shared read API over the tree as last published.
    #[inline]
    fn core(&self) -> ReadCore<'_, S::Held> {
        // The pin keeps every node and value reachable from the published
        // root alive for as long as the guard.
        ReadCore::new(self.top())
    }

    read_api!();

    /// Entries as of the writer's last publish.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..100, 'a');
    /// tree.write().insert(40..60, 'b');
    /// assert_eq!(tree.read().len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.tree.len.load(Ordering::Acquire)
    }

    /// Whether the tree was empty as of the writer's last publish.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// assert!(tree.read().is_empty());
    /// tree.write().insert(0..=0, 1u8);
    /// assert!(!tree.read().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The one writer of an [`RcuMapleTree`]; from [`RcuMapleTree::write`].
///
/// It reads as a [`ReadGuard`] does (the same methods), and sees its own
/// latest state: every write is published to readers before the method
/// returns.
pub struct WriteGuard<'a, V, S: Storage<V> = Boxed> {
    tree: &'a RcuMapleTree<V, S>,
    inner: MutexGuard<'a, Writer<V, S>>,
}

/// The writer's entries, as a map (as [`MapleTree`]'s `Debug` prints them).
impl<V: fmt::Debug, S: Storage<V>> fmt::Debug for WriteGuard<'_, V, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_entries(f, self.iter())
    }
}

impl<V, S: Storage<V>> WriteGuard<'_, V, S> {
    /// The writer's tree: root and height.
    #[inline]
    pub(crate) fn top(&self) -> (Option<NodePtr>, usize) {
        (self.inner.tree.root(), self.inner.tree.height())
    }

    /// The shared read API over the writer's tree.
    #[inline]
    fn core(&self) -> ReadCore<'_, S::Held> {
        // The guard holds the writer's mutex: nothing else changes or frees
        // the tree while `self` is borrowed.
        ReadCore::new(self.top())
    }

    read_api!();

    /// Entries in the writer's tree.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.insert(0..100, 'a');
    /// w.insert(40..60, 'b');
    /// assert_eq!(w.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.tree.len()
    }

    /// As [`MapleTree::validate`], on the writer's tree.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.insert(0..10, 'a');
    /// assert!(w.validate().is_ok());
    /// ```
    pub fn validate(&self) -> Result<(), CheckError> {
        self.inner.tree.validate()
    }

    /// As [`MapleTree::stats`], on the writer's tree (whose values are
    /// boxed unless [`Inline`]: see the module docs).
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.insert(0..10, 'a');
    /// assert_eq!(w.stats().entries, 1);
    /// ```
    pub fn stats(&self) -> Stats {
        self.inner.tree.stats()
    }

    /// Whether the writer's tree is empty.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// assert!(w.is_empty());
    /// w.insert(0..=0, 1u8);
    /// assert!(!w.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.tree.is_empty()
    }
}

impl<V, S: Storage<V>> WriteGuard<'_, V, S> {
    /// Runs one write on the inner tree, publishes it, closes what it
    /// unlinked as a batch, tells the epoch collector what the limbo asks
    /// for ([`Limbo::after_write`]), and frees the batches no reader can see
    /// any more.
    pub(crate) fn write<R>(
        &mut self,
        op: impl FnOnce(&mut MapleTree<S::Held>, &mut S::Spares) -> R,
    ) -> R {
        let writer = &mut *self.inner;
        let out = op(&mut writer.tree, &mut writer.spares);
        let t = &writer.tree;
        let top = encode(t.root(), t.height());
        // Most writes keep the root: storing the same word again would still
        // take the line from every reader's cache. Only this writer (under
        // the mutex) stores it, so a relaxed load sees its own last store.
        if self.tree.top.load(Ordering::Relaxed) != top {
            self.tree.top.store(top, Ordering::Release);
        }
        self.tree.len.store(t.len(), Ordering::Release);
        let limbo = writer.tree.limbo_mut().expect("RCU tree without limbo");
        match limbo.after_write() {
            Handover::Nothing => {}
            Handover::Note(generation) => {
                let safe = limbo.safe.clone();
                let guard = epoch::pin();
                // Runs once every thread pinned now has unpinned.
                guard.defer(move || safe.fetch_max(generation, Ordering::AcqRel));
                guard.flush();
            }
            Handover::Collect => epoch::pin().flush(),
        }
        writer.reclaim();
        out
    }

    /// As [`MapleTree::insert`]: an entry cut at one edge keeps its value
    /// (in its box, with [`Boxed`] storage: a reader holding it reads the
    /// value the tree still has); only one cut into two is cloned.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..100, 1);
    /// tree.write().insert(40..=59, 2);
    /// let r = tree.read();
    /// assert_eq!(r.iter().collect::<Vec<_>>(), [(0..=39, &1), (40..=59, &2), (60..=99, &1)]);
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn insert(&mut self, range: impl RangeBounds<u64>, value: V)
    where
        V: Clone,
    {
        let (first, last) = bounds(&range);
        self.write(|t, spares| {
            let held = S::hold_value(spares, value);
            t.store_dropping(
                first,
                last,
                Some(held),
                &mut HeldCloneOrMove::<V, S>::new(spares),
            )
        })
    }

    /// As [`MapleTree::insert_with`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert_with(100..200, 100u64, |_, part| *part.start());
    /// tree.write().insert_with(150..160, 150, |_, part| *part.start());
    /// assert_eq!(tree.read().get_key_value(170), Some((160..=199, &160)));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn insert_with(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
        split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        let (first, last) = bounds(&range);
        self.write(|t, spares| {
            t.insert_with(
                first..=last,
                S::hold_value(spares, value),
                held_split::<V, S>(spares, split),
            )
        })
    }

    /// As [`MapleTree::try_insert`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.try_insert(0..10, 'a').unwrap();
    /// let err = w.try_insert(5..20, 'b').unwrap_err();
    /// assert_eq!((err.occupied, err.value), (0..=9, 'b'));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn try_insert(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
    ) -> Result<(), OccupiedError<V>> {
        let (first, last) = bounds(&range);
        self.write(|t, spares| t.try_insert(first..=last, S::hold_value(spares, value)))
            .map_err(|e| OccupiedError {
                range: e.range,
                occupied: e.occupied,
                value: S::release_value(e.value),
            })
    }

    /// As [`MapleTree::remove`]: removes the whole entry containing `index`
    /// and returns it. Readers may still hold a reference to the value, so
    /// what is returned is a clone; the tree's own value is dropped once no
    /// reader can still see it. [`erase`](Self::erase) removes an entry of
    /// any `V` and returns its range.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(10..20, String::from("x"));
    /// let r = tree.read();
    /// let seen = r.get(15).unwrap();
    /// assert_eq!(tree.write().remove(12), Some((10..=19, String::from("x"))));
    /// assert_eq!(seen, "x"); // the reader's value is still there
    /// assert!(tree.read().is_empty());
    /// ```
    #[doc(alias = "mtree_erase")]
    pub fn remove(&mut self, index: u64) -> Option<(RangeInclusive<u64>, V)>
    where
        V: Clone,
    {
        let mut path = crate::walk::Path::new();
        let range = self.inner.tree.entry_at(&mut path, index)?;
        let leaf = path.leaf();
        // SAFETY: `entry_at` found a present slot of the writer's tree,
        // whose values are `S::Held`s; the guard holds the writer's mutex,
        // and nothing changes the tree before the clone is made.
        let held = unsafe { leaf.node.value::<S::Held>(leaf.idx) };
        let value = V::clone(S::held_value(held));
        self.remove_found(&mut path, range.clone());
        Some((range, value))
    }

    /// Removes the entry containing `index` and returns its range (the
    /// kernel's `mtree_erase`, which returns no value either). The value is
    /// dropped once no reader can still see it.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(10..20, "x");
    /// assert_eq!(tree.write().erase(12), Some(10..=19));
    /// assert!(tree.read().is_empty());
    /// ```
    #[doc(alias = "mtree_erase")]
    pub fn erase(&mut self, index: u64) -> Option<RangeInclusive<u64>> {
        let mut path = crate::walk::Path::new();
        let range = self.inner.tree.entry_at(&mut path, index)?;
        self.remove_found(&mut path, range.clone());
        Some(range)
    }

    /// Removes the entry of `range`, which `path` was just walked to.
    fn remove_found(&mut self, path: &mut crate::walk::Path, range: RangeInclusive<u64>) {
        self.write(|t, _| {
            t.remove_at(path, range);
        });
    }

    /// As [`MapleTree::remove_range`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..100, 'a');
    /// tree.write().remove_range(10..90);
    /// let r = tree.read();
    /// assert_eq!(r.iter().collect::<Vec<_>>(), [(0..=9, &'a'), (90..=99, &'a')]);
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn remove_range(&mut self, range: impl RangeBounds<u64>)
    where
        V: Clone,
    {
        let (first, last) = bounds(&range);
        self.write(|t, spares| {
            t.store_dropping(first, last, None, &mut HeldCloneOrMove::<V, S>::new(spares))
        })
    }

    /// As [`MapleTree::remove_range_with`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert_with(0x1000..0x4000, 0x1000u64, |_, part| *part.start());
    /// tree.write().remove_range_with(0x2000..0x3000, |_, part| *part.start());
    /// assert_eq!(tree.read().get(0x3800), Some(&0x3000));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn remove_range_with(
        &mut self,
        range: impl RangeBounds<u64>,
        split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        let (first, last) = bounds(&range);
        self.write(|t, spares| t.remove_range_with(first..=last, held_split::<V, S>(spares, split)))
    }

    /// As [`MapleTree::alloc`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new_alloc();
    /// let mut w = tree.write();
    /// assert_eq!(w.alloc(10, 100.., 'a'), Ok(100));
    /// assert_eq!(w.alloc(10, 100.., 'b'), Ok(110));
    /// assert_eq!(w.alloc(10, 100..=115, 'c').unwrap_err().value, 'c');
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window has no
    /// room: the value comes back).
    #[track_caller]
    pub fn alloc(
        &mut self,
        size: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        let (lo, hi) = bounds(&within);
        self.write(|t, spares| t.alloc(size, lo..=hi, S::hold_value(spares, value)))
            .map_err(release_no_space::<V, S>)
    }

    /// As [`MapleTree::alloc_rev`].
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new_alloc();
    /// let mut w = tree.write();
    /// assert_eq!(w.alloc_rev(0x1000, ..0x10000, "stack"), Ok(0xf000));
    /// assert_eq!(w.alloc_rev(0x1000, ..0x10000, "below"), Ok(0xe000));
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window has no
    /// room: the value comes back).
    #[track_caller]
    pub fn alloc_rev(
        &mut self,
        size: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        let (lo, hi) = bounds(&within);
        self.write(|t, spares| t.alloc_rev(size, lo..=hi, S::hold_value(spares, value)))
            .map_err(release_no_space::<V, S>)
    }

    /// Removes every entry. Readers still walking the old tree keep it until
    /// they leave.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..10, 1);
    /// let r = tree.read();
    /// let v = r.get(5).unwrap();
    /// tree.write().clear();
    /// assert_eq!(*v, 1); // what a reader holds stays valid until it leaves
    /// assert_eq!(r.get(5), None); // each call sees the latest published tree
    /// assert!(tree.read().is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.write(|t, _| t.clear())
    }

    /// As [`MapleTree::preallocate`]: after it, the next store takes no node
    /// from the system allocator, so it cannot fail or block there (kernel:
    /// `mas_preallocate`).
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// let mut w = tree.write();
    /// w.preallocate().expect("no memory for nodes");
    /// w.insert(0..10, 1u64); // takes no node from the system allocator
    /// ```
    #[doc(alias = "mas_preallocate")]
    pub fn preallocate(&mut self) -> Result<(), AllocError> {
        self.inner.tree.preallocate()
    }

    /// Batches of unlinked nodes and values waiting for readers to leave.
    ///
    /// Later writes free them. Each write's unlinked nodes and values are one
    /// batch. Small batches (a few nodes and values each) are not handed to
    /// the epoch collector one by one: once more than 128 wait, one note
    /// goes for them all, and the next few writes free them if no reader
    /// holds them, so up to about 130 may wait even with no reader about. A
    /// large batch (a removed subtree, or 64 nodes and values or more) is
    /// handed over at once and, with no reader about, freed within a few
    /// writes. Dropping the tree or [`RcuMapleTree::into_inner`] frees
    /// everything at once.
    ///
    /// ```
    /// let tree = maple_tree::RcuMapleTree::new();
    /// tree.write().insert(0..10, 1u64);
    /// let reader = tree.read();
    /// tree.write().remove(0);
    /// // The removed entry waits while `reader` may still look at it.
    /// assert!(tree.write().pending_reclaim() >= 1);
    /// drop(reader);
    /// let plain = tree.into_inner(); // frees whatever still waits
    /// assert!(plain.is_empty());
    /// ```
    pub fn pending_reclaim(&self) -> usize {
        self.inner.tree.limbo().map_or(0, |l| l.pending())
    }
}
