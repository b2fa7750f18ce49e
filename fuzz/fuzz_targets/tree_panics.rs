//! Panic safety of `MapleTree`: values whose `Clone` or `Drop`, and `split`
//! and `dup_with` callbacks, panic on a chosen call.
//!
//! Every operation runs under `catch_unwind`. Afterwards the tree must
//! validate, every value in it must be alive and appear once, and no value
//! may be alive outside it (nothing leaked, nothing dropped twice). The
//! contents must be the model's as before the operation when a `Clone` or a
//! callback panicked (the tree is left as it was), and as after it when a
//! `Drop` panicked (the store had taken effect; only dropping was cut short).
#![no_main]

use libfuzzer_sys::fuzz_target;
use maple_fuzz::{Key, Model, Range};
use maple_tree::MapleTree;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Insert(Range, u16),
    InsertWith(Range, u16),
    TryInsert(Range, u16),
    Remove(Key),
    RemoveRange(Range),
    CursorInsert(Key, Range, u16),
    CursorRemove(Key),
    Alloc(u8, Range, u16, bool),
    Clone,
    DupWith,
    Clear,
}

#[derive(arbitrary::Arbitrary, Debug)]
struct Input {
    alloc_tree: bool,
    /// Which counted call (`Clone`, `Drop`, `split`, `dup_with`'s map) panics.
    panic_at: u16,
    ops: Vec<Op>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Call {
    Clone,
    Drop,
    Callback,
}

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static PANIC_AT: Cell<Option<u32>> = const { Cell::new(None) };
    static PANICKED: Cell<Option<Call>> = const { Cell::new(None) };
    static LIVE: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    static NEXT_SERIAL: Cell<u64> = const { Cell::new(0) };
}

/// Counts a call and panics if it is the chosen one (once per input).
fn tick(call: Call) {
    let n = CALLS.get();
    CALLS.set(n + 1);
    if PANIC_AT.get() == Some(n) {
        PANIC_AT.set(None);
        PANICKED.set(Some(call));
        panic!("crash-test panic in {call:?} (call {n})");
    }
}

/// A value with a unique serial, so that leaks and double drops show.
#[derive(Debug)]
struct Dummy {
    serial: u64,
    tag: u16,
}

impl Dummy {
    fn new(tag: u16) -> Dummy {
        let serial = NEXT_SERIAL.get();
        NEXT_SERIAL.set(serial + 1);
        LIVE.with_borrow_mut(|l| l.insert(serial));
        Dummy { serial, tag }
    }
}

impl Clone for Dummy {
    fn clone(&self) -> Dummy {
        tick(Call::Clone);
        Dummy::new(self.tag)
    }
}

impl Drop for Dummy {
    fn drop(&mut self) {
        if !LIVE.with_borrow_mut(|l| l.remove(&self.serial)) {
            eprintln!("value {} dropped twice", self.serial);
            std::process::abort();
        }
        tick(Call::Drop);
    }
}

/// The tag of the piece of a cut entry.
fn split_tag(tag: u16, piece: &core::ops::RangeInclusive<u64>) -> u16 {
    tag ^ (*piece.start() as u16).rotate_left(3) ^ (*piece.end() as u16)
}

fuzz_target!(|input: Input| {
    CALLS.set(0);
    PANIC_AT.set(Some(u32::from(input.panic_at)));
    PANICKED.set(None);
    // The crash-test panics are expected: keep the fuzzer's output quiet.
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let planned = info
                .payload()
                .downcast_ref::<String>()
                .is_some_and(|m| m.starts_with("crash-test panic"));
            if !planned {
                report(info)
            }
        }))
    });
    let mut tree: MapleTree<Dummy> = if input.alloc_tree {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    let mut model = Model::<u16>::new();
    for op in &input.ops {
        let before = model.clone();
        let outcome = catch_unwind(AssertUnwindSafe(|| apply(&mut tree, &mut model, op)));
        let expected = match (outcome, PANICKED.take()) {
            (Ok(()), None) => &model,
            (Err(_), Some(Call::Drop)) => {
                // The operation took effect; bring the model up to date.
                model = before;
                model_op(&mut model, op);
                &model
            }
            (Err(_), Some(Call::Clone | Call::Callback)) => {
                model = before;
                &model
            }
            (Ok(()), Some(call)) => panic!("a {call:?} panicked and the operation returned"),
            (Err(e), None) => std::panic::resume_unwind(e),
        };
        check(&tree, expected, op);
    }
    // Dropping the tree is tested too: a panicking `Drop` of one value
    // must not keep the others from being dropped.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(tree)));
    PANIC_AT.set(None);
    let leaked = LIVE.with_borrow(|l| l.len());
    assert_eq!(leaked, 0, "values alive after the tree was dropped");
});

