//! Duplication (Clone, dup_with, try_dup_with, try_clone), equality,
//! FromIterator / Extend / IntoIterator and Debug.
#![allow(clippy::drop_non_drop)]

#[macro_use]
mod common;

use std::ops::RangeInclusive;

use common::*;
use maple_tree::MapleTree;

/// Trees of many shapes, with their model: sizes around node boundaries,
/// several layouts and orders, and trees after removals.
fn shapes(alloc: bool) -> Vec<(String, MapleTree<u64>, Model<u64>)> {
    let mut out = Vec::new();
    let sizes: &[u64] = if cfg!(miri) {
        &[0, 1, 17, 161]
    } else {
        &[0, 1, 2, 7, 15, 16, 17, 31, 33, 100, 161, 1_000, 5_000]
    };
    for &n in sizes {
        for (lname, stride, len) in [("contig", 4u64, 4u64), ("gapped", 8, 3), ("single", 2, 1)] {
            for (oname, seed) in [("seq", None), ("random", Some(n))] {
                let mut keys: Vec<u64> = (0..n).collect();
                if let Some(s) = seed {
                    Rng(s).shuffle(&mut keys);
                }
                let mut t = new_tree(alloc);
                let mut m = Model::new();
                for k in keys {
                    t.insert(k * stride..=k * stride + len - 1, k);
                    m.insert(k * stride, k * stride + len - 1, k);
                }
                out.push((format!("{n} {lname} {oname}"), t, m));
            }
        }
    }
    // After removals (rebalanced nodes) and with entries at both ends of the space.
    let mut rng = Rng(77);
    for n in [50u64, sized(600, 200), sized(4_000, 200)] {
        let mut t = new_tree(alloc);
        let mut m = Model::new();
        for k in 0..n {
            t.insert(k * 5..=k * 5 + 2, k);
            m.insert(k * 5, k * 5 + 2, k);
        }
        for _ in 0..n * 2 / 3 {
            let i = rng.below(n * 5);
            t.remove(i);
            m.remove(i);
        }
        t.insert(MAX - 9..=MAX, 1);
        m.insert(MAX - 9, MAX, 1);
        t.insert(1 << 62..=1 << 63, 2);
        m.insert(1 << 62, 1 << 63, 2);
        out.push((format!("{n} after removals"), t, m));
    }
    let mut t = new_tree(alloc);
    t.insert(.., 3);
    let mut m = Model::new();
    m.insert(0, MAX, 3);
    out.push(("whole space".into(), t, m));
    out
}

fn kind_name(alloc: bool) -> &'static str {
    if alloc {
        "alloc"
    } else {
        "regular"
    }
}

#[test]
fn clone_equals_source_and_validates() {
    for alloc in [false, true] {
        for (name, t, m) in shapes(alloc) {
            let ctx = format!("{} {name}", kind_name(alloc));
            let c = t.clone();
            assert_same(&c, &m, &|| format!("{ctx}: the clone"));
            assert!(c == t, "{ctx}: clone != source");
            assert!(t == c, "{ctx}: source != clone");
            assert_eq!(c.is_alloc(), alloc, "{ctx}: the clone's kind");
            // Duplication copies each node once (DESIGN.md): the same shape.
            let (s, sc) = (t.stats(), c.stats());
            assert_eq!(
                (
                    sc.height,
                    sc.leaves,
                    sc.internal,
                    sc.alloc_internal,
                    sc.node_bytes
                ),
                (
                    s.height,
                    s.leaves,
                    s.internal,
                    s.alloc_internal,
                    s.node_bytes
                ),
                "{ctx}: the clone's shape differs from the source's"
            );
            let sd = t.dup_with(|v| *v).stats();
            assert_eq!(
                (sd.height, sd.leaves),
                (s.height, s.leaves),
                "{ctx}: dup_with's shape"
            );
            assert_same(&t, &m, &|| format!("{ctx}: the source after cloning"));
            // A clone of a clone.
            let cc = c.clone();
            assert!(cc == t, "{ctx}");
            cc.validate().unwrap();
            // try_clone.
            let tc = t.try_clone().expect("try_clone");
            assert_same(&tc, &m, &|| format!("{ctx}: try_clone"));
            // Gap search on the copy uses the copy's own gap records.
            for size in [1u64, 2, 3, 4, 5, 100, 1 << 40] {
                assert_eq!(
                    c.find_gap(size, ..),
                    m.find_gap(size, 0, MAX),
                    "{ctx}: find_gap({size}) on the clone"
                );
                assert_eq!(
                    c.find_gap_rev(size, ..),
                    m.find_gap_rev(size, 0, MAX),
                    "{ctx}: find_gap_rev({size})"
                );
                assert_eq!(
                    c.find_gap(size, 10..=20_000),
                    m.find_gap(size, 10, 20_000),
                    "{ctx}"
                );
            }
        }
    }
}

