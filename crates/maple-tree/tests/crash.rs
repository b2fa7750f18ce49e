//! Panic safety: values whose `Clone` or `Drop` panics on the n-th call, and
//! callbacks that panic on the n-th call, driven through every public
//! operation that clones, drops or calls back, at every n up to the number of
//! calls the operation makes, on trees of height 3 or more (so that spanning
//! stores, rebalances and root collapses run).
//!
//! After each caught panic: `validate()` passes; every value in the tree is
//! alive and appears once; no value is alive outside the tree (nothing leaked,
//! nothing dropped twice); and the tree holds either what it held before the
//! call (a panicking `Clone` or callback: nothing happened) or what the call
//! makes of it (a panicking `Drop`: the store took effect first), or, for an
//! operation that works entry by entry (`retain`, `extract_if`, `append`),
//! a state between the two.
//!
//! Every test runs twice: with values of 8 bytes, which the tree keeps in
//! its slot words (`inline_values`), and with larger ones, which it boxes
//! (`boxed_values`). The concurrent tree's writes run with either storage.
//!
//! In the spirit of std's `CrashTestDummy` (btree tests).

use maple_tree::{Entry, Frozen, MapleTree, RcuMapleTree, Storage};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::ops::RangeInclusive;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Trigger {
    Clone,
    Drop,
    Callback,
}

/// Per test thread: which values are alive, and when to panic.
#[derive(Default)]
struct Ledger {
    next_id: u64,
    alive: HashSet<u64>,
    clones: usize,
    drops: usize,
    callbacks: usize,
    panic_at: Option<(Trigger, usize)>,
}

type Contents = Vec<(RangeInclusive<u64>, u64)>;

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
    /// The tree's contents after each step of an operation of several steps.
    static STEPS: RefCell<Vec<Contents>> = const { RefCell::new(Vec::new()) };
}

/// Marks the end of one step of an operation of several steps: a panic
/// later on may leave the tree as it is now.
fn step<const P: usize>(t: &MapleTree<Dummy<P>>) {
    let now = contents(t);
    STEPS.with(|s| s.borrow_mut().push(now));
}

/// Counts a call of `kind` and says whether it must panic.
fn count(kind: Trigger) -> bool {
    LEDGER.with(|l| {
        let mut l = l.borrow_mut();
        let n = match kind {
            Trigger::Clone => {
                l.clones += 1;
                l.clones
            }
            Trigger::Drop => {
                l.drops += 1;
                l.drops
            }
            Trigger::Callback => {
                l.callbacks += 1;
                l.callbacks
            }
        };
        if l.panic_at == Some((kind, n)) {
            l.panic_at = None;
            true
        } else {
            false
        }
    })
}

fn arm(panic_at: Option<(Trigger, usize)>) {
    LEDGER.with(|l| {
        let mut l = l.borrow_mut();
        l.clones = 0;
        l.drops = 0;
        l.callbacks = 0;
        l.panic_at = panic_at;
    });
}

fn calls() -> (usize, usize, usize) {
    LEDGER.with(|l| {
        let l = l.borrow();
        (l.clones, l.drops, l.callbacks)
    })
}

fn alive() -> HashSet<u64> {
    LEDGER.with(|l| l.borrow().alive.clone())
}

/// A value with an identity (each clone gets a new one) and a payload that
/// clones keep. With `PAD` = 0 it is 8 bytes, so the tree keeps it in the
/// slot word; `PAD` > 0 makes it larger than a slot, so the tree boxes it.
#[derive(Debug)]
struct Dummy<const PAD: usize> {
    id: u32,
    payload: u32,
    _pad: [u64; PAD],
}

// The `inline_values` tests below need a value that fits the slot word.
const _: () = assert!(std::mem::size_of::<Dummy<0>>() == 8);

// SAFETY: integers only: nothing in a `Dummy` changes behind a shared
// reference (its ledger is a thread-local elsewhere).
unsafe impl<const PAD: usize> Frozen for Dummy<PAD> {}

impl<const PAD: usize> Dummy<PAD> {
    fn new(payload: u64) -> Self {
        let id = LEDGER.with(|l| {
            let mut l = l.borrow_mut();
            l.next_id += 1;
            let id = l.next_id;
            assert!(l.alive.insert(id));
            id
        });
        Dummy {
            id: u32::try_from(id).expect("fewer than 2^32 values"),
            payload: u32::try_from(payload).expect("payloads fit 32 bits"),
            _pad: [0; PAD],
        }
    }
}

