//! Criterion micro-benchmarks of the tree's hot paths, at a few sizes:
//! get (hit / miss), sequential and random insert, overwrite, remove,
//! find_gap both ways, clone. Entries follow BENCHMARKS.md's layout: entry `i` is
//! `16i..=16i+9` with value `i + 1`.
//!
//! `cargo bench -p maple-tree --bench hot_paths` (add `-- get` to filter).
//! The yardstick with checksums and peers is `maple bench` (crates/maple-cli).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use maple_tree::MapleTree;

const SIZES: [u64; 3] = [1_000, 100_000, 1_000_000];
const BUILD_SIZES: [u64; 2] = [10_000, 1_000_000];

/// The tests' SplitMix64 (BENCHMARKS.md's generator).
#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

/// BENCHMARKS.md's seed.
const SEED: u64 = 42;

fn perm(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut p: Vec<u64> = (0..n).collect();
    for i in (1..n as usize).rev() {
        p.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    p
}

fn seq_tree(n: u64, alloc: bool) -> MapleTree<u64> {
    let mut t = if alloc {
        MapleTree::new_alloc()
    } else {
        MapleTree::new()
    };
    for i in 0..n {
        t.insert(16 * i..=16 * i + 9, i + 1);
    }
    t
}

/// BENCHMARKS.md's gap setup; returns the tree and `pos`.
fn gap_tree(n: u64) -> (MapleTree<u64>, u64) {
    let mut rng = Rng(SEED);
    let mut t = MapleTree::new_alloc();
    let mut pos = 0;
    for i in 0..n {
        let s = pos + rng.next() % 64;
        let len = 1 + rng.next() % 32;
        t.insert(s..=s + len - 1, i + 1);
        pos = s + len;
    }
    (t, pos)
}

fn get(c: &mut Criterion) {
    let mut g = c.benchmark_group("get");
    for n in SIZES {
        let t = seq_tree(n, false);
        let mut rng = Rng(SEED);
        let keys: Vec<u64> = (0..4096).map(|_| rng.next() % n).collect();
        g.bench_with_input(BenchmarkId::new("hit", n), &keys, |b, keys| {
            let mut k = 0;
            b.iter(|| {
                k = (k + 1) & 4095;
                black_box(t.get(16 * keys[k] + 5))
            })
        });
        g.bench_with_input(BenchmarkId::new("miss", n), &keys, |b, keys| {
            let mut k = 0;
            b.iter(|| {
                k = (k + 1) & 4095;
                black_box(t.get(16 * keys[k] + 12))
            })
        });
    }
    g.finish();
}

fn insert(c: &mut Criterion) {
    let mut g = c.benchmark_group("insert");
    g.sample_size(10);
    for n in BUILD_SIZES {
        g.throughput(Throughput::Elements(n));
        g.bench_function(BenchmarkId::new("sequential", n), |b| {
            b.iter_batched(
                MapleTree::<u64>::new,
                |mut t| {
                    for i in 0..n {
                        t.insert(16 * i..=16 * i + 9, i + 1);
                    }
                    t // dropped outside the timing
                },
                BatchSize::PerIteration,
            )
        });
        let p = perm(n, &mut Rng(SEED));
        g.bench_function(BenchmarkId::new("random", n), |b| {
            b.iter_batched(
                MapleTree::<u64>::new,
                |mut t| {
                    for &i in &p {
                        t.insert(16 * i..=16 * i + 9, i + 1);
                    }
                    t
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn overwrite(c: &mut Criterion) {
    let mut g = c.benchmark_group("overwrite");
    for n in SIZES {
        let mut t = seq_tree(n, false);
        let mut rng = Rng(SEED);
        let mut q = 0;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let a = rng.next() % (16 * n);
                let len = 1 + rng.next() % 64;
                q += 1;
                t.insert(a..=a + len - 1, q);
            })
        });
    }
    g.finish();
}

fn remove(c: &mut Criterion) {
    let mut g = c.benchmark_group("remove");
    g.sample_size(10);
    for n in BUILD_SIZES {
        let src = seq_tree(n, false);
        let p = perm(n, &mut Rng(SEED));
        g.throughput(Throughput::Elements(n));
        g.bench_function(BenchmarkId::new("all_random_order", n), |b| {
            b.iter_batched(
                || src.clone(),
                |mut t| {
                    for &i in &p {
                        black_box(t.remove(16 * i + 3));
                    }
                    t
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn find_gap(c: &mut Criterion) {
    let mut g = c.benchmark_group("find_gap");
    for n in [1_000, 100_000] {
        let (t, pos) = gap_tree(n);
        let mut rng = Rng(SEED);
        g.bench_function(BenchmarkId::new("lowest", n), |b| {
            b.iter(|| black_box(t.find_gap(1 + rng.next() % 64, 0..=pos + 1000)))
        });
        g.bench_function(BenchmarkId::new("highest", n), |b| {
            b.iter(|| black_box(t.find_gap_rev(1 + rng.next() % 64, 0..=pos + 1000)))
        });
        g.bench_function(BenchmarkId::new("lowest_in_window", n), |b| {
            b.iter(|| {
                let size = 1 + rng.next() % 64;
                let a = rng.next() % pos;
                black_box(t.find_gap(size, a..=a + 4095))
            })
        });
        g.bench_function(BenchmarkId::new("highest_in_window", n), |b| {
            b.iter(|| {
                let size = 1 + rng.next() % 64;
                let a = rng.next() % pos;
                black_box(t.find_gap_rev(size, a..=a + 4095))
            })
        });
    }
    g.finish();
}

fn clone(c: &mut Criterion) {
    let mut g = c.benchmark_group("clone");
    for n in [21, 1_621, 51_221, 1_000_000] {
        let t = seq_tree(n, true);
        g.throughput(Throughput::Elements(n));
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_with_large_drop(|| t.clone())
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = get, insert, overwrite, remove, find_gap, clone
}
criterion_main!(benches);
