//! Leak and double-drop checks with counting value types.
//!
//! Every value made here is registered (per thread) under a fresh id; its drop
//! unregisters it and panics if the id was not live (a double drop, or a drop
//! of garbage memory). After every operation the number of live values must
//! equal exactly what the test holds: the tree's entries plus any value handed
//! back. Three representations are covered: values larger than a slot (boxed
//! by the tree), values of at most 8 bytes (stored inline) and zero-sized values.

// The skeleton types have no Drop impl yet; the real ones do.
#![allow(clippy::drop_non_drop)]

#[macro_use]
mod common;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt::Debug;
use std::ops::RangeInclusive;

use common::*;
use maple_tree::{DupError, MapleTree, NoSpace};

thread_local! {
    static LIVE_IDS: RefCell<HashSet<u64>> = RefCell::new(HashSet::new());
    static NEXT_ID: Cell<u64> = const { Cell::new(1) };
    static ZST_LIVE: Cell<isize> = const { Cell::new(0) };
    static NC_LIVE: Cell<isize> = const { Cell::new(0) };
}

fn register() -> u64 {
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    LIVE_IDS.with(|l| assert!(l.borrow_mut().insert(id)));
    id
}

fn unregister(id: u64, what: &str) {
    let ok = LIVE_IDS.with(|l| l.borrow_mut().remove(&id));
    if !ok {
        panic!("double drop (or drop of garbage) of {what} id {id}");
    }
}

fn live_ids() -> isize {
    LIVE_IDS.with(|l| l.borrow().len() as isize)
}

/// A counted value type; `tag` is what equality compares.
trait Counted: Clone + Debug + PartialEq + 'static {
    const NAME: &'static str;
    fn new(tag: u64) -> Self;
    fn tag(&self) -> u64;
    /// Live instances of this type on this thread.
    fn live() -> isize;
}

/// 32 bytes: larger than a slot, boxed by the tree.
#[derive(Debug)]
struct BigC {
    id: u64,
    tag: u64,
    check: u64,
    _pad: u64,
}

impl Counted for BigC {
    const NAME: &'static str = "big";
    fn new(tag: u64) -> Self {
        BigC {
            id: register(),
            tag,
            check: !tag,
            _pad: 0,
        }
    }
    fn tag(&self) -> u64 {
        self.tag
    }
    fn live() -> isize {
        live_ids()
    }
}
impl Clone for BigC {
    fn clone(&self) -> Self {
        assert_eq!(self.check, !self.tag, "clone of a corrupt value");
        BigC::new(self.tag)
    }
}
impl PartialEq for BigC {
    fn eq(&self, o: &Self) -> bool {
        self.tag == o.tag
    }
}
impl Drop for BigC {
    fn drop(&mut self) {
        assert_eq!(
            self.check, !self.tag,
            "drop of a corrupt big value (id {})",
            self.id
        );
        unregister(self.id, "big");
        self.check = 0xdead;
    }
}

/// 8 bytes: stored inline.
#[derive(Debug)]
struct SmallC {
    id: u32,
    tag: u32,
}

impl Counted for SmallC {
    const NAME: &'static str = "small";
    fn new(tag: u64) -> Self {
        let id = register();
        assert!(id < u32::MAX as u64);
        SmallC {
            id: id as u32,
            tag: tag as u32,
        }
    }
    fn tag(&self) -> u64 {
        self.tag as u64
    }
    fn live() -> isize {
        live_ids()
    }
}
impl Clone for SmallC {
    fn clone(&self) -> Self {
        SmallC::new(self.tag as u64)
    }
}
impl PartialEq for SmallC {
    fn eq(&self, o: &Self) -> bool {
        self.tag == o.tag
    }
}
impl Drop for SmallC {
    fn drop(&mut self) {
        unregister(self.id as u64, "small");
    }
}

/// Zero-sized: only a count (a double drop shows as a count below what is held).
#[derive(Debug)]
struct Zst;

