//! maple-mm: a process address space in user space, on the maple tree.
//!
//! An [`AddressSpace`] is what Linux calls an `mm_struct`: VMAs in an
//! allocation [`maple_tree::MapleTree`] (gap tracking on, like the kernel's
//! `mm_mt`), x86-64-shaped four-level page tables, and the accounting. On it:
//!
//! - the memory system calls with Linux's semantics and error codes:
//!   [`mmap`](AddressSpace::mmap) (top-down placement below `mmap_base`
//!   with the stack guard gap, hints, `MAP_FIXED`, `MAP_FIXED_NOREPLACE`,
//!   `MAP_GROWSDOWN`, shared / private, anonymous / file),
//!   [`munmap`](AddressSpace::munmap), [`mprotect`](AddressSpace::mprotect),
//!   [`mremap`](AddressSpace::mremap), [`brk`](AddressSpace::brk) and
//!   [`madvise`](AddressSpace::madvise); VMAs split at boundaries and merge
//!   by the kernel's rules; `max_map_count` enforced; every failed call
//!   changes nothing and nothing panics;
//! - memory accesses, [`read`](AddressSpace::read) and
//!   [`write`](AddressSpace::write), that fault like the hardware and
//!   populate on demand: zero-fill (the zero page for reads), file pages
//!   through a page cache, copy-on-write;
//! - [`fork`](AddressSpace::fork_with) with three ways to build the child's
//!   VMA tree ([`TreeStrategy`]: one by one, append path, `__mt_dup`) and
//!   two ways to give it page tables ([`PtStrategy`]: copy every entry, or
//!   share whole PTE tables copy-on-write, seed 004); `VM_DONTCOPY` and
//!   `VM_WIPEONFORK`; a fork that fails at any of its failure points
//!   ([`Memory::inject_fork_failure`]) undoes everything (seed 001);
//! - accounting ([`MmStats`]) and [`validate`](AddressSpace::validate).
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
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod brk;
mod check;
mod config;
mod edit;
mod error;
mod fault;
mod flags;
mod fork;
mod frames;
mod madvise;
mod memory;
mod mmap;
mod mprotect;
mod mremap;
mod pagecache;
mod pagetable;
mod placement;
pub mod procmaps;
mod space;
mod vma;

pub mod bench;

pub use check::CheckError;
pub use config::{page_align, Config, PAGE_SHIFT, PAGE_SIZE, PMD_SIZE, PUD_SIZE, TASK_SIZE};
pub use error::{Errno, Fault, FaultKind};
pub use flags::{Advice, MapFlags, Prot, RemapFlags, VmFlags};
pub use fork::{ForkOptions, PtStrategy, TreeStrategy};
pub use memory::Memory;
pub use space::{AddressSpace, MmStats};
pub use vma::{AnonId, Backing, FileId, ShmId, Vma};

/// The examples of the repository's README.md, compiled and run as doctests
/// so that the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
