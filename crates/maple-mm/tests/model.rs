//! Property test: random system-call sequences over a few processes
//! (fork, exit, mmap, munmap, mprotect, madvise, mremap, reads and writes)
//! against a plain page-by-page reference model, with `validate()` after
//! every step.
//!
//! The model knows what each page should read back and whether an access
//! or a call must succeed; where the outcome depends on VMA boundaries
//! (mremap growing in place or moving) it follows the implementation's
//! choice and checks the consequences. A failed call changes what Linux
//! changes before failing: `mprotect` the pages before the first hole,
//! `madvise` every mapped page up to the first VMA that refuses.

mod common;
use common::*;
use maple_mm::{AddressSpace, Advice, FaultKind, FileId, ForkOptions, MapFlags, Prot, RemapFlags};
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// Window: 48 pages straddling a 2 MiB boundary (page 16).
const BASE: u64 = 0x4000_0000 - 16 * P;
const W: u64 = 48;

type Obj = (u8, u64); // (0 = shm, 1 = file), id

#[derive(Clone, Debug)]
struct MPage {
    prot: Prot,
    shared: bool,
    obj: Option<Obj>,
    pgoff: u64,
    data: Option<Vec<u8>>,
    dontcopy: bool,
    wipe: bool,
}

struct Proc {
    mm: AddressSpace,
    pages: BTreeMap<u64, MPage>,
}

#[derive(Default)]
struct Objs {
    pages: HashMap<(Obj, u64), Vec<u8>>,
}

impl Objs {
    fn read(&self, o: Obj, pgoff: u64) -> Vec<u8> {
        self.pages
            .get(&(o, pgoff))
            .cloned()
            .unwrap_or_else(|| vec![0; P as usize])
    }
}

fn content(objs: &Objs, p: &MPage) -> Vec<u8> {
    match (&p.data, p.obj) {
        (Some(d), _) => d.clone(),
        (None, Some(o)) => objs.read(o, p.pgoff),
        (None, None) => vec![0; P as usize],
    }
}

#[derive(Clone, Debug)]
enum Op {
    Mmap {
        proc: usize,
        page: u64,
        n: u64,
        prot: u8,
        kind: u8,
        file: u64,
        off: u64,
        fixed: bool,
    },
    Munmap {
        proc: usize,
        page: u64,
        n: u64,
    },
    Mprotect {
        proc: usize,
        page: u64,
        n: u64,
        prot: u8,
    },
    Madvise {
        proc: usize,
        page: u64,
        n: u64,
        adv: u8,
    },
    Mremap {
        proc: usize,
        page: u64,
        old_n: u64,
        new_n: u64,
        mode: u8,
        to: u64,
    },
    Write {
        proc: usize,
        page: u64,
        off: u16,
        byte: u8,
        len: u16,
    },
    Read {
        proc: usize,
        page: u64,
        off: u16,
    },
    Fork {
        proc: usize,
        tree: u8,
        pt: u8,
    },
    Brk {
        proc: usize,
        delta: i16,
    },
    Exit {
        proc: usize,
    },
}

