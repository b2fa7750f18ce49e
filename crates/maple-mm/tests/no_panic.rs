//! Property test: system calls with arbitrary arguments never panic, and a
//! call that fails changes nothing, except `mprotect`, `madvise`, `mlock`,
//! `munlock` and `mseal`, which Linux applies VMA by VMA up to the failure
//! (tests/errors.rs, tests/mlock.rs and tests/mseal.rs check how), and
//! `mremap` with `MREMAP_FIXED`, which unmaps the target first.

mod common;
use common::*;
use maple_mm::{
    AddressSpace, Config, FileId, MapFlags, OpenFile, OpenMode, Prot, RemapFlags, Special, SysvShm,
    TASK_SIZE,
};
use proptest::prelude::*;

fn addr() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(0x1000),
        Just(0x10000),
        Just(TASK_SIZE),
        Just(TASK_SIZE - P),
        Just(u64::MAX),
        Just(!(P - 1)),
        (0x3000_0000u64..0x3000_0000 + 64 * P),
        (0x3000_0000u64..0x3000_0000 + 64 * P).prop_map(|a| a & !(P - 1)),
        any::<u64>(),
    ]
}

fn len() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(P),
        (1..20u64).prop_map(|n| n * P),
        Just(TASK_SIZE),
        Just(u64::MAX),
        Just(u64::MAX - P),
        any::<u64>(),
        (1..100_000u64),
    ]
}

#[derive(Debug, Clone)]
enum Call {
    Mmap(u64, u64, u32, u32, bool, u64),
    Munmap(u64, u64),
    Mprotect(u64, u64, u32),
    Madvise(u64, u64, i32),
    Mremap(u64, u64, u64, u32, u64),
    Brk(u64),
    Read(u64, u16),
    Write(u64, u16),
    Fork,
    /// mmap of an `OpenFile`: (addr, len, prot, flags, open mode, thp, offset)
    MmapFile(u64, u64, u32, u32, u8, bool, u64),
    /// map_special: (kind, addr, len)
    Special(u8, u64, u64),
    AnonVmaPrepare(u64),
    /// mlock2 / munlock: (addr, len, flags, lock)
    Mlock(u64, u64, u32, bool),
    /// mlockall (flags) or, for `None`, munlockall
    Mlockall(Option<u32>),
    /// shmat: (shmid, size, addr, flags)
    Shmat(i32, u64, u64, u32),
    Shmdt(u64),
    /// mseal: (addr, len, flags)
    Mseal(u64, u64, u64),
    /// remap_file_pages: (start, size, prot, pgoff, flags)
    RemapFilePages(u64, u64, u64, u64, u64),
}