impl Counted for Zst {
    const NAME: &'static str = "zst";
    fn new(_: u64) -> Self {
        ZST_LIVE.with(|c| c.set(c.get() + 1));
        Zst
    }
    fn tag(&self) -> u64 {
        0
    }
    fn live() -> isize {
        ZST_LIVE.with(|c| c.get())
    }
}
impl Clone for Zst {
    fn clone(&self) -> Self {
        Zst::new(0)
    }
}
impl PartialEq for Zst {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Drop for Zst {
    fn drop(&mut self) {
        ZST_LIVE.with(|c| {
            assert!(c.get() > 0, "double drop of a zero-sized value");
            c.set(c.get() - 1)
        });
    }
}

/// Not `Clone`: only `insert_with` / `remove_range_with` can cut it.
#[derive(Debug)]
struct NoClone {
    id: u64,
    tag: u64,
}
impl NoClone {
    fn new(tag: u64) -> Self {
        NC_LIVE.with(|c| c.set(c.get() + 1));
        NoClone {
            id: register(),
            tag,
        }
    }
    fn live() -> isize {
        NC_LIVE.with(|c| c.get())
    }
}
impl Drop for NoClone {
    fn drop(&mut self) {
        unregister(self.id, "no-clone");
        NC_LIVE.with(|c| c.set(c.get() - 1));
    }
}

/// Live values of `T` relative to the start of a test.
struct Live<T: Counted> {
    base: isize,
    _t: std::marker::PhantomData<T>,
}
impl<T: Counted> Live<T> {
    fn start() -> Self {
        Live {
            base: T::live(),
            _t: Default::default(),
        }
    }
    #[track_caller]
    fn expect(&self, n: usize, ctx: &str) {
        let live = T::live() - self.base;
        assert_eq!(
            live,
            n as isize,
            "{}: live {} values {ctx}",
            T::NAME,
            T::NAME
        );
    }
}

#[track_caller]
fn valid<V>(t: &MapleTree<V>, ctx: &str) {
    if let Err(e) = t.validate() {
        panic!("validate() {ctx}: {e}");
    }
}

/// Partial overwrites (splits clone), exact overwrites, removes, remove_range,
/// clear, get_mut replacement and drop of the tree.
fn overwrite_remove_clear<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let live = Live::<T>::start();
        let mut t = mk();
        let mut rng = Rng(7);
        for i in 0..sized(300, 60) {
            t.insert(i * 100..=i * 100 + 49, T::new(i));
            live.expect(t.len(), &format!("{kind}: after insert #{i}"));
        }
        valid(&t, kind);
        // Partial overwrites: inside one entry (one split into three), across
        // two entries, covering several.
        for n in 0..sized(400, 40) {
            let a = rng.below(31_000);
            let len = match n % 3 {
                0 => 1 + rng.below(10),
                1 => 30 + rng.below(100),
                _ => 1 + rng.below(1_000),
            };
            t.insert(a..a + len, T::new(1000 + n));
            live.expect(
                t.len(),
                &format!("{kind}: after overwrite {a}..{}", a + len),
            );
        }
        valid(&t, kind);
        // Exact overwrite of an entry.
        let (r, _) = t.first_key_value().unwrap();
        t.insert(r.clone(), T::new(5));
        live.expect(t.len(), &format!("{kind}: after exact overwrite of {r:?}"));
        // Removing returns the value, which stays alive until dropped.
        for n in 0..sized(100, 20) {
            let i = rng.below(31_000);
            let len = t.len();
            match t.remove(i) {
                Some((r, v)) => {
                    assert!(r.contains(&i));
                    live.expect(len, &format!("{kind}: holding a removed value"));
                    drop(v);
                    live.expect(t.len(), &format!("{kind}: after remove #{n}"));
                }
                None => assert_eq!(t.len(), len),
            }
        }
        // remove_range cutting entries at both edges.
        for n in 0..sized(100, 20) {
            let a = rng.below(31_000);
            t.remove_range(a..=a + rng.below(300));
            live.expect(t.len(), &format!("{kind}: after remove_range #{n}"));
        }
        valid(&t, kind);
        // get_mut replacement drops the old value.
        let first = *t.first_key_value().unwrap().0.start();
        *t.get_mut(first).unwrap() = T::new(77);
        live.expect(t.len(), &format!("{kind}: after get_mut replacement"));
        let n = t.len();
        assert!(n > 0);
        t.clear();
        live.expect(0, &format!("{kind}: after clear of {n} entries"));
        assert!(t.is_empty());
        // The tree is reusable after clear, and dropping it drops everything.
        let refill = sized(1000, 100);
        for i in 0..refill {
            t.insert(i..=i, T::new(i));
        }
        live.expect(refill as usize, kind);
        drop(t);
        live.expect(0, &format!("{kind}: after dropping the tree"));
    }
}

