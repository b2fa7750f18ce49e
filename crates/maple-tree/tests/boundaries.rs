//! Boundaries: index 0 and `u64::MAX`, one-index ranges, the whole space,
//! ranges touching `u64::MAX`, gap search at the ends of the space and with
//! huge sizes, every Rust range form, and every documented panic.
//!
//! The panic tests catch the panic (instead of `#[should_panic]`, which any
//! unrelated panic would also satisfy): the call must panic, the message must
//! not be a placeholder, a bad range must be named in it, and the tree must be
//! unchanged and valid afterwards.
#![allow(clippy::reversed_empty_ranges)]

#[macro_use]
mod common;

use std::ops::Bound::{Excluded, Included, Unbounded};
use std::ops::RangeInclusive;
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::*;
use maple_tree::{MapleTree, NoSpace, OccupiedError};

fn kv(t: &MapleTree<u64>, i: u64) -> Option<(RangeInclusive<u64>, u64)> {
    t.get_key_value(i).map(|(r, v)| (r, *v))
}

fn entries(t: &MapleTree<u64>) -> Vec<(RangeInclusive<u64>, u64)> {
    collect(t)
}

#[track_caller]
fn valid(t: &MapleTree<u64>) {
    if let Err(e) = t.validate() {
        panic!("validate(): {e}");
    }
}

#[test]
fn empty_tree() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        valid(&t);
        assert!(t.is_empty(), "{kind}");
        assert_eq!(t.len(), 0);
        assert_eq!(t.is_alloc(), kind == "alloc");
        for i in [0, 1, 12345, MAX - 1, MAX] {
            assert_eq!(t.get(i), None);
            assert_eq!(t.get_mut(i), None);
            assert_eq!(t.get_key_value(i), None);
            assert_eq!(t.remove(i), None);
        }
        assert_eq!(t.first_key_value(), None);
        assert_eq!(t.last_key_value(), None);
        assert_eq!(t.iter().next(), None);
        assert_eq!(t.iter().next_back(), None);
        assert_eq!(t.iter_mut().next(), None);
        assert_eq!(t.range(..).next(), None);
        assert_eq!(t.range(5..=9).next_back(), None);
        t.remove_range(..);
        t.remove_range(5..=9);
        valid(&t);
        assert!(t.is_empty());
        let c = t.cursor(77);
        assert_eq!(c.index(), 77);
        assert_eq!(c.range(), 0..=MAX, "{kind}: the empty tree is one gap");
        assert_eq!(c.get(), None);
        let s = t.stats();
        assert_eq!(
            (
                s.height,
                s.leaves + s.internal + s.alloc_internal,
                s.entries
            ),
            (0, 0, 0)
        );
        assert_eq!(t.clone().len(), 0);
        assert!(t.clone() == t);
    }
    let d: MapleTree<u64> = MapleTree::default();
    assert!(!d.is_alloc(), "Default is a regular tree");
    assert!(d.is_empty());
}

