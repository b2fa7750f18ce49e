//! The plain reference model: a `BTreeMap`-based range map written for obviousness,
//! not speed, and the workloads of BENCHMARKS.md re-expressed on it to compute the
//! checksums expected at sizes the reference table does not list.
//!
//! Kept apart from `peers/` and `bodies.rs` on purpose: the workload loops are written
//! a second time here, from the document, so that a mistake in the benchmark's own
//! loops shows up as a checksum mismatch instead of being copied into the expectation.

use std::collections::{BTreeMap, HashMap};

use crate::rng::{perm, SplitMix64};
use crate::workloads::{range_window, Case, Workload};

/// Non-overlapping inclusive ranges `first..=last` with a `u64` value; never merges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefMap {
    /// first -> (last, value)
    entries: BTreeMap<u64, (u64, u64)>,
}

impl RefMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every entry overlapping `first..=last`, as (first, last, value), ascending.
    fn overlapping(&self, first: u64, last: u64) -> Vec<(u64, u64, u64)> {
        let mut found: Vec<(u64, u64, u64)> = self
            .entries
            .range(..=last)
            .rev()
            .take_while(|(_, &(l, _))| l >= first)
            .map(|(&f, &(l, v))| (f, l, v))
            .collect();
        found.reverse();
        found
    }

    /// `store_range(first, last, value)`: overwrite; the parts of cut entries outside
    /// the range keep their value.
    pub fn store(&mut self, first: u64, last: u64, value: u64) {
        assert!(first <= last);
        for (f, l, v) in self.overlapping(first, last) {
            self.entries.remove(&f);
            if f < first {
                self.entries.insert(f, (first - 1, v));
            }
            if l > last {
                self.entries.insert(last + 1, (l, v));
            }
        }
        self.entries.insert(first, (last, value));
    }

    /// `load(index)`.
    pub fn load(&self, index: u64) -> Option<u64> {
        self.overlapping(index, index).first().map(|&(_, _, v)| v)
    }

    /// `erase(index)`: removes the whole entry containing `index`.
    pub fn erase(&mut self, index: u64) {
        if let Some(&(f, _, _)) = self.overlapping(index, index).first() {
            self.entries.remove(&f);
        }
    }

    /// The entries in order, as (first, last, value).
    pub fn entries(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.entries.iter().map(|(&f, &(l, v))| (f, l, v))
    }

    /// The maximal empty ranges inside `min..=max`, ascending.
    pub fn gaps(&self, min: u64, max: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut next_free = Some(min); // lowest index not yet known to be covered
        for (f, l, _) in self.overlapping(min, max) {
            let Some(from) = next_free else { break };
            if f > from {
                out.push((from, f - 1));
            }
            next_free = if l >= max {
                None
            } else {
                Some(from.max(l + 1))
            };
        }
        if let Some(from) = next_free {
            out.push((from, max));
        }
        out
    }

    /// `empty_area(min, max, size)`: the lowest fitting start.
    pub fn empty_area(&self, min: u64, max: u64, size: u64) -> Option<u64> {
        self.gaps(min, max)
            .into_iter()
            .find(|&(a, b)| b - a >= size - 1)
            .map(|(a, _)| a)
    }

    /// `empty_area_rev(min, max, size)`: the highest fitting start.
    pub fn empty_area_rev(&self, min: u64, max: u64, size: u64) -> Option<u64> {
        self.gaps(min, max)
            .into_iter()
            .rev()
            .find(|&(a, b)| b - a >= size - 1)
            .map(|(_, b)| b - (size - 1))
    }
}

/// `checksum(tree)`: wrapping sum of `first ^ last ^ value` over the entries.
pub fn checksum(map: &RefMap) -> u64 {
    map.entries()
        .fold(0u64, |acc, (f, l, v)| acc.wrapping_add(f ^ l ^ v))
}

fn seq_store(n: u64) -> RefMap {
    let mut m = RefMap::new();
    for i in 0..n {
        m.store(16 * i, 16 * i + 9, i + 1);
    }
    m
}

/// The gap workloads' setup; returns the map and `pos`, and leaves `rng` where
/// the queries continue.
fn gap_setup(n: u64, rng: &mut SplitMix64) -> (RefMap, u64) {
    let mut m = RefMap::new();
    let mut pos = 0u64;
    for i in 0..n {
        let gap = rng.next_u64() % 64;
        let len = 1 + rng.next_u64() % 32;
        let s = pos + gap;
        m.store(s, s + len - 1, i + 1);
        pos = s + len;
    }
    (m, pos)
}

