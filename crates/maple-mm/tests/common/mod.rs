//! Helpers shared by the integration tests.
#![allow(dead_code)]

use maple_mm::{AddressSpace, ForkOptions, MapFlags, Prot, PtStrategy, TreeStrategy, PAGE_SIZE};

/// Page size.
pub const P: u64 = PAGE_SIZE;

/// Number of proptest cases: `default`, or `PROPTEST_CASES` when it is set
/// (a long soak raises it).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Every way fork can build the child's VMA tree (`Insert` needs the
/// `bench-internals` feature).
pub fn tree_strategies() -> Vec<TreeStrategy> {
    let mut v = Vec::new();
    #[cfg(feature = "bench-internals")]
    v.push(TreeStrategy::Insert);
    v.extend([TreeStrategy::Append, TreeStrategy::Dup]);
    v
}

/// Both ways fork can give the child page tables.
pub const PT_STRATEGIES: [PtStrategy; 2] = [PtStrategy::Copy, PtStrategy::CowPte];

/// Every combination of fork strategies.
pub fn all_opts() -> Vec<ForkOptions> {
    tree_strategies()
        .into_iter()
        .flat_map(|t| {
            PT_STRATEGIES
                .into_iter()
                .map(move |p| ForkOptions::new(t, p))
        })
        .collect()
}

/// Draws `pages` pages from `base` the way the kernel's VMA tests do: one
/// letter per VMA in order of appearance, a space for an unmapped page.
pub fn draw(mm: &AddressSpace, base: u64, pages: u64) -> String {
    let mut out = String::new();
    let mut seen: Vec<u64> = Vec::new();
    for i in 0..pages {
        let a = base + i * P;
        match mm.vma_at(a) {
            None => out.push(' '),
            Some(v) => {
                let idx = match seen.iter().position(|&s| s == v.start()) {
                    Some(k) => k,
                    None => {
                        seen.push(v.start());
                        seen.len() - 1
                    }
                };
                out.push((b'A' + idx as u8) as char);
            }
        }
    }
    out
}

/// Maps `pages` private anonymous pages at exactly `page` pages above `base`.
pub fn anon_at(mm: &mut AddressSpace, base: u64, page: u64, pages: u64, prot: Prot) -> u64 {
    mm.mmap(
        base + page * P,
        pages * P,
        prot,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap()
}

/// Panics with the message if the space is not valid.
pub fn check(mm: &AddressSpace) {
    if let Err(e) = mm.validate() {
        panic!("validate: {e}\n{}", mm.maps());
    }
}

/// Reads one byte or panics.
pub fn rb(mm: &mut AddressSpace, a: u64) -> u8 {
    mm.read_byte(a).unwrap_or_else(|f| panic!("{f}"))
}

/// Writes one byte or panics.
pub fn wb(mm: &mut AddressSpace, a: u64, v: u8) {
    mm.write_byte(a, v).unwrap_or_else(|f| panic!("{f}"))
}
