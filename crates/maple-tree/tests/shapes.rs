//! Tree shapes: every node kind at every fill level.
//!
//! Leaves hold 16 slots (a gap takes a slot too), internal nodes 16 children
//! (10 in allocation trees). The tests build trees slot by slot (sequential,
//! reverse and random fills), so every prefix is a fill level; mutate fresh
//! trees of 1..=40 entries (1..=81 slots: one leaf at every fill level, the
//! first splits) and of several levels at their start, middle and end; grow
//! trees to heights 1..=4; remove from the start, middle and end until empty;
//! and walk cursors across gaps and nodes. `validate()`, the contents (against
//! the model) and the plausibility of `stats()` are checked after every step.
#![allow(clippy::drop_non_drop)]

#[macro_use]
mod common;

use std::ops::RangeInclusive;

use common::*;
use maple_tree::MapleTree;

/// How entries are laid out: entry `i` covers `i*stride ..= i*stride+len-1`.
#[derive(Clone, Copy, Debug)]
struct Layout {
    stride: u64,
    len: u64,
}

/// Adjacent entries: one slot each (plus the trailing gap).
const CONTIG: Layout = Layout {
    stride: 10,
    len: 10,
};
/// A gap after every entry: two slots per entry.
const GAPPED: Layout = Layout {
    stride: 20,
    len: 10,
};
/// One-index entries with one-index gaps.
const SINGLE: Layout = Layout { stride: 2, len: 1 };

impl Layout {
    fn range(&self, i: u64) -> RangeInclusive<u64> {
        i * self.stride..=i * self.stride + self.len - 1
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    Seq,
    Rev,
    Random,
}

fn order(n: u64, o: Order, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).collect();
    match o {
        Order::Seq => {}
        Order::Rev => v.reverse(),
        Order::Random => Rng(seed).shuffle(&mut v),
    }
    v
}

fn build(alloc: bool, n: u64, l: Layout, o: Order) -> (MapleTree<u64>, Model<u64>) {
    let mut t = new_tree(alloc);
    let mut m = Model::new();
    for i in order(n, o, n) {
        let r = l.range(i);
        t.insert(r.clone(), i);
        m.insert(*r.start(), *r.end(), i);
    }
    (t, m)
}

fn kind_name(alloc: bool) -> &'static str {
    if alloc {
        "alloc"
    } else {
        "regular"
    }
}

/// Fills of 300 entries in three orders and three layouts, checked after
/// every insert: every prefix is a fill level of leaves and internal nodes.
#[test]
fn fills_checked_at_every_step() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED, SINGLE] {
            for o in [Order::Seq, Order::Rev, Order::Random] {
                let mut t = new_tree::<u64>(alloc);
                let mut m = Model::new();
                let mut height = 0;
                for (n, i) in order(300, o, 99).into_iter().enumerate() {
                    let r = l.range(i);
                    t.insert(r.clone(), i);
                    m.insert(*r.start(), *r.end(), i);
                    let ctx = || {
                        format!(
                            "{} tree, {l:?} {o:?} fill, after {} inserts",
                            kind_name(alloc),
                            n + 1
                        )
                    };
                    assert_same(&t, &m, &ctx);
                    let h = t.stats().height;
                    assert!(
                        h >= height && h <= height + 1,
                        "{}: height {height} -> {h}",
                        ctx()
                    );
                    height = h;
                    // Every entry is still found at both of its ends.
                    if n % 50 == 49 {
                        for (r, v) in m.entries() {
                            assert_eq!(t.get(*r.start()), Some(&v));
                            assert_eq!(t.get(*r.end()), Some(&v));
                        }
                    }
                }
                assert!(height >= 2, "300 entries fit in one leaf?");
            }
        }
    }
}

/// The mutations applied at the start, middle and end of a tree.
const MUTATIONS: &[&str] = &[
    "split entry in three",
    "overwrite entry exactly",
    "overwrite entry and the gap after it",
    "span from middle of entry j to middle of entry j+2",
    "fill the gap after entry j",
    "remove entry",
    "remove_range the head of entry",
    "remove_range spanning three entries",
    "try_insert into the gap after entry j",
    "alloc from entry j on",
    "alloc_rev up to entry j",
    "insert after the last entry",
    "insert before the first entry",
    "insert a range covering everything from entry j on",
    "remove_range everything from entry j on",
];

