//! What the fuzz targets share: fuzzer-chosen keys and ranges shaped so that
//! operations collide often, the value types, and the reference model of the
//! tree's integration tests (included by path, so there is one model).

use arbitrary::{Arbitrary, Unstructured};
use core::fmt::Debug;
use core::ops::RangeInclusive;
use maple_tree::{MapleTree, NoSpace};

#[path = "../../crates/maple-tree/tests/common/model.rs"]
mod model;
pub use model::Model;

/// An index: mostly from a small window, so that entries overlap and nodes
/// fill and split, sometimes spread wider, sometimes at the top of the space.
#[derive(Clone, Copy, Debug)]
pub struct Key(pub u64);

impl<'a> Arbitrary<'a> for Key {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let x = u16::arbitrary(u)?;
        let low = u64::from(x & 0x3fff);
        Ok(Key(match x >> 14 {
            0 | 1 => low % 1024,
            2 => low * 97,
            _ => u64::MAX - (low & 0xff),
        }))
    }
}

/// A non-empty inclusive range: a start and a length, or the whole space.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub first: u64,
    pub last: u64,
}

impl<'a> Arbitrary<'a> for Range {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let first = Key::arbitrary(u)?.0;
        let len = u8::arbitrary(u)?;
        Ok(match len {
            255 => Range {
                first: 0,
                last: u64::MAX,
            },
            254 => Range {
                first,
                last: u64::MAX,
            },
            _ => Range {
                first,
                last: first.saturating_add(u64::from(len % 64)),
            },
        })
    }
}

/// A gap size: small, or now and then close to the whole space.
#[derive(Clone, Copy, Debug)]
pub struct Size(pub u64);

impl<'a> Arbitrary<'a> for Size {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let x = u8::arbitrary(u)?;
        Ok(Size(if x >= 250 {
            u64::MAX - u64::from(x - 250)
        } else {
            1 + u64::from(x % 40)
        }))
    }
}

/// A value type the targets can make from fuzzer bytes and cut
/// deterministically (`insert_with`).
pub trait Val: Clone + PartialEq + Debug {
    fn make(x: u16) -> Self;
    /// A number identifying the value (what `dup_with` maps it to).
    fn tag(&self) -> u64;
    /// The value a surviving piece of a cut entry gets.
    fn split_of(&self, piece: &RangeInclusive<u64>) -> Self;
}

fn mix(x: u64, piece: &RangeInclusive<u64>) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ piece.start().rotate_left(17) ^ piece.end()
}

/// Inline in the slot.
impl Val for u64 {
    fn make(x: u16) -> Self {
        u64::from(x)
    }
    fn tag(&self) -> u64 {
        *self
    }
    fn split_of(&self, piece: &RangeInclusive<u64>) -> Self {
        mix(*self, piece)
    }
}

/// Larger than a slot (boxed by the tree) and owning heap memory.
impl Val for String {
    fn make(x: u16) -> Self {
        format!("{x}")
    }
    fn tag(&self) -> u64 {
        self.bytes()
            .fold(0, |h, b| h.wrapping_mul(31) ^ u64::from(b))
    }
    fn split_of(&self, piece: &RangeInclusive<u64>) -> Self {
        format!("{}", mix(self.tag(), piece) % 100_000)
    }
}

/// The tree validates and holds exactly the model's entries.
#[track_caller]
pub fn check_same<V: Val>(tree: &MapleTree<V>, model: &Model<V>) {
    if let Err(e) = tree.validate() {
        panic!("validate(): {e}\n{}", tree.dump());
    }
    assert_eq!(tree.len(), model.len(), "len()");
    let got: Vec<_> = tree.iter().map(|(r, v)| (r, v.clone())).collect();
    assert_eq!(got, model.entries(), "entries");
}

/// Checks the result of `alloc(size, r, make(v))` (`alloc_rev` when `rev`)
/// against the model, whose lowest (highest) fit it must be, or which must
/// have none (and then the value comes back); records the new entry in the
/// model.
#[track_caller]
pub fn check_alloc<V: Val>(
    got: Result<u64, NoSpace<V>>,
    model: &mut Model<V>,
    size: &Size,
    r: &Range,
    v: u16,
    rev: bool,
) {
    let want = if rev {
        model.find_gap_rev(size.0, r.first, r.last)
    } else {
        model.find_gap(size.0, r.first, r.last)
    };
    match (got, want) {
        (Ok(s), Some(w)) => {
            assert_eq!(s, w, "alloc(rev: {rev}) start");
            model.insert(s, s + (size.0 - 1), V::make(v));
        }
        (Err(e), None) => assert_eq!(e.value, V::make(v), "alloc: value handed back"),
        (got, want) => panic!("alloc(rev: {rev}): tree {:?}, model {want:?}", got.ok()),
    }
}
