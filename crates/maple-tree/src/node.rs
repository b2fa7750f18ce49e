//! Node layout and encoding: the one home of layout `unsafe`.
//!
//! Every node is 256 bytes, aligned to 256 (four cache lines, and the low byte of
//! a node address is free). It starts with an 8-byte header and then one of
//! three bodies:
//!
//! | kind     | pivots | slots                    | extra            |
//! |----------|--------|--------------------------|------------------|
//! | `Leaf`   | 15     | 16 values (8 bytes each) |                  |
//! | `Range`  | 15     | 16 child pointers        |                  |
//! | `ARange` | 9      | 10 child pointers        | 10 largest gaps  |
//!
//! A node with `count` slots in use covers `min..=max` (given by its parent, or
//! `0..=u64::MAX` at the root): slot `i` covers `pivot[i-1]+1 ..= pivot[i]`, where
//! `pivot[-1]+1` is `min` and the last slot in use ends at `max`, so the last
//! slot's pivot is never stored. Pivots sit at the same offset in every body.
//!
//! A leaf slot is either absent (its bit in `present` is clear; the word is
//! uninitialised) or holds a value. A value whose size and alignment are at most
//! 8 bytes lives in the slot word itself; a larger one is boxed and the word
//! holds the box pointer. Either way a slot word can be moved between nodes as
//! raw bytes ([`Word`]), which is how nodes are rewritten without touching values.
//!
//! # Invariants the `unsafe` code here relies on
//!
//! 1. A [`NodePtr`] handed to a safe accessor points to a live node owned by a
//!    tree (or being built for one) and nothing else writes that node at the
//!    same time. Trees guarantee this: nodes come from their [`NodePool`](crate::pool::NodePool)
//!    and are only written through `&mut MapleTree`.
//! 2. Accessors are called with an index below the capacity of the node's kind
//!    (checked with `debug_assert!`), and child/gap accessors only on internal
//!    nodes, value accessors only on leaves.
//! 3. A slot word whose `present` bit is set holds a value of the tree's `V`,
//!    encoded as described above; `value_*` functions are called with the `V`
//!    of the tree that owns the node.
//!
//! # Concurrent readers (RCU mode)
//!
//! A node that readers may see is never changed in place except through
//! these three words, which are atomics:
//!
//! * the header (kind, count, value bits): loaded with `Acquire`, stored with
//!   `Release`, so a reader that sees a larger count or a new value bit also
//!   sees the slots, pivots and values written before it (the append path);
//! * a child pointer: `Acquire`/`Release`, the publish of a rebuilt subtree
//!   that covers exactly the same range;
//! * a recorded gap: `Relaxed`; a reader may act on a stale gap, which only
//!   makes a gap search look at one more child or miss a range freed while it
//!   ran.
//!
//! Everything else (pivots, slot words) is written only into nodes no reader
//! can reach yet, or (append) into slots past the count readers load.

use crate::sync::{AtomicPtr, AtomicU64, Ordering};
use alloc::boxed::Box;
use core::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};
use core::ptr::{self, NonNull};

/// Bytes in one node.
#[cfg(not(loom))]
pub(crate) const NODE_SIZE: usize = 256;
/// Under loom, atomics and the [`Shadow`](crate::sync::Shadow) cells are
/// larger than words: nodes are bigger (and the model never counts bytes).
#[cfg(loom)]
pub(crate) const NODE_SIZE: usize = 4096;
/// Slots in a leaf.
pub(crate) const LEAF_SLOTS: usize = 16;
/// Children of a regular internal node.
pub(crate) const RANGE_SLOTS: usize = 16;
/// Children of an allocation-tree internal node.
pub(crate) const ARANGE_SLOTS: usize = 10;

/// What a node is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Kind {
    /// 16 value slots.
    Leaf = 0,
    /// Internal node of a regular tree: 16 children.
    Range = 1,
    /// Internal node of an allocation tree: 10 children and their largest gaps.
    ARange = 2,
}

impl Kind {
    /// How many slots (values or children) a node of this kind holds.
    #[inline]
    pub(crate) const fn capacity(self) -> usize {
        match self {
            Kind::Leaf => LEAF_SLOTS,
            Kind::Range => RANGE_SLOTS,
            Kind::ARange => ARANGE_SLOTS,
        }
    }

    /// The fewest slots a node of this kind may hold, unless it is the root or
    /// the last node of its level (the one that ends at `u64::MAX`), which may
    /// hold fewer so that sequential stores fill nodes completely.
    #[inline]
    pub(crate) const fn min_slots(self) -> usize {
        match self {
            Kind::Leaf | Kind::Range => 6,
            Kind::ARange => 4,
        }
    }
}

/// A raw slot word: a child pointer, or a value encoded as in the module docs.
pub(crate) type Word = MaybeUninit<u64>;

/// The header word: bits 0..8 the kind, 8..16 the count, 16..32 (leaves)
/// the value bits: bit `16 + i` set when slot `i` holds a value.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
struct Header(u64);

