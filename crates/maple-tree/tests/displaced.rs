//! `insert_displaced` / `remove_range_displaced` against the reference
//! model: what comes back is every overlapped entry, clipped to the stored
//! range, with its original value, in order; the tree is as after
//! `insert` / `remove_range`.

#[macro_use]
mod common;

use common::*;
use maple_tree::MapleTree;
use proptest::prelude::*;
use std::ops::RangeInclusive;

/// What a store over `a..=b` displaces, by the model.
fn expected(m: &Model<u64>, a: u64, b: u64) -> Vec<(RangeInclusive<u64>, u64)> {
    m.range(a, b)
        .into_iter()
        .map(|(r, v)| ((*r.start()).max(a)..=(*r.end()).min(b), v))
        .collect()
}

fn run(alloc: bool, ops: &[(bool, u64, u64, u64)]) {
    let mut t: MapleTree<u64> = new_tree(alloc);
    let mut m = Model::new();
    for (step, &(insert, a, len, v)) in ops.iter().enumerate() {
        let b = a.saturating_add(len);
        let want = expected(&m, a, b);
        let got: Vec<_> = if insert {
            m.insert(a, b, v);
            t.insert_displaced(a..=b, v).into_iter().collect()
        } else {
            m.remove_range(a, b);
            t.remove_range_displaced(a..=b).into_iter().collect()
        };
        let ctx = || format!("step {step}: insert {insert} {a}..={b}");
        assert_eq!(got, want, "{}", ctx());
        assert_same(&t, &m, &ctx);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    #[test]
    fn displaced_matches_the_model(
        alloc in any::<bool>(),
        ops in prop::collection::vec((any::<bool>(), 0u64..3_000, 0u64..200, any::<u64>()), 1..300),
    ) {
        run(alloc, &ops);
    }
}

#[test]
fn whole_space_and_edges() {
    for alloc in [false, true] {
        run(
            alloc,
            &[
                (true, 0, u64::MAX, 1),
                (true, u64::MAX, 0, 2),
                (true, 0, 0, 3),
                (false, 1, 10, 0),
                (true, 5, u64::MAX - 5, 4),
                (false, 0, u64::MAX, 0),
            ],
        );
    }
}

#[test]
fn two_displaced_entries_and_their_order() {
    let mut t = MapleTree::new();
    t.insert(0..=9, 'a');
    t.insert(20..=29, 'b');
    let d = t.insert_displaced(5..=24, 'c');
    assert_eq!(d.len(), 2);
    assert_eq!(
        d.iter().collect::<Vec<_>>(),
        [(5..=9, &'a'), (20..=24, &'b')]
    );
    assert_eq!(
        d.into_iter().rev().collect::<Vec<_>>(),
        [(20..=24, 'b'), (5..=9, 'a')]
    );
}
