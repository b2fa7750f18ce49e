//! A large RCU-mode write (`clear`) is handed to the epoch collector at once
//! and reclaimed by the next few writes. (One test per file: see
//! `reclaim_support`.)

mod reclaim_support;

use reclaim_support::{tree_of, write_until_dropped};
use std::sync::Arc;

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
    assert!(tree.read().get(u64::MAX).is_some());
}
