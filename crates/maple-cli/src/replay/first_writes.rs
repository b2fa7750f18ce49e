//! The program's first writes to the memory it maps, which a syscall trace
//! does not show.
//!
//! Whether a private VMA has an anon_vma (given by its first write fault)
//! decides merges (`is_mergeable_anon_vma`), what a child inherits at fork,
//! and the `VM_ACCOUNT` drop. Programs write to the private writable memory
//! they map (malloc arenas, stacks, data segments), so the replay gives such
//! a mapping the anon_vma of a write fault, not at once but when the trace
//! shows the mapping thread has gone on to use it: before that thread's
//! next memory call that is not a setup of the mapping, before a `clone`
//! that hands a new thread a stack or thread block inside it
//! ([`PendingWrites::settle_handed`]), or before a fork or a snapshot.
//! Three kinds of mapping wait longer ([`When`]).

use maple_mm::{AddressSpace, MapFlags, Prot, VmFlags};

use super::decode::Op;

/// Whether heap growth is written to at once.
pub(super) const TOUCH_HEAP: bool = true;

/// When a range mapped by a thread is assumed first written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum When {
    /// Before the thread's next memory call that does not set the range up
    /// (a guard page made `PROT_NONE`, an `madvise`: [`NextCall::setup`];
    /// a second guard inside the range is use, not setup: see
    /// [`PendingWrites::settle`]).
    /// A Go heap arena (merged with its neighbour by `madvise`) and a JVM's
    /// thread stacks (a guard made `PROT_NONE` right after the `mmap` loses
    /// `VM_ACCOUNT`) need that order.
    NextUse,
    /// Memory committed into a reservation ([`commits_reserved`], or
    /// [`commits_by_mprotect`]): after the run of commits, at the thread's
    /// first memory call that is neither a commit nor an `mprotect` making
    /// the range non-writable. Runtimes
    /// commit reserved address space piecewise (a JVM's heap, card table
    /// and mark bitmaps, page by page) before using any of it, and the
    /// kernel merges adjacent commits of the run into one VMA, which two
    /// VMAs written apart (two anon_vmas) would prevent; committed memory
    /// made read-only before its first use (a JVM's safepoint polling page)
    /// was never written. A commit that fills a hole just below a range of
    /// the run shows that range was in use already (a runtime that commits
    /// out of order, as a JVM's Metaspace does its chunks, allocates as it
    /// goes): it is written then.
    AfterCommits,
    /// The zero-filled end of a library's data segment (its `.bss`), mapped
    /// by the dynamic loader ([`loader_bss`]): after the loader has
    /// relocated, at the thread's first memory call after a RELRO
    /// `mprotect` ([`relro`]) that is not one too. A library's code, which
    /// writes its `.bss`, runs only once the loader has mapped every
    /// library and relocated them (making each one's RELRO read-only);
    /// meanwhile the loader's own small allocations land in the holes
    /// between libraries, and the kernel merges one that fills the hole
    /// above a `.bss` with both neighbours, which a `.bss` with an anon_vma
    /// of its own would prevent. When the trace shows the loader protect
    /// its own RELRO (glibc's does, last, at start-up), only that `mprotect`
    /// counts at start-up: the loader may still allocate after the
    /// program's own RELRO (for TLS); later, for a library loaded by
    /// `dlopen`, its own RELRO does. `relocated` once such an `mprotect`
    /// came.
    AfterRelocation { relocated: bool },
}

/// A range the program is assumed to write, not yet written.
#[derive(Debug, Clone, Copy)]
struct PendingWrite {
    /// The thread that mapped it.
    tid: u32,
    start: u64,
    end: u64,
    when: When,
    /// Whether that thread made a guard page in it (`mprotect(PROT_NONE)`).
    guarded: bool,
}

/// What a thread's memory call, about to be applied, tells of the pending
/// writes (see [`When`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct NextCall {
    tid: u32,
    /// The range it sets up (not written yet).
    setup: (u64, u64),
    /// Whether that is a guard page (`mprotect(PROT_NONE)`).
    guard: bool,
    /// The range it makes non-writable.
    unwritable: (u64, u64),
    /// The reserved memory it commits, if it does.
    committed: Option<(u64, u64)>,
    /// Whether it is a RELRO `mprotect` that ends the loader's relocations.
    relro: bool,
    /// The readable, unwritable private anonymous memory it makes writable
    /// ([`opens_code`]).
    opened: Option<(u64, u64)>,
}

