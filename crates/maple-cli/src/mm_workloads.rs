//! The address-space workloads of BENCHMARKS.md, section "Address-space
//! workloads": `fork_vmas`, `fork_gb`, `first_write`, run on maple-mm.
//! (Benchmark code lives here, not in the library.)
//!
//! Each function builds its setup untimed, runs the timed part 5 times in
//! this process and returns the median ns per operation with the checksum
//! the workload defines. The setup is built once per call and shared by
//! the 5 repetitions; whatever a repetition creates (children) is torn down
//! untimed before the next one, except in `fork_vmas`, whose timed part
//! includes the child's exit by definition.
//!
//! The setups ([`vmas_parent`], [`gb_parent`]) and one repetition of each
//! timed part ([`fork_vmas_once`], [`fork_gb_once`], [`first_write_once`])
//! are separate, so that the harness (`mm.rs`) can run its own repetitions
//! on one setup and check every repetition's checksum.
//!
//! # Panics
//!
//! Every function panics if the address space refuses a step of its
//! workload (an mmap, a write, a fork), which with the default
//! [`Config`](maple_mm::Config) would be a bug of maple-mm.

use crate::rng::SplitMix64;
use crate::timer::timed_part;
use maple_mm::{AddressSpace, ForkOptions, MapFlags, Prot, PtStrategy, TreeStrategy, PAGE_SIZE};
use std::hint::black_box;
use std::time::Duration;

/// Pages of `fork_gb`'s mapping: 1 GiB.
pub const GB_PAGES: u64 = 262_144;

/// Forks per repetition of `fork_gb` (`NPROC` of the copy-on-write page
/// table series' benchmark).
pub const GB_FORKS: usize = 16;

/// Writes per repetition of `first_write`.
pub const FIRST_WRITES: u64 = 1024;

/// `fork_vmas`'s parent (the untimed setup): `n` one-page anonymous private
/// mappings placed top-down, protections alternating read-only /
/// read-write (the first one read-only), one byte of each read-write page
/// written and of each read-only page read.
pub fn vmas_parent(n: usize) -> AddressSpace {
    let mut mm = AddressSpace::new();
    for i in 0..n {
        let prot = if i % 2 == 0 { Prot::READ } else { Prot::RW };
        let a = match mm.mmap(0, PAGE_SIZE, prot, MapFlags::PRIVATE_ANON, None, 0) {
            Ok(a) => a,
            Err(e) => panic!("fork_vmas setup: mmap {i} failed: {e}"),
        };
        let r = if i % 2 == 0 {
            mm.read_byte(a).map(|_| ())
        } else {
            mm.write_byte(a, 1)
        };
        if let Err(f) = r {
            panic!("fork_vmas setup: {f}");
        }
    }
    mm
}

/// One repetition of `fork_vmas`'s timed part on `parent` (from
/// [`vmas_parent`]): `forks` times fork (page tables `mm-copy`) and exit of
/// the child. Returns the time of the whole repetition and the checksum
/// (the children's number of VMAs).
///
/// # Panics
/// If a fork fails, or two children have different numbers of VMAs.
pub fn fork_vmas_once(
    parent: &mut AddressSpace,
    tree: TreeStrategy,
    forks: usize,
) -> (Duration, u64) {
    let opts = ForkOptions::new(tree, PtStrategy::Copy);
    let (elapsed, checksum) = timed_part(|| {
        let mut checksum = None;
        for _ in 0..forks {
            let child = match parent.fork_with(opts) {
                Ok(c) => c,
                Err(e) => panic!("fork_vmas: fork failed: {e}"),
            };
            let c = child.map_count() as u64;
            if *checksum.get_or_insert(c) != c {
                panic!("fork_vmas: children with {c} and {checksum:?} VMAs");
            }
            drop(black_box(child));
        }
        checksum
    });
    (elapsed, checksum.unwrap_or(0))
}

/// `fork_gb`'s parent: one private anonymous mapping of `pages` pages with
/// the byte 1 written at offset 0 of every page. Returns the space and the
/// mapping's address.
pub fn gb_parent(pages: u64) -> (AddressSpace, u64) {
    let mut mm = AddressSpace::new();
    let base = match mm.mmap(
        0,
        pages * PAGE_SIZE,
        Prot::RW,
        MapFlags::PRIVATE_ANON,
        None,
        0,
    ) {
        Ok(a) => a,
        Err(e) => panic!("fork_gb setup: mmap failed: {e}"),
    };
    for p in 0..pages {
        if let Err(f) = mm.write_byte(base + p * PAGE_SIZE, 1) {
            panic!("fork_gb setup: {f}");
        }
    }
    (mm, base)
}