/// Gap queries on a map that does not change: memoised, because without gap
/// tracking a miss (or a large request) scans the whole map.
struct GapOracle<'a> {
    map: &'a RefMap,
    memo: HashMap<(bool, u64, u64, u64), Option<u64>>,
}

impl GapOracle<'_> {
    fn query(&mut self, rev: bool, min: u64, max: u64, size: u64) -> Option<u64> {
        let map = self.map;
        *self.memo.entry((rev, min, max, size)).or_insert_with(|| {
            if rev {
                map.empty_area_rev(min, max, size)
            } else {
                map.empty_area(min, max, size)
            }
        })
    }
}

/// `first_write`'s checksum for a mapping of `pages` pages (BENCHMARKS.md:
/// 262144), from the definition alone, with no address space: every page of the
/// parent holds the byte 1 at offset 0 and the child starts as its copy; the child
/// writes `k % 251 + 2` into page `next() % pages` for k in 0..1024 (a page written
/// twice keeps the last byte); the checksum sums, over the 1024 pages in write
/// order, the child's byte plus the parent's (still 1).
pub fn first_write_checksum(pages: u64) -> u64 {
    let mut rng = SplitMix64::new();
    let order: Vec<u64> = (0..1024).map(|_| rng.next_u64() % pages).collect();
    let mut child: HashMap<u64, u64> = HashMap::new(); // page -> byte; absent = 1
    for (k, &p) in order.iter().enumerate() {
        child.insert(p, k as u64 % 251 + 2);
    }
    let parent = |_p: u64| 1u64;
    order
        .iter()
        .map(|&p| child.get(&p).copied().unwrap_or(1) + parent(p))
        .sum()
}