impl Header {
    #[inline]
    fn new(kind: Kind, count: usize, present: u16) -> Header {
        Header(kind as u64 | (count as u64) << 8 | (present as u64) << 16)
    }
    /// The header with another count, its other bits as they are (decoding
    /// and encoding the kind again costs a handful of instructions, which
    /// the compiler cannot drop: it does not know the kind byte is valid).
    #[inline]
    fn with_count(self, count: usize) -> Header {
        Header(self.0 & !(0xff << 8) | (count as u8 as u64) << 8)
    }
    /// The header with other value bits, its other bits as they are.
    #[inline]
    fn with_present(self, present: u16) -> Header {
        Header(self.0 & !(0xffff << 16) | (present as u64) << 16)
    }
    #[inline]
    fn kind(self) -> Kind {
        match self.0 as u8 {
            0 => Kind::Leaf,
            1 => Kind::Range,
            _ => Kind::ARange,
        }
    }
    #[inline]
    fn count(self) -> usize {
        (self.0 >> 8) as u8 as usize
    }
    #[inline]
    fn present(self) -> u16 {
        (self.0 >> 16) as u16
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
struct LeafBody {
    pivots: [u64; LEAF_SLOTS - 1],
    slots: [Word; LEAF_SLOTS],
}

#[repr(C)]
struct RangeBody {
    pivots: [u64; RANGE_SLOTS - 1],
    children: [AtomicPtr<Node>; RANGE_SLOTS],
}

#[repr(C)]
struct ARangeBody {
    pivots: [u64; ARANGE_SLOTS - 1],
    children: [AtomicPtr<Node>; ARANGE_SLOTS],
    gaps: [AtomicU64; ARANGE_SLOTS],
    _spare: [u64; 2],
}

/// Every body starts with its pivots, so they sit at the same offset.
#[repr(C)]
union Body {
    leaf: LeafBody,
    range: ManuallyDrop<RangeBody>,
    arange: ManuallyDrop<ARangeBody>,
}

/// One tree node. Only ever handled through [`NodePtr`].
///
/// The header, child pointers and gaps are atomics (see "Concurrent
/// readers" above) of the [`sync`](crate::sync) shim, so loom can check them.
#[repr(C)]
#[cfg_attr(not(loom), repr(align(256)))]
#[cfg_attr(loom, repr(align(4096)))]
pub(crate) struct Node {
    /// A [`Header`].
    header: AtomicU64,
    body: Body,
    #[cfg(loom)]
    shadow: crate::sync::Shadow,
}

const _: () = assert!(size_of::<Node>() == NODE_SIZE);
const _: () = assert!(align_of::<Node>() == NODE_SIZE);

/// A pointer to a node. `Copy`, compared by address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct NodePtr(NonNull<Node>);

// SAFETY: a `NodePtr` is an address, and a node is plain memory that any
// thread may read or write, given the synchronisation every access already
// needs: a node is reached through a borrow of its tree (or, in RCU mode, an
// acquire load under a pinned epoch), and moving a value that holds the
// pointer to another thread (a spawn, a channel) orders that thread after
// the one that loaded it. What a holder may do through it is decided by the
// type that holds it: every public type that keeps node pointers also keeps
// its tree's `V` (`PhantomData<&'a MapleTree<V>>`, `&'a mut MapleTree<V>`,
// or the tree itself), so it is `Send` and `Sync` exactly when the tree
// reference or tree it stands for is: an iterator or a read cursor when
// `V: Sync`, like `&MapleTree<V>`; a mutable one, an entry or `IntoIter` when
// `V: Send` (and `Sync` when `V: Sync`), like `&mut MapleTree<V>`.
unsafe impl Send for NodePtr {}
// SAFETY: as for `Send`: `&NodePtr` gives only the address.
unsafe impl Sync for NodePtr {}

/// Saturating size of `first..=last` (`u64::MAX` for the whole space).
#[inline]
pub(crate) fn span(first: u64, last: u64) -> u64 {
    (last - first).saturating_add(1)
}

impl NodePtr {
    /// A placeholder that is never dereferenced (unused path levels).
    pub(crate) const DANGLING: NodePtr = NodePtr(NonNull::dangling());

    /// Wraps memory from the node pool. The header is initialised to an empty
    /// node of `kind`; the body is left as it was.
    #[inline]
    pub(crate) fn init(raw: NonNull<Node>, kind: Kind) -> NodePtr {
        let header = AtomicU64::new(Header::new(kind, 0, 0).0);
        // SAFETY: the pool hands out memory for one whole, exclusively owned node.
        unsafe { ptr::addr_of_mut!((*raw.as_ptr()).header).write(header) };
        #[cfg(loom)]
        NodePtr(raw).fresh_loom_objects();
        NodePtr(raw)
    }

    /// Under loom, atomics and cells are objects of the model run: a node's
    /// must be made anew before it is used (its memory may come from a
    /// previous run, through the pool's chunk cache).
    #[cfg(loom)]
    fn fresh_loom_objects(self) {
        let p = self.0.as_ptr();
        // SAFETY: called on a node being built, owned by the caller; the
        // writes replace stale objects without reading them. Child pointers
        // and gaps start null and 0.
        unsafe {
            ptr::addr_of_mut!((*p).shadow).write(crate::sync::Shadow::new());
            let range = self.range_body();
            for i in 0..RANGE_SLOTS {
                ptr::addr_of_mut!((*range).children[i]).write(AtomicPtr::new(ptr::null_mut()));
            }
            let arange = self.arange_body();
            for i in 0..ARANGE_SLOTS {
                ptr::addr_of_mut!((*arange).gaps[i]).write(AtomicU64::new(0));
            }
        }
    }

    /// The body as a regular internal node's (no reference is made).
    #[inline]
    fn range_body(self) -> *mut RangeBody {
        // SAFETY: a place computation inside the node; `ManuallyDrop` is
        // `repr(transparent)` and every union field starts at offset 0.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).body).cast() }
    }

    /// The body as an allocation-tree internal node's (no reference is made).
    #[inline]
    fn arange_body(self) -> *mut ARangeBody {
        // SAFETY: as for `range_body`.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).body).cast() }
    }

    /// Announces a read (`write == false`) or write of pivot (`pivot`) or
    /// slot `i` to loom (nothing outside loom).
    #[inline(always)]
    fn shadow(self, pivot: bool, i: usize, write: bool) {
        #[cfg(loom)]
        {
            // SAFETY: invariant 1; the shadow is made with the node.
            let shadow = unsafe { &*ptr::addr_of!((*self.0.as_ptr()).shadow) };
            if write {
                shadow.write(pivot, i)
            } else {
                shadow.read(pivot, i)
            }
        }
        #[cfg(not(loom))]
        let _ = (self, pivot, i, write);
    }

    /// Wraps a pointer to a live node (as published by the concurrent tree).
    ///
    /// # Safety
    /// `raw` must point to a node from a node pool that is not freed while
    /// the returned pointer (or a copy) is used, and whose header is
    /// initialised (by [`init`](Self::init), or by [`copy_from`](Self::copy_from)
    /// into it) before any other accessor reads it: invariant 1.
    #[inline]
    pub(crate) unsafe fn from_raw(raw: NonNull<Node>) -> NodePtr {
        NodePtr(raw)
    }

    #[inline]
    pub(crate) fn as_raw(self) -> NonNull<Node> {
        self.0
    }

    /// The header as an atomic (see "Concurrent readers" above).
    #[inline]
    fn header_word(self) -> &'static AtomicU64 {
        // SAFETY: invariant 1: a live node, whose header was initialised by
        // `init`. The `'static` never escapes this module's accessors.
        unsafe { &*ptr::addr_of!((*self.0.as_ptr()).header) }
    }

    #[inline]
    fn header(self) -> Header {
        Header(self.header_word().load(Ordering::Acquire))
    }

    #[inline]
    fn set_header(self, h: Header) {
        self.header_word().store(h.0, Ordering::Release)
    }

    #[inline]
    pub(crate) fn kind(self) -> Kind {
        self.header().kind()
    }

    #[inline]
    pub(crate) fn is_leaf(self) -> bool {
        self.kind() == Kind::Leaf
    }

    /// Slots in use (1..=capacity for a node in a tree).
    #[inline]
    pub(crate) fn count(self) -> usize {
        self.header().count()
    }

    #[inline]
    pub(crate) fn set_count(self, count: usize) {
        debug_assert!(count <= self.kind().capacity());
        let h = self.header();
        self.set_header(h.with_count(count));
    }

    /// Leaf presence bits.
    #[inline]
    pub(crate) fn present_bits(self) -> u16 {
        self.header().present()
    }

    #[inline]
    pub(crate) fn set_present_bits(self, bits: u16) {
        let h = self.header();
        self.set_header(h.with_present(bits));
    }

    /// Sets the kind and count of an internal node in one store, without
    /// reading the header first (duplication links children one by one).
    #[inline]
    pub(crate) fn publish_count(self, kind: Kind, count: usize) {
        debug_assert!(kind != Kind::Leaf && count <= kind.capacity());
        self.set_header(Header::new(kind, count, 0));
    }

    /// Sets child `i` of an internal node of `kind` (known to the caller, so
    /// the header is not read).
    #[inline]
    pub(crate) fn set_child_of(self, kind: Kind, i: usize, child: NodePtr) {
        debug_assert!(kind != Kind::Leaf && i < kind.capacity());
        self.child_slot_of(kind, i)
            .store(child.0.as_ptr(), Ordering::Release)
    }

    /// Sets the count and the value bits in one store: how the append path
    /// makes its new slots visible to concurrent readers all at once.
    #[inline]
    pub(crate) fn publish_leaf(self, count: usize, bits: u16) {
        debug_assert!(self.is_leaf() && count <= LEAF_SLOTS);
        self.set_header(Header::new(Kind::Leaf, count, bits));
    }

    #[inline]
    pub(crate) fn is_present(self, i: usize) -> bool {
        self.present_bits() & (1 << i) != 0
    }

    /// Pivot `i`: the last index of slot `i` (`i < count - 1`).
    #[inline]
    pub(crate) fn pivot(self, i: usize) -> u64 {
        debug_assert!(i < self.kind().capacity() - 1);
        self.shadow(true, i, false);
        // SAFETY: invariants 1 and 2; pivots are at the same offset in every body.
        unsafe { (*self.0.as_ptr()).body.leaf.pivots[i] }
    }

    /// Pivot `i`, without the bounds check (iteration reads one or two per
    /// entry, with `i` known from the node's count).
    ///
    /// # Safety
    /// The node is live (invariant 1) and `i < self.kind().capacity() - 1`.
    #[inline(always)]
    pub(crate) unsafe fn pivot_unchecked(self, i: usize) -> u64 {
        debug_assert!(i < self.kind().capacity() - 1);
        // SAFETY: the caller's promise; pivots are at the same offset in every
        // body, and the leaf view's array is the longest of them. The one
        // pivot is read through a raw pointer: a reference to the array
        // (as `get_unchecked` takes) would also cover the pivots past the
        // count that an RCU writer may be appending meanwhile. The bound
        // `get_unchecked` would have told the optimiser is told here, so
        // that the slot read beside the pivot keeps no bounds check.
        unsafe {
            core::hint::assert_unchecked(i < LEAF_SLOTS - 1);
            ptr::addr_of!((*self.0.as_ptr()).body.leaf.pivots)
                .cast::<u64>()
                .add(i)
                .read()
        }
    }

    #[inline]
    pub(crate) fn set_pivot(self, i: usize, pivot: u64) {
        debug_assert!(i < self.kind().capacity() - 1);
        self.shadow(true, i, true);
        // SAFETY: invariants 1 and 2.
        unsafe { (*self.0.as_ptr()).body.leaf.pivots[i] = pivot }
    }

    /// First index covered by slot `i` of a node starting at `min`.
    #[inline]
    pub(crate) fn slot_start(self, i: usize, min: u64) -> u64 {
        if i == 0 {
            min
        } else {
            self.pivot(i - 1) + 1
        }
    }

    /// Last index covered by slot `i` of a node ending at `max`.
    #[inline]
    pub(crate) fn slot_end(self, i: usize, max: u64) -> u64 {
        if i + 1 == self.count() {
            max
        } else {
            self.pivot(i)
        }
    }

    /// Child `i` of an internal node.
    #[inline]
    pub(crate) fn child(self, i: usize) -> NodePtr {
        debug_assert!(!self.is_leaf() && i < self.count());
        let raw = self.child_slot(i).load(Ordering::Acquire);
        // SAFETY: invariants 1 and 2: slots below `count` of an internal node
        // hold non-null child pointers.
        unsafe { NodePtr(NonNull::new_unchecked(raw)) }
    }

    /// Child `i` of an internal node of `kind` (known to the caller, so
    /// the header is not read again for each child of a loop).
    #[inline]
    pub(crate) fn child_of(self, kind: Kind, i: usize) -> NodePtr {
        debug_assert!(kind == self.kind() && kind != Kind::Leaf && i < self.count());
        let raw = self.child_slot_of(kind, i).load(Ordering::Acquire);
        // SAFETY: as in `child`.
        unsafe { NodePtr(NonNull::new_unchecked(raw)) }
    }

    #[inline]
    pub(crate) fn set_child(self, i: usize, child: NodePtr) {
        debug_assert!(!self.is_leaf() && i < self.kind().capacity());
        self.child_slot(i)
            .store(child.0.as_ptr(), Ordering::Release)
    }

    /// Child pointer `i` as an atomic.
    #[inline]
    fn child_slot(self, i: usize) -> &'static AtomicPtr<Node> {
        self.child_slot_of(self.kind(), i)
    }