/// One repetition of `fork_gb`'s timed part on `parent` (from
/// [`gb_parent`]): 16 forks, the children kept alive until the 16th, then
/// torn down untimed. Returns the time of the 16 forks and the checksum
/// (the resident pages of a child).
///
/// # Panics
/// If a fork fails, or two children have different resident pages.
pub fn fork_gb_once(parent: &mut AddressSpace, pt: PtStrategy) -> (Duration, u64) {
    let opts = ForkOptions::new(TreeStrategy::Dup, pt);
    let mut children = Vec::with_capacity(GB_FORKS);
    let (elapsed, ()) = timed_part(|| {
        for _ in 0..GB_FORKS {
            match parent.fork_with(opts) {
                Ok(c) => children.push(c),
                Err(e) => panic!("fork_gb: fork failed: {e}"),
            }
        }
    });
    let checksum = children[0].stats().rss_pages;
    if let Some(c) = children.iter().find(|c| c.stats().rss_pages != checksum) {
        panic!(
            "fork_gb: children with {} and {checksum} resident pages",
            c.stats().rss_pages
        );
    }
    drop(black_box(children));
    (elapsed, checksum)
}

/// One repetition of `first_write` on `parent` (from [`gb_parent`]`(pages)`,
/// its mapping at `base`): a child forked untimed, the random stream reset;
/// timed: in the child, for k in 0..1024 the byte `k % 251 + 2` written at
/// offset 0 of page `next() % pages`; then, untimed, the checksum (over the
/// 1024 pages in order, the byte the child reads back plus the byte the
/// parent reads) and the child torn down. Returns the time of the 1024
/// writes and the checksum.
///
/// # Panics
/// If the fork or a write fails.
pub fn first_write_once(
    parent: &mut AddressSpace,
    base: u64,
    pages: u64,
    pt: PtStrategy,
) -> (Duration, u64) {
    let opts = ForkOptions::new(TreeStrategy::Dup, pt);
    let mut child = match parent.fork_with(opts) {
        Ok(c) => c,
        Err(e) => panic!("first_write: fork failed: {e}"),
    };
    let mut rng = SplitMix64::new();
    let (elapsed, ()) = timed_part(|| {
        for k in 0..FIRST_WRITES {
            let p = rng.next_u64() % pages;
            if let Err(f) = child.write_byte(base + p * PAGE_SIZE, (k % 251 + 2) as u8) {
                panic!("first_write: {f}");
            }
        }
    });
    let mut rng = SplitMix64::new();
    let mut sum = 0u64;
    for _ in 0..FIRST_WRITES {
        let a = base + (rng.next_u64() % pages) * PAGE_SIZE;
        let c = child.read_byte(a).unwrap_or(0) as u64;
        let p = parent.read_byte(a).unwrap_or(0) as u64;
        sum += c + p;
    }
    drop(child);
    (elapsed, sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fork_vmas_checksum_is_the_vma_count() {
        for t in crate::mm::TREE_STRATEGIES {
            let mut parent = vmas_parent(21);
            let (_, checksum) = fork_vmas_once(&mut parent, t, 3);
            assert_eq!(checksum, 21);
        }
    }

    #[test]
    fn small_fork_gb_and_first_write() {
        let pages = 2048;
        // the expected first_write checksum, straight from the definition
        let mut rng = SplitMix64::new();
        let mut last = std::collections::HashMap::new();
        let ps: Vec<u64> = (0..FIRST_WRITES)
            .map(|k| {
                let p = rng.next_u64() % pages;
                last.insert(p, k % 251 + 2);
                p
            })
            .collect();
        let expected: u64 = ps.iter().map(|p| last[p] + 1).sum();
        for pt in crate::mm::PT_STRATEGIES {
            let (mut parent, base) = gb_parent(pages);
            assert_eq!(fork_gb_once(&mut parent, pt).1, pages);
            assert_eq!(first_write_once(&mut parent, base, pages, pt).1, expected);
        }
    }
}
