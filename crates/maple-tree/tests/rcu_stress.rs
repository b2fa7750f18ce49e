//! Readers running against a writer in RCU mode see only consistent data,
//! and every value is dropped exactly once.

mod common;
use common::Rng;
use maple_tree::{MapleTree, RcuMapleTree};
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::thread;
use std::time::{Duration, Instant};

/// A value that records the range it was stored for (so a reader can check
/// what it sees), counts live instances and catches double drops.
static LIVE: AtomicUsize = AtomicUsize::new(0);

struct Tagged {
    first: u64,
    last: u64,
    alive: AtomicBool,
}

impl Tagged {
    fn new(r: RangeInclusive<u64>) -> Self {
        LIVE.fetch_add(1, Relaxed);
        Tagged {
            first: *r.start(),
            last: *r.end(),
            alive: AtomicBool::new(true),
        }
    }
    fn check(&self, r: &RangeInclusive<u64>) {
        assert!(self.alive.load(Relaxed), "reader saw a dropped value");
        assert_eq!(
            (self.first, self.last),
            (*r.start(), *r.end()),
            "value does not match its range"
        );
    }
}

impl Drop for Tagged {
    fn drop(&mut self) {
        assert!(self.alive.swap(false, Relaxed), "value dropped twice");
        LIVE.fetch_sub(1, Relaxed);
    }
}

/// A small value stored inline in the slot: the range packed into 64 bits.
fn pack(r: &RangeInclusive<u64>) -> u64 {
    r.start() << 32 | r.end()
}

const SPACE: u64 = 1 << 20;

fn writer_ops(rng: &mut Rng, step: u64) -> (u8, u64, u64) {
    let first = rng.next() % SPACE;
    let len = 1 + rng.next() % if step % 16 == 0 { 4096 } else { 64 };
    (rng.next() as u8 % 8, first, (first + len - 1).min(SPACE))
}

#[test]
fn readers_see_consistent_entries_under_a_writer_boxed_values() {
    let before = LIVE.load(Relaxed);
    let tree: RcuMapleTree<Tagged> = RcuMapleTree::new_alloc();
    let stop = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    thread::scope(|s| {
        for id in 0..3 {
            let (tree, stop, reads) = (&tree, &stop, &reads);
            s.spawn(move || {
                let mut rng = Rng(id);
                while !stop.load(Relaxed) {
                    let r = tree.read();
                    for _ in 0..64 {
                        let i = rng.next() % SPACE;
                        if let Some((range, v)) = r.get_key_value(i) {
                            assert!(range.contains(&i));
                            v.check(&range);
                        }
                    }
                    // A short iteration: strictly increasing, never overlapping.
                    let start = rng.next() % SPACE;
                    let mut prev: Option<u64> = None;
                    for (range, v) in r.range(start..).take(200) {
                        v.check(&range);
                        if let Some(p) = prev {
                            assert!(
                                *range.start() > p,
                                "iteration went back: {range:?} after {p}"
                            );
                        }
                        prev = Some(*range.end());
                    }
                    if let Some(g) = r.find_gap(16, ..SPACE) {
                        assert!(g + 15 < SPACE);
                    }
                    reads.fetch_add(1, Relaxed);
                }
            });
        }
        let mut rng = Rng(99);
        let deadline = Instant::now() + Duration::from_millis(1500);
        let mut step = 0;
        while Instant::now() < deadline || step < 20_000 {
            let (op, first, last) = writer_ops(&mut rng, step);
            let mut w = tree.write();
            match op {
                0..=4 => w.insert_with(first..=last, Tagged::new(first..=last), |_, r| {
                    Tagged::new(r)
                }),
                5 => {
                    w.erase(first);
                }
                6 => w.remove_range_with(first..=last, |_, r| Tagged::new(r)),
                _ => {
                    let size = 1 + first % 100;
                    if let Some(start) = w.find_gap(size, first..) {
                        let end = start + size - 1;
                        assert!(w.try_insert(start..=end, Tagged::new(start..=end)).is_ok());
                    }
                }
            }
            if step % 4096 == 0 {
                w.validate().unwrap();
            }
            drop(w);
            step += 1;
        }
        stop.store(true, Relaxed);
    });
    assert!(reads.load(Relaxed) > 0);
    let plain: MapleTree<Tagged> = tree.into_inner();
    plain.validate().unwrap();
    for (r, v) in plain.iter() {
        v.check(&r);
    }
    assert_eq!(
        LIVE.load(Relaxed) - before,
        plain.len(),
        "values leaked or lost"
    );
    drop(plain);
    assert_eq!(LIVE.load(Relaxed), before);
}

#[test]
fn readers_see_consistent_entries_under_a_writer_inline_values() {
    let tree: RcuMapleTree<u64> = RcuMapleTree::new();
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        for id in 0..2 {
            let (tree, stop) = (&tree, &stop);
            s.spawn(move || {
                let mut rng = Rng(id + 10);
                while !stop.load(Relaxed) {
                    let r = tree.read();
                    for _ in 0..64 {
                        let i = rng.next() % SPACE;
                        if let Some((range, v)) = r.get_key_value(i) {
                            assert_eq!(*v, pack(&range));
                        }
                    }
                    let mut prev = None;
                    for (range, v) in r.iter().take(300) {
                        assert_eq!(*v, pack(&range));
                        assert!(prev.is_none_or(|p| *range.start() > p));
                        prev = Some(*range.end());
                    }
                }
            });
        }
        let mut rng = Rng(7);
        for step in 0..30_000 {
            let (op, first, last) = writer_ops(&mut rng, step);
            let mut w = tree.write();
            match op {
                0..=5 => w.insert_with(first..=last, pack(&(first..=last)), |_, r| pack(&r)),
                6 => w.remove_range_with(first..=last, |_, r| pack(&r)),
                _ => {
                    w.erase(first);
                }
            }
        }
        stop.store(true, Relaxed);
    });
    tree.into_inner().validate().unwrap();
}

#[test]
fn references_outlive_a_concurrent_replace() {
    let tree = RcuMapleTree::new();
    tree.write().insert(0..10, Box::new(String::from("old")));
    let r = tree.read();
    let v = r.get(5).unwrap();
    tree.write().insert(0..10, Box::new(String::from("new")));
    tree.write().remove(5);
    assert_eq!(v.as_str(), "old"); // still valid: the guard keeps it
    assert_eq!(r.get(5), None); // but a new lookup sees the removal
    drop(r);
    assert!(tree.read().is_empty());
}

#[test]
fn preallocated_store_takes_no_new_chunk() {
    let tree = RcuMapleTree::new_alloc();
    {
        let mut w = tree.write();
        for i in 0..1000u64 {
            w.insert(i * 10..=i * 10 + 4, i);
        }
        w.preallocate().unwrap();
        let reserved = w.stats().reserved_bytes;
        w.insert(3..=2500, 7); // a spanning store
        assert_eq!(w.stats().reserved_bytes, reserved);
    }
    assert_eq!(tree.read().get(100), Some(&7));
}