impl NextCall {
    /// Thread `tid`'s call `op`, before it is applied to `sp`; `loader_relro`
    /// the loader's data segment when the loader protects its RELRO (then
    /// only an `mprotect` there counts as the relocations' end).
    pub(super) fn of(
        tid: u32,
        op: &Op,
        sp: &AddressSpace,
        loader_relro: Option<(u64, u64)>,
    ) -> NextCall {
        let ends_relocation = |addr: u64, prot: Prot| {
            relro(sp, addr, prot)
                && loader_relro.is_none_or(|(start, end)| start <= addr && addr < end)
        };
        let span = |addr: u64, len: u64| (addr, addr.saturating_add(len));
        let (setup, unwritable, committed, relro) = match *op {
            Op::Madvise { addr, len, .. } => (span(addr, len), (0, 0), None, false),
            Op::Mprotect {
                addr, len, prot, ..
            } if !prot.contains(Prot::WRITE) => {
                let setup = if prot == Prot::NONE {
                    span(addr, len)
                } else {
                    (0, 0)
                };
                (setup, span(addr, len), None, ends_relocation(addr, prot))
            }
            Op::Mprotect {
                addr, len, prot, ..
            } => {
                let commit = commits_by_mprotect(sp, addr, len, prot);
                ((0, 0), (0, 0), commit.then(|| span(addr, len)), false)
            }
            Op::Mmap {
                addr, len, flags, ..
            } => {
                let commit = flags.intersects(MapFlags::FIXED | MapFlags::FIXED_NOREPLACE)
                    && flags.contains(MapFlags::ANONYMOUS)
                    && commits_reserved(sp, addr, len);
                ((0, 0), (0, 0), commit.then(|| span(addr, len)), false)
            }
            _ => ((0, 0), (0, 0), None, false),
        };
        let opened = match *op {
            Op::Mprotect {
                addr, len, prot, ..
            } if opens_code(sp, addr, len, prot) => Some(span(addr, len)),
            _ => None,
        };
        NextCall {
            tid,
            setup,
            unwritable,
            guard: matches!(op, Op::Mprotect { prot, .. } if *prot == Prot::NONE),
            committed,
            relro,
            opened,
        }
    }

    /// Whether the call commits reserved memory ([`When::AfterCommits`]).
    pub(super) fn commits(&self) -> bool {
        self.committed.is_some()
    }

    /// Whether the call is the RELRO `mprotect` that ends the loader's
    /// relocations ([`When::AfterRelocation`]).
    pub(super) fn ends_relocation(&self) -> bool {
        self.relro
    }

    /// The memory the call makes writable to write into it ([`opens_code`]),
    /// written before the thread's next use ([`When::NextUse`]).
    pub(super) fn opened(&self) -> Option<(u64, u64)> {
        self.opened
    }
}

/// The ranges of one space that the program is assumed to write soon.
#[derive(Debug, Default)]
pub(super) struct PendingWrites(Vec<PendingWrite>);

impl PendingWrites {
    /// Thread `tid` mapped `start..end`: to be written per `when`.
    pub(super) fn add(&mut self, tid: u32, start: u64, end: u64, when: When) {
        self.0.push(PendingWrite {
            tid,
            start,
            end,
            when,
            guarded: false,
        });
    }

    /// Makes the assumed first writes that are due before `next` (all of
    /// them, of every thread, for `None`): each private writable VMA of such
    /// a range gets the anon_vma of a write fault. Another thread's memory
    /// call says nothing about whether the mapping thread has run on yet.
    pub(super) fn settle(&mut self, sp: &mut AddressSpace, next: Option<NextCall>) {
        let mut kept = Vec::new();
        for mut p in std::mem::take(&mut self.0) {
            if let Some(n) = next {
                if p.tid == n.tid
                    && n.relro
                    && p.when == (When::AfterRelocation { relocated: false })
                {
                    p.when = When::AfterRelocation { relocated: true };
                }
                // A second guard inside the range (not at its end, where a
                // stack's upper guard goes, as Valgrind puts one) divides
                // it into stacks: a pool of stacks, each put to use as soon
                // as its guard is made, as Ruby's fibers are.
                let guard = p.tid == n.tid && n.guard && p.start < n.setup.1 && n.setup.0 < p.end;
                let divides = guard && p.guarded && n.setup.1 < p.end;
                if !divides && waits(&p, &n) {
                    p.guarded |= guard;
                    kept.push(p);
                    continue;
                }
            }
            write_range(sp, p.start, p.end);
        }
        self.0 = kept;
    }

    /// Thread `tid` handed the addresses `written` to a new thread (its
    /// stack and thread block, which it wrote first): the pending ranges it
    /// mapped that hold one of them are written now.
    pub(super) fn settle_handed(&mut self, sp: &mut AddressSpace, tid: u32, written: &[u64]) {
        let holds =
            |p: &PendingWrite| p.tid == tid && written.iter().any(|&a| p.start <= a && a < p.end);
        let (due, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.0).into_iter().partition(holds);
        self.0 = kept;
        for p in due {
            write_range(sp, p.start, p.end);
        }
    }
}

/// Whether pending write `p` is still not due before call `n`.
fn waits(p: &PendingWrite, n: &NextCall) -> bool {
    let hits = |(bs, be): (u64, u64)| p.start < be && bs < p.end;
    p.tid != n.tid
        || hits(n.setup)
        || match p.when {
            When::NextUse => false,
            // A commit just below the range, filling a hole under it: the
            // range was in use before the run went on.
            When::AfterCommits => {
                n.committed.is_some_and(|(_, end)| end != p.start) || hits(n.unwritable)
            }
            When::AfterRelocation { relocated } => !relocated || n.relro,
        }
}

