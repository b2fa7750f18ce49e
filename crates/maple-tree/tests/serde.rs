//! The `serde` feature: round trips through JSON, the bulk build on
//! deserialize, and errors (not panics) for reversed or overlapping input.
#![cfg(feature = "serde")]

mod common;

use common::*;
use maple_tree::MapleTree;
use proptest::prelude::*;
use serde::Deserialize;

proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: cases(128), ..Default::default() })]
    #[test]
    fn round_trip(ops in prop::collection::vec((any::<u64>(), 0u64..1000, any::<u32>()), 0..300), alloc in any::<bool>()) {
        let mut t = new_tree(alloc);
        for (a, len, v) in ops {
            t.insert(a..=a.saturating_add(len), v.to_string());
        }
        let json = serde_json::to_string(&t).unwrap();
        let back: MapleTree<String> = serde_json::from_str(&json).unwrap();
        back.validate().unwrap();
        prop_assert_eq!(&back, &t);
        prop_assert!(!back.is_alloc());
    }
}

#[test]
fn the_form_is_a_sequence_of_triples() {
    let mut t = MapleTree::new();
    t.insert(0..=9, 'a');
    t.insert(u64::MAX..=u64::MAX, 'b');
    let json = serde_json::to_string(&t).unwrap();
    assert_eq!(
        json,
        r#"[[0,9,"a"],[18446744073709551615,18446744073709551615,"b"]]"#
    );
    let empty: MapleTree<char> = serde_json::from_str("[]").unwrap();
    assert!(empty.is_empty());
}

#[test]
fn out_of_order_input_that_does_not_overlap_is_accepted() {
    let t: MapleTree<u8> =
        serde_json::from_str("[[0,9,1],[100,109,2],[20,29,3],[10,19,4]]").unwrap();
    t.validate().unwrap();
    assert_eq!(
        t.iter()
            .map(|(r, v)| (*r.start(), *r.end(), *v))
            .collect::<Vec<_>>(),
        [(0, 9, 1), (10, 19, 4), (20, 29, 3), (100, 109, 2)]
    );
}

#[test]
fn bad_input_is_an_error() {
    for (json, why) in [
        ("[[5,4,0]]", "reversed"),
        ("[[0,9,0],[30,20,0]]", "reversed"),
        ("[[0,9,0],[9,19,0]]", "overlaps"),
        ("[[0,18446744073709551615,0],[7,7,0]]", "overlaps"),
        ("[[50,59,0],[0,9,0],[5,5,0]]", "overlaps"),
        ("[[0,9]]", ""),
        ("[[0,9,300]]", ""),
        ("{\"a\":1}", ""),
        ("[[-1,9,0]]", ""),
    ] {
        let err = serde_json::from_str::<MapleTree<u8>>(json).unwrap_err();
        assert!(err.to_string().contains(why), "{json}: {err}");
    }
}

/// An error half way drops every value deserialized so far (no leak: the
/// bulk build is finished and dropped), which valgrind and this counter see.
#[test]
fn errors_drop_what_was_read() {
    use std::sync::atomic::{AtomicIsize, Ordering};
    static LIVE: AtomicIsize = AtomicIsize::new(0);
    #[derive(Debug)]
    struct Counted;
    impl<'de> Deserialize<'de> for Counted {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            u8::deserialize(d)?;
            LIVE.fetch_add(1, Ordering::SeqCst);
            Ok(Counted)
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let mut json = String::from("[");
    for i in 0..500u64 {
        json.push_str(&format!("[{},{},1],", i * 10, i * 10 + 5));
    }
    json.push_str("[3,2,1]]");
    assert!(serde_json::from_str::<MapleTree<Counted>>(&json).is_err());
    assert_eq!(LIVE.load(Ordering::SeqCst), 0);
    json.truncate(json.len() - "[3,2,1]]".len());
    json.push_str("[1,\"x\"]]");
    assert!(serde_json::from_str::<MapleTree<Counted>>(&json).is_err());
    assert_eq!(LIVE.load(Ordering::SeqCst), 0);
}

#[test]
fn allocation_trees_through_deserialize_with() {
    #[derive(serde::Serialize, Deserialize)]
    struct Space {
        #[serde(deserialize_with = "maple_tree::serde::deserialize_alloc")]
        vmas: MapleTree<u32>,
    }
    let mut vmas = MapleTree::new_alloc();
    for i in 0..1000u64 {
        vmas.insert(i * 0x2000..i * 0x2000 + 0x1000, i as u32);
    }
    let json = serde_json::to_string(&Space { vmas }).unwrap();
    let back: Space = serde_json::from_str(&json).unwrap();
    assert!(back.vmas.is_alloc());
    back.vmas.validate().unwrap();
    assert_eq!(back.vmas.len(), 1000);
    assert_eq!(back.vmas.find_gap(0x1000, ..), Some(0x1000));
}
