//! The concurrent tree on one thread: every write of a `WriteGuard` against
//! the reference model, with references from a `ReadGuard` held across
//! writes that replace or remove their values (they must stay valid until
//! the guard goes), and every value dropped exactly once by the end.
//!
//! Small enough to run under Miri (with Tree Borrows: crossbeam-epoch 0.9
//! is not Stacked-Borrows clean), which checks the unsafe code of the read
//! paths, the root publish and the deferred reclamation.

mod common;
use common::{Model, Rng};
use maple_tree::{Boxed, Inline, MapleTree, RcuMapleTree, Storage};
use std::sync::{Arc, Weak};

/// Entries of the random run (Miri interprets every step).
const STEPS: u64 = if cfg!(miri) { 60 } else { 2_000 };

/// The tree as a plain list, for comparing with the model.
fn entries<S: Storage<Arc<u64>>>(
    t: &RcuMapleTree<Arc<u64>, S>,
) -> Vec<(std::ops::RangeInclusive<u64>, u64)> {
    t.read().iter().map(|(r, v)| (r, **v)).collect()
}

fn values(m: &Model<u64>) -> Vec<(std::ops::RangeInclusive<u64>, u64)> {
    m.entries()
}

/// An empty tree of each kind (regular, allocation), values boxed.
fn boxed_tree<V: Send + Sync>(alloc: bool) -> RcuMapleTree<V> {
    if alloc {
        RcuMapleTree::new_alloc()
    } else {
        RcuMapleTree::new()
    }
}

/// The same, values inside the nodes.
fn inline_tree<V: Send + Sync + maple_tree::Frozen>(alloc: bool) -> RcuMapleTree<V, Inline> {
    if alloc {
        RcuMapleTree::new_alloc_inline()
    } else {
        RcuMapleTree::new_inline()
    }
}

#[test]
fn writes_match_the_model_and_old_values_outlive_their_readers() {
    writes_match_the_model::<Boxed>(boxed_tree);
}

/// `Arc<u64>` lives in its slot word and has drop glue: the tree copies it
/// into rebuilt nodes and drops it once, after the readers of the old copy.
#[test]
fn inline_writes_match_the_model_and_old_values_outlive_their_readers() {
    writes_match_the_model::<Inline>(inline_tree);
}

fn writes_match_the_model<S: Storage<Arc<u64>>>(new: fn(bool) -> RcuMapleTree<Arc<u64>, S>) {
    for alloc in [false, true] {
        // Every value made, to check at the end that each was dropped.
        let mut made: Vec<Weak<u64>> = Vec::new();
        let mut make = |x: u64| {
            let v = Arc::new(x);
            made.push(Arc::downgrade(&v));
            v
        };
        let tree = new(alloc);
        let mut model = Model::<u64>::new();
        let mut rng = Rng(7 + alloc as u64);
        for step in 0..STEPS {
            let first = rng.below(300);
            let last = first + rng.below(20);
            // A reader holding a reference across the write.
            let reader = tree.read();
            let held = reader.get(first).map(|v| (Arc::clone(v), v));
            let mut w = tree.write();
            match rng.below(6) {
                0 | 1 => {
                    w.insert(first..=last, make(step));
                    model.insert(first, last, step);
                }
                2 => {
                    let got = w.try_insert(first..=last, make(step)).is_ok();
                    assert_eq!(got, model.try_insert(first, last, step).is_ok());
                }
                3 => {
                    let got = w.erase(first);
                    assert_eq!(got, model.remove(first).map(|(r, _)| r));
                }
                4 => {
                    w.remove_range(first..=last);
                    model.remove_range(first, last);
                }
                _ => {
                    let size = 1 + rng.below(8);
                    let got = w.alloc(size, first..=first + 100, make(step));
                    let want = model.find_gap(size, first, first + 100);
                    assert_eq!(got.as_ref().ok(), want.as_ref());
                    if let Some(s) = want {
                        model.insert(s, s + size - 1, step);
                    }
                }
            }
            drop(w);
            // The reference is still the value it was, whatever the write did.
            if let Some((owned, r)) = held {
                assert_eq!(**r, *owned);
            }
            drop(reader);
            assert_eq!(entries(&tree), values(&model), "step {step}");
            assert_eq!(tree.read().len(), model.len());
        }
        let r = tree.read();
        let first = r.first_key_value().map(|(k, v)| (k, **v));
        assert_eq!(first, model.entries().first().cloned());
        let last = r.last_key_value().map(|(k, v)| (k, **v));
        assert_eq!(last, model.entries().last().cloned());
        assert_eq!(r.find_gap(3, 0..=400), model.find_gap(3, 0, 400));
        assert_eq!(r.find_gap_rev(3, 0..=400), model.find_gap_rev(3, 0, 400));
        let ranged: Vec<_> = r.range(50..=150).map(|(k, v)| (k, **v)).collect();
        assert_eq!(ranged, model.range(50, 150));
        for i in (0..400).step_by(7) {
            assert_eq!(r.contains(i), model.get(i).is_some());
            assert_eq!(r.overlaps(i..i + 3), !model.range(i, i + 2).is_empty());
        }
        drop(r);
        // Values the writes replaced are dropped once the readers are gone.
        let plain: MapleTree<Arc<u64>> = tree.into_inner();
        plain.validate().unwrap();
        assert_eq!(plain.len(), model.len());
        drop(plain);
        assert!(made.iter().all(|v| v.strong_count() == 0), "a value leaked");
    }
}

