//! Differential property tests: random operation sequences run against the
//! tree and against a plain reference model (`common::Model`), comparing every
//! answer and calling `validate()` after every step (the whole contents are
//! compared after every step while the tree is small, every 8th step above
//! 300 entries).
//!
//! Key scales: dense small keys, sparse (clustered and random) u64 keys, keys
//! near `u64::MAX`, huge ranges including the whole space, and a mix. Both
//! tree kinds; several value types (u64, u8, `()`, `Box<u64>`, a boxed 56-byte
//! value). Heavier runs are `#[ignore]`d: `cargo test --test model -- --ignored`.

#[macro_use]
mod common;

use std::collections::VecDeque;
use std::fmt::Debug;
use std::ops::RangeInclusive;

use common::Rng;
use common::*;
use maple_tree::{Cursor, CursorMut, MapleTree, NoSpace};
use proptest::prelude::*;
use proptest::test_runner::Config;

// ---------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Scale {
    /// Keys 0..200.
    Dense,
    /// Clustered and random u64 keys, small to huge lengths.
    Sparse,
    /// Keys within 200 of `u64::MAX`.
    NearMax,
    /// Huge ranges, the whole space, 0 and MAX.
    Huge,
    /// Any of the above.
    Mixed,
}

/// An index: with `sel % 4 != 0` (and a non-empty tree) one inside an existing
/// entry, otherwise `raw`.
#[derive(Clone, Copy, Debug)]
struct Idx {
    sel: u64,
    raw: u64,
}

/// A range: with `sel % 3 == 0` (and a non-empty tree) anchored at an existing
/// entry's first or last index moved by `delta`, keeping `rg`'s length and form.
#[derive(Clone, Copy, Debug)]
struct RSpec {
    sel: u64,
    delta: i16,
    rg: Rg,
}

#[derive(Clone, Debug)]
enum Step {
    NextEntry,
    PrevEntry,
    NextRange,
    PrevRange,
    Seek(Idx),
}

#[derive(Clone, Debug)]
enum MStep {
    Nav(Step),
    /// Insert near the cursor: start at index + delta, `extra` more indices.
    Insert(i16, u64),
    Remove,
    Set,
}

#[derive(Clone, Debug)]
enum Op {
    Insert(RSpec),
    InsertWith(RSpec),
    TryInsert(RSpec),
    Remove(Idx),
    RemoveRange(RSpec),
    RemoveRangeWith(RSpec),
    Get(Idx),
    GetMut(Idx),
    Range(RSpec, u64),
    Iter(u64),
    IterMut(u64),
    FirstLast,
    FindGap(u64, RSpec),
    FindGapRev(u64, RSpec),
    Alloc(u64, RSpec),
    AllocRev(u64, RSpec),
    Clear,
    Cursor(Idx, Vec<Step>),
    CursorMut(Idx, Vec<MStep>),
    /// Replace the tree by its clone (true) or `dup_with` copy (false).
    CloneSwap(bool),
    /// Into-iterate a clone, `take` items in the direction pattern, drop the rest.
    IntoIter(u64, u8),
    Extend(Vec<RSpec>),
    /// Bulk sequential stores: `count` entries of `extra + 1` indices, `stride` apart.
    Fill {
        start: u64,
        count: u16,
        stride: u8,
        extra: u8,
    },
}

// Generating operations. Proptest draws, per operation, a selector and a
// seed; the operation is decoded from them with a small PRNG. (Nested proptest
// strategies cost ~200 µs per operation in a debug build; this costs ~1 µs.)
// Shrinking removes operations and moves selectors towards plain inserts, and
// the failing sequence is printed decoded.

/// Picks an index with the given weights.
fn weighted(r: &mut Rng, w: &[u64]) -> usize {
    let mut x = r.below(w.iter().sum());
    for (i, &wi) in w.iter().enumerate() {
        if x < wi {
            return i;
        }
        x -= wi;
    }
    unreachable!()
}

fn between(r: &mut Rng, lo: u64, hi_incl: u64) -> u64 {
    match (hi_incl - lo).checked_add(1) {
        Some(n) => lo + r.below(n),
        None => r.next(),
    }
}

fn key(s: Scale, r: &mut Rng) -> u64 {
    match s {
        Scale::Dense => r.below(200),
        Scale::Sparse => match weighted(r, &[3, 1, 1]) {
            0 => (r.below(16) << 60) | (r.below(4) << 40) | r.below(2000),
            1 => r.next(),
            _ => match r.below(3) {
                0 => 0,
                1 => MAX,
                _ => MAX - r.below(2001),
            },
        },
        Scale::NearMax => MAX - r.below(201),
        Scale::Huge => match r.below(5) {
            0 => r.next(),
            1 => 0,
            2 => MAX,
            3 => r.below(16) << 60,
            _ => (r.below(16) << 60).wrapping_sub(1),
        },
        Scale::Mixed => {
            let s = [Scale::Dense, Scale::Sparse, Scale::NearMax, Scale::Huge][r.below(4) as usize];
            key(s, r)
        }
    }
}

