//! Memory locking (`mlock`, `mlock2`, `munlock`, `mlockall`, `munlockall`),
//! one kernel rule per test. Flags, splits, merges and populated pages were
//! checked against Linux 6.18 (x86-64) with a small C program reading
//! `/proc/self/smaps` (`VmFlags: ... lo` / `lo lf`, `Rss`, `Locked`); the
//! `RLIMIT_MEMLOCK` errors with `capsh --drop=cap_ipc_lock` and `ulimit -l`.

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Errno, MapFlags, Prot, Special, VmFlags, MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT,
    MLOCK_ONFAULT,
};

const LOCKED: VmFlags = VmFlags::LOCKED;
const ONFAULT: VmFlags = VmFlags::LOCKONFAULT;

fn flags_at(mm: &AddressSpace, a: u64) -> VmFlags {
    mm.vma_at(a).expect("a VMA").flags()
}

fn anon(mm: &mut AddressSpace, len: u64, prot: Prot) -> u64 {
    mm.mmap(0, len, prot, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap()
}

/// `mlock_fixup` through `vma_modify_flags`: the locked part is split off
/// (`lo`), and `munlock` of it merges it back; `munlock` of part of it
/// splits again.
#[test]
fn mlock_splits_and_munlock_merges() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 16 * P, Prot::RW);
    mm.mlock(a + 4 * P, 4 * P).unwrap();
    assert_eq!(draw(&mm, a, 16), "AAAABBBBCCCCCCCC");
    assert!(flags_at(&mm, a + 4 * P).contains(LOCKED));
    assert!(!flags_at(&mm, a).contains(LOCKED));
    // munlock of the first half: it merges with the VMA below
    mm.munlock(a + 4 * P, 2 * P).unwrap();
    assert_eq!(draw(&mm, a, 16), "AAAAAABBCCCCCCCC");
    mm.munlock(a, 16 * P).unwrap();
    assert_eq!(draw(&mm, a, 16), "AAAAAAAAAAAAAAAA");
    assert!(!flags_at(&mm, a).intersects(VmFlags::LOCKED_MASK));
    check(&mm);
}

/// `do_mlock`: the start is rounded down to its page and the length widened
/// by the offset, so an unaligned call locks every page it touches; the
/// locked pages are populated (`__mm_populate`: write faults for private
/// writable memory, so they are resident and the VMA has an anon_vma).
#[test]
fn mlock_rounds_the_range_and_populates() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 8 * P, Prot::RW);
    mm.mlock(a + P + 5, P).unwrap(); // pages 1 and 2
    assert_eq!(draw(&mm, a, 8), "ABBCCCCC");
    assert_eq!(mm.stats().rss_pages, 2);
    assert!(mm.vma_at(a + P).unwrap().anon_vma().is_some());
    // read-only memory is populated by read faults (the zero page: no RSS)
    let r = anon(&mut mm, 2 * P, Prot::READ);
    mm.mlock(r, 2 * P).unwrap();
    assert_eq!(mm.stats().rss_pages, 2);
    assert!(flags_at(&mm, r).contains(LOCKED));
    // PROT_NONE memory is locked but not populated
    let n = anon(&mut mm, 2 * P, Prot::NONE);
    mm.mlock(n, 2 * P).unwrap();
    assert!(flags_at(&mm, n).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 2);
    check(&mm);
}

/// `mlock2(MLOCK_ONFAULT)`: `VM_LOCKED | VM_LOCKONFAULT` (`lo lf`) and no
/// page populated; a later plain `mlock` of it drops `VM_LOCKONFAULT` and
/// populates.
#[test]
fn mlock2_onfault_locks_without_populating() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 4 * P, Prot::RW);
    mm.mlock2(a, 4 * P, MLOCK_ONFAULT).unwrap();
    assert_eq!(flags_at(&mm, a) & (LOCKED | ONFAULT), LOCKED | ONFAULT);
    assert_eq!(flags_at(&mm, a).smaps(), "rd wr mr mw me lo lf ac");
    assert_eq!(mm.stats().rss_pages, 0);
    mm.mlock(a, 4 * P).unwrap();
    assert_eq!(flags_at(&mm, a) & (LOCKED | ONFAULT), LOCKED);
    assert_eq!(mm.stats().rss_pages, 4);
    check(&mm);
}

/// `mlock2`: flags other than `MLOCK_ONFAULT` are `EINVAL`; an end that
/// wraps is `EINVAL`; an empty range succeeds.
#[test]
fn mlock_argument_errors() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 4 * P, Prot::RW);
    assert_eq!(mm.mlock2(a, P, 2), Err(Errno::EINVAL));
    assert_eq!(mm.mlock(a, u64::MAX - 2 * P), Err(Errno::EINVAL));
    assert_eq!(mm.munlock(a, u64::MAX - 2 * P), Err(Errno::EINVAL));
    mm.mlock(a, 0).unwrap();
    assert_eq!(mm.map_count(), 1);
    assert!(!flags_at(&mm, a).contains(LOCKED));
}