#[test]
fn index_zero_and_max() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        t.insert(0..=0, 1);
        valid(&t);
        assert_eq!(kv(&t, 0), Some((0..=0, 1)), "{kind}");
        assert_eq!(t.get(1), None);
        t.insert(MAX..=MAX, 2);
        valid(&t);
        assert_eq!(kv(&t, MAX), Some((MAX..=MAX, 2)), "{kind}");
        assert_eq!(t.get(MAX - 1), None);
        assert_eq!(t.len(), 2);
        assert_eq!(entries(&t), vec![(0..=0, 1), (MAX..=MAX, 2)]);
        assert_eq!(t.first_key_value(), Some((0..=0, &1)));
        assert_eq!(t.last_key_value(), Some((MAX..=MAX, &2)));
        assert_eq!(
            t.iter().rev().map(|(r, _)| r).collect::<Vec<_>>(),
            vec![MAX..=MAX, 0..=0]
        );
        assert_eq!(
            t.range(MAX..).map(|(r, _)| r).collect::<Vec<_>>(),
            vec![MAX..=MAX]
        );
        assert_eq!(
            t.range(..=0).map(|(r, _)| r).collect::<Vec<_>>(),
            vec![0..=0]
        );
        assert_eq!(t.range(1..MAX).count(), 0);
        assert_eq!(t.find_gap(1, ..), Some(1));
        assert_eq!(t.find_gap_rev(1, ..), Some(MAX - 1));
        assert_eq!(t.find_gap(MAX - 1, ..), Some(1), "{kind}: the whole middle");
        assert_eq!(t.find_gap_rev(MAX - 1, ..), Some(1));
        assert_eq!(t.find_gap(MAX, ..), None);
        assert_eq!(t.find_gap(1, ..=0), None);
        assert_eq!(t.find_gap(1, MAX..), None);
        // Neighbours of the edges, separate entries.
        t.insert(1..=1, 3);
        t.insert(MAX - 1..=MAX - 1, 4);
        valid(&t);
        assert_eq!(t.len(), 4);
        assert_eq!(kv(&t, 1), Some((1..=1, 3)));
        assert_eq!(kv(&t, MAX - 1), Some((MAX - 1..=MAX - 1, 4)));
        assert_eq!(t.remove(MAX), Some((MAX..=MAX, 2)));
        valid(&t);
        assert_eq!(t.remove(0), Some((0..=0, 1)));
        valid(&t);
        assert_eq!(t.remove(0), None);
        assert_eq!(entries(&t), vec![(1..=1, 3), (MAX - 1..=MAX - 1, 4)]);
        let mut c = t.cursor(0);
        assert_eq!(c.range(), 0..=0, "{kind}: the gap before index 1");
        assert_eq!(c.prev_range(), None, "{kind}: nothing before 0");
        let mut c = t.cursor(MAX);
        assert_eq!(c.range(), MAX..=MAX);
        assert_eq!(c.next_range(), None, "{kind}: nothing after MAX");
        assert_eq!(c.next_entry(), None);
        let mut c = t.cursor(MAX);
        assert_eq!(c.prev_entry(), Some((MAX - 1..=MAX - 1, &4)));
        assert_eq!(c.prev_entry(), Some((1..=1, &3)));
        assert_eq!(c.prev_entry(), None);
    }
}

#[test]
fn whole_space_entry() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        t.insert(.., 7);
        valid(&t);
        assert_eq!(t.len(), 1);
        for i in [0, 1, 1 << 63, MAX] {
            assert_eq!(
                kv(&t, i),
                Some((0..=MAX, 7)),
                "{kind}: get_key_value({i:#x})"
            );
        }
        assert_eq!(t.first_key_value(), Some((0..=MAX, &7)));
        assert_eq!(t.last_key_value(), Some((0..=MAX, &7)));
        assert_eq!(t.find_gap(1, ..), None);
        assert_eq!(t.find_gap_rev(1, ..), None);
        assert_eq!(
            t.range(5..=5).map(|(r, _)| r).collect::<Vec<_>>(),
            vec![0..=MAX]
        );
        let e = t.try_insert(5..=5, 8).unwrap_err();
        assert_eq!(
            e,
            OccupiedError {
                range: 5..=5,
                occupied: 0..=MAX,
                value: 8
            }
        );
        let e = t.alloc(1, .., 9).unwrap_err();
        assert_eq!(e, NoSpace { size: 1, value: 9 });
        // A store in the middle splits the whole space in three.
        t.insert(5..=5, 8);
        valid(&t);
        assert_eq!(
            entries(&t),
            vec![(0..=4, 7), (5..=5, 8), (6..=MAX, 7)],
            "{kind}"
        );
        // Remove the middle: two entries with the same value stay separate.
        assert_eq!(t.remove(5), Some((5..=5, 8)));
        valid(&t);
        assert_eq!(entries(&t), vec![(0..=4, 7), (6..=MAX, 7)]);
        assert_eq!(t.find_gap(1, ..), Some(5));
        assert_eq!(t.find_gap(2, ..), None);
        // Fill the hole with the same value: still three entries, never merged.
        t.insert(5..=5, 7);
        valid(&t);
        assert_eq!(
            entries(&t),
            vec![(0..=4, 7), (5..=5, 7), (6..=MAX, 7)],
            "{kind}: no merging"
        );
        // The whole space again replaces everything.
        t.insert(0..=MAX, 1);
        valid(&t);
        assert_eq!(entries(&t), vec![(0..=MAX, 1)]);
        assert_eq!(t.remove(123), Some((0..=MAX, 1)));
        valid(&t);
        assert!(t.is_empty());
        // The whole space over a multi-level tree collapses it.
        for i in 0..5_000u64 {
            t.insert(i * 3..=i * 3 + 1, i);
        }
        valid(&t);
        assert!(t.stats().height >= 2);
        t.insert(.., 2);
        valid(&t);
        assert_eq!(entries(&t), vec![(0..=MAX, 2)]);
        let s = t.stats();
        assert!(
            s.leaves + s.internal + s.alloc_internal <= 1 && s.height <= 1,
            "{kind}: one entry left in {s:?}"
        );
        for i in 0..5_000u64 {
            t.insert(i * 3..=i * 3 + 1, i);
        }
        t.remove_range(..);
        valid(&t);
        assert!(t.is_empty());
        let s = t.stats();
        assert_eq!(
            (s.height, s.leaves + s.internal + s.alloc_internal),
            (0, 0),
            "{kind}: {s:?}"
        );
    }
}

