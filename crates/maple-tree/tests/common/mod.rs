//! Shared helpers of the integration tests: the reference model
//! (`model.rs`), the random generator (`rng.rs`), value types, range-form
//! helpers and checkers. Every test compares the tree with the model.
#![allow(dead_code)]

mod model;
mod rng;
// Not every test file uses both.
#[allow(unused_imports)]
pub use model::{Model, MAX};
#[allow(unused_imports)]
pub use rng::Rng;

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds, RangeInclusive};

use maple_tree::{MapleTree, Stats};

/// Number of proptest cases: `default`, or `PROPTEST_CASES` when it is set
/// (the valgrind script lowers it).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// `native` normally, `miri` under Miri, which interprets every step (a
/// loop of a few thousand stores takes minutes there): pick a `miri` size
/// that still builds the shapes the test is about (height 3 needs about 150
/// entries).
pub const fn sized(native: u64, miri: u64) -> u64 {
    if cfg!(miri) {
        miri
    } else {
        native
    }
}

/// Both kinds of tree.
pub type Maker<V> = fn() -> MapleTree<V>;

pub fn kinds<V>() -> [(&'static str, Maker<V>); 2] {
    [("regular", MapleTree::new), ("alloc", MapleTree::new_alloc)]
}

pub fn new_tree<V>(alloc: bool) -> MapleTree<V> {
    if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    }
}

/// Converts any `RangeBounds<u64>` to an inclusive pair; `None` when empty.
pub fn to_incl(r: &impl RangeBounds<u64>) -> Option<(u64, u64)> {
    let a = match r.start_bound() {
        Bound::Included(&a) => a,
        Bound::Excluded(&a) => a.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let b = match r.end_bound() {
        Bound::Included(&b) => b,
        Bound::Excluded(&b) => b.checked_sub(1)?,
        Bound::Unbounded => MAX,
    };
    (a <= b).then_some((a, b))
}

// ---------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------

/// A value type the model tests can make, split and modify deterministically.
pub trait TestVal: Clone + PartialEq + Debug + 'static {
    fn make(x: u64) -> Self;
    /// The value a surviving piece of a cut entry gets from `insert_with`.
    fn split_of(&self, r: &RangeInclusive<u64>) -> Self;
    /// A modification made through `get_mut` / `iter_mut`.
    fn bump(&mut self);
}

fn mix(x: u64, r: &RangeInclusive<u64>) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ r.start().rotate_left(17) ^ r.end().rotate_left(41) ^ 1
}

impl TestVal for u64 {
    fn make(x: u64) -> Self {
        x
    }
    fn split_of(&self, r: &RangeInclusive<u64>) -> Self {
        mix(*self, r)
    }
    fn bump(&mut self) {
        *self = self.wrapping_add(0x1_0000_0001);
    }
}

/// One byte: stored inline.
impl TestVal for u8 {
    fn make(x: u64) -> Self {
        x as u8
    }
    fn split_of(&self, r: &RangeInclusive<u64>) -> Self {
        mix(*self as u64, r) as u8
    }
    fn bump(&mut self) {
        *self = self.wrapping_add(1);
    }
}

/// Zero-sized.
impl TestVal for () {
    fn make(_: u64) -> Self {}
    fn split_of(&self, _: &RangeInclusive<u64>) -> Self {}
    fn bump(&mut self) {}
}

/// Pointer-sized but owning heap memory (leaks show under valgrind).
impl TestVal for Box<u64> {
    fn make(x: u64) -> Self {
        Box::new(x)
    }
    fn split_of(&self, r: &RangeInclusive<u64>) -> Self {
        Box::new(mix(**self, r))
    }
    fn bump(&mut self) {
        **self = self.wrapping_add(3);
    }
}

/// Larger than a slot: boxed by the tree. Owns heap memory too.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Big {
    pub x: u64,
    pub pad: [u64; 3],
    pub s: String,
}

