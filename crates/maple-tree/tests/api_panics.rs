//! Panic safety of the methods that call user code: `retain`'s and
//! `extract_if`'s predicates, the `split` callbacks of `split_off_with`,
//! `append_with` and `OccupiedEntry::split_with`. After the panic the tree
//! must validate, hold a sensible set of entries, and every value must be
//! dropped exactly once in the end (a live-value counter checks it).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;

use maple_tree::{Entry, MapleTree};

/// A value that counts how many of its kind are alive.
#[derive(Debug)]
struct Live {
    x: u64,
    live: Arc<AtomicIsize>,
}

impl Live {
    fn new(x: u64, live: &Arc<AtomicIsize>) -> Live {
        live.fetch_add(1, Ordering::SeqCst);
        Live {
            x,
            live: live.clone(),
        }
    }
}

impl Clone for Live {
    fn clone(&self) -> Live {
        Live::new(self.x, &self.live)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

fn tree(n: u64, alloc: bool, live: &Arc<AtomicIsize>) -> MapleTree<Live> {
    let mut t = if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    for i in 0..n {
        t.insert_with(
            i * 10..=i * 10 + 4,
            Live::new(i, live),
            |_, _| unreachable!(),
        );
    }
    t
}

fn xs(t: &MapleTree<Live>) -> Vec<u64> {
    t.values().map(|v| v.x).collect()
}

#[test]
fn retain_predicate_panics() {
    for alloc in [false, true] {
        let live = Arc::new(AtomicIsize::new(0));
        let mut t = tree(500, alloc, &live);
        let r = catch_unwind(AssertUnwindSafe(|| {
            t.retain(|_, v| {
                assert!(v.x != 300, "predicate panics at 300");
                v.x % 2 == 0
            })
        }));
        assert!(r.is_err());
        t.validate().unwrap();
        // Odd values below 300 are gone; everything from 300 on is kept.
        let want: Vec<u64> = (0..500).filter(|&x| x >= 300 || x % 2 == 0).collect();
        assert_eq!(xs(&t), want);
        assert_eq!(live.load(Ordering::SeqCst), t.len() as isize);
        drop(t);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn extract_if_predicate_panics() {
    for alloc in [false, true] {
        let live = Arc::new(AtomicIsize::new(0));
        let mut t = tree(500, alloc, &live);
        let mut taken = Vec::new();
        let r = catch_unwind(AssertUnwindSafe(|| {
            for (_, v) in t.extract_if(1000..4000, |_, v| {
                assert!(v.x != 250, "predicate panics at 250");
                v.x % 3 == 0
            }) {
                taken.push(v);
            }
        }));
        assert!(r.is_err());
        t.validate().unwrap();
        let want: Vec<u64> = (0..500)
            .filter(|&x| !((100..250).contains(&x) && x % 3 == 0))
            .collect();
        assert_eq!(xs(&t), want);
        assert_eq!(taken.len(), (100..250).filter(|x| x % 3 == 0).count());
        assert_eq!(
            live.load(Ordering::SeqCst),
            (t.len() + taken.len()) as isize
        );
        drop(t);
        drop(taken);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn split_off_with_callback_panics() {
    for alloc in [false, true] {
        let live = Arc::new(AtomicIsize::new(0));
        let mut t = tree(500, alloc, &live);
        let before = xs(&t);
        let r = catch_unwind(AssertUnwindSafe(|| {
            t.split_off_with(2502, |_, _| panic!("split panics"))
        }));
        assert!(r.is_err());
        t.validate().unwrap();
        assert_eq!(xs(&t), before, "left as it was");
        assert_eq!(live.load(Ordering::SeqCst), 500);
        drop(t);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn append_with_callback_panics() {
    for alloc in [false, true] {
        let live = Arc::new(AtomicIsize::new(0));
        let mut t = tree(200, alloc, &live);
        let mut other = MapleTree::new();
        // The first one lands in a gap, the second cuts an entry.
        other.insert_with(5..=9, Live::new(1000, &live), |_, _| unreachable!());
        other.insert_with(52..=53, Live::new(1001, &live), |_, _| unreachable!());
        other.insert_with(3000.., Live::new(1002, &live), |_, _| unreachable!());
        let r = catch_unwind(AssertUnwindSafe(|| {
            t.append_with(&mut other, |_, _| panic!("split panics"))
        }));
        assert!(r.is_err());
        t.validate().unwrap();
        other.validate().unwrap();
        assert!(other.is_empty());
        assert_eq!(t.len(), 201);
        assert_eq!(t.get(7).map(|v| v.x), Some(1000));
        assert_eq!(t.get(52).map(|v| v.x), Some(5));
        assert_eq!(live.load(Ordering::SeqCst), 201);
        drop(t);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }
}

#[test]
fn entry_split_callback_panics() {
    let live = Arc::new(AtomicIsize::new(0));
    let mut t = tree(100, true, &live);
    let r = catch_unwind(AssertUnwindSafe(|| {
        if let Entry::Occupied(mut e) = t.entry(502) {
            e.split_with(503, |_, _| panic!("split panics"));
        }
    }));
    assert!(r.is_err());
    t.validate().unwrap();
    assert_eq!(
        t.get_key_value(502).map(|(r, v)| (r, v.x)),
        Some((500..=504, 50))
    );
    assert_eq!(live.load(Ordering::SeqCst), 100);
    // A split that works clones nothing and drops nothing.
    if let Entry::Occupied(mut e) = t.entry(502) {
        e.split_with(503, |v, _| Live::new(v.x + 1000, &v.live));
    }
    assert_eq!(live.load(Ordering::SeqCst), 101);
    assert_eq!(t.get(504).map(|v| v.x), Some(1050));
    drop(t);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}

#[test]
fn values_are_dropped_once_by_the_new_methods() {
    let live = Arc::new(AtomicIsize::new(0));
    let mut t = tree(1000, true, &live);
    let high = t.split_off(5002);
    assert_eq!(
        live.load(Ordering::SeqCst),
        1001,
        "one clone for the cut entry"
    );
    let mut high = high;
    t.append(&mut high);
    assert_eq!(live.load(Ordering::SeqCst), 1001);
    t.pop_first();
    t.pop_last();
    t.retain(|_, v| v.x % 2 == 0);
    let n = t.extract_if(.., |_, v| v.x % 4 == 0).count();
    assert!(n > 0);
    assert_eq!(live.load(Ordering::SeqCst), t.len() as isize);
    drop(t);
    assert_eq!(live.load(Ordering::SeqCst), 0);
}
