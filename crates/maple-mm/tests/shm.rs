//! System V shared memory (`shmat`, `shmdt`), one kernel rule per test.
//! Addresses, flags and errors were checked against Linux 6.18 (x86-64,
//! randomization off) with a small C program reading `/proc/self/smaps`.

mod common;
use common::*;
use maple_mm::procmaps::{maps_lines, parse_maps, FileTable, ProcImage};
use maple_mm::{
    AddressSpace, Errno, MapFlags, Prot, SysvShm, VmFlags, MCL_FUTURE, SHM_EXEC, SHM_RDONLY,
    SHM_REMAP, SHM_RND,
};

const SEG: SysvShm = SysvShm {
    shmid: 2,
    key: 0x1234,
    size: 10 * P + 100,
};

/// `do_shmat` without an address: `do_mmap(MAP_SHARED)` of the segment
/// rounded up to pages, placed top-down like a shared file mapping, with
/// the flags of a shared writable mapping (`rd wr sh mr mw me ms`), printed
/// as `/SYSV<key> (deleted)` with the shmid as inode.
#[test]
fn shmat_places_the_segment_top_down() {
    let mut mm = AddressSpace::new();
    let base = mm.config().mmap_base;
    let a = mm.shmat(SEG, 0, 0).unwrap();
    assert_eq!(a, base - 11 * P);
    let v = mm.vma_at(a).unwrap();
    assert_eq!((v.len(), v.pgoff()), (11 * P, 0));
    assert_eq!(v.flags().smaps(), "rd wr sh mr mw me ms");
    assert_eq!(v.sysv_shmid(), Some(SEG.shmid));
    assert_eq!(mm.sysv_segment(SEG.shmid), Some(SEG));
    let line = mm.maps();
    assert!(
        line.starts_with("7ffff7ff4000-7ffff7fff000 rw-s 00000000 00:00 2 "),
        "{line}"
    );
    assert!(
        line.trim_end().ends_with("/SYSV00001234 (deleted)"),
        "{line}"
    );
    check(&mm);
}

/// `SHM_RDONLY` maps the segment from a file opened read-only: `VM_SHARED`
/// and `VM_MAYWRITE` are dropped (`rd mr me ms`), so it can never be made
/// writable; `SHM_EXEC` adds exec.
#[test]
fn shmat_rdonly_has_neither_shared_nor_maywrite() {
    let mut mm = AddressSpace::new();
    let r = mm.shmat(SEG, 0, SHM_RDONLY).unwrap();
    assert_eq!(mm.vma_at(r).unwrap().flags().smaps(), "rd mr me ms");
    assert_eq!(mm.mprotect(r, P, Prot::RW), Err(Errno::EACCES));
    assert!(mm.write(r, b"x").is_err());
    let x = mm.shmat(SEG, 0, SHM_EXEC).unwrap();
    assert_eq!(mm.vma_at(x).unwrap().prot(), Prot::RW | Prot::EXEC);
    check(&mm);
}

/// Attachments of one segment share its pages; each attachment is its own
/// file, so two adjacent attachments do not merge.
#[test]
fn attachments_share_pages_and_never_merge() {
    let mut mm = AddressSpace::new();
    let a = mm.shmat(SEG, 0, 0).unwrap();
    let b = mm.shmat(SEG, 0, 0).unwrap();
    assert_eq!(b + 11 * P, a, "adjacent");
    assert_eq!(mm.map_count(), 2);
    mm.write(a + 3 * P, b"seg").unwrap();
    let mut buf = [0u8; 3];
    mm.read(b + 3 * P, &mut buf).unwrap();
    assert_eq!(&buf, b"seg");
    // forked children share them too
    let mut child = mm.fork().unwrap();
    child.write(b, b"kid").unwrap();
    mm.read(a, &mut buf).unwrap();
    assert_eq!(&buf, b"kid");
    check(&mm);
    check(&child);
}

