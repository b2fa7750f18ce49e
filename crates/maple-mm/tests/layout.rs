//! Merge and split outcomes, drawn like the kernel's VMA tests: one letter
//! per VMA, a space per unmapped page.

mod common;
use common::*;
use maple_mm::{AddressSpace, Advice, FileId, MapFlags, Prot, RemapFlags};

const B: u64 = 0x1000_0000;

fn mm() -> AddressSpace {
    AddressSpace::new()
}

#[test]
fn adjacent_anonymous_mappings_merge() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 2, 2, Prot::RW);
    anon_at(&mut m, B, 6, 2, Prot::RW);
    assert_eq!(draw(&m, B, 9), "AAAA  BB ");
    anon_at(&mut m, B, 4, 2, Prot::RW); // fills the hole: all three merge
    assert_eq!(draw(&m, B, 9), "AAAAAAAA ");
    assert_eq!(m.map_count(), 1);
    check(&m);
}

#[test]
fn different_protections_do_not_merge() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 2, 1, Prot::READ);
    anon_at(&mut m, B, 3, 2, Prot::RW);
    assert_eq!(draw(&m, B, 6), "AABCC ");
    check(&m);
}

#[test]
fn mprotect_splits_and_merges_back() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 8, Prot::RW);
    m.mprotect(B + 2 * P, 3 * P, Prot::READ).unwrap();
    assert_eq!(draw(&m, B, 9), "AABBBCCC ");
    m.mprotect(B + 3 * P, P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 9), "AABCDEEE ");
    m.mprotect(B + 2 * P, 3 * P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 9), "AAAAAAAA ");
    check(&m);
}

#[test]
fn mprotect_to_the_same_protection_does_not_split() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 8, Prot::RW);
    m.mprotect(B + 2 * P, 3 * P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 8), "AAAAAAAA");
    assert_eq!(m.map_count(), 1);
}

#[test]
fn mprotect_merges_with_the_next_one() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 3, Prot::READ);
    anon_at(&mut m, B, 3, 3, Prot::RW);
    assert_eq!(draw(&m, B, 6), "AAABBB");
    // the tail of A becomes RW and joins B
    m.mprotect(B + P, 2 * P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 6), "ABBBBB");
    check(&m);
}

#[test]
fn munmap_punches_holes() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 10, Prot::RW);
    m.munmap(B + 3 * P, 2 * P).unwrap();
    assert_eq!(draw(&m, B, 10), "AAA  BBBBB");
    m.munmap(B, P).unwrap();
    assert_eq!(draw(&m, B, 10), " AA  BBBBB");
    m.munmap(B + 8 * P, 5 * P).unwrap();
    assert_eq!(draw(&m, B, 10), " AA  BBB  ");
    check(&m);
}

#[test]
fn fixed_mapping_over_the_middle() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 9, Prot::RW);
    anon_at(&mut m, B, 3, 3, Prot::READ);
    assert_eq!(draw(&m, B, 9), "AAABBBCCC");
    anon_at(&mut m, B, 3, 3, Prot::RW); // same as its neighbours again
    assert_eq!(draw(&m, B, 9), "AAAAAAAAA");
    check(&m);
}

#[test]
fn faulted_neighbours_with_different_anon_vmas_stay_apart() {
    // Linux: two VMAs that each got their own anon_vma never merge, even
    // once their flags agree again.
    let mut m = mm();
    anon_at(&mut m, B, 0, 4, Prot::RW);
    m.madvise(B + 2 * P, 2 * P, Advice::DontFork).unwrap();
    wb(&mut m, B, 1); // A gets an anon_vma
    wb(&mut m, B + 2 * P, 1); // B too, its own: its flags differ beyond access bits
    assert_eq!(draw(&m, B, 4), "AABB");
    m.madvise(B + 2 * P, 2 * P, Advice::DoFork).unwrap();
    assert_eq!(draw(&m, B, 4), "AABB");
    // while an unfaulted one merges
    anon_at(&mut m, B, 4, 2, Prot::RW);
    assert_eq!(draw(&m, B, 6), "AABBBB");
    check(&m);
}

#[test]
fn a_neighbour_that_differs_only_in_protection_shares_the_anon_vma() {
    // find_mergeable_anon_vma: B reuses A's anon_vma, so they merge later.
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 2, 2, Prot::READ | Prot::EXEC);
    wb(&mut m, B, 1);
    m.mprotect(B + 2 * P, 2 * P, Prot::RW | Prot::EXEC).unwrap();
    wb(&mut m, B + 2 * P, 1);
    assert_eq!(draw(&m, B, 4), "AABB");
    m.mprotect(B + 2 * P, 2 * P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 4), "AAAA");
    check(&m);
}

#[test]
fn split_pieces_share_the_anon_vma_and_merge_back() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 6, Prot::RW);
    wb(&mut m, B, 1);
    m.mprotect(B + 2 * P, 2 * P, Prot::READ).unwrap();
    assert_eq!(draw(&m, B, 6), "AABBCC");
    m.mprotect(B + 2 * P, 2 * P, Prot::RW).unwrap();
    assert_eq!(draw(&m, B, 6), "AAAAAA");
    assert_eq!(rb(&mut m, B), 1);
    check(&m);
}