#[test]
fn overwrite_remove_clear_big() {
    overwrite_remove_clear::<BigC>();
}
#[test]
fn overwrite_remove_clear_small() {
    overwrite_remove_clear::<SmallC>();
}
#[test]
fn overwrite_remove_clear_zst() {
    overwrite_remove_clear::<Zst>();
}

/// Random operations of every kind with the live count checked after each.
fn random_ops<T: Counted>(seed: u64) {
    for (kind, mk) in kinds::<T>() {
        let live = Live::<T>::start();
        let mut t = mk();
        let mut rng = Rng(seed);
        let key = |rng: &mut Rng| match rng.below(8) {
            0 => MAX - rng.below(100),
            1 => rng.next(),
            _ => rng.below(3_000),
        };
        for n in 0..sized(3_000, 200) {
            let a = key(&mut rng);
            let b = a.saturating_add(match rng.below(10) {
                0 => MAX,
                1..=3 => rng.below(200),
                _ => rng.below(8),
            });
            let ctx = format!("{kind}: op #{n}");
            match rng.below(12) {
                0..=3 => t.insert(a..=b, T::new(n)),
                4 => {
                    if let Err(e) = t.try_insert(a..=b, T::new(n)) {
                        assert_eq!(e.value.tag(), T::new(n).tag());
                        live.expect(t.len() + 1, &ctx);
                    }
                }
                5 => {
                    if let Some((_, v)) = t.remove(a) {
                        live.expect(t.len() + 1, &ctx);
                        drop(v);
                    }
                }
                6 => t.remove_range(a..=b),
                7 => {
                    let size = 1 + rng.below(50);
                    if let Err(NoSpace { value, .. }) = t.alloc(size, a..=b, T::new(n)) {
                        live.expect(t.len() + 1, &ctx);
                        drop(value);
                    }
                }
                8 => {
                    let size = 1 + rng.below(50);
                    let _ = t.alloc_rev(size, a..=b, T::new(n));
                }
                9 => {
                    let mut c = t.cursor_mut(a);
                    for k in 0..10 {
                        match rng.below(4) {
                            0 => drop(c.remove()),
                            1 => {
                                let i = c.index();
                                c.insert(i..=i.saturating_add(rng.below(4)), T::new(n + k))
                            }
                            2 => {
                                c.next_entry();
                            }
                            _ => {
                                if let Some(v) = c.get_mut() {
                                    *v = T::new(k);
                                }
                            }
                        }
                    }
                }
                10 => {
                    for (_, v) in t.iter_mut().step_by(3) {
                        *v = T::new(n);
                    }
                }
                _ => {
                    if rng.below(20) == 0 {
                        t.clear()
                    } else {
                        t.insert_with(a..=b, T::new(n), |old, _| old.clone())
                    }
                }
            }
            live.expect(t.len(), &ctx);
            if n % 100 == 0 {
                valid(&t, &ctx);
            }
        }
        valid(&t, kind);
        drop(t);
        live.expect(0, &format!("{kind}: after drop"));
    }
}

#[test]
fn random_ops_big() {
    random_ops::<BigC>(1);
}
#[test]
fn random_ops_small() {
    random_ops::<SmallC>(2);
}
#[test]
fn random_ops_zst() {
    random_ops::<Zst>(3);
}

