//! The atomics and cells of the concurrent paths, from one place: `core`'s
//! in a normal build, loom's under `--cfg loom`, so that loom model-checks
//! the node publish and read paths and the root publish of the real code
//! (`tests/loom_publish.rs`). crossbeam-epoch's `primitive` module is the
//! model for this shim.
//!
//! Loom tracks, besides atomics, which accesses to plain memory are ordered
//! after which writes. Node pivots and slot words are plain memory, so under
//! loom each node carries a [`Shadow`] of loom cells, one per pivot and per
//! slot, and the accessors in `node.rs` announce their reads and writes to
//! it with [`Shadow::read`] and [`Shadow::write`]. In a normal build these
//! are empty and compile to nothing.

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The concurrent tree's counters (only with `std`).
#[cfg(all(feature = "std", not(loom)))]
pub(crate) use core::sync::atomic::AtomicUsize;
#[cfg(all(feature = "std", loom))]
pub(crate) use loom::sync::atomic::AtomicUsize;

/// One loom cell per pivot and per slot word of a node (nothing outside
/// loom).
#[cfg(loom)]
pub(crate) struct Shadow {
    pivots: [loom::cell::UnsafeCell<()>; crate::node::LEAF_SLOTS - 1],
    slots: [loom::cell::UnsafeCell<()>; crate::node::LEAF_SLOTS],
}

#[cfg(loom)]
impl Shadow {
    pub(crate) fn new() -> Shadow {
        Shadow {
            pivots: core::array::from_fn(|_| loom::cell::UnsafeCell::new(())),
            slots: core::array::from_fn(|_| loom::cell::UnsafeCell::new(())),
        }
    }

    /// Tells loom that pivot (`pivot == true`) or slot `i` is read now; it
    /// fails the model if a write to it is not ordered before this read.
    pub(crate) fn read(&self, pivot: bool, i: usize) {
        self.cell(pivot, i).with(|_| ())
    }

    /// Tells loom that pivot or slot `i` is written now.
    pub(crate) fn write(&self, pivot: bool, i: usize) {
        self.cell(pivot, i).with_mut(|_| ())
    }

    fn cell(&self, pivot: bool, i: usize) -> &loom::cell::UnsafeCell<()> {
        if pivot {
            &self.pivots[i]
        } else {
            &self.slots[i]
        }
    }
}
