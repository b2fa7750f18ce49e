//! The Linux kernel's maple tree, written anew in Rust for user space.
//!
//! A [`MapleTree<V>`] maps non-overlapping, inclusive ranges of `u64` keys to
//! values. It is a B-tree of 256-byte nodes: leaves hold 16 slots, internal
//! nodes 16 children, or, in an *allocation tree*, 10 children plus the size of
//! the largest free range below each, which makes gap search O(log n). It is
//! what the kernel keeps a process's memory mappings (VMAs) in.
//!
//! ```
//! use maple_tree::MapleTree;
//!
//! let mut t = MapleTree::new();
//! t.insert(0x1000..=0x1fff, "a");
//! t.insert(0x1800..=0x27ff, "b");           // overwrites, cutting "a"
//! assert_eq!(format!("{t:?}"), r#"{0x1000..=0x17ff: "a", 0x1800..=0x27ff: "b"}"#);
//! assert_eq!(t.remove(0x2000), Some((0x1800..=0x27ff, "b")));
//! ```
//!
//! # Design
//!
//! * **Every index is covered by exactly one slot.** Absent ranges are stored
//!   as empty slots, so a lookup is a scan of pivots per level and never
//!   compares a key with an entry. Two absent slots never sit side by side,
//!   not even across leaves, so every free range is one slot, and gap records
//!   are exact.
//! * **Nodes have no parent pointers.** Walks that move sideways or climb back
//!   remember their path (cursors, iterators, writes). Replacing a node then
//!   never touches its children: this keeps writes cheap and lets one pointer
//!   store publish a rebuilt subtree.
//! * **Writes are classified**, cheapest first: exact fit and append (seed 002)
//!   in place; a store that stays inside one leaf which still fits splices
//!   that leaf's slots in place (not in RCU mode); otherwise the touched
//!   leaves are rebuilt and the change carried up: rewrite, split, spanning
//!   store, rebalance, root growth and collapse.
//!   [`Stats::write_paths`] counts which path each store took.
//! * **Nodes come from the tree's own pool** of chunks with a LIFO free list,
//!   not one global allocation per node.
//! * **Values** of at most 8 bytes (and alignment) live inside the slot; larger
//!   ones are boxed, one allocation per entry, as the kernel's slab-allocated
//!   VMAs are.
//! * **Duplication** ([`Clone`], [`MapleTree::dup_with`],
//!   [`MapleTree::try_dup_with`]) copies node by node in DFS pre-order, O(n),
//!   into one contiguous run of memory (seed 000's `__mt_dup`).
//!
//! Nodes that fall below a minimum fill (6 slots, 4 in allocation-tree
//! internal nodes) are refilled from a neighbour, except the root and the last
//! node of each level (the one ending at `u64::MAX`): letting that one run
//! short is what allows sequential stores to leave completely full nodes
//! behind them (about 34 bytes of nodes per entry, as the kernel's tree).
//!
//! # Ranges and panics
//!
//! Methods take any `impl RangeBounds<u64>` (`a..b`, `a..=b`, `a..`, `..`). An
//! empty or reversed range, and a gap search for size 0, are programming
//! errors: those methods panic, as each one's *Panics* section says.
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for the error types. Without it the
//!   crate is `no_std` + `alloc`.
//! * `failpoints`: the `failpoints` module, which makes node allocation fail
//!   on purpose, for testing fallible operations.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

extern crate alloc;

mod check;
mod cursor;
mod dup;
mod error;
mod gap;
mod iter;
mod limbo;
mod node;
mod pool;
#[cfg(feature = "std")]
mod rcu;
mod sync;
mod tree;
mod walk;
mod write;

#[cfg(feature = "failpoints")]
pub mod failpoints;

pub use cursor::{Cursor, CursorMut};
pub use error::{AllocError, CheckError, DupError, NoSpace, OccupiedError, Stats, WritePaths};
pub use iter::{IntoIter, Iter, IterMut, Range};
pub use pool::{release_cached_chunks, CACHE_LIMIT};
#[cfg(feature = "std")]
pub use rcu::{RcuMapleTree, ReadGuard, WriteGuard};
pub use tree::MapleTree;