#[test]
fn ranges_touching_max() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        t.insert(MAX - 10.., 1);
        valid(&t);
        assert_eq!(kv(&t, MAX), Some((MAX - 10..=MAX, 1)), "{kind}");
        t.insert(MAX - 5..=MAX - 5, 2);
        valid(&t);
        assert_eq!(
            entries(&t),
            vec![
                (MAX - 10..=MAX - 6, 1),
                (MAX - 5..=MAX - 5, 2),
                (MAX - 4..=MAX, 1)
            ]
        );
        t.remove_range(MAX..=MAX);
        valid(&t);
        assert_eq!(
            entries(&t),
            vec![
                (MAX - 10..=MAX - 6, 1),
                (MAX - 5..=MAX - 5, 2),
                (MAX - 4..=MAX - 1, 1)
            ],
            "{kind}: remove_range(MAX..=MAX) cuts the last index off"
        );
        assert_eq!(t.find_gap(1, MAX - 10..), Some(MAX));
        assert_eq!(t.find_gap_rev(1, ..), Some(MAX));
        assert_eq!(t.find_gap_rev(2, ..), Some(MAX - 12));
        assert_eq!(t.find_gap(2, MAX - 20..), Some(MAX - 20));
        assert_eq!(t.alloc_rev(1, .., 3), Ok(MAX));
        valid(&t);
        assert_eq!(kv(&t, MAX), Some((MAX..=MAX, 3)));
        assert_eq!(t.find_gap(1, MAX - 10..), None);
        assert_eq!(
            t.alloc(1, MAX - 10.., 4),
            Err(NoSpace { size: 1, value: 4 })
        );
        // Exclusive end just below MAX and excluded start bounds.
        t.insert(MAX - 3..MAX, 5);
        valid(&t);
        assert_eq!(kv(&t, MAX - 1), Some((MAX - 3..=MAX - 1, 5)));
        t.insert((Excluded(MAX - 1), Unbounded), 6);
        assert_eq!(kv(&t, MAX), Some((MAX..=MAX, 6)));
        assert_eq!(t.len(), 5);
        t.remove_range((Excluded(MAX - 20), Included(MAX)));
        valid(&t);
        assert!(t.is_empty(), "{kind}");
    }
}

