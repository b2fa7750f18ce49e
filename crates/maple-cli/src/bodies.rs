//! The workloads of BENCHMARKS.md, written once for every implementation: setup
//! (untimed), the timed part, the checksum (untimed), and the structures dropped
//! after the timer has stopped.

use std::hint::black_box;

use crate::range_map::{Dir, RangeMapUnderTest};
use crate::rep::Rep;
use crate::rng::{perm, SplitMix64};
use crate::timer::timed_part;
use crate::workloads::{dup_copies, range_window, Case, Workload};

/// `checksum(tree)`: wrapping sum of `first ^ last ^ value` over the entries in order.
pub fn checksum<P: RangeMapUnderTest>(t: &P) -> u64 {
    let mut sum = 0u64;
    t.for_each(|f, l, v| sum = sum.wrapping_add(f ^ l ^ v));
    sum
}

/// `for i in 0..N: store_range(16i, 16i+9, i+1)`.
#[inline]
fn seq_fill<P: RangeMapUnderTest>(t: &mut P, n: u64) {
    for i in 0..n {
        t.store(16 * i, 16 * i + 9, i + 1);
    }
}

/// The bytes-per-entry snapshot of a structure: `(node_bytes, entries)`.
fn bytes_snapshot<P: RangeMapUnderTest>(t: &P) -> (Option<usize>, usize) {
    (t.node_bytes(), t.len())
}

/// Runs one repetition of `case` on implementation `P`.
pub fn run<P: RangeMapUnderTest>(case: &Case) -> Rep {
    let n = case.n;
    let q = case.q.unwrap_or(0);
    match case.workload {
        Workload::SeqStore => seq_store::<P>(n),
        Workload::RandStore => rand_store::<P>(n),
        Workload::Load => load::<P>(n, q),
        Workload::Iter => iter::<P>(n),
        Workload::Erase => erase::<P>(n),
        // `rcu_write impl=maple`: the plain tree's side of the comparison.
        Workload::Overwrite | Workload::RcuWrite => overwrite::<P>(n, q),
        Workload::Dup => copies::<P>(n, |src| src.dup()),
        Workload::Rebuild => copies::<P>(n, |src| src.rebuild()),
        Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
            gaps::<P>(case.workload, n, q)
        }
        Workload::IterRev => passes::<P>(n, Walk::Rev),
        Workload::Range => range::<P>(n, q),
        Workload::IterMut => iter_mut::<P>(n),
        Workload::IntoIter => into_iter::<P>(n),
        Workload::CursorNext => passes::<P>(n, Walk::Cursor(Dir::Fwd)),
        Workload::CursorPrev => passes::<P>(n, Walk::Cursor(Dir::Rev)),
        w @ (Workload::ForkVmas
        | Workload::ForkGb
        | Workload::FirstWrite
        | Workload::RcuRead
        | Workload::RcuReadUnderWrite) => {
            panic!("{w} is not a range-map workload (see mm.rs, rcu.rs)")
        }
    }
}

fn seq_store<P: RangeMapUnderTest>(n: u64) -> Rep {
    let mut t = P::new_regular();
    let (elapsed, ()) = timed_part(|| seq_fill(&mut t, n));
    let (node_bytes, entries) = bytes_snapshot(&t);
    Rep::with_nodes(elapsed, checksum(&t), (node_bytes, entries))
}

fn rand_store<P: RangeMapUnderTest>(n: u64) -> Rep {
    let p = perm(n, &mut SplitMix64::new());
    let mut t = P::new_regular();
    let (elapsed, ()) = timed_part(|| {
        for &i in &p {
            t.store(16 * i, 16 * i + 9, i + 1);
        }
    });
    let (node_bytes, entries) = bytes_snapshot(&t);
    Rep::with_nodes(elapsed, checksum(&t), (node_bytes, entries))
}

