//! The BTreeMap-style API (`range_mut`, `retain`, `extract_if`, `split_off`,
//! `append`, `keys`/`values`, `contains`, `overlaps`, indexing,
//! `pop_first`/`pop_last`, `entry`)
//! against the plain model of `common::Model`: random operation sequences on
//! both tree kinds, `validate()` and a full comparison after every step.

#[macro_use]
mod common;

use std::ops::RangeInclusive;

use common::*;
use maple_tree::{Entry, MapleTree};
use proptest::prelude::*;
use proptest::test_runner::Config;

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64, u64),
    RemoveRange(u64, u64),
    /// Bump every value overlapping `a..=b` (`range_mut`), from the front or back.
    RangeMut(u64, u64, bool),
    /// Keep the entries whose value is not a multiple of `k`.
    Retain(u64),
    /// Extract the entries overlapping `a..=b` with an odd value; stop after `take`.
    ExtractIf(u64, u64, usize),
    /// `split_off(at)`, check both halves, then put them back with `append`.
    SplitOffAppend(u64),
    /// `append` a tree of (a, b, v) triples (later ones win).
    Append(Vec<(u64, u64, u64)>),
    PopFirst,
    PopLast,
    /// `entry(i)`: split an entry at its (sel)-th index, remove it or bump it;
    /// fill a gap's sub-range.
    Entry(u64, u64, u8),
    Contains(u64),
    /// `overlaps(a..=b)`.
    Overlaps(u64, u64),
    /// `t[i]`, where an entry contains `i`.
    Index(u64),
}

/// Keys mostly in 0..300, sometimes near `u64::MAX`, so that small trees
/// have several levels and both ends of the space are exercised.
fn key() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 0u64..300,
        1 => (0u64..40).prop_map(|d| MAX - d),
        1 => any::<u64>(),
    ]
}