/// Owning iteration consumed partly from both ends, the rest dropped with the iterator.
fn into_iter_partial<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        for n in [0usize, 1, 2, 17, 300, sized(5_000, 300) as usize] {
            for (front, back) in [
                (0usize, 0usize),
                (1, 0),
                (0, 1),
                (3, 2),
                (n / 2, n / 3),
                (n, 0),
            ] {
                let live = Live::<T>::start();
                let mut t = mk();
                for i in 0..n as u64 {
                    t.insert(i * 3..=i * 3 + 1, T::new(i));
                }
                let mut it = t.into_iter();
                let mut taken = Vec::new();
                for _ in 0..front {
                    taken.extend(it.next());
                }
                for _ in 0..back {
                    taken.extend(it.next_back());
                }
                let ctx = format!("{kind}: n={n} front={front} back={back}");
                assert_eq!(taken.len(), (front + back).min(n), "{ctx}: items taken");
                live.expect(n, &ctx);
                drop(it);
                live.expect(taken.len(), &format!("{ctx}: after dropping the iterator"));
                // What was taken is in order at each end.
                let fronts: Vec<u64> = taken
                    .iter()
                    .take(front.min(n))
                    .map(|(r, _)| *r.start())
                    .collect();
                assert_eq!(
                    fronts,
                    (0..fronts.len() as u64).map(|i| i * 3).collect::<Vec<_>>(),
                    "{ctx}"
                );
                drop(taken);
                live.expect(0, &ctx);
            }
        }
    }
}

#[test]
fn into_iter_partial_big() {
    into_iter_partial::<BigC>();
}
#[test]
fn into_iter_partial_small() {
    into_iter_partial::<SmallC>();
}
#[test]
fn into_iter_partial_zst() {
    into_iter_partial::<Zst>();
}

fn build<T: Counted>(mk: Maker<T>, n: u64) -> MapleTree<T> {
    let mut t = mk();
    for i in 0..n {
        t.insert(i * 16..=i * 16 + 9, T::new(i));
    }
    t
}

/// Clone and dup_with of a 12,000-entry tree, then dropping both in either order.
fn clone_big_tree<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let n = sized(12_000, 400) as usize;
        let live = Live::<T>::start();
        let t = build(mk, n as u64);
        live.expect(n, kind);
        let c = t.clone();
        valid(&c, kind);
        live.expect(2 * n, &format!("{kind}: after clone"));
        assert!(c == t, "{kind}: clone != source");
        drop(t);
        live.expect(n, &format!("{kind}: after dropping the source"));
        valid(&c, kind);
        let d = c.dup_with(|v| T::new(v.tag() + 1));
        valid(&d, kind);
        live.expect(2 * n, &format!("{kind}: after dup_with"));
        assert_eq!(d.len(), n);
        drop(d);
        live.expect(n, &format!("{kind}: after dropping the dup"));
        let e = c.try_clone().expect("try_clone");
        live.expect(2 * n, &format!("{kind}: after try_clone"));
        drop(c);
        drop(e);
        live.expect(0, &format!("{kind}: after dropping everything"));
    }
}

#[test]
fn clone_big_tree_big() {
    clone_big_tree::<BigC>();
}
#[test]
fn clone_big_tree_small() {
    clone_big_tree::<SmallC>();
}
#[test]
fn clone_big_tree_zst() {
    clone_big_tree::<Zst>();
}

