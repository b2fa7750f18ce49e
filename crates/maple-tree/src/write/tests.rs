//! Unit tests of the write paths: which path a store takes, and what each
//! path leaves behind.

use crate::MapleTree;

fn empty(alloc: bool) -> MapleTree<u64> {
    if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    }
}

fn seq(n: u64, alloc: bool, append: bool) -> MapleTree<u64> {
    let mut t = empty(alloc);
    t.set_append_path(append);
    for i in 0..n {
        t.insert(16 * i..=16 * i + 9, i + 1);
    }
    t
}

/// The model the tests below keep beside a tree: start -> (end, value).
type Model = alloc::collections::BTreeMap<u64, (u64, u64)>;

/// `0..n` in a random order (a Fisher-Yates shuffle driven by the
/// xorshift generator `rng`, which moves on).
fn shuffled(n: u64, rng: &mut u64) -> alloc::vec::Vec<u64> {
    let mut order: alloc::vec::Vec<u64> = (0..n).collect();
    for i in (1..order.len()).rev() {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        order.swap(i, (*rng % (i as u64 + 1)) as usize);
    }
    order
}

/// Checks that `t` is valid and holds exactly the entries of `model`.
fn assert_matches(t: &MapleTree<u64>, model: &Model, what: &str) {
    t.validate().unwrap();
    let got = t.iter().map(|(r, &v)| (*r.start(), (*r.end(), v)));
    assert!(got.eq(model.iter().map(|(&s, &e)| (s, e))), "{what}");
}

#[test]
fn sequential_stores_take_the_append_path() {
    let t = seq(1000, false, true);
    let s = t.stats();
    let p = s.write_paths;
    // After the first store (into the empty tree), every store lands strictly
    // inside the trailing gap: two slots are appended, except when the leaf is
    // full, which splits it and makes one more leaf.
    assert_eq!(p.append + (s.leaves as u64 - 1), 1000 - 1, "{p:?}");
    assert_eq!(
        (p.node_rewrite, p.spanning, p.rebalance, p.exact_fit),
        (0, 0, 0, 0),
        "{p:?}"
    );
    t.validate().unwrap();
}

#[test]
fn sequential_stores_lay_their_leaves_out_in_key_order() {
    // A split writes its first half into the leaf it splits and a rebuilt
    // parent into the old parent, so nothing is freed and taken again: the
    // leaves follow each other in memory as in key order, except where a
    // new chunk starts (chunks come from the system allocator).
    for alloc in [false, true] {
        let t = seq(if cfg!(miri) { 400 } else { 20_000 }, alloc, true);
        let mut leaves = Vec::new();
        let mut stack = vec![t.root().unwrap()];
        while let Some(node) = stack.pop() {
            if node.is_leaf() {
                leaves.push(node.as_raw().as_ptr().addr());
            } else {
                stack.extend((0..node.count()).rev().map(|i| node.child(i)));
            }
        }
        let backwards = leaves.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(
            backwards < t.pool().chunk_count(),
            "{backwards} of {} leaves lie before the one left of them",
            leaves.len()
        );
    }
}

#[test]
fn without_the_append_path_the_same_stores_rewrite_nodes() {
    let with = seq(1000, true, true);
    let without = seq(1000, true, false);
    let p = without.stats().write_paths;
    assert_eq!(p.append, 0);
    assert!(p.node_rewrite > 800, "{p:?}");
    assert!(with == without);
    without.validate().unwrap();
}

#[test]
fn append_at_the_end_of_the_last_range_adds_one_slot() {
    let mut t = MapleTree::new();
    t.insert(0..=9, 1u8);
    let before = t.stats().write_paths.append;
    t.insert(20..=u64::MAX, 2); // ends where the trailing gap ends
    assert_eq!(t.stats().write_paths.append, before + 1);
    t.insert(12..=13, 3); // strictly inside the (new) last gap's predecessor: not the last slot
    assert_eq!(t.stats().write_paths.append, before + 1);
    assert_eq!(
        t.iter().collect::<alloc::vec::Vec<_>>(),
        [(0..=9, &1), (12..=13, &3), (20..=u64::MAX, &2)]
    );
    t.validate().unwrap();
}