#[test]
fn clone_is_independent() {
    for alloc in [false, true] {
        for (name, t, m) in shapes(alloc).into_iter().filter(|(_, t, _)| t.len() >= 2) {
            let ctx = format!("{} {name}", kind_name(alloc));
            let mut c = t.clone();
            let mut cm = m.clone();
            // Mutate the copy everywhere: the source must not change.
            let (first, _) = t.first_key_value().unwrap();
            let (last, _) = t.last_key_value().unwrap();
            c.insert(*first.start()..=*first.start(), 999);
            cm.insert(*first.start(), *first.start(), 999);
            c.remove(*last.end());
            cm.remove(*last.end());
            for (_, v) in c.iter_mut() {
                *v += 1;
            }
            for (_, (_, v)) in cm.map.iter_mut() {
                *v += 1;
            }
            let got = c.alloc(3, .., 5);
            let want = cm.find_gap(3, 0, MAX);
            assert_eq!(got.ok(), want, "{ctx}");
            if let Some(a) = want {
                cm.insert(a, a + 2, 5);
            }
            assert_same(&c, &cm, &|| format!("{ctx}: the mutated copy"));
            assert_same(&t, &m, &|| {
                format!("{ctx}: the source after mutating the copy")
            });
            assert!(c != t, "{ctx}: a changed copy still equals the source");
            // And the other way round.
            let mut t = t;
            let c2 = t.clone();
            t.clear();
            assert_same(&c2, &m, &|| {
                format!("{ctx}: the copy after clearing the source")
            });
            assert!(t.is_empty());
        }
    }
}

#[test]
fn dup_with_maps_values() {
    for alloc in [false, true] {
        for (name, t, m) in shapes(alloc) {
            let ctx = format!("{} {name}", kind_name(alloc));
            let mut calls = 0usize;
            let d: MapleTree<String> = t.dup_with(|v| {
                calls += 1;
                format!("<{v}>")
            });
            assert_eq!(calls, t.len(), "{ctx}: one map call per entry");
            d.validate().unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(d.is_alloc(), alloc, "{ctx}");
            let want: Vec<(RangeInclusive<u64>, String)> = m
                .entries()
                .into_iter()
                .map(|(r, v)| (r, format!("<{v}>")))
                .collect();
            let got: Vec<(RangeInclusive<u64>, String)> =
                d.iter().map(|(r, v)| (r, v.clone())).collect();
            assert_eq!(got, want, "{ctx}");
            // try_dup_with that succeeds.
            let d2: MapleTree<u128> = t
                .try_dup_with(|v| Ok::<_, ()>(*v as u128 * 3))
                .expect("try_dup_with");
            d2.validate().unwrap();
            let got: Vec<(RangeInclusive<u64>, u128)> = d2.iter().map(|(r, v)| (r, *v)).collect();
            let want: Vec<(RangeInclusive<u64>, u128)> = m
                .entries()
                .into_iter()
                .map(|(r, v)| (r, v as u128 * 3))
                .collect();
            assert_eq!(got, want, "{ctx}: try_dup_with");
            // The dup keeps working.
            let mut d = d;
            d.insert(3..=3, "x".into());
            d.validate().unwrap();
            assert_eq!(d.get(3).map(String::as_str), Some("x"));
        }
    }
}

#[test]
fn equality_is_by_contents() {
    for (kind, mk) in kinds::<u64>() {
        let mut a = mk();
        let mut b = mk();
        assert!(a == b, "{kind}: empty trees");
        let n = sized(500, 150);
        for i in 0..n {
            a.insert(i * 3..=i * 3 + 1, i);
        }
        for i in (0..n).rev() {
            b.insert(i * 3..=i * 3 + 1, i);
        }
        assert!(a == b, "{kind}: same entries, different insertion order");
        // A tree that got there through overwrites and removals.
        let mut c = mk();
        c.insert(..=10_000, 7);
        for i in 0..n {
            c.insert(i * 3..=i * 3 + 1, i);
            c.remove_range(i * 3 + 2..=i * 3 + 2);
        }
        c.remove_range(3 * n..);
        assert!(a == c, "{kind}: same entries after overwrites and removals");
        let mut d = a.clone();
        *d.get_mut(300).unwrap() += 1;
        assert!(a != d, "{kind}: one value differs");
        let mut e = a.clone();
        e.insert(300..=300, 100);
        assert!(a != e, "{kind}: one entry cut in two with the same values");
        let mut f = a.clone();
        f.remove_range(3 * (n - 1)..=3 * (n - 1));
        assert!(a != f, "{kind}: one entry shorter");
        let mut g = a.clone();
        g.insert(MAX..=MAX, 0);
        assert!(a != g, "{kind}: one entry more");
        assert!(g != a, "{kind}: one entry fewer");
        // Adjacent entries are not one entry.
        let mut h = mk();
        h.insert(0..=9, 1);
        let mut i = mk();
        i.insert(0..=4, 1);
        i.insert(5..=9, 1);
        assert!(h != i, "{kind}: 0..=9 vs 0..=4 + 5..=9");
    }
}

