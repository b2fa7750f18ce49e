//! Which types may cross threads: the tree's iterators, cursors and entries
//! are `Send` and `Sync` exactly when the tree reference they stand for is,
//! as for `BTreeMap`'s. Most checks are at compile time (this file does not
//! build if a bound is missing or too loose); the tests use them across
//! threads.

use maple_tree::{
    Cursor, CursorMut, Displaced, DisplacedIntoIter, Entry, ExtractIf, Gaps, Inline, IntoIter,
    IntoKeys, IntoValues, Iter, IterMut, Keys, MapleTree, OccupiedEntry, Range, RangeMut,
    RcuMapleTree, ReadGuard, VacantEntry, Values, ValuesMut,
};
use std::cell::Cell;
use std::ops::RangeInclusive;
use std::rc::Rc;
use std::sync::MutexGuard;

fn is_send<T: Send>() {}
fn is_sync<T: Sync>() {}

/// Fails to build if `$t` is `$tr`: with the bound met, both impls apply
/// and the `_` below is ambiguous.
macro_rules! assert_not {
    ($tr:path: $($t:ty),+ $(,)?) => {$(
        const _: fn() = || {
            trait Ambiguous<A> {
                fn item() {}
            }
            impl<T: ?Sized> Ambiguous<()> for T {}
            impl<T: ?Sized + $tr> Ambiguous<u8> for T {}
            let _ = <$t as Ambiguous<_>>::item;
        };
    )+};
}

/// A value that is `Send` but not `Sync`.
type SendOnly = Cell<u8>;
/// A value that is `Sync` but not `Send`.
type SyncOnly = MutexGuard<'static, u8>;
/// A value that is neither.
type Neither = Rc<u8>;
type Pred<V> = fn(&RangeInclusive<u64>, &mut V) -> bool;