fn load<P: RangeMapUnderTest>(n: u64, q: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let mut rng = SplitMix64::new(); // reset
    let span = 16 * n;
    let (elapsed, sum) = timed_part(|| {
        let mut sum = 0u64;
        for _ in 0..q {
            let x = rng.next_u64() % span;
            if let Some(v) = t.load(x) {
                sum = sum.wrapping_add(v);
            }
        }
        sum
    });
    Rep::with_nodes(elapsed, sum, (node_bytes, entries))
}

fn iter<P: RangeMapUnderTest>(n: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let (elapsed, last) = timed_part(|| {
        let mut last = 0u64;
        for _ in 0..10 {
            let mut sum = 0u64;
            t.for_each(|f, l, v| sum = sum.wrapping_add(f ^ l ^ v));
            last = black_box(sum);
        }
        last
    });
    Rep::with_nodes(elapsed, last, (node_bytes, entries))
}

/// How a pass of [`passes`] walks the entries.
#[derive(Clone, Copy)]
enum Walk {
    /// The iterator, in reverse.
    Rev,
    /// A cursor stepping entry to entry.
    Cursor(Dir),
}

/// `iter_rev`, `cursor_next`, `cursor_prev`: `seq_store(N)`, then ten passes
/// over every entry, each summing `first ^ last ^ value`.
fn passes<P: RangeMapUnderTest>(n: u64, walk: Walk) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let (elapsed, last) = timed_part(|| {
        let mut last = 0u64;
        for _ in 0..10 {
            let mut sum = 0u64;
            let add = |f: u64, l: u64, v: u64| sum = sum.wrapping_add(f ^ l ^ v);
            match walk {
                Walk::Rev => t.for_each_rev(add),
                Walk::Cursor(dir) => t.cursor_walk(dir, add),
            }
            last = black_box(sum);
        }
        last
    });
    Rep::with_nodes(elapsed, last, (node_bytes, entries))
}

/// `range`: `seq_store(N)`, reset; Q windows of W = min(100, N) entries, each
/// `16i + 5 ..= 16(i + W - 1) + 5` for `i = next() % (N - W + 1)`: it starts
/// inside entry `i` and ends inside entry `i + W - 1`.
fn range<P: RangeMapUnderTest>(n: u64, q: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let mut rng = SplitMix64::new(); // reset
    let w = range_window(n);
    let (elapsed, sum) = timed_part(|| {
        let mut sum = 0u64;
        for _ in 0..q {
            let i = rng.next_u64() % (n - w + 1);
            t.for_each_overlapping(16 * i + 5, 16 * (i + w - 1) + 5, |f, l, v| {
                sum = sum.wrapping_add(f ^ l ^ v)
            });
        }
        sum
    });
    Rep::with_nodes(elapsed, sum, (node_bytes, entries))
}

/// `iter_mut`: `seq_store(N)`, then ten passes, each adding 1 to every value
/// and summing `first ^ last ^ value` with the value after the addition.
fn iter_mut<P: RangeMapUnderTest>(n: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let (elapsed, last) = timed_part(|| {
        let mut last = 0u64;
        for _ in 0..10 {
            let mut sum = 0u64;
            t.for_each_mut(|f, l, v| {
                *v += 1;
                sum = sum.wrapping_add(f ^ l ^ *v);
            });
            last = black_box(sum);
        }
        last
    });
    Rep::with_nodes(elapsed, last, (node_bytes, entries))
}

/// `into_iter`: ten maps built by `seq_store(N)` (untimed), then each consumed
/// by value in order, summing `first ^ last ^ value`, and freed.
fn into_iter<P: RangeMapUnderTest>(n: u64) -> Rep {
    let maps: Vec<P> = (0..10)
        .map(|_| {
            let mut t = P::new_regular();
            seq_fill(&mut t, n);
            t
        })
        .collect();
    let (node_bytes, entries) = bytes_snapshot(&maps[0]);
    let (elapsed, last) = timed_part(|| {
        let mut last = 0u64;
        for t in maps {
            let mut sum = 0u64;
            t.into_each(|f, l, v| sum = sum.wrapping_add(f ^ l ^ v));
            last = black_box(sum);
        }
        last
    });
    Rep::with_nodes(elapsed, last, (node_bytes, entries))
}