/// `do_shmat` with an address: unaligned → `EINVAL` unless `SHM_RND`
/// rounds it down; a mapped range → `EINVAL` unless `SHM_REMAP`, which
/// replaces it (`MAP_FIXED`); `SHM_REMAP` without an address → `EINVAL`;
/// `SHM_RND | SHM_REMAP` of an address that rounds to 0 → `EINVAL`; a
/// negative shmid → `EINVAL`.
#[test]
fn shmat_at_an_address() {
    let mut mm = AddressSpace::new();
    let t = 0x7fff_f7d9_f000;
    assert_eq!(mm.shmat(SEG, t + 5, 0), Err(Errno::EINVAL));
    assert_eq!(mm.shmat(SEG, t, 0), Ok(t));
    assert_eq!(mm.shmat(SEG, t + P, 0), Err(Errno::EINVAL), "overlap");
    assert_eq!(mm.shmat(SEG, t + 5, SHM_RND | SHM_REMAP), Ok(t));
    assert_eq!(mm.map_count(), 1, "replaced");
    assert_eq!(mm.shmat(SEG, 0, SHM_REMAP), Err(Errno::EINVAL));
    assert_eq!(mm.shmat(SEG, 5, SHM_RND | SHM_REMAP), Err(Errno::EINVAL));
    let bad = SysvShm { shmid: -1, ..SEG };
    assert_eq!(mm.shmat(bad, 0, 0), Err(Errno::EINVAL));
    // an attachment over an anonymous mapping with SHM_REMAP
    let a = mm
        .mmap(0, 16 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(mm.shmat(SEG, a + 2 * P, 0), Err(Errno::EINVAL));
    assert_eq!(mm.shmat(SEG, a + 2 * P, SHM_REMAP), Ok(a + 2 * P));
    assert_eq!(draw(&mm, a, 16), "AABBBBBBBBBBBCCC");
    check(&mm);
}

/// `ksys_shmdt`: unaligned → `EINVAL`; every piece of the attachment at
/// `addr` (split by `mprotect`, holed by `munmap`) is unmapped; a second
/// `shmdt` finds nothing → `EINVAL`; another attachment of the same
/// segment above stays.
#[test]
fn shmdt_removes_every_piece_of_the_attachment() {
    let mut mm = AddressSpace::new();
    let high = mm.shmat(SEG, 0, 0).unwrap();
    let a = mm.shmat(SEG, 0, 0).unwrap();
    mm.mprotect(a + 2 * P, P, Prot::READ).unwrap();
    mm.munmap(a + 5 * P, P).unwrap();
    assert_eq!(mm.map_count(), 5);
    assert_eq!(mm.shmdt(a + 1), Err(Errno::EINVAL));
    mm.shmdt(a).unwrap();
    assert_eq!(mm.map_count(), 1);
    assert!(mm.vma_at(high).is_some());
    assert_eq!(mm.shmdt(a), Err(Errno::EINVAL));
    // shmdt of an address below an attachment finds it only where its
    // offset matches the distance: not here
    assert_eq!(mm.shmdt(high - P), Err(Errno::EINVAL));
    // a shared anonymous mapping is no System V attachment
    let s = mm
        .mmap(
            0,
            P,
            Prot::RW,
            MapFlags::SHARED | MapFlags::ANONYMOUS,
            None,
            0,
        )
        .unwrap();
    assert_eq!(mm.shmdt(s), Err(Errno::EINVAL));
    mm.shmdt(high).unwrap();
    check(&mm);
}

/// `ksys_shmdt` looks only within the segment's size from `addr` for the
/// further pieces: a piece of the same attachment moved beyond it by
/// `mremap` stays mapped.
#[test]
fn shmdt_stops_at_the_segment_size() {
    let mut mm = AddressSpace::new();
    let a = mm.shmat(SEG, 0, 0).unwrap();
    mm.mprotect(a + 10 * P, P, Prot::READ).unwrap();
    let far = a - 64 * P;
    let moved = mm
        .mremap(
            a + 10 * P,
            P,
            P,
            maple_mm::RemapFlags::MAYMOVE | maple_mm::RemapFlags::FIXED,
            far,
        )
        .unwrap();
    assert_eq!(moved, far);
    mm.shmdt(a).unwrap();
    assert!(mm.vma_at(a).is_none());
    assert!(mm.vma_at(far).is_some(), "beyond the size: kept");
    check(&mm);
}

/// `mm->def_flags` applies to attachments: after `mlockall(MCL_FUTURE)`
/// they are locked (and populated).
#[test]
fn shmat_after_mlockall_future_is_locked() {
    let mut mm = AddressSpace::new();
    mm.mlockall(MCL_FUTURE).unwrap();
    let a = mm.shmat(SEG, 0, 0).unwrap();
    assert!(mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    assert_eq!(mm.stats().rss_pages, 11);
    check(&mm);
}

/// A loaded `/proc/PID/maps` keeps System V attachments: printed back as
/// they were, and `shmdt` detaches them.
#[test]
fn loaded_attachments_print_and_detach() {
    let text = "7ffff7d88000-7ffff7d92000 rw-s 00000000 00:01 1                          /SYSV00000000 (deleted)\n\
                7ffff7dca000-7ffff7dd2000 rw-s 00000000 00:01 4                          /dev/zero (deleted)\n";
    let lines = parse_maps(text).unwrap();
    let mut files = FileTable::new();
    let mut img = ProcImage::load(&lines, None, &mut files, Default::default()).unwrap();
    let back = maps_lines(&img.space, &files, None, &[]);
    assert_eq!(back, lines);
    let shmid = img.space.vma_at(0x7fff_f7d8_8000).unwrap().sysv_shmid();
    assert_eq!(shmid, Some(1));
    let seg = img.space.sysv_segment(1).unwrap();
    assert_eq!((seg.shmid, seg.key, seg.size), (1, 0, 10 * P));
    assert_eq!(img.space.shmdt(0x7fff_f7dc_a000), Err(Errno::EINVAL));
    img.space.shmdt(0x7fff_f7d8_8000).unwrap();
    assert_eq!(img.space.map_count(), 1);
}
