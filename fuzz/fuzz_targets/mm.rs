//! Fuzzing of the address-space model: random system calls, `fork` (also
//! failing half way), reads and writes over a few processes, against a
//! page-by-page model of private anonymous memory, with `validate()` after
//! every step.
//!
//! The model knows, for every mapped page, its protection, what it reads
//! back, its fork advice and whether it is sealed (`mseal`). Files, shared memory, `mremap` and `brk` are
//! left to the property test `crates/maple-mm/tests/model.rs`, whose model
//! follows their kernel rules; here the fuzzer explores long sequences of the
//! calls that split, merge and copy VMAs and page tables.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maple_mm::{
    AddressSpace, Advice, Errno, FaultKind, ForkOptions, MapFlags, Prot, PtStrategy, TreeStrategy,
    VmFlags, PAGE_SIZE as P,
};
use std::collections::BTreeMap;

/// Every way fork can build the child's VMA tree.
const TREE_STRATEGIES: [TreeStrategy; 3] = [
    TreeStrategy::Insert,
    TreeStrategy::Append,
    TreeStrategy::Dup,
];
/// Both ways fork can give the child page tables.
const PT_STRATEGIES: [PtStrategy; 2] = [PtStrategy::Copy, PtStrategy::CowPte];

/// 48 pages straddling a 2 MiB boundary (page 16), so huge-page alignment
/// rules come into play.
const BASE: u64 = 0x4000_0000 - 16 * P;
const WINDOW: u64 = 48;
const MAX_PROCS: usize = 4;

#[derive(arbitrary::Arbitrary, Debug)]
enum Op {
    Mmap {
        proc: u8,
        page: u8,
        n: u8,
        prot: u8,
        fixed: bool,
    },
    Munmap {
        proc: u8,
        page: u8,
        n: u8,
    },
    Mprotect {
        proc: u8,
        page: u8,
        n: u8,
        prot: u8,
    },
    Madvise {
        proc: u8,
        page: u8,
        n: u8,
        advice: u8,
    },
    Mseal {
        proc: u8,
        page: u8,
        n: u8,
    },
    Write {
        proc: u8,
        page: u8,
        off: u16,
        len: u16,
        byte: u8,
    },
    Read {
        proc: u8,
        page: u8,
        off: u16,
    },
    Fork {
        proc: u8,
        tree: u8,
        pt: u8,
        fail_at: Option<u8>,
    },
    Exit {
        proc: u8,
    },
}

#[derive(Clone, Debug)]
struct Page {
    prot: Prot,
    /// `None`: never written since mapped (or dropped): reads zeros.
    data: Option<Vec<u8>>,
    dontfork: bool,
    wipeonfork: bool,
    sealed: bool,
}

impl Proc {
    /// Whether a page of `addr..addr + n` pages is sealed.
    fn any_sealed(&self, addr: u64, n: u64) -> bool {
        (0..n).any(|k| self.pages.get(&(addr + k * P)).is_some_and(|p| p.sealed))
    }
}

struct Proc {
    mm: AddressSpace,
    pages: BTreeMap<u64, Page>,
}

fn prot_of(x: u8) -> Prot {
    [Prot::NONE, Prot::READ, Prot::WRITE, Prot::RW][usize::from(x % 4)]
}

fn window(page: u8, n: u8) -> (u64, u64) {
    let page = u64::from(page) % WINDOW;
    let n = 1 + u64::from(n) % 12;
    (BASE + page * P, n)
}

fuzz_target!(|ops: Vec<Op>| {
    let mut procs = vec![Proc {
        mm: AddressSpace::new(),
        pages: BTreeMap::new(),
    }];
    for op in &ops {
        step(&mut procs, op);
    }
    for i in 0..procs.len() {
        check(&mut procs[i], None);
    }
});