impl<const PAD: usize> Clone for Dummy<PAD> {
    fn clone(&self) -> Self {
        if count(Trigger::Clone) {
            panic!("clone panics on purpose");
        }
        Dummy::new(u64::from(self.payload))
    }
}

impl<const PAD: usize> Drop for Dummy<PAD> {
    fn drop(&mut self) {
        let was_alive = LEDGER.with(|l| l.borrow_mut().alive.remove(&u64::from(self.id)));
        assert!(was_alive, "value {} dropped twice", self.id);
        if count(Trigger::Drop) {
            panic!("drop panics on purpose");
        }
    }
}

/// A callback (split, map, predicate) that panics on its n-th call.
fn callback() {
    if count(Trigger::Callback) {
        panic!("callback panics on purpose");
    }
}

/// The tree's entries as `(range, payload)`.
fn contents<const P: usize>(t: &MapleTree<Dummy<P>>) -> Contents {
    t.iter().map(|(r, v)| (r, u64::from(v.payload))).collect()
}

/// `validate()`, every value alive and once, and nothing else alive.
fn check_sound<const P: usize>(t: &MapleTree<Dummy<P>>, ctx: &str) {
    if let Err(e) = t.validate() {
        panic!("{ctx}: invalid tree: {e}\n{}", t.dump());
    }
    assert_eq!(t.iter().count(), t.len(), "{ctx}: len");
    let ids: Vec<u64> = t.iter().map(|(_, v)| u64::from(v.id)).collect();
    let in_tree: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(in_tree.len(), ids.len(), "{ctx}: a value appears twice");
    let alive = alive();
    assert!(
        in_tree.is_subset(&alive),
        "{ctx}: the tree holds dead values"
    );
    let leaked: BTreeSet<u64> = alive.difference(&in_tree).copied().collect();
    assert!(
        leaked.is_empty(),
        "{ctx}: values alive outside the tree: {leaked:?}"
    );
}

/// Entries of the trees the operations run on: 160 give height 3 in both
/// kinds of tree. Miri (scripts/miri.sh runs a selection of these tests)
/// gets 24, height 2: every call number still panics in turn.
const ENTRIES: u64 = if cfg!(miri) { 24 } else { 160 };

/// `ENTRIES` entries of 7 indices every 10.
fn base<const P: usize>(alloc: bool) -> MapleTree<Dummy<P>> {
    let mut t = if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    for k in 0..ENTRIES {
        t.insert(k * 10..=k * 10 + 6, Dummy::new(k));
    }
    assert!(cfg!(miri) || t.stats().height >= 3);
    t
}

type Op<const P: usize> = fn(&mut MapleTree<Dummy<P>>);

/// Runs `op` on a fresh tree with each trigger at every call number, and
/// checks the tree after each caught panic.
fn crash_test<const P: usize>(name: &str, op: Op<P>) {
    crash_test_expecting(name, op, Partial::Steps)
}

/// What a panic part way through an operation may leave in the tree.
#[derive(Clone, Copy, PartialEq)]
enum Partial {
    /// The tree as before, as after, or as one of the states the operation
    /// marked with [`step`]; for a one-step operation, as after when a
    /// `Drop` panicked (the store took effect first) and as before when a
    /// `Clone` or callback did.
    Steps,
    /// Any state between before and after, entry by entry: an operation
    /// that removes or adds entries one at a time (`retain`, `extract_if`,
    /// `append`) stopped part way. Every entry left is one of before or
    /// after, and every entry both have is there.
    Between,
}

