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
