//! Iterators and cursor steps at their edges: empty trees, one leaf, many
//! leaves with and without gaps, ranges that start or end inside entries or
//! gaps, and double-ended iteration meeting in the middle at every point.
//!
//! Under Miri (`scripts/miri.sh`) every test runs sized down with
//! `cfg!(miri)`: fewer points, fewer split points, a smaller tall tree.

use maple_tree::MapleTree;
use std::cell::Cell;
use std::ops::RangeInclusive;
use std::rc::Rc;

type Entry = (RangeInclusive<u64>, u64);

/// `n` entries `[stride·i, stride·i + len - 1] → i + 1` (`len == stride`:
/// no gaps between entries).
fn build(alloc: bool, n: u64, stride: u64, len: u64) -> (MapleTree<u64>, Vec<Entry>) {
    let mut t = if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    let mut model = Vec::new();
    for i in 0..n {
        let r = stride * i..=stride * i + len - 1;
        t.insert(r.clone(), i + 1);
        model.push((r, i + 1));
    }
    (t, model)
}

fn shapes() -> Vec<(MapleTree<u64>, Vec<Entry>)> {
    let mut out = Vec::new();
    for alloc in [false, true] {
        let sizes: &[u64] = if cfg!(miri) {
            &[0, 1, 2, 17, 300]
        } else {
            &[0, 1, 2, 7, 16, 17, 300]
        };
        for &n in sizes {
            out.push(build(alloc, n, 16, 10)); // gaps between entries
            out.push(build(alloc, n, 5, 5)); // no gaps
        }
    }
    // Entries touching both ends of the index space.
    let mut t = MapleTree::new();
    t.insert(0..=0, 1);
    t.insert(7..=u64::MAX - 1, 2);
    t.insert(u64::MAX..=u64::MAX, 3);
    out.push((
        t,
        vec![(0..=0, 1), (7..=u64::MAX - 1, 2), (u64::MAX..=u64::MAX, 3)],
    ));
    out
}

fn owned<'a>(it: impl Iterator<Item = (RangeInclusive<u64>, &'a u64)>) -> Vec<Entry> {
    it.map(|(r, v)| (r, *v)).collect()
}

#[test]
fn forward_and_reverse_match_the_model() {
    for (t, model) in shapes() {
        assert_eq!(owned(t.iter()), model);
        let mut rev = model.clone();
        rev.reverse();
        assert_eq!(owned(t.iter().rev()), rev);
        assert_eq!(t.iter().len(), model.len());
        assert_eq!(
            t.first_key_value().map(|(r, v)| (r, *v)),
            model.first().cloned()
        );
        assert_eq!(
            t.last_key_value().map(|(r, v)| (r, *v)),
            model.last().cloned()
        );
    }
}

/// Iterates `t` both ways and from both ends at once (`k` entries from the
/// front, the rest from the back): every way hands out `model`, in order.
fn assert_both_ways(t: &MapleTree<u64>, model: &[Entry], ks: &[usize]) {
    assert_eq!(owned(t.iter()), model);
    let mut rev = model.to_vec();
    rev.reverse();
    assert_eq!(owned(t.iter().rev()), rev);
    for &k in ks {
        let mut it = t.iter();
        let mut got = owned(it.by_ref().take(k));
        assert_eq!(it.len(), model.len() - k);
        let mut tail = owned(it.by_ref().rev());
        tail.reverse();
        got.extend(tail);
        assert_eq!(got, model, "k = {k}");
    }
}

/// Takes `k` from the front, then alternates, for every `k`: each entry is
/// handed out once, and the two ends stop where they meet.
#[test]
fn double_ended_iteration_meets_in_the_middle() {
    for (mut t, model) in shapes() {
        // Under Miri every 23rd split point (and both ends).
        let step = if cfg!(miri) { 23 } else { 1 };
        for k in (0..=model.len()).filter(|k| k % step == 0 || *k == model.len()) {
            let mut it = t.iter();
            let mut front: Vec<Entry> = owned(it.by_ref().take(k));
            let mut back = Vec::new();
            let mut from_back = true;
            loop {
                let got = if from_back { it.next_back() } else { it.next() };
                let Some((r, v)) = got else { break };
                if from_back {
                    back.push((r, *v));
                } else {
                    front.push((r, *v));
                }
                from_back = !from_back;
            }
            assert_eq!(it.len(), 0);
            assert!(it.next().is_none() && it.next_back().is_none());
            back.reverse();
            front.extend(back);
            assert_eq!(front, model, "k = {k}");

            // The same through a range covering everything and through iter_mut.
            let mut r = t.range(..);
            let mut got: Vec<Entry> = owned(r.by_ref().take(k));
            let mut tail: Vec<Entry> = owned(r.by_ref().rev());
            assert!(r.next().is_none());
            tail.reverse();
            got.extend(tail);
            assert_eq!(got, model, "range, k = {k}");

            let mut m = t.iter_mut();
            let mut seen = 0;
            while let Some((_, v)) = if seen % 2 == 0 {
                m.next()
            } else {
                m.next_back()
            } {
                *v += 1000;
                seen += 1;
            }
            assert_eq!(seen, model.len());
            assert!(t.iter().zip(&model).all(|((_, v), (_, w))| *v == w + 1000));
            for (_, v) in t.iter_mut() {
                *v -= 1000;
            }
        }
    }
}

