//! `MapleTree`: the public single-threaded tree.

use crate::cursor::{Cursor, CursorMut};
use crate::displaced::{Displaced, DropLater, Single};
use crate::error::{CheckError, NoSpace, OccupiedError};
use crate::iter::{Iter, IterMut, Range};
use crate::limbo::Limbo;
use crate::node::{NodePtr, NODE_SIZE};
use crate::pool::NodePool;
use crate::read::ReadCore;
use crate::stats::Stats;
#[cfg(feature = "write-stats")]
use crate::stats::WritePaths;
use crate::teardown::{drop_word, for_each_guarded, Teardown, Visit};
use crate::walk::{find_slot, Path};
use crate::write::{CloneOrMove, Split};
use core::fmt;
use core::marker::PhantomData;
use core::ops::{Bound, Index, RangeBounds, RangeInclusive};

/// A B-tree of non-overlapping `u64` ranges, each mapped to a value: the Linux
/// kernel's maple tree.
///
/// Every index `0..=u64::MAX` is covered by exactly one slot, holding either an
/// entry's value or nothing. Ranges are inclusive. Storing over part of an
/// entry cuts it: the parts outside the new range keep (a copy of) the old
/// value. Adjacent entries are never merged, even when their values are equal.
///
/// A tree is either *regular* ([`new`](Self::new)) or an *allocation tree*
/// ([`new_alloc`](Self::new_alloc)), which records the largest free range
/// below every child so that [`find_gap`](Self::find_gap) and
/// [`alloc`](Self::alloc) run in O(log n).
///
/// # Examples
///
/// ```
/// use maple_tree::MapleTree;
///
/// let mut vmas = MapleTree::new_alloc();
/// vmas.insert(0x1000..0x3000, "text");
/// vmas.insert(0x5000..=0x5fff, "heap");
/// assert_eq!(vmas.get(0x2abc), Some(&"text"));
/// assert_eq!(vmas.get(0x3000), None);
///
/// // Punch a hole: the entry is cut in two, both parts keep their value.
/// vmas.remove_range(0x1800..0x2000);
/// assert_eq!(format!("{vmas:?}"),
///     r#"{0x1000..=0x17ff: "text", 0x2000..=0x2fff: "text", 0x5000..=0x5fff: "heap"}"#);
///
/// // The highest free 0x1000 indices below 0x5000.
/// assert_eq!(vmas.find_gap_rev(0x1000, ..0x5000), Some(0x4000));
/// ```
///
/// The struct is kept within 80 bytes (checked at compile time; 128 with
/// the `write-stats` feature's counters): a duplication writes one per copy,
/// and at 232 bytes it was moved with `memcpy` calls. Shrinking it to 128
/// made a 21-entry copy about 8% faster.
///
/// The fields are private to this module: the rest of the crate changes the
/// tree through the small set of mutators at the end of this file, so that
/// the entry count, the root and the height change together and in one place.
pub struct MapleTree<V> {
    root: Option<NodePtr>,
    len: usize,
    /// Which write paths stores took (feature `write-stats`).
    #[cfg(feature = "write-stats")]
    paths: WritePaths,
    /// Levels of nodes, read through [`height`](Self::height): 0 when
    /// empty, 1 when the root is a leaf. A `u8` to keep the struct small; a
    /// tree of 10-slot nodes is far below 255 levels.
    height: u8,
    /// Whether internal nodes record gaps.
    alloc: bool,
    /// Whether stores may take the append fast path (feature
    /// `bench-internals`; without it the path is always on).
    #[cfg(feature = "bench-internals")]
    append_path: bool,
    pool: NodePool,
    /// Deferred reclamation, in RCU mode only.
    limbo: Option<alloc::boxed::Box<Limbo>>,
    _owns: PhantomData<V>,
}

#[cfg(not(feature = "write-stats"))]
const _: () = assert!(core::mem::size_of::<MapleTree<()>>() <= 80);
#[cfg(feature = "write-stats")]
const _: () = assert!(core::mem::size_of::<MapleTree<()>>() <= 128);

// SAFETY: the tree owns its nodes and values exclusively (no sharing between
// trees), so sending it sends the values: `V: Send` suffices.
unsafe impl<V: Send> Send for MapleTree<V> {}
// SAFETY: `&MapleTree` only hands out `&V`, and never writes through `&self`.
unsafe impl<V: Sync> Sync for MapleTree<V> {}

/// Turns a range argument into `first..=last`, panicking on an empty or
/// reversed range.
#[track_caller]
pub(crate) fn bounds(range: &impl RangeBounds<u64>) -> (u64, u64) {
    let first = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let last = match range.end_bound() {
        Bound::Included(&e) => Some(e),
        Bound::Excluded(&e) => e.checked_sub(1),
        Bound::Unbounded => Some(u64::MAX),
    };
    match (first, last) {
        (Some(f), Some(l)) if f <= l => (f, l),
        _ => panic!(
            "maple tree: empty or reversed range ({:?}, {:?})",
            range.start_bound(),
            range.end_bound()
        ),
    }
}

fn no_split<V>(_: &V, _: RangeInclusive<u64>) -> V {
    unreachable!("maple tree: a store into absent space cut an entry")
}

