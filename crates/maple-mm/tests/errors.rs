//! Error codes by Linux's rules, and what a failed call leaves: nothing
//! changed, except where Linux changes part of the range before failing
//! (`mprotect` up to a hole, `madvise` around holes), which the model follows.

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Advice, Config, Errno, FaultKind, FileId, MapFlags, Prot, RemapFlags, VmFlags,
    TASK_SIZE,
};

const B: u64 = 0x3000_0000;

/// Runs `f` expecting `err`, and checks the layout and counters did not move.
fn fails<T: std::fmt::Debug>(
    mm: &mut AddressSpace,
    err: Errno,
    f: impl FnOnce(&mut AddressSpace) -> Result<T, Errno>,
) {
    let before = (mm.maps(), mm.stats());
    let r = f(mm);
    assert_eq!(r.unwrap_err(), err);
    assert_eq!((mm.maps(), mm.stats()), before);
    check(mm);
}

fn setup() -> AddressSpace {
    let mut m = AddressSpace::new();
    anon_at(&mut m, B, 0, 4, Prot::RW);
    anon_at(&mut m, B, 6, 4, Prot::READ);
    wb(&mut m, B, 1);
    m
}

#[test]
fn mmap_errors() {
    let mut m = setup();
    let pa = MapFlags::PRIVATE_ANON;
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(0, 0, Prot::RW, pa, None, 0)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(0, P, Prot::RW, pa, None, 1)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(0, P, Prot::RW, MapFlags::ANONYMOUS, None, 0)
    });
    fails(&mut m, Errno::EBADF, |m| {
        m.mmap(0, P, Prot::RW, MapFlags::PRIVATE, None, 0)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mmap(0, u64::MAX - 10, Prot::RW, pa, None, 0)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mmap(0, TASK_SIZE + P, Prot::RW, pa, None, 0)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(B + 1, P, Prot::RW, pa | MapFlags::FIXED, None, 0)
    });
    fails(&mut m, Errno::EPERM, |m| {
        m.mmap(0x1000, P, Prot::RW, pa | MapFlags::FIXED, None, 0)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mmap(
            TASK_SIZE - P,
            2 * P,
            Prot::RW,
            pa | MapFlags::FIXED,
            None,
            0,
        )
    });
    fails(&mut m, Errno::EEXIST, |m| {
        m.mmap(
            B + 3 * P,
            2 * P,
            Prot::RW,
            pa | MapFlags::FIXED_NOREPLACE,
            None,
            0,
        )
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(
            0,
            P,
            Prot::RW,
            MapFlags::SHARED_ANON | MapFlags::GROWSDOWN,
            None,
            0,
        )
    });
    fails(&mut m, Errno::EOVERFLOW, |m| {
        m.mmap(
            0,
            2 * P,
            Prot::RW,
            MapFlags::PRIVATE,
            Some(FileId(1)),
            (i64::MAX as u64) & !(P - 1),
        )
    });
    // FIXED_NOREPLACE into a hole works
    assert_eq!(
        m.mmap(
            B + 4 * P,
            2 * P,
            Prot::RW,
            pa | MapFlags::FIXED_NOREPLACE,
            None,
            0
        ),
        Ok(B + 4 * P)
    );
}

#[test]
fn munmap_errors() {
    let mut m = setup();
    fails(&mut m, Errno::EINVAL, |m| m.munmap(B + 1, P));
    fails(&mut m, Errno::EINVAL, |m| m.munmap(B, 0));
    fails(&mut m, Errno::EINVAL, |m| m.munmap(TASK_SIZE + P, P));
    fails(&mut m, Errno::EINVAL, |m| m.munmap(B, TASK_SIZE));
    assert_eq!(m.munmap(0x7000_0000, P), Ok(())); // nothing there: fine
}