/// Views that only read the tree, like `&MapleTree<V>`: `Send` and `Sync`
/// when `V: Sync`.
#[test]
fn shared_views_follow_a_shared_borrow() {
    fn both<V: Sync + 'static>() {
        is_send::<Iter<'static, V>>();
        is_sync::<Iter<'static, V>>();
        is_send::<Range<'static, V>>();
        is_sync::<Range<'static, V>>();
        is_send::<Keys<'static, V>>();
        is_sync::<Keys<'static, V>>();
        is_send::<Values<'static, V>>();
        is_sync::<Values<'static, V>>();
        is_send::<Cursor<'static, V>>();
        is_sync::<Cursor<'static, V>>();
        is_send::<Gaps<'static, V>>();
        is_sync::<Gaps<'static, V>>();
    }
    both::<u64>();
    both::<SyncOnly>();
}
assert_not!(Send: Iter<'static, SendOnly>, Range<'static, SendOnly>, Cursor<'static, SendOnly>);
assert_not!(Sync: Iter<'static, SendOnly>, Range<'static, SendOnly>, Cursor<'static, SendOnly>);
assert_not!(Send: Keys<'static, Neither>, Values<'static, Neither>, Gaps<'static, Neither>);

/// Views that may write, or own, like `&mut MapleTree<V>` or the tree:
/// `Send` when `V: Send`, `Sync` when `V: Sync`.
#[test]
fn exclusive_views_follow_an_exclusive_borrow() {
    fn sends<V: Send + 'static>() {
        is_send::<IterMut<'static, V>>();
        is_send::<RangeMut<'static, V>>();
        is_send::<ValuesMut<'static, V>>();
        is_send::<IntoIter<V>>();
        is_send::<IntoKeys<V>>();
        is_send::<IntoValues<V>>();
        is_send::<CursorMut<'static, V>>();
        is_send::<Entry<'static, V>>();
        is_send::<OccupiedEntry<'static, V>>();
        is_send::<VacantEntry<'static, V>>();
        is_send::<ExtractIf<'static, V, Pred<V>>>();
        is_send::<Displaced<V>>();
        is_send::<DisplacedIntoIter<V>>();
        is_send::<MapleTree<V>>();
    }
    fn shares<V: Sync + 'static>() {
        is_sync::<IterMut<'static, V>>();
        is_sync::<RangeMut<'static, V>>();
        is_sync::<ValuesMut<'static, V>>();
        is_sync::<IntoIter<V>>();
        is_sync::<IntoKeys<V>>();
        is_sync::<IntoValues<V>>();
        is_sync::<CursorMut<'static, V>>();
        is_sync::<Entry<'static, V>>();
        is_sync::<OccupiedEntry<'static, V>>();
        is_sync::<VacantEntry<'static, V>>();
        is_sync::<ExtractIf<'static, V, Pred<V>>>();
        is_sync::<MapleTree<V>>();
    }
    sends::<u64>();
    sends::<SendOnly>();
    shares::<u64>();
    shares::<SyncOnly>();
}
assert_not!(Send: IterMut<'static, SyncOnly>, IntoIter<SyncOnly>, CursorMut<'static, SyncOnly>);
assert_not!(Send: Entry<'static, SyncOnly>, ExtractIf<'static, SyncOnly, Pred<SyncOnly>>);
assert_not!(Sync: IterMut<'static, SendOnly>, IntoIter<SendOnly>, CursorMut<'static, SendOnly>);
assert_not!(Send: RangeMut<'static, Neither>, ValuesMut<'static, Neither>, MapleTree<Neither>);
assert_not!(Send: IntoKeys<SyncOnly>, IntoValues<SyncOnly>);
assert_not!(Sync: IntoKeys<SendOnly>, IntoValues<SendOnly>);

// A read guard pins the epoch of the thread that took it: it stays there.
assert_not!(Send: ReadGuard<'static, u64>);
assert_not!(Sync: ReadGuard<'static, u64>);
assert_not!(Sync: RcuMapleTree<SendOnly>);
// Values kept inside the nodes follow the same rules.
assert_not!(Send: ReadGuard<'static, u64, Inline>);
assert_not!(Send: RcuMapleTree<Neither, Inline>);
assert_not!(Sync: RcuMapleTree<Neither, Inline>);
const _: fn() = || {
    is_send::<RcuMapleTree<u64, Inline>>();
    is_sync::<RcuMapleTree<u64, Inline>>();
};

/// Entries in the trees below: several levels high, except under Miri
/// (which checks the threads for data races), where that takes too long.
const N: u64 = if cfg!(miri) { 200 } else { 2_000 };

fn tree(n: u64) -> MapleTree<u64> {
    let mut t = MapleTree::new();
    for i in 0..n {
        t.insert(10 * i..=10 * i + 4, i);
    }
    t
}

#[test]
fn shared_iterators_and_cursors_run_on_other_threads() {
    let t = tree(N);
    let expected: u64 = (0..N).sum();
    // One range per thread, each iterator made here and moved there.
    let (low, high) = (t.range(..5 * N), t.range(5 * N..));
    let mut cursor = t.cursor(10 * (N - 1));
    let (a, b, c) = std::thread::scope(|s| {
        let a = s.spawn(move || low.map(|(_, v)| *v).sum::<u64>());
        let b = s.spawn(move || high.map(|(_, v)| *v).sum::<u64>());
        let c = s.spawn(move || {
            let mut seen = 0;
            while let Some((_, v)) = cursor.prev_entry() {
                seen += v;
            }
            seen
        });
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    assert_eq!(a + b, expected);
    assert_eq!(c, expected - (N - 1));
    // A shared iterator, read from two threads at once.
    let it = t.iter();
    let lens = std::thread::scope(|s| {
        let x = s.spawn(|| it.len());
        let y = s.spawn(|| it.clone().count());
        (x.join().unwrap(), y.join().unwrap())
    });
    assert_eq!(lens, (N as usize, N as usize));
}

#[test]
fn exclusive_iterators_and_entries_run_on_other_threads() {
    let mut t = tree(N);
    let values = t.iter_mut();
    std::thread::scope(|s| {
        s.spawn(move || values.for_each(|(_, v)| *v *= 2));
    });
    assert!(t.iter().all(|(r, v)| *v == *r.start() / 10 * 2));

    let entry = t.entry(3);
    std::thread::scope(|s| {
        s.spawn(move || match entry {
            Entry::Vacant(_) => panic!("index 3 is stored"),
            Entry::Occupied(o) => *o.into_mut() = 7,
        });
    });
    assert_eq!(t.get(3), Some(&7));

    let owned = std::thread::spawn(move || t.into_iter().map(|(_, v)| v).sum::<u64>());
    assert_eq!(
        owned.join().unwrap(),
        7 + (1..N).map(|i| 2 * i).sum::<u64>()
    );
}

/// A reader stores through a small value with interior mutability while the
/// writer rebuilds the leaf around it: the concurrent tree's default storage
/// keeps every value in a box of its own (an atomic is not `Frozen`, so it
/// cannot be kept inline), so the store reaches the one value later readers see
/// and never races with the writer's copy of the leaf (Miri checks).
#[test]
fn an_rcu_reader_stores_through_an_atomic_while_the_writer_rebuilds() {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let fresh = |v: &AtomicU64, _| AtomicU64::new(v.load(Relaxed));
    let tree: RcuMapleTree<AtomicU64> = RcuMapleTree::new();
    for k in 0..4u64 {
        tree.write()
            .insert_with(k * 10..=k * 10, AtomicU64::new(k), fresh);
    }
    std::thread::scope(|s| {
        let t = &tree;
        s.spawn(move || {
            let r = t.read();
            let a = r.get(0).unwrap();
            for i in 1..=20 {
                a.store(100 + i, Relaxed);
                std::thread::yield_now();
            }
        });
        for k in 0..12u64 {
            let at = 5 + k * 10;
            tree.write().insert_with(at..=at, AtomicU64::new(0), fresh);
            std::thread::yield_now();
        }
    });
    assert_eq!(tree.read().get(0).unwrap().load(Relaxed), 120);
}

/// A reader reads a small value kept inside the nodes (`Inline`) again and
/// again while the writer rebuilds the leaf around it, copying the value:
/// both only read it, so the copies never race (Miri checks), and the
/// reference stays valid and unchanged until the guard goes.
#[test]
fn an_rcu_reader_holds_an_inline_value_while_the_writer_rebuilds() {
    let tree = RcuMapleTree::new_inline();
    for k in 0..4u64 {
        tree.write().insert(k * 10..=k * 10, k + 100);
    }
    std::thread::scope(|s| {
        let t = &tree;
        s.spawn(move || {
            let r = t.read();
            let a: &u64 = r.get(10).unwrap();
            for _ in 0..20 {
                assert_eq!(*std::hint::black_box(a), 101);
                std::thread::yield_now();
            }
        });
        for k in 0..12u64 {
            let at = 5 + k * 10;
            tree.write().insert(at..=at, k);
            std::thread::yield_now();
        }
    });
    assert_eq!(tree.read().get(10), Some(&101));
    assert_eq!(tree.read().len(), 16);
}

/// A reader looks up an index of a leaf while the writer appends to that
/// leaf in place (the kernel's `mas_wr_append`): the writer stores pivots
/// past the count the reader has seen, so the reader must read only the
/// pivots it needs, never the whole array (Miri checks the two threads for
/// data races).
#[test]
fn an_rcu_reader_looks_up_while_the_writer_appends() {
    let tree = RcuMapleTree::new();
    tree.write().insert(0..=0, 0u64);
    std::thread::scope(|s| {
        let t = &tree;
        s.spawn(move || {
            for _ in 0..20 {
                let r = t.read();
                assert!(matches!(r.get(3), None | Some(&1)));
                std::thread::yield_now();
            }
        });
        for k in 1..12u64 {
            tree.write().insert(k * 2..=k * 2 + 1, k);
            std::thread::yield_now();
        }
    });
    assert_eq!(tree.read().len(), 12);
}

#[test]
fn an_rcu_read_is_iterated_on_another_thread_while_its_guard_stays() {
    let t = RcuMapleTree::new();
    for i in 0..N {
        t.write().insert(4 * i..=4 * i + 1, i);
    }
    let guard = t.read();
    let entries = guard.iter();
    let sum = std::thread::scope(|s| {
        let reader = s.spawn(move || entries.map(|(_, v)| *v).sum::<u64>());
        // The writer replaces entries meanwhile; the read sees one version
        // of each leaf, all of them from before or after.
        for i in 0..N {
            t.write().insert(4 * i..=4 * i + 1, i);
        }
        reader.join().unwrap()
    });
    assert_eq!(sum, (0..N).sum::<u64>());
    drop(guard);
}
