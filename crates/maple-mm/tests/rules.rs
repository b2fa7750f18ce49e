//! The kernel rules beyond "top-down, split and merge", one test each. The
//! expected addresses and flags were checked against Linux 6.18 (x86-64,
//! randomization off) with small C programs doing the same calls.

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Advice, Errno, FileId, MapFlags, Memory, OpenFile, OpenMode, Prot, RemapFlags,
    Special, VmFlags, PMD_SIZE,
};

const B: u64 = 0x3000_0000;

fn flags_at(mm: &AddressSpace, a: u64) -> VmFlags {
    mm.vma_at(a).expect("a VMA").flags()
}

fn anon(mm: &mut AddressSpace, len: u64, flags: MapFlags) -> u64 {
    mm.mmap(0, len, Prot::RW, MapFlags::PRIVATE_ANON | flags, None, 0)
        .unwrap()
}

/// `__get_unmapped_area` → `thp_get_unmapped_area_vmflags` for private
/// anonymous mappings without a hint whose length is a multiple of 2 MiB:
/// search `len + 2 MiB` top-down, start at the first 2 MiB boundary above
/// the found range's start, or 2 MiB higher if that start is aligned.
#[test]
fn thp_aligns_anonymous_mappings_of_2mib_multiples() {
    let mut mm = AddressSpace::new();
    let base = mm.config().mmap_base;
    let small = anon(&mut mm, P, MapFlags::EMPTY);
    assert_eq!(small, base - P);
    // padded range [small - 4 MiB, small): first boundary above its start
    let two = anon(&mut mm, PMD_SIZE, MapFlags::EMPTY);
    assert_eq!(two, (small - 2 * PMD_SIZE).next_multiple_of(PMD_SIZE));
    assert_eq!(two, 0x7fff_f7c0_0000);
    // padded range [two - 6 MiB, two) starts aligned: the mapping moves up
    // a whole block and ends where `two` starts (and merges with it)
    let four = anon(&mut mm, 2 * PMD_SIZE, MapFlags::EMPTY);
    assert_eq!(four, two - 2 * PMD_SIZE);
    assert_eq!(mm.vma_at(four).unwrap().end(), two + PMD_SIZE, "merged");
    // not a multiple of 2 MiB: plain top-down
    let odd = anon(&mut mm, PMD_SIZE + P, MapFlags::EMPTY);
    assert_eq!(odd, four - PMD_SIZE - P);
    // MAP_STACK is aligned too (it only sets VM_NOHUGEPAGE)
    let stack = anon(&mut mm, PMD_SIZE, MapFlags::STACK);
    assert_eq!(stack % PMD_SIZE, 0);
    // a hint, MAP_FIXED and shared anonymous memory are never aligned
    let hinted = mm
        .mmap(
            0x4000_1000,
            PMD_SIZE,
            Prot::RW,
            MapFlags::PRIVATE_ANON,
            None,
            0,
        )
        .unwrap();
    assert_eq!(hinted, 0x4000_1000);
    check(&mm);
    let mut fresh = AddressSpace::new();
    let top = anon(&mut fresh, P, MapFlags::EMPTY);
    let shared = fresh
        .mmap(0, PMD_SIZE, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    assert_eq!(
        shared,
        top - PMD_SIZE,
        "shmem_enabled=never: plain top-down"
    );
    check(&fresh);
    check(&mm);
}

/// `thp_get_unmapped_area` as a file system's `get_unmapped_area`: the
/// address is congruent to the file offset modulo 2 MiB when the mapped
/// part of the file covers an aligned 2 MiB block; other files are not
/// aligned.
#[test]
fn thp_aligns_file_mappings_where_the_file_system_does() {
    let mut mm = AddressSpace::new();
    let ext4 = OpenFile::new(FileId(1)).thp_aligned(true);
    let map = |mm: &mut AddressSpace, f: OpenFile, len: u64, off: u64| {
        mm.mmap_file(0, len, Prot::READ, MapFlags::PRIVATE, f, off)
            .unwrap()
    };
    anon(&mut mm, 3 * P, MapFlags::EMPTY); // the top is not aligned
    let a = map(&mut mm, ext4, 2 * PMD_SIZE, 0);
    assert_eq!(a % PMD_SIZE, 0);
    let b = map(&mut mm, ext4, 2 * PMD_SIZE, P);
    assert_eq!(b % PMD_SIZE, P, "congruent to the offset");
    // 2 MiB from offset 4 KiB covers no aligned block: plain top-down
    let c = map(&mut mm, ext4, PMD_SIZE, P);
    assert_eq!(c, b - PMD_SIZE);
    let d = map(&mut mm, ext4, PMD_SIZE + P, 0);
    assert_eq!(d % PMD_SIZE, 0);
    // the same file on a file system that does not align
    let plain = OpenFile::new(FileId(2));
    let e = map(&mut mm, plain, 2 * PMD_SIZE, 0);
    assert_eq!(e, d - 2 * PMD_SIZE);
    // a hint is taken only if the padded length fits there
    anon_at(&mut mm, 0x4000_0000, 3 * PMD_SIZE / P, 1, Prot::READ);
    let hint = 0x4000_0000 + PMD_SIZE;
    let g = mm
        .mmap_file(hint, 2 * PMD_SIZE, Prot::READ, MapFlags::PRIVATE, ext4, 0)
        .unwrap();
    assert_ne!(g, hint, "fits unpadded only: placed top-down");
    assert_eq!(g % PMD_SIZE, 0);
    let roomy = 0x5000_0000 + P;
    let h = mm
        .mmap_file(roomy, 2 * PMD_SIZE, Prot::READ, MapFlags::PRIVATE, ext4, 0)
        .unwrap();
    assert_eq!(h, roomy, "fits padded: the hint as is");
    // mmap() of a bare FileId is a file that does not align
    let f = mm
        .mmap(
            0,
            2 * PMD_SIZE,
            Prot::READ,
            MapFlags::PRIVATE,
            Some(FileId(3)),
            0,
        )
        .unwrap();
    assert_eq!(f, g - 2 * PMD_SIZE);
    check(&mm);
}

/// A moving `mremap` places like `mmap`: an anonymous VMA grown to 2 MiB
/// moves to a 2 MiB boundary.
#[test]
fn thp_aligns_moving_mremap() {
    let mut mm = AddressSpace::new();
    let a = anon_at(&mut mm, B, 0, 1, Prot::RW);
    anon_at(&mut mm, B, 1, 1, Prot::READ); // a cannot grow in place
    let to = mm.mremap(a, P, PMD_SIZE, RemapFlags::MAYMOVE, 0).unwrap();
    assert_eq!(to % PMD_SIZE, 0);
    assert_eq!(
        to, 0x7fff_f7c0_0000,
        "the top-down padded range, aligned up"
    );
    check(&mm);
}

/// `calc_vm_flag_bits` (Linux 6.8): `MAP_STACK` sets `VM_NOHUGEPAGE`.
#[test]
fn map_stack_sets_nohugepage() {
    let mut mm = AddressSpace::new();
    let s = anon(&mut mm, 8 * P, MapFlags::STACK);
    assert_eq!(flags_at(&mm, s).smaps(), "rd wr mr mw me ac nh");
    let t = anon(&mut mm, 8 * P, MapFlags::EMPTY);
    assert!(!flags_at(&mm, t).contains(VmFlags::NOHUGEPAGE));
    // different flags: the two neighbours do not merge
    assert_eq!(t + 8 * P, s);
    assert_eq!(mm.map_count(), 2);
}

/// `MAP_SYNC` becomes `VM_SYNC` (`sf`) whatever the sharing type
/// (`calc_vm_flag_bits`), so such memory does not merge with memory without
/// it; ext4 and xfs refuse it for a file that is not on a DAX device
/// (`EOPNOTSUPP`), tmpfs keeps it. As Linux 6.18 did on ext4 and tmpfs.
#[test]
fn map_sync_is_kept_as_vm_sync_unless_the_file_system_refuses_it() {
    let mut mm = AddressSpace::new();
    let plain = mm.mmap(
        B,
        2 * P,
        Prot::RW,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    );
    let sync = MapFlags::PRIVATE_ANON | MapFlags::FIXED | MapFlags::SYNC;
    let s1 = mm.mmap(B + 2 * P, 2 * P, Prot::RW, sync, None, 0);
    let s2 = mm.mmap(B + 4 * P, 2 * P, Prot::RW, sync, None, 0);
    assert_eq!((plain, s1, s2), (Ok(B), Ok(B + 2 * P), Ok(B + 4 * P)));
    assert_eq!(flags_at(&mm, B + 2 * P).smaps(), "rd wr mr mw me ac sf");
    assert_eq!(mm.vma_at(B + 2 * P).unwrap().start(), B + 2 * P);
    assert_eq!(mm.vma_at(B + 2 * P).unwrap().end(), B + 6 * P);
    assert_eq!(mm.map_count(), 2);
    let shared = mm.mmap(
        0,
        P,
        Prot::RW,
        MapFlags::SHARED_ANON | MapFlags::SYNC,
        None,
        0,
    );
    assert!(flags_at(&mm, shared.unwrap()).contains(VmFlags::SYNC));

    let ext4 = OpenFile::new(FileId(3)).refuses_map_sync(true);
    for sharing in [MapFlags::SHARED, MapFlags::PRIVATE] {
        let flags = sharing | MapFlags::SYNC;
        assert_eq!(
            mm.mmap_file(0, P, Prot::RW, flags, ext4, 0),
            Err(Errno::EOPNOTSUPP)
        );
        assert!(mm.mmap_file(0, P, Prot::RW, sharing, ext4, 0).is_ok());
    }
    let tmpfs = OpenFile::new(FileId(4));
    let t = mm.mmap_file(0, P, Prot::RW, MapFlags::SHARED | MapFlags::SYNC, tmpfs, 0);
    assert_eq!(flags_at(&mm, t.unwrap()).smaps(), "rd wr sh mr mw me ms sf");
    check(&mm);
}

/// `hugepage_madvise`, `MADV_DONTDUMP`/`MADV_DODUMP`: flags set and cleared
/// on the part of the range, VMAs split and merged back.
#[test]
fn madvise_flag_advice_splits_and_merges() {
    let mut mm = AddressSpace::new();
    let a = anon_at(&mut mm, B, 0, 4, Prot::RW);
    mm.madvise(a + P, 2 * P, Advice::HugePage).unwrap();
    assert_eq!(draw(&mm, B, 4), "ABBC");
    assert!(flags_at(&mm, a + P).contains(VmFlags::HUGEPAGE));
    mm.madvise(a + P, P, Advice::NoHugePage).unwrap();
    let f = flags_at(&mm, a + P);
    assert!(f.contains(VmFlags::NOHUGEPAGE) && !f.contains(VmFlags::HUGEPAGE));
    assert_eq!(draw(&mm, B, 4), "ABCD");
    mm.madvise(a, 4 * P, Advice::NoHugePage).unwrap();
    assert_eq!(draw(&mm, B, 4), "AAAA", "all the same flags again: one VMA");
    mm.madvise(a, 2 * P, Advice::DontDump).unwrap();
    assert!(flags_at(&mm, a).contains(VmFlags::DONTDUMP));
    assert_eq!(draw(&mm, B, 4), "AABB");
    mm.madvise(a, 2 * P, Advice::DoDump).unwrap();
    assert_eq!(draw(&mm, B, 4), "AAAA");
    // ksm_madvise: VM_MERGEABLE, silently not on shared memory
    mm.madvise(a + P, P, Advice::Mergeable).unwrap();
    assert_eq!(flags_at(&mm, a + P).smaps(), "rd wr mr mw me ac nh mg");
    mm.madvise(a + P, P, Advice::Unmergeable).unwrap();
    assert_eq!(draw(&mm, B, 4), "AAAA");
    let s = mm
        .mmap(
            B + 8 * P,
            P,
            Prot::RW,
            MapFlags::SHARED_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    mm.madvise(s, P, Advice::Mergeable).unwrap();
    assert!(!flags_at(&mm, s).contains(VmFlags::MERGEABLE));
    check(&mm);
}

/// `madvise_free_single_vma` (private anonymous only), `can_madv_lru_vma`
/// (`COLD`, `PAGEOUT`: not on locked VMAs), `WILLNEED`: no page changes.
#[test]
fn madvise_hints_check_their_vmas_and_keep_the_pages() {
    let mut mm = AddressSpace::new();
    let a = anon_at(&mut mm, B, 0, 2, Prot::RW);
    wb(&mut mm, a, 9);
    for adv in [
        Advice::Free,
        Advice::Cold,
        Advice::PageOut,
        Advice::WillNeed,
    ] {
        mm.madvise(a, 2 * P, adv).unwrap();
        assert_eq!(rb(&mut mm, a), 9, "{adv:?}");
    }
    let f = mm
        .mmap(
            B + 4 * P,
            P,
            Prot::READ,
            MapFlags::PRIVATE | MapFlags::FIXED,
            Some(FileId(4)),
            0,
        )
        .unwrap();
    assert_eq!(mm.madvise(f, P, Advice::Free), Err(Errno::EINVAL));
    mm.madvise(f, P, Advice::Cold).unwrap();
    let locked = mm
        .mmap(
            B + 8 * P,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED | MapFlags::LOCKED,
            None,
            0,
        )
        .unwrap();
    for adv in [
        Advice::Cold,
        Advice::PageOut,
        Advice::Free,
        Advice::DontNeed,
    ] {
        assert_eq!(mm.madvise(locked, P, adv), Err(Errno::EINVAL), "{adv:?}");
    }
    wb(&mut mm, locked, 3);
    mm.madvise(locked, P, Advice::DontNeedLocked).unwrap();
    assert_eq!(rb(&mut mm, locked), 0);
    check(&mm);
}

/// `madvise_remove`: a hole punched in the object of a shared writable
/// mapping reads as zeros in every mapping of it; no file → `EINVAL`, not
/// shared and writable → `EACCES`.
#[test]
fn madvise_remove_punches_a_hole() {
    let mem = Memory::new();
    let mut mm = AddressSpace::with_memory(&mem, Default::default());
    let file = FileId(5);
    mem.write_file(file, 0, &[1u8; 2 * P as usize]);
    let sh = MapFlags::SHARED | MapFlags::FIXED;
    let a = mm.mmap(B, 2 * P, Prot::RW, sh, Some(file), 0).unwrap();
    let b = mm
        .mmap(B + 4 * P, 2 * P, Prot::READ, sh, Some(file), 0)
        .unwrap();
    assert_eq!(rb(&mut mm, b + P), 1);
    mm.madvise(a + P, P, Advice::Remove).unwrap();
    assert_eq!(rb(&mut mm, a + P), 0);
    assert_eq!(rb(&mut mm, b + P), 0, "the other mapping sees the hole");
    assert_eq!(rb(&mut mm, b), 1, "outside the hole");
    let mut byte = [9u8];
    mem.read_file(file, P + 7, &mut byte);
    assert_eq!(byte, [0]);
    // shared anonymous memory too
    let s = mm
        .mmap(
            B + 8 * P,
            P,
            Prot::RW,
            MapFlags::SHARED_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    wb(&mut mm, s, 4);
    mm.madvise(s, P, Advice::Remove).unwrap();
    assert_eq!(rb(&mut mm, s), 0);
    // private anonymous: EINVAL; a read-only open file: EACCES
    let p = anon_at(&mut mm, B, 10, 1, Prot::RW);
    assert_eq!(mm.madvise(p, P, Advice::Remove), Err(Errno::EINVAL));
    let ro = OpenFile::new(file).mode(OpenMode::ReadOnly);
    let r = mm.mmap_file(B + 12 * P, P, Prot::READ, sh, ro, 0).unwrap();
    assert_eq!(mm.madvise(r, P, Advice::Remove), Err(Errno::EACCES));
    check(&mm);
    mem.validate().unwrap();
}

/// `madvise_populate`: pages faulted in as accesses would; the VMA must
/// allow the access (`EINVAL`); a hole stops it with `ENOMEM`, the pages
/// before it populated.
#[test]
fn madvise_populate_faults_pages_in() {
    let mut mm = AddressSpace::new();
    let a = anon_at(&mut mm, B, 0, 2, Prot::RW);
    mm.madvise(a, 2 * P, Advice::PopulateRead).unwrap();
    assert!(mm.is_present(a) && mm.is_present(a + P));
    assert_eq!(mm.stats().rss_pages, 0, "reads map the zero page");
    assert!(mm.vma_at(a).unwrap().anon_vma().is_none());
    mm.madvise(a, P, Advice::PopulateWrite).unwrap();
    assert_eq!(mm.stats().rss_pages, 1);
    assert!(mm.vma_at(a).unwrap().anon_vma().is_some(), "a write fault");
    let r = anon_at(&mut mm, B, 4, 1, Prot::READ);
    assert_eq!(mm.madvise(r, P, Advice::PopulateWrite), Err(Errno::EINVAL));
    let n = anon_at(&mut mm, B, 6, 1, Prot::NONE);
    assert_eq!(mm.madvise(n, P, Advice::PopulateRead), Err(Errno::EINVAL));
    let w = anon_at(&mut mm, B, 8, 1, Prot::WRITE);
    assert_eq!(mm.madvise(w, P, Advice::PopulateRead), Err(Errno::EINVAL));
    let h = anon_at(&mut mm, B, 10, 1, Prot::RW);
    assert_eq!(
        mm.madvise(h, 3 * P, Advice::PopulateWrite),
        Err(Errno::ENOMEM)
    );
    assert!(mm.is_present(h));
    check(&mm);
}

/// `accountable_mapping` and `mprotect_fixup` (6.7+): private writable
/// mappings are charged (`VM_ACCOUNT`); made read-only before their first
/// page, anonymous VMAs are uncharged; written ones stay charged.
#[test]
fn vm_account_follows_the_kernel() {
    let mut mm = AddressSpace::new();
    let a = anon_at(&mut mm, B, 0, 4, Prot::RW);
    assert!(flags_at(&mm, a).contains(VmFlags::ACCOUNT));
    mm.mprotect(a, P, Prot::READ).unwrap();
    assert_eq!(flags_at(&mm, a).smaps(), "rd mr mw me", "uncharged");
    wb(&mut mm, a + 2 * P, 1);
    mm.mprotect(a + 2 * P, P, Prot::READ).unwrap();
    assert_eq!(
        flags_at(&mm, a + 2 * P).smaps(),
        "rd mr mw me ac",
        "has pages"
    );
    mm.mprotect(a, P, Prot::RW).unwrap();
    assert!(flags_at(&mm, a).contains(VmFlags::ACCOUNT), "charged again");
    // a write the trace does not show, stated with anon_vma_prepare
    assert!(mm.anon_vma_prepare(a + 3 * P));
    mm.mprotect(a + 3 * P, P, Prot::READ).unwrap();
    assert!(flags_at(&mm, a + 3 * P).contains(VmFlags::ACCOUNT));
    assert!(!mm.is_present(a + 3 * P), "no page was faulted in");
    // not charged: shared, MAP_NORESERVE, read-only
    let s = mm
        .mmap(0, P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    let nr = anon(&mut mm, P, MapFlags::NORESERVE);
    let ro = mm
        .mmap(0, P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    for x in [s, nr, ro] {
        assert!(!flags_at(&mm, x).contains(VmFlags::ACCOUNT));
    }
    assert!(!mm.anon_vma_prepare(s), "shared memory has no anon_vma");
    assert!(!mm.anon_vma_prepare(0x1000), "no VMA");
    // a private writable file mapping is charged, and stays charged
    let f = mm
        .mmap(0, P, Prot::RW, MapFlags::PRIVATE, Some(FileId(6)), 0)
        .unwrap();
    assert!(flags_at(&mm, f).contains(VmFlags::ACCOUNT));
    mm.mprotect(f, P, Prot::READ).unwrap();
    assert!(flags_at(&mm, f).contains(VmFlags::ACCOUNT));
    check(&mm);
}

/// `anon_vma_prepare` on the first write fault; `is_mergeable_anon_vma`:
/// in the parent a new neighbour merges with a VMA that has an anon_vma,
/// in the child (whose inherited VMA's chain is not singular) it does not,
/// not even after its own first write (`reusable_anon_vma`).
#[test]
fn anon_vma_identity_and_fork() {
    let mut mm = AddressSpace::new();
    let x = anon_at(&mut mm, B, 1, 2, Prot::RW);
    rb(&mut mm, x);
    assert!(mm.vma_at(x).unwrap().anon_vma().is_none(), "a read fault");
    wb(&mut mm, x, 1);
    assert!(mm.vma_at(x).unwrap().anon_vma().is_some(), "a write fault");
    assert!(!mm.vma_at(x).unwrap().anon_vma_inherited());
    let mut child = mm.fork().unwrap();
    let cv = child.vma_at(x).unwrap();
    assert!(cv.anon_vma_inherited());
    assert_ne!(cv.anon_vma(), mm.vma_at(x).unwrap().anon_vma());
    anon_at(&mut child, B, 3, 1, Prot::RW);
    assert_eq!(draw(&child, B, 4), " AAB", "no merge in the child");
    wb(&mut child, x + 2 * P, 1);
    anon_at(&mut child, B, 0, 1, Prot::RW);
    assert_eq!(draw(&child, B, 4), "ABBC");
    // splitting the inherited VMA and joining it again still merges
    child.mprotect(x, P, Prot::READ).unwrap();
    child.mprotect(x, P, Prot::RW).unwrap();
    assert_eq!(draw(&child, B, 4), "ABBC");
    // the parent's chain is singular: its neighbours merge
    anon_at(&mut mm, B, 3, 1, Prot::RW);
    anon_at(&mut mm, B, 0, 1, Prot::RW);
    assert_eq!(draw(&mm, B, 4), "AAAA");
    check(&mm);
    check(&child);
}

/// `do_mmap`: a file open read-only maps shared without `VM_SHARED` and
/// `VM_MAYWRITE` (so `mprotect(PROT_WRITE)` is `EACCES`), refuses a shared
/// writable mapping, and maps privately as usual; a write-only file cannot
/// be mapped at all.
#[test]
fn read_only_files_map_shared_without_write() {
    let mut mm = AddressSpace::new();
    let ro = OpenFile::new(FileId(8)).mode(OpenMode::ReadOnly);
    let a = mm
        .mmap_file(0, P, Prot::READ, MapFlags::SHARED, ro, 0)
        .unwrap();
    assert_eq!(flags_at(&mm, a).smaps(), "rd mr me ms");
    assert!(mm.maps().lines().next().unwrap().contains(" r--s "));
    assert_eq!(mm.mprotect(a, P, Prot::RW), Err(Errno::EACCES));
    assert_eq!(
        mm.mmap_file(0, P, Prot::RW, MapFlags::SHARED, ro, 0),
        Err(Errno::EACCES)
    );
    let p = mm
        .mmap_file(0, P, Prot::READ, MapFlags::PRIVATE, ro, 0)
        .unwrap();
    mm.mprotect(p, P, Prot::RW).unwrap();
    wb(&mut mm, p, 1);
    let wo = OpenFile::new(FileId(8)).mode(OpenMode::WriteOnly);
    assert_eq!(
        mm.mmap_file(0, P, Prot::READ, MapFlags::PRIVATE, wo, 0),
        Err(Errno::EACCES)
    );
    check(&mm);
}

/// `_install_special_mapping` and `get_gate_vma`: the kernel's flags, no
/// split (`special_mapping_split`: `EINVAL`), no growth (`VM_DONTEXPAND`:
/// `EFAULT`), `VM_IO`/`VM_PFNMAP` advice refused, copied at fork.
#[test]
fn special_mappings() {
    let mut mm = AddressSpace::new();
    let (vvar, clock, vdso) = (0x7fff_f7fc_2000, 0x7fff_f7fc_6000, 0x7fff_f7fc_8000);
    mm.map_special(Special::Vvar, vvar, 4 * P).unwrap();
    mm.map_special(Special::VvarVclock, clock, 2 * P).unwrap();
    mm.map_special(Special::Vdso, vdso, 2 * P).unwrap();
    mm.map_special(Special::Vsyscall, maple_mm::VSYSCALL_ADDR, P)
        .unwrap();
    assert_eq!(
        mm.map_count(),
        3,
        "adjacent, never merged; the gate page is no VMA"
    );
    assert_eq!(flags_at(&mm, vvar).smaps(), "rd mr pf io de dd");
    assert_eq!(flags_at(&mm, clock).smaps(), "rd mr pf io de dd");
    assert_eq!(flags_at(&mm, vdso).smaps(), "rd ex mr mw me de");
    assert_eq!(mm.gate_vma().unwrap().flags().smaps(), "ex");
    let maps = mm.maps();
    let names: Vec<&str> = maps
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["[vvar]", "[vvar_vclock]", "[vdso]", "[vsyscall]"]);
    assert_eq!(
        maps.lines().last().unwrap(),
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]"
    );
    // errors the kernel gives for them
    assert_eq!(mm.mprotect(vdso, P, Prot::READ), Err(Errno::EINVAL));
    assert_eq!(mm.munmap(vdso, P), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(vvar, P, Advice::HugePage), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(vvar, 4 * P, Advice::DoDump), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(vvar, 4 * P, Advice::DoFork), Err(Errno::EINVAL));
    assert_eq!(
        mm.madvise(vvar, 4 * P, Advice::DontNeed),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        mm.madvise(vvar, P, Advice::PopulateRead),
        Err(Errno::EINVAL)
    );
    mm.madvise(vvar, P, Advice::DontDump).unwrap();
    assert_eq!(
        mm.mremap(vvar, P, 2 * P, RemapFlags::EMPTY, 0),
        Err(Errno::EFAULT)
    );
    mm.madvise(vdso, 2 * P, Advice::HugePage).unwrap();
    mm.madvise(vdso, 2 * P, Advice::WipeOnFork).unwrap();
    mm.madvise(vdso, 2 * P, Advice::Mergeable).unwrap();
    assert_eq!(flags_at(&mm, vdso).smaps(), "rd ex mr mw me de wf hg");
    mm.mprotect(vdso, 2 * P, Prot::READ).unwrap();
    assert_eq!(rb(&mut mm, vdso), 0);
    // creation errors
    assert_eq!(mm.map_special(Special::Vdso, vdso, P), Err(Errno::ENOMEM));
    assert_eq!(mm.map_special(Special::Vdso, B + 1, P), Err(Errno::EINVAL));
    assert_eq!(mm.map_special(Special::Vsyscall, B, P), Err(Errno::EINVAL));
    let child = mm.fork().unwrap();
    assert_eq!(child.maps(), mm.maps());
    check(&mm);
    check(&child);
    assert_eq!(
        Special::from_name("[vvar_vclock]"),
        Some(Special::VvarVclock)
    );
}

/// `remap_move` (Linux 6.17+): `MREMAP_FIXED` without a size change moves
/// every VMA of a range with gaps, each part keeping its distance from the
/// previous one; the target under a gap is left alone; a range starting in
/// a gap is `EFAULT`.
#[test]
fn mremap_fixed_moves_several_vmas() {
    let mut mm = AddressSpace::new();
    let (src, dst) = (0x5000_0000u64, 0x5100_0000u64);
    anon_at(&mut mm, src, 0, 3, Prot::RW);
    anon_at(&mut mm, src, 4, 3, Prot::READ);
    anon_at(&mut mm, dst, 0, 16, Prot::READ);
    wb(&mut mm, src + 2 * P, 7);
    let to = mm
        .mremap(
            src + P,
            5 * P,
            5 * P,
            RemapFlags::MAYMOVE | RemapFlags::FIXED,
            dst + P,
        )
        .unwrap();
    assert_eq!(to, dst + P);
    // the source keeps what was outside the range
    assert_eq!(draw(&mm, src, 8), "A     B ");
    // the target: the moved parts, and the old target under the gap, which
    // merges with the moved read-only part and the rest of the old target
    assert_eq!(draw(&mm, dst, 16), "ABBCCCCCCCCCCCCC");
    assert_eq!(rb(&mut mm, dst + 2 * P), 7, "the pages moved along");
    // with MREMAP_DONTUNMAP the sources stay, empty
    let (s2, d2) = (0x5700_0000u64, 0x5800_0000u64);
    anon_at(&mut mm, s2, 0, 1, Prot::RW);
    anon_at(&mut mm, s2, 1, 1, Prot::READ);
    let flags = RemapFlags::MAYMOVE | RemapFlags::FIXED | RemapFlags::DONTUNMAP;
    assert_eq!(mm.mremap(s2, 2 * P, 2 * P, flags, d2), Ok(d2));
    assert_eq!(draw(&mm, s2, 2), "AB");
    assert_eq!(draw(&mm, d2, 2), "AB");
    // a range starting in a gap
    let fixed = RemapFlags::MAYMOVE | RemapFlags::FIXED;
    assert_eq!(
        mm.mremap(src + 3 * P, 2 * P, 2 * P, fixed, dst),
        Err(Errno::EFAULT)
    );
    // a size change over several VMAs is still EFAULT, with no change
    let before = mm.maps();
    assert_eq!(
        mm.mremap(s2, 2 * P, 3 * P, fixed, 0x5900_0000),
        Err(Errno::EFAULT)
    );
    assert_eq!(mm.maps(), before);
    check(&mm);
}

/// `dup_mmap`: a fork's child does not inherit memory locks (`VM_LOCKED`
/// is cleared in its VMAs; checked with the smaps `VmFlags` of a child).
#[test]
fn fork_does_not_inherit_vm_locked() {
    let mut mm = AddressSpace::new();
    let l = anon(&mut mm, 2 * P, MapFlags::LOCKED);
    assert!(flags_at(&mm, l).contains(VmFlags::LOCKED));
    let child = mm.fork().unwrap();
    assert!(!flags_at(&child, l).contains(VmFlags::LOCKED));
    assert!(flags_at(&mm, l).contains(VmFlags::LOCKED));
    child.validate().unwrap();
}
