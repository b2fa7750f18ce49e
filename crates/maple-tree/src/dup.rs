//! Duplication (kernel: `__mt_dup`): copy the tree node by node in
//! DFS pre-order. Each node is copied once, as a whole, then its children are
//! copied and linked in; values are mapped as their leaf is copied. There is
//! no searching, splitting or rebalancing, so a copy costs O(n) and has the
//! same shape as the source. The copy's pool reserves room for all nodes
//! first, so the copy lies in one contiguous run of memory in DFS order.
//!
//! A fallible duplication builds the copy so that it is a well-formed
//! (partial) tree at every moment: a leaf's value bits are set one by one as
//! values are mapped, an internal node's count grows as children are linked.
//! When a node allocation or the value map fails, dropping that partial tree
//! frees every node made so far and drops every value mapped so far, once.

use crate::error::{AllocError, DupError};
use crate::node::{value_word, Kind, NodePtr};
use crate::pool::{CopyStream, NodePool};
use crate::tree::MapleTree;
use core::convert::Infallible;

impl<V> MapleTree<V> {
    /// Duplicates the tree, mapping each value with `f` (kernel: `__mt_dup`,
    /// then replacing each entry, as `dup_mmap` does). O(n), no rebalancing.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new_alloc();
    /// t.insert(0x1000..0x2000, 1);
    /// let doubled = t.dup_with(|v| v * 2);
    /// assert_eq!(doubled.get(0x1800), Some(&2));
    /// assert!(doubled.is_alloc());
    /// ```
    #[doc(alias = "__mt_dup")]
    #[doc(alias = "mtree_dup")]
    pub fn dup_with<W>(&self, mut f: impl FnMut(&V) -> W) -> MapleTree<W> {
        // Built in place and returned as is, not unwrapped from a `Result`:
        // one move of the tree struct less per copy. When the struct was
        // 232 bytes, perf put its three moves per copy (each a `memcpy`
        // call) at about the time `dup_node` took for a 21-entry tree.
        let mut copy = MapleTree::<W>::empty_like(self.is_alloc());
        match self.dup_into(&mut copy, |v| Ok::<W, Infallible>(f(v))) {
            Ok(()) => copy,
            Err(DupError::Alloc(_)) => {
                alloc::alloc::handle_alloc_error(core::alloc::Layout::new::<crate::node::Node>())
            }
            Err(DupError::Map(never)) => match never {},
        }
    }

    /// Duplicates the tree, mapping each value with the fallible `f`. When a
    /// node cannot be allocated or `f` fails, returns the error having freed
    /// every node of the partial copy and dropped every value `f` made,
    /// exactly once; the source is untouched.
    ///
    /// ```
    /// use maple_tree::{DupError, MapleTree};
    /// let mut t = MapleTree::new();
    /// t.insert(0..10, "10");
    /// t.insert(10..20, "x");
    /// let parsed = t.try_dup_with(|s| s.parse::<u32>());
    /// assert!(matches!(parsed, Err(DupError::Map(_)))); // nothing leaks
    /// t.insert(10..20, "20");
    /// let parsed = t.try_dup_with(|s| s.parse::<u32>()).unwrap();
    /// assert_eq!(parsed.get(15), Some(&20));
    /// ```
    pub fn try_dup_with<W, E>(
        &self,
        f: impl FnMut(&V) -> Result<W, E>,
    ) -> Result<MapleTree<W>, DupError<E>> {
        let mut copy = MapleTree::<W>::empty_like(self.is_alloc());
        self.dup_into(&mut copy, f)?;
        Ok(copy)
    }