    /// Child pointer `i` of a node of `kind` as an atomic.
    #[inline]
    fn child_slot_of(self, kind: Kind, i: usize) -> &'static AtomicPtr<Node> {
        // SAFETY: invariants 1 and 2. The `'static` never escapes this
        // module's accessors.
        unsafe {
            match kind {
                Kind::ARange => &*ptr::addr_of!((*self.arange_body()).children[i]),
                _ => &*ptr::addr_of!((*self.range_body()).children[i]),
            }
        }
    }

    /// The first child pointer of an internal node of `kind`, as a raw
    /// pointer into the node (no reference is made): where its children
    /// array starts.
    #[inline]
    fn children_ptr(self, kind: Kind) -> *mut AtomicPtr<Node> {
        debug_assert!(kind != Kind::Leaf);
        // SAFETY: place computations inside the node (invariant 1).
        unsafe {
            match kind {
                Kind::ARange => ptr::addr_of_mut!((*self.arange_body()).children).cast(),
                _ => ptr::addr_of_mut!((*self.range_body()).children).cast(),
            }
        }
    }

    /// Recorded gap `i` as an atomic.
    #[inline]
    fn gap_slot(self, i: usize) -> &'static AtomicU64 {
        debug_assert!(self.kind() == Kind::ARange && i < ARANGE_SLOTS);
        // SAFETY: invariants 1 and 2, as for `child_slot_of`.
        unsafe { &*ptr::addr_of!((*self.arange_body()).gaps[i]) }
    }

    /// Largest gap recorded for child `i` of an allocation-tree internal node.
    #[inline]
    pub(crate) fn gap(self, i: usize) -> u64 {
        self.gap_slot(i).load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn set_gap(self, i: usize, gap: u64) {
        self.gap_slot(i).store(gap, Ordering::Relaxed)
    }

    /// The raw word of slot `i`: a leaf's value encoding or a child pointer.
    #[inline]
    pub(crate) fn word(self, i: usize) -> Word {
        debug_assert!(i < self.kind().capacity());
        match self.kind() {
            Kind::Leaf => {
                self.shadow(false, i, false);
                // SAFETY: invariants 1 and 2; copying a `MaybeUninit` never reads it.
                unsafe { (*self.0.as_ptr()).body.leaf.slots[i] }
            }
            kind => pointer_word(self.child_slot_of(kind, i).load(Ordering::Relaxed)),
        }
    }

    /// Writes the raw word of leaf slot `i`, for a caller that knows the
    /// node is a leaf (filling a new leaf, whose header is read once).
    #[inline]
    pub(crate) fn set_leaf_word(self, i: usize, word: Word) {
        debug_assert!(self.is_leaf() && i < LEAF_SLOTS);
        self.shadow(false, i, true);
        // SAFETY: invariants 1 and 2.
        unsafe { (*self.0.as_ptr()).body.leaf.slots[i] = word }
    }

    /// The raw word of leaf slot `i`, for a caller that knows the node is a
    /// leaf (copying a leaf's slots reads its header once, not per slot).
    #[inline]
    pub(crate) fn leaf_word(self, i: usize) -> Word {
        debug_assert!(self.is_leaf() && i < LEAF_SLOTS);
        self.shadow(false, i, false);
        // SAFETY: invariants 1 and 2; copying a `MaybeUninit` never reads it.
        unsafe { (*self.0.as_ptr()).body.leaf.slots[i] }
    }

    #[inline]
    pub(crate) fn set_word(self, i: usize, word: Word) {
        debug_assert!(i < self.kind().capacity());
        match self.kind() {
            Kind::Leaf => {
                self.shadow(false, i, true);
                // SAFETY: invariants 1 and 2.
                unsafe { (*self.0.as_ptr()).body.leaf.slots[i] = word }
            }
            kind => {
                // SAFETY: an internal node's words are always initialised
                // child pointers (callers pass words read from `word` or made
                // by `child_word`).
                let child = unsafe { word_pointer(word) };
                // Relaxed: a node a reader can reach is changed only through
                // `set_child` (Release); this fills nodes being built.
                self.child_slot_of(kind, i).store(child, Ordering::Relaxed)
            }
        }
    }

    /// Makes `self` a byte-for-byte copy of `src` (header, pivots, slots, gaps).
    /// Slot words are copied as raw bytes: the caller decides who owns values.
    ///
    /// # Safety
    /// `self` is a node being built, which no reader can reach. Afterwards
    /// both nodes hold the same value words (and child pointers): the caller
    /// makes sure each value is still dropped once, e.g. by overwriting the
    /// copy's present slots before anything can drop them.
    #[inline]
    #[cfg(not(loom))]
    pub(crate) unsafe fn copy_from(self, src: NodePtr) {
        // Two halves: the compiler expands a copy of 128 bytes into vector
        // moves in place, but calls `memcpy` for the whole 256, and that call
        // costs as much as the copy itself in a duplication of a small tree.
        const HALF: usize = NODE_SIZE / 2;
        let (s, d) = (src.0.as_ptr().cast::<u8>(), self.0.as_ptr().cast::<u8>());
        // SAFETY: invariant 1 for both nodes; they are distinct whole nodes,
        // so both halves of each lie inside it and do not overlap the other.
        unsafe {
            ptr::copy_nonoverlapping(s, d, HALF);
            ptr::copy_nonoverlapping(s.add(HALF), d.add(HALF), HALF);
        }
    }

    /// Under loom, a copy needs its own loom objects, so the node is copied
    /// field by field.
    ///
    /// # Safety
    /// `self` is a node being built, which no reader can reach. Afterwards
    /// both nodes hold the same value words (and child pointers): the caller
    /// makes sure each value is still dropped once, e.g. by overwriting the
    /// copy's present slots before anything can drop them.
    #[cfg(loom)]
    pub(crate) unsafe fn copy_from(self, src: NodePtr) {
        let h = src.header();
        // SAFETY: invariant 1; the copy is a node being built (its memory may
        // hold no header yet), so its loom objects are made anew.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).header).write(AtomicU64::new(h.0)) };
        self.fresh_loom_objects();
        for i in 0..h.kind().capacity() - 1 {
            self.set_pivot(i, src.pivot(i));
        }
        for i in 0..h.kind().capacity() {
            if h.kind() == Kind::Leaf {
                // SAFETY: the raw copy of the caller's contract.
                unsafe { self.set_value_word(i, src.word(i)) };
            } else {
                self.child_slot_of(h.kind(), i).store(
                    src.child_slot_of(h.kind(), i).load(Ordering::Relaxed),
                    Ordering::Relaxed,
                );
            }
        }
        if h.kind() == Kind::ARange {
            for i in 0..ARANGE_SLOTS {
                self.set_gap(i, src.gap(i));
            }
        }
    }

    /// Writes a value word into leaf slot `i` (without touching its bit).
    ///
    /// # Safety
    /// If the slot is or becomes present, `word` must encode a value of the
    /// `V` of the tree that owns the node (invariant 3), and ownership of that
    /// value moves into the slot. Whatever the slot held is overwritten, not
    /// dropped.
    #[inline]
    pub(crate) unsafe fn set_value_word(self, i: usize, word: Word) {
        self.shadow(false, i, true);
        // SAFETY: invariants 1 and 2.
        unsafe { self.slot_ptr(i).write(word) }
    }

    /// Moves the last `len` slots of a leaf of `count` slots
    /// (`src = count - len`) to start at slot `dst`, as `memmove` does: their
    /// words, and the pivots of all but the last, which stays the leaf's last
    /// slot (its end is the leaf's maximum). The in-leaf splice shifts a
    /// leaf's tail this way, as `BTreeMap` shifts a node's keys, instead of
    /// copying it out and back slot by slot. The present bits, the count and
    /// the slots left behind are the caller's to set.
    ///
    /// # Safety
    /// The node is a leaf, `src + len` is its count and `dst + len <=
    /// LEAF_SLOTS`. The moved words still encode their values at the old
    /// slots too: the caller overwrites or marks absent every old slot that
    /// is not also a new one before anything reads the leaf as a whole, so
    /// that each value is owned by one present slot (invariant 3).
    #[inline]
    pub(crate) unsafe fn move_leaf_tail(self, src: usize, dst: usize, len: usize) {
        debug_assert!(self.is_leaf() && src + len == self.count() && dst + len <= LEAF_SLOTS);
        // SAFETY: the caller's promise; the ranges may overlap.
        unsafe { self.copy_slot_run(src, self, dst, len) }
    }

    /// Copies `len` slots of this leaf, starting at slot `src`, into leaf
    /// `dst` starting at slot `at`, as `memcpy` does: their words, and the
    /// pivots of all but the last (whose end the caller records, in `dst`'s
    /// next pivot or its parent). Splits, merges and boundary moves between
    /// two leaves copy slots this way instead of one word at a time. The
    /// present bits, counts and the pivot after the copied slots are the
    /// caller's to set.
    ///
    /// # Safety
    /// Both nodes are leaves and distinct, `src + len <= self.count()` and
    /// `at + len <= LEAF_SLOTS`. The copied words still encode their values
    /// in this leaf too: the caller drops them from it (by its count or
    /// present bits) before anything reads either leaf as a whole, so that
    /// each value is owned by one present slot (invariant 3).
    #[inline]
    pub(crate) unsafe fn copy_leaf_slots(self, src: usize, dst: NodePtr, at: usize, len: usize) {
        debug_assert!(self.is_leaf() && dst.is_leaf() && self != dst);
        debug_assert!(src + len <= self.count() && at + len <= LEAF_SLOTS);
        // SAFETY: the caller's promise.
        unsafe { self.copy_slot_run(src, dst, at, len) }
    }

    /// The copy of [`move_leaf_tail`](Self::move_leaf_tail) and
    /// [`copy_leaf_slots`](Self::copy_leaf_slots): the words of `len` slots
    /// of this leaf from `src`, and the pivots of all but the last, to leaf
    /// `dst` (this one or another) from slot `at`, as `memmove` does.
    ///
    /// # Safety
    /// Both nodes are leaves, `src + len` and `at + len` are at most
    /// `LEAF_SLOTS`; what the copied words own is the caller's to settle,
    /// as for the two functions above.
    #[inline]
    unsafe fn copy_slot_run(self, src: usize, dst: NodePtr, at: usize, len: usize) {
        if len == 0 {
            return;
        }
        for i in 0..len {
            self.shadow(false, src + i, false);
            dst.shadow(false, at + i, true);
        }
        for i in 0..len - 1 {
            self.shadow(true, src + i, false);
            dst.shadow(true, at + i, true);
        }
        // SAFETY: invariants 1 and 2 for both nodes; the caller keeps both
        // ranges inside the leaves' arrays (`len - 1` pivots end at most at
        // index `LEAF_SLOTS - 2`); `ptr::copy` allows the ranges to overlap
        // and no reference is created.
        unsafe {
            let from = ptr::addr_of_mut!((*self.0.as_ptr()).body.leaf);
            let to = ptr::addr_of_mut!((*dst.0.as_ptr()).body.leaf);
            let (from_slots, to_slots) = (
                ptr::addr_of_mut!((*from).slots).cast::<Word>(),
                ptr::addr_of_mut!((*to).slots).cast::<Word>(),
            );
            ptr::copy(from_slots.add(src), to_slots.add(at), len);
            let (from_pivots, to_pivots) = (
                ptr::addr_of_mut!((*from).pivots).cast::<u64>(),
                ptr::addr_of_mut!((*to).pivots).cast::<u64>(),
            );
            ptr::copy(from_pivots.add(src), to_pivots.add(at), len - 1);
        }
    }

    /// Copies `len` children of this internal node of `kind`, starting at
    /// child `src`, into the internal node `dst` of the same kind, starting
    /// at child `at`, as `memcpy` does: the child pointers, their recorded
    /// gaps (allocation trees), and the pivots of all but the last (whose
    /// end the caller records, in `dst`'s next pivot or as its maximum).
    /// A copy of a parent in RCU mode moves the children after the replaced
    /// ones this way instead of one at a time.
    ///
    /// This node may be one readers walk: it is only read, and only its
    /// writer (the caller) ever stores into it.
    ///
    /// # Safety
    /// `dst` is a node being built, which no reader can reach, distinct
    /// from this one; both are of `kind`; `src + len <= self.count()` and
    /// `at + len <= kind.capacity()`. Both nodes then link the copied
    /// children: the caller makes sure that one of them leaves the tree (and
    /// is freed as memory only), so each child is linked once.
    #[inline]
    pub(crate) unsafe fn copy_children_to(
        self,
        kind: Kind,
        src: usize,
        dst: NodePtr,
        at: usize,
        len: usize,
    ) {
        debug_assert!(kind != Kind::Leaf && self.kind() == kind && dst.kind() == kind);
        debug_assert!(self != dst && src + len <= self.count() && at + len <= kind.capacity());
        if len == 0 {
            return;
        }
        #[cfg(not(loom))]
        // SAFETY: invariants 1 and 2 for both nodes; the caller keeps both
        // runs inside the nodes' arrays (`len - 1` pivots end at most at
        // index `capacity - 2`) and the nodes distinct, so the copies do not
        // overlap. Nothing else writes `dst`, which no reader can reach, and
        // only this thread writes `self`, so reading its atomics as plain
        // memory races with nothing. No reference is created.
        unsafe {
            let (from, to) = (self.0.as_ptr(), dst.0.as_ptr());
            ptr::copy_nonoverlapping(
                ptr::addr_of!((*from).body.leaf.pivots)
                    .cast::<u64>()
                    .add(src),
                ptr::addr_of_mut!((*to).body.leaf.pivots)
                    .cast::<u64>()
                    .add(at),
                len - 1,
            );
            ptr::copy_nonoverlapping(
                self.children_ptr(kind).add(src),
                dst.children_ptr(kind).add(at),
                len,
            );
            if kind == Kind::ARange {
                let (a, b) = (self.arange_body(), dst.arange_body());
                ptr::copy_nonoverlapping(
                    ptr::addr_of!((*a).gaps).cast::<AtomicU64>().add(src),
                    ptr::addr_of_mut!((*b).gaps).cast::<AtomicU64>().add(at),
                    len,
                );
            }
        }
        // Under loom the atomics are objects of the model run: copied one by
        // one through their accessors (which also announce the pivots).
        #[cfg(loom)]
        for i in 0..len {
            if i + 1 < len {
                dst.set_pivot(at + i, self.pivot(src + i));
            }
            dst.set_child_of(kind, at + i, self.child_of(kind, src + i));
            if kind == Kind::ARange {
                dst.set_gap(at + i, self.gap(src + i));
            }
        }
    }

    /// Pointer to leaf slot `i`'s word, for the `value_*` functions.
    #[inline]
    fn slot_ptr(self, i: usize) -> *mut Word {
        debug_assert!(self.is_leaf() && i < LEAF_SLOTS);
        // SAFETY: invariants 1 and 2; no reference is created.
        unsafe { ptr::addr_of_mut!((*self.0.as_ptr()).body.leaf.slots[i]) }
    }

    /// The value in present leaf slot `i`.
    ///
    /// # Safety
    /// `V` is the value type of the tree that owns the node (invariant 3), and
    /// for `'a` the slot is neither written, taken nor freed: callers tie `'a`
    /// to a shared borrow of the tree (or of an RCU read guard).
    #[inline]
    pub(crate) unsafe fn value<'a, V>(self, i: usize) -> &'a V {
        debug_assert!(self.is_present(i));
        self.shadow(false, i, false);
        // SAFETY: the caller's promise (type and lifetime); invariants 1, 2.
        unsafe { value_ref(self.slot_ptr(i)) }
    }

    /// Moves the value out of present leaf slot `i` and marks the slot absent,
    /// so that nothing reads or drops it again.
    ///
    /// # Safety
    /// `V` is the value type of the tree that owns the node (invariant 3), no
    /// reference to the value is alive, and no concurrent reader can see the
    /// node (it is being rebuilt, or the tree is not in RCU mode).
    #[inline]
    pub(crate) unsafe fn take_value<V>(self, i: usize) -> V {
        debug_assert!(self.is_present(i));
        self.set_present_bits(self.present_bits() & !(1 << i));
        // SAFETY: the caller's promise of the type; the bit is clear, so this
        // is the only read.
        unsafe { word_value(self.word(i)) }
    }

    /// The value in present leaf slot `i`, mutably.
    ///
    /// # Safety
    /// As for [`value`](Self::value), with `'a` tied to an exclusive borrow of
    /// the tree: no other reference to this value exists for `'a`.
    #[inline]
    pub(crate) unsafe fn value_mut<'a, V>(self, i: usize) -> &'a mut V {
        debug_assert!(self.is_present(i));
        self.shadow(false, i, true);
        // SAFETY: the caller's promise (type, exclusive lifetime).
        unsafe { value_mut(self.slot_ptr(i)) }
    }
}

