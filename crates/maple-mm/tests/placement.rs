//! Where mappings go: top-down below mmap_base, hints, the stack guard gap,
//! the bottom-up fallback, stack growth.

mod common;
use common::*;
use maple_mm::{AddressSpace, Config, MapFlags, Prot};

#[test]
fn top_down_below_mmap_base() {
    let mut m = AddressSpace::new();
    let base = m.config().mmap_base;
    assert_eq!(base, 0x7fff_f7ff_f000);
    let a = m
        .mmap(0, 3 * P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(a, base - 3 * P);
    let b = m
        .mmap(0, P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(b, a - P);
    // a freed hole is reused top-down
    m.munmap(a + P, P).unwrap();
    let c = m
        .mmap(0, P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(c, a + P);
    // too large for the hole: below everything
    let d = m
        .mmap(0, 2 * P, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(d, b - 2 * P);
    check(&m);
}

#[test]
fn hints_are_taken_when_free() {
    let mut m = AddressSpace::new();
    let a = m
        .mmap(
            0x1000_0000,
            2 * P,
            Prot::RW,
            MapFlags::PRIVATE_ANON,
            None,
            0,
        )
        .unwrap();
    assert_eq!(a, 0x1000_0000);
    let b = m
        .mmap(
            0x1000_0000 + P,
            P,
            Prot::RW,
            MapFlags::PRIVATE_ANON,
            None,
            0,
        )
        .unwrap();
    assert_eq!(
        b,
        m.config().mmap_base - P,
        "occupied hint: placed top-down"
    );
    let c = m
        .mmap(0x2000_0123, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(c, 0x2000_0000, "hint rounded down to a page");
    let d = m
        .mmap(0x5000, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(d, 0x10000, "a hint below mmap_min_addr is raised to it");
    let e = m
        .mmap(0x100, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(
        e,
        m.config().mmap_base - 2 * P,
        "a hint that rounds to 0 is no hint"
    );
}

#[test]
fn stack_guard_gap_is_kept_below_a_stack() {
    let mut m = AddressSpace::new();
    let base = m.config().mmap_base;
    let gap = m.config().stack_guard_gap;
    // a stack right below mmap_base
    let s = m
        .mmap(
            base - 16 * P,
            16 * P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED | MapFlags::GROWSDOWN,
            None,
            0,
        )
        .unwrap();
    let a = m
        .mmap(0, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(a, s - gap - P);
    // a hint inside the guard gap is not taken
    let b = m
        .mmap(s - 2 * P, P, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_ne!(b, s - 2 * P);
    check(&m);
}

#[test]
fn the_stack_grows_down_on_faults() {
    let mut m = AddressSpace::new();
    let top = 0x7fff_ffff_0000;
    let s = m
        .mmap(
            top - 4 * P,
            4 * P,
            Prot::RW,
            MapFlags::PRIVATE_ANON | MapFlags::FIXED | MapFlags::GROWSDOWN,
            None,
            0,
        )
        .unwrap();
    wb(&mut m, s - 3 * P, 5);
    let v = m.vma_at(s - 3 * P).unwrap();
    assert_eq!((v.start(), v.end()), (s - 3 * P, top));
    assert_eq!(m.stats().total_vm_pages, 7);
    assert_eq!(m.map_count(), 1);
    // not past RLIMIT_STACK
    assert!(m.read_byte(top - (9 << 20)).is_err());
    check(&m);
}

#[test]
fn bottom_up_fallback_when_top_down_is_full() {
    let cfg = Config {
        mmap_base: 0x20_0000,
        ..Config::default()
    };
    let mut m = AddressSpace::with_config(cfg);
    let a = m
        .mmap(0, 0x1f_f000, Prot::RW, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(a, m.config().mmap_legacy_base);
    // a 2 MiB multiple: the padded bottom-up range, aligned up
    let b = m
        .mmap(0, 0x20_0000, Prot::READ, MapFlags::PRIVATE_ANON, None, 0)
        .unwrap();
    assert_eq!(b, (a + 0x1f_f000).next_multiple_of(0x20_0000));
    check(&m);
}

#[test]
fn many_mappings_pack_down_and_alternate() {
    let mut m = AddressSpace::new();
    let base = m.config().mmap_base;
    for i in 0..200u64 {
        let prot = if i % 2 == 0 { Prot::READ } else { Prot::RW };
        let a = m.mmap(0, P, prot, MapFlags::PRIVATE_ANON, None, 0).unwrap();
        assert_eq!(a, base - (i + 1) * P);
    }
    assert_eq!(m.map_count(), 200);
    check(&m);
}

#[test]
fn map_32bit_places_bottom_up_between_1_and_2_gib() {
    let mut m = AddressSpace::new();
    let low = MapFlags::PRIVATE_ANON | MapFlags::BIT32;
    let map = |m: &mut AddressSpace, hint: u64, len: u64, flags: MapFlags| {
        m.mmap(hint, len, Prot::RW, flags, None, 0)
    };
    assert_eq!(map(&mut m, 0, P, low), Ok(0x4000_0000));
    assert_eq!(map(&mut m, 0, 2 * P, low), Ok(0x4000_1000));
    // A multiple of 2 MiB is aligned to 2 MiB, as any anonymous mapping.
    assert_eq!(map(&mut m, 0, 64 << 20, low), Ok(0x4020_0000));
    // A free hint inside the window is taken; one above 2 GiB is not.
    assert_eq!(map(&mut m, 0x5000_0000, P, low), Ok(0x5000_0000));
    assert_eq!(map(&mut m, 0x9000_0000, P, low), Ok(0x4000_3000));
    // No fallback outside the window.
    assert_eq!(
        map(&mut m, 0, 0x3000_0000, low),
        Err(maple_mm::Errno::ENOMEM)
    );
    // With MAP_FIXED the flag does nothing.
    assert_eq!(
        map(&mut m, 0x9000_0000, P, low | MapFlags::FIXED),
        Ok(0x9000_0000)
    );
    // Without it, placement is top-down as usual.
    let base = m.config().mmap_base;
    assert_eq!(map(&mut m, 0, P, MapFlags::PRIVATE_ANON), Ok(base - P));
    check(&m);
}

#[test]
fn the_legacy_layout_places_bottom_up() {
    let mut m = AddressSpace::with_config(Config {
        legacy_layout: true,
        ..Config::default()
    });
    let base = m.config().mmap_legacy_base;
    assert_eq!(base, 0x2aaa_aaaa_b000);
    let pa = MapFlags::PRIVATE_ANON;
    let map = |m: &mut AddressSpace, hint: u64, len: u64| m.mmap(hint, len, Prot::RW, pa, None, 0);
    assert_eq!(map(&mut m, 0, P), Ok(base));
    assert_eq!(map(&mut m, 0, 2 * P), Ok(base + P));
    // 2 MiB-aligned, but not moved up a block as in the top-down layout.
    assert_eq!(map(&mut m, 0, 4 << 20), Ok(0x2aaa_aac0_0000));
    // A free hint is taken; an occupied one gives the lowest fit.
    assert_eq!(map(&mut m, 0x1000_0000, P), Ok(0x1000_0000));
    m.munmap(base, P).unwrap();
    assert_eq!(map(&mut m, base + P, P), Ok(base));
    check(&m);
}