#[test]
fn mprotect_errors() {
    let mut m = setup();
    fails(&mut m, Errno::EINVAL, |m| m.mprotect(B + 1, P, Prot::READ));
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mprotect(B + 4 * P, P, Prot::READ)
    }); // inside the hole at 4..6
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mprotect(B + 4 * P, 3 * P, Prot::RW)
    }); // starts in the hole: nothing changes
    fails(&mut m, Errno::EINVAL, |m| {
        m.mprotect(B, P, Prot::from_bits_retain(0x10))
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mprotect(B, P, Prot::READ | Prot::GROWSDOWN | Prot::GROWSUP)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mprotect(B, P, Prot::READ | Prot::GROWSDOWN)
    }); // not a stack
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mprotect(B, u64::MAX - 5, Prot::READ)
    });
    assert_eq!(m.mprotect(B, 0, Prot::NONE), Ok(()));
}

/// `do_mprotect_pkey` changes VMA by VMA: the part before a hole keeps the
/// new protection, then `ENOMEM`; a refusing VMA (`EACCES`) likewise.
#[test]
fn mprotect_changes_up_to_the_failure() {
    let mut m = setup();
    assert_eq!(m.mprotect(B + 3 * P, 4 * P, Prot::READ), Err(Errno::ENOMEM));
    assert_eq!(draw(&m, B, 10), "AAAB  CCCC");
    assert_eq!(m.vma_at(B + 3 * P).unwrap().prot(), Prot::READ);
    check(&m);
    // a hole at the end: every VMA before it changed
    assert_eq!(m.mprotect(B + 8 * P, 4 * P, Prot::RW), Err(Errno::ENOMEM));
    assert_eq!(draw(&m, B, 10), "AAAB  CCDD");
    assert_eq!(m.vma_at(B + 8 * P).unwrap().prot(), Prot::RW);
    check(&m);
    // EACCES on the second VMA: the first keeps the change
    let ro = FileId(5);
    m.mmap_file(
        B + 10 * P,
        P,
        Prot::READ,
        MapFlags::SHARED | MapFlags::FIXED,
        maple_mm::OpenFile::new(ro).mode(maple_mm::OpenMode::ReadOnly),
        0,
    )
    .unwrap();
    assert_eq!(
        m.mprotect(B + 9 * P, 2 * P, Prot::WRITE),
        Err(Errno::EACCES)
    );
    assert_eq!(m.vma_at(B + 9 * P).unwrap().prot(), Prot::WRITE);
    assert_eq!(m.vma_at(B + 10 * P).unwrap().prot(), Prot::READ);
    check(&m);
}

/// `madvise_walk_vmas` goes on past a hole: every mapped part is advised,
/// then `ENOMEM`.
#[test]
fn madvise_advises_around_holes() {
    let mut m = setup();
    assert_eq!(
        m.madvise(B + 3 * P, 6 * P, Advice::DontFork),
        Err(Errno::ENOMEM)
    );
    assert_eq!(draw(&m, B, 10), "AAAB  CCCD");
    assert!(m
        .vma_at(B + 3 * P)
        .unwrap()
        .flags()
        .contains(VmFlags::DONTCOPY));
    assert!(m
        .vma_at(B + 8 * P)
        .unwrap()
        .flags()
        .contains(VmFlags::DONTCOPY));
    assert!(!m
        .vma_at(B + 9 * P)
        .unwrap()
        .flags()
        .contains(VmFlags::DONTCOPY));
    check(&m);
    // DONTNEED drops the pages before the hole too
    assert_eq!(m.read_byte(B).unwrap(), 1);
    assert_eq!(m.madvise(B, 10 * P, Advice::DontNeed), Err(Errno::ENOMEM));
    assert_eq!(m.read_byte(B).unwrap(), 0);
    // no VMA at all in the range
    fails(&mut m, Errno::ENOMEM, |m| {
        m.madvise(B + 4 * P, 2 * P, Advice::DontFork)
    });
}

#[test]
fn madvise_errors() {
    let mut m = setup();
    fails(&mut m, Errno::EINVAL, |m| {
        m.madvise(B + 1, P, Advice::DontFork)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.madvise(B + 4 * P, 2 * P, Advice::DontFork)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.madvise(B, u64::MAX, Advice::DontFork)
    });
    assert_eq!(m.madvise(B, 0, Advice::DontFork), Ok(()));
    assert_eq!(Advice::from_raw(18), Some(Advice::WipeOnFork));
    assert_eq!(Advice::from_raw(99), None);
    fails(&mut m, Errno::EINVAL, |m| m.madvise_raw(B, P, 5).unwrap());
    fails(&mut m, Errno::EINVAL, |m| m.madvise_raw(B, P, 99).unwrap());
    assert_eq!(
        m.madvise_raw(B, P, 100),
        None,
        "MADV_HWPOISON: known, not modelled"
    );
}