/// A tree four levels high: iteration crosses leaves whose parent is used
/// up (moving to the next parent under the grandparent) and whose
/// grandparent is used up (walking down again from the root) in both
/// directions, and the two ends meet at points spread over the whole tree,
/// some inside one leaf.
#[test]
fn tall_trees_iterate_both_ways_across_every_level() {
    // Under Miri 3,000 entries: still four levels with gaps between entries.
    let n: usize = if cfg!(miri) { 3_000 } else { 20_000 };
    for (stride, len) in [(16, 10), (3, 3)] {
        let (t, model) = build(false, n as u64, stride, len);
        if stride == 16 {
            assert!(
                t.stats().height >= 4,
                "the tree must reach above the grandparents"
            );
        }
        let ks = [0, 1, 7, 8, 9, n / 8, n / 2 - 1, n / 2, n - 1, n];
        assert_both_ways(&t, &model, &ks);
        // Ranges whose ends lie deep inside the tree, and empty ones.
        for (lo, hi) in [
            (1_000, 250_000),
            (37, 38),
            (stride * 777 + 1, stride * 777 + 1),
        ] {
            let want: Vec<Entry> = model
                .iter()
                .filter(|(r, _)| *r.end() >= lo && *r.start() <= hi)
                .cloned()
                .collect();
            assert_eq!(owned(t.range(lo..=hi)), want, "{lo}..={hi}");
            let mut back = owned(t.range(lo..=hi).rev());
            back.reverse();
            assert_eq!(back, want, "rev {lo}..={hi}");
        }
        assert_eq!(t.range(500..500).count(), 0);
        assert_eq!(t.range(500..500).next_back(), None);
    }
}

/// An allocation tree four levels high, small enough for Miri (1,000
/// entries): iterators and cursors cross leaves under a used-up parent (an
/// iterator moves to the next parent under the grandparent, a cursor climbs
/// its path) and under a used-up grandparent (an iterator walks down again
/// from the root), both ways, and the two ends of an iterator meet at
/// points spread over the tree.
#[test]
fn four_levels_at_a_size_miri_runs() {
    let (t, model) = build(true, 1_000, 16, 10);
    assert!(
        t.stats().height >= 4,
        "the tree must reach above the grandparents"
    );
    assert_both_ways(&t, &model, &[1, 333, 500, 999]);
    let (lo, hi) = (16 * 100 + 3, 16 * 900 + 3);
    let want = &model[100..=900];
    assert_eq!(owned(t.range(lo..=hi)), want);
    let mut back = owned(t.range(lo..=hi).rev());
    back.reverse();
    assert_eq!(back, want);

    let mut c = t.cursor(0);
    let mut got: Vec<Entry> = c.key_value().map(|(r, v)| (r, *v)).into_iter().collect();
    while let Some((r, v)) = c.next_entry() {
        got.push((r, *v));
    }
    assert_eq!(got, model);
    let mut c = t.cursor(u64::MAX);
    let mut got = Vec::new();
    while let Some((r, v)) = c.prev_entry() {
        got.push((r, *v));
    }
    got.reverse();
    assert_eq!(got, model);
}

/// A read cursor in trees four levels high: stepping range
/// by range tiles the whole space both ways, and seeks near and far (in the
/// same leaf, under the same parent or grandparent, across the root) land
/// where a fresh cursor does, and step on from there to the model's
/// neighbours, crossing leaves, parents and grandparents both ways.
#[test]
fn tall_tree_cursor_ranges_and_seeks() {
    // An allocation tree of 1,000 entries is four levels high; a plain one
    // needs 20,000 (too many for Miri).
    let sizes: &[(bool, u64)] = if cfg!(miri) {
        &[(true, 1_000)]
    } else {
        &[(true, 1_000), (false, 20_000)]
    };
    for &(alloc, n) in sizes {
        tall_tree_cursor(alloc, n);
    }
}

