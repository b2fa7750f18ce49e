//! maple-mm: a process address space in user space, on the maple tree.
//!
//! An [`AddressSpace`] is what Linux calls an `mm_struct`: VMAs in an
//! allocation [`maple_tree::MapleTree`] (gap tracking on, like the kernel's
//! `mm_mt`), x86-64-shaped four-level page tables, and the accounting. On it:
//!
//! - the memory system calls with Linux's semantics and error codes:
//!   [`mmap`](AddressSpace::mmap) (top-down placement below `mmap_base`
//!   with the stack guard gap, hints, `MAP_FIXED`, `MAP_FIXED_NOREPLACE`,
//!   `MAP_GROWSDOWN`, `MAP_32BIT`, shared / private, anonymous / file),
//!   [`munmap`](AddressSpace::munmap), [`mprotect`](AddressSpace::mprotect),
//!   [`mremap`](AddressSpace::mremap), [`brk`](AddressSpace::brk) and
//!   [`madvise`](AddressSpace::madvise), the memory locks
//!   ([`mlock`](AddressSpace::mlock) and friends), System V shared memory
//!   ([`shmat`](AddressSpace::shmat), [`shmdt`](AddressSpace::shmdt)); VMAs split at boundaries and merge
//!   by the kernel's rules; `max_map_count` enforced; a failed call
//!   changes only what Linux changes before failing (see below), and
//!   nothing panics;
//! - memory accesses, [`read`](AddressSpace::read) and
//!   [`write`](AddressSpace::write), that fault like the hardware and
//!   populate on demand: zero-fill (the zero page for reads), file pages
//!   through a page cache, copy-on-write;
//! - [`fork`](AddressSpace::fork_with) with two ways to build the child's
//!   VMA tree ([`TreeStrategy`]: stores in order with the append fast path
//!   `mas_wr_append`, or `__mt_dup`) and
//!   two ways to give it page tables ([`PtStrategy`]: copy every entry, or
//!   share whole PTE tables copy-on-write, as the proposed "Copy-On-Write to
//!   Page Table" series does); `VM_DONTCOPY` and `VM_WIPEONFORK`; a fork
//!   that fails at any of its failure points undoes everything (the
//!   kernel's `undo_dup_mmap`);
//! - accounting ([`MmStats`]) and [`validate`](AddressSpace::validate).
//!
//! # The kernel's rules
//!
//! The model follows Linux 6.18 on x86-64 (address-space randomization off);
//! every rule below was checked against that kernel with small C programs,
//! and each has its own test in `tests/rules.rs` or `tests/errors.rs`:
//!
//! - **Placement**: top-down below `mmap_base` with the stack guard gap,
//!   bottom-up fallback (`mmap_base` as a stack rlimit sets it:
//!   [`Config::with_stack_rlimit`]); `MAP_32BIT` bottom-up between 1 and
//!   2 GiB; the legacy bottom-up layout ([`Config::legacy_layout`]);
//!   transparent-huge-page alignment
//!   (`thp_get_unmapped_area`) of private anonymous mappings without a hint
//!   whose length is a multiple of 2 MiB (since Linux 6.12; 6.7–6.11 aligned
//!   every anonymous mapping of at least 2 MiB), of files whose file system
//!   aligns ([`OpenFile::thp_aligned`]: address ≡ file offset mod 2 MiB
//!   when the mapped part of the file covers an aligned 2 MiB block), and
//!   of moving `mremap`s by the same rules.
//! - **Flags**: `MAP_STACK` sets `VM_NOHUGEPAGE` (6.8+); `VM_ACCOUNT` on
//!   private writable mappings without `MAP_NORESERVE`, added when
//!   `mprotect` first makes a private mapping writable, and dropped when it
//!   makes an anonymous VMA that never had a page non-writable (6.7+); a
//!   shared mapping of a file open read-only ([`OpenMode`]) has neither
//!   `VM_SHARED` nor `VM_MAYWRITE`; `MAP_DROPPABLE` (6.11+: private
//!   anonymous memory with `VM_DROPPABLE | VM_NORESERVE | VM_WIPEONFORK |
//!   VM_DONTDUMP`, which `mlock` skips and `MADV_KEEPONFORK`/`MADV_DODUMP`
//!   refuse; tests in `tests/droppable.rs`); `MAP_SYNC` kept as `VM_SYNC`
//!   whatever the sharing type, and refused with `EOPNOTSUPP` by a file
//!   system that refuses it ([`OpenFile::refuses_map_sync`]: ext4 and xfs
//!   without DAX).
//! - **`madvise`**: flag advice (fork, dump, huge page, read-ahead), page
//!   advice (`DONTNEED`, `REMOVE`, `POPULATE_*`) and hints (`WILLNEED`,
//!   `FREE`, `COLD`, `PAGEOUT`), each with the kernel's per-VMA errors
//!   ([`Advice`]); `MADV_COLLAPSE` (6.1+: which VMAs may have huge pages,
//!   which 2 MiB blocks collapse) and guard regions (`MADV_GUARD_INSTALL` /
//!   `MADV_GUARD_REMOVE`, 6.13+: page-table markers that fault, no VMA
//!   split, `VM_MAYBE_GUARD`; kept by `DONTNEED`, moved by `mremap`, copied
//!   at fork, removed by unmapping) (tests in `tests/collapse_guard.rs`).
//! - **Protection keys**: `pkey_alloc` (lowest free key, `ENOSPC` when the
//!   16 are taken; on a machine without them, [`Config::pkeys`], `EINVAL`
//!   once and `ENOSPC` after), `pkey_free`,
//!   [`pkey_mprotect`](AddressSpace::pkey_mprotect) (`EINVAL` for a key not
//!   allocated); the key is part of a VMA's flags, so VMAs with different
//!   keys do not merge; `PROT_EXEC`-only memory gets the execute-only key;
//!   the model's accesses obey the thread's [`PKRU`](AddressSpace::pkru)
//!   (tests in `tests/pkeys.rs`).
//! - **Merges**: `is_mergeable_vma` and `is_mergeable_anon_vma`: a VMA gets
//!   its anon_vma on its first write fault ([`Vma::anon_vma`]); two
//!   anonymous VMAs merge only if their anon_vmas are the same, or one has
//!   none and the other's chain is singular — not so for a VMA inherited at
//!   fork with pages ([`Vma::anon_vma_inherited`]), so a new mapping next to
//!   it in the child stays a VMA of its own. Special mappings never merge.
//! - **Memory locks**: [`mlock`](AddressSpace::mlock) /
//!   [`mlock2`](AddressSpace::mlock2) (`MLOCK_ONFAULT`),
//!   [`munlock`](AddressSpace::munlock), [`mlockall`](AddressSpace::mlockall)
//!   (`MCL_CURRENT`, `MCL_FUTURE`: `mm->def_flags`, `MCL_ONFAULT`) and
//!   [`munlockall`](AddressSpace::munlockall) set and clear `VM_LOCKED` /
//!   `VM_LOCKONFAULT` with the splits and merges of `mlock_fixup`, skip
//!   `VM_SPECIAL` VMAs, fail at holes like `mprotect`, and populate what is
//!   locked but not on fault (`__mm_populate`); `RLIMIT_MEMLOCK`
//!   ([`Config::memlock_limit`], unlimited by default as for root) with the
//!   kernel's `EPERM`, `ENOMEM` and `EAGAIN` (tests in `tests/mlock.rs`).
//! - **Sealing**: [`mseal`](AddressSpace::mseal) sets `VM_SEALED` on
//!   every VMA of a fully mapped range; a sealed VMA is not unmapped,
//!   replaced, moved, resized or reprotected (`munmap`, `MAP_FIXED`,
//!   `mremap`, `brk`, `mprotect`: `EPERM`), nor is its private anonymous
//!   memory discarded by `madvise` where the program may not write it;
//!   seals survive fork (tests in `tests/mseal.rs`).
//! - **Nonlinear mappings**:
//!   [`remap_file_pages`](AddressSpace::remap_file_pages) as Linux has
//!   emulated it since 4.0: a new shared mapping of the same object at the
//!   given page offset, in place of the range (tests in
//!   `tests/remap_file_pages.rs`).
//! - **Overcommit**: the commit charge of the kernel's default heuristic
//!   (`vm.overcommit_memory = 0`, `__vm_enough_memory`): one charge
//!   larger than RAM plus swap ([`Config::commit_limit`], no limit by
//!   default) fails with `ENOMEM` — a private writable `mmap`, shared
//!   anonymous memory, `brk` and `mremap` growth, `mprotect` making
//!   private memory writable (tests in `tests/overcommit.rs`).
//! - **System V shared memory**: [`shmat`](AddressSpace::shmat) of a
//!   caller-named [`SysvShm`] (`do_shmat`: placed like a shared file
//!   mapping, `SHM_RND` / `SHM_REMAP` / `SHM_RDONLY` / `SHM_EXEC`, one file
//!   per attachment so attachments never merge) and
//!   [`shmdt`](AddressSpace::shmdt) (`ksys_shmdt`: every piece of the
//!   attachment within the segment's size); printed `/SYSV<key> (deleted)`
//!   with the shmid as inode (tests in `tests/shm.rs`).
//! - **Anonymous VMA names**:
//!   [`set_anon_name`](AddressSpace::set_anon_name) is
//!   `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` (`prctl_set_vma`,
//!   `madvise_set_anon_name`) on kernels with `CONFIG_ANON_VMA_NAME`
//!   ([`Config::anon_vma_name`], off by default: `EINVAL`); names split and
//!   merge VMAs like other attributes (`is_mergeable_vma`), survive fork
//!   and `mremap`, and print as `[anon:NAME]` / `[anon_shmem:NAME]`
//!   ([`Vma::anon_name`], tests in `tests/anon_name.rs`).
//! - **Memory policies**: [`mbind`](AddressSpace::mbind) (`do_mbind`,
//!   `mbind_range`): a policy splits VMAs at the range's ends and VMAs of
//!   different policies never merge (`mpol_equal`); nodes are checked
//!   against [`Config::numa_nodes`] (node 0 alone by default); the model
//!   places no page on a node ([`Vma::policy`], tests in
//!   `tests/mempolicy.rs`).
//! - **Fork**: `VM_LOCKED` and `VM_LOCKONFAULT` are not inherited
//!   (`dup_mmap`), nor is `mlockall(MCL_FUTURE)` (`mm_init`).
//! - **Special mappings**: `[vvar]`, `[vvar_vclock]`, `[vdso]` and the
//!   `[vsyscall]` gate page with the kernel's flags
//!   ([`AddressSpace::map_special`]); they cannot be split (`EINVAL`) nor
//!   grown (`EFAULT`).
//! - **Failing calls**: errnos in the kernel's order of checks, and the
//!   kernel's partial effects: `mprotect` changes the VMAs before a hole
//!   or a refusing VMA and then fails (so do `mlock` and `munlock`);
//!   `madvise` advises every mapped part
//!   of a range with holes and then fails with `ENOMEM`; the other calls
//!   change nothing when they fail.
//!
//! # What the model assumes
//!
//! A system call trace does not show page faults, memory pressure or the
//! system's settings; where those matter the model assumes:
//! - **Faults happen when the model's user accesses memory**
//!   ([`read`](AddressSpace::read), [`write`](AddressSpace::write),
//!   `MAP_POPULATE`, `MADV_POPULATE_*`). Whether a VMA has an anon_vma —
//!   which decides merges and the `VM_ACCOUNT` drop — depends on them: a
//!   replay of a trace must write to the VMAs the program wrote to (a
//!   private writable VMA of a running program usually has been written),
//!   or say so with [`AddressSpace::anon_vma_prepare`].
//! - **No memory pressure and no swap**: `MADV_FREE`, `MADV_COLD` and
//!   `MADV_PAGEOUT` leave the pages as they are (what a program reads when
//!   the kernel did not reclaim them).
//! - **Transparent huge pages compiled in** (placement aligns whatever
//!   `/sys/kernel/mm/transparent_hugepage/enabled` says), **shmem huge pages
//!   off** (`shmem_enabled=never`: shared anonymous memory is not aligned),
//!   and each file's placement rule as its [`OpenFile`] says.
//! - **Objects without a size**: a file or shared memory object has a page
//!   at every offset (zeros until written), so an access past its end,
//!   which Linux answers with `SIGBUS`, reads zeros in the model.
//! - **Memory without a limit**: every resident page is a frame of the
//!   model, which takes host memory (a few dozen bytes, 4 KiB more once
//!   written), and no fault runs out of memory. Linux stops populating a
//!   file mapping at the file's end and fails or kills when RAM runs out;
//!   the model populates whatever is asked (`MAP_POPULATE`,
//!   `MADV_POPULATE_READ`/`_WRITE`, `mlock`, `remap_file_pages`), so a
//!   population of terabytes exhausts the host instead.
//!
//! Physical memory ([`Memory`]: frames with reference counts and 4 KiB of
//! contents each, page-table pages, page cache) is shared by the spaces
//! forked from one another.
//!
//! ```
//! use maple_mm::{AddressSpace, Advice, Prot, MapFlags, FaultKind};
//! let mut mm = AddressSpace::new();
//! let a = mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
//! mm.mprotect(a + 4096, 4096, Prot::READ).unwrap();       // split into three
//! assert_eq!(mm.map_count(), 3);
//! assert_eq!(mm.write(a + 4096, b"x").unwrap_err().kind, FaultKind::Protection);
//! mm.mprotect(a + 4096, 4096, Prot::RW).unwrap();         // merged back
//! assert_eq!(mm.map_count(), 1);
//! mm.madvise(a, 4096, Advice::DontFork).unwrap();
//! let child = mm.fork().unwrap();
//! assert!(child.vma_at(a).is_none());                    // a gap in the child
//! ```
//!
//! # Features
//!
//! * `failpoints` (off by default, for tests): `Memory::inject_fork_failure`
//!   makes a chosen failure point of fork fail with `ENOMEM`, and maple-tree's
//!   `failpoints` makes its node allocator fail, to check that a failed fork
//!   undoes everything. Without the feature a failure point costs nothing.
//! * `tree-failpoints` (for tests): only maple-tree's `failpoints`.
//! * `serde`: `Serialize` / `Deserialize` for an `AddressSpace`'s layout
//!   (config, program break, VMAs and their flags; not the page contents).
//! * `bench-internals` (benchmarks only, not stable API):
//!   `TreeStrategy::Insert`, fork as before the append fast path and
//!   `__mt_dup` (each VMA inserted with the append path off).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod anon_name;
mod brk;
mod check;
mod commit;
mod config;
mod edit;
mod error;
mod fault;
mod flags;
mod fork;
mod frames;
mod guard;
#[cfg(feature = "serde")]
mod layout;
mod madvise;
mod memory;
mod mempolicy;
mod mlock;
mod mmap;
mod mprotect;
mod mremap;
mod mseal;
mod pagecache;
mod pagetable;
mod pkeys;
mod placement;
pub mod procmaps;
mod range;
mod remap_file_pages;
mod shm;
mod space;
mod special;
mod vma;