impl TestVal for Big {
    fn make(x: u64) -> Self {
        Big {
            x,
            pad: [x, !x, x ^ 0x55],
            s: format!("v{x}"),
        }
    }
    fn split_of(&self, r: &RangeInclusive<u64>) -> Self {
        Big::make(mix(self.x, r))
    }
    fn bump(&mut self) {
        self.x = self.x.wrapping_add(7);
        self.pad[0] = self.pad[0].wrapping_add(1);
        self.s.push('+');
    }
}

// ---------------------------------------------------------------------------
// Checkers
// ---------------------------------------------------------------------------

pub fn collect<V: Clone>(t: &MapleTree<V>) -> Vec<(RangeInclusive<u64>, V)> {
    t.iter().map(|(r, v)| (r, v.clone())).collect()
}

/// `validate()` must be Ok; panics with the tree's own message otherwise.
#[track_caller]
pub fn assert_valid<V>(t: &MapleTree<V>, ctx: &dyn Fn() -> String) {
    if let Err(e) = t.validate() {
        panic!("validate() failed {}: {e}  ({e:?})", ctx());
    }
}

/// The tree holds exactly the model's entries, validates, and its stats add up.
#[track_caller]
pub fn assert_same<V: TestVal>(t: &MapleTree<V>, m: &Model<V>, ctx: &dyn Fn() -> String) {
    assert_valid(t, ctx);
    assert_eq!(t.len(), m.len(), "len() {}", ctx());
    assert_eq!(t.is_empty(), m.len() == 0, "is_empty() {}", ctx());
    let got = collect(t);
    let want = m.entries();
    if got != want {
        let first_diff = got.iter().zip(want.iter()).position(|(g, w)| g != w);
        panic!(
            "contents differ {}: tree has {} entries, model {}; first difference at #{:?}: tree {:?} model {:?}",
            ctx(),
            got.len(),
            want.len(),
            first_diff,
            first_diff.and_then(|i| got.get(i)),
            first_diff.and_then(|i| want.get(i)),
        );
    }
    check_stats(t, Some(m), ctx);
}

/// Plausibility of `stats()` (never values taken from the implementation).
#[track_caller]
pub fn check_stats<V: TestVal>(t: &MapleTree<V>, m: Option<&Model<V>>, ctx: &dyn Fn() -> String) {
    let s: Stats = t.stats();
    let c = ctx();
    assert_eq!(s.entries, t.len(), "stats.entries {c}: {s:?}");
    assert_eq!(s.node_size, 256, "stats.node_size {c}");
    let nodes = s.leaves + s.internal + s.alloc_internal;
    assert_eq!(
        s.node_bytes,
        nodes * s.node_size,
        "stats.node_bytes {c}: {s:?}"
    );
    assert!(
        s.reserved_bytes >= s.node_bytes,
        "reserved_bytes < node_bytes {c}: {s:?}"
    );
    if t.is_alloc() {
        assert_eq!(
            s.internal, 0,
            "allocation tree with regular internal nodes {c}: {s:?}"
        );
    } else {
        assert_eq!(
            s.alloc_internal, 0,
            "regular tree with allocation internal nodes {c}: {s:?}"
        );
    }
    let inner = s.internal + s.alloc_internal;
    let fanout: usize = if t.is_alloc() { 10 } else { 16 };
    if s.height == 0 {
        assert_eq!(nodes, 0, "height 0 but nodes {c}: {s:?}");
        // Only an empty tree, or (kernel style) a lone 0..=0 entry in the root pointer.
        let lone_zero = t.len() == 1 && t.get_key_value(0).map(|(r, _)| r) == Some(0..=0);
        assert!(
            t.is_empty() || lone_zero,
            "height 0 with entries {c}: {s:?}"
        );
    } else {
        assert!(s.leaves >= 1, "no leaf {c}: {s:?}");
        if s.height == 1 {
            assert_eq!(
                (s.leaves, inner),
                (1, 0),
                "height 1 must be one leaf {c}: {s:?}"
            );
        } else {
            let h = (s.height - 1) as u32;
            assert!(
                inner >= s.height - 1,
                "fewer internal nodes than levels {c}: {s:?}"
            );
            assert!(
                inner < s.leaves,
                "more internal nodes than leaves {c}: {s:?}"
            );
            // every internal node has 2..=fanout children
            assert!(
                (s.leaves as u128) >= 1u128 << h,
                "too few leaves for the height {c}: {s:?}"
            );
            assert!(
                (s.leaves as u128) <= (fanout as u128).pow(h),
                "too many leaves for the height {c}: {s:?}"
            );
            assert!(
                inner * (fanout - 1) + 1 >= s.leaves,
                "too few internal nodes for the leaves {c}: {s:?}"
            );
        }
    }
    if let Some(m) = m {
        let slots = m.min_slots();
        if s.height >= 1 {
            assert!(
                s.leaves * 16 >= slots,
                "leaves cannot hold {slots} slots {c}: {s:?}"
            );
            // non-root leaves are kept at least a few slots full
            assert!(
                s.leaves <= slots / 2 + 1,
                "{} leaves for only {slots} slots {c}: {s:?}",
                s.leaves
            );
        }
    }
    let vsize = std::mem::size_of::<V>();
    if vsize <= 8 {
        assert_eq!(
            s.boxed_value_bytes, 0,
            "values of {vsize} bytes must be inline {c}: {s:?}"
        );
    } else {
        assert!(
            s.boxed_value_bytes >= t.len() * vsize,
            "boxed_value_bytes too small for {} values of {vsize} bytes {c}: {s:?}",
            t.len()
        );
    }
}