fn tall_tree_cursor(alloc: bool, n: u64) {
    let (t, model) = build(alloc, n, 16, 10);
    assert!(
        t.stats().height >= 4,
        "the tree must reach above the grandparents"
    );
    // Range by range: entry, gap, entry, ..., the last gap up to MAX.
    let mut c = t.cursor(0);
    let mut tiles = vec![(c.range(), c.get().copied())];
    while let Some((r, v)) = c.next_range() {
        assert_eq!(*r.start(), *tiles.last().unwrap().0.end() + 1);
        assert_eq!((c.range(), c.index()), (r.clone(), *r.start()));
        tiles.push((r, v.copied()));
    }
    assert_eq!(tiles.len(), 2 * n as usize);
    assert_eq!(*tiles.last().unwrap().0.end(), u64::MAX);
    let entries: Vec<Entry> = tiles
        .iter()
        .filter_map(|(r, v)| v.map(|v| (r.clone(), v)))
        .collect();
    assert_eq!(entries, model);
    let mut c = t.cursor(u64::MAX);
    let mut back = vec![(c.range(), c.get().copied())];
    while let Some((r, v)) = c.prev_range() {
        back.push((r, v.copied()));
    }
    back.reverse();
    assert_eq!(back, tiles);

    // Seeks through one cursor, each followed by steps both ways.
    let mut c = t.cursor(0);
    let targets = [
        5,
        9,
        10,
        16 * 3,
        16 * 40 + 12,
        16 * 41,
        16 * 999 + 9,
        16 * 999 + 10,
        u64::MAX,
        16 * 500,
        16 * 499 + 15,
        16 * 256,
        16 * 255 + 3,
        0,
        16 * 700 + 1,
        16 * 20,
    ];
    let owned_kv = |kv: Option<(RangeInclusive<u64>, &u64)>| kv.map(|(r, v)| (r, *v));
    for &x in &targets {
        c.seek(x);
        let fresh = t.cursor(x);
        assert_eq!(c.index(), x);
        assert_eq!(
            (c.range(), c.get()),
            (fresh.range(), fresh.get()),
            "seek({x})"
        );
        let here = c.range();
        assert!(here.contains(&x), "seek({x})");
        let after: Vec<Entry> = model
            .iter()
            .filter(|(r, _)| *r.start() > *here.end())
            .take(40)
            .cloned()
            .collect();
        for want in &after {
            assert_eq!(owned_kv(c.next_entry()), Some(want.clone()), "from {x}");
        }
        // And back again over the same entries.
        for want in after.iter().rev().skip(1) {
            assert_eq!(
                owned_kv(c.prev_entry()),
                Some(want.clone()),
                "back from {x}"
            );
        }
    }
}

/// Ranges starting and ending inside entries, inside gaps, on boundaries,
/// past the ends; forward, reverse and meeting in the middle.
#[test]
fn ranges_match_the_model() {
    for (t, model) in shapes() {
        let mut points = vec![0, 1, 2, u64::MAX - 1, u64::MAX];
        for (r, _) in model.iter().take(if cfg!(miri) { 1 } else { 40 }) {
            for p in [
                r.start().wrapping_sub(1),
                *r.start(),
                r.start().wrapping_add(1),
                *r.end(),
            ] {
                points.push(p);
                points.push(r.end().wrapping_add(1));
            }
        }
        points.sort_unstable();
        points.dedup();
        for &lo in &points {
            for &hi in points.iter().filter(|&&h| h >= lo) {
                let want: Vec<Entry> = model
                    .iter()
                    .filter(|(r, _)| *r.end() >= lo && *r.start() <= hi)
                    .cloned()
                    .collect();
                assert_eq!(owned(t.range(lo..=hi)), want, "{lo}..={hi}");
                let mut rev = want.clone();
                rev.reverse();
                assert_eq!(owned(t.range(lo..=hi).rev()), rev, "rev {lo}..={hi}");
                let mut it = t.range(lo..=hi);
                let mut both = Vec::new();
                let mut back = Vec::new();
                while let Some((r, v)) = it.next() {
                    both.push((r, *v));
                    match it.next_back() {
                        Some((r, v)) => back.push((r, *v)),
                        None => break,
                    }
                }
                back.reverse();
                both.extend(back);
                assert_eq!(both, want, "both ends {lo}..={hi}");
            }
        }
    }
}

