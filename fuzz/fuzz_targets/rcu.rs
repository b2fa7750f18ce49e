//! Differential fuzzing of the concurrent tree (`RcuMapleTree`, the kernel's
//! RCU mode) against the tests' reference model, on one thread.
//!
//! Every write goes through a `WriteGuard` (so through RCU mode's write
//! paths: append, the copying leaf splice, rebuilds); read guards taken
//! between writes are kept across later writes with references to values,
//! which must still read what they read when taken (with heap-owning
//! `String` values, AddressSanitizer sees a value freed while a reader
//! could still see it). After every write the tree must hold exactly the
//! model's entries; at the end it must validate. Both storages run: each
//! value in a box of its own (`Boxed`) and inside the nodes (`Inline`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use maple_fuzz::{check_alloc, Key, Model, Range, Size, Val};
use maple_tree::{Boxed, Frozen, Inline, RcuMapleTree, Storage};

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Insert(Range, u16),
    InsertWith(Range, u16),
    TryInsert(Range, u16),
    Remove(Key),
    RemoveRange(Range),
    Alloc(Size, Range, u16, bool),
    Clear,
    /// Several inserts under one write guard.
    Batch(Vec<(Range, u16)>),
    /// Takes a read guard and references to the values at these indexes,
    /// and keeps them across the next `n` operations (at most 4 held at
    /// once): each must still read what it read when taken.
    Hold(Vec<Key>, u8),
    Get(Key),
    FindGap(Size, Range, bool),
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    alloc_tree: bool,
    boxed_values: bool,
    inline_storage: bool,
    ops: Vec<Op>,
}

fuzz_target!(|input: Input| {
    match (input.boxed_values, input.inline_storage) {
        (true, false) => run::<String, Boxed>(input.alloc_tree, &input.ops),
        (true, true) => run::<String, Inline>(input.alloc_tree, &input.ops),
        (false, false) => run::<u64, Boxed>(input.alloc_tree, &input.ops),
        (false, true) => run::<u64, Inline>(input.alloc_tree, &input.ops),
    }
});

/// A storage with the constructors of an empty tree using it.
trait NewTree<V>: Storage<V> + Sized {
    fn new_tree(alloc_tree: bool) -> RcuMapleTree<V, Self>;
}

impl<V: Send + Sync> NewTree<V> for Boxed {
    fn new_tree(alloc_tree: bool) -> RcuMapleTree<V> {
        if alloc_tree {
            RcuMapleTree::new_alloc()
        } else {
            RcuMapleTree::new()
        }
    }
}

impl<V: Send + Sync + Frozen> NewTree<V> for Inline {
    fn new_tree(alloc_tree: bool) -> RcuMapleTree<V, Inline> {
        if alloc_tree {
            RcuMapleTree::new_alloc_inline()
        } else {
            RcuMapleTree::new_inline()
        }
    }
}

/// At most this many read guards are held at once.
const MAX_HELD: usize = 4;

fn run<V: Val + Send + Sync, S: NewTree<V>>(alloc_tree: bool, ops: &[Op]) {
    let tree = S::new_tree(alloc_tree);
    let mut model = Model::<V>::new();
    run_ops(&tree, &mut model, ops, 0);
    let plain = tree.into_inner();
    if let Err(e) = plain.validate() {
        panic!("validate(): {e}\n{}", plain.dump());
    }
    let got: Vec<_> = plain.iter().map(|(r, v)| (r, v.clone())).collect();
    assert_eq!(got, model.entries(), "entries");
}

