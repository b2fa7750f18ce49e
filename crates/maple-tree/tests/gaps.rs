//! `gaps()` and aligned gap search (`find_gap_aligned`, `_rev`,
//! `alloc_aligned`, `_rev`) against the plain model, on both tree kinds and
//! through `RcuMapleTree`'s guards.

#[macro_use]
mod common;

use common::*;
use maple_tree::{MapleTree, RcuMapleTree};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// The model's answer, by the documented rule: the lowest (highest)
/// multiple of `align` that starts a run of `size` free indices inside the
/// window. Computed in u128 so that no edge can overflow.
fn model_aligned(
    m: &Model<u64>,
    size: u64,
    align: u64,
    lo: u64,
    hi: u64,
    rev: bool,
) -> Option<u64> {
    if lo > hi {
        return None;
    }
    let (size, align) = (size as u128, align as u128);
    let fit = |s: u64, e: u64| -> Option<u64> {
        let (s, e) = (s as u128, e as u128);
        if rev {
            if e - s + 1 < size {
                return None;
            }
            let top = e - (size - 1);
            let a = top / align * align;
            (a >= s).then_some(a as u64)
        } else {
            let a = s.div_ceil(align) * align;
            (a + size - 1 <= e).then_some(a as u64)
        }
    };
    let mut gaps = m.gaps_within(lo, hi);
    if rev {
        gaps.reverse();
    }
    gaps.iter().find_map(|&(s, e)| fit(s, e))
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64, u64),
    Remove(u64, u64),
    /// Compare `gaps(lo..=hi)`, taking from the front and back as `ends` says.
    Gaps(u64, u64, u64),
    Find(u64, u64, u64, u64),
    Alloc(u64, u64, u64, u64, bool),
}

fn key() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..2000,
        1 => (0u64..300).prop_map(|d| MAX - d),
        1 => any::<u64>(),
    ]
}

fn align() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (0u32..9).prop_map(|s| 1u64 << s),
        1 => 1u64..50,
        1 => (60u32..64).prop_map(|s| 1u64 << s),
        1 => Just(MAX),
    ]
}

fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 1u64..70,
        1 => Just(MAX),
        1 => (1u64..4).prop_map(|d| MAX - d),
        1 => any::<u64>().prop_map(|s| s.max(1)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (key(), 0u64..40).prop_map(|(a, l)| Op::Insert(a, a.saturating_add(l))),
        3 => (key(), 0u64..40).prop_map(|(a, l)| Op::Remove(a, a.saturating_add(l))),
        2 => (key(), key(), any::<u64>()).prop_map(|(a, b, e)| Op::Gaps(a.min(b), a.max(b), e)),
        4 => (size(), align(), key(), key()).prop_map(|(s, al, a, b)| Op::Find(s, al, a.min(b), a.max(b))),
        2 => (1u64..40, align(), key(), key(), any::<bool>())
            .prop_map(|(s, al, a, b, r)| Op::Alloc(s, al, a.min(b), a.max(b), r)),
    ]
}