/// Length minus one of a range.
fn extra(s: Scale, r: &mut Rng) -> u64 {
    match s {
        Scale::Dense | Scale::NearMax => match weighted(r, &[4, 4, 2, 1]) {
            0 => 0,
            1 => r.below(8),
            2 => r.below(60),
            _ => MAX,
        },
        Scale::Sparse => match weighted(r, &[2, 3, 2, 1, 1]) {
            0 => 0,
            1 => r.below(2000),
            2 => r.below(1 << 41),
            3 => r.below(1 << 62),
            _ => MAX,
        },
        Scale::Huge => match weighted(r, &[1, 1, 3, 2, 2]) {
            0 => 0,
            1 => r.below(16),
            2 => r.next(),
            3 => MAX,
            _ => r.below(16) << 60,
        },
        Scale::Mixed => {
            let s = [Scale::Dense, Scale::Sparse, Scale::Huge][r.below(3) as usize];
            extra(s, r)
        }
    }
}

fn rg(s: Scale, r: &mut Rng) -> Rg {
    let form = r.below(256) as u8;
    if matches!(s, Scale::Huge | Scale::Mixed) && r.below(7) == 0 {
        return Rg { a: 0, b: MAX, form };
    }
    let a = key(s, r);
    Rg {
        a,
        b: a.saturating_add(extra(s, r)),
        form,
    }
}

fn rspec(s: Scale, r: &mut Rng) -> RSpec {
    RSpec {
        sel: r.next(),
        delta: r.below(9) as i16 - 4,
        rg: rg(s, r),
    }
}

fn idx(s: Scale, r: &mut Rng) -> Idx {
    Idx {
        sel: r.next(),
        raw: key(s, r),
    }
}

fn size(s: Scale, r: &mut Rng) -> u64 {
    match s {
        Scale::Dense | Scale::NearMax => match weighted(r, &[4, 2, 1, 1]) {
            0 => between(r, 1, 11),
            1 => between(r, 1, 79),
            2 => MAX,
            _ => between(r, 1, MAX),
        },
        Scale::Sparse => match weighted(r, &[2, 2, 1, 1]) {
            0 => between(r, 1, 99),
            1 => between(r, 1, (1 << 42) - 1),
            2 => between(r, 1, MAX),
            _ => MAX,
        },
        Scale::Huge | Scale::Mixed => match weighted(r, &[2, 2, 1, 1, 1]) {
            0 => between(r, 1, 15),
            1 => between(r, 1, MAX),
            2 => between(r, 1, 15) << 60,
            3 => MAX,
            _ => 1 << 63,
        },
    }
}

fn step(s: Scale, r: &mut Rng) -> Step {
    match weighted(r, &[3, 3, 3, 3, 1]) {
        0 => Step::NextEntry,
        1 => Step::PrevEntry,
        2 => Step::NextRange,
        3 => Step::PrevRange,
        _ => Step::Seek(idx(s, r)),
    }
}

fn mstep(s: Scale, r: &mut Rng) -> MStep {
    match weighted(r, &[4, 3, 2, 1]) {
        0 => MStep::Nav(step(s, r)),
        1 => MStep::Insert(r.below(24) as i16 - 3, extra(s, r)),
        2 => MStep::Remove,
        _ => MStep::Set,
    }
}

/// Weights of the operations, in the order of `decode`.
const OP_WEIGHTS: [u64; 23] = [
    20, 5, 8, 8, 6, 2, 6, 2, 4, 2, 1, 1, 5, 5, 6, 6, 1, 3, 3, 1, 1, 1, 1,
];

fn decode(s: Scale, sel: u64, seed: u64) -> Op {
    let mut r = Rng(seed);
    // `sel` picks the operation (0 = insert), so shrinking simplifies towards inserts.
    let mut k = sel % OP_WEIGHTS.iter().sum::<u64>();
    let mut kind = 0;
    while k >= OP_WEIGHTS[kind] {
        k -= OP_WEIGHTS[kind];
        kind += 1;
    }
    let r = &mut r;
    match kind {
        0 => Op::Insert(rspec(s, r)),
        1 => Op::InsertWith(rspec(s, r)),
        2 => Op::TryInsert(rspec(s, r)),
        3 => Op::Remove(idx(s, r)),
        4 => Op::RemoveRange(rspec(s, r)),
        5 => Op::RemoveRangeWith(rspec(s, r)),
        6 => Op::Get(idx(s, r)),
        7 => Op::GetMut(idx(s, r)),
        8 => Op::Range(rspec(s, r), r.next()),
        9 => Op::Iter(r.next()),
        10 => Op::IterMut(r.next()),
        11 => Op::FirstLast,
        12 => Op::FindGap(size(s, r), rspec(s, r)),
        13 => Op::FindGapRev(size(s, r), rspec(s, r)),
        14 => Op::Alloc(size(s, r), rspec(s, r)),
        15 => Op::AllocRev(size(s, r), rspec(s, r)),
        16 => Op::Clear,
        17 => {
            let i = idx(s, r);
            let n = 1 + r.below(40);
            Op::Cursor(i, (0..n).map(|_| step(s, r)).collect())
        }
        18 => {
            let i = idx(s, r);
            let n = 1 + r.below(30);
            Op::CursorMut(i, (0..n).map(|_| mstep(s, r)).collect())
        }
        19 => Op::CloneSwap(r.below(2) == 0),
        20 => Op::IntoIter(r.next(), r.below(256) as u8),
        21 => {
            let n = r.below(8);
            Op::Extend((0..n).map(|_| rspec(s, r)).collect())
        }
        _ => {
            let start = key(s, r);
            let count = match weighted(r, &[6, 3, 1]) {
                0 => between(r, 1, 39),
                1 => between(r, 1, 399),
                _ => between(r, 1, 1999),
            } as u16;
            let stride = between(r, 1, 7) as u8;
            let extra = (r.below(256) as u8) % stride;
            Op::Fill {
                start,
                count,
                stride,
                extra,
            }
        }
    }
}

