//! `MAP_DROPPABLE` (Linux 6.11): private anonymous memory the kernel may
//! drop, made by `do_mmap` with `VM_DROPPABLE | VM_NORESERVE |
//! VM_WIPEONFORK | VM_DONTDUMP`, and the calls that treat it apart
//! (`mlock`, `madvise`).

mod common;
use common::*;
use maple_mm::{AddressSpace, Advice, Config, Errno, FileId, MapFlags, Prot, VmFlags, MCL_CURRENT};

const B: u64 = 0x2000_0000;

fn droppable() -> MapFlags {
    MapFlags::DROPPABLE | MapFlags::ANONYMOUS
}

#[test]
fn droppable_memory_gets_its_flags_and_no_commit_charge() {
    let mut mm = AddressSpace::new();
    let a = mm.mmap(0, 4 * P, Prot::RW, droppable(), None, 0).unwrap();
    // Placed like private anonymous memory: top-down below mmap_base.
    assert_eq!(a, mm.config().mmap_base - 4 * P);
    let f = mm.vma_at(a).unwrap().flags();
    // What a 6.18 kernel's smaps showed for Go's getrandom state.
    assert_eq!(f.smaps(), "rd wr mr mw me nr wf dd dp");
    assert!(!f.contains(VmFlags::ACCOUNT));
    assert_eq!(VmFlags::from_smaps("rd wr mr mw me nr wf dd dp"), Ok(f));
    wb(&mut mm, a, 9);
    assert_eq!(rb(&mut mm, a), 9);
    check(&mm);
}

#[test]
fn droppable_memory_does_not_merge_with_private_memory() {
    let mut mm = AddressSpace::new();
    let p = mm
        .mmap(
            B,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    let d = mm
        .mmap(B + P, P, Prot::RW, droppable() | MapFlags::FIXED, None, 0)
        .unwrap();
    assert_eq!((p, d), (B, B + P));
    assert_eq!(mm.map_count(), 2);
    // Two droppable neighbours do merge.
    mm.mmap(
        B + 2 * P,
        P,
        Prot::RW,
        droppable() | MapFlags::FIXED,
        None,
        0,
    )
    .unwrap();
    assert_eq!(mm.map_count(), 2);
    assert_eq!(mm.vma_at(B + 2 * P).unwrap().start(), B + P);
    check(&mm);
}

#[test]
fn droppable_is_anonymous_only_never_locked_and_never_a_stack() {
    let mut mm = AddressSpace::new();
    let file = FileId(7);
    assert_eq!(
        mm.mmap(0, P, Prot::READ, MapFlags::DROPPABLE, Some(file), 0),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        mm.mmap(0, P, Prot::RW, droppable() | MapFlags::LOCKED, None, 0),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        mm.mmap(0, P, Prot::RW, droppable() | MapFlags::GROWSDOWN, None, 0),
        Err(Errno::EINVAL)
    );
    assert_eq!(mm.map_count(), 0);
    // Without the right to lock, MAP_LOCKED fails first with EPERM, as
    // do_mmap checks that before the sharing type.
    let mut unprivileged = AddressSpace::with_config(Config {
        memlock_limit: Some(0),
        ..Config::default()
    });
    assert_eq!(
        unprivileged.mmap(0, P, Prot::RW, droppable() | MapFlags::LOCKED, None, 0),
        Err(Errno::EPERM)
    );
}

#[test]
fn a_child_gets_droppable_memory_empty() {
    for opts in all_opts() {
        let mut p = AddressSpace::new();
        let a = p
            .mmap(B, 3 * P, Prot::RW, droppable() | MapFlags::FIXED, None, 0)
            .unwrap();
        for i in 0..3 {
            wb(&mut p, a + i * P, 5);
        }
        let mut c = p.fork_with(opts).unwrap();
        assert_eq!(c.map_count(), 1, "{opts:?}");
        assert_eq!(c.stats().rss_pages, 0, "{opts:?}");
        assert_eq!(rb(&mut c, a + P), 0);
        assert_eq!(rb(&mut p, a + P), 5);
        assert!(c.vma_at(a).unwrap().flags().contains(VmFlags::DROPPABLE));
        check(&p);
        check(&c);
    }
}

#[test]
fn madvise_keeps_droppable_memory_wiped_on_fork_and_out_of_dumps() {
    let mut mm = AddressSpace::new();
    let a = mm.mmap(0, 2 * P, Prot::RW, droppable(), None, 0).unwrap();
    assert_eq!(mm.madvise(a, P, Advice::KeepOnFork), Err(Errno::EINVAL));
    assert_eq!(mm.madvise(a, P, Advice::DoDump), Err(Errno::EINVAL));
    // KSM ignores the advice without an error.
    mm.madvise(a, 2 * P, Advice::Mergeable).unwrap();
    assert!(!mm.vma_at(a).unwrap().flags().contains(VmFlags::MERGEABLE));
    // Other advice applies as to any private anonymous memory.
    mm.madvise(a, P, Advice::Random).unwrap();
    assert!(mm.vma_at(a).unwrap().flags().contains(VmFlags::RAND_READ));
    assert_eq!(mm.map_count(), 2);
    check(&mm);
}

#[test]
fn mlock_leaves_droppable_memory_unlocked() {
    let mut mm = AddressSpace::new();
    let a = mm
        .mmap(B, 2 * P, Prot::RW, droppable() | MapFlags::FIXED, None, 0)
        .unwrap();
    let b = mm
        .mmap(
            B + 2 * P,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED,
            None,
            0,
        )
        .unwrap();
    mm.mlock(a, 3 * P).unwrap();
    assert!(!mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    assert!(mm.vma_at(b).unwrap().flags().contains(VmFlags::LOCKED));
    // __mm_populate faults in every page of the range, locked or not.
    assert_eq!(mm.stats().rss_pages, 3);
    mm.mlockall(MCL_CURRENT).unwrap();
    assert!(!mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    check(&mm);
}