fn run(alloc: bool, ops: &[Op]) {
    let mut t: MapleTree<u64> = new_tree(alloc);
    let mut m: Model<u64> = Model::new();
    for (step, op) in ops.iter().enumerate() {
        let ctx = || format!("step {step} {op:?} alloc {alloc}");
        match *op {
            Op::Insert(a, b) => {
                t.insert(a..=b, step as u64);
                m.insert(a, b, step as u64);
            }
            Op::Remove(a, b) => {
                t.remove_range(a..=b);
                m.remove_range(a, b);
            }
            Op::Gaps(lo, hi, ends) => {
                let want: Vec<_> = m
                    .gaps_within(lo, hi)
                    .into_iter()
                    .map(|(s, e)| s..=e)
                    .collect();
                assert_eq!(t.gaps(lo..=hi).collect::<Vec<_>>(), want, "{}", ctx());
                let mut rev: Vec<_> = t.gaps(lo..=hi).rev().collect();
                rev.reverse();
                assert_eq!(rev, want, "rev {}", ctx());
                // Both ends at once, as `ends`' bits say: they meet exactly.
                let mut it = t.gaps(lo..=hi);
                let (mut front, mut back) = (Vec::new(), Vec::new());
                for bit in 0.. {
                    let got = if ends >> (bit % 64) & 1 == 0 {
                        it.next().map(|g| (true, g))
                    } else {
                        it.next_back().map(|g| (false, g))
                    };
                    match got {
                        Some((true, g)) => front.push(g),
                        Some((false, g)) => back.push(g),
                        None => break,
                    }
                }
                back.reverse();
                front.extend(back);
                assert_eq!(front, want, "both ends {}", ctx());
            }
            Op::Find(size, align, lo, hi) => {
                for rev in [false, true] {
                    let got = if rev {
                        t.find_gap_aligned_rev(size, align, lo..=hi)
                    } else {
                        t.find_gap_aligned(size, align, lo..=hi)
                    };
                    let want = model_aligned(&m, size, align, lo, hi, rev);
                    assert_eq!(got, want, "rev {rev} {}", ctx());
                }
                if align == 1 {
                    assert_eq!(
                        t.find_gap_aligned(size, 1, lo..=hi),
                        t.find_gap(size, lo..=hi)
                    );
                    assert_eq!(
                        t.find_gap_aligned_rev(size, 1, lo..=hi),
                        t.find_gap_rev(size, lo..=hi)
                    );
                }
            }
            Op::Alloc(size, align, lo, hi, rev) => {
                let want = model_aligned(&m, size, align, lo, hi, rev);
                let got = if rev {
                    t.alloc_aligned_rev(size, align, lo..=hi, step as u64)
                } else {
                    t.alloc_aligned(size, align, lo..=hi, step as u64)
                };
                match (got, want) {
                    (Ok(s), Some(w)) => {
                        assert_eq!(s, w, "{}", ctx());
                        assert_eq!(s % align, 0);
                        m.insert(s, s + (size - 1), step as u64);
                    }
                    (Err(e), None) => assert_eq!((e.size, e.value), (size, step as u64)),
                    (got, want) => panic!("alloc {got:?} vs model {want:?} {}", ctx()),
                }
            }
        }
        assert_same(&t, &m, &ctx);
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
    #![proptest_config(cfg(128))]
    #[test]
    fn gaps_regular(ops in prop::collection::vec(op(), 1..150)) {
        run(false, &ops);
    }

    #[test]
    fn gaps_alloc(ops in prop::collection::vec(op(), 1..150)) {
        run(true, &ops);
    }
}

// ---------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------

#[test]
fn gaps_of_an_empty_tree_and_empty_windows() {
    let t: MapleTree<u8> = MapleTree::new();
    assert_eq!(t.gaps(..).collect::<Vec<_>>(), [0..=MAX]);
    assert_eq!(t.gaps(5..=9).rev().collect::<Vec<_>>(), [5..=9]);
    assert_eq!(t.gaps(5..5).count(), 0);
    let mut t = MapleTree::new();
    t.insert(0..=MAX, 1u8);
    assert_eq!(t.gaps(..).count(), 0);
    t.remove_range(10..=19);
    assert_eq!(t.gaps(..).collect::<Vec<_>>(), [10..=19]);
    assert_eq!(t.gaps(15..15).count(), 0);
    assert_eq!(t.find_gap_aligned(1, 1, 15..15), None);
    assert_eq!(t.find_gap_aligned(1, 1, 15..16), Some(15));
}

#[test]
#[should_panic(expected = "reversed range")]
fn gaps_reversed_window_panics() {
    let t: MapleTree<u8> = MapleTree::new();
    #[allow(clippy::reversed_empty_ranges)]
    t.gaps(9..3);
}

#[test]
#[should_panic(expected = "alignment 0")]
fn alignment_zero_panics() {
    let t: MapleTree<u8> = MapleTree::new();
    t.find_gap_aligned(1, 0, ..);
}

#[test]
#[should_panic(expected = "size 0")]
fn aligned_size_zero_panics() {
    let t: MapleTree<u8> = MapleTree::new();
    t.find_gap_aligned(0, 8, ..);
}

/// Only tight, misaligned free ranges before the one fit: the search must
/// still find it (the kernel's size + align - 1 trick would report none).
#[test]
fn tight_fits_are_found() {
    for alloc in [false, true] {
        let mut t = new_tree(alloc);
        // Entries of 3 pages with free runs of 1 page between them, at odd
        // page offsets except one, which is 2-page aligned.
        let page = 0x1000u64;
        let mut at = page;
        for i in 0..2000u64 {
            t.insert(at..at + 3 * page, i);
            at += 4 * page;
        }
        // Free runs are [4k+4, 4k+5) pages; none is aligned to 8 pages except
        // where 4k+4 is a multiple of 8: every other one. Ask for 2 pages
        // aligned to 2: no run of 1 page fits.
        let window = page..at - page;
        assert_eq!(t.find_gap_aligned(2 * page, 2 * page, window.clone()), None);
        // One page aligned to 8 pages: the first free page at a multiple of 8.
        assert_eq!(
            t.find_gap_aligned(page, 8 * page, window.clone()),
            Some(8 * page)
        );
        assert_eq!(
            t.find_gap_aligned_rev(page, 8 * page, window.clone()),
            Some(7992 * page)
        );
        // Widen one free run to 2 pages at a 2-page boundary deep inside.
        t.remove_range(4000 * page..4002 * page);
        assert_eq!(
            t.find_gap_aligned(2 * page, 2 * page, window.clone()),
            Some(4000 * page)
        );
        assert_eq!(
            t.find_gap_aligned_rev(2 * page, 2 * page, window),
            Some(4000 * page)
        );
        t.validate().unwrap();
    }
}

#[test]
fn guards_search_the_published_tree() {
    let tree = RcuMapleTree::new_alloc();
    {
        let mut w = tree.write();
        for i in 0..300u64 {
            w.insert(i * 100..i * 100 + 60, i);
        }
        // Through the guard's Deref to the writer's tree.
        assert_eq!(w.gaps(..200).collect::<Vec<_>>(), [60..=99, 160..=199]);
        // Every free range below 30_000 has 40 indices: tight fits only.
        assert_eq!(w.alloc_aligned(30, 32, ..29_000, 1000), Ok(64));
        assert_eq!(w.alloc_aligned_rev(30, 32, ..30_000, 1001), Ok(29_760));
    }
    let r = tree.read();
    assert_eq!(r.get(70), Some(&1000));
    assert_eq!(r.get(29_789), Some(&1001));
    assert_eq!(
        r.gaps(..200).collect::<Vec<_>>(),
        [60..=63, 94..=99, 160..=199]
    );
    assert_eq!(r.gaps(..200).next_back(), Some(160..=199));
    // Room to spare above the last entry, but a tight fit lies lower: the
    // lowest aligned fit, where the kernel's search would take the roomy
    // range above.
    assert_eq!(r.find_gap_aligned(30, 32, ..), Some(160));
    assert_eq!(r.find_gap_aligned(30, 32, 29_961..), Some(29_984));
    assert_eq!(r.find_gap_aligned(30, 32, ..29_000), Some(160));
    assert_eq!(r.find_gap_aligned_rev(30, 32, ..30_000), Some(29_664));
    assert_eq!(r.find_gap_aligned(30, 32, 5..5), None);
}

/// A search notes the levels where the window reaches past the near-edge
/// child, and looks at their far-side siblings only when the walk fails
/// below: free runs of 1 to 4 indices, a few widened, and requests of up to
/// 12, so that the near edge often fails and the answer lies in a sibling
/// at every depth, or nowhere. Sized down under Miri, which checks the
/// storage of the notes.
#[test]
fn fallbacks_at_every_depth() {
    let n = sized(3_000, 150);
    let mut rng = Rng(77);
    let mut m: Model<u64> = Model::new();
    let mut t = MapleTree::new_alloc();
    let mut pos = 0u64;
    for i in 0..n {
        let s = pos + 1 + rng.below(4);
        let e = s + rng.below(8);
        t.insert(s..=e, i);
        m.insert(s, e, i);
        pos = e + 1;
    }
    for _ in 0..10 {
        let a = rng.below(pos);
        let b = a + 5 + rng.below(20);
        t.remove_range(a..=b);
        m.remove_range(a, b);
    }
    t.validate().unwrap();
    assert!(t.stats().height >= 3);
    for q in 0..sized(2_000, 60) {
        let size = 1 + rng.below(12);
        let lo = rng.below(pos);
        let hi = lo + rng.below(pos / 2 + 1);
        let want = (m.find_gap(size, lo, hi), m.find_gap_rev(size, lo, hi));
        let got = (t.find_gap(size, lo..=hi), t.find_gap_rev(size, lo..=hi));
        assert_eq!(got, want, "query {q}: size {size} in {lo}..={hi}");
    }
}

/// `find_gap`, `find_gap_rev` and their aligned forms against the model in
/// trees four levels
/// tall, so that windows split at every height: ranges laid out with
/// random free runs between them (as the benchmark's gap workloads do), then
/// a few hundred removed to make some runs long, then windows of every width
/// from a few indices to the whole space; a third of them also aligned. On
/// both tree kinds and through the concurrent tree's read guard.
#[test]
fn find_gap_in_tall_trees() {
    let mut rng = Rng(2024);
    let mut m: Model<u64> = Model::new();
    let mut regular = MapleTree::new();
    let mut alloc = MapleTree::new_alloc();
    let rcu = RcuMapleTree::new_alloc();
    let mut pos = 0u64;
    for i in 0..6_000u64 {
        let s = pos + rng.below(64);
        let e = s + rng.below(32);
        regular.insert(s..=e, i);
        alloc.insert(s..=e, i);
        rcu.write().insert(s..=e, i);
        m.insert(s, e, i);
        pos = e + 1;
    }
    for _ in 0..300 {
        let a = rng.below(pos);
        let b = a + rng.below(2_000);
        regular.remove_range(a..=b);
        alloc.remove_range(a..=b);
        rcu.write().remove_range(a..=b);
        m.remove_range(a, b);
    }
    alloc.validate().unwrap();
    assert!(alloc.stats().height >= 4 && regular.stats().height >= 4);
    let guard = rcu.read();
    for q in 0..4_000 {
        let size = match q % 8 {
            0 => 1 + rng.below(4_000),
            1 => 60 + rng.below(10),
            _ => 1 + rng.below(64),
        };
        let width = match q % 5 {
            0 => rng.below(100),
            1 => rng.below(5_000),
            2 => rng.below(100_000),
            3 => rng.below(pos + 1_000),
            _ => MAX - 1,
        };
        let lo = rng.below(pos + 500);
        let hi = lo.saturating_add(width);
        let want = (m.find_gap(size, lo, hi), m.find_gap_rev(size, lo, hi));
        let ctx = || format!("query {q}: size {size} in {lo}..={hi}");
        for (kind, t) in [("regular", &regular), ("alloc", &alloc)] {
            let got = (t.find_gap(size, lo..=hi), t.find_gap_rev(size, lo..=hi));
            assert_eq!(got, want, "{kind} {}", ctx());
        }
        let got = (
            guard.find_gap(size, lo..=hi),
            guard.find_gap_rev(size, lo..=hi),
        );
        assert_eq!(got, want, "rcu {}", ctx());
        if q % 3 == 0 {
            let align = [2, 8, 64, 4096][q / 3 % 4];
            let want = (
                model_aligned(&m, size, align, lo, hi, false),
                model_aligned(&m, size, align, lo, hi, true),
            );
            for (kind, t) in [("regular", &regular), ("alloc", &alloc)] {
                let got = (
                    t.find_gap_aligned(size, align, lo..=hi),
                    t.find_gap_aligned_rev(size, align, lo..=hi),
                );
                assert_eq!(got, want, "{kind} align {align} {}", ctx());
            }
            let got = (
                guard.find_gap_aligned(size, align, lo..=hi),
                guard.find_gap_aligned_rev(size, align, lo..=hi),
            );
            assert_eq!(got, want, "rcu align {align} {}", ctx());
        }
    }
    // From the very start of the space too.
    for size in [1, 2, 31, 63, 64, 65, 1_000, 1 << 40] {
        let want = (m.find_gap(size, 0, MAX), m.find_gap_rev(size, 0, MAX));
        assert_eq!(
            (alloc.find_gap(size, ..), alloc.find_gap_rev(size, ..)),
            want
        );
        assert_eq!(
            (regular.find_gap(size, ..), regular.find_gap_rev(size, ..)),
            want
        );
    }
}