fn prot_of(x: u8) -> Prot {
    [Prot::NONE, Prot::READ, Prot::WRITE, Prot::RW][x as usize % 4]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let pr = 0..3usize;
    let page = 0..W;
    prop_oneof![
        4 => (pr.clone(), page.clone(), 1..12u64, 0..4u8, 0..6u8, 1..3u64, 0..8u64, prop::bool::weighted(0.85))
            .prop_map(|(proc, page, n, prot, kind, file, off, fixed)| Op::Mmap { proc, page, n, prot, kind, file, off, fixed }),
        2 => (pr.clone(), page.clone(), 1..12u64).prop_map(|(proc, page, n)| Op::Munmap { proc, page, n }),
        3 => (pr.clone(), page.clone(), 1..12u64, 0..4u8).prop_map(|(proc, page, n, prot)| Op::Mprotect { proc, page, n, prot }),
        2 => (pr.clone(), page.clone(), 1..12u64, 0..9u8).prop_map(|(proc, page, n, adv)| Op::Madvise { proc, page, n, adv }),
        2 => (pr.clone(), page.clone(), 1..8u64, 1..10u64, 0..4u8, 0..W)
            .prop_map(|(proc, page, old_n, new_n, mode, to)| Op::Mremap { proc, page, old_n, new_n, mode, to }),
        6 => (pr.clone(), page.clone(), 0..4096u16, any::<u8>(), 1..6000u16)
            .prop_map(|(proc, page, off, byte, len)| Op::Write { proc, page, off, byte, len }),
        3 => (pr.clone(), page.clone(), 0..4096u16).prop_map(|(proc, page, off)| Op::Read { proc, page, off }),
        2 => (pr.clone(), 0..3u8, 0..2u8).prop_map(|(proc, tree, pt)| Op::Fork { proc, tree, pt }),
        1 => pr.clone().prop_map(|proc| Op::Exit { proc }),
        1 => (pr, -12000i16..20000).prop_map(|(proc, delta)| Op::Brk { proc, delta }),
    ]
}

struct World {
    procs: Vec<Proc>,
    objs: Objs,
    next_shm: u64,
}

impl World {
    fn new() -> World {
        World {
            procs: vec![Proc {
                mm: AddressSpace::new(),
                pages: BTreeMap::new(),
            }],
            objs: Objs::default(),
            next_shm: 0,
        }
    }

    fn check_proc(&mut self, i: usize, pages: impl Iterator<Item = u64>) {
        let objs = &self.objs;
        let pr = &mut self.procs[i];
        check(&pr.mm);
        let total: u64 = pr.pages.len() as u64;
        assert_eq!(
            pr.mm.stats().total_vm_pages,
            total,
            "total_vm of proc {i}\n{}",
            pr.mm.maps()
        );
        for a in pages {
            let m = pr.pages.get(&a);
            let v = pr.mm.vma_at(a);
            assert_eq!(
                m.is_some(),
                v.is_some(),
                "proc {i} page {a:#x} mapped?\n{}",
                pr.mm.maps()
            );
            if let (Some(m), Some(v)) = (m, v) {
                assert_eq!(v.prot(), m.prot, "proc {i} page {a:#x} prot");
                if m.prot != Prot::NONE {
                    let mut buf = vec![0u8; P as usize];
                    pr.mm.read(a, &mut buf).unwrap();
                    assert!(
                        buf == content(objs, m),
                        "proc {i} page {a:#x} contents differ"
                    );
                }
            }
        }
    }

    fn check_all(&mut self) {
        for i in 0..self.procs.len() {
            let pages: Vec<u64> = self.procs[i].pages.keys().copied().collect();
            self.check_proc(i, pages.into_iter());
        }
    }