/// Where the children array of an internal node starts (see
/// [`Snap::children`]).
///
/// A node's kind is set when the node is made and never changes, so where
/// its children array starts stays the same for as long as the node is
/// live. The children themselves are loaded at each
/// [`get_unchecked`](Self::get_unchecked), as [`Snap::child`] loads them.
#[derive(Clone, Copy)]
pub(crate) struct Children {
    first: NonNull<AtomicPtr<Node>>,
}

// SAFETY: as for `NodePtr`: an address into a node, which the types that
// hold it treat as their tree's (the iterators keep it beside the node's
// `NodePtr`, under the same `V`).
unsafe impl Send for Children {}
// SAFETY: as for `Send`: `&Children` gives only the address.
unsafe impl Sync for Children {}

impl Children {
    /// None: the array of no node, for a level that has no parent.
    pub(crate) const NONE: Children = Children {
        first: NonNull::dangling(),
    };

    /// Child `i`, without the bounds check (`i` is known from the count).
    ///
    /// # Safety
    /// The node these were taken from is live, and `i` is below the count
    /// of the snapshot they were taken from.
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(self, i: usize) -> NodePtr {
        // SAFETY: the caller's promise: the node is live and `i` is below
        // the count, so below the capacity of the node's kind, whose
        // children array `first` starts.
        let raw = unsafe { (*self.first.as_ptr().add(i)).load(Ordering::Acquire) };
        // SAFETY: invariants 1 and 2: slots below `count` of an internal node
        // hold non-null child pointers.
        unsafe { NodePtr(NonNull::new_unchecked(raw)) }
    }
}