fn pair() -> impl Strategy<Value = (u64, u64)> {
    (key(), 0u64..12, any::<bool>()).prop_map(|(a, len, long)| {
        let len = if long { len * 17 } else { len };
        (a, a.saturating_add(len))
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (pair(), any::<u64>()).prop_map(|((a, b), v)| Op::Insert(a, b, v)),
        3 => pair().prop_map(|(a, b)| Op::RemoveRange(a, b)),
        2 => (pair(), any::<bool>()).prop_map(|((a, b), back)| Op::RangeMut(a, b, back)),
        1 => (2u64..6).prop_map(Op::Retain),
        2 => (pair(), 0usize..6).prop_map(|((a, b), n)| Op::ExtractIf(a, b, n)),
        1 => key().prop_map(Op::SplitOffAppend),
        1 => prop::collection::vec((pair(), any::<u64>()).prop_map(|((a, b), v)| (a, b, v)), 0..6)
            .prop_map(Op::Append),
        1 => Just(Op::PopFirst),
        1 => Just(Op::PopLast),
        3 => (key(), any::<u64>(), any::<u8>()).prop_map(|(i, s, w)| Op::Entry(i, s, w)),
        1 => key().prop_map(Op::Contains),
        1 => pair().prop_map(|(a, b)| Op::Overlaps(a, b)),
        1 => key().prop_map(Op::Index),
    ]
}

fn bump(v: &mut u64) {
    *v = v.wrapping_add(0x1_0000_0001);
}

fn model_from(entries: &[(RangeInclusive<u64>, u64)]) -> Model<u64> {
    let mut m = Model::new();
    for (r, v) in entries {
        m.insert(*r.start(), *r.end(), *v);
    }
    m
}

fn run(alloc: bool, ops: &[Op]) {
    let mut t: MapleTree<u64> = new_tree(alloc);
    let mut m: Model<u64> = Model::new();
    for (step, op) in ops.iter().enumerate() {
        let ctx = || format!("after step {step} {op:?} (alloc: {alloc})");
        match op.clone() {
            Op::Insert(a, b, v) => {
                t.insert(a..=b, v);
                m.insert(a, b, v);
            }
            Op::RemoveRange(a, b) => {
                t.remove_range(a..=b);
                m.remove_range(a, b);
            }
            Op::RangeMut(a, b, back) => {
                let mut seen: Vec<_> = if back {
                    t.range_mut(a..=b)
                        .rev()
                        .map(|(r, v)| {
                            bump(v);
                            r
                        })
                        .collect()
                } else {
                    t.range_mut(a..=b)
                        .map(|(r, v)| {
                            bump(v);
                            r
                        })
                        .collect()
                };
                if back {
                    seen.reverse();
                }
                let want: Vec<_> = m.range(a, b).into_iter().map(|(r, _)| r).collect();
                assert_eq!(seen, want, "range_mut {}", ctx());
                for r in want {
                    bump(m.get_mut(*r.start()).unwrap());
                }
            }
            Op::Retain(k) => {
                let mut visited = Vec::new();
                t.retain(|r, v| {
                    visited.push(r);
                    *v % k != 0
                });
                let want: Vec<_> = m.entries().into_iter().map(|(r, _)| r).collect();
                assert_eq!(
                    visited,
                    want,
                    "retain visits every entry in order {}",
                    ctx()
                );
                m.map.retain(|_, (_, v)| *v % k != 0);
            }
            Op::ExtractIf(a, b, take) => {
                let got: Vec<_> = t.extract_if(a..=b, |_, v| *v % 2 == 1).take(take).collect();
                let want: Vec<_> = m
                    .range(a, b)
                    .into_iter()
                    .filter(|(_, v)| v % 2 == 1)
                    .take(take)
                    .collect();
                assert_eq!(got, want, "extract_if {}", ctx());
                for (r, _) in want {
                    m.remove(*r.start());
                }
            }
            Op::SplitOffAppend(at) => {
                let high = t.split_off(at);
                assert_valid(&t, &|| format!("low half {}", ctx()));
                assert_valid(&high, &|| format!("high half {}", ctx()));
                assert_eq!(high.is_alloc(), alloc, "split_off keeps the kind");
                let mut low_m = m.clone();
                low_m.remove_range(at, MAX);
                let mut high_m = m.clone();
                if at > 0 {
                    high_m.remove_range(0, at - 1);
                }
                assert_same(&t, &low_m, &|| format!("low half {}", ctx()));
                assert_same(&high, &high_m, &|| format!("high half {}", ctx()));
                let mut high = high;
                t.append(&mut high);
                assert!(high.is_empty());
                // The cut entry comes back as two entries.
                m = low_m;
                for (r, v) in high_m.entries() {
                    m.insert(*r.start(), *r.end(), v);
                }
            }
            Op::Append(triples) => {
                let mut other: MapleTree<u64> = new_tree(!alloc);
                for &(a, b, v) in &triples {
                    other.insert(a..=b, v);
                }
                let om = model_from(&collect(&other));
                t.append(&mut other);
                assert!(other.is_empty() && other.validate().is_ok());
                for (r, v) in om.entries() {
                    m.insert(*r.start(), *r.end(), v);
                }
            }
            Op::PopFirst => {
                let want = m.entries().first().cloned();
                assert_eq!(t.pop_first(), want, "pop_first {}", ctx());
                if let Some((r, _)) = want {
                    m.remove(*r.start());
                }
            }
            Op::PopLast => {
                let want = m.entries().last().cloned();
                assert_eq!(t.pop_last(), want, "pop_last {}", ctx());
                if let Some((r, _)) = want {
                    m.remove(*r.start());
                }
            }
            Op::Entry(i, sel, what) => entry_op(&mut t, &mut m, i, sel, what, &ctx),
            Op::Contains(i) => {
                assert_eq!(t.contains(i), m.get(i).is_some(), "contains {}", ctx());
            }
            Op::Overlaps(a, b) => {
                let want = !m.range(a, b).is_empty();
                assert_eq!(t.overlaps(a..=b), want, "overlaps {}", ctx());
            }
            Op::Index(i) => {
                if let Some((_, v)) = m.get(i) {
                    assert_eq!(t[i], *v, "index {}", ctx());
                }
            }
        }
        assert_same(&t, &m, &ctx);
        let keys: Vec<_> = t.keys().collect();
        let values: Vec<_> = t.values().copied().collect();
        let entries = m.entries();
        assert_eq!(
            keys,
            entries.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>()
        );
        assert_eq!(values, entries.iter().map(|(_, v)| *v).collect::<Vec<_>>());
        assert_eq!(t.keys().rev().count(), t.len());
        assert_eq!(t.values_mut().len(), t.len());
    }
}

fn entry_op(
    t: &mut MapleTree<u64>,
    m: &mut Model<u64>,
    i: u64,
    sel: u64,
    what: u8,
    ctx: &dyn Fn() -> String,
) {
    match t.entry(i) {
        Entry::Occupied(mut e) => {
            let (r, v) = m
                .get(i)
                .map(|(r, v)| (r, *v))
                .expect("model agrees: occupied");
            assert_eq!(e.range(), r, "occupied range {}", ctx());
            assert_eq!(*e.get(), v);
            assert_eq!(e.index(), i);
            let (first, last) = (*r.start(), *r.end());
            match what % 3 {
                0 if first < last => {
                    // Split at an index in first+1..=last.
                    let at = first + 1 + sel % (last - first);
                    e.split_with(at, |old, piece| old ^ piece.start());
                    let want = if i < at { first..=at - 1 } else { at..=last };
                    assert_eq!(e.range(), want, "entry after split {}", ctx());
                    m.map.insert(first, (at - 1, v));
                    m.map.insert(at, (last, v ^ at));
                }
                1 => {
                    assert_eq!(e.remove(), (r, v), "entry remove {}", ctx());
                    m.remove(first);
                }
                _ => {
                    assert_eq!(e.insert(v ^ 1), v);
                    bump(e.into_mut());
                    let mv = m.get_mut(i).unwrap();
                    *mv ^= 1;
                    bump(mv);
                }
            }
        }
        Entry::Vacant(e) => {
            assert!(m.get(i).is_none(), "model agrees: vacant {}", ctx());
            let (glo, ghi) = m.gap_at(i);
            assert_eq!(e.range(), glo..=ghi, "gap range {}", ctx());
            // A sub-range of the gap around i, at most 16 indices each side.
            let a = i.saturating_sub(sel % 17).max(glo);
            let b = i.saturating_add((sel >> 8) % 17).min(ghi);
            let v = e.insert(a..=b, sel);
            assert_eq!(*v, sel);
            *v += 1;
            m.insert(a, b, sel + 1);
        }
    }
}

fn cfg(n: u32) -> Config {
    Config {
        cases: cases(n),
        max_shrink_iters: 2048,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(cfg(96))]
    #[test]
    fn api_regular(ops in prop::collection::vec(op(), 1..200)) {
        run(false, &ops);
    }

    #[test]
    fn api_alloc(ops in prop::collection::vec(op(), 1..200)) {
        run(true, &ops);
    }
}

// ---------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------

fn numbered(n: u64, alloc: bool) -> MapleTree<u64> {
    let mut t = new_tree(alloc);
    for i in 0..n {
        t.insert(i * 10..=i * 10 + 4, i);
    }
    t
}

#[test]
fn empty_query_ranges_yield_nothing() {
    for alloc in [false, true] {
        let mut t = numbered(100, alloc);
        assert_eq!(t.range_mut(5..5).count(), 0);
        assert_eq!(t.range_mut(..0).count(), 0);
        assert_eq!(
            t.range_mut((std::ops::Bound::Excluded(MAX), std::ops::Bound::Unbounded))
                .count(),
            0
        );
        assert_eq!(t.extract_if(7..7, |_, _| true).count(), 0);
        assert_eq!(t.len(), 100);
    }
}

#[test]
#[should_panic(expected = "no entry contains index 0x5")]
fn indexing_a_gap_panics() {
    let t = numbered(10, false);
    assert_eq!(t[4], 0);
    let _ = t[5];
}

#[test]
fn overlaps_at_the_edges() {
    for alloc in [false, true] {
        let mut t = numbered(100, alloc);
        assert!(!t.overlaps(5..5));
        assert!(!t.overlaps(995..));
        assert!(t.overlaps(994..));
        assert!(t.overlaps(..));
        t.insert(MAX..=MAX, 1);
        assert!(t.overlaps(MAX..));
        t.clear();
        assert!(!t.overlaps(..));
    }
}

#[test]
#[should_panic(expected = "reversed range")]
fn range_mut_reversed_panics() {
    let mut t = numbered(10, false);
    #[allow(clippy::reversed_empty_ranges)]
    t.range_mut(6..5);
}

#[test]
#[should_panic(expected = "reversed range")]
fn extract_if_reversed_panics() {
    let mut t = numbered(10, false);
    #[allow(clippy::reversed_empty_ranges)]
    t.extract_if(9..=3, |_, _| true);
}

#[test]
fn split_off_at_the_edges() {
    for alloc in [false, true] {
        let mut t = numbered(500, alloc);
        let all = t.split_off(0);
        assert!(t.is_empty());
        assert_eq!(all.len(), 500);
        let mut all = all;
        let none = all.split_off(MAX);
        assert!(none.is_empty());
        assert_eq!(all.len(), 500);
        // An entry ending at MAX is cut at MAX.
        all.insert(MAX - 9..=MAX, 7);
        let top = all.split_off(MAX);
        assert_eq!(top.iter().collect::<Vec<_>>(), [(MAX..=MAX, &7)]);
        assert_eq!(all.last_key_value(), Some((MAX - 9..=MAX - 1, &7)));
        all.validate().unwrap();
        top.validate().unwrap();
    }
}

#[test]
fn split_off_then_append_restores_a_large_tree() {
    for alloc in [false, true] {
        let original = numbered(3000, alloc);
        for at in [1, 12_345, 15_002, 29_990, 40_000] {
            let mut t = original.clone();
            let mut high = t.split_off(at);
            t.validate().unwrap();
            high.validate().unwrap();
            assert!(t.keys().all(|r| *r.end() < at));
            assert!(high.keys().all(|r| *r.start() >= at));
            t.append(&mut high);
            t.validate().unwrap();
            // The entry cut at `at` (if any) is now two entries.
            let merged: Vec<_> = t.iter().map(|(r, v)| (*r.start(), *r.end(), *v)).collect();
            let mut m = Model::new();
            for (r, v) in original.iter() {
                m.insert(*r.start(), *r.end(), *v);
            }
            let mut glued = Vec::new();
            for (s, e, v) in merged {
                match glued.last_mut() {
                    Some((_, le, lv)) if *le + 1 == s && *lv == v && s == at => *le = e,
                    _ => glued.push((s, e, v)),
                }
            }
            let want: Vec<_> = m
                .entries()
                .into_iter()
                .map(|(r, v)| (*r.start(), *r.end(), v))
                .collect();
            assert_eq!(glued, want, "at {at}");
        }
    }
}

#[test]
fn append_into_empty_keeps_the_kind() {
    let mut a: MapleTree<u64> = MapleTree::new_alloc();
    let mut b = numbered(50, false);
    a.append(&mut b);
    assert!(a.is_alloc());
    assert_eq!(a.len(), 50);
    assert_eq!(a.find_gap(5, ..), Some(5));
    a.validate().unwrap();
}

#[test]
fn split_off_with_does_not_clone() {
    // A value that is not Clone: the part that moves keeps the original.
    #[derive(Debug, PartialEq)]
    struct Offset(u64);
    let mut t = MapleTree::new();
    t.insert_with(100..200, Offset(100), |_, _| unreachable!());
    let high = t.split_off_with(150, |_, r| Offset(*r.start()));
    assert_eq!(t.get_key_value(100), Some((100..=149, &Offset(100))));
    assert_eq!(high.get_key_value(150), Some((150..=199, &Offset(100))));
}

#[test]
fn pop_until_empty_from_both_ends() {
    for alloc in [false, true] {
        let mut t = numbered(400, alloc);
        let mut lo = 0;
        let mut hi = 399;
        while !t.is_empty() {
            let (r, v) = t.pop_first().unwrap();
            assert_eq!((r, v), (lo * 10..=lo * 10 + 4, lo));
            lo += 1;
            if let Some((r, v)) = t.pop_last() {
                assert_eq!((r, v), (hi * 10..=hi * 10 + 4, hi));
                hi -= 1;
            }
            t.validate().unwrap();
        }
        assert_eq!(t.pop_first(), None);
        assert_eq!(t.pop_last(), None);
        // An entry at the very end of the space.
        t.insert(MAX..=MAX, 1);
        assert_eq!(t.pop_last(), Some((MAX..=MAX, 1)));
        t.insert(0..=MAX, 2);
        assert_eq!(t.pop_first(), Some((0..=MAX, 2)));
    }
}

#[test]
fn extract_if_dropped_early_keeps_the_rest() {
    let mut t = numbered(300, true);
    let first_two: Vec<_> = t.extract_if(.., |_, _| true).take(2).collect();
    assert_eq!(first_two, [(0..=4, 0), (10..=14, 1)]);
    assert_eq!(t.len(), 298);
    t.validate().unwrap();
    // Entries sticking out of the range are taken whole.
    let got: Vec<_> = t.extract_if(35..=41, |_, _| true).collect();
    assert_eq!(got, [(40..=44, 4)]);
    let got: Vec<_> = t.extract_if(36..=52, |_, _| true).collect();
    assert_eq!(got, [(50..=54, 5)]);
}

#[test]
fn entry_or_insert_and_modify() {
    let mut t = MapleTree::new();
    *t.entry(5).or_insert(0..10, 0u32) += 1;
    *t.entry(9).or_insert_with(0..10, || unreachable!()) += 1;
    t.entry(3).and_modify(|v| *v *= 10);
    assert_eq!(t.get_key_value(0), Some((0..=9, &20)));
    assert_eq!(t.entry(100).range(), 10..=MAX);
    assert_eq!(t.entry(100).index(), 100);
    t.validate().unwrap();
}

#[test]
#[should_panic(expected = "not inside the gap")]
fn vacant_insert_outside_the_gap_panics() {
    let mut t = MapleTree::new();
    t.insert(10..20, 1);
    if let Entry::Vacant(e) = t.entry(5) {
        e.insert(5..=10, 2);
    }
}

#[test]
#[should_panic(expected = "split point")]
fn split_at_the_entry_start_panics() {
    let mut t = MapleTree::new();
    t.insert(10..20, 1);
    if let Entry::Occupied(mut e) = t.entry(15) {
        e.split(10);
    }
}