/// Runs `ops`; `held` read guards are held by the callers.
fn run_ops<V: Val + Send + Sync, S: Storage<V>>(
    tree: &RcuMapleTree<V, S>,
    model: &mut Model<V>,
    ops: &[Op],
    held: usize,
) {
    let mut i = 0;
    while i < ops.len() {
        let op = &ops[i];
        i += 1;
        let Op::Hold(keys, n) = op else {
            apply(tree, model, op);
            continue;
        };
        if held == MAX_HELD {
            continue;
        }
        let guard = tree.read();
        let refs: Vec<(u64, &V, V)> = keys
            .iter()
            .filter_map(|k| guard.get(k.0).map(|v| (k.0, v, v.clone())))
            .collect();
        for (k, _, v) in &refs {
            assert_eq!(Some(v), model.get(*k).map(|(_, v)| v), "read {k:#x}");
        }
        let end = (i + usize::from(*n)).min(ops.len());
        run_ops(tree, model, &ops[i..end], held + 1);
        i = end;
        for (k, r, v) in &refs {
            assert_eq!(*r, v, "a reference held across writes at {k:#x} changed");
        }
        drop(refs);
        drop(guard);
    }
}

fn apply<V: Val + Send + Sync, S: Storage<V>>(
    tree: &RcuMapleTree<V, S>,
    model: &mut Model<V>,
    op: &Op,
) {
    match op {
        Op::Insert(r, v) => {
            tree.write().insert(r.first..=r.last, V::make(*v));
            model.insert(r.first, r.last, V::make(*v));
        }
        Op::InsertWith(r, v) => {
            tree.write()
                .insert_with(r.first..=r.last, V::make(*v), |old, piece| {
                    old.split_of(&piece)
                });
            model.store_with(r.first, r.last, Some(V::make(*v)), &mut |old, piece| {
                old.split_of(&piece)
            });
        }
        Op::TryInsert(r, v) => {
            let got = tree.write().try_insert(r.first..=r.last, V::make(*v));
            let want = model.try_insert(r.first, r.last, V::make(*v));
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(occupied)) => assert_eq!(e.occupied, occupied, "try_insert"),
                (got, want) => panic!("try_insert: tree {:?}, model {want:?}", got.is_ok()),
            }
        }
        Op::Remove(k) => {
            let got = tree.write().erase(k.0);
            assert_eq!(got, model.remove(k.0).map(|(r, _)| r), "remove({:#x})", k.0);
        }
        Op::RemoveRange(r) => {
            tree.write().remove_range(r.first..=r.last);
            model.remove_range(r.first, r.last);
        }
        Op::Alloc(size, r, v, rev) => {
            let mut w = tree.write();
            let got = if *rev {
                w.alloc_rev(size.0, r.first..=r.last, V::make(*v))
            } else {
                w.alloc(size.0, r.first..=r.last, V::make(*v))
            };
            check_alloc(got, model, size, r, *v, *rev);
        }
        Op::Clear => {
            tree.write().clear();
            model.remove_range(0, u64::MAX);
        }
        Op::Batch(stores) => {
            let mut w = tree.write();
            for (r, v) in stores.iter().take(64) {
                w.insert(r.first..=r.last, V::make(*v));
                model.insert(r.first, r.last, V::make(*v));
            }
        }
        Op::Get(k) => {
            let want = model.get(k.0);
            let r = tree.read();
            assert_eq!(r.get_key_value(k.0), want, "get_key_value({:#x})", k.0);
            return;
        }
        Op::FindGap(size, r, rev) => {
            let g = tree.read();
            let (got, want) = if *rev {
                (
                    g.find_gap_rev(size.0, r.first..=r.last),
                    model.find_gap_rev(size.0, r.first, r.last),
                )
            } else {
                (
                    g.find_gap(size.0, r.first..=r.last),
                    model.find_gap(size.0, r.first, r.last),
                )
            };
            assert_eq!(got, want, "find_gap(rev: {rev})");
            return;
        }
        Op::Hold(..) => unreachable!("handled by run_ops"),
    }
    let r = tree.read();
    assert_eq!(r.len(), model.len(), "len()");
    let got: Vec<_> = r.iter().map(|(k, v)| (k, v.clone())).collect();
    assert_eq!(got, model.entries(), "entries");
}