pub use anon_name::ANON_VMA_NAME_MAX_LEN;
pub use check::CheckError;
pub use config::{page_align, Config, PAGE_SHIFT, PAGE_SIZE, PMD_SIZE, PUD_SIZE, TASK_SIZE};
pub use error::{Errno, Fault, FaultKind};
pub use flags::{Advice, MapFlags, Prot, RemapFlags, VmFlags};
pub use fork::{ForkOptions, PtStrategy, TreeStrategy};
pub use memory::Memory;
pub use mempolicy::{
    MPOL_BIND, MPOL_DEFAULT, MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES,
    MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL, MPOL_MF_STRICT, MPOL_PREFERRED,
    MPOL_PREFERRED_MANY, MPOL_WEIGHTED_INTERLEAVE,
};
pub use mlock::{MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT, MLOCK_ONFAULT};
pub use pkeys::{PKEY_DISABLE_ACCESS, PKEY_DISABLE_WRITE};
pub use shm::{SysvShm, SHM_EXEC, SHM_RDONLY, SHM_REMAP, SHM_RND};
pub use space::{AddressSpace, MmStats};
pub use vma::{
    AnonId, Backing, FileId, MemPolicy, OpenFile, OpenMode, ShmId, Special, Vma, VSYSCALL_ADDR,
};

/// The examples of the repository's README.md, compiled and run as doctests
/// so that the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The examples of this crate's README.md, compiled and run as doctests so
/// that the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
