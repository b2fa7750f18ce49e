//! Differential fuzzing of `MapleTree` against the tests' reference model.
//!
//! The input picks a tree kind (regular or allocation tree), a value type
//! (inline `u64`, or a heap-owning `String` the tree boxes, so that
//! AddressSanitizer sees leaks and double frees) and a sequence of operations
//! over the whole public API. After every write the tree must validate and
//! hold exactly the model's entries; every read must agree with the model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maple_fuzz::{check_alloc, check_same, Key, Model, Range, Size, Val};
use maple_tree::MapleTree;

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Insert(Range, u16),
    InsertWith(Range, u16),
    TryInsert(Range, u16),
    Remove(Key),
    RemoveRange(Range),
    Get(Key),
    GetMut(Key, u16),
    Range(Range),
    FindGap(Size, Range, bool),
    Alloc(Size, Range, u16, bool),
    Cursor(Key, Vec<Step>),
    CursorInsert(Key, Range, u16),
    CursorRemove(Key),
    Clone,
    TryClone,
    DupWith,
    Clear,
    IterMut(u16),
    IterBoth(u8),
}

#[derive(arbitrary::Arbitrary, Debug)]
enum Step {
    Seek(Key),
    NextEntry,
    PrevEntry,
    NextRange,
    PrevRange,
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    alloc_tree: bool,
    boxed_values: bool,
    ops: Vec<Op>,
}

fuzz_target!(|input: Input| {
    if input.boxed_values {
        run::<String>(input.alloc_tree, &input.ops)
    } else {
        run::<u64>(input.alloc_tree, &input.ops)
    }
});

