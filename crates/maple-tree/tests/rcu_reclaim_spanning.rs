//! A spanning RCU-mode store unlinks whole subtrees: they are reclaimed by
//! the next few writes and their entries counted once. (One test per file:
//! see `reclaim_support`.)

mod reclaim_support;

use reclaim_support::{tree_of, write_until_dropped};
use std::sync::Arc;

#[test]
fn a_store_spanning_most_entries_is_reclaimed_and_counted_once() {
    let token = Arc::new(());
    let tree = tree_of(&token);
    // Unlinks whole subtrees of 10,000 values while the tree keeps one entry.
    tree.write().insert(5..=16 * 10_000, Arc::new(()));
    write_until_dropped(&tree, &token, 2); // 0..=4 keeps a clone
    let t = tree.into_inner();
    assert_eq!(t.len(), 3); // 0..=4 (what is left of the first), 5.., u64::MAX
    t.validate().unwrap();
    drop(t);
    assert_eq!(Arc::strong_count(&token), 1);
}
