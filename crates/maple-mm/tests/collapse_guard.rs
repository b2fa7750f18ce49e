//! `MADV_COLLAPSE` and guard regions (`MADV_GUARD_INSTALL`,
//! `MADV_GUARD_REMOVE`), one rule per test. The expected results were
//! checked against Linux 6.18 (x86-64) with small C programs doing the
//! same calls (`AnonHugePages:`/`Rss:` of smaps, reads in forked children).

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Advice, Errno, FaultKind, MapFlags, Prot, RemapFlags, VmFlags, PMD_SIZE,
};

fn anon(mm: &mut AddressSpace, len: u64, flags: MapFlags) -> u64 {
    mm.mmap(0, len, Prot::RW, MapFlags::PRIVATE_ANON | flags, None, 0)
        .unwrap()
}

fn rss(mm: &AddressSpace) -> u64 {
    mm.stats().rss_pages
}

/// `madvise_collapse`: an anonymous VMA needs an anon_vma (a first write)
/// and an aligned 2 MiB block inside it; a block collapses when it has a
/// written page, and then every page of it is present; a block with no
/// page is `EINVAL`; a range whose rounded ends cross is `EINVAL`, one
/// whose rounded ends meet is a success that does nothing.
#[test]
fn collapse_fills_blocks_that_have_a_written_page() {
    let mut mm = AddressSpace::new();
    let c = anon(&mut mm, 4 * PMD_SIZE, MapFlags::EMPTY);
    assert_eq!(c % PMD_SIZE, 0);
    assert_eq!(
        mm.madvise(c, PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    mm.write(c + 5 * P, b"data").unwrap();
    assert_eq!(mm.madvise(c, PMD_SIZE, Advice::Collapse), Ok(()));
    assert_eq!(rss(&mm), 512);
    let mut buf = [0; 4];
    mm.read(c + 5 * P, &mut buf).unwrap();
    assert_eq!(&buf, b"data");
    assert_eq!(
        mm.madvise(c + PMD_SIZE, PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    assert_eq!(mm.madvise(c + P, P, Advice::Collapse), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(c + P, 3 << 20, Advice::Collapse), Ok(()));
    assert_eq!(mm.madvise(c, 0, Advice::Collapse), Ok(()));
    assert_eq!(mm.madvise(c + 1, P, Advice::Collapse), Err(Errno::EINVAL));
    // Two blocks, one of them empty: the other is collapsed, the call fails.
    mm.write(c + 2 * PMD_SIZE, b"x").unwrap();
    assert_eq!(
        mm.madvise(c + PMD_SIZE, 2 * PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    assert_eq!(rss(&mm), 1024);
    assert_eq!(mm.map_count(), 1);
    mm.validate().unwrap();
}

/// `thp_vma_allowable_order`: `VM_NOHUGEPAGE` (`MAP_STACK`), a VMA too
/// small for an aligned block, `PROT_NONE` memory never written: `EINVAL`;
/// shared anonymous memory (shmem) may be collapsed.
#[test]
fn collapse_refuses_vmas_that_may_not_have_huge_pages() {
    let mut mm = AddressSpace::new();
    let s = anon(&mut mm, 4 * PMD_SIZE, MapFlags::STACK);
    mm.write(s + 2 * PMD_SIZE, b"x").unwrap();
    let sa = s.next_multiple_of(PMD_SIZE);
    assert_eq!(
        mm.madvise(sa, PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    let small = anon(&mut mm, P, MapFlags::EMPTY);
    mm.write(small, b"x").unwrap();
    assert_eq!(mm.madvise(small, P, Advice::Collapse), Err(Errno::EINVAL));
    let none = mm
        .mmap(0, 2 * PMD_SIZE, Prot::NONE, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(
        mm.madvise(none.next_multiple_of(PMD_SIZE), PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    let sh = mm
        .mmap(0, 2 * PMD_SIZE, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    mm.write(sh, b"x").unwrap();
    let sha = sh.next_multiple_of(PMD_SIZE);
    assert_eq!(mm.madvise(sha, PMD_SIZE, Advice::Collapse), Ok(()));
}

/// Any present page lets a block collapse: pages shared copy-on-write with
/// a child (the parent gets its own copies; the child keeps its view), the
/// zero page of a read, a read-only VMA. A block whose pages were all
/// dropped (`MADV_DONTNEED`) is `EINVAL`.
#[test]
fn collapse_of_shared_zero_and_read_only_pages() {
    let mut mm = AddressSpace::new();
    let c = anon(&mut mm, 4 * PMD_SIZE, MapFlags::EMPTY);
    mm.write(c, b"a").unwrap();
    let mut child = mm.fork().unwrap();
    assert_eq!(mm.madvise(c, PMD_SIZE, Advice::Collapse), Ok(()));
    mm.write(c, b"A").unwrap();
    assert_eq!(child.read_byte(c), Ok(b'a'));
    assert_eq!(mm.read_byte(c + PMD_SIZE), Ok(0)); // the zero page
    assert_eq!(mm.madvise(c + PMD_SIZE, PMD_SIZE, Advice::Collapse), Ok(()));
    mm.write(c + 2 * PMD_SIZE + P, b"x").unwrap();
    mm.madvise(c + 2 * PMD_SIZE, PMD_SIZE, Advice::DontNeed)
        .unwrap();
    assert_eq!(
        mm.madvise(c + 2 * PMD_SIZE, PMD_SIZE, Advice::Collapse),
        Err(Errno::EINVAL)
    );
    mm.write(c + 2 * PMD_SIZE + P, b"x").unwrap();
    mm.mprotect(c + 2 * PMD_SIZE, PMD_SIZE, Prot::READ).unwrap();
    assert_eq!(
        mm.madvise(c + 2 * PMD_SIZE, PMD_SIZE, Advice::Collapse),
        Ok(())
    );
    assert_eq!(mm.read_byte(c + 2 * PMD_SIZE + P), Ok(b'x'));
    mm.validate().unwrap();
    child.validate().unwrap();
}

/// `madvise_guard_install`: no VMA split; the page's contents go and every
/// access faults; `DONTNEED`, `FREE` and `mprotect` keep the guard;
/// `MADV_GUARD_REMOVE` takes it away (the page reads zeros); populating
/// over a guard is `EFAULT`.
#[test]
fn guard_pages_fault_without_splitting() {
    let mut mm = AddressSpace::new();
    let g = anon(&mut mm, 8 * P, MapFlags::EMPTY);
    mm.write(g + P, b"b").unwrap();
    mm.madvise(g + P, P, Advice::GuardInstall).unwrap();
    assert_eq!(mm.map_count(), 1);
    let e = mm.read_byte(g + P).unwrap_err();
    assert_eq!(
        (e.kind, e.addr, e.errno()),
        (FaultKind::Guard, g + P, Errno::EFAULT)
    );
    assert_eq!(mm.read_byte(g + 2 * P), Ok(0));
    assert_eq!(mm.write(g, &[1; 8192]).unwrap_err().addr, g + P);
    mm.madvise(g, 8 * P, Advice::DontNeed).unwrap();
    mm.madvise(g, 8 * P, Advice::Free).unwrap();
    mm.mprotect(g, 8 * P, Prot::READ).unwrap();
    mm.mprotect(g, 8 * P, Prot::RW).unwrap();
    assert_eq!(mm.read_byte(g + P).unwrap_err().kind, FaultKind::Guard);
    assert_eq!(
        mm.madvise(g, 8 * P, Advice::PopulateRead),
        Err(Errno::EFAULT)
    );
    assert_eq!(
        mm.madvise(g, 8 * P, Advice::PopulateWrite),
        Err(Errno::EFAULT)
    );
    mm.madvise(g, 8 * P, Advice::GuardRemove).unwrap();
    mm.madvise(g, 8 * P, Advice::GuardRemove).unwrap();
    assert_eq!(mm.read_byte(g + P), Ok(0));
    assert_eq!(
        mm.madvise(g + 1, P, Advice::GuardInstall),
        Err(Errno::EINVAL)
    );
    assert_eq!(mm.madvise(g, 0, Advice::GuardInstall), Ok(()));
    mm.validate().unwrap();
}

/// `is_valid_guard_vma`: `VM_LOCKED` refuses a guard (`EINVAL`) but lets
/// one be removed; a hole in the range: every mapped part is guarded, then
/// `ENOMEM`; `PROT_NONE` memory may be guarded.
#[test]
fn guard_install_refuses_locked_vmas_and_walks_holes() {
    let mut mm = AddressSpace::new();
    let l = anon(&mut mm, 2 * P, MapFlags::LOCKED);
    assert_eq!(mm.madvise(l, P, Advice::GuardInstall), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(l, P, Advice::GuardRemove), Ok(()));
    let h = mm
        .mmap(0, 4 * P, Prot::NONE, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    mm.munmap(h + P, P).unwrap();
    assert_eq!(
        mm.madvise(h, 4 * P, Advice::GuardInstall),
        Err(Errno::ENOMEM)
    );
    mm.mprotect(h + 2 * P, 2 * P, Prot::READ).unwrap();
    assert_eq!(mm.read_byte(h + 2 * P).unwrap_err().kind, FaultKind::Guard);
    assert_eq!(mm.read_byte(h + 3 * P).unwrap_err().kind, FaultKind::Guard);
}

/// Guards are page-table markers: `munmap` and a `MAP_FIXED` mapping over
/// them remove them; `mremap` moves them (`DONTUNMAP` leaves the old range
/// without them); fork copies them unless the VMA is wiped on fork.
#[test]
fn guards_live_like_page_table_entries() {
    let mut mm = AddressSpace::new();
    let g = anon(&mut mm, 8 * P, MapFlags::EMPTY);
    mm.madvise(g + P, P, Advice::GuardInstall).unwrap();
    let to = g - 100 * P;
    let m = mm
        .mremap(g, 8 * P, 8 * P, RemapFlags::MAYMOVE | RemapFlags::FIXED, to)
        .unwrap();
    assert_eq!(m, to);
    assert_eq!(mm.read_byte(m + P).unwrap_err().kind, FaultKind::Guard);
    let d = m - 100 * P;
    mm.mremap(
        m,
        8 * P,
        8 * P,
        RemapFlags::MAYMOVE | RemapFlags::FIXED | RemapFlags::DONTUNMAP,
        d,
    )
    .unwrap();
    assert_eq!(mm.read_byte(d + P).unwrap_err().kind, FaultKind::Guard);
    assert_eq!(mm.read_byte(m + P), Ok(0));
    let mut child = mm.fork().unwrap();
    assert_eq!(child.read_byte(d + P).unwrap_err().kind, FaultKind::Guard);
    mm.madvise(d + 2 * P, P, Advice::GuardInstall).unwrap();
    mm.madvise(d + 2 * P, P, Advice::WipeOnFork).unwrap();
    let mut child2 = mm.fork().unwrap();
    assert_eq!(child2.read_byte(d + 2 * P), Ok(0));
    mm.munmap(d + P, P).unwrap();
    mm.mmap(
        d + P,
        P,
        Prot::RW,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    assert_eq!(mm.read_byte(d + P), Ok(0));
    mm.madvise(d + 3 * P, P, Advice::GuardInstall).unwrap();
    mm.mmap(
        d + 3 * P,
        P,
        Prot::RW,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    assert_eq!(mm.read_byte(d + 3 * P), Ok(0));
    assert_eq!(child.read_byte(d + P).unwrap_err().kind, FaultKind::Guard);
}

/// `VM_MAYBE_GUARD` (smaps `gu`) is set on the whole VMA by a guard install,
/// stays after `MADV_GUARD_REMOVE`, and is sticky: it does not stop a merge,
/// and the merged VMA has it (checked with `VmFlags` of smaps).
#[test]
fn maybe_guard_is_sticky_and_merges() {
    let mut mm = AddressSpace::new();
    let g = anon(&mut mm, 8 * P, MapFlags::EMPTY);
    mm.munmap(g, 2 * P).unwrap();
    mm.madvise(g + 3 * P, P, Advice::GuardInstall).unwrap();
    mm.madvise(g + 3 * P, P, Advice::GuardRemove).unwrap();
    let v = mm.vma_at(g + 2 * P).unwrap();
    assert_eq!((v.start(), v.end()), (g + 2 * P, g + 8 * P));
    assert!(v.flags().contains(VmFlags::MAYBE_GUARD));
    mm.mmap(
        g + P,
        P,
        Prot::RW,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    let v = mm.vma_at(g + P).unwrap();
    assert_eq!((v.start(), v.end()), (g + P, g + 8 * P));
    assert!(v.flags().contains(VmFlags::MAYBE_GUARD));
    assert_eq!(v.flags().smaps(), "rd wr mr mw me gu ac");
    mm.validate().unwrap();
}