fn ops(s: Scale, max_len: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec((any::<u64>(), any::<u64>()), 1..max_len).prop_map(move |raw| {
        raw.into_iter()
            .map(|(sel, seed)| decode(s, sel, seed))
            .collect()
    })
}

// ---------------------------------------------------------------------------
// Resolving and running
// ---------------------------------------------------------------------------

fn resolve_idx<V: TestVal>(m: &Model<V>, i: Idx) -> u64 {
    if i.sel % 4 == 0 || m.len() == 0 {
        return i.raw;
    }
    let (s, (e, _)) = m
        .map
        .iter()
        .nth(((i.sel >> 2) % m.len() as u64) as usize)
        .unwrap();
    let span = (*e - *s) as u128 + 1;
    s + ((i.sel >> 24) as u128 % span) as u64
}

fn resolve_rg<V: TestVal>(m: &Model<V>, r: RSpec) -> Rg {
    if r.sel % 3 != 0 || m.len() == 0 {
        return r.rg;
    }
    let (s, (e, _)) = m
        .map
        .iter()
        .nth(((r.sel >> 2) % m.len() as u64) as usize)
        .unwrap();
    let anchor = if r.sel & (1 << 40) == 0 { *s } else { *e };
    let a = if r.delta >= 0 {
        anchor.saturating_add(r.delta as u64)
    } else {
        anchor.saturating_sub(r.delta.unsigned_abs() as u64)
    };
    Rg {
        a,
        b: a.saturating_add(r.rg.b - r.rg.a),
        form: r.rg.form,
    }
}

fn own<V: Clone>(x: Option<(RangeInclusive<u64>, &V)>) -> Option<(RangeInclusive<u64>, V)> {
    x.map(|(r, v)| (r, v.clone()))
}

/// Consumes a double-ended iterator from both ends following the bits of
/// `pat` (1 = back) and compares with `want`; stops after `limit` items.
fn check_de<T: PartialEq + Debug>(
    mut it: impl DoubleEndedIterator<Item = T>,
    mut want: VecDeque<T>,
    pat: u64,
    limit: usize,
    what: &str,
) {
    let mut bits = pat;
    for n in 0..=limit {
        if n == limit {
            return;
        }
        let (lo, hi) = it.size_hint();
        assert!(
            lo <= want.len() && hi.is_none_or(|h| h >= want.len()),
            "{what}: size_hint {:?} with {} items left",
            (lo, hi),
            want.len()
        );
        let back = bits & 1 == 1;
        bits = bits.rotate_right(1);
        let (g, w) = if back {
            (it.next_back(), want.pop_back())
        } else {
            (it.next(), want.pop_front())
        };
        let end = if back { "next_back" } else { "next" };
        assert_eq!(g, w, "{what}: item #{n} from {end}");
        if w.is_none() {
            assert_eq!(it.next(), None, "{what}: next() after the ends met");
            assert_eq!(
                it.next_back(),
                None,
                "{what}: next_back() after the ends met"
            );
            return;
        }
    }
}

/// What the cursor tests need from both kinds of cursor.
trait CurView<V> {
    fn idx(&self) -> u64;
    fn rng(&self) -> RangeInclusive<u64>;
    fn val(&self) -> Option<V>;
    fn kv(&self) -> Option<(RangeInclusive<u64>, V)>;
    fn seek_to(&mut self, i: u64);
    fn next_e(&mut self) -> Option<(RangeInclusive<u64>, V)>;
    fn prev_e(&mut self) -> Option<(RangeInclusive<u64>, V)>;
    fn next_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)>;
    fn prev_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)>;
}