#[test]
fn find_gap_at_the_ends_of_the_space() {
    for (kind, mk) in kinds::<u64>() {
        let t = mk();
        let h = 1u64 << 63;
        assert_eq!(t.find_gap(1, ..), Some(0), "{kind}");
        assert_eq!(t.find_gap_rev(1, ..), Some(MAX), "{kind}");
        assert_eq!(t.find_gap(MAX, ..), Some(0), "{kind}");
        assert_eq!(t.find_gap_rev(MAX, ..), Some(1), "{kind}");
        assert_eq!(t.find_gap(h, ..), Some(0));
        assert_eq!(t.find_gap_rev(h, ..), Some(h));
        assert_eq!(t.find_gap(1, MAX..), Some(MAX));
        assert_eq!(t.find_gap_rev(1, MAX..), Some(MAX));
        assert_eq!(t.find_gap(2, MAX..), None);
        assert_eq!(t.find_gap(2, MAX - 1..), Some(MAX - 1));
        assert_eq!(t.find_gap(1, ..=0), Some(0));
        assert_eq!(t.find_gap_rev(1, ..=0), Some(0));
        assert_eq!(t.find_gap(2, ..=0), None);
        assert_eq!(t.find_gap(MAX, 1..), Some(1));
        assert_eq!(t.find_gap(MAX, ..MAX), Some(0));
        assert_eq!(t.find_gap(MAX, 1..MAX), None);
        assert_eq!(t.find_gap_rev(MAX - 1, 1..MAX), Some(1));
        assert_eq!(t.find_gap(7, 100..=106), Some(100));
        assert_eq!(t.find_gap(8, 100..=106), None);
        assert_eq!(t.find_gap_rev(7, 100..=106), Some(100));
        assert_eq!(t.find_gap_rev(3, 100..=106), Some(104));
        assert_eq!(t.find_gap(1, (Excluded(MAX - 1), Unbounded)), Some(MAX));

        // One entry in the middle of the space.
        let mut t = mk();
        t.insert(h..=h, 1);
        assert_eq!(t.find_gap(h, ..), Some(0));
        assert_eq!(t.find_gap(h + 1, ..), None);
        assert_eq!(
            t.find_gap_rev(h, ..),
            Some(0),
            "{kind}: the high gap holds only 2^63-1"
        );
        assert_eq!(t.find_gap_rev(h - 1, ..), Some(h + 1));
        assert_eq!(t.find_gap(h - 1, h..), Some(h + 1));
        assert_eq!(t.find_gap(1, h..=h), None);
        assert_eq!(t.find_gap(1, h..), Some(h + 1));
        assert_eq!(t.find_gap_rev(1, ..=h), Some(h - 1));

        // Both ends occupied.
        let mut t = mk();
        t.insert(0..=0, 1);
        t.insert(MAX..=MAX, 1);
        assert_eq!(t.find_gap(MAX, ..), None);
        assert_eq!(t.find_gap(MAX - 1, ..), Some(1));
        assert_eq!(t.find_gap_rev(MAX - 1, ..), Some(1));
        assert_eq!(t.find_gap_rev(MAX - 2, ..), Some(2));
        assert_eq!(t.find_gap(MAX - 2, ..), Some(1));
        assert_eq!(t.find_gap(1, ..=0), None);
    }
}

#[test]
fn alloc_at_the_ends_of_the_space() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        assert_eq!(t.alloc(MAX, .., 1), Ok(0), "{kind}");
        valid(&t);
        assert_eq!(entries(&t), vec![(0..=MAX - 1, 1)]);
        assert_eq!(t.alloc(2, .., 2), Err(NoSpace { size: 2, value: 2 }));
        assert_eq!(t.alloc(1, .., 2), Ok(MAX));
        valid(&t);
        assert_eq!(t.alloc(1, .., 3), Err(NoSpace { size: 1, value: 3 }));
        assert_eq!(t.alloc_rev(1, .., 3), Err(NoSpace { size: 1, value: 3 }));
        assert_eq!(t.len(), 2);

        let mut t = mk();
        assert_eq!(t.alloc_rev(MAX, .., 1), Ok(1), "{kind}");
        valid(&t);
        assert_eq!(entries(&t), vec![(1..=MAX, 1)]);
        assert_eq!(t.alloc_rev(1, .., 2), Ok(0));
        valid(&t);
        assert_eq!(entries(&t), vec![(0..=0, 2), (1..=MAX, 1)]);

        // Allocating one index at a time from both ends of a small window.
        let mut t = mk();
        for i in 0..20u64 {
            assert_eq!(t.alloc(1, 100..=139, i), Ok(100 + i), "{kind}");
            assert_eq!(t.alloc_rev(1, 100..=139, i), Ok(139 - i), "{kind}");
            valid(&t);
        }
        assert_eq!(t.alloc(1, 100..=139, 0), Err(NoSpace { size: 1, value: 0 }));
        assert_eq!(t.len(), 40);
        // Sizes bigger than the window.
        assert_eq!(
            t.alloc(41, 100..=139, 0),
            Err(NoSpace { size: 41, value: 0 })
        );
        assert_eq!(
            t.alloc(MAX, .., 0),
            Err(NoSpace {
                size: MAX,
                value: 0
            })
        );
        assert_eq!(t.alloc(1u64 << 63, .., 0), Ok(140));
        valid(&t);
    }
}