/// A node as one reader saw it: the header is loaded once, so every answer
/// below agrees with the same count and value bits even while a writer
/// appends to the node (RCU mode). Pivots, children and values are read
/// through the pointer; those below the snapshot's count never change while
/// the node is reachable.
#[derive(Clone, Copy)]
pub(crate) struct Snap {
    node: NodePtr,
    header: Header,
}

impl NodePtr {
    /// Takes a snapshot of the header for one visit of the node.
    ///
    /// A walk touches the header and pivots (the first two cache lines) and
    /// then one slot (the third or fourth); asking for all four lines at once
    /// lets their misses overlap instead of following one another.
    #[inline]
    pub(crate) fn snap(self) -> Snap {
        self.prefetch();
        Snap {
            node: self,
            header: self.header(),
        }
    }

    /// A header snapshot without prefetching, for a node already in cache
    /// (stepping through a leaf).
    #[inline]
    pub(crate) fn peek(self) -> Snap {
        Snap {
            node: self,
            header: self.header(),
        }
    }

    /// Starts loading all four of the node's cache lines, for a node read
    /// some time later ([`prefetch`](Self::prefetch) leaves out the header's).
    #[inline(always)]
    pub(crate) fn prefetch_ahead(self) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: prefetching never faults; the address is the node's.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(self.0.as_ptr().cast::<i8>()) }
        }
        self.prefetch();
    }

    /// Starts loading the node's last three cache lines: not the header's,
    /// which [`snap`](Self::snap) reads at once.
    #[inline(always)]
    pub(crate) fn prefetch(self) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = self.0.as_ptr().cast::<i8>();
            // SAFETY: prefetching never faults; the addresses lie inside the node.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(128));
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(192));
            }
        }
    }
}

impl Snap {
    #[inline]
    pub(crate) fn node(&self) -> NodePtr {
        self.node
    }

    #[inline]
    pub(crate) fn is_leaf(&self) -> bool {
        self.header.kind() == Kind::Leaf
    }

    #[inline]
    pub(crate) fn count(&self) -> usize {
        self.header.count()
    }

    #[inline]
    pub(crate) fn is_present(&self, i: usize) -> bool {
        self.header.present() & (1 << i) != 0
    }

    /// Leaf presence bits.
    #[inline]
    pub(crate) fn present_bits(&self) -> u16 {
        self.header.present()
    }