fn call() -> impl Strategy<Value = Call> {
    let prot = prop_oneof![0..8u32, any::<u32>(), Just(0x0100_0003), Just(0x0300_0001)];
    let flags = prop_oneof![
        Just(0x22u32),
        Just(0x32),
        Just(0x21),
        Just(0x02),
        Just(0x01),
        Just(0x10_0022),
        Just(0x0122),
        Just(0x8022),
        any::<u32>()
    ];
    prop_oneof![
        4 => (addr(), len(), prot.clone(), flags, any::<bool>(), addr()).prop_map(|(a, l, p, f, file, o)| Call::Mmap(a, l, p, f, file, o)),
        2 => (addr(), len()).prop_map(|(a, l)| Call::Munmap(a, l)),
        2 => (addr(), len(), prot).prop_map(|(a, l, p)| Call::Mprotect(a, l, p)),
        2 => (addr(), len(), prop_oneof![0..26i32, any::<i32>()]).prop_map(|(a, l, x)| Call::Madvise(a, l, x)),
        2 => (addr(), len(), len(), prop_oneof![0..8u32, any::<u32>()], addr()).prop_map(|(a, o, n, f, t)| Call::Mremap(a, o, n, f, t)),
        1 => addr().prop_map(Call::Brk),
        2 => (addr(), any::<u16>()).prop_map(|(a, n)| Call::Read(a, n)),
        2 => (addr(), any::<u16>()).prop_map(|(a, n)| Call::Write(a, n)),
        1 => Just(Call::Fork),
        2 => (addr(), len(), 0..8u32, prop_oneof![Just(0x01u32), Just(0x02), Just(0x03), Just(0x08_0003), any::<u32>()], 0..3u8, any::<bool>(), prop_oneof![Just(0u64), Just(0x1000), Just(0x20_0000), any::<u64>()])
            .prop_map(|(a, l, p, f, m, t, o)| Call::MmapFile(a, l, p, f, m, t, o)),
        1 => (0..4u8, addr(), len()).prop_map(|(k, a, l)| Call::Special(k, a, l)),
        1 => addr().prop_map(Call::AnonVmaPrepare),
        2 => (addr(), len(), prop_oneof![Just(0u32), Just(1), any::<u32>()], any::<bool>()).prop_map(|(a, l, f, k)| Call::Mlock(a, l, f, k)),
        1 => prop_oneof![Just(None), (0..9u32).prop_map(Some), any::<u32>().prop_map(Some)].prop_map(Call::Mlockall),
        2 => (prop_oneof![0..3i32, any::<i32>()], prop_oneof![Just(0u64), 1..64 * P, any::<u64>()], addr(), prop_oneof![Just(0u32), Just(0o10000), Just(0o20000), Just(0o40000), Just(0o60000), Just(0o100000), any::<u32>()])
            .prop_map(|(id, sz, a, f)| Call::Shmat(id, sz, a, f)),
        1 => addr().prop_map(Call::Shmdt),
        1 => (addr(), len(), prop_oneof![Just(0u64), any::<u64>()]).prop_map(|(a, l, f)| Call::Mseal(a, l, f)),
        1 => (addr(), len(), prop_oneof![Just(0u64), any::<u64>()], prop_oneof![0..8u64, any::<u64>()], prop_oneof![Just(0u64), Just(0x1_0000), any::<u64>()])
            .prop_map(|(a, l, p, o, f)| Call::RemapFilePages(a, l, p, o, f)),
    ]
    .prop_map(within_memory)
}

/// Most bytes a call may populate. The model keeps a frame for every
/// resident page, as Linux keeps a page: `MAP_POPULATE`,
/// `MADV_POPULATE_READ`/`_WRITE` or `remap_file_pages` over terabytes would
/// exhaust the memory of the machine running the test (the model's objects
/// have no end of file to stop at). Larger requests of those calls are
/// kept, without the population.
const MOST_POPULATED: u64 = 256 << 20;

const MAP_POPULATE: u32 = 0x8000;
const MAP_NONBLOCK: u64 = 0x1_0000;
const MADV_POPULATE_READ: i32 = 22;
const MADV_POPULATE_WRITE: i32 = 23;
/// The advice that stands in for a population too large.
const MADV_NORMAL: i32 = 0;

/// `c` with a population over [`MOST_POPULATED`] dropped.
fn within_memory(c: Call) -> Call {
    match c {
        Call::Mmap(a, l, p, f, file, o) if l > MOST_POPULATED => {
            Call::Mmap(a, l, p, f & !MAP_POPULATE, file, o)
        }
        Call::MmapFile(a, l, p, f, m, t, o) if l > MOST_POPULATED => {
            Call::MmapFile(a, l, p, f & !MAP_POPULATE, m, t, o)
        }
        Call::Madvise(a, l, x)
            if l > MOST_POPULATED && (x == MADV_POPULATE_READ || x == MADV_POPULATE_WRITE) =>
        {
            Call::Madvise(a, l, MADV_NORMAL)
        }
        Call::RemapFilePages(a, l, p, o, f) if l > MOST_POPULATED => {
            Call::RemapFilePages(a, l, p, o, f | MAP_NONBLOCK)
        }
        c => c,
    }
}