/// A value that counts its drops.
#[derive(Clone)]
struct Counted(Rc<Cell<usize>>, u64);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn into_iter_from_both_ends_and_dropped_part_way() {
    for n in [0u64, 1, 9, 16, 300] {
        for k in [0usize, 1, 5, 150, 400] {
            let drops = Rc::new(Cell::new(0));
            let mut t = MapleTree::new();
            for i in 0..n {
                t.insert(16 * i..=16 * i + 9, Counted(drops.clone(), i));
            }
            let mut it = t.into_iter();
            assert_eq!(it.len(), n as usize);
            let mut got = Vec::new();
            for step in 0..k {
                let next = if step % 3 == 2 {
                    it.next_back()
                } else {
                    it.next()
                };
                let Some((r, v)) = next else { break };
                assert_eq!(*r.start(), 16 * v.1);
                got.push(v.1);
            }
            let taken = got.len();
            assert_eq!(taken, k.min(n as usize));
            drop(got); // taken values dropped by the caller
            assert_eq!(drops.get(), taken);
            drop(it); // the rest dropped once each
            assert_eq!(drops.get(), n as usize);
        }
    }
}

#[test]
fn cursor_steps_entry_to_entry_over_gaps_and_leaves() {
    for (t, model) in shapes() {
        let mut points = vec![0, u64::MAX];
        for (r, _) in model.iter().take(if cfg!(miri) { 6 } else { 60 }) {
            points.extend([*r.start(), r.end().wrapping_add(1)]);
        }
        for &p in &points {
            // next_entry: the first entry starting after the range holding p.
            let mut c = t.cursor(p);
            let here = c.range();
            let want: Vec<Entry> = model
                .iter()
                .filter(|(r, _)| *r.start() > *here.end())
                .cloned()
                .collect();
            let mut got = Vec::new();
            while let Some((r, v)) = c.next_entry() {
                assert_eq!(c.index(), *r.start());
                assert_eq!(c.key_value().map(|(r, v)| (r, *v)), Some((r.clone(), *v)));
                got.push((r, *v));
            }
            assert_eq!(got, want, "next_entry from {p}");
            // At the end, the cursor is on the last range of the space.
            if !model.is_empty() {
                assert_eq!(*c.range().end(), u64::MAX, "from {p}");
            }
            let mut c = t.cursor(p);
            let want: Vec<Entry> = model
                .iter()
                .rev()
                .filter(|(r, _)| *r.end() < *here.start())
                .cloned()
                .collect();
            let mut got = Vec::new();
            while let Some((r, v)) = c.prev_entry() {
                assert_eq!(c.index(), *r.start());
                got.push((r, *v));
            }
            assert_eq!(got, want, "prev_entry from {p}");
            if !model.is_empty() {
                assert_eq!(*c.range().start(), 0, "from {p}");
            }
        }
    }
}

#[test]
fn a_cursor_with_nothing_to_step_to_stays_put() {
    let t: MapleTree<u64> = MapleTree::new();
    let mut c = t.cursor(5);
    assert!(c.next_entry().is_none() && c.prev_entry().is_none());
    assert_eq!(c.index(), 5);

    let mut t = MapleTree::new();
    t.insert(10..=19, 1u64);
    // In the final gap: no entry after it, and the cursor stays where it was put.
    let mut c = t.cursor(500);
    assert!(c.next_entry().is_none());
    assert_eq!(c.index(), 500);
    assert_eq!(c.range(), 20..=u64::MAX);
    // From the first gap, stepping back finds nothing and stays.
    let mut c = t.cursor(3);
    assert!(c.prev_entry().is_none());
    assert_eq!(c.index(), 3);
    // From the entry, both ways run out onto the gaps at the edges.
    let mut c = t.cursor(15);
    assert!(c.next_entry().is_none());
    assert_eq!((c.index(), c.range()), (20, 20..=u64::MAX));
    let mut c = t.cursor(15);
    assert!(c.prev_entry().is_none());
    assert_eq!((c.index(), c.range()), (0, 0..=9));
}

/// Owning iteration of values without drop glue (their slots are not
/// marked as they are taken): from both ends, part way, then the rest.
#[test]
fn into_iter_of_plain_values_from_both_ends() {
    for (t, model) in shapes() {
        for k in [0usize, 1, 5, 40] {
            let mut it = t.clone().into_iter();
            let mut front = Vec::new();
            let mut back = Vec::new();
            for step in 0..k {
                let next = if step % 2 == 1 {
                    it.next_back().map(|e| back.push(e))
                } else {
                    it.next().map(|e| front.push(e))
                };
                if next.is_none() {
                    break;
                }
            }
            assert_eq!(it.len(), model.len() - front.len() - back.len());
            front.extend(it.by_ref());
            back.reverse();
            front.extend(back);
            assert_eq!(front, model, "k = {k}");
            assert_eq!(it.next(), None);
        }
        // Dropped part way: nothing is left behind to read.
        let mut it = t.into_iter();
        it.next();
        it.next_back();
        drop(it);
    }
}