    /// Fills the empty tree `copy` with the duplicate of this one. On error,
    /// `copy` is a well-formed partial tree, whose drop frees what was made.
    fn dup_into<W, E>(
        &self,
        copy: &mut MapleTree<W>,
        mut f: impl FnMut(&V) -> Result<W, E>,
    ) -> Result<(), DupError<E>> {
        #[cfg(feature = "bench-internals")]
        copy.set_append_path(self.append_path());
        let Some(root) = self.root() else {
            return Ok(());
        };
        let stream = copy
            .pool_mut()
            .reserve_copy(self.pool().live(), COPY_PREFETCH_AHEAD)
            .map_err(DupError::Alloc)?;
        let raw = copy.pool_mut().alloc_raw().map_err(DupError::Alloc)?;
        // SAFETY: fresh memory of `copy`'s pool, whose header `dup_node`
        // writes (`copy_from`) before anything reads it.
        let new_root = unsafe { NodePtr::from_raw(raw) };
        copy.set_top(Some(new_root), self.height());
        // `dup_node` writes the root's header on every path, so from here on
        // `copy` is a well-formed partial tree.
        let (pool, len) = copy.pool_and_len_mut();
        // SAFETY: `root` is this tree's root, `self.height()` levels above
        // the leaves, its values are `V`s, and `new_root` is fresh memory of
        // `copy`'s pool.
        unsafe { dup_node::<V, W, E>(pool, &stream, len, new_root, root, self.height(), &mut f) }
    }

    /// Clones the tree by duplication, reporting node allocation failure
    /// instead of aborting.
    ///
    /// ```
    /// let t: maple_tree::MapleTree<String> = [(0..=9, "a".to_string())].into_iter().collect();
    /// let copy = t.try_clone().expect("out of memory");
    /// assert_eq!(copy, t);
    /// ```
    pub fn try_clone(&self) -> Result<Self, AllocError>
    where
        V: Clone,
    {
        self.try_dup_with(|v| Ok::<V, Infallible>(v.clone()))
            .map_err(|e| match e {
                DupError::Alloc(e) => e,
                DupError::Map(never) => match never {},
            })
    }

    pub(crate) fn empty_like(alloc: bool) -> Self {
        if alloc {
            Self::new_alloc()
        } else {
            Self::new()
        }
    }
}

/// How many nodes past the next allocation `dup_node` starts loading the
/// copy's memory (4 KiB ahead). The copy is written in allocation order into
/// memory that is usually cold (a new chunk, or one a dropped tree left long
/// ago); loading it ahead overlaps those misses with the copying instead of
/// stalling each store. In `maple bench --workload dup` (medians of five
/// runs each, alternated): 8 to 32 nodes ahead all cut the time per copy by
/// a quarter to a third at N = 821 and 12821 against no prefetch. Near its
/// end a copy loads the start of the chunk the next copy will take (see
/// `NodePool::reserve_copy`).
const COPY_PREFETCH_AHEAD: usize = 16;

/// Publishes a copied leaf's header, with the value bits of the values mapped
/// so far (and counts them), when dropped: whether the leaf was finished or
/// `f` failed or panicked part way.
struct LeafBits<'a> {
    node: NodePtr,
    count: usize,
    bits: u16,
    /// How many bits are set in `bits`, counted as they are set: without
    /// the POPCNT instruction (not in the x86-64 baseline) `count_ones` is
    /// about 18 instructions per leaf.
    mapped: usize,
    len: &'a mut usize,
}

impl Drop for LeafBits<'_> {
    fn drop(&mut self) {
        self.node.publish_leaf(self.count, self.bits);
        *self.len += self.mapped;
    }
}

/// Publishes how many children of a copied internal node are linked, when
/// dropped, finished or not.
struct Linked {
    node: NodePtr,
    kind: Kind,
    count: usize,
}

impl Drop for Linked {
    fn drop(&mut self) {
        self.node.publish_count(self.kind, self.count);
    }
}

