//! Model check (loom) of the two ways a writer in RCU mode changes a node a
//! reader may be looking at, with the orderings `node.rs` uses:
//!
//! 1. *append* (seed 002): the writer fills slots past the leaf's count, then
//!    stores the header (count and value bits) with `Release`; a reader loads
//!    the header with `Acquire` and reads only slots below the count it saw;
//! 2. *child publish*: the writer builds a node aside, then stores the child
//!    pointer with `Release`; a reader loads it with `Acquire` and reads the
//!    node.
//!
//! Loom explores every interleaving and flags a read of slot memory that is
//! not ordered after its write. (Reclamation is crossbeam-epoch's, which is
//! model-checked upstream; here the old node is kept until both threads end.)
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p maple-tree --test loom_publish --release`
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// A leaf reduced to what the protocol touches: header, pivots, slots.
struct Leaf {
    header: AtomicU64, // count | bits << 8
    pivots: [UnsafeCell<u64>; 3],
    slots: [UnsafeCell<u64>; 4],
}

impl Leaf {
    fn with(count: u64, bits: u64, pivots: [u64; 3], slots: [u64; 4]) -> Leaf {
        Leaf {
            header: AtomicU64::new(count | bits << 8),
            pivots: pivots.map(UnsafeCell::new),
            slots: slots.map(UnsafeCell::new),
        }
    }

    /// What a reader does: the value at `index` (the leaf covers 0..=99).
    fn lookup(&self, index: u64) -> Option<u64> {
        let h = self.header.load(Acquire);
        let (count, bits) = ((h & 0xff) as usize, h >> 8);
        let mut i = 0;
        while i + 1 < count && self.pivots[i].with(|p| unsafe { *p }) < index {
            i += 1;
        }
        (bits >> i & 1 == 1).then(|| self.slots[i].with(|s| unsafe { *s }))
    }
}

#[test]
fn append_publishes_slots_with_the_header() {
    loom::model(|| {
        // [0..=9: 7, 10..=99: absent]
        let leaf = Arc::new(Leaf::with(2, 0b01, [9, 0, 0], [7, 0, 0, 0]));
        let writer = {
            let leaf = leaf.clone();
            thread::spawn(move || {
                // Store 20..=29 = 8 inside the trailing gap: two slots appended.
                leaf.slots[2].with_mut(|s| unsafe { *s = 8 });
                leaf.pivots[1].with_mut(|p| unsafe { *p = 19 });
                leaf.pivots[2].with_mut(|p| unsafe { *p = 29 });
                leaf.header.store(4 | 0b0101 << 8, Release);
            })
        };
        let seen = leaf.lookup(25);
        assert!(seen.is_none() || seen == Some(8), "reader saw {seen:?}");
        assert_eq!(leaf.lookup(5), Some(7));
        writer.join().unwrap();
        assert_eq!(leaf.lookup(25), Some(8));
    });
}

#[test]
fn child_publish_shows_a_whole_node() {
    loom::model(|| {
        let old = Box::into_raw(Box::new(Leaf::with(1, 0b1, [0; 3], [1, 0, 0, 0])));
        let child = Arc::new(AtomicPtr::new(old));
        let writer = {
            let child = child.clone();
            thread::spawn(move || {
                let new = Box::new(Leaf::with(2, 0b11, [49, 0, 0], [2, 3, 0, 0]));
                child.store(Box::into_raw(new), Release)
            })
        };
        let node = child.load(Acquire);
        // SAFETY: nodes are freed only after both threads finish (below).
        let v = unsafe { &*node }.lookup(60);
        assert!(v == Some(1) || v == Some(3), "reader saw {v:?}");
        writer.join().unwrap();
        let last = child.load(Acquire);
        // SAFETY: both threads are done; each node is freed once.
        unsafe {
            drop(Box::from_raw(old));
            if last != old {
                drop(Box::from_raw(last));
            }
        }
    });
}