impl<V: Clone> CurView<V> for Cursor<'_, V> {
    fn idx(&self) -> u64 {
        self.index()
    }
    fn rng(&self) -> RangeInclusive<u64> {
        self.range()
    }
    fn val(&self) -> Option<V> {
        self.get().cloned()
    }
    fn kv(&self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.key_value())
    }
    fn seek_to(&mut self, i: u64) {
        self.seek(i)
    }
    fn next_e(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.next_entry())
    }
    fn prev_e(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.prev_entry())
    }
    fn next_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)> {
        self.next_range().map(|(r, v)| (r, v.cloned()))
    }
    fn prev_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)> {
        self.prev_range().map(|(r, v)| (r, v.cloned()))
    }
}

impl<V: Clone> CurView<V> for CursorMut<'_, V> {
    fn idx(&self) -> u64 {
        self.index()
    }
    fn rng(&self) -> RangeInclusive<u64> {
        self.range()
    }
    fn val(&self) -> Option<V> {
        self.get().cloned()
    }
    fn kv(&self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.key_value())
    }
    fn seek_to(&mut self, i: u64) {
        self.seek(i)
    }
    fn next_e(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.next_entry())
    }
    fn prev_e(&mut self) -> Option<(RangeInclusive<u64>, V)> {
        own(self.prev_entry())
    }
    fn next_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)> {
        self.next_range().map(|(r, v)| (r, v.cloned()))
    }
    fn prev_r(&mut self) -> Option<(RangeInclusive<u64>, Option<V>)> {
        self.prev_range().map(|(r, v)| (r, v.cloned()))
    }
}

/// The cursor's index, range and value agree with the model. A gap may be
/// reported in pieces (a gap can span nodes), so a gap range need only lie
/// inside the maximal gap.
fn check_pos<V: TestVal>(c: &impl CurView<V>, m: &Model<V>, ctx: &str) {
    let i = c.idx();
    let r = c.rng();
    assert!(
        r.contains(&i),
        "{ctx}: cursor range {r:#x?} does not hold its index {i:#x}"
    );
    match m.get(i) {
        Some((er, v)) => {
            assert_eq!(r, er, "{ctx}: cursor range at {i:#x}");
            assert_eq!(c.val().as_ref(), Some(v), "{ctx}: cursor value at {i:#x}");
            assert_eq!(
                c.kv(),
                Some((er, v.clone())),
                "{ctx}: cursor key_value at {i:#x}"
            );
        }
        None => {
            assert_eq!(c.val(), None, "{ctx}: cursor value in a gap at {i:#x}");
            assert_eq!(c.kv(), None, "{ctx}: cursor key_value in a gap at {i:#x}");
            let (gs, ge) = m.gap_at(i);
            assert!(
                gs <= *r.start() && *r.end() <= ge,
                "{ctx}: cursor gap range {r:#x?} at {i:#x} is not inside the gap {gs:#x}..={ge:#x}"
            );
        }
    }
}

fn nav<V: TestVal>(c: &mut impl CurView<V>, m: &Model<V>, s: &Step, ctx: &str) {
    let cur = c.rng();
    let (cs, ce) = (*cur.start(), *cur.end());
    match s {
        Step::Seek(i) => {
            let i = resolve_idx(m, *i);
            c.seek_to(i);
            assert_eq!(c.idx(), i, "{ctx}: index after seek({i:#x})");
        }
        Step::NextEntry | Step::PrevEntry => {
            let next = matches!(s, Step::NextEntry);
            let (got, want) = if next {
                (c.next_e(), own(m.next_after(ce)))
            } else {
                (c.prev_e(), own(m.prev_before(cs)))
            };
            assert_eq!(got, want, "{ctx}: {s:?} from {cur:#x?}");
            match got {
                Some((r, _)) => assert_eq!(c.rng(), r, "{ctx}: range after {s:?}"),
                None => c.seek_to(cs),
            }
        }
        Step::NextRange | Step::PrevRange => {
            let next = matches!(s, Step::NextRange);
            let got = if next { c.next_r() } else { c.prev_r() };
            let at = if next {
                ce.checked_add(1)
            } else {
                cs.checked_sub(1)
            };
            let Some(at) = at else {
                assert_eq!(
                    got, None,
                    "{ctx}: {s:?} from {cur:#x?} at the end of the space"
                );
                c.seek_to(cs);
                check_pos(c, m, ctx);
                return;
            };
            let (r, v) = got.unwrap_or_else(|| panic!("{ctx}: {s:?} from {cur:#x?} gave None"));
            assert!(
                r.contains(&at),
                "{ctx}: {s:?} from {cur:#x?} gave {r:#x?}, not adjacent"
            );
            if next {
                assert_eq!(*r.start(), at, "{ctx}: {s:?} from {cur:#x?} gave {r:#x?}");
            } else {
                assert_eq!(*r.end(), at, "{ctx}: {s:?} from {cur:#x?} gave {r:#x?}");
            }
            match m.get(at) {
                Some((er, ev)) => {
                    assert_eq!(r, er, "{ctx}: {s:?} from {cur:#x?}");
                    assert_eq!(v.as_ref(), Some(ev), "{ctx}: {s:?} from {cur:#x?}");
                }
                None => {
                    assert_eq!(v, None, "{ctx}: {s:?} from {cur:#x?} into a gap");
                    let (gs, ge) = m.gap_at(at);
                    assert!(
                        gs <= *r.start() && *r.end() <= ge,
                        "{ctx}: {s:?} from {cur:#x?} gave {r:#x?}, not inside the gap {gs:#x}..={ge:#x}"
                    );
                }
            }
            assert_eq!(c.rng(), r, "{ctx}: range after {s:?}");
        }
    }
    check_pos(c, m, ctx);
}