fn run<V: Val>(alloc_tree: bool, ops: &[Op]) {
    let mut tree: MapleTree<V> = if alloc_tree {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    let mut model = Model::<V>::new();
    for op in ops {
        apply(&mut tree, &mut model, op);
    }
}

fn apply<V: Val>(tree: &mut MapleTree<V>, model: &mut Model<V>, op: &Op) {
    match op {
        Op::Insert(r, v) => {
            tree.insert(r.first..=r.last, V::make(*v));
            model.insert(r.first, r.last, V::make(*v));
        }
        Op::InsertWith(r, v) => {
            let mut tree_calls = 0;
            tree.insert_with(r.first..=r.last, V::make(*v), |old, piece| {
                tree_calls += 1;
                old.split_of(&piece)
            });
            let model_calls =
                model.store_with(r.first, r.last, Some(V::make(*v)), &mut |old, piece| {
                    old.split_of(&piece)
                });
            assert_eq!(tree_calls, model_calls, "split calls of insert_with");
        }
        Op::TryInsert(r, v) => {
            let got = tree.try_insert(r.first..=r.last, V::make(*v));
            let want = model.try_insert(r.first, r.last, V::make(*v));
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(occupied)) => {
                    assert_eq!(e.occupied, occupied, "try_insert: occupied entry");
                    assert_eq!(e.value, V::make(*v), "try_insert: value handed back");
                }
                (got, want) => panic!("try_insert: tree {:?}, model {want:?}", got.is_ok()),
            }
        }
        Op::Remove(k) => assert_eq!(tree.remove(k.0), model.remove(k.0), "remove({:#x})", k.0),
        Op::RemoveRange(r) => {
            tree.remove_range(r.first..=r.last);
            model.remove_range(r.first, r.last);
        }
        Op::Get(k) => {
            let want = model.get(k.0);
            assert_eq!(tree.get(k.0), want.as_ref().map(|(_, v)| *v), "get");
            assert_eq!(tree.get_key_value(k.0), want, "get_key_value");
            return;
        }
        Op::GetMut(k, v) => {
            let got = tree.get_mut(k.0).map(|x| {
                *x = V::make(*v);
            });
            let want = model.get_mut(k.0).map(|x| {
                *x = V::make(*v);
            });
            assert_eq!(got, want, "get_mut({:#x})", k.0);
        }
        Op::Range(r) => {
            let got: Vec<_> = tree
                .range(r.first..=r.last)
                .map(|(r, v)| (r, v.clone()))
                .collect();
            assert_eq!(got, model.range(r.first, r.last), "range");
            return;
        }
        Op::FindGap(size, r, rev) => {
            let (got, want) = if *rev {
                (
                    tree.find_gap_rev(size.0, r.first..=r.last),
                    model.find_gap_rev(size.0, r.first, r.last),
                )
            } else {
                (
                    tree.find_gap(size.0, r.first..=r.last),
                    model.find_gap(size.0, r.first, r.last),
                )
            };
            assert_eq!(got, want, "find_gap(rev: {rev})");
            return;
        }
        Op::Alloc(size, r, v, rev) => {
            let got = if *rev {
                tree.alloc_rev(size.0, r.first..=r.last, V::make(*v))
            } else {
                tree.alloc(size.0, r.first..=r.last, V::make(*v))
            };
            check_alloc(got, model, size, r, *v, *rev);
        }
        Op::Cursor(k, steps) => {
            let mut c = tree.cursor(k.0);
            check_cursor(c.index(), c.range(), c.get(), model);
            for step in steps {
                let (start, end) = (*c.range().start(), *c.range().end());
                match step {
                    Step::Seek(k) => c.seek(k.0),
                    Step::NextEntry => {
                        let got = c.next_entry().map(|(r, v)| (r, v.clone()));
                        let want = model.next_after(end).map(|(r, v)| (r, v.clone()));
                        assert_eq!(got, want, "next_entry from {start:#x}..={end:#x}");
                        if got.is_none() {
                            c.seek(start);
                        }
                    }
                    Step::PrevEntry => {
                        let got = c.prev_entry().map(|(r, v)| (r, v.clone()));
                        let want = model.prev_before(start).map(|(r, v)| (r, v.clone()));
                        assert_eq!(got, want, "prev_entry from {start:#x}..={end:#x}");
                        if got.is_none() {
                            c.seek(start);
                        }
                    }
                    Step::NextRange | Step::PrevRange => {
                        let next = matches!(step, Step::NextRange);
                        let at = if next {
                            end.checked_add(1)
                        } else {
                            start.checked_sub(1)
                        };
                        let got = if next { c.next_range() } else { c.prev_range() };
                        match at {
                            None => {
                                assert!(got.is_none(), "{step:?} past the end of the space");
                                c.seek(start);
                            }
                            Some(at) => {
                                let (r, _) = got.expect("a neighbouring range");
                                let edge = if next { *r.start() } else { *r.end() };
                                assert_eq!(edge, at, "{step:?} from {start:#x}..={end:#x}");
                            }
                        }
                    }
                }
                check_cursor(c.index(), c.range(), c.get(), model);
            }
            return;
        }
        Op::CursorInsert(k, r, v) => {
            let mut c = tree.cursor_mut(k.0);
            c.insert(r.first..=r.last, V::make(*v));
            assert_eq!(c.index(), r.first, "cursor index after insert");
            model.insert(r.first, r.last, V::make(*v));
        }
        Op::CursorRemove(k) => {
            let mut c = tree.cursor_mut(k.0);
            assert_eq!(c.remove(), model.remove(k.0), "cursor remove at {:#x}", k.0);
        }
        Op::Clone => {
            let copy = tree.clone();
            check_same(&copy, model);
            *tree = copy;
        }
        Op::TryClone => {
            let copy = tree.try_clone().expect("memory for a copy");
            check_same(&copy, model);
            drop(copy);
        }
        Op::DupWith => {
            let copy = tree.dup_with(|v| v.tag());
            let want: Vec<_> = model
                .entries()
                .into_iter()
                .map(|(r, v)| (r, v.tag()))
                .collect();
            let got: Vec<_> = copy.iter().map(|(r, v)| (r, *v)).collect();
            copy.validate().expect("dup_with copy validates");
            assert_eq!(got, want, "dup_with copy");
        }
        Op::Clear => {
            tree.clear();
            *model = Model::new();
        }
        Op::IterMut(v) => {
            for (_, x) in tree.iter_mut() {
                *x = x.split_of(&(u64::from(*v)..=0));
            }
            for (_, (_, x)) in model.map.iter_mut() {
                *x = x.split_of(&(u64::from(*v)..=0));
            }
        }
        Op::IterBoth(pattern) => {
            // Take from the front or back by the bits of `pattern`: the two
            // ends must meet without losing or repeating an entry.
            let want = model.entries();
            let mut it = tree.iter();
            let (mut front, mut back) = (Vec::new(), Vec::new());
            let mut bit = 0;
            loop {
                let from_back = pattern >> (bit % 8) & 1 == 1;
                bit += 1;
                let item = if from_back { it.next_back() } else { it.next() };
                match item {
                    Some((r, v)) if from_back => back.push((r, v.clone())),
                    Some((r, v)) => front.push((r, v.clone())),
                    None => break,
                }
            }
            front.extend(back.into_iter().rev());
            assert_eq!(front, want, "iteration from both ends");
            return;
        }
    }
    check_same(tree, model);
}

/// The cursor's index lies in its range; an entry's range and value are
/// the model's, a gap's range lies inside the model's gap.
fn check_cursor<V: Val>(
    index: u64,
    range: core::ops::RangeInclusive<u64>,
    got: Option<&V>,
    model: &Model<V>,
) {
    assert!(
        range.contains(&index),
        "cursor range {range:#x?} lacks {index:#x}"
    );
    match model.get(index) {
        Some((r, v)) => {
            assert_eq!(range, r, "cursor range at {index:#x}");
            assert_eq!(got, Some(v), "cursor value at {index:#x}");
        }
        None => {
            assert_eq!(got, None, "cursor value in a gap at {index:#x}");
            let (gs, ge) = model.gap_at(index);
            assert!(
                gs <= *range.start() && *range.end() <= ge,
                "cursor gap {range:#x?} outside the gap {gs:#x}..={ge:#x}"
            );
        }
    }
}
