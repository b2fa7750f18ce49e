//! Fallible duplication fails cleanly at every point: nothing leaks, nothing
//! is dropped twice, the source is untouched. Needs the `failpoints` feature.
#![cfg(feature = "failpoints")]

use maple_tree::{failpoints, release_cached_chunks, DupError, MapleTree};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};

/// Bytes currently allocated through the global allocator.
static HEAP: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        HEAP.fetch_add(l.size() as isize, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HEAP.fetch_sub(l.size() as isize, Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Values alive; a value dropped twice trips the `alive` flag check.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A counted value larger than a slot (so it is boxed inside the tree).
struct Counted {
    id: u64,
    alive: bool,
    _pad: [u64; 2],
}

impl Counted {
    fn new(id: u64) -> Self {
        LIVE.fetch_add(1, Relaxed);
        Counted {
            id,
            alive: true,
            _pad: [0; 2],
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.id)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        assert!(self.alive, "value {} dropped twice", self.id);
        self.alive = false;
        LIVE.fetch_sub(1, Relaxed);
    }
}

fn source(n: u64) -> MapleTree<Counted> {
    let mut t = MapleTree::new_alloc();
    for i in 0..n {
        t.insert(16 * i..=16 * i + 9, Counted::new(i));
    }
    t
}

/// Node allocations a successful duplication of `t` makes.
fn allocs_of_dup(t: &MapleTree<Counted>) -> usize {
    let before = failpoints::node_allocs();
    let copy = t.try_clone().unwrap();
    let made = failpoints::node_allocs() - before;
    assert_eq!(made, copy.stats().node_bytes / copy.stats().node_size);
    made
}

/// The counters are global, so the scenarios run one after another in one test.
#[test]
fn fallible_duplication_cleans_up_at_every_failure_point() {
    node_allocation_failure_at_every_point_cleans_up();
    value_map_failure_at_every_point_cleans_up();
}

fn node_allocation_failure_at_every_point_cleans_up() {
    let t = source(10_000);
    let live = LIVE.load(Relaxed);
    release_cached_chunks();
    let heap = HEAP.load(Relaxed);
    let points = allocs_of_dup(&t);
    assert!(points > 1000, "{points} allocation points");
    for k in 0..points {
        failpoints::fail_node_alloc_after(k);
        let result = t.try_clone();
        failpoints::clear();
        assert!(
            result.is_err(),
            "allocation {k} of {points} failed but the copy succeeded"
        );
        assert_eq!(
            LIVE.load(Relaxed),
            live,
            "values leaked or dropped after failing at {k}"
        );
        if k % 97 == 0 {
            release_cached_chunks();
            assert_eq!(
                HEAP.load(Relaxed),
                heap,
                "memory leaked after failing at allocation {k}"
            );
        }
    }
    release_cached_chunks();
    assert_eq!(HEAP.load(Relaxed), heap);
    t.validate().unwrap();
    assert_eq!(t.len(), 10_000);
    assert!(t
        .iter()
        .enumerate()
        .all(|(i, (r, v))| v.id == i as u64 && *r.start() == 16 * i as u64));
}

fn value_map_failure_at_every_point_cleans_up() {
    let t = source(10_000);
    let live = LIVE.load(Relaxed);
    for fail_at in (0..10_000u64).step_by(7).chain([9_999]) {
        let mut mapped = 0u64;
        let result = t.try_dup_with(|v| {
            if mapped == fail_at {
                return Err("map failed");
            }
            mapped += 1;
            Ok(Counted::new(v.id * 2))
        });
        assert!(matches!(result, Err(DupError::Map("map failed"))));
        assert_eq!(mapped, fail_at);
        assert_eq!(
            LIVE.load(Relaxed),
            live,
            "mapped values leaked after failing at value {fail_at}"
        );
    }
    let ok = t
        .try_dup_with(|v| Ok::<_, ()>(Counted::new(v.id * 2)))
        .unwrap();
    ok.validate().unwrap();
    assert!(ok.iter().all(|(r, v)| v.id * 8 == *r.start()));
}