/// [`crash_test`] with the states a panic may leave chosen by `partial`.
fn crash_test_expecting<const P: usize>(name: &str, op: Op<P>, partial: Partial) {
    for alloc in [false, true] {
        // A dry run: how many calls of each kind, and the result.
        let mut t = base::<P>(alloc);
        let before = contents(&t);
        arm(None);
        STEPS.with(|s| s.borrow_mut().clear());
        op(&mut t);
        let (clones, drops, callbacks) = calls();
        let after = contents(&t);
        // Every state the tree may be left in by a panic part way.
        let mut states = STEPS.with(|s| s.take());
        states.insert(0, before.clone());
        states.push(after.clone());
        let single_step = states.len() == 2;
        check_sound(&t, name);
        drop(t);
        for (trigger, n) in [
            (Trigger::Clone, clones),
            (Trigger::Drop, drops),
            (Trigger::Callback, callbacks),
        ] {
            for k in 1..=n {
                let ctx = format!("{name} (alloc {alloc}): {trigger:?} #{k} of {n} panics");
                let mut t = base::<P>(alloc);
                arm(Some((trigger, k)));
                let result = catch_unwind(AssertUnwindSafe(|| op(&mut t)));
                arm(None);
                STEPS.with(|s| s.borrow_mut().clear());
                assert!(result.is_err(), "{ctx}: no panic");
                check_sound(&t, &ctx);
                let now = contents(&t);
                match trigger {
                    _ if partial == Partial::Between => {
                        let was = |e: &(RangeInclusive<u64>, u64)| before.contains(e);
                        let will = |e: &(RangeInclusive<u64>, u64)| after.contains(e);
                        assert!(
                            now.iter().all(|e| was(e) || will(e)),
                            "{ctx}: an entry that is neither before nor after:\n{now:?}"
                        );
                        assert!(
                            before.iter().filter(|e| will(e)).all(|e| now.contains(e)),
                            "{ctx}: an entry kept by the operation is gone:\n{now:?}"
                        );
                    }
                    _ if !single_step => {
                        assert!(states.contains(&now), "{ctx}: left between two steps")
                    }
                    // The drop comes after the store has taken effect.
                    Trigger::Drop => assert!(
                        now == after,
                        "{ctx}: the store did not finish:\n{now:?}\n{after:?}"
                    ),
                    // Nothing has changed before a clone or callback.
                    _ => assert!(now == before, "{ctx}: the tree changed"),
                }
                drop(t);
                assert!(alive().is_empty(), "{ctx}: values leaked by the drop");
            }
        }
    }
}

/// Drops of a whole tree (and of `IntoIter` part way), which leave nothing
/// to look at: every value must still be dropped exactly once.
fn drop_test<const P: usize>(name: &str, op: fn(MapleTree<Dummy<P>>)) {
    for alloc in [false, true] {
        arm(None);
        op(base::<P>(alloc));
        let (_, drops, _) = calls();
        for k in 1..=drops {
            let t = base::<P>(alloc);
            arm(Some((Trigger::Drop, k)));
            assert!(catch_unwind(AssertUnwindSafe(|| op(t))).is_err());
            arm(None);
            assert!(
                alive().is_empty(),
                "{name}: drop #{k} of {drops} leaked values"
            );
        }
    }
}

fn split_calling_back<const P: usize>(v: &Dummy<P>, _: RangeInclusive<u64>) -> Dummy<P> {
    callback();
    Dummy::new(u64::from(v.payload))
}

