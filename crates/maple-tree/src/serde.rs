//! `serde` support (feature `serde`): a tree is a sequence of
//! `(first, last, value)` triples, in order.
//!
//! Deserializing builds the tree bottom-up with the same bulk build as
//! `FromIterator` while the triples come in ascending order; triples out of
//! order are stored one by one. A reversed triple (`first > last`) or one that
//! overlaps an earlier triple is an error, never a panic or a silent
//! overwrite.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use maple_tree::MapleTree;
//!
//! let mut t = MapleTree::new();
//! t.insert(0x1000..=0x1fff, "text".to_string());
//! let json = serde_json::to_string(&t).unwrap();
//! assert_eq!(json, r#"[[4096,8191,"text"]]"#);
//! let back: MapleTree<String> = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, t);
//! assert!(serde_json::from_str::<MapleTree<u8>>("[[5,4,0]]").is_err());
//! # }
//! ```

use crate::tree::MapleTree;
use crate::write::Bulk;
use ::serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
use ::serde::ser::{Serialize, SerializeSeq, Serializer};
use core::fmt;
use core::marker::PhantomData;

impl<V: Serialize> Serialize for MapleTree<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for (range, value) in self.iter() {
            seq.serialize_element(&(range.start(), range.end(), value))?;
        }
        seq.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for MapleTree<V> {
    /// Builds a regular tree; see [`deserialize_alloc`] for an allocation
    /// tree.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(TreeVisitor {
            alloc: false,
            _values: PhantomData,
        })
    }
}

/// Deserializes an allocation tree ([`MapleTree::new_alloc`]) from the same
/// form, for `#[serde(deserialize_with = "maple_tree::serde::deserialize_alloc")]`.
///
/// # Errors
/// As [`MapleTree`]'s `Deserialize`: a reversed or overlapping triple.
pub fn deserialize_alloc<'de, D, V>(deserializer: D) -> Result<MapleTree<V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    deserializer.deserialize_seq(TreeVisitor {
        alloc: true,
        _values: PhantomData,
    })
}

struct TreeVisitor<V> {
    alloc: bool,
    _values: PhantomData<fn() -> V>,
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for TreeVisitor<V> {
    type Value = MapleTree<V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (first, last, value) with first <= last, not overlapping")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MapleTree<V>, A::Error> {
        let empty = if self.alloc {
            MapleTree::new_alloc()
        } else {
            MapleTree::new()
        };
        let mut bulk = BuildGuard(Some(Bulk::new(empty)));
        loop {
            let Some((first, last, value)) = seq.next_element::<(u64, u64, V)>()? else {
                return Ok(bulk.finish());
            };
            check_order(first, last)?;
            let b = bulk.0.as_mut().expect("bulk build taken only at the end");
            if !b.accepts(first) {
                let mut tree = bulk.finish();
                store_new(&mut tree, first, last, value)?;
                while let Some((first, last, value)) = seq.next_element::<(u64, u64, V)>()? {
                    check_order(first, last)?;
                    store_new(&mut tree, first, last, value)?;
                }
                return Ok(tree);
            }
            b.push(first, last, value);
        }
    }
}

/// A bulk build that is finished (so that its values are dropped, not
/// leaked) also when deserializing stops with an error or a panic half way.
struct BuildGuard<V>(Option<Bulk<V>>);

impl<V> BuildGuard<V> {
    fn finish(&mut self) -> MapleTree<V> {
        self.0.take().expect("bulk build finished once").finish()
    }
}

impl<V> Drop for BuildGuard<V> {
    fn drop(&mut self) {
        if let Some(bulk) = self.0.take() {
            drop(bulk.finish());
        }
    }
}

fn check_order<E: Error>(first: u64, last: u64) -> Result<(), E> {
    if first > last {
        return Err(E::custom(format_args!(
            "reversed range {first:#x}..={last:#x}"
        )));
    }
    Ok(())
}

/// Stores a triple that came out of order, refusing to overwrite.
fn store_new<V, E: Error>(
    tree: &mut MapleTree<V>,
    first: u64,
    last: u64,
    value: V,
) -> Result<(), E> {
    tree.try_insert(first..=last, value).map_err(|e| {
        E::custom(format_args!(
            "range {first:#x}..={last:#x} overlaps {:#x}..={:#x}",
            e.occupied.start(),
            e.occupied.end()
        ))
    })
}