#[test]
fn mremap_errors() {
    let mut m = setup();
    let mm = RemapFlags::MAYMOVE;
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, P, 2 * P, RemapFlags::from_bits_retain(8), 0)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, P, 2 * P, RemapFlags::FIXED, B + 20 * P)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, P, 2 * P, RemapFlags::DONTUNMAP | mm, 0)
    });
    fails(&mut m, Errno::EINVAL, |m| m.mremap(B + 1, P, 2 * P, mm, 0));
    fails(&mut m, Errno::EINVAL, |m| m.mremap(B, P, 0, mm, 0));
    fails(&mut m, Errno::EFAULT, |m| {
        m.mremap(B + 4 * P, P, 2 * P, mm, 0)
    });
    fails(&mut m, Errno::EFAULT, |m| m.mremap(B, 8 * P, 9 * P, mm, 0)); // spans two VMAs
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mremap(B, 4 * P, 8 * P, RemapFlags::EMPTY, 0)
    }); // can't grow, may not move
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 2 * P, 2 * P, mm | RemapFlags::FIXED, B + P)
    }); // overlap
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 2 * P, 2 * P, mm | RemapFlags::FIXED, B + 20 * P + 1)
    });
    // growing in place into the hole works, once
    assert_eq!(m.mremap(B, 4 * P, 6 * P, RemapFlags::EMPTY, 0), Ok(B));
    assert_eq!(draw(&m, B, 10), "AAAAAABBBB");
}

#[test]
fn max_map_count() {
    let mut m = AddressSpace::with_config(Config {
        max_map_count: 3,
        ..Config::default()
    });
    anon_at(&mut m, B, 0, 10, Prot::RW);
    anon_at(&mut m, B, 20, 1, Prot::RW);
    anon_at(&mut m, B, 30, 1, Prot::RW);
    // map_count (3) > max is checked before mmap: 3 is allowed to become 4
    anon_at(&mut m, B, 40, 1, Prot::RW);
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mmap(0, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
    });
    fails(&mut m, Errno::ENOMEM, |m| m.munmap(B + 2 * P, P)); // a hole would split
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mprotect(B + 2 * P, P, Prot::READ)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.madvise(B + 2 * P, P, Advice::DontFork)
    });
    assert_eq!(m.munmap(B, P), Ok(())); // trimming an end splits nothing
    assert_eq!(m.munmap(B + 40 * P, P), Ok(()));
    // at map_count == max no split is allowed (split_vma)
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mprotect(B + 9 * P, P, Prot::READ)
    });
    assert_eq!(m.munmap(B + 30 * P, P), Ok(()));
    assert_eq!(m.mprotect(B + 9 * P, P, Prot::READ), Ok(()));
    assert_eq!(m.map_count(), 3);
    check(&m);
    // one split left: vma_modify splits at the start, then the split at
    // the end fails; the VMA stays cut in two with its old protection
    assert_eq!(m.munmap(B + 20 * P, P), Ok(()));
    assert_eq!(m.map_count(), 2);
    assert_eq!(m.mprotect(B + 3 * P, P, Prot::READ), Err(Errno::ENOMEM));
    assert_eq!(draw(&m, B, 10), " AABBBBBBC");
    assert_eq!(m.vma_at(B + 3 * P).unwrap().prot(), Prot::RW);
    check(&m);
}