fn erase<P: RangeMapUnderTest>(n: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let p = perm(n, &mut SplitMix64::new()); // reset, then perm
    let (elapsed, ()) = timed_part(|| {
        for &i in &p {
            t.erase(16 * i + 3);
        }
    });
    Rep::with_nodes(elapsed, t.len() as u64, (node_bytes, entries))
}

fn overwrite<P: RangeMapUnderTest>(n: u64, q: u64) -> Rep {
    let mut t = P::new_regular();
    seq_fill(&mut t, n);
    let (node_bytes, entries) = bytes_snapshot(&t);
    let mut rng = SplitMix64::new(); // reset
    let span = 16 * n;
    let (elapsed, ()) = timed_part(|| {
        for k in 0..q {
            let a = rng.next_u64() % span;
            let len = 1 + rng.next_u64() % 64;
            t.store(a, a + len - 1, k + 1);
        }
    });
    Rep::with_nodes(elapsed, checksum(&t), (node_bytes, entries))
}

/// `dup` and `rebuild`: R copies of an allocation tree made by `seq_store(N)`;
/// the copies are kept until the timer has stopped, then freed.
fn copies<P: RangeMapUnderTest>(n: u64, copy: impl Fn(&P) -> P) -> Rep {
    let mut src = P::new_alloc();
    seq_fill(&mut src, n);
    let r = dup_copies(n) as usize;
    let mut out: Vec<P> = Vec::with_capacity(r);
    let (elapsed, ()) = timed_part(|| {
        for _ in 0..r {
            out.push(copy(&src));
        }
    });
    let (node_bytes, entries) = bytes_snapshot(&out[0]);
    let sum = checksum(&out[0]);
    assert_eq!(checksum(&out[r - 1]), sum, "the copies differ");
    drop(out);
    Rep::with_nodes(elapsed, sum, (node_bytes, entries))
}

/// The four gap workloads: setup, then Q queries continuing the random stream.
fn gaps<P: RangeMapUnderTest>(w: Workload, n: u64, q: u64) -> Rep {
    let mut rng = SplitMix64::new(); // reset
    let mut t = P::new_alloc();
    let mut pos = 0u64;
    for i in 0..n {
        let gap = rng.next_u64() % 64;
        let len = 1 + rng.next_u64() % 32;
        let s = pos + gap;
        t.store(s, s + len - 1, i + 1);
        pos = s + len;
    }
    let (node_bytes, entries) = bytes_snapshot(&t);
    let max = pos + 1000;
    let mut sum = 0u64;
    let elapsed = match w {
        Workload::GapRev | Workload::GapFwd => {
            let dir = if w == Workload::GapRev {
                Dir::Rev
            } else {
                Dir::Fwd
            };
            t.prepare_gap_queries(0, max);
            let (elapsed, ()) = timed_part(|| {
                for _ in 0..q {
                    let size = 1 + rng.next_u64() % 64;
                    sum = sum.wrapping_add(t.gap(dir, 0, max, size).unwrap_or(0));
                }
            });
            elapsed
        }
        _ => {
            let dir = if w == Workload::GapWinRev {
                Dir::Rev
            } else {
                Dir::Fwd
            };
            let (elapsed, ()) = timed_part(|| {
                for _ in 0..q {
                    let size = 1 + rng.next_u64() % 64;
                    let a = rng.next_u64() % pos;
                    sum = sum.wrapping_add(t.gap(dir, a, a + 4095, size).unwrap_or(0));
                }
            });
            elapsed
        }
    };
    Rep::with_nodes(elapsed, sum, (node_bytes, entries))
}
