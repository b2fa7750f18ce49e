//! Memory protection keys (`pkey_alloc`, `pkey_free`, `pkey_mprotect`, the
//! execute-only key, `PKRU`), one rule per test. The expected keys and
//! errnos were checked against Linux 6.18 on an x86-64 CPU with `PKU`
//! (small C programs doing the same calls, `ProtectionKey:` of
//! `/proc/self/smaps`).

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Advice, Config, Errno, FaultKind, MapFlags, Prot, PKEY_DISABLE_ACCESS,
    PKEY_DISABLE_WRITE,
};

fn anon(mm: &mut AddressSpace, pages: u64, prot: Prot) -> u64 {
    mm.mmap(0, pages * P, prot, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap()
}

fn key_at(mm: &AddressSpace, a: u64) -> u32 {
    mm.vma_at(a).expect("a VMA").flags().pkey()
}

/// `pkey_alloc`: flags must be 0 and the rights a subset of
/// DISABLE_ACCESS | DISABLE_WRITE (`EINVAL`); the lowest free key (key 0
/// is allocated from the start, and may be freed and allocated again);
/// `ENOSPC` when all 16 are taken.
#[test]
fn pkey_alloc_takes_the_lowest_free_key() {
    let mut mm = AddressSpace::new();
    assert_eq!(mm.pkey_alloc(1, 0), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_alloc(0, 4), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_alloc(0, 0), Ok(1));
    assert_eq!(mm.pkey_alloc(0, 0), Ok(2));
    assert_eq!(mm.pkey_free(1), Ok(()));
    assert_eq!(mm.pkey_free(1), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_free(5), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_free(16), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_free(0), Ok(()));
    assert_eq!(mm.pkey_alloc(0, 0), Ok(0));
    assert_eq!(mm.pkey_alloc(0, 0), Ok(1));
    for k in 3..16 {
        assert_eq!(mm.pkey_alloc(0, 0), Ok(k));
    }
    assert_eq!(mm.pkey_alloc(0, 0), Err(Errno::ENOSPC));
}

/// `do_mprotect_pkey`: a key that is not allocated (or below -1, or 16)
/// is `EINVAL`, checked after the zero-length and alignment checks; -1 is
/// plain `mprotect`. The key is part of the VMA's flags: VMAs with
/// different keys do not merge, and a later `mprotect` keeps each VMA's
/// key.
#[test]
fn pkey_mprotect_keys_split_and_do_not_merge() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 4, Prot::RW);
    for bad in [3, 16, -2] {
        assert_eq!(mm.pkey_mprotect(a, P, Prot::RW, bad), Err(Errno::EINVAL));
    }
    assert_eq!(mm.pkey_mprotect(a, 0, Prot::RW, 7), Ok(()));
    assert_eq!(mm.pkey_mprotect(a + 1, P, Prot::RW, 7), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_mprotect(a, P, Prot::RW, -1), Ok(()));
    assert_eq!(mm.pkey_mprotect(a, P, Prot::RW, 0), Ok(()));
    assert_eq!(mm.map_count(), 1);
    let k = mm.pkey_alloc(0, 0).unwrap();
    mm.pkey_mprotect(a + P, P, Prot::RW, k as i32).unwrap();
    assert_eq!(mm.map_count(), 3);
    assert_eq!(
        (key_at(&mm, a), key_at(&mm, a + P), key_at(&mm, a + 2 * P)),
        (0, k, 0)
    );
    // Read-only over the keyed VMA and its right neighbour: two VMAs,
    // each keeping its key.
    mm.mprotect(a + P, 2 * P, Prot::READ).unwrap();
    assert_eq!(mm.map_count(), 4);
    assert_eq!((key_at(&mm, a + P), key_at(&mm, a + 2 * P)), (k, 0));
    // pkey_free leaves the VMAs' keys alone.
    mm.pkey_free(k as i32).unwrap();
    assert_eq!(key_at(&mm, a + P), k);
    // The same key again merges them back.
    mm.pkey_mprotect(a, 4 * P, Prot::RW, 0).unwrap();
    assert_eq!(mm.map_count(), 1);
    mm.validate().unwrap();
}

