//! Criterion micro-benchmark of aligned gap search on an allocation tree
//! whose free ranges are all *tight*: each big enough for `size` but not for
//! an aligned fit (the case the roomy `size + align - 1` pass cannot answer,
//! and every such range below the answer is looked at), against a roomy
//! range below them all (answered by the roomy pass alone) and the
//! unaligned search.
//!
//! Layout: entry `i` covers pages `8i..8i+5`, leaving 3-page free ranges at
//! pages `8i+5..8i+8`; the request is 2 pages aligned to 4 pages, which no
//! such range holds. Above the last entry the space is free.
//!
//! `cargo bench -p maple-tree --bench aligned_gaps`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use maple_tree::MapleTree;

const PAGE: u64 = 0x1000;
const SIZES: [u64; 3] = [1_000, 10_000, 100_000];

fn tight_tree(n: u64) -> MapleTree<u64> {
    (0..n)
        .map(|i| (8 * i * PAGE..(8 * i + 5) * PAGE, i))
        .collect::<Vec<_>>()
        .into_iter()
        .fold(MapleTree::new_alloc(), |mut t, (r, v)| {
            t.insert(r, v);
            t
        })
}

fn aligned_search(c: &mut Criterion) {
    let mut g = c.benchmark_group("find_gap_aligned");
    for n in SIZES {
        let t = tight_tree(n);
        let end = 8 * n * PAGE;
        // Only tight ranges in the window: every one is looked at, none fits.
        assert_eq!(t.find_gap_aligned(2 * PAGE, 4 * PAGE, ..end), None);
        g.bench_function(BenchmarkId::new("tight_none", n), |b| {
            b.iter(|| t.find_gap_aligned(black_box(2 * PAGE), 4 * PAGE, ..end))
        });
        // The same, with one tight fit made at the far end.
        let mut last = t.clone();
        last.remove_range(end - 4 * PAGE..end - 2 * PAGE);
        assert_eq!(
            last.find_gap_aligned(2 * PAGE, 4 * PAGE, ..end),
            Some(end - 4 * PAGE)
        );
        g.bench_function(BenchmarkId::new("tight_last", n), |b| {
            b.iter(|| last.find_gap_aligned(black_box(2 * PAGE), 4 * PAGE, ..end))
        });
        // A roomy range above the entries: the tight ranges below it are
        // all looked at before it is the answer.
        assert_eq!(t.find_gap_aligned(2 * PAGE, 4 * PAGE, ..), Some(end));
        g.bench_function(BenchmarkId::new("roomy_above_tight", n), |b| {
            b.iter(|| t.find_gap_aligned(black_box(2 * PAGE), 4 * PAGE, ..))
        });
        // A roomy range below every tight one (the first entry removed):
        // the roomy pass alone answers.
        let mut first = t.clone();
        first.remove_range(..8 * PAGE);
        assert_eq!(first.find_gap_aligned(2 * PAGE, 4 * PAGE, ..), Some(0));
        g.bench_function(BenchmarkId::new("roomy_first", n), |b| {
            b.iter(|| first.find_gap_aligned(black_box(2 * PAGE), 4 * PAGE, ..))
        });
        // Unaligned, for comparison: the first free range fits.
        g.bench_function(BenchmarkId::new("unaligned_find_gap", n), |b| {
            b.iter(|| t.find_gap(black_box(2 * PAGE), ..))
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
    targets = aligned_search
}
criterion_main!(benches);
