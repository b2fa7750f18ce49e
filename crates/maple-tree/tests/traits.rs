//! `Hash`, `PartialOrd`/`Ord` and `Extend` by reference: they agree with
//! `PartialEq` and with the order of the entries as `(first, last, value)`.

mod common;

use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use common::*;
use maple_tree::MapleTree;
use proptest::prelude::*;

fn hash_of<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

fn triples(t: &MapleTree<u8>) -> Vec<(u64, u64, u8)> {
    t.iter().map(|(r, v)| (*r.start(), *r.end(), *v)).collect()
}

fn build(alloc: bool, ops: &[(u64, u64, u8)]) -> MapleTree<u8> {
    let mut t = new_tree(alloc);
    for &(a, len, v) in ops {
        t.insert(a..=a + len, v);
    }
    t
}

fn ops() -> impl Strategy<Value = Vec<(u64, u64, u8)>> {
    prop::collection::vec((0u64..60, 0u64..5, 0u8..3), 0..25)
}

proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: cases(256), ..Default::default() })]
    #[test]
    fn order_and_hash_follow_the_entries(a in ops(), b in ops()) {
        let (ta, tb) = (build(false, &a), build(true, &b));
        prop_assert_eq!(ta.cmp(&tb), triples(&ta).cmp(&triples(&tb)));
        prop_assert_eq!(ta.partial_cmp(&tb), Some(ta.cmp(&tb)));
        prop_assert_eq!(ta == tb, ta.cmp(&tb) == Ordering::Equal);
        if ta == tb {
            prop_assert_eq!(hash_of(&ta), hash_of(&tb));
        }
        // The same entries in a tree of the other kind, built another way.
        let copy: MapleTree<u8> = {
            let mut c = new_tree(true);
            c.extend(ta.iter());
            c
        };
        prop_assert_eq!(&copy, &ta);
        prop_assert_eq!(copy.cmp(&ta), Ordering::Equal);
        prop_assert_eq!(hash_of(&copy), hash_of(&ta));
    }
}

#[test]
fn differing_trees_hash_differently() {
    let a = build(false, &[(0, 9, 1)]);
    let b = build(false, &[(0, 9, 2)]);
    let c = build(false, &[(0, 8, 1)]);
    assert_ne!(hash_of(&a), hash_of(&b));
    assert_ne!(hash_of(&a), hash_of(&c));
    assert!(c < a && a < b);
    assert!(MapleTree::<u8>::new() < c);
}

#[test]
fn partial_ord_with_nan() {
    let mut a = MapleTree::new();
    a.insert(0..10, f64::NAN);
    let b = a.clone();
    assert_eq!(a.partial_cmp(&b), None);
}

#[test]
fn extend_by_reference() {
    let pairs = [(0..10, 1u8), (5..15, 2)];
    let mut t = MapleTree::new();
    t.extend(pairs.iter().map(|(r, v)| (r, v)));
    assert_eq!(triples(&t), [(0, 4, 1), (5, 14, 2)]);
    let inclusive = [(20..=29, 3u8)];
    t.extend(inclusive.iter().map(|(r, v)| (r, v)));
    assert_eq!(t.get(25), Some(&3));
    t.validate().unwrap();
}