#[test]
fn a_value_removed_under_a_reader_stays_until_the_reader_leaves() {
    let value = Arc::new(5u64);
    let tree = RcuMapleTree::new();
    tree.write().insert(10..=19, Arc::clone(&value));
    let reader = tree.read();
    let seen = reader.get(15).unwrap();
    tree.write().remove(15);
    tree.write().clear();
    // The tree no longer holds it, the reader still may.
    assert_eq!(tree.read().get(15), None);
    assert_eq!(**seen, 5);
    drop(reader);
    let plain = tree.into_inner();
    assert!(plain.is_empty());
    assert_eq!(Arc::strong_count(&value), 1, "dropped once, not leaked");
}

#[test]
fn entering_and_leaving_rcu_mode_keeps_the_entries() {
    let mut t = MapleTree::new();
    for i in 0..(if cfg!(miri) { 40 } else { 500 }) {
        t.insert(10 * i..=10 * i + 5, i);
    }
    let want: Vec<_> = t.iter().map(|(r, v)| (r, *v)).collect();
    let rcu = RcuMapleTree::from(t);
    assert_eq!(
        rcu.read().iter().map(|(r, v)| (r, *v)).collect::<Vec<_>>(),
        want
    );
    rcu.write().insert(3..=4, 1000);
    let back = rcu.into_inner();
    back.validate().unwrap();
    assert_eq!(back.get(3), Some(&1000));
    // The same through inline storage, which keeps the nodes as they are.
    let want: Vec<_> = back.iter().map(|(r, v)| (r, *v)).collect();
    let rcu = RcuMapleTree::from_inline(back);
    rcu.write().insert(7..=7, 2000);
    let back = rcu.into_inner();
    back.validate().unwrap();
    assert_eq!(back.get(7), Some(&2000));
    assert_eq!(back.len(), want.len() + 1);
}

#[test]
fn small_values_replaced_under_a_reader_stay_readable() {
    small_values_replaced::<Boxed>(boxed_tree(false));
}

/// Kept inline, `u64`s live in their slot words and have no drop glue: the
/// tree does not keep them for the readers, who read them in the replaced
/// leaves, which are kept.
#[test]
fn inline_small_values_replaced_under_a_reader_stay_readable() {
    small_values_replaced::<Inline>(inline_tree(false));
}

fn small_values_replaced<S: Storage<u64>>(tree: RcuMapleTree<u64, S>) {
    let n = if cfg!(miri) { 40 } else { 400 };
    {
        let mut w = tree.write();
        for i in 0..n {
            w.insert(10 * i..=10 * i + 5, i);
        }
    }
    let reader = tree.read();
    let held: Vec<(u64, &u64)> = (0..n).map(|i| (i, reader.get(10 * i).unwrap())).collect();
    for i in 0..n {
        let mut w = tree.write();
        match i % 3 {
            // Inside one entry: the leaf gains two slots.
            0 => w.insert(10 * i + 1..=10 * i + 2, 1000 + i),
            // Exactly one entry.
            1 => w.insert(10 * i..=10 * i + 5, 1000 + i),
            // The entry and the gap after it.
            _ => {
                w.remove(10 * i);
            }
        }
    }
    for &(i, r) in &held {
        assert_eq!(*r, i, "a held reference changed");
    }
    drop(reader);
    let plain = tree.into_inner();
    plain.validate().unwrap();
    for i in 0..n {
        let want = match i % 3 {
            0 => Some(i),
            1 => Some(1000 + i),
            _ => None,
        };
        assert_eq!(plain.get(10 * i).copied(), want, "entry {i}");
    }
}

#[test]
fn an_iteration_outlives_the_splits_and_parent_copies_under_it() {
    an_iteration_outlives_splits::<Boxed>(boxed_tree(false));
}

#[test]
fn an_inline_iteration_outlives_the_splits_and_parent_copies_under_it() {
    an_iteration_outlives_splits::<Inline>(inline_tree(false));
}

