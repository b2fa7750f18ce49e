//! The process's malloc settings, the same for every implementation measured.
//!
//! glibc gives freed memory back to the system (heap trimming above 128 KiB, `mmap`
//! for blocks above a threshold that moves at run time), so, depending on what ran
//! before in the process, a repetition may or may not pay a page fault for every page
//! of the copies it makes: `dup` of 12821 entries measured 152 µs in a fresh process
//! and 40 µs in one whose earlier workloads had moved glibc's thresholds. To make
//! every measurement see the same allocator, `maple` keeps freed memory in the process
//! (like the kernel harness's node cache, whose chunks stay mapped): no trimming, and
//! `mmap` only above 32 MiB. `--malloc-default` leaves glibc's defaults.

/// What the settings are, for the report.
pub fn describe(kept: bool) -> &'static str {
    if !kept {
        "glibc malloc defaults (freed memory returned to the system)"
    } else if cfg!(all(target_os = "linux", target_env = "gnu")) {
        "glibc malloc: freed memory kept in the process (M_TRIM_THRESHOLD off, M_MMAP_THRESHOLD 32 MiB)"
    } else {
        "the platform's malloc defaults"
    }
}

/// Keeps freed memory in the process (glibc only; elsewhere a no-op).
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; it is called once at start-up,
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
