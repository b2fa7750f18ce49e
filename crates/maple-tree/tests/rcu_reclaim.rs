//! What an RCU-mode writer unlinks is freed while the tree lives, not only when
//! it is dropped: small writes wait for company in the epoch collector but
//! their backlog stays bounded, and a large write is handed over at once.
//! (A file of its own: the epoch collector is per process, and a test of
//! another file holding a pin could hold back the reclaim measured here.)

use maple_tree::RcuMapleTree;
use std::sync::Arc;

/// The most batches that may wait after any write with no reader about; the
/// writer hands its notes to the collector at once above 128.
const BACKLOG_BOUND: usize = 136;

#[test]
fn small_writes_leave_a_bounded_backlog() {
    let tree = RcuMapleTree::new();
    for i in 0..200u64 {
        tree.write().insert(16 * i..=16 * i + 9, i);
    }
    let mut most = 0;
    for k in 0..20_000u64 {
        let i = k % 200;
        tree.write().insert(16 * i..=16 * i + 9, k); // replaces a value: a batch
        most = most.max(tree.write().pending_reclaim());
    }
    assert!(most > 1, "small batches are expected to wait (most {most})");
    assert!(
        most <= BACKLOG_BOUND,
        "{most} batches waited at once, more than {BACKLOG_BOUND}"
    );
}

/// A tree of 10,000 entries, each holding a clone of `token`.
fn tree_of(token: &Arc<()>) -> RcuMapleTree<Arc<()>> {
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
/// 32 (the unlinked values must go within a few writes, not after 64).
fn write_until_dropped(tree: &RcuMapleTree<Arc<()>>, token: &Arc<()>, left: usize) {
    let mut writes = 0;
    while Arc::strong_count(token) > left {
        assert!(
            writes < 32,
            "unlinked values were not dropped after {writes} writes"
        );
        tree.write().insert(0..=0, Arc::new(()));
        writes += 1;
    }
}

#[test]
fn a_large_write_is_reclaimed_by_later_writes() {
    let token = Arc::new(());
    let tree = tree_of(&token);
    assert_eq!(Arc::strong_count(&token), 10_001);
    tree.write().clear();
    // The values are still there for readers that might see them...
    assert_eq!(Arc::strong_count(&token), 10_001);
    // ...and go within a few later writes.
    write_until_dropped(&tree, &token, 1);
    assert!(tree.read().get(0).is_some());
}

#[test]
fn a_store_spanning_most_entries_is_reclaimed_and_counted_once() {
    let token = Arc::new(());
    let tree = tree_of(&token);
    // Unlinks whole subtrees of 10,000 values while the tree keeps one entry.
    tree.write().insert(5..=16 * 10_000, Arc::new(()));
    write_until_dropped(&tree, &token, 2); // 1..=4 keeps a clone
    let t = tree.into_inner();
    assert_eq!(t.len(), 3); // 0..=0, 1..=4 (what is left of the first), 5..
    t.validate().unwrap();
    drop(t);
    assert_eq!(Arc::strong_count(&token), 1);
}
