//! A tree's values moved into boxes of their own, and back: how the
//! concurrent tree's default storage (`Boxed`) holds its values, which
//! must not move while readers hold references to them (see
//! `rcu_storage.rs`).
//!
//! A value of more than 8 bytes is boxed by any tree already: its slot
//! holds the box's pointer, just as the slot of a `Box<V>` (a pointer,
//! stored inline) does. Such a tree changes type in O(1), its slots
//! untouched; a tree of smaller values is rebuilt, in O(n).

use crate::node::is_inline;
use crate::tree::MapleTree;
use alloc::boxed::Box;

/// `tree` with every value in a box of its own.
pub(crate) fn box_values<V>(tree: MapleTree<V>) -> MapleTree<Box<V>> {
    if !is_inline::<V>() {
        // SAFETY: a slot of a tree of `V`s (not inline) holds the pointer
        // of a `Box<V>`, as a slot of a tree of `Box<V>`s does; a tree
        // outside RCU mode has no limbo.
        return unsafe { tree.cast_values() };
    }
    let mut boxed = MapleTree::empty_like(tree.is_alloc());
    for (range, value) in tree {
        boxed.insert_with(range, Box::new(value), |_, _| {
            unreachable!("maple tree: the entries of a tree overlap")
        });
    }
    boxed
}

/// `tree`'s values out of their boxes (the limbo emptied and gone).
pub(crate) fn unbox_values<V>(tree: MapleTree<Box<V>>) -> MapleTree<V> {
    if !is_inline::<V>() {
        // SAFETY: as in `box_values`, the other way round.
        return unsafe { tree.cast_values() };
    }
    let mut plain = MapleTree::empty_like(tree.is_alloc());
    for (range, value) in tree {
        plain.insert_with(range, *value, |_, _| {
            unreachable!("maple tree: the entries of a tree overlap")
        });
    }
    plain
}
