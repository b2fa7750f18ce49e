//! `remap_file_pages`, emulated as Linux does since 4.0: a new shared
//! mapping of the same object at another offset. Offsets, splits and
//! merges were checked against Linux 6.18 (x86-64) with a small C program
//! reading `/proc/self/maps`.

mod common;
use common::*;
use maple_mm::{AddressSpace, Errno, FileId, MapFlags, OpenFile, OpenMode, Prot, VmFlags};

/// Four pages of shared anonymous memory, page `i` holding `b'A' + i`.
fn shared() -> (AddressSpace, u64) {
    let mut mm = AddressSpace::new();
    let a = mm
        .mmap(0, 4 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    for i in 0..4 {
        wb(&mut mm, a + i * P, b'A' + i as u8);
    }
    (mm, a)
}

fn offset(mm: &AddressSpace, a: u64) -> u64 {
    let v = mm.vma_at(a).expect("a VMA");
    v.pgoff() + (a - v.start()) / P
}

/// The argument checks: `prot` must be 0, the range not empty, the VMA at
/// `start` shared.
#[test]
fn the_arguments_and_the_vma_are_checked() {
    let (mut mm, a) = shared();
    assert_eq!(mm.remap_file_pages(a, P, 1, 2, 0), Err(Errno::EINVAL));
    assert_eq!(mm.remap_file_pages(a, 0, 0, 2, 0), Err(Errno::EINVAL));
    assert_eq!(mm.remap_file_pages(a, P - 1, 0, 2, 0), Err(Errno::EINVAL));
    assert_eq!(
        mm.remap_file_pages(a, P, 0, u64::MAX, 0),
        Err(Errno::EINVAL)
    );
    assert_eq!(mm.remap_file_pages(a - P, P, 0, 0, 0), Err(Errno::EINVAL));
    let private = mm
        .mmap(0, 2 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(mm.remap_file_pages(private, P, 0, 0, 0), Err(Errno::EINVAL));
    assert_eq!(mm.map_count(), 2);
    check(&mm);
}

/// An offset whose range would end past `MAX_LFS_FILESIZE` (`i64::MAX`) is
/// `EOVERFLOW` (`file_mmap_ok`), the last page below it is mapped and shown.
#[test]
fn the_offset_must_stay_below_the_largest_file_size() {
    let (mut mm, a) = shared();
    let last = (i64::MAX as u64 >> 12) - 1;
    for pgoff in [last + 1, last + 2, 1 << 52, u64::MAX - 1] {
        assert_eq!(
            mm.remap_file_pages(a, P, 0, pgoff, 0),
            Err(Errno::EOVERFLOW),
            "{pgoff:#x}"
        );
    }
    mm.remap_file_pages(a, P, 0, last, 0).unwrap();
    assert_eq!(offset(&mm, a), last);
    assert!(mm.maps().contains(" 7fffffffffffe000 "), "{}", mm.maps());
    check(&mm);
}

/// Page 2 of the object appears at the start (a VMA of its own, offset 2);
/// mapping page 0 back merges the space into one VMA again.
#[test]
fn a_page_moves_and_moves_back() {
    let (mut mm, a) = shared();
    mm.remap_file_pages(a, P, 0, 2, 0).unwrap();
    assert_eq!(rb(&mut mm, a), b'C');
    assert_eq!(draw(&mm, a, 4), "ABBB");
    assert_eq!(offset(&mm, a), 2);
    assert_eq!(offset(&mm, a + P), 1);
    // Writes through either address reach the one page.
    wb(&mut mm, a, b'c');
    assert_eq!(rb(&mut mm, a + 2 * P), b'c');
    mm.remap_file_pages(a, P, 0, 0, 0).unwrap();
    assert_eq!(rb(&mut mm, a), b'A');
    assert_eq!(draw(&mm, a, 4), "AAAA");
    check(&mm);
}

/// `start` and `size` are rounded down to pages.
#[test]
fn an_unaligned_range_is_rounded_down() {
    let (mut mm, a) = shared();
    mm.remap_file_pages(a + 5, P + 7, 0, 3, 0).unwrap();
    assert_eq!(draw(&mm, a, 4), "ABBB");
    assert_eq!(rb(&mut mm, a), b'D');
    check(&mm);
}

/// A range may span VMAs of the same object with the same flags; one whose
/// flags differ (here made read-only) is `EINVAL`.
#[test]
fn a_range_spans_only_alike_vmas() {
    let (mut mm, a) = shared();
    mm.remap_file_pages(a + P, 3 * P, 0, 0, 0).unwrap();
    assert_eq!(draw(&mm, a, 4), "ABBB");
    assert_eq!((rb(&mut mm, a + P), rb(&mut mm, a + 3 * P)), (b'A', b'C'));
    mm.mprotect(a + 2 * P, P, Prot::READ).unwrap();
    let before = mm.maps();
    assert_eq!(mm.remap_file_pages(a, 4 * P, 0, 0, 0), Err(Errno::EINVAL));
    assert_eq!(mm.maps(), before);
    check(&mm);
}

/// The new mapping has `mmap`'s flags: advice the old VMA had is gone, a
/// lock stays; a sealed VMA is not replaced.
#[test]
fn the_new_vma_is_a_new_mapping() {
    let (mut mm, a) = shared();
    mm.madvise(a, 4 * P, maple_mm::Advice::DontDump).unwrap();
    mm.remap_file_pages(a + 2 * P, P, 0, 0, 0).unwrap();
    assert!(!mm
        .vma_at(a + 2 * P)
        .unwrap()
        .flags()
        .contains(VmFlags::DONTDUMP));
    assert!(mm
        .vma_at(a + 3 * P)
        .unwrap()
        .flags()
        .contains(VmFlags::DONTDUMP));
    mm.mlock(a, P).unwrap();
    mm.remap_file_pages(a, P, 0, 3, 0).unwrap();
    assert!(mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    mm.mseal(a + P, P, 0).unwrap();
    assert_eq!(mm.remap_file_pages(a + P, P, 0, 0, 0), Err(Errno::EPERM));
    check(&mm);
}

/// A shared file mapping: the file's pages at the new offset.
#[test]
fn a_file_page_moves() {
    let mut mm = AddressSpace::new();
    let file = OpenFile::new(FileId(4)).mode(OpenMode::ReadWrite);
    let shared = MapFlags::SHARED;
    let a = mm.mmap_file(0, 3 * P, Prot::RW, shared, file, 0).unwrap();
    wb(&mut mm, a + 2 * P, 7);
    mm.remap_file_pages(a, P, 0, 2, 0).unwrap();
    assert_eq!(rb(&mut mm, a), 7);
    assert_eq!(mm.vma_at(a).unwrap().file(), Some(FileId(4)));
    assert_eq!(offset(&mm, a), 2);
    check(&mm);
}
