//! Every view of a tree prints itself with `Debug`, as `BTreeMap`'s do: the
//! iterators the entries they have left (and only those), the cursors and
//! entries where they stand. Also `into_keys` and `into_values`.

use maple_tree::{Entry, MapleTree, RcuMapleTree};
use std::rc::Rc;

/// Entries `10..=14`, `20..=24`, `30..=34` with values 1, 2, 3.
fn tree() -> MapleTree<u32> {
    let mut t = MapleTree::new();
    for i in 1..=3 {
        t.insert(10 * u64::from(i)..=10 * u64::from(i) + 4, i);
    }
    t
}

#[test]
fn iterators_print_what_they_have_left() {
    let mut t = tree();
    let mut it = t.iter();
    assert_eq!(
        format!("{it:?}"),
        "[(10..=14, 1), (20..=24, 2), (30..=34, 3)]"
    );
    it.next();
    it.next_back();
    assert_eq!(format!("{it:?}"), "[(20..=24, 2)]");
    // Printing does not move it.
    assert_eq!(it.next(), Some((20..=24, &2)));
    assert_eq!(format!("{it:?}"), "[]");

    let mut range = t.range(12..=21);
    assert_eq!(format!("{range:?}"), "[(10..=14, 1), (20..=24, 2)]");
    range.next_back();
    assert_eq!(format!("{range:?}"), "[(10..=14, 1)]");

    let mut keys = t.keys();
    keys.next();
    assert_eq!(format!("{keys:?}"), "[20..=24, 30..=34]");
    let mut values = t.values();
    values.next_back();
    assert_eq!(format!("{values:?}"), "[1, 2]");
    let mut gaps = t.gaps(0..=40);
    gaps.next();
    assert_eq!(format!("{gaps:?}"), "[15..=19, 25..=29, 35..=40]");

    let mut it = t.iter_mut();
    let first = it.next().unwrap().1;
    *first += 10; // a value handed out stays usable beside the print
    assert_eq!(format!("{it:?}"), "[(20..=24, 2), (30..=34, 3)]");
    let mut range = t.range_mut(20..);
    range.next();
    assert_eq!(format!("{range:?}"), "[(30..=34, 3)]");
    let mut values = t.values_mut();
    values.next_back();
    assert_eq!(format!("{values:?}"), "[11, 2]");

    let mut owned = t.into_iter();
    owned.next();
    assert_eq!(format!("{owned:?}"), "[(20..=24, 2), (30..=34, 3)]");
    owned.next_back();
    assert_eq!(format!("{owned:?}"), "[(20..=24, 2)]");
}

#[test]
fn cursors_and_entries_print_where_they_stand() {
    let mut t = tree();
    let c = t.cursor(22);
    assert_eq!(
        format!("{c:?}"),
        "Cursor { index: 22, range: 20..=24, value: Some(2) }"
    );
    let c = t.cursor(16);
    assert_eq!(
        format!("{c:?}"),
        "Cursor { index: 16, range: 15..=19, value: None }"
    );
    let c = t.cursor_mut(31);
    assert_eq!(
        format!("{c:?}"),
        "CursorMut { index: 31, range: 30..=34, value: Some(3) }"
    );
    let e = t.entry(12);
    assert_eq!(
        format!("{e:?}"),
        "Occupied(OccupiedEntry { index: 12, range: 10..=14, value: 1 })"
    );
    assert!(matches!(e, Entry::Occupied(_)));
    let e = t.entry(40);
    assert_eq!(
        format!("{e:?}"),
        format!(
            "Vacant(VacantEntry {{ index: 40, range: 35..={} }})",
            u64::MAX
        )
    );
    let mut extract = t.extract_if(0..=100, |_, v| *v == 2);
    assert_eq!(
        format!("{extract:?}"),
        "ExtractIf { unvisited: Some(0..=100), .. }"
    );
    assert_eq!(extract.next(), Some((20..=24, 2)));
    assert_eq!(
        format!("{extract:?}"),
        "ExtractIf { unvisited: Some(25..=100), .. }"
    );
    assert_eq!(extract.next(), None);
    assert_eq!(format!("{extract:?}"), "ExtractIf { unvisited: None, .. }");
}

#[test]
fn the_concurrent_tree_and_its_guards_print_as_the_tree_does() {
    let t = RcuMapleTree::from(tree());
    let expected = "{0xa..=0xe: 1, 0x14..=0x18: 2, 0x1e..=0x22: 3}";
    assert_eq!(format!("{:?}", tree()), expected);
    assert_eq!(format!("{t:?}"), expected);
    assert_eq!(format!("{:?}", t.read()), expected);
    assert_eq!(format!("{:?}", t.write()), expected);
}

#[test]
fn into_keys_and_into_values_take_the_tree() {
    let live = Rc::new(());
    let mut t = MapleTree::new();
    for i in 0..100u64 {
        t.try_insert(3 * i..=3 * i + 1, (i, Rc::clone(&live)))
            .unwrap();
    }
    let mut keys = t.into_keys();
    assert_eq!(keys.len(), 100);
    assert_eq!(keys.next(), Some(0..=1));
    assert_eq!(keys.next_back(), Some(297..=298));
    // The two values passed are dropped already.
    assert_eq!(Rc::strong_count(&live), 1 + 98);
    assert_eq!(
        keys.by_ref().take(3).collect::<Vec<_>>(),
        [3..=4, 6..=7, 9..=10]
    );
    drop(keys); // drops the 95 values left
    assert_eq!(Rc::strong_count(&live), 1);

    let t: MapleTree<String> = (0..50u64)
        .map(|i| (10 * i..=10 * i + 9, i.to_string()))
        .collect();
    let mut values = t.into_values();
    assert_eq!(values.next_back().as_deref(), Some("49"));
    assert_eq!(
        format!("{:?}", values.by_ref().skip(47).collect::<Vec<_>>()),
        r#"["47", "48"]"#
    );
    assert_eq!(values.len(), 0);
    let values = MapleTree::from_iter([(0..=1, 'x'), (5..=6, 'y')]).into_values();
    assert_eq!(format!("{values:?}"), "['x', 'y']");
    let keys = MapleTree::from_iter([(0..=1, 'x'), (5..=6, 'y')]).into_keys();
    assert_eq!(format!("{keys:?}"), "[0..=1, 5..=6]");
}
