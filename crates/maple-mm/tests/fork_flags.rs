//! `VM_DONTCOPY` and `VM_WIPEONFORK` at fork, file mappings, accounting.

mod common;
use common::*;
use maple_mm::{AddressSpace, Advice, Errno, FileId, MapFlags, Prot};

const B: u64 = 0x2000_0000;

#[test]
fn dontcopy_leaves_a_gap_in_the_child() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        anon_at(&mut p, B, 0, 12, Prot::RW);
        for i in 0..12 {
            wb(&mut p, B + i * P, i as u8 + 1);
        }
        p.madvise(B + 4 * P, 4 * P, Advice::DontFork).unwrap();
        assert_eq!(draw(&p, B, 12), "AAAABBBBCCCC");
        let mut c = p.fork_with(opts).unwrap();
        assert_eq!(draw(&c, B, 12), "AAAA    BBBB", "{opts:?}");
        assert_eq!(c.map_count(), 2);
        assert_eq!(c.stats().total_vm_pages, 8);
        assert_eq!(c.stats().rss_pages, 8);
        assert!(c.read_byte(B + 5 * P).is_err());
        assert_eq!(rb(&mut c, B + 9 * P), 10);
        check(&p);
        check(&c);
        // the child may map something new into the gap
        anon_at(&mut c, B, 4, 4, Prot::RW);
        assert_eq!(rb(&mut c, B + 5 * P), 0);
        assert_eq!(rb(&mut p, B + 5 * P), 6);
        check(&c);
    }
}

#[test]
fn wipeonfork_gives_the_child_the_vma_without_pages() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        anon_at(&mut p, B, 0, 600, Prot::RW);
        for i in 0..600 {
            wb(&mut p, B + i * P, 7);
        }
        p.madvise(B + 100 * P, 400 * P, Advice::WipeOnFork).unwrap();
        let mut c = p.fork_with(opts).unwrap();
        assert_eq!(c.map_count(), 3, "{opts:?}");
        assert_eq!(c.stats().total_vm_pages, 600);
        assert_eq!(c.stats().rss_pages, 200, "{opts:?}");
        assert_eq!(rb(&mut c, B + 100 * P), 0);
        assert_eq!(rb(&mut c, B + 499 * P), 0);
        assert_eq!(rb(&mut c, B + 99 * P), 7);
        assert_eq!(rb(&mut c, B + 500 * P), 7);
        assert_eq!(rb(&mut p, B + 300 * P), 7);
        check(&p);
        check(&c);
        // the flag is inherited; KEEPONFORK clears it
        assert!(c
            .vma_at(B + 100 * P)
            .unwrap()
            .flags()
            .contains(maple_mm::VmFlags::WIPEONFORK));
        c.madvise(B, 600 * P, Advice::KeepOnFork).unwrap();
        check(&c);
    }
}

#[test]
fn wipeonfork_only_on_private_anonymous_memory() {
    let mut p = AddressSpace::new();
    let s = p
        .mmap(0, 2 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    assert_eq!(p.madvise(s, 2 * P, Advice::WipeOnFork), Err(Errno::EINVAL));
    let f = p
        .mmap(0, 2 * P, Prot::RW, MapFlags::PRIVATE, Some(FileId(3)), 0)
        .unwrap();
    assert_eq!(p.madvise(f, 2 * P, Advice::WipeOnFork), Err(Errno::EINVAL));
    check(&p);
}

#[test]
fn private_file_mappings_copy_on_write_and_see_the_file() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        let mem = p.memory().clone();
        mem.write_file(FileId(5), 0, &[5u8; 8192]);
        let f = p
            .mmap(0, 2 * P, Prot::RW, MapFlags::PRIVATE, Some(FileId(5)), 0)
            .unwrap();
        let sh = p
            .mmap(0, 2 * P, Prot::RW, MapFlags::SHARED, Some(FileId(5)), 0)
            .unwrap();
        assert_eq!(rb(&mut p, f), 5);
        wb(&mut p, f, 6); // private copy
        let mut c = p.fork_with(opts).unwrap();
        wb(&mut c, sh + P, 9); // through the file
        assert_eq!(
            rb(&mut p, f + P),
            9,
            "an unmodified private page still shows the file"
        );
        assert_eq!(rb(&mut c, f), 6);
        wb(&mut c, f, 8);
        assert_eq!(rb(&mut p, f), 6);
        let mut buf = [0u8; 2];
        mem.read_file(FileId(5), P - 1, &mut buf);
        assert_eq!(buf, [5, 9]);
        // DONTNEED on the private mapping drops the private copy
        p.madvise(f, P, Advice::DontNeed).unwrap();
        assert_eq!(rb(&mut p, f), 5);
        check(&p);
        check(&c);
    }
}

#[test]
fn dontneed_zeroes_private_anonymous_memory() {
    let mut p = AddressSpace::new();
    let a = p
        .mmap(0, 4 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    for i in 0..4 {
        wb(&mut p, a + i * P, 3);
    }
    assert_eq!(p.stats().rss_pages, 4);
    p.madvise(a + P, 2 * P, Advice::DontNeed).unwrap();
    assert_eq!(p.stats().rss_pages, 2);
    assert_eq!(
        [rb(&mut p, a), rb(&mut p, a + P), rb(&mut p, a + 3 * P)],
        [3, 0, 3]
    );
    assert_eq!(p.stats().rss_pages, 2, "reads map the zero page");
    check(&p);
}

#[test]
fn fork_accounting() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        let a = p
            .mmap(0, 64 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
            .unwrap();
        p.mmap(0, 8 * P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
            .unwrap();
        for i in 0..32 {
            wb(&mut p, a + i * P, 1);
        }
        let mem = p.memory().clone();
        let (frames, tables) = (mem.frames_in_use(), mem.page_table_pages());
        let c = p.fork_with(opts).unwrap();
        let (ps, cs) = (p.stats(), c.stats());
        assert_eq!(cs.map_count, ps.map_count);
        assert_eq!(cs.total_vm_pages, ps.total_vm_pages);
        assert_eq!(cs.rss_pages, ps.rss_pages);
        assert_eq!(cs.rss_pages, 32);
        assert_eq!(mem.frames_in_use(), frames);
        assert_eq!(mem.spaces(), 2);
        check(&c);
        drop(c);
        assert_eq!(mem.page_table_pages(), tables);
        assert_eq!(mem.spaces(), 1);
        check(&p);
    }
}
