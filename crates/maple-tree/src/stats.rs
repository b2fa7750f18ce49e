//! `Stats`: the shape and memory of a tree, and which write paths its
//! stores took.

/// Which write paths stores took (see the crate docs, "Design"). The first
/// three count stores; `split` and `rebalance` count levels, so one store
/// that splits a leaf and its parent counts two splits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritePaths {
    /// Stores that matched one existing slot exactly: the value was replaced in place.
    pub exact_fit: u64,
    /// Stores inside the absent last slot of a leaf, appended in place (the kernel's `mas_wr_append`).
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
    /// Which write paths the stores of this tree took (feature
    /// `write-stats`).
    #[cfg(feature = "write-stats")]
    pub write_paths: WritePaths,
}

impl<V> crate::MapleTree<V> {
    /// Counts one store (or level) of a write path, with the `write-stats`
    /// feature; compiles to nothing without it.
    #[inline(always)]
    pub(crate) fn count_path(&mut self, which: fn(&mut WritePaths) -> &mut u64) {
        #[cfg(feature = "write-stats")]
        {
            *which(self.write_paths_mut()) += 1;
        }
        #[cfg(not(feature = "write-stats"))]
        let _ = which;
    }
}