macro_rules! crash_tests {
    ($module:ident, $pad:literal) => {
        mod $module {
            use super::*;
            type D = Dummy<$pad>;

            #[test]
            fn insert_spanning() {
                crash_test::<$pad>("insert", |t| t.insert(15..=1_305, D::new(1_000)));
            }

            #[test]
            fn insert_in_one_leaf() {
                crash_test::<$pad>("insert in a leaf", |t| t.insert(13..=22, D::new(1_000)));
            }

            #[test]
            fn insert_inside_an_entry() {
                // Cuts entry 1 into two: the part before gets a clone.
                crash_test::<$pad>("insert inside an entry", |t| {
                    t.insert(12..=14, D::new(1_000))
                });
            }

            #[test]
            fn remove_range_inside_an_entry() {
                crash_test::<$pad>("remove_range inside an entry", |t| t.remove_range(22..=24));
            }

            #[test]
            fn insert_exact() {
                crash_test::<$pad>("insert exact", |t| t.insert(20..=26, D::new(1_000)));
            }

            #[test]
            fn insert_with_split() {
                crash_test::<$pad>("insert_with", |t| {
                    t.insert_with(15..=1_205, D::new(1_000), split_calling_back)
                });
            }

            #[test]
            fn insert_displaced() {
                crash_test::<$pad>("insert_displaced", |t| {
                    let out = t.insert_displaced(15..=1_205, D::new(1_000));
                    assert_eq!(out.len(), 120);
                });
            }

            #[test]
            fn try_insert() {
                crash_test::<$pad>("try_insert", |t| {
                    assert!(t.try_insert(7..=9, D::new(1)).is_ok());
                    step(t);
                    assert!(t.try_insert(5..=9, D::new(2)).is_err());
                });
            }

            #[test]
            fn remove() {
                crash_test::<$pad>("remove", |t| {
                    for k in 0..32 {
                        t.remove(k * 50);
                        step(t);
                    }
                });
            }

            #[test]
            fn remove_range_spanning() {
                crash_test::<$pad>("remove_range", |t| t.remove_range(15..=1_500));
            }

            #[test]
            fn remove_range_with_split() {
                crash_test::<$pad>("remove_range_with", |t| {
                    t.remove_range_with(15..=1_003, split_calling_back)
                });
            }

            #[test]
            fn remove_range_displaced() {
                crash_test::<$pad>("remove_range_displaced", |t| {
                    let out = t.remove_range_displaced(300..=1_499);
                    assert_eq!(out.len(), 120);
                });
            }

            #[test]
            fn displaced_into_iter_part_way() {
                // The entries a removal handed back, taken by value from
                // both ends; the rest dropped with the iterator.
                crash_test::<$pad>("displaced_into_iter", |t| {
                    let mut out = t.remove_range_displaced(300..=1_499).into_iter();
                    drop(out.next());
                    drop(out.next_back());
                    assert_eq!(out.len(), 118);
                });
            }

            #[test]
            fn clear() {
                crash_test::<$pad>("clear", |t| t.clear());
            }

            #[test]
            fn many_small_removes() {
                // Rebalances and root collapses, one entry at a time.
                crash_test::<$pad>("removes", |t| {
                    for k in (0..160).rev().step_by(3) {
                        t.remove_range(k * 10..=k * 10 + 3);
                        step(t);
                    }
                });
            }

            #[test]
            fn clone_and_try_clone() {
                crash_test::<$pad>("clone", |t| {
                    let c = t.clone();
                    assert_eq!(c.len(), t.len());
                    let c = t.try_clone().unwrap();
                    assert_eq!(c.len(), t.len());
                });
            }

            #[test]
            fn dup_with_map() {
                crash_test::<$pad>("dup_with", |t| {
                    let c = t.dup_with(|v| {
                        callback();
                        D::new(u64::from(v.payload))
                    });
                    assert_eq!(c.len(), t.len());
                    let c = t
                        .try_dup_with(|v| {
                            callback();
                            Ok::<_, ()>(D::new(u64::from(v.payload)))
                        })
                        .unwrap();
                    assert_eq!(c.len(), t.len());
                });
            }

            #[test]
            fn cursor_writes() {
                crash_test::<$pad>("cursor", |t| {
                    let mut c = t.cursor_mut(100);
                    c.insert(95..=700, D::new(7));
                    step(t);
                    let mut c = t.cursor_mut(1_000);
                    c.remove();
                    step(t);
                    let mut c = t.cursor_mut(995);
                    c.insert_with(995..=1_399, D::new(8), split_calling_back);
                });
            }

            #[test]
            fn alloc_and_alloc_rev() {
                crash_test::<$pad>("alloc", |t| {
                    let _ = t.alloc(3, .., D::new(1));
                    step(t);
                    let _ = t.alloc_rev(3, ..1_600, D::new(2));
                    step(t);
                    assert!(t.alloc(100, ..1_600, D::new(3)).is_err());
                });
            }

            #[test]
            fn extend() {
                crash_test::<$pad>("extend", |t| {
                    for k in 0..10u64 {
                        t.extend([(k * 150 + 5..=k * 150 + 25, D::new(k))]);
                        step(t);
                    }
                });
            }

            #[test]
            fn from_iter_with_a_panicking_input() {
                crash_test::<$pad>("from_iter", |t| {
                    let built: MapleTree<D> = (0..200u64)
                        .map(|k| {
                            callback();
                            (k * 4..=k * 4 + 2, D::new(k))
                        })
                        .collect();
                    assert_eq!(built.len(), 200);
                    t.insert(0..=0, D::new(9));
                });
            }

            #[test]
            #[should_panic(expected = "empty or reversed")]
            fn from_iter_with_a_reversed_range_leaks_nothing() {
                struct CheckOnUnwind;
                impl Drop for CheckOnUnwind {
                    fn drop(&mut self) {
                        assert!(alive().is_empty(), "from_iter leaked its values");
                    }
                }
                let _check = CheckOnUnwind;
                #[allow(clippy::reversed_empty_ranges)]
                let _: MapleTree<D> = (0..100u64)
                    .map(|k| {
                        let r = if k == 90 { 10..=5 } else { k * 4..=k * 4 + 2 };
                        (r, D::new(k))
                    })
                    .collect();
            }

            #[test]
            fn retain() {
                crash_test_expecting::<$pad>(
                    "retain",
                    |t| {
                        t.retain(|_, v| {
                            callback();
                            v.payload % 3 != 0
                        })
                    },
                    Partial::Between,
                );
            }

            #[test]
            fn extract_if_part_way() {
                crash_test_expecting::<$pad>(
                    "extract_if",
                    |t| {
                        let mut it = t.extract_if(95..=1_204, |_, v| {
                            callback();
                            v.payload % 2 == 0
                        });
                        for _ in 0..30 {
                            drop(it.next());
                        }
                    },
                    Partial::Between,
                );
            }

            #[test]
            fn split_off_and_append() {
                crash_test::<$pad>("split_off", |t| {
                    let mut high = t.split_off(1_003);
                    assert_eq!(high.len(), 60);
                    step(t);
                    t.append(&mut high);
                    step(t);
                    // One entry each: an append of several stops part way
                    // (`append_over_many`).
                    let mut other = MapleTree::new();
                    other.insert(5..=802, D::new(5_000));
                    t.append(&mut other);
                    step(t);
                    other.insert(905..=908, D::new(5_001));
                    t.append(&mut other);
                });
            }

            #[test]
            fn append_over_many() {
                crash_test_expecting::<$pad>(
                    "append",
                    |t| {
                        let mut other = MapleTree::new();
                        for k in 0..40u64 {
                            other.insert(k * 37 + 3..=k * 37 + 14, D::new(2_000 + k));
                        }
                        t.append(&mut other);
                    },
                    Partial::Between,
                );
            }

            #[test]
            fn entries() {
                crash_test::<$pad>("entry", |t| {
                    if let Entry::Occupied(mut e) = t.entry(503) {
                        e.split(504);
                        drop(e.insert(D::new(3_000)));
                    }
                    step(t);
                    if let Entry::Occupied(e) = t.entry(601) {
                        drop(e.remove());
                    }
                    step(t);
                    if let Entry::Occupied(mut e) = t.entry(702) {
                        e.split_with(705, split_calling_back);
                    }
                    step(t);
                    if let Entry::Vacant(e) = t.entry(608) {
                        e.insert(607..=609, D::new(3_001));
                    }
                    step(t);
                    t.entry(1_308).or_insert(1_307..=1_309, D::new(3_002));
                });
            }

            #[test]
            fn pop_first_and_last() {
                crash_test::<$pad>("pop", |t| {
                    for _ in 0..20 {
                        drop(t.pop_first());
                        step(t);
                        drop(t.pop_last());
                        step(t);
                    }
                });
            }

            #[test]
            fn drop_tree() {
                drop_test::<$pad>("drop", drop);
            }

            #[test]
            fn into_iter_part_way() {
                drop_test::<$pad>("into_iter", |t| {
                    let mut it = t.into_iter();
                    for _ in 0..40 {
                        drop(it.next());
                        drop(it.next_back());
                    }
                });
            }

            #[test]
            fn rcu_writes_and_reclaim() {
                rcu_drop_test::<$pad, _>(RcuMapleTree::from);
            }

            /// The same with the values inside the nodes.
            #[test]
            fn rcu_inline_writes_and_reclaim() {
                rcu_drop_test::<$pad, _>(RcuMapleTree::from_inline);
            }
        }
    };
}