fn mutate(t: &mut MapleTree<u64>, m: &mut Model<u64>, what: &str, j: u64, l: Layout, ctx: &str) {
    let r = l.range(j);
    let (s, e) = (*r.start(), *r.end());
    let v = 1_000_000 + j;
    match what {
        "split entry in three" => {
            t.insert(s + 3..=s + 5, v);
            m.insert(s + 3, s + 5, v);
        }
        "overwrite entry exactly" => {
            t.insert(s..=e, v);
            m.insert(s, e, v);
        }
        "overwrite entry and the gap after it" => {
            t.insert(s..=e + 5, v);
            m.insert(s, e + 5, v);
        }
        "span from middle of entry j to middle of entry j+2" => {
            let b = *l.range(j + 2).start() + 4;
            t.insert(s + 4..=b, v);
            m.insert(s + 4, b, v);
        }
        "fill the gap after entry j" => {
            let b = *l.range(j + 1).start() - 1;
            if b > e {
                t.insert(e + 1..=b, v);
                m.insert(e + 1, b, v);
            }
        }
        "remove entry" => {
            assert_eq!(t.remove(s + 1), m.remove(s + 1), "{ctx}");
        }
        "remove_range the head of entry" => {
            t.remove_range(s..=s + 2);
            m.remove_range(s, s + 2);
        }
        "remove_range spanning three entries" => {
            let b = *l.range(j + 2).start() + 2;
            t.remove_range(s + 5..=b);
            m.remove_range(s + 5, b);
        }
        "try_insert into the gap after entry j" => {
            let got = t.try_insert(e + 1..=e + 3, v).map_err(|x| x.occupied);
            assert_eq!(got, m.try_insert(e + 1, e + 3, v), "{ctx}");
        }
        "alloc from entry j on" => {
            let got = t.alloc(3, s.., v).map_err(|x| x.size);
            let want = m.find_gap(3, s, MAX);
            assert_eq!(got.ok(), want, "{ctx}");
            if let Some(a) = want {
                m.insert(a, a + 2, v);
            }
        }
        "alloc_rev up to entry j" => {
            let got = t.alloc_rev(1, ..=e, v).map_err(|x| x.size);
            let want = m.find_gap_rev(1, 0, e);
            assert_eq!(got.ok(), want, "{ctx}");
            if let Some(a) = want {
                m.insert(a, a, v);
            }
        }
        "insert after the last entry" => {
            let a = m.map.iter().next_back().map_or(0, |(_, (e, _))| e + 3);
            t.insert(a..=a + 7, v);
            m.insert(a, a + 7, v);
        }
        "insert before the first entry" => {
            t.insert(0..=0, v);
            m.insert(0, 0, v);
        }
        "insert a range covering everything from entry j on" => {
            t.insert(s + 1.., v);
            m.insert(s + 1, MAX, v);
        }
        "remove_range everything from entry j on" => {
            t.remove_range(s + 1..);
            m.remove_range(s + 1, MAX);
        }
        _ => unreachable!("{what}"),
    }
}

/// Fresh trees of 1..=40 entries (a leaf at every fill level, 1..=81 slots,
/// up to the first splits), each mutation at the start, middle and end.
#[test]
fn small_trees_every_fill_level_mutated() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED] {
            for o in [Order::Seq, Order::Rev] {
                for n in 1..=40u64 {
                    for j in [0, n / 2, n - 1] {
                        for what in MUTATIONS {
                            let (mut t, mut m) = build(alloc, n, l, o);
                            let ctx = format!(
                                "{} tree of {n} {l:?} entries ({o:?} fill), {what} at entry {j}",
                                kind_name(alloc)
                            );
                            assert_same(&t, &m, &|| format!("{ctx}: before"));
                            mutate(&mut t, &mut m, what, j, l, &ctx);
                            assert_same(&t, &m, &|| format!("{ctx}: after"));
                            // And the tree keeps working: a second mutation elsewhere.
                            mutate(&mut t, &mut m, "split entry in three", 0, l, &ctx);
                            assert_same(&t, &m, &|| format!("{ctx}: after a second mutation"));
                        }
                    }
                }
            }
        }
    }
}