#[test]
fn appending_past_a_full_last_leaf_keeps_it_full() {
    // Ranges with an absent run before each (the leaf's absent last slot is
    // cut short), ranges that start where the last one ended (the slot is
    // dropped), and a last range that reaches `u64::MAX` (no absent slot
    // after it in the new leaf).
    let n = if cfg!(miri) { 300 } else { 3000 };
    for (step, len) in [(16u64, 10u64), (10, 10), (7, 1)] {
        for alloc in [false, true] {
            let mut t = empty(alloc);
            let mut model = Model::new();
            for i in 0..n {
                let first = step * i + 1;
                let last = if i + 1 == n {
                    u64::MAX
                } else {
                    first + len - 1
                };
                t.insert(first..=last, i);
                model.insert(first, (last, i));
                if i % 97 == 0 {
                    t.validate().unwrap();
                }
            }
            assert_matches(
                &t,
                &model,
                &alloc::format!("step {step}, len {len}, alloc {alloc}"),
            );
            let s = t.stats();
            let p = s.write_paths;
            assert_eq!(
                (p.node_rewrite, p.spanning, p.rebalance),
                (0, 0, 0),
                "{p:?}"
            );
            // Every leaf but the last is full (16 slots), so the slot count
            // bounds the number of leaves.
            let slots = if step > len { 2 * n } else { n } + 1;
            assert!(s.leaves as u64 <= slots.div_ceil(15) + 1, "{s:?}");
            if alloc {
                // The gap records agree with the slots: the highest gap is
                // the one before the last range (or, with no gap between
                // ranges, index 0, before the first).
                let size = (step - len).max(1);
                let highest = if step > len {
                    step * (n - 1) - size + 1
                } else {
                    0
                };
                assert_eq!(t.find_gap_rev(size, 0..=step * n), Some(highest), "{s:?}");
            }
        }
    }
}

/// The bounds of every leaf, in key order.
fn leaf_bounds(t: &MapleTree<u64>) -> alloc::vec::Vec<(u64, u64)> {
    let mut out = alloc::vec::Vec::new();
    let mut stack = alloc::vec![(t.root().unwrap(), 0, u64::MAX)];
    while let Some((node, min, max)) = stack.pop() {
        if node.is_leaf() {
            out.push((min, max));
        } else {
            stack.extend((0..node.count()).rev().map(|i| {
                (
                    node.child(i),
                    node.slot_start(i, min),
                    node.slot_end(i, max),
                )
            }));
        }
    }
    out
}

/// Stores and removals in a leaf's edge slots. Removing the entry in a
/// leaf's first slot puts an absent slot beside the previous leaf's absent
/// last slot; the two become one by moving the boundary (the previous leaf
/// gives up its last slot). A store inside a leaf's absent first
/// or last slot leaves an absent slot at that edge, which is spliced in
/// place (the neighbouring leaf's slot beside it holds a value). The tree
/// stays valid and equal to a model throughout.
#[test]
fn edits_in_leaf_edge_slots_keep_absent_slots_apart() {
    let n = if cfg!(miri) { 300 } else { 3000 };
    for alloc in [false, true] {
        // Without the append path leaves split in half, so they have room.
        let mut t = seq(n, alloc, false);
        let mut model: Model = (0..n).map(|i| (16 * i, (16 * i + 9, i + 1))).collect();
        let covered = |model: &Model, at: u64| {
            model
                .range(..=at)
                .next_back()
                .is_some_and(|(_, &(e, _))| e >= at)
        };
        for (k, (min, _)) in leaf_bounds(&t).into_iter().enumerate() {
            if k % 2 == 1 && covered(&model, min) {
                let (range, _) = t.remove(min).unwrap();
                model.remove(range.start());
            }
        }
        t.validate().unwrap();
        let mut value = 1_000_000;
        for (k, (min, max)) in leaf_bounds(&t).into_iter().enumerate() {
            // Inside the absent first or last slot, cutting it on both sides.
            let edges = [
                (min, min + 2, min + 3),
                (max, max.wrapping_sub(3), max.wrapping_sub(2)),
            ];
            for (edge, a, b) in edges {
                // The edge slot is absent and reaches past `a..=b`.
                let free = (a.min(edge)..=b.max(edge)).all(|i| !covered(&model, i));
                if min < a && b < max && free {
                    t.insert(a..=b, value);
                    model.insert(a, (b, value));
                    value += 1;
                }
            }
            if k % 16 == 0 {
                t.validate().unwrap();
            }
        }
        assert_matches(&t, &model, &alloc::format!("alloc {alloc}"));
    }
}