#[test]
fn file_mappings_merge_only_with_contiguous_offsets() {
    let mut m = mm();
    let f = Some(FileId(1));
    let fl = MapFlags::PRIVATE | MapFlags::FIXED;
    m.mmap(B, 2 * P, Prot::READ, fl, f, 0).unwrap();
    m.mmap(B + 2 * P, 2 * P, Prot::READ, fl, f, 2 * P).unwrap(); // contiguous
    m.mmap(B + 4 * P, 2 * P, Prot::READ, fl, f, 8 * P).unwrap(); // not
    m.mmap(B + 6 * P, 2 * P, Prot::READ, fl, Some(FileId(2)), 10 * P)
        .unwrap(); // other file
    assert_eq!(draw(&m, B, 8), "AAAABBCC");
    check(&m);
}

#[test]
fn shared_anonymous_mappings_never_merge() {
    let mut m = mm();
    let fl = MapFlags::SHARED_ANON | MapFlags::FIXED;
    m.mmap(B, 2 * P, Prot::RW, fl, None, 0).unwrap();
    m.mmap(B + 2 * P, 2 * P, Prot::RW, fl, None, 0).unwrap();
    assert_eq!(draw(&m, B, 4), "AABB");
    check(&m);
}

#[test]
fn madvise_dontfork_splits_and_dofork_merges() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 6, Prot::RW);
    m.madvise(B + P, 2 * P, Advice::DontFork).unwrap();
    assert_eq!(draw(&m, B, 6), "ABBCCC");
    m.madvise(B, 6 * P, Advice::DoFork).unwrap();
    assert_eq!(draw(&m, B, 6), "AAAAAA");
    check(&m);
}

#[test]
fn mremap_grows_in_place_and_merges_with_next() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 4, 2, Prot::RW);
    assert_eq!(draw(&m, B, 6), "AA  BB");
    let r = m.mremap(B, 2 * P, 4 * P, RemapFlags::EMPTY, 0).unwrap();
    assert_eq!(r, B);
    assert_eq!(draw(&m, B, 6), "AAAAAA");
    check(&m);
}

#[test]
fn mremap_shrinks() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 6, Prot::RW);
    assert_eq!(m.mremap(B, 6 * P, 2 * P, RemapFlags::EMPTY, 0).unwrap(), B);
    assert_eq!(draw(&m, B, 6), "AA    ");
    check(&m);
}

#[test]
fn mremap_moves_when_it_cannot_grow() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 2, 1, Prot::READ);
    wb(&mut m, B + P, 7);
    let r = m.mremap(B, 2 * P, 3 * P, RemapFlags::MAYMOVE, 0).unwrap();
    assert_ne!(r, B);
    assert_eq!(draw(&m, B, 3), "  A");
    assert_eq!(draw(&m, r, 4), "AAA ");
    assert_eq!(rb(&mut m, r + P), 7);
    assert_eq!(rb(&mut m, r + 2 * P), 0);
    check(&m);
}

#[test]
fn mremap_fixed_replaces_the_target() {
    let mut m = mm();
    anon_at(&mut m, B, 0, 2, Prot::RW);
    anon_at(&mut m, B, 4, 4, Prot::READ);
    wb(&mut m, B, 9);
    let r = m
        .mremap(
            B,
            2 * P,
            2 * P,
            RemapFlags::MAYMOVE | RemapFlags::FIXED,
            B + 5 * P,
        )
        .unwrap();
    assert_eq!(r, B + 5 * P);
    assert_eq!(draw(&m, B, 8), "    ABBC");
    assert_eq!(rb(&mut m, B + 5 * P), 9);
    check(&m);
}

#[test]
fn brk_grows_one_heap_vma() {
    let mut m = mm();
    let b0 = m.brk(0);
    assert_eq!(b0, m.config().start_brk);
    assert_eq!(m.brk(b0 + 100), b0 + 100);
    assert_eq!(m.brk(b0 + 5 * P), b0 + 5 * P);
    assert_eq!(m.brk(b0 + 9 * P + 1), b0 + 9 * P + 1);
    assert_eq!(draw(&m, b0, 11), "AAAAAAAAAA ");
    assert_eq!(m.brk(b0 + 3 * P), b0 + 3 * P);
    assert_eq!(draw(&m, b0, 11), "AAA        ");
    assert_eq!(m.brk(b0 - P), b0 + 3 * P); // below start_brk: refused
    check(&m);
}

#[test]
fn brk_stops_below_a_mapping() {
    let mut m = mm();
    let b0 = m.brk(0);
    anon_at(&mut m, b0, 4, 1, Prot::RW);
    assert_eq!(m.brk(b0 + 2 * P), b0 + 2 * P);
    assert_eq!(m.brk(b0 + 3 * P), b0 + 3 * P); // newbrk + PAGE <= next start
    assert_eq!(m.brk(b0 + 3 * P + 1), b0 + 3 * P); // would leave no page: refused
    assert_eq!(draw(&m, b0, 5), "AAA B");
    check(&m);
}