struct Run<V> {
    t: MapleTree<V>,
    m: Model<V>,
    ctr: u64,
}

impl<V: TestVal> Run<V> {
    fn val(&mut self) -> V {
        self.ctr += 1;
        V::make(self.ctr)
    }

    /// Applies one op; returns a description of it with the resolved arguments.
    fn apply(&mut self, op: &Op) -> String {
        match op {
            Op::Insert(rs) => {
                let rg = resolve_rg(&self.m, *rs);
                let v = self.val();
                with_range!(rg, |r| self.t.insert(r, v.clone()));
                self.m.insert(rg.a, rg.b, v.clone());
                format!("insert({rg:?}, {v:?})")
            }
            Op::InsertWith(rs) | Op::RemoveRangeWith(rs) => {
                let rg = resolve_rg(&self.m, *rs);
                let store = matches!(op, Op::InsertWith(_));
                let v = store.then(|| self.val());
                let mut calls = 0usize;
                let mut bad_piece = None;
                let mut split = |old: &V, piece: RangeInclusive<u64>| {
                    calls += 1;
                    if piece.start() > piece.end() || piece.contains(&rg.a) || piece.contains(&rg.b)
                    {
                        bad_piece = Some(piece.clone());
                    }
                    old.split_of(&piece)
                };
                if let Some(v) = &v {
                    with_range!(rg, |r| self.t.insert_with(r, v.clone(), &mut split));
                } else {
                    with_range!(rg, |r| self.t.remove_range_with(r, &mut split));
                }
                let want = self
                    .m
                    .store_with(rg.a, rg.b, v.clone(), &mut |o, p| o.split_of(&p));
                let d = if store {
                    format!("insert_with({rg:?}, {v:?})")
                } else {
                    format!("remove_range_with({rg:?})")
                };
                assert_eq!(
                    bad_piece, None,
                    "{d}: split called with a piece overlapping the range"
                );
                assert_eq!(
                    calls, want,
                    "{d}: number of split calls (one per surviving piece)"
                );
                d
            }
            Op::TryInsert(rs) => {
                let rg = resolve_rg(&self.m, *rs);
                let v = self.val();
                let got = with_range!(rg, |r| self.t.try_insert(r, v.clone()));
                let want = self.m.try_insert(rg.a, rg.b, v.clone());
                let d = format!("try_insert({rg:?}, {v:?})");
                match (got, want) {
                    (Ok(()), Ok(())) => {}
                    (Err(e), Err(occ)) => {
                        assert_eq!(e.range, rg.incl(), "{d}: OccupiedError.range");
                        assert_eq!(e.occupied, occ, "{d}: OccupiedError.occupied");
                        assert_eq!(e.value, v, "{d}: OccupiedError.value");
                    }
                    (g, w) => panic!("{d}: tree {:?}, model {w:?}", g.map_err(|e| e.occupied)),
                }
                d
            }
            Op::Remove(i) => {
                let i = resolve_idx(&self.m, *i);
                let d = format!("remove({i:#x})");
                assert_eq!(self.t.remove(i), self.m.remove(i), "{d}");
                d
            }
            Op::RemoveRange(rs) => {
                let rg = resolve_rg(&self.m, *rs);
                with_range!(rg, |r| self.t.remove_range(r));
                self.m.remove_range(rg.a, rg.b);
                format!("remove_range({rg:?})")
            }
            Op::Get(i) => {
                let i = resolve_idx(&self.m, *i);
                for j in [i, i.saturating_sub(1), i.saturating_add(1)] {
                    assert_eq!(self.t.get(j), self.m.get(j).map(|x| x.1), "get({j:#x})");
                    assert_eq!(
                        self.t.get_key_value(j),
                        self.m.get(j),
                        "get_key_value({j:#x})"
                    );
                }
                format!("get({i:#x})")
            }
            Op::GetMut(i) => {
                let i = resolve_idx(&self.m, *i);
                match (self.t.get_mut(i), self.m.get_mut(i)) {
                    (Some(a), Some(b)) => {
                        assert_eq!(a, b, "get_mut({i:#x})");
                        a.bump();
                        b.bump();
                    }
                    (None, None) => {}
                    (a, b) => panic!("get_mut({i:#x}): tree {a:?}, model {b:?}"),
                }
                format!("get_mut({i:#x})")
            }
            Op::Range(rs, pat) => {
                let rg = resolve_rg(&self.m, *rs);
                let d = format!("range({rg:?}) pattern {pat:#x}");
                let want: VecDeque<_> = self.m.range(rg.a, rg.b).into();
                let it = with_range!(rg, |r| self.t.range(r));
                check_de(it.map(|(r, v)| (r, v.clone())), want, *pat, usize::MAX, &d);
                d
            }
            Op::Iter(pat) => {
                let d = format!("iter() pattern {pat:#x}");
                let want: VecDeque<_> = self.m.entries().into();
                check_de(
                    self.t.iter().map(|(r, v)| (r, v.clone())),
                    want,
                    *pat,
                    usize::MAX,
                    &d,
                );
                let rev: Vec<_> = self.t.iter().rev().map(|(r, _)| r).collect();
                let fwd: Vec<_> = self.m.map.iter().rev().map(|(s, (e, _))| *s..=*e).collect();
                assert_eq!(rev, fwd, "iter().rev()");
                assert_eq!(
                    (&self.t).into_iter().count(),
                    self.m.len(),
                    "(&tree).into_iter()"
                );
                d
            }
            Op::IterMut(pat) => {
                let d = format!("iter_mut() pattern {pat:#x}");
                let want: VecDeque<_> = self.m.entries().into();
                let mut seen = Vec::new();
                let it = self.t.iter_mut().map(|(r, v)| {
                    let before = v.clone();
                    v.bump();
                    seen.push(r.clone());
                    (r, before)
                });
                check_de(it, want, *pat, usize::MAX, &d);
                for r in seen {
                    self.m.get_mut(*r.start()).unwrap().bump();
                }
                d
            }
            Op::FirstLast => {
                let first = self.m.map.iter().next().map(|(s, (e, v))| (*s..=*e, v));
                let last = self
                    .m
                    .map
                    .iter()
                    .next_back()
                    .map(|(s, (e, v))| (*s..=*e, v));
                assert_eq!(self.t.first_key_value(), first, "first_key_value");
                assert_eq!(self.t.last_key_value(), last, "last_key_value");
                "first/last_key_value".into()
            }
            Op::FindGap(size, rs) | Op::FindGapRev(size, rs) => {
                let rg = resolve_rg(&self.m, *rs);
                let rev = matches!(op, Op::FindGapRev(..));
                let (got, want) = if rev {
                    (
                        with_range!(rg, |r| self.t.find_gap_rev(*size, r)),
                        self.m.find_gap_rev(*size, rg.a, rg.b),
                    )
                } else {
                    (
                        with_range!(rg, |r| self.t.find_gap(*size, r)),
                        self.m.find_gap(*size, rg.a, rg.b),
                    )
                };
                let d = format!(
                    "find_gap{}({size:#x}, {rg:?})",
                    if rev { "_rev" } else { "" }
                );
                assert_eq!(got, want, "{d}");
                d
            }
            Op::Alloc(size, rs) | Op::AllocRev(size, rs) => {
                let rg = resolve_rg(&self.m, *rs);
                let rev = matches!(op, Op::AllocRev(..));
                let v = self.val();
                let (got, want) = if rev {
                    (
                        with_range!(rg, |r| self.t.alloc_rev(*size, r, v.clone())),
                        self.m.find_gap_rev(*size, rg.a, rg.b),
                    )
                } else {
                    (
                        with_range!(rg, |r| self.t.alloc(*size, r, v.clone())),
                        self.m.find_gap(*size, rg.a, rg.b),
                    )
                };
                let d = format!(
                    "alloc{}({size:#x}, {rg:?}, {v:?})",
                    if rev { "_rev" } else { "" }
                );
                match (got, want) {
                    (Ok(s), Some(w)) => {
                        assert_eq!(s, w, "{d}: start");
                        self.m.insert(s, s + (size - 1), v);
                    }
                    (Err(NoSpace { size: z, value }), None) => {
                        assert_eq!(z, *size, "{d}: NoSpace.size");
                        assert_eq!(value, v, "{d}: NoSpace.value");
                    }
                    (g, w) => panic!("{d}: tree {:?}, model {w:?}", g.map_err(|e| e.size)),
                }
                d
            }
            Op::Clear => {
                self.t.clear();
                self.m = Model::new();
                let s = self.t.stats();
                assert_eq!(
                    (s.height, s.leaves + s.internal + s.alloc_internal),
                    (0, 0),
                    "clear() left nodes: {s:?}"
                );
                "clear()".into()
            }
            Op::Cursor(i, steps) => {
                let i = resolve_idx(&self.m, *i);
                let mut c = self.t.cursor(i);
                let d = format!("cursor({i:#x}) steps {steps:?}");
                assert_eq!(c.idx(), i, "{d}: index()");
                check_pos(&c, &self.m, &d);
                for (n, s) in steps.iter().enumerate() {
                    nav(&mut c, &self.m, s, &format!("{d}: step #{n} {s:?}"));
                }
                d
            }
            Op::CursorMut(i, steps) => {
                let i = resolve_idx(&self.m, *i);
                let d = format!("cursor_mut({i:#x}) steps {steps:?}");
                let mut ctr = self.ctr;
                let m = &mut self.m;
                let mut c = self.t.cursor_mut(i);
                assert_eq!(c.idx(), i, "{d}: index()");
                check_pos(&c, m, &d);
                for (n, s) in steps.iter().enumerate() {
                    let ctx = format!("{d}: step #{n} {s:?}");
                    match s {
                        MStep::Nav(s) => nav(&mut c, m, s, &ctx),
                        MStep::Insert(delta, extra) => {
                            let at = c.index();
                            let a = if *delta >= 0 {
                                at.saturating_add(*delta as u64)
                            } else {
                                at.saturating_sub(delta.unsigned_abs() as u64)
                            };
                            let b = a.saturating_add(*extra);
                            ctr += 1;
                            let v = V::make(ctr);
                            c.insert(a..=b, v.clone());
                            m.insert(a, b, v.clone());
                            assert_eq!(c.index(), a, "{ctx}: index after insert({a:#x}..={b:#x})");
                            assert_eq!(c.range(), a..=b, "{ctx}: range after insert");
                            assert_eq!(c.get(), Some(&v), "{ctx}: value after insert");
                            check_pos(&c, m, &ctx);
                        }
                        MStep::Remove => {
                            let at = c.index();
                            assert_eq!(c.remove(), m.remove(at), "{ctx}: remove at {at:#x}");
                            assert_eq!(c.index(), at, "{ctx}: index after remove");
                            check_pos(&c, m, &ctx);
                        }
                        MStep::Set => {
                            let at = c.index();
                            match (c.get_mut(), m.get_mut(at)) {
                                (Some(a), Some(b)) => {
                                    assert_eq!(a, b, "{ctx}");
                                    a.bump();
                                    b.bump();
                                }
                                (None, None) => {}
                                (a, b) => panic!("{ctx}: get_mut tree {a:?} model {b:?}"),
                            }
                            check_pos(&c, m, &ctx);
                        }
                    }
                }
                self.ctr = ctr;
                d
            }
            Op::CloneSwap(clone) => {
                let c = if *clone {
                    self.t.clone()
                } else {
                    self.t.dup_with(|v| v.clone())
                };
                let d = if *clone { "clone()" } else { "dup_with()" }.to_string();
                assert_valid(&c, &|| format!("the copy made by {d}"));
                assert_eq!(c.is_alloc(), self.t.is_alloc(), "{d}: kind of the copy");
                assert!(c == self.t, "{d}: copy != source");
                assert_eq!(
                    c.stats().height,
                    self.t.stats().height,
                    "{d}: height of the copy"
                );
                self.t = c;
                d
            }
            Op::IntoIter(pat, take) => {
                let d = format!("clone().into_iter() pattern {pat:#x} take {take}");
                let want: VecDeque<_> = self.m.entries().into();
                check_de(self.t.clone().into_iter(), want, *pat, *take as usize, &d);
                d
            }
            Op::Extend(specs) => {
                let mut items = Vec::new();
                for rs in specs {
                    let rg = resolve_rg(&self.m, *rs);
                    let v = self.val();
                    items.push((rg.incl(), v));
                }
                for (r, v) in &items {
                    self.m.insert(*r.start(), *r.end(), v.clone());
                }
                let d = format!("extend({items:?})");
                self.t.extend(items);
                d
            }
            Op::Fill {
                start,
                count,
                stride,
                extra,
            } => {
                let (mut a, mut n) = (*start, 0);
                while n < *count {
                    let b = a.saturating_add(*extra as u64);
                    let v = self.val();
                    self.t.insert(a..=b, v.clone());
                    self.m.insert(a, b, v);
                    n += 1;
                    match a.checked_add(*stride as u64) {
                        Some(x) => a = x,
                        None => break,
                    }
                }
                format!("fill({start:#x}, n={n}, stride={stride}, extra={extra})")
            }
        }
    }
}