/// Removals at the boundary between two leaves of one parent, in a tree
/// with no gaps between entries. Removing a leaf's first entry leaves an
/// absent first slot beside the previous leaf's last entry (nothing to
/// merge); removing that entry then puts two absent slots side by side
/// across the boundary, which becomes one by moving the boundary (the left
/// leaf gives up its last slot). The tree stays valid and equal to a model.
#[test]
fn removals_at_leaf_boundaries_merge_absent_slots() {
    let n = if cfg!(miri) { 300 } else { 3000 };
    for alloc in [false, true] {
        let mut t = empty(alloc);
        for i in 0..n {
            t.insert(5 * i..=5 * i + 4, i);
        }
        let mut model: Model = (0..n).map(|i| (5 * i, (5 * i + 4, i))).collect();
        let leaves = leaf_bounds(&t);
        for (k, w) in leaves.windows(2).enumerate() {
            let ((_, left_max), (right_min, _)) = (w[0], w[1]);
            if k % 3 == 2 {
                continue; // some boundaries keep their entries
            }
            for at in [right_min, left_max] {
                if let Some((range, _)) = t.remove(at) {
                    model.remove(range.start());
                }
            }
            if k % 16 == 0 {
                t.validate().unwrap();
            }
        }
        assert_matches(&t, &model, &alloc::format!("alloc {alloc}"));
    }
}

/// Removals in random order until the tree is empty: a leaf that a
/// removal leaves under its minimum merges in place with a sibling under
/// the same parent (the one before it, or for a first child the one after
/// it) when the two fit one node, or takes slots from it when they do not;
/// absent slots that meet across leaves of different parents become one.
/// The tree stays valid and equal to a model throughout.
#[test]
fn removals_merge_underfull_leaves_with_a_sibling() {
    let n = if cfg!(miri) { 300 } else { 4000 };
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for alloc in [false, true] {
        let mut t = seq(n, alloc, true);
        let mut model: Model = (0..n).map(|i| (16 * i, (16 * i + 9, i + 1))).collect();
        let order = shuffled(n, &mut rng);
        for (k, &i) in order.iter().enumerate() {
            assert_eq!(t.remove(16 * i + 3), Some((16 * i..=16 * i + 9, i + 1)));
            model.remove(&(16 * i));
            if k % 64 == 0 {
                assert_matches(&t, &model, &alloc::format!("alloc {alloc}, {k} removed"));
            }
        }
        assert!(t.is_empty());
        assert!(t.stats().write_paths.rebalance > 0);
    }
}