/// Trees of several levels, each mutation at the start, middle and end.
#[test]
fn multi_level_trees_mutated() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED] {
            for n in [100u64, 300, 1_500] {
                let (base, base_m) = build(alloc, n, l, Order::Random);
                assert_same(&base, &base_m, &|| {
                    format!("{} base of {n}", kind_name(alloc))
                });
                for j in [0, 1, n / 2, n - 3, n - 1] {
                    for what in MUTATIONS {
                        let ctx = format!(
                            "{} tree of {n} {l:?} entries, {what} at entry {j}",
                            kind_name(alloc)
                        );
                        // Rebuilt for the small ones; cloned for the big one.
                        let (mut t, mut m) = if n <= 300 {
                            build(alloc, n, l, Order::Seq)
                        } else {
                            (base.clone(), base_m.clone())
                        };
                        mutate(&mut t, &mut m, what, j, l, &ctx);
                        assert_same(&t, &m, &|| format!("{ctx}: after"));
                    }
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Drain {
    Front,
    Back,
    Middle,
    Random,
    /// remove_range of a few entries at a time from the front.
    ChunksFront,
    /// remove_range cutting entries in half, from the back.
    HalvesBack,
}

fn drain(alloc: bool, n: u64, l: Layout, how: Drain, check_every: usize) {
    let (mut t, mut m) = build(alloc, n, l, Order::Seq);
    let mut rng = Rng(n);
    let mut step = 0usize;
    while m.len() > 0 {
        let k = m.len();
        let nth = |i: usize| *m.map.keys().nth(i).unwrap();
        match how {
            Drain::Front | Drain::Back | Drain::Middle | Drain::Random => {
                let at = match how {
                    Drain::Front => nth(0),
                    Drain::Back => *m.map.keys().next_back().unwrap(),
                    Drain::Middle => nth(k / 2),
                    _ => nth(rng.below(k as u64) as usize),
                };
                let got = t.remove(at);
                assert_eq!(
                    got,
                    m.remove(at),
                    "{} {how:?} drain of {n}, step {step}",
                    kind_name(alloc)
                );
            }
            Drain::ChunksFront => {
                let last = nth((k - 1).min(4));
                t.remove_range(..=last);
                m.remove_range(0, last);
            }
            Drain::HalvesBack => {
                let (&s, &(e, _)) = m.map.iter().next_back().unwrap();
                let mid = s + (e - s) / 2;
                t.remove_range(mid..);
                m.remove_range(mid, MAX);
            }
        }
        step += 1;
        if step % check_every == 0 || m.len() < 40 {
            assert_same(&t, &m, &|| {
                format!(
                    "{} {how:?} drain of {n} {l:?}, step {step}",
                    kind_name(alloc)
                )
            });
        } else {
            assert_eq!(t.len(), m.len());
        }
    }
    assert_same(&t, &m, &|| {
        format!("{} {how:?} drain of {n}: empty", kind_name(alloc))
    });
    let s = t.stats();
    assert_eq!(
        (
            s.height,
            s.leaves + s.internal + s.alloc_internal,
            s.node_bytes
        ),
        (0, 0, 0),
        "{} {how:?} drain of {n}: an empty tree holds no nodes: {s:?}",
        kind_name(alloc)
    );
    // Still usable.
    t.insert(5..=6, 1);
    assert_eq!(t.get_key_value(6), Some((5..=6, &1)));
    t.validate().unwrap();
}

#[test]
fn remove_until_empty_small() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED] {
            for n in 1..=40u64 {
                for how in [
                    Drain::Front,
                    Drain::Back,
                    Drain::Middle,
                    Drain::Random,
                    Drain::ChunksFront,
                    Drain::HalvesBack,
                ] {
                    drain(alloc, n, l, how, 1);
                }
            }
        }
    }
}

#[test]
fn remove_until_empty_large() {
    for alloc in [false, true] {
        for (n, every) in [(300u64, 1usize), (3_000, 97)] {
            for how in [
                Drain::Front,
                Drain::Back,
                Drain::Middle,
                Drain::Random,
                Drain::ChunksFront,
                Drain::HalvesBack,
            ] {
                drain(alloc, n, GAPPED, how, every);
            }
        }
    }
}