fn an_iteration_outlives_splits<S: Storage<u64>>(tree: RcuMapleTree<u64, S>) {
    // Every leaf gains an entry in each of its gaps, so every leaf splits
    // and every parent is copied (or rebuilt) while the iteration that
    // started before still walks the old nodes.
    let n = if cfg!(miri) { 200 } else { 2_000 };
    {
        let mut w = tree.write();
        for i in 0..n {
            w.insert(10 * i..=10 * i + 5, i);
        }
    }
    let reader = tree.read();
    let mut it = reader.iter();
    let mut seen: Vec<(std::ops::RangeInclusive<u64>, u64)> = it
        .by_ref()
        .take(n as usize / 2)
        .map(|(r, v)| (r, *v))
        .collect();
    for i in 0..n {
        tree.write().insert(10 * i + 7..=10 * i + 8, 1_000_000 + i);
    }
    seen.extend(it.map(|(r, v)| (r, *v)));
    assert!(
        seen.windows(2).all(|w| w[0].0.end() < w[1].0.start()),
        "entries out of order"
    );
    let old: Vec<_> = seen
        .iter()
        .filter(|(_, v)| *v < 1_000_000)
        .cloned()
        .collect();
    let want: Vec<_> = (0..n).map(|i| (10 * i..=10 * i + 5, i)).collect();
    assert_eq!(
        old, want,
        "an entry present throughout was missed or changed"
    );
    for (r, v) in &seen {
        if *v >= 1_000_000 {
            let i = v - 1_000_000;
            assert_eq!(*r, 10 * i + 7..=10 * i + 8, "an entry that never was");
        }
    }
    drop(reader);
    let plain = tree.into_inner();
    plain.validate().unwrap();
    assert_eq!(plain.len(), 2 * n as usize);
}

/// A value a reader holds is never copied: a mutex the reader locked while
/// the writer rebuilt the leaf around it is unlocked in the tree afterwards
/// (with the value copied into the new leaf it would stay locked forever).
#[test]
fn a_value_a_reader_holds_is_not_copied() {
    use std::sync::Mutex;
    let fresh = |_: &Mutex<()>, _| Mutex::new(());
    let tree: RcuMapleTree<Mutex<()>> = RcuMapleTree::new();
    for k in 0..4u64 {
        tree.write()
            .insert_with(k * 10..=k * 10, Mutex::new(()), fresh);
    }
    {
        let r = tree.read();
        let held = r.get(0).unwrap().lock().unwrap();
        tree.write().insert_with(5..=5, Mutex::new(()), fresh);
        drop(held);
    }
    assert!(tree.read().get(0).unwrap().try_lock().is_ok());
}

/// Stores in random order into full leaves split them (in place outside RCU
/// mode; here into new nodes, while readers may still be in the old ones):
/// the entries and the recorded gaps of an allocation tree stay right
/// through splits at every depth, with a reader pinned throughout (so that
/// every replaced node waits in the limbo until the end).
#[test]
fn splits_of_full_leaves_in_random_order_keep_entries_and_gaps() {
    for alloc in [false, true] {
        // Values of more than 8 bytes: leaving RCU mode keeps the tree as it
        // is (smaller values are taken out of their boxes into a new one),
        // so that `validate` checks the nodes the splits wrote.
        let tree = boxed_tree::<(u64, u64)>(alloc);
        let mut model = Model::<u64>::new();
        let mut rng = Rng(11 + alloc as u64);
        // Slots of 16 indices, entries in random ones of them, each of its
        // own length, so that free runs of every size come and go.
        let n: u64 = if cfg!(miri) { 150 } else { 4_000 };
        let pinned = tree.read();
        for step in 0..n {
            let slot = rng.below(4 * n);
            let first = 16 * slot + rng.below(8);
            let last = first + rng.below(8);
            tree.write().insert(first..=last, (step, !step));
            model.insert(first, last, step);
            if step % 97 == 0 || step + 1 == n {
                assert_eq!(
                    tree.read()
                        .iter()
                        .map(|(r, v)| (r, v.0))
                        .collect::<Vec<_>>(),
                    model.entries(),
                    "step {step}"
                );
                let r = tree.read();
                for size in [1, 9, 17, 40] {
                    let lo = rng.below(64 * n);
                    let hi = lo + 2_000;
                    assert_eq!(r.find_gap(size, lo..=hi), model.find_gap(size, lo, hi));
                    assert_eq!(
                        r.find_gap_rev(size, lo..=hi),
                        model.find_gap_rev(size, lo, hi)
                    );
                }
            }
        }
        assert_eq!(pinned.len(), model.len());
        drop(pinned);
        let plain = tree.into_inner();
        plain.validate().unwrap();
        if !cfg!(miri) {
            assert!(
                plain.stats().height >= 3,
                "too short to split under a grandparent"
            );
        }
    }
}
