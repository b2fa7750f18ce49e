//! The read-only views (`Iter`, `Range`, `Keys`, `Values`, `Gaps`,
//! `Cursor`) are `Clone` for any `V`, as `BTreeMap`'s are: a clone taken
//! part way goes on from the same place, independently of the original.

use maple_tree::MapleTree;
use std::ops::RangeInclusive;

/// A value that cannot be cloned: the views must not need `V: Clone`.
#[derive(Debug, PartialEq)]
struct Token(u64);

/// 3,000 entries `10i..=10i+4` (a tree several levels high), with gaps
/// between them.
fn tree() -> MapleTree<Token> {
    let mut t = MapleTree::new();
    for i in 0..3_000 {
        t.try_insert(10 * i..=10 * i + 4, Token(i)).unwrap();
    }
    t
}

type Item<'a> = (RangeInclusive<u64>, &'a Token);

/// Steps `it` `k` times from each end, clones it, and checks that the clone
/// and the original then hand out the same items, each on its own.
fn check_clone<'a, I>(mut it: I, k: usize)
where
    I: DoubleEndedIterator<Item = Item<'a>> + Clone,
{
    for _ in 0..k {
        it.next();
        it.next_back();
    }
    let copy = it.clone();
    let rest: Vec<_> = it.by_ref().collect();
    assert!(it.next().is_none());
    let from_copy: Vec<_> = copy.collect();
    assert_eq!(rest, from_copy);
}

#[test]
fn iterators_clone_part_way() {
    let t = tree();
    check_clone(t.iter(), 0);
    check_clone(t.iter(), 700);
    check_clone(t.range(1_234..=25_678), 300);
    check_clone(t.range(5..=9), 0); // a gap: nothing
    let mut keys = t.keys();
    keys.nth(100);
    let copy = keys.clone();
    assert_eq!(keys.collect::<Vec<_>>(), copy.collect::<Vec<_>>());
    let mut values = t.values();
    values.nth_back(100);
    let copy = values.clone();
    assert_eq!(copy.len(), 2_899);
    assert!(values.eq(copy));
}

#[test]
fn a_cloned_iterator_does_not_move_the_original() {
    let t = tree();
    let mut it = t.iter();
    it.next();
    let mut copy = it.clone();
    assert_eq!(copy.next().map(|(r, _)| r), Some(10..=14));
    assert_eq!(copy.len(), 2_998);
    assert_eq!(it.len(), 2_999);
    assert_eq!(it.next().map(|(r, _)| r), Some(10..=14));
}

#[test]
fn gaps_clone_part_way() {
    let t = tree();
    let mut gaps = t.gaps(..);
    gaps.nth(50);
    let copy = gaps.clone();
    let rest: Vec<_> = gaps.collect();
    assert_eq!(rest.len(), 3_000 - 51);
    assert_eq!(rest, copy.collect::<Vec<_>>());
}

#[test]
fn cursors_clone_and_move_on_their_own() {
    let t = tree();
    let mut c = t.cursor(20_000);
    let mut copy = c.clone();
    assert_eq!(
        copy.key_value().map(|(r, v)| (r, v.0)),
        Some((20_000..=20_004, 2_000))
    );
    for _ in 0..999 {
        copy.next_entry();
    }
    assert_eq!(copy.key_value().map(|(_, v)| v.0), Some(2_999));
    assert_eq!(c.index(), 20_000);
    assert_eq!(c.prev_entry().map(|(_, v)| v.0), Some(1_999));
}