#[test]
fn from_iter_and_extend() {
    let mut rng = Rng(9);
    let mut items: Vec<(RangeInclusive<u64>, u64)> = Vec::new();
    let count = sized(2_000, 300);
    for n in 0..count {
        let a = match rng.below(10) {
            0 => MAX - rng.below(50),
            1 => rng.next(),
            _ => rng.below(20_000),
        };
        let b = a.saturating_add(if rng.below(20) == 0 {
            MAX
        } else {
            rng.below(30)
        });
        items.push((a..=b, n));
    }
    let mut m = Model::new();
    for (r, v) in &items {
        m.insert(*r.start(), *r.end(), *v);
    }
    // FromIterator applies the items in order (later ones overwrite).
    let t: MapleTree<u64> = items.iter().cloned().collect();
    assert!(!t.is_alloc(), "collect() makes a regular tree");
    assert_same(&t, &m, &|| "collect()".into());
    // Extend onto both kinds, in two halves.
    for (kind, mk) in kinds::<u64>() {
        let mut e = mk();
        let half = count as usize / 2;
        e.extend(items[..half].iter().cloned());
        e.extend(items[half..].iter().cloned());
        assert_same(&e, &m, &|| format!("{kind}: extend"));
        assert_eq!(e.is_alloc(), kind == "alloc");
    }
    // Other range types.
    let t: MapleTree<&str> = vec![(10..20, "a"), (30..40, "b")].into_iter().collect();
    assert_eq!(
        t.iter().map(|(r, v)| (r, *v)).collect::<Vec<_>>(),
        vec![(10..=19, "a"), (30..=39, "b")]
    );
    let mut t: MapleTree<&str> = [(..=5u64, "z")].into_iter().collect();
    t.extend([(100u64.., "y")]);
    t.extend(
        [(
            std::ops::Bound::Excluded(5u64),
            std::ops::Bound::Excluded(8u64),
        )]
        .map(|r| (r, "x")),
    );
    assert_eq!(
        t.iter().map(|(r, v)| (r, *v)).collect::<Vec<_>>(),
        vec![(0..=5, "z"), (6..=7, "x"), (100..=MAX, "y")]
    );
    t.extend([(.., "w")]);
    assert_eq!(
        t.iter().map(|(r, v)| (r, *v)).collect::<Vec<_>>(),
        vec![(0..=MAX, "w")]
    );
    t.validate().unwrap();
}

#[test]
fn into_iterator_forms() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        for i in 0..300u64 {
            t.insert(i * 4..=i * 4 + 1, i);
        }
        let mut n = 0;
        for (r, v) in &t {
            assert_eq!(*r.start(), *v * 4, "{kind}");
            n += 1;
        }
        assert_eq!(n, 300);
        for (r, v) in &mut t {
            *v = *r.end();
        }
        assert_eq!(t.get(5), Some(&5));
        let all: Vec<_> = t.clone().into_iter().collect();
        assert_eq!(all.len(), 300);
        assert_eq!(all[10], (40..=41, 41));
        let rev: Vec<_> = t
            .clone()
            .into_iter()
            .rev()
            .map(|(r, _)| *r.start())
            .collect();
        assert_eq!(
            rev,
            (0..300u64).rev().map(|i| i * 4).collect::<Vec<_>>(),
            "{kind}"
        );
        let sum: u64 = t.into_iter().map(|(_, v)| v).sum();
        assert_eq!(sum, (0..300u64).map(|i| i * 4 + 1).sum::<u64>());
    }
}

#[test]
fn debug_prints_a_map_of_hex_ranges() {
    for (kind, mk) in kinds::<u64>() {
        let mut t = mk();
        assert_eq!(format!("{t:?}"), "{}", "{kind}");
        t.insert(0x1000..=0x1fff, 7);
        assert_eq!(format!("{t:?}"), "{0x1000..=0x1fff: 7}", "{kind}");
        t.insert(0x3000..=0x3fff, 8);
        assert_eq!(
            format!("{t:?}"),
            "{0x1000..=0x1fff: 7, 0x3000..=0x3fff: 8}",
            "{kind}"
        );
        let mut s = new_tree::<&str>(kind == "alloc");
        s.insert(0xabc0..=0xffff_ffff_ffff_ffff, "v");
        assert_eq!(
            format!("{s:?}"),
            "{0xabc0..=0xffffffffffffffff: \"v\"}",
            "{kind}"
        );
    }
}

#[test]
fn clone_of_a_tall_tree() {
    for alloc in [false, true] {
        let mut t = new_tree::<u64>(alloc);
        let mut m = Model::new();
        let mut rng = Rng(1234);
        for k in 0..sized(30_000, 400) {
            let a = rng.below(1 << 20) * 4;
            let b = a + rng.below(3);
            t.insert(a..=b, k);
            m.insert(a, b, k);
        }
        assert!(t.stats().height >= 3, "{:?}", t.stats());
        let c = t.clone();
        assert_same(&c, &m, &|| {
            format!("{}: clone of a tall tree", kind_name(alloc))
        });
        assert!(c == t);
        let d = c.dup_with(|v| *v);
        assert!(d == t);
        d.validate().unwrap();
    }
}
