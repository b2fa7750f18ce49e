//! Dropping many values where any `Drop` may panic: the rest are still
//! dropped and the nodes still freed, as `Vec` and std's `BTreeMap` do.
//!
//! A panic while unwinding from another aborts the process (Rust's rule), so
//! "keep going" means: a guard whose own `Drop` finishes the job runs during
//! the unwinding that the first panic started.

use crate::node::{word_value, NodePtr, Word};
use crate::walk::MAX_HEIGHT;

/// Calls `f` on every item of `items`; if one call panics, the guard calls
/// `f` on the items left before the panic leaves this function.
pub(crate) fn for_each_guarded<I: Iterator, F: FnMut(I::Item)>(items: I, f: F) {
    struct Rest<I: Iterator, F: FnMut(I::Item)> {
        items: I,
        f: F,
    }
    impl<I: Iterator, F: FnMut(I::Item)> Drop for Rest<I, F> {
        fn drop(&mut self) {
            for item in &mut self.items {
                (self.f)(item);
            }
        }
    }
    let mut rest = Rest { items, f };
    for item in rest.items.by_ref() {
        (rest.f)(item);
    }
}

/// What a post-order walk of a subtree meets.
pub(crate) enum Visit {
    /// The word of a present leaf slot (owns a value).
    Value(Word),
    /// A node, after everything below it.
    Node(NodePtr),
}

/// A post-order walk of a subtree: every present value word, and every node
/// after its children. Taking a value word clears its present bit, so a
/// walk that is interrupted never yields the same value twice.
pub(crate) struct Teardown {
    /// The nodes from the subtree's root down to the current one, each with
    /// the next child (or slot) to visit.
    stack: [(NodePtr, usize); MAX_HEIGHT],
    depth: usize,
}

impl Teardown {
    pub(crate) fn new(root: NodePtr) -> Self {
        let mut stack = [(NodePtr::DANGLING, 0); MAX_HEIGHT];
        stack[0] = (root, 0);
        Teardown { stack, depth: 1 }
    }
}

impl Iterator for Teardown {
    type Item = Visit;

    fn next(&mut self) -> Option<Visit> {
        while self.depth > 0 {
            let (node, next) = &mut self.stack[self.depth - 1];
            let node = *node;
            if node.is_leaf() {
                let bits = node.present_bits();
                if bits != 0 {
                    let i = bits.trailing_zeros() as usize;
                    node.set_present_bits(bits & !(1 << i));
                    return Some(Visit::Value(node.word(i)));
                }
            } else if *next < node.count() {
                let child = node.child(*next);
                *next += 1;
                self.stack[self.depth] = (child, 0);
                self.depth += 1;
                continue;
            }
            self.depth -= 1;
            return Some(Visit::Node(node));
        }
        None
    }
}

/// Drops the value a slot word owns.
///
/// # Safety
/// `word` must hold a live `V` of a tree of `V`s (present-slot contents)
/// that nothing else will read or drop.
pub(crate) unsafe fn drop_word<V>(word: Word) {
    // SAFETY: the caller hands over the only owner of the value.
    drop(unsafe { word_value::<V>(word) });
}
