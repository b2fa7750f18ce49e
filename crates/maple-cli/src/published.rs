//! Published figures the tables and charts set beside ours: the kernel's fork rates
//! from the `__mt_dup` series' cover letter, the copy-on-write page table series'
//! fork latency, and real fork on Linux 6.18 on this project's machine class.

/// The cover letter of the `__mt_dup` series ("fork: use __mt_dup() to duplicate
/// maple tree in dup_mmap()"): forks per
/// 10 s against the number of VMAs, next-20231006 (before) and with the series
/// (after), byte-unixbench's `spawn` modified for N VMAs, CPU-bound.
pub const MT_DUP_SERIES_FORKS_PER_10S: [(u64, u64, u64); 11] = [
    (21, 112_100, 114_558),
    (121, 76_261, 83_067),
    (221, 54_227, 65_008),
    (421, 34_035, 45_824),
    (821, 20_195, 28_751),
    (1621, 11_112, 16_072),
    (3221, 6_017, 8_922),
    (6421, 3_161, 4_747),
    (12821, 1_606, 2_436),
    (25621, 802, 1_233),
    (51221, 393, 599),
];

/// BENCHMARKS.md, "Kernel reference numbers": real `fork()` on Linux 6.18 on this
/// project's machine class, forks per 10 s (approximate) with each page written,
/// against the VMA count (measured at the `__mt_dup` series' N + 3: 24, 124, ..,
/// 51224).
pub const LINUX_618_WRITTEN_PER_10S: [(u64, u64); 7] = [
    (21, 86_000),
    (121, 37_300),
    (421, 13_600),
    (1621, 3_400),
    (6421, 840),
    (25621, 138),
    (51221, 75),
];

/// The "Introduce Copy-On-Write to Page Table" series (v4 discussion): fork
/// latency per GiB on the reviewer's machine (16 forks of a process with 32 GiB
/// touched), base kernel and with the series.
pub const COW_PTE_SERIES_S_PER_GIB_BASE: f64 = 0.0044;
/// The same, on the COW PTE kernel (no gain in that test).
pub const COW_PTE_SERIES_S_PER_GIB_COWPTE: f64 = 0.0045;
/// BENCHMARKS.md, "Kernel reference numbers": real fork on Linux 6.18 on this
/// machine class, s per GiB.
pub const LINUX_618_S_PER_GIB: (f64, f64) = (0.0136, 0.0160);