fn step(procs: &mut Vec<Proc>, op: &Op) {
    let count = procs.len();
    let pick = move |p: u8| usize::from(p) % count;
    match *op {
        Op::Mmap {
            proc,
            page,
            n,
            prot,
            fixed,
        } => {
            let pr = &mut procs[pick(proc)];
            let (addr, n) = window(page, n);
            let prot = prot_of(prot);
            let flags = if fixed {
                MapFlags::PRIVATE_ANON | MapFlags::FIXED
            } else {
                MapFlags::PRIVATE_ANON
            };
            let r = pr.mm.mmap(addr, n * P, prot, flags, None, 0);
            if fixed && pr.any_sealed(addr, n) {
                assert_eq!(r, Err(Errno::EPERM), "MAP_FIXED over a sealed page");
                check(pr, Some((addr, n)));
                return;
            }
            let at = r.expect("mmap");
            if fixed {
                assert_eq!(at, addr, "MAP_FIXED address");
            }
            for k in 0..n {
                let fresh = Page {
                    prot,
                    data: None,
                    dontfork: false,
                    wipeonfork: false,
                    sealed: false,
                };
                let old = pr.pages.insert(at + k * P, fresh);
                assert!(
                    fixed || old.is_none(),
                    "mmap without MAP_FIXED reused {at:#x}"
                );
            }
            check(pr, Some((at, n)));
        }
        Op::Munmap { proc, page, n } => {
            let pr = &mut procs[pick(proc)];
            let (addr, n) = window(page, n);
            let r = pr.mm.munmap(addr, n * P);
            if pr.any_sealed(addr, n) {
                assert_eq!(r, Err(Errno::EPERM), "munmap of a sealed page");
                check(pr, Some((addr, n)));
                return;
            }
            r.expect("munmap");
            for k in 0..n {
                pr.pages.remove(&(addr + k * P));
            }
            check(pr, Some((addr, n)));
        }
        Op::Mprotect {
            proc,
            page,
            n,
            prot,
        } => {
            let pr = &mut procs[pick(proc)];
            let (addr, n) = window(page, n);
            let prot = prot_of(prot);
            let r = pr.mm.mprotect(addr, n * P, prot);
            // Linux changes the mapped run that starts at `addr`, up to the
            // first hole (ENOMEM) or sealed VMA (EPERM).
            let mut want = Ok(());
            for k in 0..n {
                let Some(p) = pr.pages.get_mut(&(addr + k * P)) else {
                    want = Err(Errno::ENOMEM);
                    break;
                };
                if p.sealed {
                    want = Err(Errno::EPERM);
                    break;
                }
                p.prot = prot;
            }
            assert_eq!(r, want, "mprotect");
            check(pr, Some((addr, n)));
        }
        Op::Madvise {
            proc,
            page,
            n,
            advice,
        } => {
            let pr = &mut procs[pick(proc)];
            let (addr, n) = window(page, n);
            let advice = [
                Advice::DontNeed,
                Advice::DontFork,
                Advice::DoFork,
                Advice::WipeOnFork,
                Advice::KeepOnFork,
            ][usize::from(advice % 5)];
            let r = pr.mm.madvise(addr, n * P, advice);
            // Linux advises every mapped part of the range, and reports a
            // hole with ENOMEM only after that; a sealed VMA that may not be
            // written refuses advice that discards (EPERM), which ends the
            // call there.
            let discard = matches!(
                advice,
                Advice::DontNeed | Advice::DontFork | Advice::WipeOnFork
            );
            let mut want = Ok(());
            for k in 0..n {
                let Some(p) = pr.pages.get_mut(&(addr + k * P)) else {
                    want = Err(Errno::ENOMEM);
                    continue;
                };
                if p.sealed && discard && !p.prot.contains(Prot::WRITE) {
                    want = Err(Errno::EPERM);
                    break;
                }
                match advice {
                    Advice::DontNeed => p.data = None,
                    Advice::DontFork => p.dontfork = true,
                    Advice::DoFork => p.dontfork = false,
                    Advice::WipeOnFork => p.wipeonfork = true,
                    Advice::KeepOnFork => p.wipeonfork = false,
                    _ => unreachable!(),
                }
            }
            assert_eq!(r, want, "madvise {advice:?}");
            check(pr, Some((addr, n)));
        }
        Op::Mseal { proc, page, n } => {
            let pr = &mut procs[pick(proc)];
            let (addr, n) = window(page, n);
            let all_mapped = (0..n).all(|k| pr.pages.contains_key(&(addr + k * P)));
            let r = pr.mm.mseal(addr, n * P, 0);
            if all_mapped {
                r.expect("mseal");
                for k in 0..n {
                    pr.pages.get_mut(&(addr + k * P)).unwrap().sealed = true;
                }
            } else {
                assert_eq!(r, Err(Errno::ENOMEM), "mseal over a hole");
            }
            check(pr, Some((addr, n)));
        }
        Op::Write {
            proc,
            page,
            off,
            len,
            byte,
        } => {
            let pr = &mut procs[pick(proc)];
            let addr = window(page, 0).0 + u64::from(off % P as u16);
            let len = 1 + u64::from(len % 9000);
            let (first, last) = (addr & !(P - 1), (addr + len - 1) & !(P - 1));
            let expect = (0..=(last - first) / P)
                .map(|k| first + k * P)
                .find_map(|a| match pr.pages.get(&a) {
                    None => Some(FaultKind::Unmapped),
                    Some(p) if !p.prot.contains(Prot::WRITE) => Some(FaultKind::Protection),
                    Some(_) => None,
                });
            let r = pr.mm.write(addr, &vec![byte; len as usize]);
            assert_eq!(r.err().map(|f| f.kind), expect, "write at {addr:#x}+{len}");
            if expect.is_none() {
                let mut a = first;
                while a <= last {
                    let (s, e) = (addr.max(a) - a, (addr + len).min(a + P) - a);
                    let p = pr.pages.get_mut(&a).unwrap();
                    p.data.get_or_insert_with(|| vec![0; P as usize])[s as usize..e as usize]
                        .fill(byte);
                    a += P;
                }
            }
            check(pr, Some((first, (last - first) / P + 1)));
        }
        Op::Read { proc, page, off } => {
            let pr = &mut procs[pick(proc)];
            let addr = window(page, 0).0 + u64::from(off % P as u16);
            let r = pr.mm.read_byte(addr);
            match pr.pages.get(&(addr & !(P - 1))) {
                None => assert_eq!(r.unwrap_err().kind, FaultKind::Unmapped),
                Some(p) if p.prot == Prot::NONE => {
                    assert_eq!(r.unwrap_err().kind, FaultKind::Protection)
                }
                Some(p) => {
                    let want = p.data.as_ref().map_or(0, |d| d[(addr % P) as usize]);
                    assert_eq!(r.expect("readable"), want, "byte at {addr:#x}");
                }
            }
        }
        Op::Fork {
            proc,
            tree,
            pt,
            fail_at,
        } => {
            if procs.len() >= MAX_PROCS {
                return;
            }
            let i = pick(proc);
            let pr = &mut procs[i];
            let opts = ForkOptions::new(
                TREE_STRATEGIES[usize::from(tree) % TREE_STRATEGIES.len()],
                PT_STRATEGIES[usize::from(pt) % PT_STRATEGIES.len()],
            );
            if let Some(n) = fail_at {
                pr.mm.memory().inject_fork_failure(u64::from(n));
            }
            let before = pr.mm.maps();
            let r = pr.mm.fork_with(opts);
            pr.mm.memory().clear_fork_failure();
            let Ok(mm) = r else {
                assert!(fail_at.is_some(), "fork failed without an injected failure");
                assert_eq!(pr.mm.maps(), before, "a failed fork changed the parent");
                check(pr, None);
                return;
            };
            let mut pages = BTreeMap::new();
            for (&a, p) in &pr.pages {
                if !p.dontfork {
                    let mut c = p.clone();
                    if p.wipeonfork {
                        c.data = None;
                    }
                    pages.insert(a, c);
                }
            }
            procs.push(Proc { mm, pages });
            let child = procs.len() - 1;
            check(&mut procs[i], None);
            check(&mut procs[child], None);
        }
        Op::Exit { proc } => {
            if procs.len() > 1 {
                procs.swap_remove(pick(proc));
                for pr in procs.iter_mut() {
                    check(pr, None);
                }
            }
        }
    }
}

