//! What an RCU-mode writer unlinks is freed while the tree lives, not only
//! when it is dropped: small writes wait for company in the epoch collector,
//! but their backlog stays bounded. (One test per file: see
//! `reclaim_support`.)

use maple_tree::RcuMapleTree;

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