/// `apply_vma_lock_flags`: no VMA at the start → `ENOMEM` with nothing
/// changed; a hole later → `ENOMEM` after the VMAs before it were locked
/// (and nothing is populated: the population follows only a success).
#[test]
fn mlock_over_a_hole_locks_up_to_it() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 8 * P, Prot::RW);
    mm.munmap(a + 4 * P, 2 * P).unwrap();
    assert_eq!(mm.mlock(a + 4 * P, 4 * P), Err(Errno::ENOMEM));
    assert!(!flags_at(&mm, a + 6 * P).contains(LOCKED));
    assert_eq!(mm.mlock(a + 2 * P, 6 * P), Err(Errno::ENOMEM));
    assert_eq!(draw(&mm, a, 8), "AABB  CC");
    assert!(flags_at(&mm, a + 2 * P).contains(LOCKED));
    assert!(!flags_at(&mm, a + 6 * P).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 0);
    // munlock: the same walk
    assert_eq!(mm.munlock(a, 8 * P), Err(Errno::ENOMEM));
    assert_eq!(draw(&mm, a, 8), "AAAA  BB");
    check(&mm);
}

/// `mlock_fixup` leaves `VM_SPECIAL` VMAs alone without an error.
#[test]
fn mlock_skips_special_mappings() {
    let mut mm = AddressSpace::new();
    let v = 0x7fff_f7fc_8000;
    mm.map_special(Special::Vdso, v, 2 * P).unwrap();
    mm.mlock(v, 2 * P).unwrap();
    assert_eq!(flags_at(&mm, v), Special::Vdso.flags());
    mm.mlockall(MCL_CURRENT).unwrap();
    assert_eq!(flags_at(&mm, v), Special::Vdso.flags());
}

/// `sys_mlockall`: no flag, unknown flags, or `MCL_ONFAULT` alone → `EINVAL`.
#[test]
fn mlockall_flag_errors() {
    let mut mm = AddressSpace::new();
    assert_eq!(mm.mlockall(0), Err(Errno::EINVAL));
    assert_eq!(mm.mlockall(MCL_ONFAULT), Err(Errno::EINVAL));
    assert_eq!(mm.mlockall(MCL_CURRENT | 8), Err(Errno::EINVAL));
    assert_eq!(mm.def_flags(), VmFlags::EMPTY);
}

/// `apply_mlockall_flags(MCL_CURRENT)`: every VMA locked whole, so pieces
/// that differed only in their lock merge; then `munlockall` unlocks every
/// VMA (the layout of the kernel after `mlock; munlock; mlockall;
/// munlockall`: one VMA).
#[test]
fn mlockall_current_locks_every_vma_and_merges() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 16 * P, Prot::RW);
    let b = anon(&mut mm, 4 * P, Prot::READ);
    mm.mlock(a + 4 * P, 4 * P).unwrap();
    mm.munlock(a + 4 * P, 2 * P).unwrap();
    assert_eq!(draw(&mm, a, 16), "AAAAAABBCCCCCCCC");
    mm.mlockall(MCL_CURRENT).unwrap();
    assert_eq!(draw(&mm, a, 16), "AAAAAAAAAAAAAAAA");
    assert!(flags_at(&mm, a).contains(LOCKED));
    assert!(flags_at(&mm, b).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 16); // `b` read-only: zero pages
                                          // MCL_CURRENT alone does not lock future mappings
    let c = anon(&mut mm, P, Prot::RW);
    assert!(!flags_at(&mm, c).contains(LOCKED));
    mm.munlockall().unwrap();
    assert!(mm
        .vmas()
        .all(|v| !v.flags().intersects(VmFlags::LOCKED_MASK)));
    assert_eq!(draw(&mm, a, 16), "AAAAAAAAAAAAAAAA");
    check(&mm);
}