/// Grows trees of one-index entries (two slots each) to height 4 and checks
/// the height steps one level at a time, then mutates and shrinks them.
#[test]
fn heights_one_to_four() {
    for alloc in [false, true] {
        let name = kind_name(alloc);
        let mut t = new_tree::<u64>(alloc);
        let mut m = Model::new();
        let mut height = 0;
        let mut i = 0u64;
        while height < 4 {
            assert!(
                i < 200_000,
                "{name}: height 4 not reached after {i} entries"
            );
            t.insert(i * 2..=i * 2, i);
            m.insert(i * 2, i * 2, i);
            i += 1;
            let s = t.stats();
            assert!(
                s.height == height || s.height == height + 1,
                "{name}: height {height} -> {}",
                s.height
            );
            if s.height != height {
                height = s.height;
                assert_same(&t, &m, &|| {
                    format!("{name}: height {height} first reached with {i} entries")
                });
            } else if i % 1024 == 0 {
                t.validate().unwrap();
                check_stats(&t, Some(&m), &|| format!("{name}: {i} entries"));
            }
        }
        assert_same(&t, &m, &|| format!("{name}: at height 4"));
        let n = i;
        // Mutations across the big tree.
        let ops: Vec<(u64, u64, Option<u64>)> = vec![
            (0, 0, None),                   // remove the first
            (n * 2 - 2, n * 2 - 2, None),   // and the last
            (n - 1, n + 1, Some(7)),        // overwrite in the middle
            (100, n, None),                 // a spanning remove of many leaves
            (n + 11, n * 2 - 100, Some(8)), // a spanning insert
            (5, 5, Some(9)),                // fill a one-index gap
            (n * 2 + 10, MAX, Some(10)),    // a huge range at the end
        ];
        for (a, b, v) in ops {
            match v {
                Some(v) => {
                    t.insert(a..=b, v);
                    m.insert(a, b, v);
                }
                None => {
                    t.remove_range(a..=b);
                    m.remove_range(a, b);
                }
            }
            assert_same(&t, &m, &|| {
                format!("{name}: store {a:#x}..={b:#x} {v:?} on the height-4 tree")
            });
        }
        // Shrink to a few entries: the height must come down.
        t.remove_range(20..);
        m.remove_range(20, MAX);
        assert_same(&t, &m, &|| format!("{name}: shrunk to {} entries", m.len()));
        assert!(
            t.stats().height <= 2,
            "{name}: {} entries kept height {:?}",
            m.len(),
            t.stats()
        );
        t.remove_range(..);
        let s = t.stats();
        assert_eq!(
            (s.height, s.leaves + s.internal + s.alloc_internal),
            (0, 0),
            "{name}: {s:?}"
        );
    }
}

/// The append fast path changes how stores are done, never what they store.
#[test]
#[cfg(all(feature = "write-stats", feature = "bench-internals"))]
fn append_path_on_and_off() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED, SINGLE] {
            let mut on = new_tree::<u64>(alloc);
            let mut off = new_tree::<u64>(alloc);
            off.set_append_path(false);
            let mut m = Model::new();
            for i in 0..2_000u64 {
                let r = l.range(i);
                on.insert(r.clone(), i);
                off.insert(r.clone(), i);
                m.insert(*r.start(), *r.end(), i);
            }
            let ctx = || format!("{} {l:?}", kind_name(alloc));
            assert_same(&on, &m, &ctx);
            assert_same(&off, &m, &ctx);
            assert!(on == off, "{}: same stores, different trees", ctx());
            let (pon, poff) = (on.stats().write_paths, off.stats().write_paths);
            assert!(
                pon.append > 0,
                "{}: sequential stores never took the append path: {pon:?}",
                ctx()
            );
            assert_eq!(
                poff.append,
                0,
                "{}: append path off but taken: {poff:?}",
                ctx()
            );
        }
    }
}

