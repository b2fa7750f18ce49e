//! Seeded random stores, removes and reads against the reference model,
//! with gap search checked by brute force over the model.

mod common;
use common::{Model, Rng};
use maple_tree::MapleTree;

fn run(seed: u64, alloc: bool, space: u64, maxlen: u64, ops: usize) {
    run_at(seed, alloc, space, maxlen, ops, 0)
}

fn run_at(seed: u64, alloc: bool, space: u64, maxlen: u64, ops: usize, base: u64) {
    let mut r = Rng(seed);
    let mut t = if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    let mut m = Model::<u64>::new();
    for step in 0..ops {
        let f = base + r.next() % space;
        let len = 1 + r.next() % maxlen;
        let l = f
            .saturating_add(len - 1)
            .min(base.saturating_add(space + 5));
        let op = r.next() % 10;
        let before = if std::env::var("DUMP").is_ok() {
            t.dump()
        } else {
            String::new()
        };
        if op < 6 {
            t.insert(f..=l, step as u64);
            m.insert(f, l, step as u64);
        } else if op < 8 {
            t.remove_range(f..=l);
            m.remove_range(f, l);
        } else {
            let got = t.remove(f);
            let want = m.remove(f);
            assert_eq!(got, want, "seed {seed} step {step} remove({f})");
        }
        if let Err(e) = t.validate() {
            panic!(
                "seed {seed} step {step} op {op} {f}..={l}: {e}\nBEFORE:\n{before}AFTER:\n{}",
                t.dump()
            );
        }
        let got: Vec<_> = t.iter().map(|(r, v)| (r, *v)).collect();
        assert_eq!(
            got,
            m.entries(),
            "seed {seed} step {step} op {op} {f}..={l}"
        );
        assert_eq!(t.len(), got.len());
        // gap search against brute force over the model
        let size = 1 + r.next() % 12;
        let lo = base + r.next() % space;
        let hi = lo.saturating_add(r.next() % 64);
        let free = |x: u64| {
            m.map
                .range(..=x)
                .next_back()
                .is_none_or(|(_, (e, _))| *e < x)
        };
        let fits = |s: u64| (0..size).all(|k| s.checked_add(k).is_some_and(|i| i <= hi && free(i)));
        let want_fwd = (lo..=hi).find(|&s| fits(s));
        let want_rev = (lo..=hi).rev().find(|&s| fits(s));
        assert_eq!(
            t.find_gap(size, lo..=hi),
            want_fwd,
            "seed {seed} step {step} gap {size} in {lo}..={hi}"
        );
        assert_eq!(
            t.find_gap_rev(size, lo..=hi),
            want_rev,
            "seed {seed} step {step} gap_rev {size} in {lo}..={hi}"
        );
        // reverse iteration and range
        let mut back: Vec<_> = t.iter().rev().map(|(r, v)| (r, *v)).collect();
        back.reverse();
        assert_eq!(back, got);
        let want_range: Vec<_> = got
            .iter()
            .filter(|(r, _)| *r.end() >= lo && *r.start() <= hi)
            .cloned()
            .collect();
        assert_eq!(
            t.range(lo..=hi).map(|(r, v)| (r, *v)).collect::<Vec<_>>(),
            want_range
        );
        // cursor walk forward from lo equals iteration from lo
        let mut c = t.cursor(lo);
        let mut walked = Vec::new();
        if let Some(kv) = c.key_value() {
            walked.push((kv.0, *kv.1));
        }
        while let Some((r, v)) = c.next_entry() {
            walked.push((r, *v));
        }
        let want_walk: Vec<_> = got
            .iter()
            .filter(|(r, _)| *r.end() >= lo)
            .cloned()
            .collect();
        assert_eq!(walked, want_walk, "cursor from {lo}");
        if step % 50 == 0 {
            let d = t.clone();
            d.validate().unwrap();
            assert!(d == t);
            assert_eq!(d.stats().node_bytes, t.stats().node_bytes);
        }
    }
}

/// Seeds per test: as many as given, capped by `PROPTEST_CASES` when set
/// (scripts/valgrind.sh sets it low).
fn seeds(n: u64) -> std::ops::Range<u64> {
    let cap = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(n);
    0..n.min(cap)
}

#[test]
fn smoke_small() {
    for seed in seeds(200) {
        run(seed, seed % 2 == 0, 300, 8, 400);
    }
}

#[test]
fn smoke_wide() {
    for seed in seeds(100) {
        run(seed, seed % 2 == 1, 5000, 200, 1000);
    }
}

#[test]
fn smoke_high_keys() {
    for seed in seeds(60) {
        run_at(seed, seed % 2 == 0, 3000, 100, 600, u64::MAX - 3000);
    }
}

#[test]
fn smoke_huge_ranges() {
    for seed in seeds(60) {
        run_at(seed, seed % 2 == 1, u64::MAX / 2, u64::MAX / 4, 300, 0);
    }
}