/// The model's side of an operation; for `alloc`, the start it must find.
fn model_op(model: &mut Model<u16>, op: &Op) -> Option<u64> {
    match *op {
        Op::Insert(r, v) | Op::CursorInsert(_, r, v) => model.insert(r.first, r.last, v),
        Op::InsertWith(r, v) => {
            model.store_with(r.first, r.last, Some(v), &mut |old, piece| {
                split_tag(*old, &piece)
            });
        }
        Op::TryInsert(r, v) => {
            let _ = model.try_insert(r.first, r.last, v);
        }
        Op::Remove(k) | Op::CursorRemove(k) => {
            model.remove(k.0);
        }
        Op::RemoveRange(r) => model.remove_range(r.first, r.last),
        Op::Alloc(size, r, v, rev) => {
            let size = 1 + u64::from(size % 32);
            let start = if rev {
                model.find_gap_rev(size, r.first, r.last)
            } else {
                model.find_gap(size, r.first, r.last)
            };
            if let Some(s) = start {
                model.insert(s, s + (size - 1), v);
            }
            return start;
        }
        Op::Clone | Op::DupWith => {}
        Op::Clear => *model = Model::new(),
    }
    None
}

fn apply(tree: &mut MapleTree<Dummy>, model: &mut Model<u16>, op: &Op) {
    // The model first: if the tree panics, the caller restores the model
    // from its copy and recomputes as needed.
    let alloc_start = model_op(model, op);
    match *op {
        Op::Insert(r, v) => tree.insert(r.first..=r.last, Dummy::new(v)),
        Op::InsertWith(r, v) => tree.insert_with(r.first..=r.last, Dummy::new(v), |old, piece| {
            tick(Call::Callback);
            Dummy::new(split_tag(old.tag, &piece))
        }),
        Op::TryInsert(r, v) => {
            let _ = tree.try_insert(r.first..=r.last, Dummy::new(v));
        }
        Op::Remove(k) => drop(tree.remove(k.0)),
        Op::RemoveRange(r) => tree.remove_range(r.first..=r.last),
        Op::CursorInsert(k, r, v) => tree.cursor_mut(k.0).insert(r.first..=r.last, Dummy::new(v)),
        Op::CursorRemove(k) => drop(tree.cursor_mut(k.0).remove()),
        Op::Alloc(size, r, v, rev) => {
            let size = 1 + u64::from(size % 32);
            let got = if rev {
                tree.alloc_rev(size, r.first..=r.last, Dummy::new(v))
            } else {
                tree.alloc(size, r.first..=r.last, Dummy::new(v))
            };
            assert_eq!(got.as_ref().ok().copied(), alloc_start, "alloc start");
        }
        Op::Clone => {
            let copy = tree.clone();
            copy.validate().expect("a clone validates");
            *tree = copy;
        }
        Op::DupWith => {
            let copy = tree.dup_with(|v| {
                tick(Call::Callback);
                Dummy::new(v.tag)
            });
            copy.validate().expect("a dup_with copy validates");
        }
        Op::Clear => tree.clear(),
    }
}

/// The tree validates, holds the model's entries, and its values are
/// exactly the live ones, each once.
fn check(tree: &MapleTree<Dummy>, model: &Model<u16>, op: &Op) {
    if let Err(e) = tree.validate() {
        panic!("validate() after {op:?}: {e}");
    }
    let got: Vec<_> = tree.iter().map(|(r, v)| (r, v.tag)).collect();
    assert_eq!(got, model.entries(), "entries after {op:?}");
    assert_eq!(tree.len(), model.len(), "len() after {op:?}");
    let serials: HashSet<u64> = tree.iter().map(|(_, v)| v.serial).collect();
    assert_eq!(
        serials.len(),
        tree.len(),
        "a value appears twice after {op:?}"
    );
    LIVE.with_borrow(|live| {
        assert!(
            serials.is_subset(live),
            "a dropped value is in the tree after {op:?}"
        );
        assert_eq!(live.len(), serials.len(), "values leaked after {op:?}");
    });
}
