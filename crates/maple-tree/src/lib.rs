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
//! * **Writes are classified**, cheapest first: exact fit and append (the
//!   kernel's `mas_wr_append`) in place; an append past the full last leaf
//!   of the tree (the root, or a leaf whose parent has room) leaves that
//!   leaf as it is and puts the new entry into a new last leaf (not in RCU
//!   mode), which keeps sequential stores and in-order rebuilds cheap; a
//!   store that stays inside one leaf splices that leaf's slots in place
//!   (not in RCU mode), first splitting the leaf in place when the store
//!   overflows it and its parent has room (as `BTreeMap` splits a full
//!   node), merging a new absent edge slot with the neighbouring leaf's
//!   absent slot by moving the boundary between them, and merging a leaf
//!   left under its minimum into a sibling that has room; otherwise the touched
//!   leaves are rebuilt and the change carried up: rewrite, split, spanning
//!   store, rebalance, root growth and collapse.
//!   With the `write-stats` feature, `Stats::write_paths` counts which path
//!   each store took.
//! * **Nodes come from the tree's own pool** of chunks with a LIFO free list,
//!   not one global allocation per node.
//! * **Values** of at most 8 bytes (and alignment) live inside the slot; larger
//!   ones are boxed, one allocation per entry, as the kernel's slab-allocated
//!   VMAs are.
//! * **Duplication** ([`Clone`], [`MapleTree::dup_with`],
//!   [`MapleTree::try_dup_with`]) copies node by node in DFS pre-order, O(n),
//!   into one contiguous run of memory, as the kernel's `__mt_dup` does.
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
//! Queries that take a range of entries or a search window
//! ([`MapleTree::range_mut`], [`MapleTree::extract_if`], [`MapleTree::gaps`],
//! [`MapleTree::find_gap_aligned`]) treat an empty range (`5..5`) as asking
//! for nothing, as `BTreeMap::range` does; a reversed one still panics.
//!
//! # Panics in user code
//!
//! The tree stays sound and whole when a value's `Clone` or `Drop`, or a
//! callback (`split`, the map of [`MapleTree::dup_with`]), panics: a store
//! calls `split`/`Clone` before it changes anything (a panic leaves the tree
//! as it was) and drops what it displaced only after it is done (a panic
//! finds the store complete; the other displaced values are still dropped).
//! `clear`, `Drop` and [`IntoIter`] keep dropping the remaining values when
//! one `Drop` panics, as `Vec` does. Nothing is leaked or dropped twice.
//!
//! # Threads
//!
//! A [`MapleTree<V>`] is `Send` when `V: Send` and `Sync` when `V: Sync`, and
//! its views cross threads as the references they stand for do, as
//! `BTreeMap`'s: the read-only ones ([`Iter`], [`Range`], [`Keys`],
//! [`Values`], [`Gaps`], [`Cursor`]) like `&MapleTree<V>` (`Send` and `Sync`
//! when `V: Sync`); the others ([`IterMut`], [`RangeMut`], [`ValuesMut`],
//! [`CursorMut`], [`Entry`], [`ExtractIf`], [`IntoIter`], [`IntoKeys`],
//! [`IntoValues`]) like `&mut MapleTree<V>` (`Send` when `V: Send`, `Sync`
//! when `V: Sync`; [`ExtractIf`] also needs its predicate to be). So an
//! iterator can be held across an `.await` in a `Send` future, or handed
//! to a scoped thread. An [`RcuMapleTree`] is `Send` when `V: Send` and
//! `Sync` when `V: Send + Sync`, whichever its [`Storage`] ([`Boxed`] or
//! [`Inline`]). Its [`ReadGuard`] pins the epoch of the thread that took it
//! and stays there; the iterators it hands out may go to other (scoped)
//! threads while it lives.
//!
//! The read-only views are also `Clone`, for any `V`: a clone goes on from
//! where the original stands. Every view is `Debug`: an iterator prints the
//! entries it has left, a cursor or an entry where it stands.
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for the error types. Without it the
//!   crate is `no_std` + `alloc`.
//! * `serde`: `Serialize` / `Deserialize` for [`MapleTree`], as a sequence
//!   of `(first, last, value)`; see the `maple_tree::serde` module.
//!   Works without `std`.
//! * `failpoints`: the `failpoints` module, which makes node allocation fail
//!   on purpose, for testing fallible operations.
//! * `write-stats`: every tree counts which write path its stores take
//!   (`Stats::write_paths`), for measuring and testing the write paths. It
//!   adds 48 bytes to each tree.
//! * `bench-internals`: `MapleTree::set_append_path`, which turns the append
//!   fast path (`mas_wr_append`) off to measure what it buys. For
//!   benchmarks only (the `maple` command enables it); not part of the
//!   stable API.
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

extern crate alloc;

/// The examples of this crate's README.md, compiled and run as doctests so
/// that the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;

#[cfg(feature = "std")]
mod boxed;
mod check;
mod cmp;
mod cursor;
mod displaced;
mod dup;
mod entry;
mod error;
mod extract;
mod gap;
mod gaps;
mod iter;
mod limbo;
mod merge;
mod node;
mod pool;
mod query;
#[cfg(feature = "std")]
mod rcu;
#[cfg(feature = "std")]
mod rcu_storage;
mod read;
#[cfg(feature = "serde")]
pub mod serde;
#[cfg(feature = "std")]
mod spare_boxes;
mod spot;
mod stats;
mod sync;
mod teardown;
mod tree;
mod views;
mod walk;
mod write;

#[cfg(feature = "failpoints")]
pub mod failpoints;

pub use cursor::{Cursor, CursorMut};
pub use displaced::{Displaced, DisplacedIntoIter};
pub use entry::{Entry, OccupiedEntry, VacantEntry};
pub use error::{AllocError, CheckError, DupError, NoSpace, OccupiedError};
pub use extract::ExtractIf;
pub use gaps::Gaps;
pub use iter::{IntoIter, Iter, IterMut, Range};
pub use pool::{release_cached_chunks, CACHE_LIMIT};
#[cfg(feature = "std")]
pub use rcu::{RcuMapleTree, RcuRange, ReadGuard, WriteGuard};
#[cfg(feature = "std")]
pub use rcu_storage::{Boxed, Frozen, Inline, Storage};
pub use stats::{Stats, WritePaths};
pub use tree::MapleTree;
pub use views::{IntoKeys, IntoValues, Keys, RangeMut, Values, ValuesMut};
