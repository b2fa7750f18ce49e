//! How the concurrent tree holds its values: each in a box of its own
//! ([`Boxed`], for any value), or inside the nodes like a plain tree
//! ([`Inline`], for values free of interior mutability: [`Frozen`]).
//!
//! A reader holds references to values while the writer rebuilds the nodes
//! around them, copying each slot into the new node. A value that lives in
//! its slot is then in two places: the reader's reference points at the old
//! node's copy, which stays (unchanged) until the reader leaves, and later
//! readers see the new copy. For a value whose bytes never change behind a
//! shared reference, both copies are the same value and nothing is lost.
//! An atomic, a `Mutex` or a `OnceLock` inside the value's own bytes would
//! break that: what a reader writes through its reference goes to a copy
//! the tree has already left behind, and the writer's copying races with
//! it. Such values must stay where they are, in a box, which only the
//! pointer leaves.

use crate::boxed::{box_values, unbox_values};
use crate::node::is_inline;
use crate::spare_boxes::SpareBoxes;
use crate::tree::MapleTree;
use crate::write::Split;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::needs_drop;
use core::num::{
    NonZeroI128, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI8, NonZeroIsize, NonZeroU128,
    NonZeroU16, NonZeroU32, NonZeroU64, NonZeroU8, NonZeroUsize,
};
use core::ops::RangeInclusive;
use core::ptr::NonNull;

/// Types whose own bytes never change while a shared reference to them
/// exists: no `UnsafeCell` (atomics, `Cell`, `Mutex`, `OnceLock`, …) in
/// the value itself, outside any pointer it holds. What the compiler calls
/// `Freeze`, which stable Rust does not let a library name.
///
/// What a value points to does not matter: `Box<AtomicU64>` and
/// `Arc<Mutex<T>>` are `Frozen` (the pointer is copied, the atomic or
/// mutex stays where it is), `AtomicU64` and `(u32, Cell<u32>)` are not.
///
/// Implemented for the primitive types, `NonZero` integers, shared
/// references, raw and non-null pointers, `Box`, `Rc`, `Arc`, `Vec`, `String`,
/// `PhantomData`, and `Option`, arrays and tuples (up to four) of `Frozen`
/// types.
///
/// # Safety
/// No part of the type's own bytes may be mutable through a shared
/// reference: every field, recursively, is `Frozen`, or is behind a
/// pointer. For a struct of `Frozen` fields:
///
/// ```
/// #[derive(Clone, Copy)]
/// struct Page {
///     frame: u32,
///     flags: u16,
/// }
/// // SAFETY: both fields are integers, which are `Frozen`.
/// unsafe impl maple_tree::Frozen for Page {}
/// ```
///
/// ```compile_fail
/// // An atomic is mutable through a shared reference: not `Frozen`.
/// use std::sync::atomic::AtomicU64;
/// let tree = maple_tree::RcuMapleTree::<AtomicU64, maple_tree::Inline>::new_inline();
/// ```
pub unsafe trait Frozen {}

macro_rules! frozen {
    ($($t:ty),* $(,)?) => {
        $(
            // SAFETY: a primitive or a `NonZero` integer: plain bytes, no
            // `UnsafeCell`.
            unsafe impl Frozen for $t {}
        )*
    };
}

frozen!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroU128,
    NonZeroUsize,
    NonZeroI8,
    NonZeroI16,
    NonZeroI32,
    NonZeroI64,
    NonZeroI128,
    NonZeroIsize,
);

// SAFETY: each of these is a pointer (with, for `Vec`, a length and a
// capacity), none an `UnsafeCell`; what it points to is not part of its
// bytes.
unsafe impl<T: ?Sized> Frozen for &T {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for *const T {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for *mut T {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for NonNull<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for Box<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for Rc<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Frozen for Arc<T> {}
// SAFETY: as above.
unsafe impl<T> Frozen for Vec<T> {}
// SAFETY: a `Vec<u8>`, as above.
unsafe impl Frozen for String {}
// SAFETY: no bytes at all.
unsafe impl<T: ?Sized> Frozen for PhantomData<T> {}
// SAFETY: a discriminant (or a niche of `T`) and a `T`, which is `Frozen`.
unsafe impl<T: Frozen> Frozen for Option<T> {}
// SAFETY: `N` `T`s, each `Frozen`.
unsafe impl<T: Frozen, const N: usize> Frozen for [T; N] {}
// SAFETY: fields that are each `Frozen`.
unsafe impl<A: Frozen, B: Frozen> Frozen for (A, B) {}
// SAFETY: as above.
unsafe impl<A: Frozen, B: Frozen, C: Frozen> Frozen for (A, B, C) {}
// SAFETY: as above.
unsafe impl<A: Frozen, B: Frozen, C: Frozen, D: Frozen> Frozen for (A, B, C, D) {}

/// What a storage does, in a module of its own so that no one outside
/// the crate can name it: only [`Boxed`] and [`Inline`] implement
/// [`Storage`]. A bound `S: Storage<V>` still brings these functions into
/// scope as `S::…` in a caller's generic code, so their names are ones a
/// caller's own traits are unlikely to use.
pub(crate) mod sealed {
    use crate::tree::MapleTree;

