//! Shared by the `rcu_reclaim_*` tests. Each of those files holds one test:
//! the epoch collector is global to a process, and a test running beside it
//! on another thread would leave its deferred notes queued ahead of ours and
//! pin the epoch, so the number of writes a reclaim takes would depend on
//! thread timing. One test per process makes it depend on nothing else.

use maple_tree::RcuMapleTree;
use std::sync::Arc;

/// A tree of 10,000 entries, each holding a clone of `token`.
pub fn tree_of(token: &Arc<()>) -> RcuMapleTree<Arc<()>> {
    let tree = RcuMapleTree::new();
    {
        let mut w = tree.write();
        for i in 0..10_000u64 {
            w.insert(16 * i..=16 * i + 9, Arc::clone(token));
        }
    }
    tree
}

/// Makes small writes until only `left` clones of `token` remain; fails after
/// 32 (the unlinked values must go within a few writes, not after the 128
/// small batches that may wait).
///
/// Each write replaces the value at `u64::MAX`, which holds no clone of
/// `token`: the value it unlinks is a small batch of its own, which may wait
/// for company, and only what the large write unlinked is counted.
pub fn write_until_dropped(tree: &RcuMapleTree<Arc<()>>, token: &Arc<()>, left: usize) {
    let mut writes = 0;
    while Arc::strong_count(token) > left {
        assert!(
            writes < 32,
            "unlinked values were not dropped after {writes} writes"
        );
        tree.write().insert(u64::MAX..=u64::MAX, Arc::new(()));
        writes += 1;
    }
}