#[test]
fn range_forms() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        t.insert(10..20, 1);
        assert_eq!(kv(&t, 10), Some((10..=19, 1)), "{kind}: a..b");
        t.insert(30.., 2);
        assert_eq!(kv(&t, 30), Some((30..=MAX, 2)), "{kind}: a..");
        t.insert(..5, 3);
        assert_eq!(kv(&t, 0), Some((0..=4, 3)), "{kind}: ..b");
        t.insert(..=2, 4);
        assert_eq!(kv(&t, 0), Some((0..=2, 4)), "{kind}: ..=b");
        assert_eq!(kv(&t, 3), Some((3..=4, 3)));
        t.insert((Excluded(40), Included(50)), 5);
        assert_eq!(
            kv(&t, 41),
            Some((41..=50, 5)),
            "{kind}: (Excluded, Included)"
        );
        t.insert((Excluded(60), Excluded(70)), 6);
        assert_eq!(
            kv(&t, 61),
            Some((61..=69, 6)),
            "{kind}: (Excluded, Excluded)"
        );
        t.insert((Unbounded, Excluded(1)), 7);
        assert_eq!(kv(&t, 0), Some((0..=0, 7)), "{kind}: (Unbounded, Excluded)");
        t.insert((Included(100), Unbounded), 8);
        assert_eq!(kv(&t, MAX), Some((100..=MAX, 8)));
        valid(&t);
        assert_eq!(
            entries(&t),
            vec![
                (0..=0, 7),
                (1..=2, 4),
                (3..=4, 3),
                (10..=19, 1),
                (30..=40, 2),
                (41..=50, 5),
                (51..=60, 2),
                (61..=69, 6),
                (70..=99, 2),
                (100..=MAX, 8)
            ]
        );
        let starts = |it: &mut dyn Iterator<Item = (RangeInclusive<u64>, &u64)>| {
            it.map(|(r, _)| *r.start()).collect::<Vec<_>>()
        };
        assert_eq!(
            starts(&mut t.range(..)),
            vec![0, 1, 3, 10, 30, 41, 51, 61, 70, 100]
        );
        assert_eq!(
            starts(&mut t.range(5..10)),
            Vec::<u64>::new(),
            "5..10 touches nothing"
        );
        assert_eq!(starts(&mut t.range(5..=10)), vec![10]);
        assert_eq!(starts(&mut t.range(..3)), vec![0, 1]);
        assert_eq!(starts(&mut t.range(..=3)), vec![0, 1, 3]);
        assert_eq!(starts(&mut t.range(69..)), vec![61, 70, 100]);
        assert_eq!(
            starts(&mut t.range((Excluded(69), Excluded(101)))),
            vec![70, 100]
        );
        assert_eq!(starts(&mut t.range(MAX..=MAX)), vec![100]);
        assert_eq!(starts(&mut t.range(45..=45).rev()), vec![41]);
        assert_eq!(
            starts(&mut t.range(20..=100).rev()),
            vec![100, 70, 61, 51, 41, 30]
        );
        assert_eq!(t.find_gap(1, ..), Some(5));
        assert_eq!(t.find_gap(1, 6..), Some(6));
        assert_eq!(t.find_gap(1, 10..), Some(20));
        assert_eq!(t.find_gap_rev(1, ..30), Some(29));
        assert_eq!(t.find_gap_rev(1, ..=29), Some(29));
        assert_eq!(t.find_gap_rev(5, (Excluded(4), Excluded(30))), Some(25));
        assert_eq!(t.find_gap(11, ..), None);
        assert_eq!(t.find_gap(10, ..), Some(20));
        t.remove_range(15..);
        assert_eq!(t.last_key_value(), Some((10..=14, &1)));
        t.remove_range(..=1);
        assert_eq!(t.first_key_value(), Some((2..=2, &4)));
        t.remove_range((Excluded(2), Excluded(4)));
        assert_eq!(starts(&mut t.iter()), vec![2, 4, 10]);
        assert_eq!(t.try_insert(3..4, 9), Ok(()));
        assert_eq!(
            t.try_insert(5.., 9),
            Err(OccupiedError {
                range: 5..=MAX,
                occupied: 10..=14,
                value: 9
            })
        );
        assert_eq!(t.try_insert(..=1, 9), Ok(()));
        assert_eq!(t.try_insert(15.., 9), Ok(()));
        assert_eq!(t.alloc(3, 5..10, 10), Ok(5));
        assert_eq!(t.alloc(3, 5..10, 11), Err(NoSpace { size: 3, value: 11 }));
        assert_eq!(t.alloc_rev(2, ..10, 12), Ok(8));
        valid(&t);
        assert_eq!(starts(&mut t.iter()), vec![0, 2, 3, 4, 5, 8, 10, 15]);
    }
}

