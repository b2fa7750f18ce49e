//! `insert` and `remove_range` keep a cut entry's value on the part that
//! survives instead of cloning it: only an entry cut into two parts (the
//! store inside it) is cloned, once. The value kept is the same value, at
//! the same address when it is boxed, in a plain tree and in a concurrent
//! one, whose readers may still hold it.

use std::cell::Cell;
use std::rc::Rc;

use maple_tree::{MapleTree, RcuMapleTree};

/// A value that counts its clones in a shared cell.
#[derive(Debug)]
struct Counted {
    tag: u32,
    clones: Rc<Cell<u32>>,
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        self.clones.set(self.clones.get() + 1);
        Counted {
            tag: self.tag,
            clones: Rc::clone(&self.clones),
        }
    }
}

fn tags(t: &MapleTree<Counted>) -> Vec<(u64, u64, u32)> {
    t.iter()
        .map(|(r, v)| (*r.start(), *r.end(), v.tag))
        .collect()
}

/// Entries `[10k, 10k + 9]` tagged `k`, for `k < n`.
fn tree(n: u32, clones: &Rc<Cell<u32>>) -> MapleTree<Counted> {
    let mut t = MapleTree::new();
    for k in 0..n {
        let v = Counted {
            tag: k,
            clones: Rc::clone(clones),
        };
        t.insert_with(u64::from(k) * 10..=u64::from(k) * 10 + 9, v, |_, _| {
            unreachable!("nothing is cut while the tree is built")
        });
    }
    clones.set(0);
    t
}

#[test]
fn a_store_over_the_ends_of_two_entries_clones_nothing() {
    for n in [4, 40, if cfg!(miri) { 400 } else { 4_000 }] {
        let clones = Rc::new(Cell::new(0));
        let mut t = tree(n, &clones);
        // Cuts entry 1's tail and entry 2's head; in a tree of many leaves,
        // also a store across a leaf boundary (cutting both of its leaves).
        for (first, last) in [(15, 24), (1_595, 1_604), (2_005, 2_994)] {
            if last >= u64::from(n) * 10 {
                continue;
            }
            t.insert(
                first..=last,
                Counted {
                    tag: 999,
                    clones: Rc::clone(&clones),
                },
            );
            assert_eq!(
                clones.get(),
                0,
                "n = {n}: a store over {first}..={last} cloned"
            );
            let got = tags(&t);
            let at = |i: u64| got.iter().find(|&&(f, l, _)| f <= i && i <= l).copied();
            assert_eq!(
                at(first - 1).map(|e| (e.1, e.2)),
                Some((first - 1, (first / 10) as u32))
            );
            assert_eq!(
                at(last + 1).map(|e| (e.0, e.2)),
                Some((last + 1, (last / 10) as u32))
            );
            t.validate().unwrap();
        }
        t.remove_range(33..=46);
        assert_eq!(
            clones.get(),
            0,
            "n = {n}: a removal over two entries' ends cloned"
        );
        t.validate().unwrap();
    }
}

#[test]
fn a_store_inside_one_entry_clones_it_once() {
    let clones = Rc::new(Cell::new(0));
    let mut t = tree(40, &clones);
    t.insert(
        103..=105,
        Counted {
            tag: 999,
            clones: Rc::clone(&clones),
        },
    );
    assert_eq!(clones.get(), 1);
    assert_eq!(
        tags(&t)[10..13],
        [(100, 102, 10), (103, 105, 999), (106, 109, 10)]
    );
    t.remove_range(201..=202);
    assert_eq!(clones.get(), 2);
    let around: Vec<_> = tags(&t)
        .into_iter()
        .filter(|&(f, _, _)| (200..210).contains(&f))
        .collect();
    assert_eq!(around, [(200, 200, 20), (203, 209, 20)]);
    t.validate().unwrap();
}

#[test]
fn the_displaced_forms_still_hand_out_the_original() {
    let clones = Rc::new(Cell::new(0));
    let mut t = tree(40, &clones);
    let out: Vec<_> = t
        .insert_displaced(
            15..=24,
            Counted {
                tag: 999,
                clones: Rc::clone(&clones),
            },
        )
        .into_iter()
        .map(|(r, v)| (r, v.tag))
        .collect();
    assert_eq!(out, [(15..=19, 1), (20..=24, 2)]);
    // The parts outside the store got clones, as documented.
    assert_eq!(clones.get(), 2);
}

#[test]
fn a_kept_boxed_value_does_not_move() {
    let mut t = MapleTree::new();
    t.insert(0..=99, String::from("kept"));
    let before = t.get(50).unwrap().as_ptr();
    t.insert(0..=9, String::from("new"));
    assert_eq!(t.get(50).unwrap().as_ptr(), before);
    t.remove_range(90..=99);
    assert_eq!(t.get(50).unwrap().as_ptr(), before);
    assert_eq!(t.get_key_value(50).unwrap().0, 10..=89);
}

#[test]
fn a_reader_keeps_reading_a_value_the_writer_kept() {
    let tree = RcuMapleTree::<String>::new();
    for k in 0..200u64 {
        tree.write()
            .insert(k * 10..=k * 10 + 9, format!("entry {k}"));
    }
    let r = tree.read();
    let held = r.get(1_005).unwrap();
    // Cut entry 100 at both ends in turn (its head, then its tail), each
    // time keeping its value, while the reader holds it.
    tree.write()
        .insert(995..=1_002, "over the head".to_string());
    tree.write().remove_range(1_008..=1_013);
    assert_eq!(held, "entry 100");
    let now = tree.read();
    let (range, value) = now.get_key_value(1_005).unwrap();
    assert_eq!(range, 1_003..=1_007);
    assert!(std::ptr::eq(value, held), "the kept value moved");
    drop(r);
    drop(now);
    // The value is dropped once, with the tree (Miri checks the rest).
    let mut w = tree.write();
    w.insert(1_004..=1_004, "inside".to_string());
    assert_eq!(w.len(), 203);
}