    /// The slot holding `index` (which the node, covering `min..=max`,
    /// covers), and that slot's bounds: one step of a walk down.
    ///
    /// The last slot is tried first: a store in ascending order (an append,
    /// or a tree rebuilt in order) lands there at every level, where a scan
    /// would cross every pivot. When it is not the last, pivot `last - 1` is
    /// at least `index` and stops the scan from the front at the latest, so
    /// the scan needs no bound of its own; nor do the pivots the bounds are
    /// read from, all below `last`. Dropping both bounds checks saved
    /// about 40 instructions of a store's walk through a tree of five
    /// levels (callgrind).
    #[inline(always)]
    pub(crate) fn step(&self, index: u64, min: u64, max: u64) -> (usize, u64, u64) {
        let last = self.count() - 1;
        debug_assert!(last < self.node.kind().capacity());
        // Every pivot read below is below `last`.
        let pivot = |i: usize| {
            // SAFETY: the node is live (the snapshot's promise), and `i <
            // last` is below the capacity less one: no writer sets a count
            // above the capacity of its node's kind.
            unsafe { self.node.pivot_unchecked(i) }
        };
        if last == 0 {
            return (0, min, max);
        }
        let before_last = pivot(last - 1);
        if before_last < index {
            return (last, before_last + 1, max);
        }
        // Pivots below the snapshot's count do not change while the node is
        // reachable, so the scan meets pivot `last - 1` again and stops.
        // Two pivots a round: when pivot `i` is below `index`, `i + 1` is at
        // most `last - 1`, so the second read stays below `last` too. The
        // round's one index update saves about a quarter of the scan's
        // instructions.
        let mut i = 0;
        loop {
            if pivot(i) >= index {
                break;
            }
            if pivot(i + 1) >= index {
                i += 1;
                break;
            }
            i += 2;
        }
        debug_assert!(i < last);
        let start = if i == 0 { min } else { pivot(i - 1) + 1 };
        (i, start, pivot(i))
    }

    /// The slot holding `index` (which the node covers): [`step`](Self::step)
    /// without the bounds.
    #[inline(always)]
    pub(crate) fn slot_of(&self, index: u64) -> usize {
        self.step(index, 0, u64::MAX).0
    }

    /// The slot holding `index` (which the node covers), found by counting
    /// the pivots below `index` rather than by scanning for the first that
    /// is not: every comparison runs, and no branch depends on the pivots.
    ///
    /// For the last step of a lookup. A scan's exit branch depends on a
    /// node that has usually just come from memory, and for lookups spread
    /// over the tree it has no pattern to predict; a misprediction discards
    /// what the processor had begun of the caller's next lookups, which
    /// counting lets overlap their cache misses. That is our reading of
    /// the measurement (15% less time for `load` over a million ranges; the
    /// machines it was taken on have no branch counters). On the way down
    /// the scan stays: counting at every level was slower, and counting in
    /// the leaf's parent as well gained nothing (presumably a scan's guessed
    /// path starts loading a child before the node's pivots are in).
    #[inline(always)]
    pub(crate) fn slot_by_count(&self, index: u64) -> usize {
        let last = self.count() - 1;
        let mut below = 0;
        for i in 0..last {
            // SAFETY: the node is live (the snapshot's promise), and `i <
            // last` is below the capacity less one (as in `step`). Pivots
            // below the snapshot's count do not change while the node is
            // reachable, and they ascend, so the pivots below `index` are
            // the first `below` of them: `index` lies in slot `below`.
            below += usize::from(unsafe { self.node.pivot_unchecked(i) } < index);
        }
        below
    }

    /// The slot holding `index`, scanning from the last slot down (cheaper
    /// when `index` is near the node's end, as in top-down gap search).
    #[inline]
    pub(crate) fn slot_of_rev(&self, index: u64) -> usize {
        self.step_rev(index, 0, u64::MAX).0
    }

    /// As [`step`](Self::step), scanning from the last slot down: the slot
    /// holding `index` with its first and last index, each pivot read once.
    #[inline(always)]
    pub(crate) fn step_rev(&self, index: u64, min: u64, max: u64) -> (usize, u64, u64) {
        let (mut i, mut end) = (self.count() - 1, max);
        while i > 0 {
            let pivot = self.node.pivot(i - 1);
            if pivot < index {
                return (i, pivot + 1, end);
            }
            (i, end) = (i - 1, pivot);
        }
        (0, min, end)
    }

    #[inline]
    pub(crate) fn slot_start(&self, i: usize, min: u64) -> u64 {
        self.node.slot_start(i, min)
    }

    #[inline]
    pub(crate) fn slot_end(&self, i: usize, max: u64) -> u64 {
        if i + 1 == self.count() {
            max
        } else {
            self.node.pivot(i)
        }
    }

    #[inline]
    pub(crate) fn child(&self, i: usize) -> NodePtr {
        debug_assert!(!self.is_leaf() && i < self.count());
        let raw = self
            .node
            .child_slot_of(self.header.kind(), i)
            .load(Ordering::Acquire);
        // SAFETY: invariants 1 and 2: slots below `count` of an internal node
        // hold non-null child pointers.
        unsafe { NodePtr(NonNull::new_unchecked(raw)) }
    }

    /// Child `i` of an allocation tree's internal node. The gap walks know
    /// the kind (they read the node's gap records), so the child's address
    /// does not wait for the kind in the header: one step less on the chain
    /// of loads down the tree.
    #[inline]
    pub(crate) fn arange_child(&self, i: usize) -> NodePtr {
        debug_assert!(self.kind() == Kind::ARange);
        self.node.child_of(Kind::ARange, i)
    }

    /// The children of an internal node, to load later by index without
    /// reading the node's kind again: an iterator loads one or two at every
    /// leaf crossing, and keeps this beside the parent it crosses under.
    #[inline(always)]
    pub(crate) fn children(&self) -> Children {
        debug_assert!(!self.is_leaf());
        let first = self.node.children_ptr(self.header.kind());
        Children {
            // SAFETY: an address inside the live node is not null.
            first: unsafe { NonNull::new_unchecked(first) },
        }
    }

    #[inline]
    pub(crate) fn gap(&self, i: usize) -> u64 {
        self.node.gap(i)
    }

    /// The value of slot `i`, present in this snapshot.
    ///
    /// # Safety
    /// As for [`NodePtr::value`].
    #[inline]
    pub(crate) unsafe fn value<'a, V>(&self, i: usize) -> &'a V {
        debug_assert!(self.is_present(i));
        self.node.shadow(false, i, false);
        // SAFETY: the caller's promise (type and lifetime); the slot is
        // present in the snapshot, and a slot's value is written before the
        // header that shows it.
        unsafe { value_ref(self.node.slot_ptr(i)) }
    }

    /// The value of slot `i`, mutably.
    ///
    /// # Safety
    /// As for [`NodePtr::value_mut`].
    #[inline]
    pub(crate) unsafe fn value_mut<'a, V>(&self, i: usize) -> &'a mut V {
        // SAFETY: the caller's promise.
        unsafe { self.node.value_mut(i) }
    }

    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        self.header.kind()
    }
}

/// A child pointer as a slot word.
#[inline]
pub(crate) fn child_word(child: NodePtr) -> Word {
    pointer_word(child.0.as_ptr())
}

/// A slot word holding a child pointer, back as a pointer.
///
/// # Safety
/// `word` must have been made by [`child_word`] from a node that is still
/// live (invariant 1).
#[inline]
pub(crate) unsafe fn word_child(word: Word) -> NodePtr {
    // SAFETY: the caller's promise: an initialised, non-null node pointer.
    unsafe { NodePtr(NonNull::new_unchecked(word_pointer(word))) }
}

/// A pointer as a slot word. The pointer is written into the word's memory,
/// not cast to an integer, so the word keeps its provenance (strict
/// provenance: no integer-to-pointer casts anywhere in the crate).
#[inline]
fn pointer_word(p: *mut Node) -> Word {
    const _: () = assert!(size_of::<*mut Node>() == size_of::<Word>());
    let mut word = Word::uninit();
    // SAFETY: a pointer has the size of the word, whose alignment suffices.
    unsafe { word.as_mut_ptr().cast::<*mut Node>().write(p) };
    word
}

/// The pointer a word made by [`pointer_word`] holds.
///
/// # Safety
/// `word` must be initialised (made by [`pointer_word`], or holding a
/// pointer written into it).
#[inline]
unsafe fn word_pointer(word: Word) -> *mut Node {
    // SAFETY: the caller's promise; the word is aligned for a pointer.
    unsafe { word.as_ptr().cast::<*mut Node>().read() }
}

/// Whether values of `V` live in the slot word itself.
#[inline]
pub(crate) const fn is_inline<V>() -> bool {
    size_of::<V>() <= size_of::<Word>() && align_of::<V>() <= align_of::<Word>()
}

