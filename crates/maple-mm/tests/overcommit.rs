//! The heuristic overcommit (`vm.overcommit_memory = 0`): one commit charge
//! larger than RAM plus swap fails with `ENOMEM`, and nothing else does.
//! The calls and results are those of a C program run under Linux 6.18 on
//! a 24 GiB machine without swap (the probe behind `maple replay`'s
//! figures); the model, given that machine's commit limit, must agree.

mod common;
use common::check;
use maple_mm::{AddressSpace, Config, Errno, MapFlags, Prot, RemapFlags, VmFlags};

const GIB: u64 = 1 << 30;

fn space(commit_limit: Option<u64>) -> AddressSpace {
    AddressSpace::with_config(Config {
        commit_limit,
        ..Config::default()
    })
}

/// A private anonymous mapping of `len` bytes, placed by the model.
fn anon(mm: &mut AddressSpace, len: u64, prot: Prot) -> Result<u64, Errno> {
    mm.mmap(0, len, prot, MapFlags::PRIVATE_ANON, None, 0)
}

#[test]
fn one_charge_above_ram_and_swap_fails_as_linux_does() {
    let mut mm = space(Some(24 * GIB));
    let before = mm.maps();
    assert_eq!(anon(&mut mm, 1024 * GIB, Prot::RW), Err(Errno::ENOMEM));
    assert_eq!(mm.maps(), before, "a refused mapping changes nothing");
    // Not charged: MAP_NORESERVE, or not writable.
    let noreserve = MapFlags::PRIVATE_ANON | MapFlags::NORESERVE;
    mm.mmap(0, 1024 * GIB, Prot::RW, noreserve, None, 0)
        .unwrap();
    assert_eq!(anon(&mut mm, 64 * GIB, Prot::RW), Err(Errno::ENOMEM));
    // Charges are not summed: 8 GiB fits however much is charged already.
    for _ in 0..4 {
        anon(&mut mm, 8 * GIB, Prot::RW).unwrap();
    }
    let reserved = anon(&mut mm, 64 * GIB, Prot::NONE).unwrap();
    assert_eq!(
        mm.mprotect(reserved, 64 * GIB, Prot::RW),
        Err(Errno::ENOMEM)
    );
    mm.mprotect(reserved, GIB, Prot::RW).unwrap();
    assert!(mm
        .vma_at(reserved)
        .unwrap()
        .flags()
        .contains(VmFlags::ACCOUNT));
    let a = anon(&mut mm, GIB, Prot::RW).unwrap();
    assert_eq!(
        mm.mremap(a, GIB, 100 * GIB, RemapFlags::MAYMOVE, 0),
        Err(Errno::ENOMEM)
    );
    // Shared anonymous memory is charged whole (shmem).
    assert_eq!(
        mm.mmap(
            0,
            1024 * GIB,
            Prot::RW,
            MapFlags::SHARED | MapFlags::ANONYMOUS,
            None,
            0
        ),
        Err(Errno::ENOMEM)
    );
    // brk refuses the growth by returning the old break.
    let brk = mm.brk(0);
    assert_eq!(mm.brk(brk + 64 * GIB), brk);
    assert_eq!(mm.brk(brk + GIB), brk + GIB);
    check(&mm);
}

#[test]
fn a_mapping_that_replaces_charged_memory_is_charged_the_difference() {
    let mut mm = space(Some(24 * GIB));
    // A reservation, not charged (not writable), to map into.
    let r = anon(&mut mm, 70 * GIB, Prot::NONE).unwrap();
    let fixed = MapFlags::PRIVATE_ANON | MapFlags::FIXED;
    assert_eq!(mm.mmap(r, 20 * GIB, Prot::RW, fixed, None, 0), Ok(r));
    // 30 GiB alone is above the limit, but 20 of it are charged already.
    assert_eq!(mm.mmap(r, 30 * GIB, Prot::RW, fixed, None, 0), Ok(r));
    // Over the uncharged reservation the whole 30 GiB is charged.
    let b = r + 35 * GIB;
    assert_eq!(
        mm.mmap(b, 30 * GIB, Prot::RW, fixed, None, 0),
        Err(Errno::ENOMEM)
    );
    assert_eq!(mm.vma_at(b).unwrap().prot(), Prot::NONE, "left as it was");
    check(&mm);
}

#[test]
fn without_a_limit_every_charge_succeeds() {
    let mut mm = space(None);
    assert_eq!(Config::default().commit_limit, None);
    anon(&mut mm, 1024 * GIB, Prot::RW).unwrap();
    let brk = mm.brk(0);
    assert_eq!(mm.brk(brk + 64 * GIB), brk + 64 * GIB);
    check(&mm);
}