impl<V> MapleTree<V> {
    const fn with_kind(alloc: bool) -> Self {
        MapleTree {
            root: None,
            height: 0,
            alloc,
            len: 0,
            #[cfg(feature = "bench-internals")]
            append_path: true,
            #[cfg(feature = "write-stats")]
            paths: WritePaths {
                exact_fit: 0,
                append: 0,
                node_rewrite: 0,
                split: 0,
                spanning: 0,
                rebalance: 0,
            },
            pool: NodePool::new(),
            limbo: None,
            _owns: PhantomData,
        }
    }

    /// An empty regular tree.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(5..=9, "five to nine");
    /// assert!(!t.is_alloc());
    /// assert_eq!(t.get(7), Some(&"five to nine"));
    /// ```
    #[doc(alias = "mt_init")]
    #[doc(alias = "DEFINE_MTREE")]
    pub const fn new() -> Self {
        Self::with_kind(false)
    }

    /// An empty allocation tree: internal nodes record the largest gap of
    /// each child, for O(log n) [`find_gap`](Self::find_gap) (kernel:
    /// `MT_FLAGS_ALLOC_RANGE`, as used for the VMAs of a process).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0..0x1000, "low");
    /// assert!(t.is_alloc());
    /// assert_eq!(t.find_gap(0x1000, ..), Some(0x1000)); // O(log n): gaps are recorded
    /// ```
    #[doc(alias = "MT_FLAGS_ALLOC_RANGE")]
    pub fn new_alloc() -> Self {
        Self::with_kind(true)
    }

    /// Whether this is an allocation tree.
    ///
    /// ```
    /// use maple_tree::MapleTree;
    /// assert!(MapleTree::<u8>::new_alloc().is_alloc());
    /// assert!(!MapleTree::<u8>::new().is_alloc());
    /// ```
    pub fn is_alloc(&self) -> bool {
        self.alloc
    }

    /// Number of entries (ranges) stored.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..100, 'a');
    /// t.insert(40..60, 'b'); // cuts 'a' in two
    /// assert_eq!(t.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is stored.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// assert!(t.is_empty());
    /// t.insert(0..=0, ());
    /// assert!(!t.is_empty());
    /// ```
    #[doc(alias = "mtree_empty")]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of the entry containing `index`.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// assert_eq!(t.get(15), Some(&'a'));
    /// assert_eq!(t.get(20), None);
    /// ```
    #[doc(alias = "mtree_load")]
    #[inline]
    pub fn get(&self, index: u64) -> Option<&V> {
        self.read().get(index)
    }