/// [`rcu_ops`] on trees entered into RCU mode by `enter`, with the k-th
/// drop panicking, for every k: each panic unwinds, and no value leaks.
fn rcu_drop_test<const P: usize, S: Storage<Dummy<P>>>(
    enter: fn(MapleTree<Dummy<P>>) -> RcuMapleTree<Dummy<P>, S>,
) {
    for alloc in [false, true] {
        arm(None);
        rcu_ops(enter(base::<P>(alloc)));
        let (_, drops, _) = calls();
        for k in 1..=drops {
            let ctx = format!("rcu (alloc {alloc}): drop #{k} of {drops}");
            let t = base::<P>(alloc);
            arm(Some((Trigger::Drop, k)));
            let result = catch_unwind(AssertUnwindSafe(|| rcu_ops(enter(t))));
            arm(None);
            assert!(result.is_err(), "{ctx}: no panic");
            assert!(alive().is_empty(), "{ctx}: values leaked");
        }
    }
}

/// RCU-mode writes; the values they unlink are dropped by later writes (or
/// by `into_inner`), which must keep the tree sound when a drop panics.
fn rcu_ops<const P: usize, S: Storage<Dummy<P>>>(rcu: RcuMapleTree<Dummy<P>, S>) {
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        rcu.write().insert(15..=605, Dummy::new(1));
        rcu.write().remove_range(800..=1_100);
        rcu.write().remove(1_300);
        for k in 0..4 {
            rcu.write().insert(k..=k, Dummy::new(k));
        }
    }));
    // Whatever happened, the tree is whole and still usable.
    let t = rcu.into_inner();
    check_sound(&t, "rcu");
    drop(t);
    if let Err(panic) = unwound {
        std::panic::resume_unwind(panic);
    }
}

