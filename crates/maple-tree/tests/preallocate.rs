//! `preallocate()` reserves what any next store can take: after it, no store
//! grows the node pool, whatever path the store takes (exact fit, append,
//! splice, or a rebuild that splits, spans leaves, rebalances or grows the
//! root). Debug builds also check each store against its own plan's bound.

#[macro_use]
mod common;

use common::Rng;
use maple_tree::MapleTree;

/// Random stores and removals of every width, on trees that grow to several
/// levels and shrink again, each after a `preallocate()`.
fn no_store_grows_the_pool_after_preallocate(mut tree: MapleTree<u64>, seed: u64) {
    let mut rng = Rng(seed);
    for step in 0..4000u64 {
        tree.preallocate().unwrap();
        let reserved = tree.stats().reserved_bytes;
        let first = rng.below(1 << 16);
        // Mostly narrow ranges (the tree grows), sometimes wide ones that
        // span many leaves.
        let width = if rng.below(16) == 0 {
            rng.below(1 << 14)
        } else {
            rng.below(8)
        };
        let last = first + width;
        if rng.below(4) == 0 {
            tree.remove_range(first..=last);
        } else {
            tree.insert(first..=last, step);
        }
        assert_eq!(
            tree.stats().reserved_bytes,
            reserved,
            "step {step}: a store after preallocate() took a new chunk"
        );
    }
    tree.validate().unwrap();
}

#[test]
fn regular_tree() {
    no_store_grows_the_pool_after_preallocate(MapleTree::new(), 1);
}

#[test]
fn allocation_tree() {
    no_store_grows_the_pool_after_preallocate(MapleTree::new_alloc(), 2);
}