/// Removals in random order from a sequential tree: where two leaves must
/// merge under a parent that cannot spare a child, the parent settles with
/// its own sibling in place, allocating nothing, instead of the pair being
/// rebuilt. Rebuilds that rebalance are left only where the grandparent
/// would have to settle too: here at most one removal in a thousand (in
/// the allocation tree, 15 of 8,000 rebuilt when parents did not settle).
#[cfg(feature = "failpoints")]
#[test]
fn removals_settle_a_parent_left_short_by_a_merge_in_place() {
    let n = if cfg!(miri) { 1000 } else { 8000 };
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for alloc in [false, true] {
        let mut t = seq(n, alloc, true);
        let mut model: Model = (0..n).map(|i| (16 * i, (16 * i + 9, i + 1))).collect();
        let order = shuffled(n, &mut rng);
        let (mut in_place, mut rebuilt) = (0, 0);
        for (k, &i) in order.iter().enumerate() {
            let (rebalanced, allocs) = (
                t.stats().write_paths.rebalance,
                crate::failpoints::node_allocs(),
            );
            assert_eq!(t.remove(16 * i + 3), Some((16 * i..=16 * i + 9, i + 1)));
            model.remove(&(16 * i));
            let levels = t.stats().write_paths.rebalance - rebalanced;
            if levels > 0 && crate::failpoints::node_allocs() > allocs {
                rebuilt += 1;
            } else if levels == 2 {
                in_place += 1;
                assert_matches(&t, &model, &alloc::format!("alloc {alloc}, {k} removed"));
            }
            if k % 256 == 0 {
                assert_matches(&t, &model, &alloc::format!("alloc {alloc}, {k} removed"));
            }
        }
        assert!(t.is_empty());
        assert!(in_place > 0, "alloc {alloc}: no parent settled in place");
        assert!(rebuilt <= n / 1000, "alloc {alloc}: {rebuilt} rebuilt");
    }
}

/// Random stores, most of them into full leaves: a store whose splice
/// overflows its leaf splits the leaf in place (the parent taking the new
/// half) and splices into the half that holds it, including stores that cut
/// an entry on either side. The tree stays valid and equal to a model, and
/// every leaf but the last keeps its minimum.
#[test]
fn overflowing_splices_split_the_leaf_in_place() {
    let n = if cfg!(miri) { 300 } else { 4000 };
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for alloc in [false, true] {
        let mut t = empty(alloc);
        // The model: start -> (end, value), entries never overlapping.
        let mut model = Model::new();
        for q in 0..n {
            let (first, last) = if q % 3 == 2 {
                // Over whatever lies there: entries are cut or replaced.
                let a = next() % (16 * n);
                (a, a + next() % 24)
            } else {
                let i = next() % n;
                (16 * i, 16 * i + 9)
            };
            t.insert(first..=last, q);
            let cut: alloc::vec::Vec<_> = model
                .range(..=last)
                .filter(|(_, &(e, _))| e >= first)
                .map(|(&s, &(e, v))| (s, e, v))
                .collect();
            for (s, e, v) in cut {
                model.remove(&s);
                if s < first {
                    model.insert(s, (first - 1, v));
                }
                if e > last {
                    model.insert(last + 1, (e, v));
                }
            }
            model.insert(first, (last, q));
            if q % 256 == 0 {
                t.validate().unwrap();
            }
        }
        assert_matches(&t, &model, &alloc::format!("alloc {alloc}"));
        assert!(t.stats().write_paths.split > 0);
    }
}

/// Random stores of new entries into a tree of three levels and more: a
/// leaf that overflows under a full parent whose own parent has room splits
/// in place with its parent (the store's plan says so), and the tree stays
/// valid and equal to a model after each of those stores.
#[test]
fn a_leaf_split_under_a_full_parent_splits_the_parent_in_place() {
    use super::plan::Plan;
    use crate::node::LEAF_SLOTS;
    use crate::walk::Path;
    let n = if cfg!(miri) { 1500 } else { 20_000 };
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for alloc in [false, true] {
        let mut t = empty(alloc);
        let mut model = Model::new();
        let order = shuffled(n, &mut rng);
        let mut in_place = 0;
        for (k, &i) in order.iter().enumerate() {
            let (first, last) = (16 * i, 16 * i + 9);
            let mut path = Path::new();
            let splits_parent = match t.plan(&mut path, first, last, true) {
                Plan::Splice(s) if s.new_count() > LEAF_SLOTS && t.height() >= 3 => {
                    let full = |l: usize| {
                        let node = path.lv[l].node;
                        node.count() == node.kind().capacity()
                    };
                    let parent_first = full(1) && !full(2);
                    if parent_first {
                        assert!(matches!(t.split_for(&path, &s), Some((_, true))));
                    }
                    parent_first
                }
                _ => false,
            };
            t.insert(first..=last, i + 1);
            model.insert(first, (last, i + 1));
            if splits_parent {
                in_place += 1;
                assert_matches(&t, &model, &alloc::format!("alloc {alloc}, {k} stored"));
            }
        }
        assert_matches(&t, &model, &alloc::format!("alloc {alloc}"));
        assert!(in_place > 0, "alloc {alloc}: no parent split in place");
    }
}