/// Each write path of the documented list is taken by a workload made for it.
#[test]
#[cfg(feature = "write-stats")]
fn write_paths_are_exercised() {
    for alloc in [false, true] {
        let name = kind_name(alloc);
        let (mut t, mut m) = build(alloc, 3_000, GAPPED, Order::Random);
        let p = t.stats().write_paths;
        assert!(
            p.split > 0,
            "{name}: 3000 random inserts never split a leaf: {p:?}"
        );
        assert!(p.node_rewrite > 0, "{name}: no node rewrite: {p:?}");
        let r = GAPPED.range(1_234);
        t.insert(r.clone(), 5);
        m.insert(*r.start(), *r.end(), 5);
        let p = t.stats().write_paths;
        assert!(
            p.exact_fit > 0,
            "{name}: an exact overwrite of an entry: {p:?}"
        );
        t.remove_range(10_000..=30_000);
        m.remove_range(10_000, 30_000);
        let p = t.stats().write_paths;
        assert!(p.spanning > 0, "{name}: a store across ~100 leaves: {p:?}");
        for i in (0..3_000u64).step_by(2) {
            let a = *GAPPED.range(i).start();
            t.remove(a);
            m.remove(a);
        }
        let p = t.stats().write_paths;
        assert!(
            p.rebalance > 0,
            "{name}: removing half the entries never rebalanced: {p:?}"
        );
        assert_same(&t, &m, &|| name.to_string());
        let (t2, _) = build(alloc, 3_000, SINGLE, Order::Seq);
        let p = t2.stats().write_paths;
        assert!(p.append > 0, "{name}: sequential stores: {p:?}");
    }
}

// ---------------------------------------------------------------------------
// Cursors
// ---------------------------------------------------------------------------

/// The cursor's position agrees with the model (a gap may come in pieces).
#[track_caller]
fn check_at(idx: u64, range: RangeInclusive<u64>, val: Option<&u64>, m: &Model<u64>, ctx: &str) {
    assert!(
        range.contains(&idx),
        "{ctx}: range {range:#x?} does not hold index {idx:#x}"
    );
    match m.get(idx) {
        Some((r, v)) => {
            assert_eq!(range, r, "{ctx}: range at {idx:#x}");
            assert_eq!(val, Some(v), "{ctx}: value at {idx:#x}");
        }
        None => {
            assert_eq!(val, None, "{ctx}: value in the gap at {idx:#x}");
            let (gs, ge) = m.gap_at(idx);
            assert!(
                gs <= *range.start() && *range.end() <= ge,
                "{ctx}: gap range {range:#x?} outside the gap {gs:#x}..={ge:#x}"
            );
        }
    }
}

