//! Error and report types of the public API.

use alloc::string::String;
use core::fmt;
use core::ops::RangeInclusive;

/// [`MapleTree::try_insert`](crate::MapleTree::try_insert) found part of the
/// range occupied. The value comes back unused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OccupiedError<V> {
    /// The range that was asked for.
    pub range: RangeInclusive<u64>,
    /// The lowest entry overlapping `range`.
    pub occupied: RangeInclusive<u64>,
    /// The value that was not stored.
    pub value: V,
}

impl<V> fmt::Display for OccupiedError<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "range {:#x}..={:#x} overlaps the entry {:#x}..={:#x}",
            self.range.start(),
            self.range.end(),
            self.occupied.start(),
            self.occupied.end()
        )
    }
}

#[cfg(feature = "std")]
impl<V: fmt::Debug> std::error::Error for OccupiedError<V> {}

/// [`MapleTree::alloc`](crate::MapleTree::alloc) found no free range of the
/// requested size. The value comes back unused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoSpace<V> {
    /// The size that was asked for.
    pub size: u64,
    /// The value that was not stored.
    pub value: V,
}

impl<V> fmt::Display for NoSpace<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no free range of {:#x} indices", self.size)
    }
}

#[cfg(feature = "std")]
impl<V: fmt::Debug> std::error::Error for NoSpace<V> {}

/// The tree's node allocator could not get memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocError;

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("out of memory for tree nodes")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for AllocError {}

/// Why a fallible duplication ([`MapleTree::try_dup_with`](crate::MapleTree::try_dup_with)) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DupError<E> {
    /// A node could not be allocated.
    Alloc(AllocError),
    /// The value map returned this error.
    Map(E),
}

impl<E: fmt::Display> fmt::Display for DupError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DupError::Alloc(e) => e.fmt(f),
            DupError::Map(e) => write!(f, "value map failed: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl<E: fmt::Debug + fmt::Display> std::error::Error for DupError<E> {}

/// A broken invariant found by [`MapleTree::validate`](crate::MapleTree::validate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    /// Level of the offending node: 0 is the leaf level.
    pub level: usize,
    /// The range the offending node covers.
    pub node_range: RangeInclusive<u64>,
    /// Short name of the invariant, e.g. `"pivot order"`.
    pub invariant: &'static str,
    /// What exactly is wrong.
    pub detail: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} broken in the level-{} node covering {:#x}..={:#x}: {}",
            self.invariant,
            self.level,
            self.node_range.start(),
            self.node_range.end(),
            self.detail
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for CheckError {}

/// Which write paths stores took (see the crate docs, "Design"). The first
/// three count stores; `split` and `rebalance` count levels, so one store
/// that splits a leaf and its parent counts two splits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritePaths {
    /// Stores that matched one existing slot exactly: the value was replaced in place.
    pub exact_fit: u64,
    /// Stores inside the absent last slot of a leaf, appended in place (seed 002).
    pub append: u64,
    /// Stores whose leaf still fit one node: its slots spliced in place, or
    /// (RCU mode, or when a neighbouring leaf was involved) rebuilt as one new leaf.
    pub node_rewrite: u64,
    /// Levels at which a node overflowed and was split.
    pub split: u64,
    /// Stores that spanned more than one leaf.
    pub spanning: u64,
    /// Levels at which a node under its minimum took in a neighbour.
    pub rebalance: u64,
}

/// Shape and memory of a tree, from [`MapleTree::stats`](crate::MapleTree::stats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Number of entries (ranges) stored.
    pub entries: usize,
    /// Levels of nodes: 0 for an empty tree, 1 when the root is a leaf.
    pub height: usize,
    /// Leaf nodes (16 slots).
    pub leaves: usize,
    /// Internal nodes of a regular tree (16 children).
    pub internal: usize,
    /// Internal nodes of an allocation tree (10 children and their gaps).
    pub alloc_internal: usize,
    /// Size of one node in bytes (256).
    pub node_size: usize,
    /// Bytes of live nodes: `(leaves + internal + alloc_internal) * node_size`.
    pub node_bytes: usize,
    /// Bytes the tree's node allocator holds from the system (live nodes,
    /// its free list and the unused tail of its newest chunk).
    pub reserved_bytes: usize,
    /// Bytes of values that do not fit in a slot and are boxed outside the nodes.
    pub boxed_value_bytes: usize,
    /// Which write paths the stores of this tree took.
    pub write_paths: WritePaths,
}