/// Encodes a value as a slot word (boxing it when it does not fit).
#[inline]
pub(crate) fn value_word<V>(value: V) -> Word {
    let mut word = MaybeUninit::<u64>::uninit();
    if is_inline::<V>() {
        // SAFETY: `V` fits the word in size and alignment (`is_inline`).
        unsafe { word.as_mut_ptr().cast::<V>().write(value) }
    } else {
        let boxed = Box::into_raw(Box::new(value));
        // SAFETY: the word is 8 bytes, aligned for a pointer.
        unsafe { word.as_mut_ptr().cast::<*mut V>().write(boxed) }
    }
    word
}

/// Decodes a slot word back into the value it owns.
///
/// # Safety
/// `word` must hold a `V` made by [`value_word`] that nothing else will read
/// or drop afterwards (ownership moves to the caller).
#[inline]
pub(crate) unsafe fn word_value<V>(word: Word) -> V {
    if is_inline::<V>() {
        // SAFETY: the caller promises the word holds an inline `V`.
        unsafe { word.as_ptr().cast::<V>().read() }
    } else {
        // SAFETY: the caller promises the word holds a box pointer from
        // `Box::into_raw`, whose ownership moves back here.
        unsafe { *Box::from_raw(word.as_ptr().cast::<*mut V>().read()) }
    }
}

/// # Safety
/// `slot` points to a word holding a `V` (invariant 3) that stays valid and
/// unwritten for `'a`.
#[inline]
unsafe fn value_ref<'a, V>(slot: *const Word) -> &'a V {
    if is_inline::<V>() {
        // SAFETY: the caller's promise; the word is aligned for `V`.
        unsafe { &*slot.cast::<V>() }
    } else {
        // SAFETY: the caller's promise; the word holds a live box pointer.
        unsafe { &**slot.cast::<*const V>() }
    }
}