// ---------------------------------------------------------------------------
// Range forms
// ---------------------------------------------------------------------------

/// An inclusive range `a..=b` plus a selector choosing which Rust range syntax
/// expresses it (`a..b`, `a..`, `..=b`, `..`, bounds tuples, ...).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Rg {
    pub a: u64,
    pub b: u64,
    pub form: u8,
}

impl Debug for Rg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}..={:#x}/{:?}", self.a, self.b, self.kind())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RgKind {
    Incl,
    Excl,
    From,
    To,
    ToIncl,
    Full,
    ExclStart,
    ExclBoth,
}

impl Rg {
    pub fn new(a: u64, b: u64) -> Rg {
        assert!(a <= b);
        Rg { a, b, form: 0 }
    }
    pub fn kind(&self) -> RgKind {
        let (a, b) = (self.a, self.b);
        let mut c = vec![RgKind::Incl];
        if b < MAX {
            c.push(RgKind::Excl);
        }
        if b == MAX {
            c.push(RgKind::From);
        }
        if a == 0 && b < MAX {
            c.push(RgKind::To);
        }
        if a == 0 {
            c.push(RgKind::ToIncl);
        }
        if a == 0 && b == MAX {
            c.push(RgKind::Full);
        }
        if a > 0 {
            c.push(RgKind::ExclStart);
        }
        if a > 0 && b < MAX {
            c.push(RgKind::ExclBoth);
        }
        c[self.form as usize % c.len()]
    }
    pub fn incl(&self) -> RangeInclusive<u64> {
        self.a..=self.b
    }
}

/// Runs `$body` with `$r` bound to the Rust range expression `$rg` selects.
#[macro_export]
macro_rules! with_range {
    ($rg:expr, |$r:ident| $body:expr) => {{
        let rg: Rg = $rg;
        match rg.kind() {
            RgKind::Incl => {
                let $r = rg.a..=rg.b;
                $body
            }
            RgKind::Excl => {
                let $r = rg.a..rg.b + 1;
                $body
            }
            RgKind::From => {
                let $r = rg.a..;
                $body
            }
            RgKind::To => {
                let $r = ..rg.b + 1;
                $body
            }
            RgKind::ToIncl => {
                let $r = ..=rg.b;
                $body
            }
            RgKind::Full => {
                let $r = ..;
                $body
            }
            RgKind::ExclStart => {
                let $r = (
                    std::ops::Bound::Excluded(rg.a - 1),
                    std::ops::Bound::Included(rg.b),
                );
                $body
            }
            RgKind::ExclBoth => {
                let $r = (
                    std::ops::Bound::Excluded(rg.a - 1),
                    std::ops::Bound::Excluded(rg.b + 1),
                );
                $body
            }
        }
    }};
}