/// The checksum `case` must produce, computed on the reference model.
///
/// # Panics
/// For `rcu_read_under_write`, which has no checksum (see
/// [`Workload::deterministic`]).
pub fn expected_checksum(case: &Case) -> u64 {
    let n = case.n;
    let q = case.q.unwrap_or(0);
    let mut rng = SplitMix64::new();
    match case.workload.checksum_of() {
        Workload::SeqStore | Workload::Iter | Workload::Dup | Workload::Rebuild => {
            checksum(&seq_store(n))
        }
        // Every entry once, each pass (the sum does not depend on the order).
        Workload::IntoIter | Workload::CursorNext | Workload::CursorPrev => checksum(&seq_store(n)),
        Workload::IterRev => seq_store(n)
            .entries()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .fold(0u64, |acc, (f, l, v)| acc.wrapping_add(f ^ l ^ v)),
        Workload::Range => {
            let m = seq_store(n);
            let w = range_window(n);
            let mut sum = 0u64;
            for _ in 0..q {
                let i = rng.next_u64() % (n - w + 1);
                for (f, l, v) in m.overlapping(16 * i + 5, 16 * (i + w - 1) + 5) {
                    sum = sum.wrapping_add(f ^ l ^ v);
                }
            }
            sum
        }
        Workload::IterMut => {
            let mut m = seq_store(n);
            let mut sum = 0u64;
            for _ in 0..10 {
                sum = 0;
                for (&f, (l, v)) in m.entries.iter_mut() {
                    *v += 1;
                    sum = sum.wrapping_add(f ^ *l ^ *v);
                }
            }
            sum
        }
        Workload::RandStore => {
            let p = perm(n, &mut rng);
            let mut m = RefMap::new();
            for &i in &p {
                m.store(16 * i, 16 * i + 9, i + 1);
            }
            checksum(&m)
        }
        Workload::Load => {
            let m = seq_store(n);
            let mut sum = 0u64;
            for _ in 0..q {
                let x = rng.next_u64() % (16 * n);
                if let Some(v) = m.load(x) {
                    sum = sum.wrapping_add(v);
                }
            }
            sum
        }
        Workload::Erase => {
            let mut m = seq_store(n);
            for i in perm(n, &mut rng) {
                m.erase(16 * i + 3);
            }
            m.len() as u64
        }
        Workload::Overwrite => {
            let mut m = seq_store(n);
            for k in 0..q {
                let a = rng.next_u64() % (16 * n);
                let len = 1 + rng.next_u64() % 64;
                m.store(a, a + len - 1, k + 1);
            }
            checksum(&m)
        }
        Workload::GapRev | Workload::GapFwd | Workload::GapWinRev | Workload::GapWinFwd => {
            let (m, pos) = gap_setup(n, &mut rng);
            let mut oracle = GapOracle {
                map: &m,
                memo: HashMap::new(),
            };
            let mut sum = 0u64;
            for _ in 0..q {
                let size = 1 + rng.next_u64() % 64;
                let r = match case.workload {
                    Workload::GapRev => oracle.query(true, 0, pos + 1000, size),
                    Workload::GapFwd => oracle.query(false, 0, pos + 1000, size),
                    w => {
                        let a = rng.next_u64() % pos;
                        // A window query rarely repeats: no need to memoise it.
                        if w == Workload::GapWinRev {
                            m.empty_area_rev(a, a + 4095, size)
                        } else {
                            m.empty_area(a, a + 4095, size)
                        }
                    }
                };
                sum = sum.wrapping_add(r.unwrap_or(0));
            }
            sum
        }
        // N one-page VMAs whose protections alternate never merge, and fork copies
        // every VMA (none is VM_DONTCOPY): the child has N.
        Workload::ForkVmas => n,
        // Every page of the mapping was written before the fork: all resident, and
        // the child maps every one of them.
        Workload::ForkGb => n,
        Workload::FirstWrite => first_write_checksum(n),
        w @ (Workload::RcuRead | Workload::RcuReadUnderWrite | Workload::RcuWrite) => {
            panic!("{w} has no checksum of its own")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::table_checksum;
    use crate::workloads::FORK_TABLE_NS;

    fn case(workload: Workload, n: u64, q: Option<u64>) -> Case {
        Case { workload, n, q }
    }

    /// Closed form for seq_store: `16i ^ (16i+9) = 9`, so the checksum is
    /// the sum over i of `9 ^ (i+1)`.
    fn seq_closed_form(n: u64) -> u64 {
        (0..n).fold(0u64, |a, i| a.wrapping_add(9 ^ (i + 1)))
    }

    #[test]
    fn model_store_splits_and_never_merges() {
        let mut m = RefMap::new();
        m.store(0, 99, 1);
        m.store(10, 19, 2);
        m.store(20, 29, 2); // adjacent, equal value: stays a separate entry
        let e: Vec<_> = m.entries().collect();
        assert_eq!(e, vec![(0, 9, 1), (10, 19, 2), (20, 29, 2), (30, 99, 1)]);
        m.store(5, 35, 3);
        let e: Vec<_> = m.entries().collect();
        assert_eq!(e, vec![(0, 4, 1), (5, 35, 3), (36, 99, 1)]);
        assert_eq!(m.load(4), Some(1));
        assert_eq!(m.load(100), None);
        m.erase(20);
        assert_eq!(m.len(), 2);
        assert_eq!(m.load(20), None);
    }

    #[test]
    fn model_gap_search() {
        let mut m = RefMap::new();
        m.store(10, 19, 1);
        m.store(25, 29, 2);
        assert_eq!(m.gaps(0, 40), vec![(0, 9), (20, 24), (30, 40)]);
        assert_eq!(m.empty_area(0, 40, 5), Some(0));
        assert_eq!(m.empty_area(5, 40, 5), Some(5));
        assert_eq!(m.empty_area(6, 40, 5), Some(20));
        assert_eq!(m.empty_area(0, 40, 12), None);
        assert_eq!(m.empty_area_rev(0, 40, 5), Some(36));
        assert_eq!(m.empty_area_rev(0, 28, 5), Some(20));
        assert_eq!(m.empty_area_rev(0, 28, 6), Some(4));
        assert_eq!(m.empty_area_rev(12, 28, 6), None);
        assert_eq!(m.empty_area(12, 19, 1), None);
        assert_eq!(m.empty_area(0, u64::MAX, 1), Some(0));
        m.store(0, u64::MAX, 3);
        assert_eq!(m.gaps(0, u64::MAX), vec![]);
    }

    #[test]
    fn seq_checksums_match_the_table_and_the_closed_form() {
        for n in FORK_TABLE_NS.into_iter().filter(|&n| n <= 51221) {
            let want = table_checksum(&case(Workload::Dup, n, None)).unwrap();
            assert_eq!(seq_closed_form(n), want, "closed form, N={n}");
            assert_eq!(checksum(&seq_store(n)), want, "model, N={n}");
        }
        assert_eq!(seq_closed_form(1_000_000), 500_000_500_000);
    }

    #[test]
    fn rand_store_and_erase_at_small_n() {
        for n in [1, 2, 21, 1621] {
            assert_eq!(
                expected_checksum(&case(Workload::RandStore, n, None)),
                seq_closed_form(n)
            );
            assert_eq!(expected_checksum(&case(Workload::Erase, n, None)), 0);
        }
    }

    #[test]
    fn first_write_checksum_from_the_definition() {
        // 1024 writes into 262144 pages; pinned by an independent computation
        // (Python, from BENCHMARKS.md's text), and equal to what maple-mm's child and
        // parent read back (`maple bench --workload first_write`).
        assert_eq!(first_write_checksum(262_144), 128_729);
        // One page: every write lands on it, the last byte is 1023 % 251 + 2 = 21.
        assert_eq!(first_write_checksum(1), 1024 * (21 + 1));
        // Without repeats every page keeps its own byte: sum of (k % 251 + 3).
        let mut rng = SplitMix64::new();
        let mut seen = std::collections::HashSet::new();
        let distinct = (0..1024).all(|_| seen.insert(rng.next_u64() % (1 << 40)));
        assert!(distinct);
        let want: u64 = (0..1024u64).map(|k| k % 251 + 3).sum();
        assert_eq!(first_write_checksum(1 << 40), want);
    }

    #[test]
    fn rcu_workloads_reproduce_load_and_overwrite() {
        for (w, base) in [
            (Workload::RcuRead, Workload::Load),
            (Workload::RcuWrite, Workload::Overwrite),
        ] {
            assert_eq!(
                expected_checksum(&case(w, 700, Some(3000))),
                expected_checksum(&case(base, 700, Some(3000)))
            );
        }
        assert_eq!(expected_checksum(&case(Workload::ForkVmas, 821, None)), 821);
        assert_eq!(expected_checksum(&case(Workload::ForkGb, 4096, None)), 4096);
    }

    /// The iteration workloads, independently: `range`'s windows hold W
    /// consecutive entries `i..i+W`, whose `first ^ last` is 9 each; `iter_mut`
    /// ends with every value raised by 10.
    #[test]
    fn iteration_workloads_from_closed_forms() {
        for n in [1, 21, 700] {
            let all = seq_closed_form(n);
            for w in [
                Workload::IterRev,
                Workload::IntoIter,
                Workload::CursorNext,
                Workload::CursorPrev,
            ] {
                assert_eq!(expected_checksum(&case(w, n, None)), all, "{w}");
            }
            let raised = (0..n).fold(0u64, |a, i| a.wrapping_add(9 ^ (i + 11)));
            assert_eq!(expected_checksum(&case(Workload::IterMut, n, None)), raised);
            let q = 300;
            let w = n.min(100);
            let mut rng = SplitMix64::new();
            let mut want = 0u64;
            for _ in 0..q {
                let i = rng.next_u64() % (n - w + 1);
                for k in i..i + w {
                    want = want.wrapping_add(9 ^ (k + 1));
                }
            }
            assert_eq!(expected_checksum(&case(Workload::Range, n, Some(q))), want);
        }
    }

    #[test]
    fn load_is_the_sum_of_hits() {
        // Independently: x hits entry x/16 iff x % 16 <= 9, with value x/16 + 1.
        let (n, q) = (1000, 5000);
        let mut rng = SplitMix64::new();
        let mut want = 0u64;
        for _ in 0..q {
            let x = rng.next_u64() % (16 * n);
            if x % 16 <= 9 {
                want = want.wrapping_add(x / 16 + 1);
            }
        }
        assert_eq!(expected_checksum(&case(Workload::Load, n, Some(q))), want);
    }

    /// The whole reference table at its own sizes (about a minute in a debug build):
    /// `cargo test -p maple-cli --release -- --ignored`.
    #[test]
    #[ignore]
    fn reproduces_the_whole_reference_table() {
        for c in crate::expected::table_cases() {
            assert_eq!(Some(expected_checksum(&c)), table_checksum(&c), "{c:?}");
        }
    }
}
