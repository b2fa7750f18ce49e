//! Copy-on-write isolation between parent and child, both directions,
//! across nested forks and with munmap / mprotect / mremap in between, for
//! every combination of fork strategies.

mod common;
use common::*;
use maple_mm::{AddressSpace, ForkOptions, MapFlags, Prot, PtStrategy, RemapFlags, TreeStrategy};

/// The byte written at page `i` by [`parent`].
fn v(i: u64) -> u8 {
    (i % 251) as u8 + 1
}

/// A parent with `pages` written pages (byte i at page i) straddling a
/// 2 MiB boundary, so that PTE tables are both full and partial.
fn parent(pages: u64) -> (AddressSpace, u64) {
    let mut mm = AddressSpace::new();
    let base = 0x4000_0000 - 8 * P;
    let a = mm
        .mmap(
            base,
            pages * P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    for i in 0..pages {
        wb(&mut mm, a + i * P, v(i));
    }
    (mm, a)
}

#[test]
fn child_writes_do_not_reach_the_parent_and_back() {
    for opts in all_opts() {
        let (mut p, a) = parent(600);
        let frames = p.memory().frames_in_use();
        let mut c = p.fork_with(opts).unwrap();
        check(&p);
        check(&c);
        assert_eq!(c.stats().rss_pages, 600, "{opts:?}");
        assert_eq!(p.memory().frames_in_use(), frames, "fork copies no frame");
        for i in (0..600).step_by(7) {
            wb(&mut c, a + i * P, 200);
        }
        for i in (0..600).step_by(11) {
            wb(&mut p, a + i * P + 5, 100);
        }
        check(&p);
        check(&c);
        for i in 0..600u64 {
            let exp_c = if i % 7 == 0 { 200 } else { v(i) };
            assert_eq!(rb(&mut c, a + i * P), exp_c, "{opts:?} child page {i}");
            assert_eq!(rb(&mut p, a + i * P), v(i), "{opts:?} parent page {i}");
            let exp_p5 = if i % 11 == 0 { 100 } else { 0 };
            assert_eq!(rb(&mut p, a + i * P + 5), exp_p5);
            assert_eq!(rb(&mut c, a + i * P + 5), 0);
        }
        drop(c);
        check(&p);
        assert_eq!(p.stats().rss_pages, 600);
        assert_eq!(p.memory().frames_in_use(), 600);
    }
}

#[test]
fn nested_forks_keep_every_generation_apart() {
    for opts in all_opts() {
        let (mut g0, a) = parent(40);
        let mut g1 = g0.fork_with(opts).unwrap();
        wb(&mut g1, a, 11);
        let mut g2 = g1.fork_with(opts).unwrap();
        wb(&mut g2, a + P, 22);
        let mut g3 = g2.fork_with(opts).unwrap();
        wb(&mut g3, a + 2 * P, 33);
        wb(&mut g0, a + 3 * P, 44);
        for (mm, exp) in [
            (&mut g0, [1u8, 2, 3, 44]),
            (&mut g1, [11, 2, 3, 4]),
            (&mut g2, [11, 22, 3, 4]),
            (&mut g3, [11, 22, 33, 4]),
        ] {
            for (i, e) in exp.iter().enumerate() {
                assert_eq!(rb(mm, a + i as u64 * P), *e, "{opts:?}");
            }
            check(mm);
        }
        drop(g1); // a middle generation exits
        check(&g2);
        assert_eq!(rb(&mut g3, a), 11);
        assert_eq!(rb(&mut g2, a + P), 22);
        drop(g3);
        drop(g2);
        check(&g0);
        assert_eq!(g0.memory().frames_in_use(), 40);
        assert_eq!(g0.memory().page_table_pages(), g0.stats().pt_pages);
    }
}

#[test]
fn munmap_mprotect_mremap_between_forks() {
    for opts in all_opts() {
        let (mut p, a) = parent(1100);
        let mut c = p.fork_with(opts).unwrap();
        // the parent unmaps a range covering a whole PTE table and parts of two
        p.munmap(a + 100 * P, 700 * P).unwrap();
        check(&p);
        check(&c);
        assert_eq!(rb(&mut c, a + 300 * P), v(300));
        // the child write-protects part and the parent keeps writing
        c.mprotect(a, 50 * P, Prot::READ).unwrap();
        assert!(c.write_byte(a, 1).is_err());
        wb(&mut p, a + 10 * P, 99);
        assert_eq!(rb(&mut c, a + 10 * P), 11);
        check(&p);
        check(&c);
        // the child moves a range; its pages go along and stay isolated
        let n = c
            .mremap(a + 900 * P, 100 * P, 150 * P, RemapFlags::MAYMOVE, 0)
            .unwrap();
        check(&c);
        assert_eq!(rb(&mut c, n + 5 * P), v(905));
        wb(&mut c, n + 5 * P, 250);
        assert_eq!(rb(&mut p, a + 905 * P), v(905));
        assert_eq!(rb(&mut c, n + 120 * P), 0);
        // the parent moves too
        let m = p
            .mremap(
                a + 1000 * P,
                100 * P,
                100 * P,
                RemapFlags::MAYMOVE | RemapFlags::FIXED,
                0x7000_0000,
            )
            .unwrap();
        assert_eq!(m, 0x7000_0000);
        wb(&mut p, m, 77);
        assert_eq!(rb(&mut c, a + 1000 * P), v(1000));
        check(&p);
        check(&c);
        drop(c);
        check(&p);
        drop(p);
    }
}

#[test]
fn a_second_fork_after_cow_breaks() {
    for opts in all_opts() {
        let (mut p, a) = parent(520);
        let mut c1 = p.fork_with(opts).unwrap();
        wb(&mut p, a, 5);
        let mut c2 = p.fork_with(opts).unwrap();
        wb(&mut c1, a + P, 6);
        wb(&mut c2, a + 2 * P, 7);
        assert_eq!(
            [rb(&mut p, a), rb(&mut p, a + P), rb(&mut p, a + 2 * P)],
            [5, 2, 3]
        );
        assert_eq!(
            [rb(&mut c1, a), rb(&mut c1, a + P), rb(&mut c1, a + 2 * P)],
            [1, 6, 3]
        );
        assert_eq!(
            [rb(&mut c2, a), rb(&mut c2, a + P), rb(&mut c2, a + 2 * P)],
            [5, 2, 7]
        );
        check(&p);
        check(&c1);
        check(&c2);
    }
}

#[test]
fn cowpte_shares_tables_until_written() {
    let (mut p, a) = parent(1024);
    let before = p.memory().page_table_pages();
    let opts = ForkOptions::new(TreeStrategy::Dup, PtStrategy::CowPte);
    let mut c = p.fork_with(opts).unwrap();
    // 1024 pages from 8 pages below a 2 MiB boundary touch 3 PTE tables: the
    // one fully covered is shared; the two partial ones... are covered by
    // the single VMA's range only partly, but all their entries lie in it.
    let shared = p.memory().page_table_pages();
    assert!(
        shared - before <= 4,
        "only upper tables are new: {before} -> {shared}"
    );
    assert_eq!(c.stats().rss_pages, 1024);
    // a read does not break sharing
    assert_eq!(rb(&mut c, a + 600 * P), v(600));
    assert_eq!(p.memory().page_table_pages(), shared);
    // a write does, for that table only
    wb(&mut c, a + 600 * P, 0);
    assert_eq!(p.memory().page_table_pages(), shared + 1);
    check(&c);
    check(&p);
}

#[test]
fn shared_mappings_stay_shared_across_fork() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        let s = p
            .mmap(0, 4 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
            .unwrap();
        let q = p
            .mmap(0, 4 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
            .unwrap();
        wb(&mut p, s, 1);
        wb(&mut p, q, 1);
        let mut c = p.fork_with(opts).unwrap();
        wb(&mut c, s + P, 2);
        wb(&mut p, s + 2 * P, 3);
        wb(&mut c, q, 9);
        assert_eq!(
            [rb(&mut p, s), rb(&mut p, s + P), rb(&mut p, s + 2 * P)],
            [1, 2, 3]
        );
        assert_eq!(
            [rb(&mut c, s), rb(&mut c, s + P), rb(&mut c, s + 2 * P)],
            [1, 2, 3]
        );
        assert_eq!(rb(&mut p, q), 1);
        check(&p);
        check(&c);
        drop(p);
        assert_eq!(rb(&mut c, s + 2 * P), 3);
        assert_eq!(c.memory().shm_objects(), 1);
        let mem = c.memory().clone();
        drop(c);
        assert_eq!(mem.shm_objects(), 0);
        assert_eq!(mem.frames_in_use(), 0);
        assert_eq!(mem.page_table_pages(), 0);
    }
}