fn run<V: TestVal>(alloc: bool, ops: &[Op]) {
    let mut run = Run::<V> {
        t: new_tree(alloc),
        m: Model::new(),
        ctr: 0,
    };
    assert_same(&run.t, &run.m, &|| "new tree".into());
    let mut log: Vec<String> = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        let d = run.apply(op);
        log.push(d);
        let ctx = || {
            let from = log.len().saturating_sub(6);
            format!(
                "after step #{n} of a {} tree; last steps: {:#?}",
                if alloc { "alloc" } else { "regular" },
                &log[from..]
            )
        };
        // validate() after every step; the full comparison with the model
        // (O(n)) after every step of small trees, every 8th step of big ones.
        if run.m.len() <= 300 || n % 8 == 0 || n + 1 == ops.len() {
            assert_same(&run.t, &run.m, &ctx);
        } else {
            assert_valid(&run.t, &ctx);
            assert_eq!(run.t.len(), run.m.len(), "len() {}", ctx());
            check_stats(&run.t, None, &ctx);
        }
    }
}

fn cfg(n: u32) -> Config {
    Config {
        cases: cases(n),
        max_shrink_iters: 4096,
        ..Config::default()
    }
}

macro_rules! model_tests {
    ($($name:ident: $v:ty, $scale:expr, $alloc:expr, $cases:expr, $len:expr;)*) => {
        $(
            proptest! {
                #![proptest_config(cfg($cases))]
                #[test]
                fn $name(ops in ops($scale, $len)) {
                    run::<$v>($alloc, &ops);
                }
            }
        )*
    };
}