#[test]
fn cursor_walks_across_gaps_and_nodes() {
    for alloc in [false, true] {
        for l in [CONTIG, GAPPED, SINGLE] {
            for n in [0u64, 1, 2, 15, 16, 17, 200, 2_000] {
                let (mut t, mut m) = build(alloc, n, l, Order::Random);
                // A few extra shapes: an entry at 0 and at MAX.
                if n == 200 {
                    t.insert(MAX - 3..=MAX, 1);
                    m.insert(MAX - 3, MAX, 1);
                }
                let ctx = format!("{} tree of {n} {l:?}", kind_name(alloc));
                let entries = m.entries();
                // next_entry from 0 visits every entry (from the first range on).
                let mut c = t.cursor(0);
                check_at(c.index(), c.range(), c.get(), &m, &ctx);
                let mut seen = Vec::new();
                if let Some(kv) = c.key_value() {
                    seen.push((kv.0, *kv.1));
                }
                while let Some((r, v)) = c.next_entry() {
                    assert_eq!(c.range(), r, "{ctx}: range after next_entry");
                    assert!(r.contains(&c.index()), "{ctx}");
                    seen.push((r, *v));
                }
                assert_eq!(seen, entries, "{ctx}: next_entry walk");
                // prev_entry from MAX visits them all backwards.
                let mut c = t.cursor(MAX);
                let mut seen = Vec::new();
                if let Some(kv) = c.key_value() {
                    seen.push((kv.0, *kv.1));
                }
                while let Some((r, v)) = c.prev_entry() {
                    assert_eq!(c.range(), r, "{ctx}: range after prev_entry");
                    seen.push((r, *v));
                }
                seen.reverse();
                assert_eq!(seen, entries, "{ctx}: prev_entry walk");
                // next_range from 0 tiles the whole space.
                let mut c = t.cursor(0);
                let mut ranges = vec![(c.range(), c.get().copied())];
                while let Some((r, v)) = c.next_range() {
                    let prev_end = *ranges.last().unwrap().0.end();
                    assert_eq!(
                        *r.start(),
                        prev_end + 1,
                        "{ctx}: next_range is not adjacent"
                    );
                    check_at(*r.start(), r.clone(), v, &m, &ctx);
                    check_at(*r.end(), r.clone(), v, &m, &ctx);
                    assert_eq!(c.range(), r);
                    ranges.push((r, v.copied()));
                    assert!(
                        ranges.len() < 10 * (n as usize + 10),
                        "{ctx}: next_range does not end"
                    );
                }
                assert_eq!(*ranges[0].0.start(), 0);
                assert_eq!(
                    *ranges.last().unwrap().0.end(),
                    MAX,
                    "{ctx}: next_range stopped early"
                );
                let got: Vec<_> = ranges
                    .iter()
                    .filter_map(|(r, v)| v.map(|v| (r.clone(), v)))
                    .collect();
                assert_eq!(got, entries, "{ctx}: entries seen by next_range");
                let gaps = m.gaps_within(0, MAX).len();
                assert!(
                    ranges.len() >= entries.len() + gaps,
                    "{ctx}: too few ranges"
                );
                // prev_range from MAX gives the same tiling backwards.
                let mut c = t.cursor(MAX);
                let mut back = vec![(c.range(), c.get().copied())];
                while let Some((r, v)) = c.prev_range() {
                    let next_start = *back.last().unwrap().0.start();
                    assert_eq!(
                        *r.end(),
                        next_start - 1,
                        "{ctx}: prev_range is not adjacent"
                    );
                    back.push((r, v.copied()));
                    assert!(
                        back.len() < 10 * (n as usize + 10),
                        "{ctx}: prev_range does not end"
                    );
                }
                assert_eq!(
                    *back.last().unwrap().0.start(),
                    0,
                    "{ctx}: prev_range stopped early"
                );
                back.reverse();
                let got: Vec<_> = back
                    .iter()
                    .filter_map(|(r, v)| v.map(|v| (r.clone(), v)))
                    .collect();
                assert_eq!(got, entries, "{ctx}: entries seen by prev_range");
                // Seeks to entry edges, gaps and random places, through one cursor.
                let mut c = t.cursor(0);
                let mut rng = Rng(n + 3);
                let mut targets: Vec<u64> = vec![0, 1, MAX, MAX - 1];
                for (r, _) in entries.iter().take(100) {
                    targets.extend([
                        *r.start(),
                        *r.end(),
                        r.end().saturating_add(1),
                        r.start().saturating_sub(1),
                    ]);
                }
                for _ in 0..100 {
                    targets.push(rng.below(n * l.stride + 50));
                }
                for x in targets {
                    c.seek(x);
                    assert_eq!(c.index(), x, "{ctx}: index after seek");
                    check_at(x, c.range(), c.get(), &m, &format!("{ctx}: seek({x:#x})"));
                    assert_eq!(
                        c.key_value().map(|(r, v)| (r, *v)),
                        m.get(x).map(|(r, v)| (r, *v))
                    );
                    let fresh = t.cursor(x);
                    assert_eq!(
                        fresh.range(),
                        c.range(),
                        "{ctx}: seek({x:#x}) and cursor({x:#x}) differ"
                    );
                }
                // Mixed steps.
                let mut c = t.cursor(n * l.stride / 2);
                for k in 0..300 {
                    let cur = c.range();
                    match rng.below(4) {
                        0 => {
                            let want = m.next_after(*cur.end()).map(|(r, v)| (r, *v));
                            assert_eq!(
                                c.next_entry().map(|(r, v)| (r, *v)),
                                want,
                                "{ctx}: step {k}"
                            );
                            if want.is_none() {
                                c.seek(*cur.start());
                            }
                        }
                        1 => {
                            let want = m.prev_before(*cur.start()).map(|(r, v)| (r, *v));
                            assert_eq!(
                                c.prev_entry().map(|(r, v)| (r, *v)),
                                want,
                                "{ctx}: step {k}"
                            );
                            if want.is_none() {
                                c.seek(*cur.start());
                            }
                        }
                        2 => match c.next_range() {
                            Some((r, _)) => {
                                assert_eq!(*r.start(), cur.end() + 1, "{ctx}: step {k}")
                            }
                            None => {
                                assert_eq!(*cur.end(), MAX);
                                c.seek(*cur.start());
                            }
                        },
                        _ => match c.prev_range() {
                            Some((r, _)) => {
                                assert_eq!(*r.end(), cur.start() - 1, "{ctx}: step {k}")
                            }
                            None => {
                                assert_eq!(*cur.start(), 0);
                                c.seek(0);
                            }
                        },
                    }
                    check_at(
                        c.index(),
                        c.range(),
                        c.get(),
                        &m,
                        &format!("{ctx}: step {k}"),
                    );
                }
            }
        }
    }
}