    fn apply(&mut self, op: &Op) {
        let np = self.procs.len();
        let pi = |p: usize| p % np;
        match *op {
            Op::Mmap {
                proc,
                page,
                n,
                prot,
                kind,
                file,
                off,
                fixed,
            } => {
                let i = pi(proc);
                let addr = BASE + page * P;
                let prot = prot_of(prot);
                let (flags, f, obj_kind) = match kind {
                    0..=2 => (MapFlags::PRIVATE_ANON, None, 0),
                    3 => (MapFlags::SHARED_ANON, None, 1),
                    4 => (MapFlags::PRIVATE, Some(FileId(file)), 2),
                    _ => (MapFlags::SHARED, Some(FileId(file)), 3),
                };
                let flags = if fixed {
                    flags | MapFlags::FIXED
                } else {
                    flags
                };
                let pr = &mut self.procs[i];
                let r = pr.mm.mmap(addr, n * P, prot, flags, f, off * P);
                let a = r.expect("mmap must succeed");
                if fixed {
                    assert_eq!(a, addr);
                } else {
                    for k in 0..n {
                        assert!(
                            !pr.pages.contains_key(&(a + k * P)),
                            "placed over a mapping"
                        );
                    }
                }
                let obj = match obj_kind {
                    1 => {
                        self.next_shm += 1;
                        Some((0u8, self.next_shm))
                    }
                    2 | 3 => Some((1u8, file)),
                    _ => None,
                };
                for k in 0..n {
                    pr.pages.insert(
                        a + k * P,
                        MPage {
                            prot,
                            shared: obj_kind == 1 || obj_kind == 3,
                            obj,
                            pgoff: if obj_kind == 1 { k } else { off + k },
                            data: None,
                            dontcopy: false,
                            wipe: false,
                        },
                    );
                }
                self.check_proc(i, (0..n).map(|k| a + k * P));
            }
            Op::Munmap { proc, page, n } => {
                let i = pi(proc);
                let pr = &mut self.procs[i];
                pr.mm
                    .munmap(BASE + page * P, n * P)
                    .expect("munmap must succeed");
                for k in 0..n {
                    pr.pages.remove(&(BASE + (page + k) * P));
                }
                self.check_proc(
                    i,
                    (0..n + 2).map(|k| BASE + (page + k).saturating_sub(1) * P),
                );
            }
            Op::Mprotect {
                proc,
                page,
                n,
                prot,
            } => {
                let i = pi(proc);
                let prot = prot_of(prot);
                let pr = &mut self.procs[i];
                let all = (0..n).all(|k| pr.pages.contains_key(&(BASE + (page + k) * P)));
                let r = pr.mm.mprotect(BASE + page * P, n * P, prot);
                assert_eq!(r.is_ok(), all, "mprotect {r:?}");
                // Linux changes the pages up to the first hole.
                for k in 0..n {
                    match pr.pages.get_mut(&(BASE + (page + k) * P)) {
                        Some(p) => p.prot = prot,
                        None => break,
                    }
                }
                self.check_proc(i, (0..n).map(|k| BASE + (page + k) * P));
            }
            Op::Madvise { proc, page, n, adv } => {
                let i = pi(proc);
                let advice = [
                    Advice::DontNeed,
                    Advice::DontFork,
                    Advice::DoFork,
                    Advice::WipeOnFork,
                    Advice::KeepOnFork,
                    Advice::HugePage,
                    Advice::NoHugePage,
                    Advice::DontDump,
                    Advice::DoDump,
                ][adv as usize];
                let pr = &mut self.procs[i];
                let range: Vec<u64> = (0..n).map(|k| BASE + (page + k) * P).collect();
                let all = range.iter().all(|a| pr.pages.contains_key(a));
                let wipe_ok = range
                    .iter()
                    .all(|a| pr.pages.get(a).is_none_or(|p| !p.shared && p.obj.is_none()));
                let expect_ok = all && (advice != Advice::WipeOnFork || wipe_ok);
                let r = pr.mm.madvise(BASE + page * P, n * P, advice);
                assert_eq!(r.is_ok(), expect_ok, "madvise {advice:?} {r:?}");
                // Linux advises every mapped page around holes, up to the
                // first VMA that refuses.
                for a in &range {
                    let Some(p) = pr.pages.get_mut(a) else {
                        continue;
                    };
                    if advice == Advice::WipeOnFork && (p.shared || p.obj.is_some()) {
                        break;
                    }
                    match advice {
                        Advice::DontNeed if !p.shared => p.data = None,
                        Advice::DontFork => p.dontcopy = true,
                        Advice::DoFork => p.dontcopy = false,
                        Advice::WipeOnFork => p.wipe = true,
                        Advice::KeepOnFork => p.wipe = false,
                        _ => {}
                    }
                }
                self.check_proc(i, range.into_iter());
            }
            Op::Mremap {
                proc,
                page,
                old_n,
                new_n,
                mode,
                to,
            } => {
                let i = pi(proc);
                let pr = &mut self.procs[i];
                let addr = BASE + page * P;
                let flags = match mode {
                    0 => RemapFlags::EMPTY,
                    1 => RemapFlags::MAYMOVE,
                    2 => RemapFlags::MAYMOVE | RemapFlags::FIXED,
                    _ => RemapFlags::MAYMOVE | RemapFlags::DONTUNMAP,
                };
                let new_n = if flags.contains(RemapFlags::DONTUNMAP) {
                    old_n
                } else {
                    new_n
                };
                let dontunmap = flags.contains(RemapFlags::DONTUNMAP);
                let target = BASE + to * P;
                let before = pr.mm.maps();
                let r = pr.mm.mremap(addr, old_n * P, new_n * P, flags, target);
                let Ok(r) = r else {
                    assert_eq!(pr.mm.maps(), before, "failed mremap changed the layout");
                    return;
                };
                let keep = old_n.min(new_n);
                // what moves (or stays), and the attributes of an extension
                let moved: Vec<(u64, Option<MPage>)> = (0..keep)
                    .map(|k| (k, pr.pages.get(&(addr + k * P)).cloned()))
                    .collect();
                let last = pr.pages.get(&(addr + (keep - 1) * P)).cloned();
                if r == addr && !flags.contains(RemapFlags::FIXED) {
                    for k in new_n..old_n {
                        pr.pages.remove(&(addr + k * P));
                    }
                } else {
                    if flags.contains(RemapFlags::FIXED) {
                        assert_eq!(r, target);
                    }
                    for k in 0..old_n.max(keep) {
                        if dontunmap {
                            // the old range stays mapped, emptied
                            if let Some(p) = pr.pages.get_mut(&(addr + k * P)) {
                                p.data = None;
                            }
                        } else {
                            pr.pages.remove(&(addr + k * P));
                        }
                    }
                    // A FIXED move of several VMAs (Linux 6.17+) leaves the
                    // target alone under the gaps between them.
                    for k in keep..new_n {
                        pr.pages.remove(&(r + k * P));
                    }
                    for (k, p) in moved {
                        match p {
                            Some(p) => {
                                pr.pages.insert(r + k * P, p);
                            }
                            None => assert!(
                                flags.contains(RemapFlags::FIXED) && old_n == new_n,
                                "moved a page the model does not have"
                            ),
                        }
                    }
                }
                if new_n > old_n {
                    let l = last.expect("grew a mapping the model does not have");
                    for k in old_n..new_n {
                        let mut p = l.clone();
                        p.data = None;
                        p.pgoff = l.pgoff + (k - (keep - 1));
                        assert!(
                            pr.pages.insert(r + k * P, p).is_none(),
                            "grew over a mapping"
                        );
                    }
                }
                let pages: Vec<u64> = pr.pages.keys().copied().collect();
                self.check_proc(i, pages.into_iter());
            }
            Op::Write {
                proc,
                page,
                off,
                byte,
                len,
            } => {
                let i = pi(proc);
                let addr = BASE + page * P + off as u64;
                let len = len as u64;
                let first = addr & !(P - 1);
                let last = (addr + len - 1) & !(P - 1);
                let objs = &mut self.objs;
                let pr = &mut self.procs[i];
                let mut expect: Result<(), FaultKind> = Ok(());
                let mut a = first;
                while a <= last {
                    match pr.pages.get(&a) {
                        None => {
                            expect = Err(FaultKind::Unmapped);
                            break;
                        }
                        Some(p) if !p.prot.contains(Prot::WRITE) => {
                            expect = Err(FaultKind::Protection);
                            break;
                        }
                        _ => {}
                    }
                    a += P;
                }
                let buf = vec![byte; len as usize];
                let r = pr.mm.write(addr, &buf);
                assert_eq!(r.map_err(|f| f.kind), expect, "write at {addr:#x}+{len}");
                if expect.is_ok() {
                    let mut a = first;
                    while a <= last {
                        let s = addr.max(a) - a;
                        let e = (addr + len).min(a + P) - a;
                        let p = pr.pages.get_mut(&a).unwrap();
                        let mut c = content(objs, p);
                        c[s as usize..e as usize].fill(byte);
                        if p.shared {
                            objs.pages.insert((p.obj.unwrap(), p.pgoff), c);
                        } else {
                            p.data = Some(c);
                        }
                        a += P;
                    }
                }
            }
            Op::Read { proc, page, off } => {
                let i = pi(proc);
                let addr = BASE + page * P + off as u64;
                let objs = &self.objs;
                let pr = &mut self.procs[i];
                let r = pr.mm.read_byte(addr);
                match pr.pages.get(&(addr & !(P - 1))) {
                    None => assert_eq!(r.unwrap_err().kind, FaultKind::Unmapped),
                    Some(p) if p.prot == Prot::NONE => {
                        assert_eq!(r.unwrap_err().kind, FaultKind::Protection)
                    }
                    Some(p) => assert_eq!(r.unwrap(), content(objs, p)[off as usize]),
                }
            }
            Op::Fork { proc, tree, pt } => {
                if np >= 4 {
                    return;
                }
                let i = pi(proc);
                let trees = tree_strategies();
                let opts = ForkOptions::new(
                    trees[tree as usize % trees.len()],
                    PT_STRATEGIES[pt as usize],
                );
                let pr = &mut self.procs[i];
                let mm = pr.mm.fork_with(opts).expect("fork");
                let mut pages = BTreeMap::new();
                for (&a, p) in &pr.pages {
                    if p.dontcopy {
                        continue;
                    }
                    let mut c = p.clone();
                    if p.wipe {
                        c.data = None;
                    }
                    pages.insert(a, c);
                }
                self.procs.push(Proc { mm, pages });
                let j = self.procs.len() - 1;
                let all: Vec<u64> = self.procs[j].pages.keys().copied().collect();
                self.check_proc(j, all.into_iter());
            }
            Op::Brk { proc, delta } => {
                let i = pi(proc);
                let pr = &mut self.procs[i];
                let old = pr.mm.current_brk();
                let new = (old as i64 + delta as i64 * 37) as u64;
                let before = pr.mm.maps();
                let r = pr.mm.brk(new);
                if r != new {
                    assert_eq!(r, old);
                    assert_eq!(pr.mm.maps(), before);
                    return;
                }
                let (o, n) = ((old + P - 1) & !(P - 1), (new + P - 1) & !(P - 1));
                let mut a = n;
                while a < o {
                    pr.pages.remove(&a);
                    a += P;
                }
                let mut a = o;
                while a < n {
                    let p = MPage {
                        prot: Prot::RW,
                        shared: false,
                        obj: None,
                        pgoff: 0,
                        data: None,
                        dontcopy: false,
                        wipe: false,
                    };
                    assert!(pr.pages.insert(a, p).is_none());
                    a += P;
                }
                let pages: Vec<u64> = pr.pages.keys().copied().collect();
                self.check_proc(i, pages.into_iter());
            }
            Op::Exit { proc } => {
                if np > 1 {
                    self.procs.remove(pi(proc));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_syscalls_match_the_page_model(ops in prop::collection::vec(op_strategy(), 1..45)) {
        let mut w = World::new();
        let mem = w.procs[0].mm.memory().clone();
        for op in &ops {
            w.apply(op);
            for i in 0..w.procs.len() {
                check(&w.procs[i].mm);
            }
        }
        w.check_all();
        drop(w);
        prop_assert_eq!(mem.spaces(), 0);
        prop_assert_eq!(mem.page_table_pages(), 0);
        prop_assert_eq!(mem.shm_objects(), 0);
        mem.validate().unwrap();
    }
}