/// Fills in the copy `dst` (fresh pool memory) of `src`, a node `level`
/// levels above the leaves' (1 for a leaf): copies the node, then maps the
/// values of a leaf, or copies and links each child of an internal node, in
/// DFS pre-order. `src`'s header is read once. The guards write `dst`'s
/// header on every exit, keeping the partial copy well-formed, so that
/// dropping it drops exactly the values made and frees exactly the nodes
/// linked.
///
/// The children of a node one level above the leaves are copied by the
/// inlined [`dup_leaf`], not by a recursive call: leaves are most of the
/// nodes, and the call (saving and restoring six registers, passing five
/// arguments) cost about 30 of the 160 instructions a 16-slot leaf takes
/// (callgrind, `maple bench --workload dup --n 21`).
///
/// # Safety
/// `src` is a node of a live `MapleTree<V>` that stays borrowed during the
/// call, at `level`; `dst` is fresh memory of `pool`, the pool of a
/// `MapleTree<W>` whose values the written ones become.
unsafe fn dup_node<V, W, E>(
    pool: &mut NodePool,
    stream: &CopyStream,
    len: &mut usize,
    dst: NodePtr,
    src: NodePtr,
    level: usize,
    f: &mut impl FnMut(&V) -> Result<W, E>,
) -> Result<(), DupError<E>> {
    if level <= 1 {
        // SAFETY: the caller's promise, for a leaf.
        return unsafe { dup_leaf(len, dst, src, f) };
    }
    let from = src.peek();
    debug_assert!(!from.is_leaf(), "a node above the leaves is internal");
    // Pivots, gaps and raw child words; the header is rewritten by a guard.
    // SAFETY: `dst` is fresh memory; its child pointers are overwritten with
    // copies below (or the guard publishes none of them).
    unsafe { dst.copy_from(src) };
    let (kind, count) = (from.kind(), from.count());
    let mut linked = Linked {
        node: dst,
        kind,
        count: 0,
    };
    for i in 0..count {
        let child = from.child(i);
        // Start reading the next sibling while this one is copied.
        if i + 1 < count {
            from.child(i + 1).prefetch();
        }
        let raw = pool.alloc_raw().map_err(DupError::Alloc)?;
        // SAFETY: fresh memory of `pool`; `dup_leaf` or the recursive call
        // writes its header before anything reads it.
        let copy = unsafe { NodePtr::from_raw(raw) };
        pool.prefetch_copy(COPY_PREFETCH_AHEAD, stream);
        dst.set_child_of(kind, i, copy);
        linked.count = i + 1;
        if level == 2 {
            // SAFETY: `child` is a leaf of the same source tree; `copy` is fresh.
            unsafe { dup_leaf(len, copy, child, f)? };
        } else {
            // SAFETY: `child` is a node of the same source tree, one level
            // down; `copy` is fresh.
            unsafe { dup_node(pool, stream, len, copy, child, level - 1, f)? };
        }
    }
    Ok(())
}

/// Fills in the copy `dst` (fresh pool memory) of the leaf `src`: copies the
/// node, then maps its values. The guard writes `dst`'s header on every
/// exit, with the bits of the values mapped so far.
///
/// # Safety
/// As for [`dup_node`], with `src` a leaf.
#[inline(always)]
unsafe fn dup_leaf<V, W, E>(
    len: &mut usize,
    dst: NodePtr,
    src: NodePtr,
    f: &mut impl FnMut(&V) -> Result<W, E>,
) -> Result<(), DupError<E>> {
    let from = src.peek();
    debug_assert!(from.is_leaf(), "a node at level 1 is a leaf");
    // Pivots and raw slot words; the header is rewritten by the guard.
    // SAFETY: `dst` is fresh memory; its present slots are overwritten with
    // mapped values below (or the guard publishes none of them).
    unsafe { dst.copy_from(src) };
    let mut done = LeafBits {
        node: dst,
        count: from.count(),
        bits: 0,
        mapped: 0,
        len,
    };
    let mut bits = from.present_bits();
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        // SAFETY: the caller's promise: `src`'s values are `V`s.
        let w = f(unsafe { from.value::<V>(i) }).map_err(DupError::Map)?;
        // SAFETY: a `W` for the copy, whose values are `W`s; the slot
        // held only `src`'s raw word, which stays `src`'s.
        unsafe { dst.set_value_word(i, value_word(w)) };
        done.bits |= 1 << i;
        done.mapped += 1;
    }
    Ok(())
}

impl<V: Clone> Clone for MapleTree<V> {
    /// The O(n) duplication of [`dup_with`](MapleTree::dup_with) with `V::clone`.
    fn clone(&self) -> Self {
        self.dup_with(V::clone)
    }
}