#[test]
fn access_faults() {
    let mut m = setup();
    let e = m.read_byte(B + 4 * P).unwrap_err();
    assert_eq!(
        (e.kind, e.addr, e.errno()),
        (FaultKind::Unmapped, B + 4 * P, Errno::EFAULT)
    );
    let e = m.write_byte(B + 6 * P, 1).unwrap_err();
    assert_eq!((e.kind, e.errno()), (FaultKind::Protection, Errno::EACCES));
    // an access straddling into a hole moves nothing
    let rss = m.stats().rss_pages;
    let e = m.write(B + 4 * P - 2, &[9, 9, 9, 9]).unwrap_err();
    assert_eq!((e.kind, e.addr), (FaultKind::Unmapped, B + 4 * P));
    assert_eq!(rb(&mut m, B + 4 * P - 2), 0);
    assert_eq!(m.stats().rss_pages, rss);
    m.mprotect(B, P, Prot::NONE).unwrap();
    assert_eq!(m.read_byte(B).unwrap_err().kind, FaultKind::Protection);
    m.mprotect(B, P, Prot::WRITE).unwrap(); // x86: write implies read
    assert_eq!(rb(&mut m, B), 1);
    assert_eq!(
        m.read_byte(TASK_SIZE - 1).unwrap_err().kind,
        FaultKind::Unmapped
    );
    assert_eq!(
        m.read(u64::MAX - 1, &mut [0u8; 4]).unwrap_err().kind,
        FaultKind::Unmapped
    );
    check(&m);
}

#[test]
fn mremap_corner_cases() {
    let mut m = setup();
    let mm = RemapFlags::MAYMOVE;
    // old_len 0 duplicates only shared mappings
    fails(&mut m, Errno::EINVAL, |m| m.mremap(B, 0, P, mm, 0));
    let s = m
        .mmap(0, 2 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    wb(&mut m, s + P, 42);
    let d = m.mremap(s + P, 0, P, mm, 0).unwrap();
    assert_ne!(d, s + P);
    assert_eq!(rb(&mut m, d), 42, "the duplicate maps the same object");
    wb(&mut m, d, 43);
    assert_eq!(rb(&mut m, s + P), 43);
    check(&m);
    // DONTUNMAP with no hint (an unaligned one is EINVAL, see
    // mremap_dontunmap_checks_its_new_addr)
    let r = m.mremap(B, P, P, mm | RemapFlags::DONTUNMAP, 0).unwrap();
    assert_ne!(r, B);
    assert_eq!(rb(&mut m, r), 1);
    assert_eq!(rb(&mut m, B), 0, "DONTUNMAP leaves the old range empty");
    check(&m);
    // huge lengths
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, u64::MAX - 2 * P, P, mm, 0)
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, u64::MAX - 2 * P, P, mm | RemapFlags::FIXED, 0x5000_0000)
    });
    check(&m);
}

#[test]
fn tiny_mmap_min_addr() {
    let mut m = AddressSpace::with_config(Config {
        mmap_min_addr: 0,
        ..Config::default()
    });
    let a = m
        .mmap(
            0,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED | MapFlags::GROWSDOWN,
            None,
            0,
        )
        .unwrap();
    assert_eq!(a, 0);
    wb(&mut m, 0, 1);
    assert!(m.read_byte(P).is_err());
    assert_eq!(
        m.mmap(0x100, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
            .map(|a| a != 0),
        Ok(true)
    );
    check(&m);
}

/// `do_mmap`'s checks of the flags and the file, as Linux 6.18 returns them.
#[test]
fn mmap_flag_errors() {
    let mut m = setup();
    let f = Some(FileId(3));
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(
            0,
            P,
            Prot::READ,
            MapFlags::PRIVATE | MapFlags::GROWSDOWN,
            f,
            0,
        )
    });
    fails(&mut m, Errno::EOPNOTSUPP, |m| {
        m.mmap(
            0,
            P,
            Prot::RW,
            MapFlags::SHARED_VALIDATE | MapFlags::SYNC,
            f,
            0,
        )
    });
    // Anonymous memory has no MAP_SHARED_VALIDATE.
    fails(&mut m, Errno::EINVAL, |m| {
        let flags = MapFlags::SHARED_VALIDATE | MapFlags::ANONYMOUS;
        m.mmap(0, P, Prot::RW, flags, None, 0)
    });
    fails(&mut m, Errno::EOPNOTSUPP, |m| {
        let flags = MapFlags::SHARED_VALIDATE | MapFlags::FIXED_NOREPLACE;
        m.mmap(0x6000_0000, P, Prot::RW, flags, f, 0)
    });
    fails(&mut m, Errno::ENOMEM, |m| {
        m.mmap(
            0,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::HUGETLB,
            None,
            0,
        )
    });
    fails(&mut m, Errno::EINVAL, |m| {
        m.mmap(0, P, Prot::RW, MapFlags::TYPE, f, 0)
    });
    // Without MAP_SHARED_VALIDATE, MAP_SYNC is for the file system to
    // refuse; this one (as tmpfs) does not (see tests/rules.rs).
    assert!(m
        .mmap(0, P, Prot::RW, MapFlags::SHARED | MapFlags::SYNC, f, 0)
        .is_ok());
    assert_eq!(Errno::from_code(95), Some(Errno::EOPNOTSUPP));
}