    /// The value of the entry containing `index`, mutably.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..=9, 1);
    /// *t.get_mut(5).unwrap() += 10;
    /// assert_eq!(t.get(0), Some(&11)); // one entry: the value of the whole range changed
    /// assert_eq!(t.get_mut(10), None);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, index: u64) -> Option<&mut V> {
        let (leaf, i, _, _) = find_slot(self.root, self.height(), index)?;
        // SAFETY: a leaf of this tree, borrowed exclusively for the result's
        // lifetime.
        leaf.is_present(i).then(|| unsafe { leaf.value_mut(i) })
    }

    /// The entry containing `index`: its whole range and its value.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0x1000..0x2000, "text");
    /// assert_eq!(t.get_key_value(0x1abc), Some((0x1000..=0x1fff, &"text")));
    /// assert_eq!(t.get_key_value(0x2000), None);
    /// ```
    #[inline]
    pub fn get_key_value(&self, index: u64) -> Option<(RangeInclusive<u64>, &V)> {
        self.read().get_key_value(index)
    }

    /// Stores `value` over `range`, overwriting whatever was there. An entry
    /// cut at one edge of `range` keeps its value (moved, not cloned) on
    /// the part outside it; one cut at both (`range` inside it) keeps its
    /// value after `range` and a clone before it. So `Clone` runs at most
    /// once per store.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..100, 1);
    /// t.insert(40..=59, 2);
    /// assert_eq!(t.iter().collect::<Vec<_>>(),
    ///            [(0..=39, &1), (40..=59, &2), (60..=99, &1)]);
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed (e.g. `5..5`, `7..=3`).
    #[doc(alias = "mtree_store_range")]
    #[doc(alias = "mtree_store")]
    #[doc(alias = "mas_store")]
    #[track_caller]
    pub fn insert(&mut self, range: impl RangeBounds<u64>, value: V)
    where
        V: Clone,
    {
        let (first, last) = bounds(&range);
        self.store_dropping(first, last, Some(value), &mut CloneOrMove);
    }

    /// Stores `value` over `range`, calling `split(&old, piece)` for each part
    /// of a cut entry that survives outside `range` (at most two calls); the
    /// old value itself is dropped. For values that are not `Clone`, or that
    /// must change when cut (a VMA's file offset).
    ///
    /// If `split` panics the tree is left as it was.
    ///
    /// ```
    /// // Values that record their own start, like a VMA's offset.
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert_with(100..200, 100u64, |_, r| *r.start());
    /// t.insert_with(150..160, 150, |_, r| *r.start());
    /// assert_eq!(t.get_key_value(170), Some((160..=199, &160)));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn insert_with(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        let (first, last) = bounds(&range);
        self.store_dropping(first, last, Some(value), &mut split);
    }

    /// Stores `value` (or absence) over `first..=last`, the parts of the
    /// entries it cuts made by `split`; what it displaces is dropped once
    /// the store is done (a panicking `Drop` finds the tree whole).
    pub(crate) fn store_dropping<S: Split<V>>(
        &mut self,
        first: u64,
        last: u64,
        value: Option<V>,
        split: &mut S,
    ) {
        let mut path = Path::new();
        let mut out = DropLater::new(first, last);
        self.store_at(&mut path, first, last, value, split, &mut out);
        // Dropped only now that the store is done.
        drop(out);
    }

    /// Stores `value` over `range`, as [`insert`](Self::insert), and returns
    /// what the store took out: each entry that lay inside `range` with its
    /// value, and for an entry cut at an edge, the part inside `range` with
    /// its original value (the part outside keeps a clone). In address order.
    ///
    /// This is what `munmap`, a page-protection map or an undo log needs: the
    /// kernel's `mas_store` returns only the first entry it overwrote, and
    /// nodit's `insert_overwrite` returns the cut pieces; here every piece
    /// comes back with its range, and nothing is cloned but the parts that
    /// stay. Up to two displaced entries take no heap allocation.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..100, 'a');
    /// t.insert(200..300, 'b');
    /// let out: Vec<_> = t.insert_displaced(50..250, 'c').into_iter().collect();
    /// assert_eq!(out, [(50..=99, 'a'), (200..=249, 'b')]);
    /// assert_eq!(t.get(10), Some(&'a'));
    /// assert_eq!(t.get(270), Some(&'b'));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed. If a clone panics, the tree is left
    /// as it was.
    #[track_caller]
    pub fn insert_displaced(&mut self, range: impl RangeBounds<u64>, value: V) -> Displaced<V>
    where
        V: Clone,
    {
        self.insert_displaced_with(range, value, |v, _| v.clone())
    }

    /// [`insert_displaced`](Self::insert_displaced) with `split(&old, part)`
    /// making the value of each part of a cut entry that survives outside
    /// `range`, as [`insert_with`](Self::insert_with).
    ///
    /// ```
    /// // Values that record their own start, like a VMA's file offset.
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert_with(0..100, 0u64, |_, r| *r.start());
    /// let out: Vec<_> = t
    ///     .insert_displaced_with(40..60, 40, |_, r| *r.start())
    ///     .into_iter()
    ///     .collect();
    /// assert_eq!(out, [(40..=59, 0)]);
    /// assert_eq!(t.get_key_value(70), Some((60..=99, &60)));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed. If `split` panics, the tree is left
    /// as it was.
    #[track_caller]
    pub fn insert_displaced_with(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) -> Displaced<V> {
        let (first, last) = bounds(&range);
        let mut path = Path::new();
        let mut out = Displaced::new(first, last);
        self.store_at(&mut path, first, last, Some(value), &mut split, &mut out);
        out
    }

    /// Stores `value` over `range` only if every index of it is absent;
    /// otherwise hands the value back with the lowest overlapping entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.try_insert(0..10, 'a').unwrap();
    /// let err = t.try_insert(5..20, 'b').unwrap_err();
    /// assert_eq!((err.occupied, err.value), (0..=9, 'b'));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[doc(alias = "mtree_insert_range")]
    #[doc(alias = "mtree_insert")]
    #[track_caller]
    pub fn try_insert(
        &mut self,
        range: impl RangeBounds<u64>,
        value: V,
    ) -> Result<(), OccupiedError<V>> {
        let (first, last) = bounds(&range);
        // One walk both checks the range and positions the store.
        let mut path = Path::new();
        path.descend(self.root, self.height(), first);
        if let Some(occupied) = path.entry_until(last) {
            return Err(OccupiedError {
                range: first..=last,
                occupied,
                value,
            });
        }
        let mut out = Single(None);
        self.store_at(&mut path, first, last, Some(value), &mut no_split, &mut out);
        debug_assert!(out.0.is_none());
        Ok(())
    }

    /// Removes the whole entry containing `index` and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..20, "x");
    /// assert_eq!(t.remove(12), Some((10..=19, "x")));
    /// assert!(t.is_empty());
    /// ```
    #[doc(alias = "mtree_erase")]
    #[doc(alias = "mas_erase")]
    pub fn remove(&mut self, index: u64) -> Option<(RangeInclusive<u64>, V)> {
        let mut path = Path::new();
        let range = self.entry_at(&mut path, index)?;
        self.remove_at(&mut path, range)
    }

    /// Walks `path` to `index` and returns the range of the entry there.
    pub(crate) fn entry_at(&self, path: &mut Path, index: u64) -> Option<RangeInclusive<u64>> {
        let (start, end) = path.descend(self.root, self.height(), index)?;
        path.is_present().then_some(start..=end)
    }

    /// Removes the entry that exactly covers `range`, the present slot
    /// `path` leads to as walked (nothing has changed the tree since).
    pub(crate) fn remove_at(
        &mut self,
        path: &mut Path,
        range: RangeInclusive<u64>,
    ) -> Option<(RangeInclusive<u64>, V)> {
        debug_assert!(path.is_present());
        let mut out = Single(None);
        self.store_at_slot(
            path,
            (*range.start(), *range.end()),
            None,
            &mut no_split,
            &mut out,
        );
        out.0
    }

    /// Makes every index of `range` absent. Entries cut at its edges keep
    /// their value on the parts outside it, as in [`insert`](Self::insert):
    /// `Clone` runs only for an entry cut into two.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..100, 'a');
    /// t.remove_range(10..90);
    /// assert_eq!(t.iter().collect::<Vec<_>>(), [(0..=9, &'a'), (90..=99, &'a')]);
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[doc(alias = "mtree_store_range")]
    #[track_caller]
    pub fn remove_range(&mut self, range: impl RangeBounds<u64>)
    where
        V: Clone,
    {
        let (first, last) = bounds(&range);
        self.store_dropping(first, last, None, &mut CloneOrMove);
    }

    /// [`remove_range`](Self::remove_range) for values that are not `Clone`
    /// or must change when cut: `split(&old, piece)` makes the value of each
    /// surviving part.
    ///
    /// ```
    /// // Values that record their own start, like a VMA's file offset.
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert_with(0x1000..0x4000, 0x1000u64, |_, part| *part.start());
    /// t.remove_range_with(0x2000..0x3000, |_, part| *part.start());
    /// assert_eq!(
    ///     t.iter().collect::<Vec<_>>(),
    ///     [(0x1000..=0x1fff, &0x1000), (0x3000..=0x3fff, &0x3000)]
    /// );
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed.
    #[track_caller]
    pub fn remove_range_with(
        &mut self,
        range: impl RangeBounds<u64>,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) {
        let (first, last) = bounds(&range);
        self.store_dropping(first, last, None, &mut split);
    }

    /// Makes every index of `range` absent, as
    /// [`remove_range`](Self::remove_range), and returns what was there: each
    /// entry inside `range` with its value, and for an entry cut at an edge,
    /// the part inside `range` with its original value. In address order.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, 'a');
    /// t.insert(10..20, 'b');
    /// t.insert(20..30, 'c');
    /// let gone: Vec<_> = t.remove_range_displaced(5..=24).into_iter().collect();
    /// assert_eq!(gone, [(5..=9, 'a'), (10..=19, 'b'), (20..=24, 'c')]);
    /// assert_eq!(t.len(), 2);
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed. If a clone panics, the tree is left
    /// as it was.
    #[track_caller]
    pub fn remove_range_displaced(&mut self, range: impl RangeBounds<u64>) -> Displaced<V>
    where
        V: Clone,
    {
        self.remove_range_displaced_with(range, |v, _| v.clone())
    }

    /// [`remove_range_displaced`](Self::remove_range_displaced) with
    /// `split(&old, part)` making the value of each surviving part of a cut
    /// entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert_with(0..100, 0u64, |_, r| *r.start());
    /// let gone = t.remove_range_displaced_with(0..30, |_, r| *r.start());
    /// assert_eq!(gone.iter().collect::<Vec<_>>(), [(0..=29, &0)]);
    /// assert_eq!(t.get_key_value(50), Some((30..=99, &30)));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty or reversed. If `split` panics, the tree is left
    /// as it was.
    #[track_caller]
    pub fn remove_range_displaced_with(
        &mut self,
        range: impl RangeBounds<u64>,
        mut split: impl FnMut(&V, RangeInclusive<u64>) -> V,
    ) -> Displaced<V> {
        let (first, last) = bounds(&range);
        let mut path = Path::new();
        let mut out = Displaced::new(first, last);
        self.store_at(&mut path, first, last, None, &mut split, &mut out);
        out
    }

    /// Removes every entry and gives all node memory back.
    ///
    /// ```
    /// let mut t: maple_tree::MapleTree<u64> = (0..1000u64).map(|i| (i * 10..=i * 10 + 4, i)).collect();
    /// t.clear();
    /// assert!(t.is_empty());
    /// assert_eq!(t.get(20), None);
    /// assert_eq!(t.stats().node_bytes, 0);
    /// ```
    #[doc(alias = "mtree_destroy")]
    #[doc(alias = "__mt_destroy")]
    pub fn clear(&mut self) {
        if let Some(limbo) = &mut self.limbo {
            // Readers may still be walking the old tree: unlink it whole.
            if let Some(root) = self.root.take() {
                limbo.push(crate::limbo::Garbage::Subtree(root));
            }
            self.height = 0;
            self.len = 0;
            return;
        }
        // The tree is empty before any value is dropped, and stays so if a
        // `Drop` panics: the other values are still dropped and the nodes
        // still given back (see `teardown.rs`).
        let root = self.root.take();
        self.height = 0;
        self.len = 0;
        struct ResetPool<'a>(&'a mut NodePool);
        impl Drop for ResetPool<'_> {
            fn drop(&mut self) {
                self.0.reset();
            }
        }
        let _pool = ResetPool(&mut self.pool);
        if let Some(root) = root {
            if core::mem::needs_drop::<V>() || !crate::node::is_inline::<V>() {
                let values = Teardown::new(root).filter_map(|visit| match visit {
                    Visit::Value(word) => Some(word),
                    Visit::Node(_) => None,
                });
                // SAFETY: the walk yields each present slot word of the
                // detached tree once; the tree no longer reaches them.
                for_each_guarded(values, |word| unsafe { drop_word::<V>(word) });
            }
        }
    }

    /// Iterates over the entries in order, as `(range, &value)`.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<_> = [(0..=9, 'a'), (20..=29, 'b')].into_iter().collect();
    /// assert_eq!(t.iter().rev().next(), Some((20..=29, &'b')));
    /// ```
    #[doc(alias = "mt_for_each")]
    pub fn iter(&self) -> Iter<'_, V> {
        Iter::new(self.top(), self.len)
    }

    /// Iterates over the entries in order, with mutable values.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, 1);
    /// t.insert(20..30, 2);
    /// for (range, value) in t.iter_mut() {
    ///     *value += *range.start();
    /// }
    /// assert_eq!(t.iter().collect::<Vec<_>>(), [(0..=9, &1), (20..=29, &22)]);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        IterMut::new(self)
    }

    /// Iterates over the entries that overlap `range`, in order.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..=9, 'a');
    /// t.insert(20..=29, 'b');
    /// t.insert(40..=49, 'c');
    /// assert_eq!(t.range(5..=20).map(|(_, v)| *v).collect::<String>(), "ab");
    /// assert_eq!(t.range(5..5).count(), 0); // empty: nothing
    /// ```
    ///
    /// # Panics
    /// If `range` is reversed (e.g. `7..=3`); an empty range (`5..5`)
    /// yields nothing, as `BTreeMap::range` does.
    #[doc(alias = "mt_find")]
    #[track_caller]
    // Inline, so that the iterator's state is built in the caller's
    // registers rather than returned through memory and loaded back (a
    // sixth of the cost of a 100-entry range).
    #[inline(always)]
    pub fn range(&self, range: impl RangeBounds<u64>) -> Range<'_, V> {
        self.read().range(&range)
    }

    /// Whether any entry overlaps `range` (the `overlaps` of `rangemap` and
    /// `nodit`).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// assert!(t.overlaps(15..30));
    /// assert!(!t.overlaps(20..30));
    /// assert!(!t.overlaps(12..12)); // empty: overlaps nothing
    /// ```
    ///
    /// # Panics
    /// If `range` is reversed (e.g. `7..=3`).
    #[track_caller]
    pub fn overlaps(&self, range: impl RangeBounds<u64>) -> bool {
        self.range(range).next().is_some()
    }

    /// The lowest entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// assert_eq!(t.first_key_value(), None);
    /// t.insert(50..60, 'b');
    /// t.insert(10..20, 'a');
    /// assert_eq!(t.first_key_value(), Some((10..=19, &'a')));
    /// ```
    pub fn first_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
        self.read().first_key_value()
    }

    /// The highest entry.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..20, 'a');
    /// t.insert(50.., 'b'); // up to u64::MAX
    /// assert_eq!(t.last_key_value(), Some((50..=u64::MAX, &'b')));
    /// ```
    pub fn last_key_value(&self) -> Option<(RangeInclusive<u64>, &V)> {
        self.read().last_key_value()
    }

    /// The lowest `s` such that `s..=s+size-1` lies inside `within` and holds
    /// no entry. O(log n) on an allocation tree; a regular tree has no gap
    /// records and scans the window.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0..0x1000, ());
    /// t.insert(0x1800..0x3000, ());
    /// assert_eq!(t.find_gap(0x800, ..), Some(0x1000));
    /// assert_eq!(t.find_gap(0x1000, ..), Some(0x3000));
    /// assert_eq!(t.find_gap(0x1000, ..0x3fff), None);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window finds
    /// nothing).
    #[doc(alias = "mas_empty_area")]
    #[track_caller]
    pub fn find_gap(&self, size: u64, within: impl RangeBounds<u64>) -> Option<u64> {
        self.gap_search(size, &within, false)
    }

    /// The highest `s` such that `s..=s+size-1` lies inside `within` and holds
    /// no entry (top-down placement, as `mmap` does).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0x1000..0x2000, ());
    /// t.insert(0x8000.., ()); // everything from 0x8000 up is taken
    /// assert_eq!(t.find_gap_rev(0x1000, ..), Some(0x7000));
    /// assert_eq!(t.find_gap_rev(0x1000, ..0x2000), Some(0));
    /// assert_eq!(t.find_gap_rev(0x2000, 0x1000..0x4000), Some(0x2000));
    /// assert_eq!(t.find_gap_rev(0x8000, ..), None);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window finds
    /// nothing).
    #[doc(alias = "mas_empty_area_rev")]
    #[track_caller]
    pub fn find_gap_rev(&self, size: u64, within: impl RangeBounds<u64>) -> Option<u64> {
        self.gap_search(size, &within, true)
    }

    #[track_caller]
    fn gap_search(&self, size: u64, within: &impl RangeBounds<u64>, rev: bool) -> Option<u64> {
        self.read().find_gap(size, within, rev)
    }

    /// The read API shared with the concurrent tree's readers.
    #[inline]
    pub(crate) fn read(&self) -> ReadCore<'_, V> {
        ReadCore::new(self.top())
    }

    /// The root and the height, as the read paths take them.
    #[inline]
    pub(crate) fn top(&self) -> (Option<NodePtr>, usize) {
        (self.root, self.height())
    }

    /// Levels of nodes: 0 when empty, 1 when the root is a leaf.
    #[inline]
    pub(crate) fn height(&self) -> usize {
        usize::from(self.height)
    }

    #[inline]
    pub(crate) fn set_height(&mut self, height: usize) {
        self.height = u8::try_from(height).expect("maple tree: height over 255 levels");
    }

    /// Stores `value` at the lowest free range of `size` indices inside
    /// `within` and returns its start; hands the value back if none fits.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// assert_eq!(t.alloc(10, 100.., 'a'), Ok(100));
    /// assert_eq!(t.alloc(10, 100.., 'b'), Ok(110));
    /// assert_eq!(t.alloc(10, 100..=115, 'c').unwrap_err().value, 'c');
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window has no
    /// room: the value comes back).
    #[doc(alias = "mtree_alloc_range")]
    #[track_caller]
    pub fn alloc(
        &mut self,
        size: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        self.alloc_in(size, &within, value, false)
    }

    /// Stores `value` at the highest free range of `size` indices inside
    /// `within` and returns its start; hands the value back if none fits.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// assert_eq!(t.alloc_rev(0x1000, ..0x10000, "stack"), Ok(0xf000));
    /// assert_eq!(t.alloc_rev(0x1000, ..0x10000, "below"), Ok(0xe000));
    /// let err = t.alloc_rev(0x10000, ..0x10000, "too big").unwrap_err();
    /// assert_eq!(err.value, "too big"); // the value comes back
    /// ```
    ///
    /// # Panics
    /// If `size` is 0, or `within` is reversed (an empty window has no
    /// room: the value comes back).
    #[doc(alias = "mtree_alloc_rrange")]
    #[track_caller]
    pub fn alloc_rev(
        &mut self,
        size: u64,
        within: impl RangeBounds<u64>,
        value: V,
    ) -> Result<u64, NoSpace<V>> {
        self.alloc_in(size, &within, value, true)
    }

    #[track_caller]
    fn alloc_in(
        &mut self,
        size: u64,
        within: &impl RangeBounds<u64>,
        value: V,
        rev: bool,
    ) -> Result<u64, NoSpace<V>> {
        match self.gap_search(size, within, rev) {
            Some(start) => {
                let mut path = Path::new();
                let mut out = Single(None);
                self.store_at(
                    &mut path,
                    start,
                    start + (size - 1),
                    Some(value),
                    &mut no_split,
                    &mut out,
                );
                debug_assert!(out.0.is_none());
                Ok(start)
            }
            None => Err(NoSpace { size, value }),
        }
    }

    /// A read cursor at `index` (kernel: `ma_state` after `mas_walk`).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(10..=19, 'a');
    /// t.insert(30..=39, 'b');
    /// let mut c = t.cursor(0);
    /// assert_eq!(c.range(), 0..=9);          // a gap
    /// assert_eq!(c.next_entry(), Some((10..=19, &'a')));
    /// assert_eq!(c.next_entry(), Some((30..=39, &'b')));
    /// assert_eq!(c.next_entry(), None);
    /// ```
    #[doc(alias = "mas_walk")]
    #[doc(alias = "MA_STATE")]
    pub fn cursor(&self, index: u64) -> Cursor<'_, V> {
        Cursor::new(self, index)
    }

    /// A write cursor at `index`: a run of nearby reads and writes through it
    /// re-walks only the levels a write changed.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, 1);
    /// t.insert(20..30, 2);
    /// let mut c = t.cursor_mut(25);
    /// *c.get_mut().unwrap() += 40;
    /// c.insert(10..20, 3); // fills the gap; the cursor moves to 10
    /// assert_eq!(c.key_value(), Some((10..=19, &3)));
    /// assert_eq!(t.iter().map(|(_, v)| *v).collect::<Vec<_>>(), [1, 3, 42]);
    /// ```
    pub fn cursor_mut(&mut self, index: u64) -> CursorMut<'_, V> {
        CursorMut::new(self, index)
    }

    /// Checks every invariant of the tree and names the first one broken.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// for i in 0..1000u64 {
    ///     t.insert(i * 3..=i * 3 + 1, i);
    /// }
    /// t.remove_range(100..2000);
    /// assert_eq!(t.validate(), Ok(()));
    /// ```
    pub fn validate(&self) -> Result<(), CheckError> {
        crate::check::validate(self)
    }

    /// Draws the tree's nodes, one per line, indented by depth (for debugging
    /// and teaching; the format may change).
    ///
    /// ```
    /// let t: maple_tree::MapleTree<u64> = (0..100u64).map(|i| (i..=i, i)).collect();
    /// let drawing = t.dump();
    /// assert!(drawing.lines().count() > 1); // a root and its leaves
    /// ```
    pub fn dump(&self) -> alloc::string::String
    where
        V: fmt::Debug,
    {
        crate::check::dump(self)
    }

    /// Height, nodes of each kind, memory, and which write paths stores took.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<u64> = (0..1000u64).map(|i| (i * 2..=i * 2, i)).collect();
    /// let s = t.stats();
    /// assert_eq!(s.entries, 1000);
    /// assert!(s.height >= 2);
    /// assert_eq!(s.node_bytes, (s.leaves + s.internal + s.alloc_internal) * s.node_size);
    /// ```
    pub fn stats(&self) -> Stats {
        let mut s = Stats {
            entries: self.len,
            height: self.height(),
            node_size: NODE_SIZE,
            reserved_bytes: self.pool.reserved_bytes(),
            #[cfg(feature = "write-stats")]
            write_paths: self.paths,
            ..Stats::default()
        };
        if let Some(root) = self.root {
            crate::check::count_nodes(root, &mut s);
        }
        s.node_bytes = (s.leaves + s.internal + s.alloc_internal) * NODE_SIZE;
        if !crate::node::is_inline::<V>() {
            s.boxed_value_bytes = self.len * core::mem::size_of::<V>();
        }
        s
    }

    /// Reserves enough nodes that the next store takes none from the system
    /// allocator, so it cannot fail or block there (kernel: `mas_preallocate`).
    ///
    /// It reserves what the costliest plan can take in a tree of this
    /// height: a rebuild of every level into at most five nodes each, and a
    /// new root (`5 × height + 1` nodes; exact fits, appends and in-leaf
    /// rewrites take none). Every store checks, in debug builds, that it
    /// took no more than its plan allows.
    /// Values larger than 8 bytes are still boxed by the store itself, and
    /// `insert`'s clones of cut values are the value type's own business.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..100, 1u64);
    /// // Reserve first, where failing is easy to handle...
    /// t.preallocate().expect("no memory for nodes");
    /// // ...then store without touching the system allocator.
    /// t.insert(40..60, 2);
    /// assert_eq!(t.len(), 3);
    /// ```
    ///
    /// # Errors
    /// [`AllocError`](crate::AllocError) if the nodes cannot be had.
    #[doc(alias = "mas_preallocate")]
    pub fn preallocate(&mut self) -> Result<(), crate::AllocError> {
        self.pool
            .ensure_available(crate::write::worst_case_nodes(self.height()))
    }

    /// Turns the append fast path (`mas_wr_append`) off or on, to measure what it
    /// buys. On by default; the tree's contents are the same either way.
    ///
    /// Only with the `bench-internals` feature (for benchmarks; not part of
    /// the stable API).
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.set_append_path(false);
    /// t.insert(0..10, 1u64);
    /// t.insert(10..20, 2);
    /// assert_eq!(t.len(), 2);
    /// ```
    #[cfg(feature = "bench-internals")]
    pub fn set_append_path(&mut self, enabled: bool) {
        self.append_path = enabled;
    }

    /// Whether stores may take the append fast path: always, unless turned
    /// off with `set_append_path` (feature `bench-internals`).
    #[inline]
    pub(crate) fn append_path(&self) -> bool {
        #[cfg(feature = "bench-internals")]
        return self.append_path;
        #[cfg(not(feature = "bench-internals"))]
        true
    }
}