#[test]
fn cursor_mut_insert_runs() {
    for alloc in [false, true] {
        let name = kind_name(alloc);
        // Sequential inserts through one cursor, then reverse, then random.
        for o in [Order::Seq, Order::Rev, Order::Random] {
            for l in [CONTIG, GAPPED, SINGLE] {
                let mut t = new_tree::<u64>(alloc);
                let mut m = Model::new();
                {
                    let mut c = t.cursor_mut(0);
                    for i in order(2_500, o, 5) {
                        let r = l.range(i);
                        c.insert(r.clone(), i);
                        m.insert(*r.start(), *r.end(), i);
                        assert_eq!(
                            c.index(),
                            *r.start(),
                            "{name} {o:?} {l:?}: index after insert"
                        );
                        assert_eq!(c.range(), r, "{name} {o:?} {l:?}: range after insert");
                        assert_eq!(c.get(), Some(&i));
                    }
                }
                assert_same(&t, &m, &|| {
                    format!("{name}: {o:?} {l:?} inserts through one cursor")
                });
            }
        }
        // Walk the entries, splitting the gap after each with a new entry.
        let (mut t, mut m) = build(alloc, 1_000, GAPPED, Order::Seq);
        {
            let mut c = t.cursor_mut(0);
            let mut k = 0;
            let mut next = c.key_value().map(|(r, _)| r);
            while let Some(r) = next {
                let e = *r.end();
                c.insert(e + 2..=e + 3, 5_000 + k);
                m.insert(e + 2, e + 3, 5_000 + k);
                k += 1;
                next = c.next_entry().map(|(r, _)| r);
            }
            // Each insert moves the cursor to the new entry, so next_entry goes
            // on to the next original entry.
            assert_eq!(k, 1_000, "{name}: entries visited by the walk");
        }
        assert_same(&t, &m, &|| {
            format!("{name}: a walk inserting after every entry")
        });
        // Overwrites through the cursor with get_mut.
        {
            let mut c = t.cursor_mut(0);
            while c.next_entry().is_some() {
                let at = c.index();
                *c.get_mut().unwrap() += 1;
                *m.get_mut(at).unwrap() += 1;
            }
        }
        assert_same(&t, &m, &|| format!("{name}: get_mut through a cursor"));
    }
}

#[test]
fn cursor_mut_remove_runs() {
    for alloc in [false, true] {
        let name = kind_name(alloc);
        for n in [1u64, 16, 17, 300, 2_000] {
            for l in [CONTIG, GAPPED] {
                // Remove every entry walking forwards.
                let (mut t, mut m) = build(alloc, n, l, Order::Seq);
                {
                    let mut c = t.cursor_mut(0);
                    loop {
                        let at = c.index();
                        if c.get().is_some() {
                            let got = c.remove();
                            assert_eq!(got, m.remove(at), "{name} {n}: remove at {at:#x}");
                            assert_eq!(c.index(), at, "{name}: the cursor stays at its index");
                            assert_eq!(c.get(), None);
                        } else if c.next_entry().is_none() {
                            break;
                        }
                    }
                }
                assert_same(&t, &m, &|| {
                    format!("{name}: forward remove run over {n} {l:?}")
                });
                assert!(t.is_empty());
                let s = t.stats();
                assert_eq!((s.height, s.leaves), (0, 0), "{name}: {s:?}");
                // Remove every other entry walking backwards.
                let (mut t, mut m) = build(alloc, n, l, Order::Seq);
                {
                    let mut c = t.cursor_mut(MAX);
                    let mut k = 0;
                    while let Some((r, _)) = c.prev_entry() {
                        let at = *r.start();
                        if k % 2 == 0 {
                            assert_eq!(c.remove(), m.remove(at), "{name}: remove at {at:#x}");
                        }
                        k += 1;
                    }
                    assert_eq!(k, n);
                }
                assert_same(&t, &m, &|| {
                    format!("{name}: backward remove run over {n} {l:?}")
                });
            }
        }
    }
}