model_tests! {
    dense_regular: u64, Scale::Dense, false, 128, 400;
    dense_alloc: u64, Scale::Dense, true, 128, 400;
    sparse_regular: u64, Scale::Sparse, false, 96, 400;
    sparse_alloc: u64, Scale::Sparse, true, 96, 400;
    near_max_regular: u64, Scale::NearMax, false, 64, 400;
    near_max_alloc: u64, Scale::NearMax, true, 64, 400;
    huge_regular: u64, Scale::Huge, false, 64, 400;
    huge_alloc: u64, Scale::Huge, true, 64, 400;
    mixed_regular: u64, Scale::Mixed, false, 96, 400;
    mixed_alloc: u64, Scale::Mixed, true, 96, 400;
    dense_big_regular: Big, Scale::Dense, false, 32, 300;
    dense_big_alloc: Big, Scale::Dense, true, 32, 300;
    sparse_box_regular: Box<u64>, Scale::Sparse, false, 24, 300;
    mixed_box_alloc: Box<u64>, Scale::Mixed, true, 24, 300;
    dense_unit_regular: (), Scale::Dense, false, 24, 300;
    mixed_unit_alloc: (), Scale::Mixed, true, 24, 300;
    dense_u8_alloc: u8, Scale::Dense, true, 24, 300;
}