#[test]
fn try_insert_reports_the_lowest_overlap() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        t.insert(10..=19, 1);
        t.insert(30..=39, 2);
        let e = t.try_insert(0..=35, 3).unwrap_err();
        assert_eq!(e.occupied, 10..=19, "{kind}");
        assert_eq!(e.range, 0..=35);
        assert_eq!(e.value, 3);
        let e = t.try_insert(19..=30, 3).unwrap_err();
        assert_eq!(e.occupied, 10..=19, "{kind}");
        let e = t.try_insert(35..=MAX, 4).unwrap_err();
        assert_eq!(e.occupied, 30..=39, "{kind}");
        assert_eq!(e.value, 4);
        assert_eq!(t.try_insert(20..=29, 5), Ok(()));
        assert_eq!(t.try_insert(40..=MAX, 6), Ok(()));
        assert_eq!(t.try_insert(0..=9, 7), Ok(()));
        valid(&t);
        assert_eq!(t.len(), 5);
        assert_eq!(t.find_gap(1, ..), None);
        let e = t.try_insert(.., 8).unwrap_err();
        assert_eq!(e.occupied, 0..=9);
        assert_eq!(
            e.to_string(),
            "range 0x0..=0xffffffffffffffff overlaps the entry 0x0..=0x9"
        );
    }
}

#[test]
fn adjacent_equal_values_never_merge() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        for i in 0..100u64 {
            t.insert(i * 10..=i * 10 + 9, 42);
            valid(&t);
        }
        assert_eq!(t.len(), 100, "{kind}");
        assert_eq!(kv(&t, 15), Some((10..=19, 42)));
        t.remove(15);
        t.insert(10..=19, 42);
        assert_eq!(t.len(), 100);
        // Cutting an entry leaves two entries with the same (cloned) value.
        t.remove_range(505..=505);
        assert_eq!(t.len(), 101);
        assert_eq!(kv(&t, 504), Some((500..=504, 42)));
        assert_eq!(kv(&t, 506), Some((506..=509, 42)));
        valid(&t);
    }
}

// ---------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------

fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("<non-string panic payload>")
    }
}

/// `f` must panic on a non-empty tree of either kind; the message must not be
/// a placeholder and must contain one of `names` (if any); the tree must be
/// unchanged and valid afterwards.
#[track_caller]
fn must_panic(what: &str, names: &[&str], f: impl Fn(&mut MapleTree<u64>)) {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        for i in 0..50u64 {
            t.insert(i * 0x100..=i * 0x100 + 0x7f, i);
        }
        let before = entries(&t);
        let res = catch_unwind(AssertUnwindSafe(|| f(&mut t)));
        let Err(e) = res else {
            panic!("{kind}: {what} did not panic");
        };
        let msg = panic_message(&*e);
        assert!(
            !msg.contains("not yet implemented") && !msg.contains("not implemented"),
            "{kind}: {what} panicked with a placeholder: {msg}"
        );
        if !names.is_empty() {
            assert!(
                names.iter().any(|n| msg.contains(n)),
                "{kind}: {what}: the panic message {msg:?} does not name the range (any of {names:?})"
            );
        }
        valid(&t);
        assert_eq!(
            entries(&t),
            before,
            "{kind}: {what} changed the tree before panicking"
        );
    }
}

/// The bad range 0x1234..0x1234 (empty), named as hex or decimal.
const N1234: &[&str] = &["1234", "4660"];
/// The reversed range 0x1234..=0x1233.
const N1233: &[&str] = &["1233", "4659"];

