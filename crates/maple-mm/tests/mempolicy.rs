//! `mbind`: memory policies split VMAs and keep them apart (Linux 6.18's
//! rules, mm/mempolicy.c).

use maple_mm::{
    AddressSpace, Errno, MapFlags, MemPolicy, Prot, RemapFlags, MPOL_BIND, MPOL_DEFAULT,
    MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES, MPOL_INTERLEAVE, MPOL_LOCAL,
    MPOL_PREFERRED, PAGE_SIZE,
};

const P: u64 = PAGE_SIZE;

fn anon(mm: &mut AddressSpace, pages: u64) -> u64 {
    mm.mmap(0, pages * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap()
}

#[test]
fn a_policy_splits_and_keeps_a_new_neighbour_apart() {
    let mut mm = AddressSpace::new();
    let buf = anon(&mut mm, 4);
    // OpenBLAS: mbind(buf, len, MPOL_PREFERRED, NULL, 0, 0), the local node.
    mm.mbind(buf, 4 * P, MPOL_PREFERRED, 0, 0).unwrap();
    let local = MemPolicy::new(MPOL_LOCAL, 0, 0);
    assert_eq!(mm.vma_at(buf).unwrap().policy(), Some(local));
    assert_eq!(
        (local.mode(), local.nodes(), local.flags()),
        (MPOL_LOCAL, 0, 0)
    );
    // A mapping placed just below it does not merge with it.
    let below = anon(&mut mm, 2);
    assert_eq!(below + 2 * P, buf);
    assert_eq!(mm.map_count(), 2);
    // Part of it back to the default: split off, and merged with the
    // mapping below (same flags, no policy).
    mm.mbind(buf, P, MPOL_DEFAULT, 0, 0).unwrap();
    assert_eq!(mm.vma_at(buf).unwrap().start(), below);
    assert_eq!(mm.vma_at(buf + P).unwrap().start(), buf + P);
    assert_eq!(mm.map_count(), 2);
    // The same policy again changes nothing.
    mm.mbind(buf + P, 3 * P, MPOL_LOCAL, 0, 0).unwrap();
    assert_eq!(mm.map_count(), 2);
    mm.validate().unwrap();
}

#[test]
fn nodes_modes_and_flags_are_checked_first() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 2);
    let einval = Err(Errno::EINVAL);
    assert_eq!(mm.mbind(a, P, 7, 1, 0), einval); // no such mode
    assert_eq!(mm.mbind(a, P, MPOL_DEFAULT, 1, 0), einval); // default with nodes
    assert_eq!(mm.mbind(a, P, MPOL_BIND, 0, 0), einval); // bind to nothing
    assert_eq!(mm.mbind(a, P, MPOL_BIND, 0b10, 0), einval); // node 1 has no memory
    assert_eq!(mm.mbind(a, P, MPOL_LOCAL, 1, 0), einval);
    assert_eq!(
        mm.mbind(a, P, MPOL_PREFERRED | MPOL_F_STATIC_NODES, 0, 0),
        einval
    );
    assert_eq!(
        mm.mbind(
            a,
            P,
            MPOL_BIND | MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES,
            1,
            0
        ),
        einval
    );
    assert_eq!(
        mm.mbind(a, P, MPOL_INTERLEAVE | MPOL_F_NUMA_BALANCING, 1, 0),
        einval
    );
    assert_eq!(mm.mbind(a, P, MPOL_BIND, 1, 1 << 3), einval); // unknown MPOL_MF_ flag
    assert_eq!(mm.mbind(a + 1, P, MPOL_BIND, 1, 0), einval); // unaligned
    assert_eq!(mm.mbind(a, 0, MPOL_BIND, 1, 0), Ok(())); // empty
    assert_eq!(mm.map_count(), 1);
    // A relative mask folds onto the nodes with memory: node 1 of one node is node 0.
    mm.mbind(a, P, MPOL_BIND | MPOL_F_RELATIVE_NODES, 0b10, 0)
        .unwrap();
    assert_eq!(mm.map_count(), 2);
}

#[test]
fn a_hole_faults_before_anything_changes() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 3);
    mm.munmap(a + P, P).unwrap();
    assert_eq!(mm.mbind(a, 3 * P, MPOL_BIND, 1, 0), Err(Errno::EFAULT));
    assert_eq!(mm.vma_at(a).unwrap().policy(), None);
    assert_eq!(mm.mbind(a - 4 * P, P, MPOL_BIND, 1, 0), Err(Errno::EFAULT));
}

#[test]
fn a_policy_is_inherited_at_fork_and_moved_by_mremap() {
    let mut mm = AddressSpace::new();
    let a = anon(&mut mm, 2);
    mm.mbind(a, 2 * P, MPOL_BIND, 1, 0).unwrap();
    let policy = mm.vma_at(a).unwrap().policy();
    assert!(policy.is_some());
    let child = mm.fork().unwrap();
    assert_eq!(child.vma_at(a).unwrap().policy(), policy);
    // Moved just below a mapping without it: still apart.
    let b = anon(&mut mm, 2);
    assert_eq!(b + 2 * P, a);
    let at = mm
        .mremap(
            a,
            2 * P,
            2 * P,
            RemapFlags::MAYMOVE | RemapFlags::FIXED,
            b - 2 * P,
        )
        .unwrap();
    assert_eq!(at, b - 2 * P);
    assert_eq!(mm.vma_at(at).unwrap().policy(), policy);
    assert_eq!(mm.vma_at(at).unwrap().end(), b);
    assert_eq!(mm.map_count(), 2);
    mm.validate().unwrap();
}