/// The first write to every private writable VMA in `start..end`: the
/// anon_vma its write fault would give it (`anon_vma_prepare`, no page).
fn write_range(sp: &mut AddressSpace, start: u64, end: u64) {
    let mut at = start;
    while at < end {
        let Some(v) = sp.find_vma(at) else { break };
        let (from, to) = (v.start().max(at), v.end());
        if from >= end {
            break;
        }
        if v.flags().contains(VmFlags::WRITE) && !v.is_shared() {
            sp.anon_vma_prepare(from);
        }
        at = to;
    }
}

/// Whether the replay assumes the program writes to a new mapping: private
/// and writable.
pub(super) fn touches(prot: Prot, flags: MapFlags) -> bool {
    prot.contains(Prot::WRITE) && !flags.intersects(MapFlags::SHARED)
}

/// When a private writable `mmap` of `addr..addr+len` with `flags` that the
/// kernel made is assumed first written, judged before the call is applied
/// to `sp` (`commit`: [`NextCall::commits`] of the call).
pub(super) fn when_written(sp: &AddressSpace, addr: u64, flags: MapFlags, commit: bool) -> When {
    if commit {
        When::AfterCommits
    } else if loader_bss(sp, addr, flags) {
        When::AfterRelocation { relocated: false }
    } else {
        When::NextUse
    }
}

/// Whether a `MAP_FIXED` anonymous `mmap` at `addr` commits memory inside a
/// reservation: every page of `addr..addr+len` is mapped `PROT_NONE`
/// anonymous memory.
fn commits_reserved(sp: &AddressSpace, addr: u64, len: u64) -> bool {
    let end = addr.saturating_add(len);
    let mut at = addr;
    while at < end {
        match sp.find_vma(at) {
            Some(v) if v.start() <= at && v.prot() == Prot::NONE && v.is_anonymous() => {
                at = v.end()
            }
            _ => return false,
        }
    }
    len > 0
}

/// Whether an `mprotect(addr, len, prot)` commits memory inside a
/// reservation: it makes writable private anonymous memory that is all
/// `PROT_NONE` (glibc's arenas and thread stacks, Chromium's
/// PartitionAlloc and V8 commit so). Such memory is written after the run
/// of commits, as by a `MAP_FIXED` commit ([`When::AfterCommits`]).
pub(super) fn commits_by_mprotect(sp: &AddressSpace, addr: u64, len: u64, prot: Prot) -> bool {
    prot.contains(Prot::WRITE)
        && commits_reserved(sp, addr, len)
        && sp.vma_at(addr).is_some_and(|v| !v.is_shared())
}

/// Whether an `mprotect(addr, len, prot)` makes writable private anonymous
/// memory that is all readable and not writable: a JIT's code region,
/// mapped executable and opened for writing to emit code (Ruby's YJIT maps
/// its region `PROT_READ | PROT_EXEC`, then makes it writable). Memory made
/// writable so is about to be written: if it had no anon_vma, it gets one,
/// which keeps its `VM_ACCOUNT` when it is made read-only again (Linux's
/// `mprotect_fixup` drops the charge only without one).
fn opens_code(sp: &AddressSpace, addr: u64, len: u64, prot: Prot) -> bool {
    let end = addr.saturating_add(len);
    let mut at = addr;
    while at < end {
        match sp.find_vma(at) {
            Some(v)
                if v.start() <= at
                    && v.is_anonymous()
                    && !v.is_shared()
                    && v.prot().contains(Prot::READ)
                    && !v.prot().contains(Prot::WRITE) =>
            {
                at = v.end()
            }
            _ => return false,
        }
    }
    prot.contains(Prot::WRITE) && len > 0
}

/// Whether a private anonymous `MAP_FIXED` `mmap` at `addr` is how the
/// dynamic loader (`_dl_map_segments`) maps the zero-filled end of a data
/// segment: it starts where a private writable mapping of a file ends (the
/// segment's file-backed part, just mapped).
fn loader_bss(sp: &AddressSpace, addr: u64, flags: MapFlags) -> bool {
    flags.contains(MapFlags::FIXED | MapFlags::ANONYMOUS)
        && !flags.intersects(MapFlags::SHARED)
        && addr > 0
        && sp.vma_at(addr - 1).is_some_and(|v| {
            v.end() == addr
                && v.file().is_some()
                && !v.is_shared()
                && v.flags().contains(VmFlags::WRITE)
        })
}

/// Whether an `mprotect(addr, .., prot)` is the loader making a library's
/// RELRO region read-only after relocating it (`_dl_protect_relro`): read
/// only, at a private writable mapping of a file.
fn relro(sp: &AddressSpace, addr: u64, prot: Prot) -> bool {
    prot == Prot::READ
        && sp.vma_at(addr).is_some_and(|v| {
            v.file().is_some() && !v.is_shared() && v.flags().contains(VmFlags::WRITE)
        })
}