/// `brk` never fails: a refused move returns the old break and changes
/// nothing (below `start_brk`, into the next mapping).
#[test]
fn brk_refusals() {
    let mut m = AddressSpace::new();
    let start = m.brk(0);
    assert_eq!(m.brk(start - P), start, "below start_brk");
    assert_eq!(m.brk(start + 4 * P), start + 4 * P);
    let heap = m.vma_at(start).unwrap().clone();
    assert!(heap.flags().contains(VmFlags::ACCOUNT));
    m.mmap(
        start + 8 * P,
        P,
        Prot::READ,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    let before = m.maps();
    // the new end plus one page may not reach the next mapping
    assert_eq!(m.brk(start + 7 * P + 1), start + 4 * P);
    assert_eq!(m.maps(), before);
    assert_eq!(m.brk(start + 7 * P), start + 7 * P);
    assert_eq!(m.brk(start), start, "shrinking back to the start");
    assert!(m.vma_at(start).is_none());
    check(&m);
}

/// Shrinking unmaps the whole tail, whatever VMAs it covers; duplicating a
/// private mapping (`old_len == 0`) is `EINVAL`.
#[test]
fn mremap_shrinks_across_vmas() {
    let mut m = setup();
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 0, P, RemapFlags::MAYMOVE, 0)
    });
    assert_eq!(m.mremap(B, 10 * P, P, RemapFlags::EMPTY, 0), Ok(B));
    assert_eq!(draw(&m, B, 10), "A         ");
    check(&m);
}

/// `MREMAP_DONTUNMAP` without `MREMAP_FIXED` still has its `new_addr`
/// checked, as with `FIXED` and before the VMA lookup (checked on Linux
/// 6.18: a C call without a fifth argument passes garbage and gets EINVAL).
#[test]
fn mremap_dontunmap_checks_its_new_addr() {
    let mut m = setup();
    let du = RemapFlags::MAYMOVE | RemapFlags::DONTUNMAP;
    let p = maple_mm::PAGE_SIZE;
    // Not page aligned.
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 2 * p, 2 * p, du, 0x1234)
    });
    // The new range past the task size.
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 2 * p, 2 * p, du, 0x7fff_ffff_f000)
    });
    // Overlapping the old range.
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(B, 2 * p, 2 * p, du, B + p)
    });
    // Before the VMA lookup: nothing mapped at the old address is EINVAL too.
    fails(&mut m, Errno::EINVAL, |m| {
        m.mremap(0x1000_0000, 2 * p, 2 * p, du, 0x1234)
    });
    // A page-aligned hint (0 included) moves the range.
    let to = m.mremap(B, 2 * p, 2 * p, du, 0).unwrap();
    assert_ne!(to, B);
    check(&m);
}

/// `mremap_to` unmaps the target before it looks the old VMA up again:
/// duplicating a shared mapping (`old_len` 0) onto itself passes the
/// overlap check, unmaps the mapping and then fails with `EFAULT` (checked
/// on Linux 6.18: the mapping is gone).
#[test]
fn mremap_fixed_onto_its_own_zero_length_source_unmaps_it() {
    let mut m = AddressSpace::new();
    let fixed = MapFlags::SHARED_ANON | MapFlags::FIXED;
    let a = m.mmap(0x1000_0000, P, Prot::NONE, fixed, None, 0).unwrap();
    let flags = RemapFlags::MAYMOVE | RemapFlags::FIXED;
    assert_eq!(m.mremap(a, 0, 1, flags, a), Err(Errno::EFAULT));
    assert!(m.vma_at(a).is_none());
    check(&m);
}
