//! `mseal` and what a seal refuses, one kernel rule per test. Results,
//! splits and merges were checked against Linux 6.18 (x86-64) with a small
//! C program calling `syscall(462, ...)` and reading `/proc/self/smaps`
//! (`VmFlags: ... sl`).

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Advice, Errno, FileId, MapFlags, OpenFile, OpenMode, Prot, RemapFlags, VmFlags,
};

const BASE: u64 = 0x10_0000_0000;

fn sealed(mm: &AddressSpace, a: u64) -> bool {
    mm.vma_at(a)
        .expect("a VMA")
        .flags()
        .contains(VmFlags::SEALED)
}

/// Eight written private anonymous pages at `BASE`.
fn space() -> AddressSpace {
    let mut mm = AddressSpace::new();
    anon_at(&mut mm, BASE, 0, 8, Prot::RW);
    for i in 0..8 {
        wb(&mut mm, BASE + i * P, 1);
    }
    mm
}

/// `do_mseal`'s argument checks: flags, alignment, a length that rounds up
/// past the top; an empty range does nothing.
#[test]
fn the_arguments_are_checked_first() {
    let mut mm = space();
    assert_eq!(mm.mseal(BASE, P, 1), Err(Errno::EINVAL));
    assert_eq!(mm.mseal(BASE + 1, P, 0), Err(Errno::EINVAL));
    assert_eq!(mm.mseal(BASE, u64::MAX, 0), Err(Errno::EINVAL));
    assert_eq!(mm.mseal(!(P - 1), 2 * P, 0), Err(Errno::EINVAL));
    assert_eq!(mm.mseal(BASE, 0, 0), Ok(()));
    assert_eq!(draw(&mm, BASE, 8), "AAAAAAAA");
    assert!(!sealed(&mm, BASE));
}

/// `range_contains_unmapped`: a hole anywhere is `ENOMEM`, and nothing is
/// sealed.
#[test]
fn a_hole_seals_nothing() {
    let mut mm = space();
    mm.munmap(BASE + P, P).unwrap();
    assert_eq!(mm.mseal(BASE, 4 * P, 0), Err(Errno::ENOMEM));
    assert_eq!(mm.mseal(BASE + 6 * P, 4 * P, 0), Err(Errno::ENOMEM));
    assert!(!sealed(&mm, BASE));
    assert!(!sealed(&mm, BASE + 2 * P));
    assert!(!sealed(&mm, BASE + 6 * P));
    check(&mm);
}

/// The sealed part splits off (`sl`), a sealed neighbour merges, and a
/// second seal is no error.
#[test]
fn sealing_splits_and_merges() {
    let mut mm = space();
    mm.mseal(BASE + 2 * P, 2 * P, 0).unwrap();
    assert_eq!(draw(&mm, BASE, 8), "AABBCCCC");
    mm.mseal(BASE + 4 * P, P, 0).unwrap();
    assert_eq!(draw(&mm, BASE, 8), "AABBBCCC");
    assert!(sealed(&mm, BASE + 4 * P));
    assert!(!sealed(&mm, BASE + 5 * P));
    mm.mseal(BASE + 2 * P, 3 * P, 0).unwrap();
    assert_eq!(draw(&mm, BASE, 8), "AABBBCCC");
    assert_eq!(
        mm.vma_at(BASE + 2 * P).unwrap().flags().smaps(),
        "rd wr mr mw me ac sl"
    );
    check(&mm);
}

