//! Model check (loom) of the real publish and read paths of the concurrent
//! tree: under `--cfg loom` the crate's node and root atomics are loom's
//! (`src/sync.rs`), and every pivot and slot word access is announced to
//! loom, so loom explores every interleaving of one writer and one reader
//! and fails if the reader sees a node, slot or pivot whose write is not
//! ordered before its read.
//!
//! Three publishes, each driven through the public API and checked to take
//! the path it is meant to (`Stats::write_paths`):
//!
//! 1. *leaf append* (`mas_wr_append`): slots written past the leaf's count, then
//!    the header (count and value bits) stored with `Release`;
//! 2. *child publish*: a leaf rebuilt aside, then linked by one `Release`
//!    store of its parent's child pointer (or, when the leaf splits, a copy
//!    of its parent holding both halves, linked the same way);
//! 3. *root publish*: a new root (first store, or growth by a split)
//!    published by the tree's root word.
//!
//! The reader must see, at each index, the value before or after the write,
//! and nothing else; indexes the write does not touch never change.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p maple-tree --features
//! write-stats --test loom_publish --release` (the write-path counters tell
//! which path each scenario took).
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use maple_tree::{RcuMapleTree, WritePaths};

/// Explores every interleaving, up to two preemptions of a thread (loom's
/// recommended bound: bugs of this kind show within it), and allows the long
/// straight-line runs a tree write makes.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 1_000_000;
    b.check(f);
}

/// Builds a tree of `entries` ranges `10 * k ..= 10 * k + 4` with value `k`.
fn tree_of(entries: u64) -> Arc<RcuMapleTree<u64>> {
    let tree = Arc::new(RcuMapleTree::new());
    {
        let mut w = tree.write();
        for k in 0..entries {
            w.insert(10 * k..=10 * k + 4, k);
        }
    }
    tree
}

/// Runs `write` in a second thread while this one reads `index`, which
/// must read `before` or `after`, and `stable`, which must read `kept`.
/// Returns the write paths the write took.
fn race(
    tree: Arc<RcuMapleTree<u64>>,
    write: fn(&RcuMapleTree<u64>),
    index: u64,
    before: Option<u64>,
    after: Option<u64>,
    stable: u64,
    kept: Option<u64>,
) -> WritePaths {
    let paths_before = tree.write().stats().write_paths;
    let writer = {
        let tree = tree.clone();
        thread::spawn(move || write(&tree))
    };
    {
        let r = tree.read();
        let seen = r.get(index).copied();
        assert!(
            seen == before || seen == after,
            "reader saw {seen:?} at {index}, not {before:?} or {after:?}"
        );
        assert_eq!(r.get(stable).copied(), kept, "index {stable} changed");
    }
    writer.join().unwrap();
    assert_eq!(tree.read().get(index).copied(), after);
    let paths = tree.write().stats().write_paths;
    diff(paths, paths_before)
}

fn diff(a: WritePaths, b: WritePaths) -> WritePaths {
    let mut d = a;
    d.exact_fit -= b.exact_fit;
    d.append -= b.append;
    d.node_rewrite -= b.node_rewrite;
    d.split -= b.split;
    d.spanning -= b.spanning;
    d.rebalance -= b.rebalance;
    d
}

#[test]
fn leaf_append_publishes_slots_with_the_header() {
    model(|| {
        // One leaf: [0..=4: 0, 5..=MAX: absent].
        let tree = tree_of(1);
        let paths = race(
            tree,
            |t| t.write().insert(20..=29, 8),
            25,
            None,
            Some(8),
            2,
            Some(0),
        );
        assert_eq!(
            paths.append, 1,
            "the write must take the append path: {paths:?}"
        );
    });
}

#[test]
fn child_publish_shows_a_whole_leaf() {
    model(|| {
        // 40 entries and their gaps: a root over five leaves. The store
        // covers a gap, an entry and a gap, so the leaf shrinks by two slots
        // and is rebuilt aside; 140..=144 shares that leaf.
        let tree = tree_of(40);
        assert_eq!(tree.write().stats().height, 2);
        let paths = race(
            tree,
            |t| t.write().insert(145..=159, 99),
            152,
            Some(15),
            Some(99),
            144,
            Some(14),
        );
        assert_eq!(
            (paths.node_rewrite, paths.split),
            (1, 0),
            "the write must rebuild one leaf and publish it: {paths:?}"
        );
    });
}

#[test]
fn a_split_leaf_is_published_with_a_copy_of_its_parent() {
    model(|| {
        // A root over five full leaves. The store cuts 150..=154 into three
        // entries: its leaf overflows and splits, and the root is copied
        // with both halves in the old leaf's place and the leaves after it
        // one slot further on. The reader also looks in the last leaf,
        // which the copy moved.
        let tree = tree_of(40);
        assert_eq!(tree.write().stats().height, 2);
        let paths = race(
            tree.clone(),
            |t| t.write().insert(152..=152, 99),
            152,
            Some(15),
            Some(99),
            392,
            Some(39),
        );
        assert!(paths.split >= 1, "the write must split a leaf: {paths:?}");
        assert_eq!(tree.write().stats().height, 2, "the root must not grow");
    });
}

#[test]
fn root_publish_of_a_first_store() {
    model(|| {
        let tree = Arc::new(RcuMapleTree::new());
        race(
            tree,
            |t| t.write().insert(100..=199, 1),
            150,
            None,
            Some(1),
            50,
            None,
        );
    });
}

#[test]
fn root_publish_of_a_split_root() {
    model(|| {
        // A full root leaf (8 entries and their gaps: 16 slots), then a
        // store in the middle that splits it and grows the tree.
        let tree = tree_of(8);
        assert_eq!(tree.write().stats().height, 1);
        let paths = race(
            tree,
            |t| t.write().insert(31..=32, 77),
            32,
            Some(3),
            Some(77),
            60,
            Some(6),
        );
        assert!(paths.split >= 1, "the write must split the root: {paths:?}");
    });
}