// Heavier runs: `cargo test -p maple-tree --test model -- --ignored`.
macro_rules! heavy_tests {
    ($($name:ident: $v:ty, $scale:expr, $alloc:expr;)*) => {
        $(
            proptest! {
                #![proptest_config(cfg(500))]
                #[test]
                #[ignore]
                fn $name(ops in ops($scale, 1500)) {
                    run::<$v>($alloc, &ops);
                }
            }
        )*
    };
}

heavy_tests! {
    heavy_dense_regular: u64, Scale::Dense, false;
    heavy_dense_alloc: u64, Scale::Dense, true;
    heavy_sparse_regular: u64, Scale::Sparse, false;
    heavy_sparse_alloc: u64, Scale::Sparse, true;
    heavy_mixed_regular: Big, Scale::Mixed, false;
    heavy_mixed_alloc: Big, Scale::Mixed, true;
}

/// The model itself, on a few hand-computed cases (so a model bug cannot hide
/// a tree bug).
#[test]
fn model_sanity() {
    let mut m = Model::<u64>::new();
    m.insert(10, 19, 1);
    m.insert(15, 15, 2);
    assert_eq!(m.entries(), vec![(10..=14, 1), (15..=15, 2), (16..=19, 1)]);
    assert_eq!(m.try_insert(0, 10, 3), Err(10..=14));
    assert_eq!(m.try_insert(0, 9, 3), Ok(()));
    assert_eq!(m.remove(12), Some((10..=14, 1)));
    assert_eq!(m.find_gap(5, 0, MAX), Some(10));
    assert_eq!(m.find_gap(6, 0, MAX), Some(20));
    assert_eq!(m.find_gap_rev(6, 0, MAX), Some(MAX - 5));
    assert_eq!(m.find_gap_rev(5, 0, 19), Some(10));
    assert_eq!(m.find_gap(MAX, 0, MAX), None);
    assert_eq!(m.find_gap(MAX - 19, 0, MAX), Some(20));
    assert_eq!(m.gaps_within(0, MAX), vec![(10, 14), (20, MAX)]);
    m.remove_range(16, 16);
    assert_eq!(m.entries(), vec![(0..=9, 3), (15..=15, 2), (17..=19, 1)]);
    assert_eq!(m.range(16, 17), vec![(17..=19, 1)]);
    assert_eq!(m.next_after(15).map(|x| x.0), Some(17..=19));
    assert_eq!(m.prev_before(17).map(|x| x.0), Some(15..=15));
    assert_eq!(m.gap_at(16), (16, 16));
    let mut e = Model::<u64>::new();
    assert_eq!(e.find_gap(MAX, 0, MAX), Some(0));
    assert_eq!(e.find_gap_rev(MAX, 0, MAX), Some(1));
    e.insert(0, MAX, 9);
    let calls = e.store_with(5, 5, Some(1), &mut |v, r| v + r.start());
    assert_eq!(calls, 2);
    assert_eq!(e.entries(), vec![(0..=4, 9), (5..=5, 1), (6..=MAX, 15)]);
    assert_eq!(e.min_slots(), 3);
}