/// `validate()` passes, the mapped pages and their protections are the
/// model's, and the readable pages of `pages` (all pages if `None`) read back
/// what the model says.
fn check(pr: &mut Proc, pages: Option<(u64, u64)>) {
    if let Err(e) = pr.mm.validate() {
        panic!("validate: {e}\n{}", pr.mm.maps());
    }
    let mapped: u64 = pr.mm.vmas().map(|v| (v.end() - v.start()) / P).sum();
    assert_eq!(
        mapped,
        pr.pages.len() as u64,
        "mapped pages\n{}",
        pr.mm.maps()
    );
    for (&a, p) in &pr.pages {
        let vma = pr
            .mm
            .vma_at(a)
            .unwrap_or_else(|| panic!("{a:#x} unmapped\n{}", pr.mm.maps()));
        assert_eq!(vma.prot(), p.prot, "protection at {a:#x}");
        assert_eq!(
            vma.flags().contains(VmFlags::SEALED),
            p.sealed,
            "seal at {a:#x}"
        );
    }
    let addrs: Vec<u64> = match pages {
        Some((first, n)) => (0..n).map(|k| first + k * P).collect(),
        None => pr.pages.keys().copied().collect(),
    };
    let mut buf = vec![0u8; P as usize];
    for a in addrs {
        let Some(p) = pr.pages.get(&a) else {
            assert!(pr.mm.vma_at(a).is_none(), "{a:#x} mapped");
            continue;
        };
        // Only PROT_NONE cannot be read (x86-64: write implies read).
        if p.prot != Prot::NONE {
            pr.mm.read(a, &mut buf).expect("readable page");
            let zero;
            let want = match &p.data {
                Some(d) => d.as_slice(),
                None => {
                    zero = vec![0u8; P as usize];
                    zero.as_slice()
                }
            };
            assert!(buf == want, "contents of the page at {a:#x}");
        }
    }
}