/// try_dup_with whose map fails part way: the values mapped so far are dropped
/// exactly once, the source is untouched.
fn try_dup_fails<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let n = sized(10_500, 400);
        let src = build::<T>(mk, n);
        let before: Vec<(RangeInclusive<u64>, u64)> =
            src.iter().map(|(r, v)| (r, v.tag())).collect();
        for fail_at in [0u64, 1, 15, 16, 17, 500, 5_000, n - 1]
            .into_iter()
            .filter(|&f| f < n)
        {
            let live = Live::<T>::start();
            let mut calls = 0u64;
            let res: Result<MapleTree<T>, DupError<String>> = src.try_dup_with(|v| {
                calls += 1;
                if calls - 1 == fail_at {
                    Err(format!("fail at {}", v.tag()))
                } else {
                    Ok(T::new(v.tag() + 1_000_000))
                }
            });
            let ctx = format!("{kind}: map failing at call #{fail_at}");
            match res {
                Err(DupError::Map(msg)) => assert!(msg.starts_with("fail at"), "{ctx}: {msg}"),
                Err(e) => panic!("{ctx}: wrong error {e:?}"),
                Ok(_) => panic!("{ctx}: try_dup_with succeeded"),
            }
            assert_eq!(
                calls,
                fail_at + 1,
                "{ctx}: the map must stop at its first error"
            );
            live.expect(
                0,
                &format!("{ctx}: values mapped before the error must be dropped"),
            );
            valid(&src, &ctx);
            let after: Vec<(RangeInclusive<u64>, u64)> =
                src.iter().map(|(r, v)| (r, v.tag())).collect();
            assert!(after == before, "{ctx}: source changed");
        }
        // A map that never fails gives an equal copy.
        let live = Live::<T>::start();
        let d: MapleTree<T> = src
            .try_dup_with(|v| Ok::<_, ()>(v.clone()))
            .expect("try_dup_with");
        valid(&d, kind);
        live.expect(n as usize, kind);
        assert!(d == src);
        drop(d);
        live.expect(0, kind);
    }
}

#[test]
fn try_dup_fails_big() {
    try_dup_fails::<BigC>();
}
#[test]
fn try_dup_fails_small() {
    try_dup_fails::<SmallC>();
}
#[test]
fn try_dup_fails_zst() {
    try_dup_fails::<Zst>();
}

/// iter_mut replacing values (front, back, both ends) and IterMut dropped half way.
fn iter_mut_replace<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let live = Live::<T>::start();
        let n = sized(2_000, 200);
        let mut t = build::<T>(mk, n);
        for (r, v) in t.iter_mut() {
            *v = T::new(*r.start() + 1);
        }
        live.expect(
            n as usize,
            &format!("{kind}: after iter_mut replacing every value"),
        );
        for (r, v) in t.iter().take(50) {
            assert_eq!(v.tag(), T::new(*r.start() + 1).tag());
        }
        {
            let mut it = t.iter_mut();
            for _ in 0..10 {
                let (_, v) = it.next_back().unwrap();
                *v = T::new(3);
                let (_, v) = it.next().unwrap();
                *v = T::new(4);
            }
        }
        live.expect(
            n as usize,
            &format!("{kind}: after a partial two-ended iter_mut"),
        );
        for (_, v) in &mut t {
            let old = std::mem::replace(v, T::new(9));
            drop(old);
        }
        live.expect(n as usize, kind);
        valid(&t, kind);
        drop(t);
        live.expect(0, kind);
    }
}

#[test]
fn iter_mut_replace_big() {
    iter_mut_replace::<BigC>();
}
#[test]
fn iter_mut_replace_small() {
    iter_mut_replace::<SmallC>();
}
#[test]
fn iter_mut_replace_zst() {
    iter_mut_replace::<Zst>();
}

/// Values handed back by failed try_insert / alloc are the caller's; the
/// tree neither drops nor keeps them.
fn handed_back<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let live = Live::<T>::start();
        let mut t = mk();
        t.insert(.., T::new(1));
        let e = t.try_insert(5..=5, T::new(2)).unwrap_err();
        live.expect(2, &format!("{kind}: holding the rejected value"));
        assert_eq!(e.value.tag(), T::new(2).tag());
        drop(e);
        live.expect(1, kind);
        let NoSpace { value, size } = t.alloc(1, .., T::new(3)).unwrap_err();
        assert_eq!(size, 1);
        live.expect(2, &format!("{kind}: holding the value alloc rejected"));
        drop(value);
        let NoSpace { value, .. } = t.alloc_rev(1, .., T::new(3)).unwrap_err();
        drop(value);
        live.expect(1, kind);
        // Splitting the whole-space entry into three by storing in its middle.
        t.insert(10..=20, T::new(4));
        live.expect(3, &format!("{kind}: after a split into three"));
        t.remove_range(..);
        live.expect(0, &format!("{kind}: after remove_range(..)"));
        assert!(t.is_empty());
        // FromIterator / Extend.
        let mut u: MapleTree<T> = (0..100u64).map(|i| (i * 2..=i * 2, T::new(i))).collect();
        live.expect(100, kind);
        u.extend((0..100u64).map(|i| (i * 2 + 1..i * 2 + 2, T::new(i))));
        live.expect(200, kind);
        u.extend([(0..=1000u64, T::new(5))]);
        live.expect(1, &format!("{kind}: after covering everything"));
        drop(u);
        live.expect(0, kind);
    }
}

