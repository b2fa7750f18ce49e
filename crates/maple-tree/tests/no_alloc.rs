//! Reads never allocate: every read path (get, get_key_value,
//! iteration both ways, range, first/last, gap search, cursor walks) is run on
//! trees of both kinds and several heights under a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use maple_tree::MapleTree;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

/// Runs `f` and returns how many allocations this thread made meanwhile.
fn count<R>(f: impl FnOnce() -> R) -> (u64, R) {
    let before = allocs();
    let r = std::hint::black_box(f());
    (allocs() - before, r)
}

#[test]
fn reads_never_allocate() {
    // The counter sees allocations (so a 0 below means something).
    let (a, _) = count(|| vec![1u8; 10]);
    assert!(a >= 1);
    let (a, _) = count(|| {
        let mut t = MapleTree::new();
        t.insert(1..=2, 1u64);
        t
    });
    assert!(a >= 1, "a tree with an entry holds a node");
    for alloc in [false, true] {
        // Miri: one multi-level tree is enough (every step is interpreted).
        let sizes: &[u64] = if cfg!(miri) {
            &[0, 1, 10, 300]
        } else {
            &[0, 1, 10, 100, 1_000, 20_000]
        };
        for &n in sizes {
            let mut t: MapleTree<u64> = if alloc {
                MapleTree::new_alloc()
            } else {
                MapleTree::new()
            };
            for i in 0..n {
                t.insert(i * 10..=i * 10 + 4, i);
            }
            t.insert(u64::MAX - 5..=u64::MAX, 1);
            let name = format!(
                "{} tree of {n} entries",
                if alloc { "alloc" } else { "regular" }
            );
            let probes: Vec<u64> = (0..200u64).map(|k| k * n.max(1) / 20 + k % 7).collect();
            let (a, _) = count(|| {
                let mut s = 0u64;
                for &p in &probes {
                    s ^= t.get(p).copied().unwrap_or(0);
                    s ^= t.get_key_value(p).map_or(0, |(r, _)| *r.start());
                }
                s
            });
            assert_eq!(a, 0, "{name}: get / get_key_value allocated");
            let (a, _) = count(|| t.iter().map(|(_, v)| *v).sum::<u64>());
            assert_eq!(a, 0, "{name}: iter allocated");
            let (a, _) = count(|| t.iter().rev().count());
            assert_eq!(a, 0, "{name}: iter().rev() allocated");
            let (a, _) = count(|| {
                let mut it = t.iter();
                let mut k = 0;
                while it.next().is_some() && it.next_back().is_some() {
                    k += 1;
                }
                k
            });
            assert_eq!(a, 0, "{name}: two-ended iter allocated");
            let (a, _) = count(|| t.range(n * 3..=n * 6).count() + t.range(..).rev().count());
            assert_eq!(a, 0, "{name}: range allocated");
            let (a, _) = count(|| (t.first_key_value().is_some(), t.last_key_value().is_some()));
            assert_eq!(a, 0, "{name}: first/last allocated");
            let (a, _) = count(|| {
                let mut s = 0u64;
                for size in [1u64, 3, 5, 6, 100, 1 << 40] {
                    s ^= t.find_gap(size, ..).unwrap_or(0);
                    s ^= t.find_gap_rev(size, ..).unwrap_or(0);
                    s ^= t.find_gap(size, n * 2..=n * 8).unwrap_or(0);
                }
                s
            });
            assert_eq!(a, 0, "{name}: gap search allocated");
            let (a, _) = count(|| {
                let mut c = t.cursor(n * 5);
                let mut k = 0;
                while c.next_entry().is_some() && k < 500 {
                    k += 1;
                }
                c.seek(n * 2);
                while c.prev_range().is_some() && k < 1_000 {
                    k += 1;
                }
                c.seek(7);
                while c.next_range().is_some() && k < 1_500 {
                    k += 1;
                }
                k
            });
            assert_eq!(a, 0, "{name}: cursor walks allocated");
            let (a, _) = count(|| {
                let mut c = t.cursor_mut(n * 5);
                let mut k = 0;
                while c.prev_entry().is_some() && k < 500 {
                    k += 1;
                }
                k
            });
            assert_eq!(a, 0, "{name}: cursor_mut walk allocated");
        }
    }
}