impl<V> Drop for MapleTree<V> {
    fn drop(&mut self) {
        // Dropping needs the tree exclusively: no reader is left.
        self.reclaim_all();
        self.limbo = None;
        self.clear();
    }
}

impl<V> Default for MapleTree<V> {
    fn default() -> Self {
        Self::new()
    }
}

/// `tree[index]`: the value of the entry containing `index`.
///
/// ```
/// let mut t = maple_tree::MapleTree::new();
/// t.insert(10..=19, 'a');
/// assert_eq!(t[15], 'a');
/// ```
///
/// # Panics
/// If no entry contains `index` ([`MapleTree::get`] asks instead).
impl<V> Index<u64> for MapleTree<V> {
    type Output = V;

    #[track_caller]
    fn index(&self, index: u64) -> &V {
        match self.get(index) {
            Some(v) => v,
            None => panic!("maple tree: no entry contains index {index:#x}"),
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for MapleTree<V> {
    /// Prints the entries as a map: `{0x1000..=0x1fff: v, ..}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_entries(f, self.iter())
    }
}

/// Prints entries as a map with hexadecimal ranges, `{0x1000..=0x1fff: v,
/// ..}`: the `Debug` of a tree (plain or RCU) and of a read of one.
pub(crate) fn fmt_entries<'a, V: fmt::Debug + 'a>(
    f: &mut fmt::Formatter<'_>,
    entries: impl Iterator<Item = (RangeInclusive<u64>, &'a V)>,
) -> fmt::Result {
    struct Key(RangeInclusive<u64>);
    impl fmt::Debug for Key {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:#x}..={:#x}", self.0.start(), self.0.end())
        }
    }
    f.debug_map()
        .entries(entries.map(|(r, v)| (Key(r), v)))
        .finish()
}

impl<V: PartialEq> PartialEq for MapleTree<V> {
    /// Equal when both hold the same entries (ranges and values); the tree
    /// kind and node layout do not matter.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<V: Eq> Eq for MapleTree<V> {}

impl<V: Clone, R: RangeBounds<u64>> Extend<(R, V)> for MapleTree<V> {
    /// Stores each `(range, value)` in turn, as [`insert`](MapleTree::insert).
    #[track_caller]
    fn extend<I: IntoIterator<Item = (R, V)>>(&mut self, iter: I) {
        let mut path = Path::new();
        for (range, value) in iter {
            let (first, last) = bounds(&range);
            let mut out = DropLater::new(first, last);
            self.store_at(
                &mut path,
                first,
                last,
                Some(value),
                &mut |v: &V, _| v.clone(),
                &mut out,
            );
            // Dropped after the store has finished: a panicking `Drop`
            // leaves the tree whole.
            drop(out);
        }
    }
}

/// A regular tree holding the pairs, as [`FromIterator`] builds it (later
/// pairs win where they overlap), like `BTreeMap::from([(k, v), ..])`.
///
/// ```
/// let t = maple_tree::MapleTree::from([(0..=9, 'a'), (20..=29, 'b')]);
/// assert_eq!(t.get(25), Some(&'b'));
/// let t = maple_tree::MapleTree::from([(0..=9, 'a'), (5..=6, 'b')]);
/// assert_eq!(t.iter().collect::<Vec<_>>(), [(0..=4, &'a'), (5..=6, &'b'), (7..=9, &'a')]);
/// ```
impl<V: Clone, R: RangeBounds<u64>, const N: usize> From<[(R, V); N]> for MapleTree<V> {
    #[track_caller]
    fn from(pairs: [(R, V); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl<V: Clone, R: RangeBounds<u64>> FromIterator<(R, V)> for MapleTree<V> {
    /// A regular tree holding the pairs, stored in turn (later ones win).
    ///
    /// While the pairs come in ascending order without overlapping, nodes
    /// are packed full bottom-up, with no split or rewrite (bulk build); the
    /// pairs after the first one out of order are stored one by one.
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = (R, V)>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        let mut bulk = crate::write::Bulk::new(MapleTree::new());
        let mut rest = None;
        for (range, value) in iter.by_ref() {
            let (first, last) = bounds(&range);
            if !bulk.accepts(first) {
                rest = Some((first, last, value));
                break;
            }
            bulk.push(first, last, value);
        }
        let mut tree = bulk.finish();
        if let Some((first, last, value)) = rest {
            tree.insert(first..=last, value);
            tree.extend(iter);
        }
        tree
    }
}

/// The crate's access to a tree's fields. Writes go through these few
/// mutators: the root and height change together, the entry count by the
/// number of entries a change made or removed.
impl<V> MapleTree<V> {
    /// The root node (`None` when empty).
    #[inline]
    pub(crate) fn root(&self) -> Option<NodePtr> {
        self.root
    }

    /// Installs a new root of `height` levels (`None` and 0 for an empty
    /// tree).
    #[inline]
    pub(crate) fn set_top(&mut self, root: Option<NodePtr>, height: usize) {
        debug_assert_eq!(root.is_none(), height == 0);
        self.root = root;
        self.set_height(height);
    }

    /// Counts `n` entries a change stored.
    #[inline]
    pub(crate) fn entries_added(&mut self, n: usize) {
        self.len += n;
    }

    /// Counts `n` entries a change removed.
    #[inline]
    pub(crate) fn entries_removed(&mut self, n: usize) {
        self.len -= n;
    }

    #[inline]
    pub(crate) fn pool(&self) -> &NodePool {
        &self.pool
    }

    #[inline]
    pub(crate) fn pool_mut(&mut self) -> &mut NodePool {
        &mut self.pool
    }

    /// The node pool and the entry count together, for a duplication that
    /// counts the values it makes while it takes nodes.
    #[inline]
    pub(crate) fn pool_and_len_mut(&mut self) -> (&mut NodePool, &mut usize) {
        (&mut self.pool, &mut self.len)
    }

    /// The node pool and the limbo together, for freeing what waited there.
    #[inline]
    pub(crate) fn pool_and_limbo_mut(&mut self) -> (&mut NodePool, Option<&mut Limbo>) {
        (&mut self.pool, self.limbo.as_deref_mut())
    }

    /// Whether the tree is in RCU mode (readers may walk it concurrently).
    #[inline]
    pub(crate) fn in_rcu_mode(&self) -> bool {
        self.limbo.is_some()
    }

    /// The deferred reclamation of RCU mode (only the concurrent tree,
    /// which needs `std`, enters it).
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn limbo(&self) -> Option<&Limbo> {
        self.limbo.as_deref()
    }

    /// The deferred reclamation of RCU mode, to add to.
    #[inline]
    pub(crate) fn limbo_mut(&mut self) -> Option<&mut Limbo> {
        self.limbo.as_deref_mut()
    }

    /// Enters RCU mode (with `Some`) or leaves it.
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn set_limbo(&mut self, limbo: Option<alloc::boxed::Box<Limbo>>) {
        self.limbo = limbo;
    }

    /// The same tree, its slots read as holding `W`s, in O(1).
    ///
    /// # Safety
    /// Every present slot word must hold a `W` as [`value_word`] encodes it
    /// (the words are not touched): a `V` boxed out of line
    /// (`!is_inline::<V>()`) is held as `Box::into_raw` of a `Box<V>`, which
    /// is how a `Box<V>`, a pointer stored inline, is held too. Nothing may
    /// wait in the limbo, which is moved as it is.
    ///
    /// [`value_word`]: crate::node::value_word
    #[cfg(feature = "std")]
    pub(crate) unsafe fn cast_values<W>(self) -> MapleTree<W> {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped or used again, so each field read
        // out of it moves to the new tree exactly once.
        unsafe {
            MapleTree {
                root: this.root,
                len: this.len,
                #[cfg(feature = "write-stats")]
                paths: core::ptr::read(&this.paths),
                height: this.height,
                alloc: this.alloc,
                #[cfg(feature = "bench-internals")]
                append_path: this.append_path,
                pool: core::ptr::read(&this.pool),
                limbo: core::ptr::read(&this.limbo),
                _owns: PhantomData,
            }
        }
    }

    /// The write-path counters (feature `write-stats`).
    #[cfg(feature = "write-stats")]
    #[inline]
    pub(crate) fn write_paths_mut(&mut self) -> &mut WritePaths {
        &mut self.paths
    }
}
