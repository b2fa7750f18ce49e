//! Anonymous VMA names (`prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)`,
//! `prctl_set_vma` and `madvise_set_anon_name`), one kernel rule per test.

mod common;
use common::*;
use maple_mm::procmaps::{parse_maps, FileTable, LoadOptions, ProcImage};
use maple_mm::{
    AddressSpace, Config, Errno, FileId, MapFlags, OpenFile, Prot, RemapFlags,
    ANON_VMA_NAME_MAX_LEN,
};

fn named_space() -> AddressSpace {
    AddressSpace::with_config(Config {
        anon_vma_name: true,
        ..Config::default()
    })
}

fn anon(mm: &mut AddressSpace, pages: u64) -> u64 {
    mm.mmap(0, pages * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap()
}

fn name_at(mm: &AddressSpace, a: u64) -> Option<String> {
    mm.vma_at(a).expect("a VMA").anon_name().map(str::to_string)
}

/// Without `CONFIG_ANON_VMA_NAME` (the default config) the call is
/// `EINVAL` whatever its arguments, and nothing changes.
#[test]
fn unsupported_kernel_refuses_and_changes_nothing() {
    let mut mm = AddressSpace::new();
    assert!(!mm.config().anon_vma_name);
    let a = anon(&mut mm, 4);
    let before = mm.maps();
    assert_eq!(mm.set_anon_name(a + P, P, Some("x")), Err(Errno::EINVAL));
    assert_eq!(mm.set_anon_name(a, 4 * P, None), Err(Errno::EINVAL));
    assert_eq!(mm.set_anon_name(a, 0, Some("x")), Err(Errno::EINVAL));
    assert_eq!(mm.maps(), before);
    assert_eq!(mm.map_count(), 1);
    assert_eq!(name_at(&mm, a), None);
}

/// Naming the middle of a VMA splits it in three; the name is kept by the
/// parts, clearing it (`NULL`) merges them back.
#[test]
fn naming_splits_and_clearing_merges() {
    let mut mm = named_space();
    let a = anon(&mut mm, 8);
    mm.set_anon_name(a + 2 * P, 3 * P, Some("arena")).unwrap();
    assert_eq!(draw(&mm, a, 8), "AABBBCCC");
    assert_eq!(name_at(&mm, a + 2 * P).as_deref(), Some("arena"));
    assert_eq!(name_at(&mm, a), None);
    assert_eq!(name_at(&mm, a + 5 * P), None);
    // A split of a named VMA keeps the name on both sides.
    mm.mprotect(a + 3 * P, P, Prot::READ).unwrap();
    assert_eq!(draw(&mm, a, 8), "AABCDEEE");
    for p in 2..5 {
        assert_eq!(name_at(&mm, a + p * P).as_deref(), Some("arena"));
    }
    mm.mprotect(a + 3 * P, P, Prot::RW).unwrap();
    assert_eq!(draw(&mm, a, 8), "AABBBCCC", "equal names merge again");
    mm.set_anon_name(a, 8 * P, None).unwrap();
    assert_eq!(draw(&mm, a, 8), "AAAAAAAA");
}

/// Neighbours with the same name merge; with different names they do not
/// (`is_mergeable_vma` compares `anon_vma_name`).
#[test]
fn only_equal_names_merge() {
    let mut mm = named_space();
    let a = anon(&mut mm, 6);
    mm.set_anon_name(a, 2 * P, Some("one")).unwrap();
    mm.set_anon_name(a + 2 * P, 2 * P, Some("two")).unwrap();
    assert_eq!(draw(&mm, a, 6), "AABBCC");
    mm.set_anon_name(a + 2 * P, 2 * P, Some("one")).unwrap();
    assert_eq!(draw(&mm, a, 6), "AAAABB");
    // Re-naming a VMA with its own name changes nothing.
    mm.set_anon_name(a, 2 * P, Some("one")).unwrap();
    assert_eq!(draw(&mm, a, 6), "AAAABB");
}

/// Merges of other calls respect names: a new `mmap` beside a named VMA,
/// an `mprotect` that would join two VMAs of different names, and the
/// hole an `munmap` leaves filled by an unnamed mapping.
#[test]
fn names_block_mmap_mprotect_and_munmap_merges() {
    let mut mm = named_space();
    let a = anon(&mut mm, 8);
    mm.set_anon_name(a + 4 * P, 4 * P, Some("top")).unwrap();
    // mprotect: A (unnamed) and B (named) become the same flags, still two.
    mm.mprotect(a, 8 * P, Prot::READ).unwrap();
    assert_eq!(draw(&mm, a, 8), "AAAABBBB");
    mm.mprotect(a, 8 * P, Prot::RW).unwrap();
    // munmap then mmap MAP_FIXED into the hole: the new VMA has no name, so
    // it merges with the unnamed VMA below and not with the named one.
    mm.munmap(a + 3 * P, 2 * P).unwrap();
    assert_eq!(draw(&mm, a, 8), "AAA  BBB");
    mm.mmap(
        a + 3 * P,
        2 * P,
        Prot::RW,
        MapFlags::PRIVATE_ANON | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    assert_eq!(draw(&mm, a, 8), "AAAAABBB");
    assert_eq!(name_at(&mm, a + 4 * P), None);
    assert_eq!(name_at(&mm, a + 5 * P).as_deref(), Some("top"));
    // A fresh mmap right above the named VMA does not merge with it.
    let above = mm
        .mmap(
            a + 8 * P,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    assert_eq!(mm.vma_at(above).unwrap().start(), a + 8 * P);
}

/// `addr` must be page aligned; `len` is rounded up to pages; a wrapping
/// range is `EINVAL`; an empty range succeeds doing nothing.
#[test]
fn range_prologue() {
    let mut mm = named_space();
    let a = anon(&mut mm, 4);
    assert_eq!(mm.set_anon_name(a + 1, P, Some("x")), Err(Errno::EINVAL));
    assert_eq!(mm.set_anon_name(a, u64::MAX, Some("x")), Err(Errno::EINVAL));
    assert_eq!(
        mm.set_anon_name(!(P - 1), 2 * P, Some("x")),
        Err(Errno::EINVAL)
    );
    mm.set_anon_name(a, 0, Some("x")).unwrap();
    mm.set_anon_name(0x1000, 0, Some("x")).unwrap(); // nothing mapped: still fine
    assert_eq!(mm.map_count(), 1);
    mm.set_anon_name(a, 1, Some("x")).unwrap(); // one byte: one page
    assert_eq!(draw(&mm, a, 4), "ABBB");
}

/// A name of up to 79 bytes (80 with the NUL) is taken; a longer one is
/// `EINVAL`, before the range is even looked at.
#[test]
fn name_length_limit() {
    let mut mm = named_space();
    let a = anon(&mut mm, 1);
    let longest = "n".repeat(ANON_VMA_NAME_MAX_LEN - 1);
    mm.set_anon_name(a, P, Some(&longest)).unwrap();
    assert_eq!(name_at(&mm, a), Some(longest.clone()));
    let too_long = "n".repeat(ANON_VMA_NAME_MAX_LEN);
    assert_eq!(mm.set_anon_name(a, P, Some(&too_long)), Err(Errno::EINVAL));
    assert_eq!(
        mm.set_anon_name(a + 1, P, Some(&too_long)),
        Err(Errno::EINVAL)
    );
    assert_eq!(name_at(&mm, a), Some(longest));
}

/// Only printable characters other than `[ ] \ $ `` ` may be in a name
/// (`is_valid_name_char`); spaces and other punctuation are fine.
#[test]
fn name_characters() {
    let mut mm = named_space();
    let a = anon(&mut mm, 1);
    for bad in ["a[b", "a]", "\\", "$x", "`x`", "tab\t", "nl\n", "del\x7f"] {
        assert_eq!(
            mm.set_anon_name(a, P, Some(bad)),
            Err(Errno::EINVAL),
            "{bad:?}"
        );
    }
    assert_eq!(name_at(&mm, a), None);
    mm.set_anon_name(a, P, Some(" Go: immortal metadata (1)"))
        .unwrap();
    assert_eq!(
        name_at(&mm, a).as_deref(),
        Some(" Go: immortal metadata (1)")
    );
    mm.set_anon_name(a, P, Some("")).unwrap();
    assert_eq!(
        name_at(&mm, a).as_deref(),
        Some(""),
        "an empty name is a name"
    );
}

/// A file mapping in the range is `EBADF` (`madvise_vma_anon_name`); the
/// anonymous VMAs before it are named, those after it are not.
#[test]
fn file_mapping_is_ebadf() {
    let mut mm = named_space();
    let a = anon(&mut mm, 6);
    mm.mmap_file(
        a + 2 * P,
        2 * P,
        Prot::READ,
        MapFlags::PRIVATE | MapFlags::FIXED,
        OpenFile::new(FileId(3)),
        0,
    )
    .unwrap();
    assert_eq!(mm.set_anon_name(a, 6 * P, Some("x")), Err(Errno::EBADF));
    assert_eq!(name_at(&mm, a).as_deref(), Some("x"));
    assert_eq!(name_at(&mm, a + 2 * P), None);
    assert_eq!(name_at(&mm, a + 4 * P), None);
}

/// Shared anonymous memory can be named; `/proc/PID/maps` prints
/// `[anon_shmem:NAME]`.
#[test]
fn shared_anonymous_memory_is_named() {
    let mut mm = named_space();
    let a = mm
        .mmap(0, 2 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    mm.set_anon_name(a, 2 * P, Some("ring")).unwrap();
    assert!(mm
        .vma_at(a)
        .unwrap()
        .to_string()
        .ends_with("[anon_shmem:ring]"));
}

/// A hole in the range: every mapped part is named, then `ENOMEM`.
#[test]
fn hole_is_enomem_after_naming_the_rest() {
    let mut mm = named_space();
    let a = anon(&mut mm, 6);
    mm.munmap(a + 2 * P, P).unwrap();
    assert_eq!(mm.set_anon_name(a, 6 * P, Some("h")), Err(Errno::ENOMEM));
    assert_eq!(name_at(&mm, a).as_deref(), Some("h"));
    assert_eq!(name_at(&mm, a + 3 * P).as_deref(), Some("h"));
    assert_eq!(
        mm.set_anon_name(a + 6 * P, P, Some("h")),
        Err(Errno::ENOMEM),
        "nothing mapped"
    );
}

/// The child of a fork has its parent's names; `mremap` moves the name
/// with the VMA.
#[test]
fn fork_inherits_and_mremap_moves_names() {
    let mut mm = named_space();
    let a = anon(&mut mm, 4);
    mm.set_anon_name(a, 2 * P, Some("kept")).unwrap();
    for opts in all_opts() {
        let child = mm.fork_with(opts).unwrap();
        assert_eq!(name_at(&child, a).as_deref(), Some("kept"));
        assert_eq!(name_at(&child, a + 2 * P), None);
        assert_eq!(child.maps(), mm.maps());
    }
    let to = a + 64 * P;
    let moved = mm
        .mremap(a, 2 * P, 2 * P, RemapFlags::MAYMOVE | RemapFlags::FIXED, to)
        .unwrap();
    assert_eq!(moved, to);
    assert_eq!(name_at(&mm, to).as_deref(), Some("kept"));
}

/// `/proc/PID/maps` prints `[anon:NAME]`, and the public maps loader reads
/// it back into a VMA with that name (and `[anon_shmem:NAME]` likewise).
#[test]
fn maps_round_trip() {
    let mut mm = named_space();
    let a = anon(&mut mm, 3);
    mm.set_anon_name(a + P, P, Some("Go: heap")).unwrap();
    let s = mm
        .mmap(0, P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    mm.set_anon_name(s, P, Some("shared one")).unwrap();
    let text = mm.maps();
    assert!(text.contains("[anon:Go: heap]"), "{text}");
    assert!(text.contains("[anon_shmem:shared one]"), "{text}");
    let lines = parse_maps(&text).unwrap();
    let mut files = FileTable::new();
    let img = ProcImage::load(
        &lines,
        None,
        &mut files,
        LoadOptions {
            config: mm.config().clone(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        img.space.vma_at(a + P).unwrap().anon_name(),
        Some("Go: heap")
    );
    assert_eq!(img.space.vma_at(a).unwrap().anon_name(), None);
    assert_eq!(img.space.vma_at(s).unwrap().anon_name(), Some("shared one"));
    // The loader's own printer gives the same names, and reading that
    // back gives the same text again.
    let printed = img.to_maps_string(&files);
    assert!(printed.contains("[anon:Go: heap]"), "{printed}");
    assert!(printed.contains("[anon_shmem:shared one]"), "{printed}");
    let mut files2 = FileTable::new();
    let img2 = ProcImage::load(
        &parse_maps(&printed).unwrap(),
        None,
        &mut files2,
        LoadOptions {
            config: mm.config().clone(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(img2.to_maps_string(&files2), printed);
}

#[test]
fn a_vma_with_a_name_is_no_bigger_than_before_names() {
    // A VMA is boxed in the tree: 88 bytes is what it was before it could
    // carry a name, and glibc serves it from the same size class.
    assert!(std::mem::size_of::<maple_mm::Vma>() <= 88);
}