/// `munmap`, `MAP_FIXED` and `mremap` (shrink, grow, move) of a sealed VMA
/// fail with `EPERM` and change nothing, also where the range starts in an
/// unsealed VMA.
#[test]
fn a_sealed_vma_is_not_unmapped_replaced_or_remapped() {
    let mut mm = space();
    mm.mseal(BASE + 2 * P, 2 * P, 0).unwrap();
    let before = mm.maps();
    assert_eq!(mm.munmap(BASE, 8 * P), Err(Errno::EPERM));
    assert_eq!(mm.munmap(BASE + 3 * P, P), Err(Errno::EPERM));
    let fixed = MapFlags::PRIVATE_ANON | MapFlags::FIXED;
    assert_eq!(
        mm.mmap(BASE + P, 2 * P, Prot::READ, fixed, None, 0),
        Err(Errno::EPERM)
    );
    let r = |mm: &mut AddressSpace, old: u64, new: u64, flags, to| {
        mm.mremap(BASE + 2 * P, old, new, flags, to)
    };
    assert_eq!(
        r(&mut mm, 2 * P, P, RemapFlags::EMPTY, 0),
        Err(Errno::EPERM)
    );
    assert_eq!(
        r(&mut mm, P, 4 * P, RemapFlags::MAYMOVE, 0),
        Err(Errno::EPERM)
    );
    let to = BASE + 100 * P;
    assert_eq!(
        r(&mut mm, P, P, RemapFlags::MAYMOVE | RemapFlags::FIXED, to),
        Err(Errno::EPERM)
    );
    // Nor is it the target of a move.
    let b = mm
        .mmap(0, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(
        mm.mremap(
            b,
            P,
            P,
            RemapFlags::MAYMOVE | RemapFlags::FIXED,
            BASE + 2 * P
        ),
        Err(Errno::EPERM)
    );
    mm.munmap(b, P).unwrap();
    assert_eq!(mm.maps(), before);
    // The unsealed parts come and go as before.
    mm.munmap(BASE, 2 * P).unwrap();
    mm.munmap(BASE + 4 * P, 4 * P).unwrap();
    assert_eq!(draw(&mm, BASE, 8), "  AA    ");
    check(&mm);
}

/// `mprotect_fixup` refuses a sealed VMA, even for the protection it has,
/// after the access check (`EACCES` first); the VMAs before it keep the
/// change.
#[test]
fn mprotect_stops_at_a_sealed_vma() {
    let mut mm = space();
    mm.mseal(BASE + 2 * P, 2 * P, 0).unwrap();
    assert_eq!(mm.mprotect(BASE + 2 * P, P, Prot::RW), Err(Errno::EPERM));
    assert_eq!(mm.mprotect(BASE, 3 * P, Prot::READ), Err(Errno::EPERM));
    assert_eq!(mm.vma_at(BASE).unwrap().prot(), Prot::READ);
    assert_eq!(mm.vma_at(BASE + 2 * P).unwrap().prot(), Prot::RW);
    let ro = OpenFile::new(FileId(7)).mode(OpenMode::ReadOnly);
    let shared = MapFlags::SHARED | MapFlags::FIXED;
    let f = mm
        .mmap_file(BASE + 20 * P, P, Prot::READ, shared, ro, 0)
        .unwrap();
    mm.mseal(f, P, 0).unwrap();
    assert_eq!(mm.mprotect(f, P, Prot::RW), Err(Errno::EACCES));
    assert_eq!(mm.mprotect(f, P, Prot::READ), Err(Errno::EPERM));
    check(&mm);
}

/// `can_madvise_modify`: discarding advice is refused on sealed private
/// anonymous memory that is not writable, allowed where it is writable or
/// a file's; other advice changes flags as usual; `mlock` is allowed.
#[test]
fn madvise_may_not_discard_sealed_read_only_anonymous_memory() {
    let mut mm = space();
    mm.mseal(BASE + 2 * P, 2 * P, 0).unwrap();
    mm.madvise(BASE + 2 * P, P, Advice::DontNeed).unwrap();
    assert_eq!(rb(&mut mm, BASE + 2 * P), 0);
    mm.madvise(BASE + 2 * P, P, Advice::HugePage).unwrap();
    assert_eq!(draw(&mm, BASE, 8), "AABCDDDD");
    let ro = anon_at(&mut mm, BASE, 10, 4, Prot::READ);
    mm.mseal(ro, 4 * P, 0).unwrap();
    for advice in [
        Advice::DontNeed,
        Advice::Free,
        Advice::DontFork,
        Advice::WipeOnFork,
        Advice::GuardInstall,
    ] {
        assert_eq!(mm.madvise(ro, P, advice), Err(Errno::EPERM), "{advice:?}");
    }
    mm.madvise(ro, P, Advice::WillNeed).unwrap();
    mm.mlock(ro, P).unwrap();
    assert!(mm.vma_at(ro).unwrap().flags().contains(VmFlags::LOCKED));
    assert!(sealed(&mm, ro));
    let file = OpenFile::new(FileId(8)).mode(OpenMode::ReadOnly);
    let private = MapFlags::PRIVATE | MapFlags::FIXED;
    let f = mm
        .mmap_file(BASE + 20 * P, 2 * P, Prot::READ, private, file, 0)
        .unwrap();
    mm.mseal(f, P, 0).unwrap();
    mm.madvise(f, P, Advice::DontNeed).unwrap();
    check(&mm);
}

/// A `brk` shrink over a sealed page of the heap fails (the break stays),
/// one above it does not.
#[test]
fn brk_does_not_shrink_over_a_seal() {
    let mut mm = AddressSpace::new();
    let start = mm.brk(0);
    let grown = mm.brk(start + 3 * P);
    assert_eq!(grown, start + 3 * P);
    mm.mseal(start, P, 0).unwrap();
    assert_eq!(mm.brk(start), grown);
    // Above the sealed page the heap shrinks as usual.
    assert_eq!(mm.brk(start + P), start + P);
    assert_eq!(mm.brk(start), start + P);
    check(&mm);
}

/// A child of `fork` keeps the seals.
#[test]
fn seals_survive_fork() {
    let mut mm = space();
    mm.mseal(BASE + 2 * P, 2 * P, 0).unwrap();
    let mut child = mm.fork().unwrap();
    assert!(sealed(&child, BASE + 2 * P));
    assert_eq!(child.munmap(BASE, 8 * P), Err(Errno::EPERM));
    check(&child);
}