#[test]
fn panics_insert_empty_and_reversed() {
    must_panic("insert(0x1234..0x1234)", N1234, |t| {
        t.insert(0x1234..0x1234, 1)
    });
    must_panic("insert(0x1234..=0x1233)", N1233, |t| {
        t.insert(0x1234..=0x1233, 1)
    });
    must_panic("insert(0x1235..0x1234)", N1234, |t| {
        t.insert(0x1235..0x1234, 1)
    });
    must_panic("insert(..0)", &[], |t| t.insert(..0, 1));
    must_panic("insert((Excluded(0x1234), Excluded(0x1235)))", N1234, |t| {
        t.insert((Excluded(0x1234), Excluded(0x1235)), 1)
    });
    must_panic("insert((Excluded(0x1234), Included(0x1234)))", N1234, |t| {
        t.insert((Excluded(0x1234), Included(0x1234)), 1)
    });
    must_panic("insert((Excluded(MAX), Unbounded))", &[], |t| {
        t.insert((Excluded(MAX), Unbounded), 1)
    });
    must_panic("insert((Included(MAX), Excluded(MAX)))", &[], |t| {
        t.insert((Included(MAX), Excluded(MAX)), 1)
    });
}

#[test]
fn panics_other_writers() {
    must_panic("insert_with(0x1234..=0x1233)", N1233, |t| {
        t.insert_with(0x1234..=0x1233, 1, |v, _| *v)
    });
    must_panic("insert_with(..0)", &[], |t| {
        t.insert_with(..0, 1, |v, _| *v)
    });
    must_panic("try_insert(0x1234..=0x1233)", N1233, |t| {
        let _ = t.try_insert(0x1234..=0x1233, 1);
    });
    must_panic("try_insert(0x1234..0x1234)", N1234, |t| {
        let _ = t.try_insert(0x1234..0x1234, 1);
    });
    must_panic("remove_range(0x1234..=0x1233)", N1233, |t| {
        t.remove_range(0x1234..=0x1233)
    });
    must_panic("remove_range(0x1234..0x1234)", N1234, |t| {
        t.remove_range(0x1234..0x1234)
    });
    must_panic("remove_range(..0)", &[], |t| t.remove_range(..0));
    must_panic("remove_range_with(0x1234..=0x1233)", N1233, |t| {
        t.remove_range_with(0x1234..=0x1233, |v, _| *v)
    });
    must_panic("cursor_mut.insert(0x1234..=0x1233)", N1233, |t| {
        t.cursor_mut(0).insert(0x1234..=0x1233, 1)
    });
    must_panic("cursor_mut.insert(0x1234..0x1234)", N1234, |t| {
        t.cursor_mut(0x1234).insert(0x1234..0x1234, 1)
    });
    must_panic("cursor_mut.insert_with(0x1234..=0x1233)", N1233, |t| {
        t.cursor_mut(0).insert_with(0x1234..=0x1233, 1, |v, _| *v)
    });
}

#[test]
fn panics_range() {
    must_panic("range(0x1234..=0x1233)", N1233, |t| {
        let _ = t.range(0x1234..=0x1233);
    });
}

/// Queries over an empty range ask for nothing and get nothing (the rule of
/// `BTreeMap::range`); only a reversed range is a programming error.
#[test]
fn empty_query_ranges_find_nothing() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        for i in 0..50u64 {
            t.insert(i * 0x100..=i * 0x100 + 0x7f, i);
        }
        assert_eq!(t.range(0x1234..0x1234).count(), 0, "{kind}");
        assert_eq!(t.range(..0).count(), 0, "{kind}");
        assert_eq!(t.range((Excluded(MAX), Unbounded)).count(), 0, "{kind}");
        assert_eq!(t.find_gap(1, 0x1234..0x1234), None, "{kind}");
        assert_eq!(t.find_gap_rev(1, ..0), None, "{kind}");
        assert_eq!(t.alloc_rev(1, 0x1234..0x1234, 7).unwrap_err().value, 7);
        valid(&t);
        assert_eq!(t.len(), 50);
    }
}