#[test]
fn handed_back_big() {
    handed_back::<BigC>();
}
#[test]
fn handed_back_small() {
    handed_back::<SmallC>();
}
#[test]
fn handed_back_zst() {
    handed_back::<Zst>();
}

/// A non-Clone value cut by insert_with / remove_range_with: every surviving
/// piece is made by the split callback and the old value is dropped once.
#[test]
fn insert_with_not_clone() {
    for (kind, mk) in kinds::<NoClone>() {
        let base = NoClone::live();
        let live = || NoClone::live() - base;
        let mut t = mk();
        t.insert_with(0..=999, NoClone::new(1), |_, _| {
            unreachable!("nothing to split")
        });
        assert_eq!(live(), 1);
        let mut calls = 0;
        t.insert_with(100..=199, NoClone::new(2), |old, piece| {
            calls += 1;
            NoClone::new(old.tag * 10 + *piece.start())
        });
        assert_eq!(calls, 2, "{kind}: split calls");
        assert_eq!(live(), 3, "{kind}: the cut value must be dropped");
        assert_eq!(t.get(0).map(|v| v.tag), Some(10), "{kind}: left piece");
        assert_eq!(t.get(150).map(|v| v.tag), Some(2), "{kind}");
        assert_eq!(
            t.get(999).map(|v| v.tag),
            Some(10 + 200),
            "{kind}: right piece"
        );
        assert_eq!(t.get_key_value(500).map(|(r, _)| r), Some(200..=999));
        // Cutting across three entries: two pieces survive.
        let mut calls = 0;
        t.remove_range_with(50..=250, |old, piece| {
            calls += 1;
            NoClone::new(old.tag + *piece.end())
        });
        assert_eq!(calls, 2, "{kind}: split calls of remove_range_with");
        assert_eq!(live(), 2, "{kind}");
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(0).map(|v| v.tag), Some(10 + 49));
        assert_eq!(t.get(251).map(|v| v.tag), Some(210 + 999));
        // Many small insert_with over a long entry.
        t.insert_with(.., NoClone::new(0), |_, _| {
            panic!("covering everything splits nothing")
        });
        assert_eq!(live(), 1);
        for i in 0..sized(2_000, 200) {
            t.insert_with(i * 8 + 1..=i * 8 + 3, NoClone::new(i), |o, p| {
                NoClone::new(o.tag ^ *p.start())
            });
            assert_eq!(live() as usize, t.len(), "{kind}: after insert_with #{i}");
        }
        valid(&t, kind);
        let (_, v) = t.remove(4).unwrap();
        drop(v);
        assert_eq!(live() as usize, t.len());
        drop(t);
        assert_eq!(live(), 0, "{kind}: after drop");
    }
}

/// Alloc/insert until full and drop a tree of several levels built in
/// random order (both kinds), then into_iter fully.
fn big_random_tree<T: Counted>() {
    for (kind, mk) in kinds::<T>() {
        let live = Live::<T>::start();
        let mut t = mk();
        let n = sized(20_000, 600);
        let mut keys: Vec<u64> = (0..n).collect();
        Rng(11).shuffle(&mut keys);
        for &k in &keys {
            t.insert(k * 4..=k * 4 + 2, T::new(k));
        }
        live.expect(n as usize, kind);
        valid(&t, kind);
        for &k in keys.iter().take(n as usize / 2) {
            drop(t.remove(k * 4 + 1));
        }
        live.expect(n as usize / 2, kind);
        valid(&t, kind);
        let left = t.into_iter().count();
        assert_eq!(left, n as usize / 2);
        live.expect(0, kind);
    }
}