/// `MCL_FUTURE` sets `mm->def_flags`: later `mmap`s (populated unless
/// `PROT_NONE` or on fault) and heap growth are locked; the VMAs already
/// there are not; `MCL_ONFAULT` adds `VM_LOCKONFAULT`; `munlockall` ends it.
#[test]
fn mlockall_future_locks_later_mappings() {
    let mut mm = AddressSpace::new();
    let before = anon(&mut mm, 2 * P, Prot::RW);
    mm.mlockall(MCL_FUTURE).unwrap();
    assert_eq!(mm.def_flags(), LOCKED);
    assert!(!flags_at(&mm, before).contains(LOCKED));
    let a = anon(&mut mm, 4 * P, Prot::RW);
    assert_eq!(flags_at(&mm, a).smaps(), "rd wr mr mw me lo ac");
    assert_eq!(mm.stats().rss_pages, 4);
    let n = anon(&mut mm, 4 * P, Prot::NONE);
    assert_eq!(flags_at(&mm, n).smaps(), "mr mw me lo");
    assert_eq!(mm.stats().rss_pages, 4);
    let brk = mm.brk(0);
    mm.brk(brk + 2 * P);
    assert!(flags_at(&mm, brk).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 6);
    mm.mlockall(MCL_FUTURE | MCL_ONFAULT).unwrap();
    let o = anon(&mut mm, 4 * P, Prot::RW);
    assert_eq!(flags_at(&mm, o).smaps(), "rd wr mr mw me lo lf ac");
    assert_eq!(mm.stats().rss_pages, 6);
    mm.munlockall().unwrap();
    assert_eq!(mm.def_flags(), VmFlags::EMPTY);
    let after = anon(&mut mm, P, Prot::RW);
    assert!(!flags_at(&mm, after).contains(LOCKED));
    check(&mm);
}

/// `dup_mmap` clears `VM_LOCKED_MASK` in the child, and `mm_init` keeps no
/// lock bit of `def_flags`: a child's new mappings are not locked.
#[test]
fn fork_inherits_no_lock() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 2 * P, Prot::RW);
    mm.mlock2(a, P, MLOCK_ONFAULT).unwrap();
    mm.mlockall(MCL_FUTURE).unwrap();
    let mut child = mm.fork().unwrap();
    assert!(!flags_at(&child, a).intersects(VmFlags::LOCKED_MASK));
    assert_eq!(child.def_flags(), VmFlags::EMPTY);
    let c = anon(&mut child, P, Prot::RW);
    assert!(!flags_at(&child, c).contains(LOCKED));
    check(&child);
}

/// `mprotect_fixup`: making locked private read-only memory writable
/// populates it with write faults.
#[test]
fn mprotect_write_on_locked_memory_populates() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 4 * P, Prot::READ);
    mm.mlock(a, 4 * P).unwrap();
    assert_eq!(mm.stats().rss_pages, 0); // zero pages only
    mm.mprotect(a, 2 * P, Prot::RW).unwrap();
    assert_eq!(mm.stats().rss_pages, 2);
    check(&mm);
}

/// `MAP_LOCKED` sets `VM_LOCKED` and populates like `mlock`.
#[test]
fn map_locked_populates() {
    let mut mm = AddressSpace::new();
    let a = mm
        .mmap(
            0,
            3 * P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::LOCKED,
            None,
            0,
        )
        .unwrap();
    assert!(flags_at(&mm, a).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 3);
    check(&mm);
}

/// `mremap`: what a locked VMA gains, grown in place or moved, is populated
/// (`mm_populate` of the new part); locked on fault it is not.
#[test]
fn mremap_growth_of_locked_memory_populates() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 2 * P, Prot::RW);
    mm.mlock(a, 2 * P).unwrap();
    assert_eq!(mm.stats().rss_pages, 2);
    // grown (in place or moved): the two new pages are populated
    let b = mm
        .mremap(a, 2 * P, 4 * P, maple_mm::RemapFlags::MAYMOVE, 0)
        .unwrap();
    assert!(flags_at(&mm, b).contains(LOCKED));
    assert_eq!(mm.stats().rss_pages, 4);
    mm.munmap(b + 4 * P, 4 * P).unwrap();
    let grown = mm
        .mremap(b, 4 * P, 6 * P, maple_mm::RemapFlags::EMPTY, 0)
        .unwrap();
    assert_eq!(grown, b, "in place");
    assert_eq!(mm.stats().rss_pages, 6);
    let c = anon(&mut mm, P, Prot::RW);
    mm.mlock2(c, P, MLOCK_ONFAULT).unwrap();
    let d = mm
        .mremap(c, P, 3 * P, maple_mm::RemapFlags::MAYMOVE, 0)
        .unwrap();
    assert!(flags_at(&mm, d).contains(LOCKED | ONFAULT));
    assert_eq!(mm.stats().rss_pages, 6);
    check(&mm);
}

fn limited(bytes: u64) -> AddressSpace {
    AddressSpace::with_config(maple_mm::Config {
        memlock_limit: Some(bytes),
        ..maple_mm::Config::default()
    })
}