    pub trait Holds<V> {
        /// What a slot of the writer's tree holds for a value: `V` or
        /// `Box<V>`, so `Send` exactly when `V` is, and `Sync` exactly when
        /// `V` is (the concurrent tree's `Send` and `Sync` rest on this).
        type Held;
        /// What the writer keeps between writes to hold values cheaply.
        type Spares: Default;
        fn hold_value(spares: &mut Self::Spares, value: V) -> Self::Held;
        /// Drops a value that no reader can see any more.
        fn dispose_value(spares: &mut Self::Spares, held: Self::Held);
        fn release_value(held: Self::Held) -> V;
        fn held_value(held: &Self::Held) -> &V;
        /// A plain tree's values as this storage holds them.
        fn into_held_tree(tree: MapleTree<V>) -> MapleTree<Self::Held>;
        /// The other way round.
        fn from_held_tree(tree: MapleTree<Self::Held>) -> MapleTree<V>;
    }
}

/// How an [`RcuMapleTree`](crate::RcuMapleTree) holds its values: [`Boxed`]
/// (the default, for any value) or [`Inline`] (for [`Frozen`] values).
/// Sealed: these two are the only ones.
pub trait Storage<V>: sealed::Holds<V> {}

impl<V> Storage<V> for Boxed {}
impl<V: Frozen> Storage<V> for Inline {}

/// Every value in a `Box` of its own, which the writer never moves: right
/// for any value, at the price of a box per stored value and a pointer to
/// follow per lookup. The default storage of an
/// [`RcuMapleTree`](crate::RcuMapleTree).
///
/// The writer keeps the boxes of values it has reclaimed (boxes for up to
/// 64 KiB of values, and at least 16) and fills them again, so a writer
/// that replaces as much as it stores rarely calls the allocator.
///
/// Entering and leaving RCU mode take O(1) for values of more than 8
/// bytes (which any tree keeps boxed) and O(n) for smaller ones, each
/// moved into or out of its box.
#[derive(Debug, Clone, Copy, Default)]
pub struct Boxed;

/// Values inside the nodes, as in a plain [`MapleTree`]: no allocation per
/// value and no pointer to follow, for [`Frozen`] values only (a rebuild
/// copies a value of 8 bytes or less into the new node while readers may
/// still read the old copy; larger values are boxed by any tree and only
/// their pointer is copied). Entering and leaving RCU mode take O(1).
#[derive(Debug, Clone, Copy, Default)]
pub struct Inline;

impl<V> sealed::Holds<V> for Boxed {
    type Held = Box<V>;
    type Spares = SpareBoxes<V>;

    #[inline]
    fn hold_value(spares: &mut SpareBoxes<V>, value: V) -> Box<V> {
        spares.boxed(value)
    }

    #[inline]
    fn dispose_value(spares: &mut SpareBoxes<V>, held: Box<V>) {
        spares.recycle(held);
    }

    #[inline]
    fn release_value(held: Box<V>) -> V {
        *held
    }

    #[inline(always)]
    fn held_value(held: &Box<V>) -> &V {
        held
    }

    fn into_held_tree(tree: MapleTree<V>) -> MapleTree<Box<V>> {
        box_values(tree)
    }

    fn from_held_tree(tree: MapleTree<Box<V>>) -> MapleTree<V> {
        unbox_values(tree)
    }
}

impl<V: Frozen> sealed::Holds<V> for Inline {
    type Held = V;
    type Spares = ();

    #[inline(always)]
    fn hold_value((): &mut (), value: V) -> V {
        value
    }

    #[inline(always)]
    fn dispose_value((): &mut (), held: V) {
        drop(held);
    }

    #[inline(always)]
    fn release_value(held: V) -> V {
        held
    }

    #[inline(always)]
    fn held_value(held: &V) -> &V {
        held
    }

    fn into_held_tree(tree: MapleTree<V>) -> MapleTree<V> {
        tree
    }

    fn from_held_tree(tree: MapleTree<V>) -> MapleTree<V> {
        tree
    }
}

/// [`CloneOrMove`](crate::write::CloneOrMove) over what `S` holds: a part
/// that keeps its entry's value keeps its box (or, for a value inside the
/// nodes that needs dropping, its word), which stays in the tree; a clone
/// goes into a box of its own.
pub(crate) struct HeldCloneOrMove<'a, V, S: Storage<V>> {
    spares: &'a mut S::Spares,
    _values: PhantomData<fn(&V) -> V>,
}

impl<'a, V, S: Storage<V>> HeldCloneOrMove<'a, V, S> {
    pub(crate) fn new(spares: &'a mut S::Spares) -> Self {
        HeldCloneOrMove {
            spares,
            _values: PhantomData,
        }
    }
}

impl<V: Clone, S: Storage<V>> Split<S::Held> for HeldCloneOrMove<'_, V, S> {
    /// Not for a plain word (a value inside the nodes without drop glue):
    /// its copy costs nothing to make or to drop and never goes through
    /// the limbo, so keeping it saves nothing, and the copying writer is a
    /// little shorter without the bookkeeping (callgrind).
    const MOVES: bool = needs_drop::<S::Held>() || !is_inline::<S::Held>();

    #[inline(always)]
    fn part(&mut self, old: &S::Held, _: RangeInclusive<u64>) -> S::Held {
        S::hold_value(self.spares, S::held_value(old).clone())
    }
}

/// A `split` callback over values as one over what `S` holds.
pub(crate) fn held_split<'a, V, S: Storage<V>>(
    spares: &'a mut S::Spares,
    mut split: impl FnMut(&V, RangeInclusive<u64>) -> V + 'a,
) -> impl FnMut(&S::Held, RangeInclusive<u64>) -> S::Held + 'a {
    move |held, part| S::hold_value(spares, split(S::held_value(held), part))
}