/// # Safety
/// As [`value_ref`], and no other reference to the value exists for `'a`.
#[inline]
unsafe fn value_mut<'a, V>(slot: *mut Word) -> &'a mut V {
    if is_inline::<V>() {
        // SAFETY: the caller's promise; the word is aligned for `V`.
        unsafe { &mut *slot.cast::<V>() }
    } else {
        // SAFETY: the caller's promise; the word holds a live box pointer.
        unsafe { &mut **slot.cast::<*mut V>() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::NodePool;
    use alloc::string::String;
    use alloc::vec::Vec;

    #[test]
    fn the_header_keeps_kind_count_and_value_bits_apart() {
        for kind in [Kind::Leaf, Kind::Range, Kind::ARange] {
            for count in 0..=kind.capacity() {
                for present in [0, 1, 0x8000, 0xffff, 0x5a5a] {
                    let h = Header::new(kind, count, present);
                    assert_eq!((h.kind(), h.count(), h.present()), (kind, count, present));
                }
            }
        }
    }

    #[test]
    fn header_setters_change_only_their_field() {
        let mut pool = NodePool::new();
        let n = pool.alloc(Kind::Leaf).unwrap();
        assert_eq!((n.kind(), n.count(), n.present_bits()), (Kind::Leaf, 0, 0));
        n.set_count(16);
        n.set_present_bits(0xa001);
        assert_eq!(
            (n.kind(), n.count(), n.present_bits()),
            (Kind::Leaf, 16, 0xa001)
        );
        assert!(n.is_present(0) && n.is_present(15) && !n.is_present(1));
        n.set_count(3);
        assert_eq!(n.present_bits(), 0xa001);
        n.publish_leaf(5, 0b10101);
        let snap = n.snap();
        assert_eq!((snap.count(), snap.present_bits()), (5, 0b10101));
        assert!(snap.is_leaf() && snap.is_present(2) && !snap.is_present(1));
        n.set_count(0);
        n.set_present_bits(0);
        // SAFETY: the test's own node, not used again.
        unsafe { pool.free(n) };
    }

    /// Stores `values` in a leaf, reads them back by reference, changes them
    /// through `value_mut`, and takes them out again.
    fn round_trip<V: Clone + PartialEq + core::fmt::Debug>(values: &[V], change: impl Fn(&mut V)) {
        assert!(values.len() <= LEAF_SLOTS);
        let mut pool = NodePool::new();
        let n = pool.alloc(Kind::Leaf).unwrap();
        let mut bits = 0u16;
        for (i, v) in values.iter().enumerate() {
            // SAFETY: the leaf holds `V`s only.
            unsafe { n.set_value_word(i, value_word(v.clone())) };
            bits |= 1 << i;
        }
        n.publish_leaf(values.len(), bits);
        let snap = n.snap();
        for (i, v) in values.iter().enumerate() {
            // SAFETY: the leaf holds `V`s in the present slots; each
            // reference ends before the slot is written or taken.
            let (by_node, by_snap) = unsafe { (n.value::<V>(i), snap.value::<V>(i)) };
            assert_eq!((by_node, by_snap), (v, v));
        }
        let mut want: Vec<V> = values.to_vec();
        for (i, w) in want.iter_mut().enumerate() {
            // SAFETY: as above; no other reference to the value is alive.
            change(unsafe { n.value_mut::<V>(i) });
            change(w);
            // SAFETY: as above.
            assert_eq!(unsafe { snap.value::<V>(i) }, w);
        }
        for (i, w) in want.iter().enumerate() {
            // SAFETY: as above; each value is taken once.
            assert_eq!(&unsafe { n.take_value::<V>(i) }, w);
            assert!(!n.is_present(i));
        }
        assert_eq!(n.present_bits(), 0);
        // SAFETY: the test's own node, not used again.
        unsafe { pool.free(n) };
    }

    /// A leaf of `values` (present, boxed) with pivots `10 * i + 9`.
    fn boxed_leaf(pool: &mut NodePool, values: &[u64]) -> NodePtr {
        let n = pool.alloc(Kind::Leaf).unwrap();
        for (i, &v) in values.iter().enumerate() {
            if i + 1 < values.len() {
                n.set_pivot(i, 10 * i as u64 + 9);
            }
            // SAFETY: the leaf holds `String`s only.
            unsafe { n.set_value_word(i, value_word(alloc::format!("{v}"))) };
        }
        n.publish_leaf(values.len(), ((1u32 << values.len()) - 1) as u16);
        n
    }

    /// Takes every value of the leaf out, in slot order, and frees it.
    fn drain(pool: &mut NodePool, n: NodePtr) -> Vec<String> {
        let out = (0..n.count())
            // SAFETY: every slot holds a `String`, taken once.
            .map(|i| unsafe { n.take_value::<String>(i) })
            .collect();
        // SAFETY: the test's own node, not used again.
        unsafe { pool.free(n) };
        out
    }

    #[test]
    fn moving_a_leaf_tail_keeps_words_and_pivots() {
        let mut pool = NodePool::new();
        // Right by two (an insert), overlapping: slots 3..6 to 5..8.
        let n = boxed_leaf(&mut pool, &[0, 1, 2, 3, 4, 5]);
        // SAFETY: slots 3..6 are the leaf's last; 5 + 3 <= LEAF_SLOTS.
        unsafe { n.move_leaf_tail(3, 5, 3) };
        assert_eq!((n.pivot(5), n.pivot(6)), (39, 49));
        for (i, v) in [(3, "7"), (4, "8")] {
            n.set_pivot(i, 40 + i as u64);
            // SAFETY: slots 3 and 4 were moved away: overwritten, not dropped.
            unsafe { n.set_value_word(i, value_word(String::from(v))) };
        }
        n.publish_leaf(8, 0xff);
        assert_eq!(
            drain(&mut pool, n),
            ["0", "1", "2", "7", "8", "3", "4", "5"]
        );
        // Left by three (an erase), to the start; the last slot stays last.
        let n = boxed_leaf(&mut pool, &[0, 1, 2, 3, 4, 5, 6]);
        for i in 0..3 {
            // SAFETY: slots 0..3 hold `String`s, taken once.
            drop(unsafe { n.take_value::<String>(i) });
        }
        // SAFETY: slots 3..7 are the leaf's last.
        unsafe { n.move_leaf_tail(3, 0, 4) };
        assert_eq!((n.pivot(0), n.pivot(1), n.pivot(2)), (39, 49, 59));
        n.publish_leaf(4, 0xf);
        assert_eq!(drain(&mut pool, n), ["3", "4", "5", "6"]);
        // Nothing to move.
        let n = boxed_leaf(&mut pool, &[0]);
        // SAFETY: an empty tail.
        unsafe { n.move_leaf_tail(1, 1, 0) };
        assert_eq!(drain(&mut pool, n), ["0"]);
    }

    #[test]
    fn inline_values_round_trip() {
        assert!(is_inline::<u8>() && is_inline::<u64>() && !is_inline::<&str>());
        round_trip(&[0u8, 1, 255], |v| *v = v.wrapping_add(1));
        round_trip(&[0u64, u64::MAX, 0x1234_5678_9abc_def0], |v| *v ^= 0xff);
        round_trip(&[Some(3u32), None, Some(u32::MAX)], |v| {
            *v = v.map(|x| x / 2)
        });
        // A box is a pointer-sized value: stored inline, still owning heap memory.
        round_trip(&[alloc::boxed::Box::new(5u64)], |v| **v += 1);
    }

    #[test]
    fn zero_sized_values_round_trip() {
        assert!(is_inline::<()>());
        round_trip(&[(); LEAF_SLOTS], |_| {});
    }

    #[test]
    fn boxed_values_round_trip() {
        assert!(!is_inline::<[u64; 3]>() && !is_inline::<String>() && !is_inline::<u128>());
        round_trip(&[[1u64, 2, 3], [u64::MAX - 1; 3]], |v| v[1] += 1);
        round_trip(&[String::from("a"), String::new(), "x".repeat(100)], |v| {
            v.push('!')
        });
        round_trip(&[u128::MAX, 0], |v| *v = v.wrapping_add(7));
    }

    #[test]
    fn a_value_word_moves_between_slots_as_raw_bytes() {
        let mut pool = NodePool::new();
        let (a, b) = (
            pool.alloc(Kind::Leaf).unwrap(),
            pool.alloc(Kind::Leaf).unwrap(),
        );
        // SAFETY: both leaves hold `String`s; the value has one owner at a
        // time (`a`, then `b`, then the test).
        unsafe {
            a.set_value_word(0, value_word(String::from("moved")));
            a.publish_leaf(1, 1);
            b.set_value_word(3, a.word(0));
            b.publish_leaf(4, 1 << 3);
            a.publish_leaf(1, 0); // `a` gave its value away
            assert_eq!(b.value::<String>(3), "moved");
            assert_eq!(b.take_value::<String>(3), "moved");
        }
        // SAFETY: the test's own nodes, not used again.
        unsafe {
            pool.free(a);
            pool.free(b);
        }
    }

    #[test]
    fn child_pointers_and_gaps_round_trip() {
        let mut pool = NodePool::new();
        for kind in [Kind::Range, Kind::ARange] {
            let parent = pool.alloc(kind).unwrap();
            let leaves: Vec<NodePtr> = (0..kind.capacity())
                .map(|_| pool.alloc(Kind::Leaf).unwrap())
                .collect();
            for (i, &leaf) in leaves.iter().enumerate() {
                if i % 2 == 0 {
                    parent.set_child(i, leaf);
                } else {
                    parent.set_word(i, child_word(leaf));
                }
            }
            parent.publish_count(kind, kind.capacity());
            for (i, &leaf) in leaves.iter().enumerate() {
                assert_eq!(parent.child(i), leaf);
                assert_eq!(parent.snap().child(i), leaf);
                // SAFETY: the word was made by `child_word` from a live leaf.
                assert_eq!(unsafe { word_child(parent.word(i)) }, leaf);
                // The pointer read back is usable: it kept its provenance.
                assert!(parent.child(i).is_leaf());
            }
            if kind == Kind::ARange {
                for i in 0..ARANGE_SLOTS {
                    parent.set_gap(i, u64::MAX - i as u64);
                }
                for i in 0..ARANGE_SLOTS {
                    assert_eq!(parent.gap(i), u64::MAX - i as u64);
                }
            }
            // SAFETY: the test's own nodes, not used again.
            unsafe {
                for leaf in leaves {
                    pool.free(leaf);
                }
                pool.free(parent);
            }
        }
    }

    #[test]
    fn copy_from_copies_header_pivots_slots_and_gaps() {
        let mut pool = NodePool::new();
        let src = pool.alloc(Kind::Leaf).unwrap();
        for i in 0..LEAF_SLOTS - 1 {
            src.set_pivot(i, 10 * i as u64 + 9);
        }
        for i in 0..LEAF_SLOTS {
            // SAFETY: the leaf holds `u64`s.
            unsafe { src.set_value_word(i, value_word(i as u64 * 3)) };
        }
        src.publish_leaf(LEAF_SLOTS, 0xffff);
        let dst = pool.alloc(Kind::Range).unwrap();
        // SAFETY: `dst` is the test's fresh node; the `u64`s need no drop.
        unsafe { dst.copy_from(src) };
        assert_eq!(
            (dst.kind(), dst.count(), dst.present_bits()),
            (Kind::Leaf, 16, 0xffff)
        );
        for i in 0..LEAF_SLOTS - 1 {
            assert_eq!(dst.pivot(i), 10 * i as u64 + 9);
        }
        for i in 0..LEAF_SLOTS {
            // SAFETY: the copy holds `src`'s `u64`s.
            assert_eq!(unsafe { *dst.value::<u64>(i) }, i as u64 * 3);
        }

        let parent = pool.alloc(Kind::ARange).unwrap();
        for i in 0..ARANGE_SLOTS {
            parent.set_child(i, src);
            parent.set_gap(i, i as u64);
            if i < ARANGE_SLOTS - 1 {
                parent.set_pivot(i, i as u64);
            }
        }
        parent.publish_count(Kind::ARange, ARANGE_SLOTS);
        let copy = pool.alloc(Kind::Leaf).unwrap();
        // SAFETY: `copy` is the test's fresh node; children are shared
        // pointers that the test frees once.
        unsafe { copy.copy_from(parent) };
        assert_eq!((copy.kind(), copy.count()), (Kind::ARange, ARANGE_SLOTS));
        for i in 0..ARANGE_SLOTS {
            assert_eq!((copy.child(i), copy.gap(i)), (src, i as u64));
            if i < ARANGE_SLOTS - 1 {
                assert_eq!(copy.pivot(i), i as u64);
            }
        }
        for n in [src, dst, parent, copy] {
            // SAFETY: the test's own node, not used again.
            unsafe { pool.free(n) };
        }
    }

    #[test]
    fn slot_ranges_follow_pivots() {
        let mut pool = NodePool::new();
        let n = pool.alloc(Kind::Leaf).unwrap();
        for (i, p) in [9u64, 19, 29].into_iter().enumerate() {
            n.set_pivot(i, p);
        }
        n.publish_leaf(4, 0);
        let s = n.snap();
        assert_eq!((s.slot_start(0, 0), s.slot_end(0, 99)), (0, 9));
        assert_eq!((s.slot_start(3, 0), s.slot_end(3, 99)), (30, 99));
        for (index, slot) in [(0, 0), (9, 0), (10, 1), (29, 2), (30, 3), (99, 3)] {
            assert_eq!(
                (
                    s.slot_of(index),
                    s.slot_of_rev(index),
                    s.slot_by_count(index)
                ),
                (slot, slot, slot),
                "{index}"
            );
            let bounds = (slot, s.slot_start(slot, 0), s.slot_end(slot, 99));
            assert_eq!(s.step(index, 0, 99), bounds, "{index}");
            assert_eq!(s.step_rev(index, 0, 99), bounds, "{index}");
        }
        assert_eq!(span(0, u64::MAX), u64::MAX);
        assert_eq!(span(5, 5), 1);
        // SAFETY: the test's own node, not used again.
        unsafe { pool.free(n) };
    }
}