#[test]
fn panics_gap_search() {
    must_panic("find_gap(0, ..)", &[], |t| {
        let _ = t.find_gap(0, ..);
    });
    must_panic("find_gap_rev(0, ..)", &[], |t| {
        let _ = t.find_gap_rev(0, ..);
    });
    must_panic("find_gap(0, 5..=9)", &[], |t| {
        let _ = t.find_gap(0, 5..=9);
    });
    must_panic("find_gap(1, 0x1234..=0x1233)", N1233, |t| {
        let _ = t.find_gap(1, 0x1234..=0x1233);
    });
    must_panic("alloc(0, ..)", &[], |t| {
        let _ = t.alloc(0, .., 1);
    });
    must_panic("alloc_rev(0, ..)", &[], |t| {
        let _ = t.alloc_rev(0, .., 1);
    });
    must_panic("alloc(1, 0x1234..=0x1233)", N1233, |t| {
        let _ = t.alloc(1, 0x1234..=0x1233, 1);
    });
}

// The same panics as plain #[should_panic] tests on an empty tree.

#[test]
#[should_panic]
fn should_panic_insert_reversed() {
    MapleTree::<u64>::new().insert(10..=9, 1);
}

#[test]
#[should_panic]
fn should_panic_insert_empty_alloc_tree() {
    MapleTree::<u64>::new_alloc().insert(10..10, 1);
}

#[test]
#[should_panic]
fn should_panic_remove_range_empty() {
    MapleTree::<u64>::new().remove_range(..0);
}

#[test]
#[should_panic]
fn should_panic_find_gap_size_zero() {
    MapleTree::<u64>::new_alloc().find_gap(0, ..);
}

#[test]
#[should_panic]
fn should_panic_alloc_rev_size_zero() {
    let _ = MapleTree::<u64>::new_alloc().alloc_rev(0, .., 1);
}

#[test]
#[should_panic]
fn should_panic_range_reversed() {
    let t = MapleTree::<u64>::new();
    let _ = t.range(7..=6);
}

// ---------------------------------------------------------------------------
// Every range form against the model, on a tree of several levels
// ---------------------------------------------------------------------------

#[test]
fn all_forms_against_the_model() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        let mut m = Model::<u64>::new();
        for i in 0..600u64 {
            t.insert(i * 7..=i * 7 + 3, i);
            m.insert(i * 7, i * 7 + 3, i);
        }
        let mut rng = Rng(5);
        for n in 0..400u64 {
            let a = match rng.below(4) {
                0 => 0,
                1 => MAX - rng.below(5),
                _ => rng.below(4_300),
            };
            let b = match rng.below(5) {
                0 => MAX,
                _ => a.saturating_add(rng.below(40)),
            };
            let rg = Rg {
                a,
                b,
                form: rng.below(256) as u8,
            };
            let ctx = || format!("{kind}: op #{n} on {rg:?}");
            match n % 6 {
                0 => {
                    with_range!(rg, |r| t.insert(r, n + 1000));
                    m.insert(a, b, n + 1000);
                }
                1 => {
                    with_range!(rg, |r| t.remove_range(r));
                    m.remove_range(a, b);
                }
                2 => {
                    let got: Vec<_> =
                        with_range!(rg, |r| t.range(r).map(|(r, v)| (r, *v)).collect());
                    assert_eq!(got, m.range(a, b), "{}", ctx());
                }
                3 => {
                    let size = 1 + rng.below(6);
                    let got = (
                        with_range!(rg, |r| t.find_gap(size, r)),
                        with_range!(rg, |r| t.find_gap_rev(size, r)),
                    );
                    let want = (m.find_gap(size, a, b), m.find_gap_rev(size, a, b));
                    assert_eq!(got, want, "{} size {size}", ctx());
                }
                4 => {
                    let got = with_range!(rg, |r| t.try_insert(r, n)).map_err(|e| e.occupied);
                    assert_eq!(got, m.try_insert(a, b, n), "{}", ctx());
                }
                _ => {
                    let size = 1 + rng.below(3);
                    let got = with_range!(rg, |r| t.alloc(size, r, n)).map_err(|e| e.size);
                    match m.find_gap(size, a, b) {
                        Some(s) => {
                            assert_eq!(got, Ok(s), "{}", ctx());
                            m.insert(s, s + (size - 1), n);
                        }
                        None => assert_eq!(got, Err(size), "{}", ctx()),
                    }
                }
            }
            assert_same(&t, &m, &ctx);
        }
    }
}