#[test]
fn big_random_tree_big() {
    big_random_tree::<BigC>();
}
#[test]
fn big_random_tree_small() {
    big_random_tree::<SmallC>();
}
#[test]
fn big_random_tree_zst() {
    big_random_tree::<Zst>();
}

/// A `split` (or `clone`) that panics part way leaves the tree as it was
/// (documented on `insert_with`), and every value made before the panic is
/// dropped exactly once.
fn split_panics<T: Counted>() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    for (kind, mk) in kinds::<T>() {
        for n in [3u64, 40, sized(2_000, 200)] {
            for (a, b) in [
                (5u64, 5u64),
                (5, 25),
                (15, 10 * n - 5),
                (10 * n / 2 + 3, 10 * n / 2 + 4),
            ] {
                for panic_at in [0usize, 1] {
                    let live = Live::<T>::start();
                    let mut t = mk();
                    for i in 0..n {
                        t.insert(i * 10..=i * 10 + 8, T::new(i));
                    }
                    let before: Vec<(RangeInclusive<u64>, u64)> =
                        t.iter().map(|(r, v)| (r, v.tag())).collect();
                    let ctx = format!("{kind}: {n} entries, insert_with({a}..={b}) panicking at split call #{panic_at}");
                    let mut calls = 0usize;
                    let res = catch_unwind(AssertUnwindSafe(|| {
                        t.insert_with(a..=b, T::new(999), |old, _| {
                            calls += 1;
                            if calls - 1 == panic_at {
                                panic!("split panics on purpose");
                            }
                            T::new(old.tag() + 1)
                        })
                    }));
                    if calls <= panic_at {
                        // Fewer cuts than the panic needs: the store went through.
                        assert!(res.is_ok(), "{ctx}");
                        valid(&t, &ctx);
                        live.expect(t.len(), &ctx);
                        continue;
                    }
                    assert!(res.is_err(), "{ctx}: the panic must propagate");
                    valid(&t, &ctx);
                    let after: Vec<(RangeInclusive<u64>, u64)> =
                        t.iter().map(|(r, v)| (r, v.tag())).collect();
                    assert!(after == before, "{ctx}: the tree changed");
                    live.expect(
                        n as usize,
                        &format!("{ctx}: values made before the panic must be dropped"),
                    );
                    drop(t);
                    live.expect(0, &ctx);
                }
            }
        }
    }
}

#[test]
fn split_panics_big() {
    split_panics::<BigC>();
}
#[test]
fn split_panics_small() {
    split_panics::<SmallC>();
}
#[test]
fn split_panics_zst() {
    split_panics::<Zst>();
}

/// A `dup_with` map that panics part way: every value mapped so far is
/// dropped exactly once, and the source is untouched.
fn dup_map_panics<T: Counted>() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    for (kind, mk) in kinds::<T>() {
        let n = sized(3_000, 300);
        let src = build::<T>(mk, n);
        let before: Vec<(RangeInclusive<u64>, u64)> =
            src.iter().map(|(r, v)| (r, v.tag())).collect();
        for panic_at in [0u64, 1, 700, n - 1].into_iter().filter(|&p| p < n) {
            let live = Live::<T>::start();
            let mut calls = 0u64;
            let res = catch_unwind(AssertUnwindSafe(|| {
                src.dup_with(|v| {
                    calls += 1;
                    if calls - 1 == panic_at {
                        panic!("map panics on purpose");
                    }
                    T::new(v.tag())
                })
            }));
            let ctx = format!("{kind}: dup_with map panicking at call #{panic_at}");
            assert!(res.is_err(), "{ctx}");
            live.expect(0, &format!("{ctx}: mapped values must be dropped"));
            valid(&src, &ctx);
            let after: Vec<(RangeInclusive<u64>, u64)> =
                src.iter().map(|(r, v)| (r, v.tag())).collect();
            assert!(after == before, "{ctx}: source changed");
        }
    }
}

#[test]
fn dup_map_panics_big() {
    dup_map_panics::<BigC>();
}
#[test]
fn dup_map_panics_small() {
    dup_map_panics::<SmallC>();
}
#[test]
fn dup_map_panics_zst() {
    dup_map_panics::<Zst>();
}
