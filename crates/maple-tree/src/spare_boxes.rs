//! Boxes the concurrent tree's writer keeps for reuse.
//!
//! With [`Boxed`](crate::Boxed) storage every stored value gets a box of
//! its own, and every value a write replaces or removes leaves one behind
//! once the readers that could see it are gone. A writer that overwrites
//! as much as it stores would pay the allocator twice per store: once for
//! the new box, once to free the old one after the grace period. Instead,
//! the writer keeps the boxes the limbo frees (their values dropped, the
//! memory kept) and fills one of them for the next store.
//!
//! The writer alone touches these boxes, under its mutex, and a box is
//! kept only once the limbo has reclaimed it: no reader can see it any
//! more, so reusing its memory is as safe as freeing it. Boxes for at most
//! [`KEEP_BYTES`] of values are kept (at least [`KEEP_MIN`] boxes); the
//! rest are freed.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::mem::{size_of, MaybeUninit};

/// How many bytes of values a writer's empty boxes may hold in all.
pub(crate) const KEEP_BYTES: usize = 64 << 10;

/// The fewest empty boxes a writer keeps, however large its values.
pub(crate) const KEEP_MIN: usize = 16;

/// Empty boxes for values of `V`, each allocated as a `Box<V>`. (`pub`
/// only because the sealed storage trait names it; its module is private.)
pub struct SpareBoxes<V> {
    spare: Vec<Box<MaybeUninit<V>>>,
}

impl<V> Default for SpareBoxes<V> {
    fn default() -> Self {
        SpareBoxes { spare: Vec::new() }
    }
}

impl<V> SpareBoxes<V> {
    /// How many empty boxes are kept at most: none for a zero-sized `V`,
    /// whose boxes allocate nothing.
    const KEEP: usize = match size_of::<V>() {
        0 => 0,
        size if KEEP_BYTES / size > KEEP_MIN => KEEP_BYTES / size,
        _ => KEEP_MIN,
    };

    /// `value` in a box: a kept one if there is one, else a new one.
    #[inline]
    pub(crate) fn boxed(&mut self, value: V) -> Box<V> {
        match self.spare.pop() {
            Some(mut empty) => {
                empty.write(value);
                // SAFETY: just initialised.
                unsafe { empty.assume_init() }
            }
            None => Box::new(value),
        }
    }

    /// Drops `full`'s value and keeps its box for a later
    /// [`boxed`](Self::boxed), or frees it if enough are kept. If the
    /// value's `Drop` panics, the box is kept (or freed) all the same.
    pub(crate) fn recycle(&mut self, full: Box<V>) {
        if self.spare.len() >= Self::KEEP {
            drop(full);
            return;
        }
        let raw = Box::into_raw(full);
        // SAFETY: `raw` comes from a live `Box<V>`: the value is moved out
        // once, and the memory, of `MaybeUninit<V>`'s layout (that of `V`),
        // goes back into a box that will not drop it.
        let (value, empty) = unsafe { (raw.read(), Box::from_raw(raw.cast::<MaybeUninit<V>>())) };
        self.spare.push(empty);
        drop(value);
    }

    /// How many empty boxes are kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.spare.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::rc::Rc;

    #[test]
    fn a_recycled_box_holds_the_next_value() {
        let mut spares = SpareBoxes::default();
        let first = spares.boxed(1u64);
        let address = &*first as *const u64;
        spares.recycle(first);
        assert_eq!(spares.kept(), 1);
        let second = spares.boxed(2u64);
        assert_eq!(&*second as *const u64, address);
        assert_eq!(*second, 2);
        assert_eq!(spares.kept(), 0);
    }

    #[test]
    fn recycling_drops_the_value_once() {
        let shared = Rc::new(());
        let mut spares = SpareBoxes::default();
        let boxed = spares.boxed(Rc::clone(&shared));
        assert_eq!(Rc::strong_count(&shared), 2);
        spares.recycle(boxed);
        assert_eq!(Rc::strong_count(&shared), 1);
        drop(spares);
        assert_eq!(Rc::strong_count(&shared), 1);
    }

    #[test]
    fn keeps_a_bounded_number_of_boxes() {
        let mut spares = SpareBoxes::default();
        let boxes: Vec<_> = (0..10_000u64).map(Box::new).collect();
        for b in boxes {
            spares.recycle(b);
        }
        assert_eq!(spares.kept(), KEEP_BYTES / 8);

        let mut big = SpareBoxes::default();
        for _ in 0..100 {
            big.recycle(Box::new([0u64; 1024]));
        }
        assert_eq!(big.kept(), KEEP_MIN);

        let mut zst = SpareBoxes::default();
        zst.recycle(Box::new(()));
        assert_eq!(zst.kept(), 0);
        assert_eq!(*zst.boxed(()), ());
    }

    struct PanicOnDrop {
        armed: bool,
    }
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            if self.armed {
                panic!("drop");
            }
        }
    }

    #[test]
    fn a_panicking_drop_keeps_the_box() {
        let mut spares = SpareBoxes::default();
        let full = Box::new(PanicOnDrop { armed: true });
        assert!(catch_unwind(AssertUnwindSafe(|| spares.recycle(full))).is_err());
        assert_eq!(spares.kept(), 1);
        let reused = spares.boxed(PanicOnDrop { armed: false });
        assert!(!reused.armed);
        assert_eq!(spares.kept(), 0);
    }
}
