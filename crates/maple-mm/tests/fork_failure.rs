//! Every failure point of fork (the kernel's `undo_dup_mmap`, from the
//! `__mt_dup` series): a fork that fails anywhere undoes everything; nothing
//! leaks and every count is back. Needs the `failpoints` feature.
#![cfg(feature = "failpoints")]

mod common;
use common::*;
use maple_mm::{AddressSpace, Advice, Errno, ForkOptions, MapFlags, Prot, TreeStrategy};

/// A parent with a mix of everything fork treats differently.
fn parent() -> (AddressSpace, u64) {
    let mut p = AddressSpace::new();
    let base = 0x4000_0000 - 20 * P;
    let a = anon_at(&mut p, base, 0, 600, Prot::RW); // straddles a 2 MiB boundary
    for i in 0..600 {
        wb(&mut p, a + i * P, 1);
    }
    p.mprotect(a + 100 * P, 10 * P, Prot::READ).unwrap();
    p.madvise(a + 200 * P, 10 * P, Advice::DontFork).unwrap();
    p.madvise(a + 300 * P, 10 * P, Advice::WipeOnFork).unwrap();
    let s = p
        .mmap(0, 4 * P, Prot::RW, MapFlags::SHARED_ANON, None, 0)
        .unwrap();
    wb(&mut p, s, 2);
    let r = p
        .mmap(0, 16 * P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    rb(&mut p, r);
    for i in 0..20u64 {
        let x = p
            .mmap(
                0,
                P,
                if i % 2 == 0 { Prot::READ } else { Prot::RW },
                MapFlags::PRIVATE_ANON,
                None,
                0,
            )
            .unwrap();
        let _ = p.write_byte(x, 1); // read-only ones fault: fine
    }
    (p, a)
}

#[test]
fn every_failure_point_undoes_the_fork() {
    for t in tree_strategies() {
        for pt in PT_STRATEGIES {
            let opts = ForkOptions::new(t, pt);
            let (mut p, a) = parent();
            let mem = p.memory().clone();
            // how many failure points does this fork pass?
            let n0 = mem.failure_points_passed();
            let c = p.fork_with(opts).unwrap();
            let points = mem.failure_points_passed() - n0;
            drop(c);
            assert!(points > 30, "{opts:?}: only {points} failure points");
            let before = (
                p.stats(),
                mem.frames_in_use(),
                mem.page_table_pages(),
                mem.shm_objects(),
                p.maps(),
            );
            for k in 0..points {
                mem.inject_fork_failure(k);
                let r = p.fork_with(opts);
                assert_eq!(
                    r.err(),
                    Some(Errno::ENOMEM),
                    "{opts:?}: failure point {k} of {points}"
                );
                let after = (
                    p.stats(),
                    mem.frames_in_use(),
                    mem.page_table_pages(),
                    mem.shm_objects(),
                    p.maps(),
                );
                assert_eq!(before, after, "{opts:?}: failure point {k}");
                assert_eq!(mem.spaces(), 1);
                check(&p);
            }
            // and the parent still works, and a later fork succeeds
            mem.clear_fork_failure();
            let mut c = p.fork_with(opts).unwrap();
            check(&c);
            c.write_byte(a, 9).unwrap();
            assert_eq!(p.read_byte(a).unwrap(), 1);
            mem.inject_fork_failure(points); // one past the last: no failure
            let c2 = p.fork_with(opts).unwrap();
            mem.clear_fork_failure();
            drop(c2);
            drop(c);
            check(&p);
        }
    }
}

/// The tree's own allocator failing inside `__mt_dup` (maple-tree's
/// `failpoints`): the fork fails with ENOMEM and nothing changes.
#[test]
fn tree_allocation_failure_during_dup() {
    use maple_tree::failpoints;
    for pt in PT_STRATEGIES {
        let opts = ForkOptions::new(TreeStrategy::Dup, pt);
        let mut p = AddressSpace::new();
        for i in 0..300u64 {
            let prot = if i % 2 == 0 { Prot::READ } else { Prot::RW };
            let a = p.mmap(0, P, prot, MapFlags::PRIVATE_ANON, None, 0).unwrap();
            let _ = p.write_byte(a, 1);
        }
        let mem = p.memory().clone();
        let before = (
            p.stats(),
            mem.frames_in_use(),
            mem.page_table_pages(),
            p.maps(),
        );
        let mut failed = 0;
        for k in 0.. {
            failpoints::fail_node_alloc_after(k);
            let r = p.fork_with(opts);
            failpoints::clear();
            match r {
                Ok(c) => {
                    check(&c);
                    break;
                }
                Err(e) => {
                    assert_eq!(e, Errno::ENOMEM);
                    failed += 1;
                    let after = (
                        p.stats(),
                        mem.frames_in_use(),
                        mem.page_table_pages(),
                        p.maps(),
                    );
                    assert_eq!(before, after, "after {k} node allocations");
                    check(&p);
                }
            }
        }
        assert!(failed > 0);
    }
}