/// Values the concurrent tree's writer reclaims between its writes (their
/// boxes kept for later values), with the k-th drop panicking: the write
/// that reclaims it unwinds, the rest are still dropped once, and later
/// writes, filling kept boxes, store whole values.
#[test]
fn rcu_reclaim_during_writes_with_a_drop_panicking() {
    const SLOTS: u64 = 64;
    let writes: u64 = if cfg!(miri) { 400 } else { 2_000 };
    for k in [1, 61, 150] {
        let rcu = RcuMapleTree::from(MapleTree::<Dummy<2>>::new());
        arm(Some((Trigger::Drop, k)));
        let mut unwound = 0;
        for i in 0..writes {
            let slot = i % SLOTS;
            let write = || rcu.write().insert(slot..=slot, Dummy::new(i));
            unwound += usize::from(catch_unwind(AssertUnwindSafe(write)).is_err());
        }
        let (_, drops, _) = calls();
        arm(None);
        assert_eq!(
            unwound, 1,
            "drop #{k}: reclaimed while writing ({drops} drops)"
        );
        let t = rcu.into_inner();
        check_sound(&t, &format!("drop #{k}"));
        let payloads: Vec<u64> = t.iter().map(|(_, v)| u64::from(v.payload)).collect();
        let mut latest: Vec<u64> = (writes - SLOTS..writes).collect();
        latest.sort_by_key(|i| i % SLOTS);
        assert_eq!(payloads, latest, "drop #{k}: the latest values");
        drop(t);
        assert!(alive().is_empty(), "drop #{k}: values leaked");
    }
}

crash_tests!(inline_values, 0);
crash_tests!(boxed_values, 2);

/// The case that once left the tree pointing at freed nodes: a spanning
/// removal over 2,000 entries whose 41st displaced value panics when dropped.
#[test]
fn spanning_removal_with_the_41st_drop_panicking() {
    let mut t: MapleTree<Dummy<0>> = MapleTree::new();
    for k in 0..2_000u64 {
        t.insert(k * 10..=k * 10 + 6, Dummy::new(k));
    }
    arm(Some((Trigger::Drop, 41)));
    let result = catch_unwind(AssertUnwindSafe(|| t.remove_range(15..=15_000)));
    arm(None);
    assert!(result.is_err());
    check_sound(&t, "remove_range(15..=15_000)");
    assert_eq!(t.len(), 3 + 499); // 0..=6, 10..=14, 15_001..=15_006, then whole entries
    drop(t);
    assert!(alive().is_empty());
}

/// A cursor's store whose `split` panics leaves the tree as it was, and the
/// cursor where it stood: its index, range, value and removal agree.
#[test]
fn a_cursor_stays_whole_when_its_store_unwinds() {
    for (at, stored) in [(10u64, 4..=5u64), (3, 5..=20), (0, 1..=1)] {
        let mut t = MapleTree::new();
        t.insert(0..=6, 0u64);
        t.insert(30..=40, 1);
        let mut c = t.cursor_mut(at);
        let before = (c.index(), c.range(), c.get().copied());
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            c.insert_with(stored.clone(), 9, |_, _| panic!("split"))
        }));
        assert!(unwound.is_err(), "{at} {stored:?}");
        assert_eq!((c.index(), c.range(), c.get().copied()), before);
        let removed = c.remove();
        assert_eq!(removed.map(|(r, _)| r), before.2.map(|_| before.1.clone()));
        t.validate().unwrap();
    }
}