fn run(mm: &mut AddressSpace, c: &Call) -> bool {
    match *c {
        Call::Mmap(a, l, p, f, file, o) => mm
            .mmap(
                a,
                l,
                Prot::from_bits_retain(p),
                MapFlags::from_bits_retain(f),
                file.then_some(FileId(1)),
                o,
            )
            .is_ok(),
        Call::Munmap(a, l) => mm.munmap(a, l).is_ok(),
        Call::Mprotect(a, l, p) => mm.mprotect(a, l, Prot::from_bits_retain(p)).is_ok(),
        Call::Madvise(a, l, x) => mm.madvise_raw(a, l, x).is_none_or(|r| r.is_ok()),
        Call::Mremap(a, o, n, f, t) => mm
            .mremap(a, o, n, RemapFlags::from_bits_retain(f), t)
            .is_ok(),
        Call::Brk(a) => {
            mm.brk(a);
            true
        }
        Call::Read(a, n) => mm.read(a, &mut vec![0u8; n as usize]).is_ok(),
        Call::Write(a, n) => mm.write(a, &vec![7u8; n as usize]).is_ok(),
        Call::Fork => mm.fork().is_ok(),
        Call::MmapFile(a, l, p, f, m, t, o) => {
            let mode = [OpenMode::ReadOnly, OpenMode::WriteOnly, OpenMode::ReadWrite][m as usize];
            let file = OpenFile::new(FileId(2)).mode(mode).thp_aligned(t);
            mm.mmap_file(
                a,
                l,
                Prot::from_bits_retain(p),
                MapFlags::from_bits_retain(f),
                file,
                o,
            )
            .is_ok()
        }
        Call::Special(k, a, l) => {
            let kind = [
                Special::Vvar,
                Special::VvarVclock,
                Special::Vdso,
                Special::Vsyscall,
            ][k as usize];
            mm.map_special(kind, a, l).is_ok()
        }
        Call::AnonVmaPrepare(a) => {
            mm.anon_vma_prepare(a);
            true
        }
        Call::Mlock(a, l, f, true) => mm.mlock2(a, l, f).is_ok(),
        Call::Mlock(a, l, _, false) => mm.munlock(a, l).is_ok(),
        Call::Mlockall(Some(f)) => mm.mlockall(f).is_ok(),
        Call::Mlockall(None) => mm.munlockall().is_ok(),
        Call::Shmat(id, size, a, f) => {
            let seg = SysvShm {
                shmid: id,
                key: id,
                size,
            };
            mm.shmat(seg, a, f).is_ok()
        }
        Call::Shmdt(a) => mm.shmdt(a).is_ok(),
        Call::Mseal(a, l, f) => mm.mseal(a, l, f).is_ok(),
        Call::RemapFilePages(a, l, p, o, f) => mm.remap_file_pages(a, l, p, o, f).is_ok(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(200), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_calls_never_panic(calls in prop::collection::vec(call(), 1..40), small in any::<bool>(), may_lock in any::<bool>()) {
        let cfg = if small { Config { max_map_count: 6, mmap_min_addr: 0, ..Config::default() } } else { Config::default() };
        // A lock populates every page it covers: RLIMIT_MEMLOCK keeps the
        // populated part small (and 0 forbids locking).
        let cfg = Config { memlock_limit: Some(if may_lock { 1 << 20 } else { 0 }), ..cfg };
        let mut mm = AddressSpace::with_config(cfg);
        for c in &calls {
            let before = (mm.maps(), mm.stats());
            let ok = run(&mut mm, c);
            // MREMAP_FIXED (2) unmaps the target before it looks the old
            // VMA up again (EFAULT if the target held it), as in Linux.
            let partial = matches!(c, Call::Mprotect(..) | Call::Madvise(..) | Call::Mlock(..) | Call::Mseal(..))
                || matches!(c, Call::Mremap(_, _, _, f, _) if f & 2 != 0);
            if !ok && !partial {
                let after = (mm.maps(), mm.stats());
                prop_assert_eq!(&before.0, &after.0, "{:?} failed but changed the layout", c);
                prop_assert_eq!(before.1.total_vm_pages, after.1.total_vm_pages);
            }
            check(&mm);
        }
    }
}