/// `execute_only_pkey`: a `PROT_EXEC`-only mapping (mmap or mprotect)
/// gets the execute-only key, allocated on first use and access-disabled
/// in PKRU, so the code cannot be read; `mprotect` to anything else moves
/// the VMA back to key 0. The key counts as allocated.
#[test]
fn exec_only_memory_gets_the_execute_only_key() {
    let mut mm = AddressSpace::new();
    assert_eq!(mm.pkey_alloc(0, 0), Ok(1));
    let x = anon(&mut mm, 1, Prot::EXEC);
    assert_eq!(key_at(&mm, x), 2);
    let e = mm.read_byte(x).unwrap_err();
    assert_eq!(
        (e.kind, e.errno()),
        (FaultKind::ProtectionKey, Errno::EFAULT)
    );
    let r = anon(&mut mm, 1, Prot::READ | Prot::EXEC);
    assert_eq!(key_at(&mm, r), 0);
    mm.mprotect(r, P, Prot::EXEC).unwrap();
    assert_eq!(key_at(&mm, r), 2);
    mm.mprotect(r, P, Prot::READ | Prot::EXEC).unwrap();
    assert_eq!(key_at(&mm, r), 0);
    assert_eq!(mm.read_byte(r), Ok(0));
    assert_eq!(mm.pkey_alloc(0, 0), Ok(3));
}

/// PKRU: `pkey_alloc`'s rights are the thread's rights for the key; the
/// model's accesses obey them, `MADV_POPULATE_*` fails with `EFAULT`
/// (`check_vma_flags`), and a fork's child inherits the register.
#[test]
fn pkru_rights_decide_accesses() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 2, Prot::RW);
    let w = mm.pkey_alloc(0, PKEY_DISABLE_WRITE).unwrap();
    mm.pkey_mprotect(a, P, Prot::RW, w as i32).unwrap();
    assert_eq!(mm.read_byte(a), Ok(0));
    assert_eq!(
        mm.write_byte(a, 1).unwrap_err().kind,
        FaultKind::ProtectionKey
    );
    assert_eq!(mm.madvise(a, P, Advice::PopulateWrite), Err(Errno::EFAULT));
    assert_eq!(mm.madvise(a, P, Advice::PopulateRead), Ok(()));
    let mut child = mm.fork().unwrap();
    assert_eq!(child.pkru(), mm.pkru());
    assert_eq!(
        child.write_byte(a, 1).unwrap_err().kind,
        FaultKind::ProtectionKey
    );
    // WRPKRU: allow everything.
    mm.set_pkru(0);
    mm.write_byte(a, 7).unwrap();
    let n = mm.pkey_alloc(0, PKEY_DISABLE_ACCESS).unwrap();
    mm.pkey_mprotect(a + P, P, Prot::RW, n as i32).unwrap();
    assert_eq!(
        mm.read_byte(a + P).unwrap_err().kind,
        FaultKind::ProtectionKey
    );
    // A new key allocated in the child is the child's (mm->context is copied).
    assert_eq!(child.pkey_alloc(0, 0), Ok(n));
}

/// Without protection keys (`Config::pkeys` false), only key 0 exists and
/// no call may name it: the first `pkey_alloc` is `EINVAL` and leaves it
/// taken, so later ones (in a child too) are `ENOSPC`; execute-only memory
/// keeps key 0 and reads. What Linux 6.18 answered on an AMD EPYC without
/// `pku`, in this order.
#[test]
fn without_pkeys_there_is_only_key_0() {
    let mut mm = AddressSpace::with_config(Config {
        pkeys: false,
        ..Config::default()
    });
    assert_eq!(mm.pkey_alloc(0, 0), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_alloc(0, PKEY_DISABLE_ACCESS), Err(Errno::ENOSPC));
    assert_eq!(mm.pkey_alloc(0, 4), Err(Errno::EINVAL));
    let x = anon(&mut mm, 1, Prot::EXEC);
    assert_eq!(key_at(&mm, x), 0);
    assert_eq!(mm.read_byte(x), Ok(0));
    assert_eq!(mm.pkey_mprotect(x, P, Prot::READ, 0), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_mprotect(x, P, Prot::READ, 1), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_mprotect(x, P, Prot::READ, -1), Ok(()));
    assert_eq!(mm.pkey_free(0), Err(Errno::EINVAL));
    assert_eq!(mm.pkey_free(1), Err(Errno::EINVAL));
    let mut child = mm.fork().unwrap();
    assert_eq!(child.pkey_alloc(0, 0), Err(Errno::ENOSPC));
    // A new space starts over.
    let mut fresh = AddressSpace::with_config(Config {
        pkeys: false,
        ..Config::default()
    });
    assert_eq!(fresh.pkey_alloc(0, 0), Err(Errno::EINVAL));
}