/// `can_do_mlock`: with `RLIMIT_MEMLOCK` 0 (and no `CAP_IPC_LOCK`)
/// `mlock`, `mlockall` and `MAP_LOCKED` are `EPERM`; `munlock` and
/// `munlockall` still work.
#[test]
fn a_zero_memlock_limit_forbids_locking() {
    let mut mm = limited(0);
    let a = anon(&mut mm, 2 * P, Prot::RW);
    assert_eq!(mm.mlock(a, P), Err(Errno::EPERM));
    assert_eq!(mm.mlockall(MCL_FUTURE), Err(Errno::EPERM));
    assert_eq!(mm.mlockall(0), Err(Errno::EINVAL), "flags first");
    let locked = MapFlags::PRIVATE_ANON | MapFlags::LOCKED;
    assert_eq!(mm.mmap(0, P, Prot::RW, locked, None, 0), Err(Errno::EPERM));
    mm.munlock(a, 2 * P).unwrap();
    mm.munlockall().unwrap();
}

/// `do_mlock` under `RLIMIT_MEMLOCK`: the pages locked plus the range's,
/// less those of the range already locked, must fit (`ENOMEM`);
/// `mlockall(MCL_CURRENT)` needs `total_vm` within it (`ENOMEM`).
#[test]
fn mlock_beyond_the_limit_is_enomem() {
    let mut mm = limited(4 * P);
    let a = anon(&mut mm, 8 * P, Prot::RW);
    mm.mlock(a, 3 * P).unwrap();
    assert_eq!(mm.mlock(a + 3 * P, 2 * P), Err(Errno::ENOMEM));
    // the already locked pages of the range do not count twice
    mm.mlock(a, 4 * P).unwrap();
    assert_eq!(mm.mlockall(MCL_CURRENT), Err(Errno::ENOMEM));
    assert_eq!(draw(&mm, a, 8), "AAAABBBB");
    check(&mm);
}

/// `mlock_future_ok`: under `mlockall(MCL_FUTURE)` a mapping, an attachment
/// or heap growth beyond the limit fails (`EAGAIN`; `brk` is refused), and
/// so does a `MAP_LOCKED` mapping or a locked VMA's `mremap` growth.
#[test]
fn locked_growth_beyond_the_limit_is_eagain() {
    let mut mm = limited(4 * P);
    mm.mlockall(MCL_FUTURE).unwrap();
    let a = anon(&mut mm, 3 * P, Prot::RW);
    let anon_flags = MapFlags::PRIVATE_ANON;
    assert_eq!(
        mm.mmap(0, 2 * P, Prot::RW, anon_flags, None, 0),
        Err(Errno::EAGAIN)
    );
    let seg = maple_mm::SysvShm {
        shmid: 1,
        key: 0,
        size: 2 * P,
    };
    assert_eq!(mm.shmat(seg, 0, 0), Err(Errno::EAGAIN));
    let brk = mm.brk(0);
    assert_eq!(mm.brk(brk + 2 * P), brk, "refused");
    assert_eq!(
        mm.mremap(a, 3 * P, 5 * P, maple_mm::RemapFlags::MAYMOVE, 0),
        Err(Errno::EAGAIN)
    );
    mm.munlockall().unwrap();
    let locked = MapFlags::PRIVATE_ANON | MapFlags::LOCKED;
    mm.mmap(0, 4 * P, Prot::RW, locked, None, 0).unwrap();
    assert_eq!(mm.mmap(0, P, Prot::RW, locked, None, 0), Err(Errno::EAGAIN));
    check(&mm);
}

/// `dontunmap_complete`: `mremap(MREMAP_DONTUNMAP)` clears the memory lock
/// of the whole VMA it leaves behind (not split, even when only part of it
/// moved), in place: it does not merge with an unlocked neighbour; the
/// moved copy keeps the lock.
#[test]
fn mremap_dontunmap_unlocks_the_vma_left_behind() {
    let mut mm = AddressSpace::new();
    let c = anon(&mut mm, 4 * P, Prot::RW);
    let below = anon(&mut mm, 2 * P, Prot::RW);
    assert_eq!(below + 2 * P, c);
    mm.mlock(c, 4 * P).unwrap();
    let flags = maple_mm::RemapFlags::MAYMOVE | maple_mm::RemapFlags::DONTUNMAP;
    let d = mm.mremap(c + P, 2 * P, 2 * P, flags, 0).unwrap();
    assert!(flags_at(&mm, d).contains(LOCKED));
    let left = mm.vma_at(c).unwrap();
    assert_eq!((left.start(), left.end()), (c, c + 4 * P));
    assert!(!left.flags().contains(LOCKED));
    assert_eq!(mm.vma_at(below).unwrap().end(), c, "no merge");
    check(&mm);
}