#[test]
fn exact_fit_replaces_in_place() {
    let mut t = seq(100, false, true);
    let before = t.stats().write_paths;
    t.insert(160..=169, 7);
    t.insert(170..=175, 8); // exactly the gap after it
    let after = t.stats().write_paths;
    assert_eq!(after.exact_fit, before.exact_fit + 2);
    assert_eq!(after.node_rewrite, before.node_rewrite);
    assert_eq!(t.get(165), Some(&7));
    assert_eq!(t.get(172), Some(&8));
    t.validate().unwrap();
}

#[test]
fn spanning_store_replaces_many_leaves() {
    let mut t = seq(10_000, true, true);
    t.insert(1000..=100_000, 0);
    assert!(t.stats().write_paths.spanning >= 1);
    assert_eq!(t.get_key_value(50_000), Some((1000..=100_000, &0)));
    assert_eq!(t.get_key_value(999), Some((992..=999, &(62 + 1))));
    t.validate().unwrap();
    t.remove_range(..);
    assert!(t.is_empty());
    assert_eq!(t.stats().height, 0);
    t.validate().unwrap();
}

#[test]
fn removals_rebalance_and_collapse_the_root() {
    let mut t = seq(5000, false, true);
    let h = t.stats().height;
    for i in (0..5000).step_by(2) {
        t.remove(16 * i);
    }
    t.validate().unwrap();
    for i in (1..5000).step_by(2) {
        assert_eq!(t.remove(16 * i + 9), Some((16 * i..=16 * i + 9, i + 1)));
        if i % 97 == 0 {
            t.validate().unwrap();
        }
    }
    assert!(t.stats().write_paths.rebalance > 0);
    assert!(t.is_empty() && h > 2);
    assert_eq!(t.stats().height, 0);
}

#[test]
fn bulk_build_packs_full_nodes_without_splits() {
    let t: MapleTree<u64> = (0..10_000u64)
        .map(|i| (16 * i..=16 * i + 9, i + 1))
        .collect();
    t.validate().unwrap();
    let s = t.stats();
    assert_eq!(s.write_paths, Default::default(), "no store path ran");
    assert_eq!(s.entries, 10_000);
    // 20,000 slots (entry + gap each) in full 16-slot leaves.
    assert_eq!(s.leaves, 20_000usize.div_ceil(16));
    assert!(t == seq(10_000, false, true));
}

#[test]
fn bulk_build_falls_back_on_unsorted_input() {
    let pairs = [(10..=19, 1u32), (30..=39, 2), (15..=32, 3), (0..=0, 4)];
    let t: MapleTree<u32> = pairs.iter().cloned().collect();
    t.validate().unwrap();
    assert_eq!(
        t.iter().collect::<alloc::vec::Vec<_>>(),
        [(0..=0, &4), (10..=14, &1), (15..=32, &3), (33..=39, &2)]
    );
}

#[test]
fn bulk_build_edges() {
    let whole: MapleTree<u8> = [(.., 1u8)].into_iter().collect();
    assert_eq!(whole.get_key_value(u64::MAX), Some((0..=u64::MAX, &1)));
    whole.validate().unwrap();
    let top: MapleTree<u8> = [(u64::MAX..=u64::MAX, 1u8)].into_iter().collect();
    assert_eq!(top.len(), 1);
    top.validate().unwrap();
    let empty: MapleTree<u8> = core::iter::empty::<(core::ops::RangeFull, u8)>().collect();
    assert!(empty.is_empty());
    empty.validate().unwrap();
}
