//! The replay: every process of a capture on the model, in timestamp order.
//!
//! Threads of one process share one space; a `fork` (a clone without
//! `CLONE_VM`) gives the child the model's `fork` of the parent's space at
//! that moment; a `vfork` / `CLONE_VM` child shares its parent's space until
//! its `execve`; a successful `execve` starts a new space from the process's
//! `execexit` snapshot ([`ProcImage::load`]). Each memory call is applied and
//! its result checked against the kernel's; a mapping the model places
//! elsewhere than the kernel is recorded as a miss and then moved to the
//! kernel's address, so the rest of the replay stays in step.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use maple_mm::procmaps::{
    maps_lines, refuses_map_sync_path, thp_aligned_path, FileTable, LoadOptions, MapsLine,
    ProcImage, VmFlagsLine,
};
use maple_mm::{
    page_align, AddressSpace, Advice, Config, Errno, FileId, MapFlags, OpenFile, OpenMode, Prot,
    RemapFlags, SysvShm, VmFlags,
};

use super::compare::{compare, Diff};
use super::decode::{
    clone_kind, clone_written, decode, fd_number, open_mode, NameArg, Op, MADVS, NOT_MODELLED,
    NO_LAYOUT_EFFECT,
};
use super::exec_layout::exec_config;
use super::first_writes::{touches, when_written, NextCall, PendingWrites, When, TOUCH_HEAP};
use super::input::{Capture, Phase, Snapshot};
use super::races::{place_before_unmap, raced_with, served_before, unmap_served_later, MAX_RACES};
use super::strace::{Call, Ret};

/// A snapshot compared with the model.
#[derive(Debug, Clone)]
pub struct SnapResult {
    /// `<tgid>.<seq>.<phase>`.
    pub name: String,
    /// Its phase.
    pub phase: Phase,
    /// The kernel's number of lines, and the model's.
    pub vmas: (usize, usize),
    /// The comparison.
    pub diff: Diff,
    /// The model's layout at that moment, as `/proc/PID/maps` text.
    pub model_maps: String,
    /// The model's `VmFlags` at that moment.
    pub model_vmflags: String,
    /// The layouts, for drawing.
    pub kernel_lines: Vec<MapsLine>,
    /// The model's lines.
    pub model_lines: Vec<MapsLine>,
}

/// What happened to one process.
#[derive(Debug, Clone, Default)]
pub struct ProcResult {
    /// The process id.
    pub tgid: u32,
    /// The last executable seen.
    pub exe: String,
    /// Memory calls applied to the model.
    pub calls: usize,
    /// Memory calls not applied because the process had no seeded image yet
    /// (the capture wrapper, before the traced program's `execve`).
    pub before_seed: usize,
    /// `execentry` snapshots taken before the process had a seeded image:
    /// the layout of a program the trace did not start (strace's child at
    /// the wrapper's `execve`, or the wrapper), not compared.
    pub before_seed_snapshots: usize,
    /// Snapshots whose maps were empty, not compared: a running process has
    /// at least its program's mappings, so its memory was already gone
    /// (the process was being killed while a thread was held at a stop).
    pub empty_snapshots: usize,
    /// Stacks grown to the extent a snapshot showed ([`grow_stacks_as_shown`]).
    pub stack_growths: usize,
    /// Non-fixed `mmap`s and moving `mremap`s.
    pub placements: usize,
    /// Those the model placed elsewhere than the kernel.
    pub placement_misses: usize,
    /// Calls whose result (success, errno, address, break) differed.
    pub result_mismatches: usize,
    /// The first few of those, described.
    pub mismatch_examples: Vec<String>,
    /// Calls the model cannot express, by name.
    pub not_modelled: BTreeMap<String, usize>,
    /// Snapshots compared.
    pub snapshots: Vec<SnapResult>,
}

/// The whole replay.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Per process, by tgid.
    pub procs: BTreeMap<u32, ProcResult>,
    /// `placements.tsv`.
    pub placements_tsv: String,
    /// Snapshots of processes the replay never seeded (named, with why).
    pub unreplayed: Vec<String>,
}

/// A space and what is printed with it.
struct Image {
    img: ProcImage,
    /// Ranges the program is assumed to write soon.
    pending_writes: PendingWrites,
    /// The data segment of the ELF interpreter, when the exec'ing thread's
    /// trace shows it made part of it read-only (its RELRO): the loader's
    /// last step before the program's code runs ([`When::AfterRelocation`]);
    /// `None` again once that `mprotect` came.
    loader_relro: Option<(u64, u64)>,
}

impl Image {
    fn new(img: ProcImage) -> Self {
        Image {
            img,
            pending_writes: PendingWrites::default(),
            loader_relro: None,
        }
    }

    /// Makes the assumed first writes due before `next` (all of them for
    /// `None`: a fork, a snapshot).
    fn settle_writes(&mut self, next: Option<NextCall>) {
        self.pending_writes.settle(&mut self.img.space, next);
    }
}

/// An open descriptor, as the trace's `open`/`openat`/`dup` calls showed it.
#[derive(Debug, Clone)]
struct OpenDesc {
    /// The path `-y` printed.
    path: String,
    mode: OpenMode,
    /// `O_CLOEXEC`: gone after a successful `execve`.
    cloexec: bool,
}

/// A process's descriptors that the trace showed being opened (by number).
/// Only captures taken with `maple capture --state-calls` trace the opens;
/// without them the table stays empty and [`open_file`] assumes a mode.
type FdTable = HashMap<u64, OpenDesc>;

struct Replayer<'a> {
    cap: &'a Capture,
    files: FileTable,
    /// tgid → its descriptors (threads share their process's table).
    fds: HashMap<u32, FdTable>,
    spaces: Vec<Option<Image>>,
    /// tgid → index in `spaces` (None: not seeded yet).
    proc_space: HashMap<u32, Option<usize>>,
    task_tgid: HashMap<u32, u32>,
    used_snapshots: HashSet<usize>,
    /// System V segments by shmid, as `shmget` made them or as a later
    /// snapshot shows them ([`Replayer::segment`]).
    segments: HashMap<i64, SysvShm>,
    /// The commit limit of the machine the capture was taken on.
    commit_limit: Option<u64>,
    /// The VMAs (start and end) each replayed `munmap` removed, by call
    /// (see [`unmap_served_later`]).
    unmapped: HashMap<usize, Vec<(u64, u64)>>,
    /// Calls applied ahead of their turn, because the kernel served them
    /// before a call that entered earlier (see [`raced_with`]).
    served_early: HashSet<usize>,
    out: Outcome,
}

const EXAMPLES: usize = 5;

fn errno_name(e: Errno) -> &'static str {
    e.name()
}

fn fmt_ret(r: &Ret) -> String {
    match r {
        Ret::Val(v) => format!("{v:#x}"),
        Ret::Err(e) => format!("-1 {e}"),
        Ret::Unknown => "?".into(),
    }
}

fn fmt_model(r: &Result<u64, Errno>) -> String {
    match r {
        Ok(v) => format!("{v:#x}"),
        Err(e) => format!("-1 {}", errno_name(*e)),
    }
}

/// Whether the kernel's result and the model's agree (for calls returning 0).
fn same_status(k: &Ret, m: &Result<(), Errno>) -> bool {
    match (k, m) {
        (Ret::Val(0), Ok(())) => true,
        (Ret::Err(e), Err(me)) => e == errno_name(*me),
        _ => false,
    }
}

/// The model's flags as vmflags lines.
fn model_vmflags(space: &AddressSpace) -> Vec<VmFlagsLine> {
    space
        .vmas()
        .map(|v| VmFlagsLine {
            start: v.start(),
            end: v.end(),
            flags: v.flags(),
        })
        .collect()
}

/// The zero device, whose mappings `mmap_zero` turns into anonymous memory.
const DEV_ZERO: &str = "/dev/zero";

/// The file of an `mmap`, as the model needs it. Its open mode is the one
/// the trace showed for that descriptor (`known`: an `open`/`openat`/`dup`
/// of the same path returned that number). A capture that did not trace
/// the opens (the default format) does not tell: then a shared mapping
/// without `PROT_WRITE` is assumed to be of a file opened read-only (what
/// programs do for caches and locale files), any other of one opened
/// read-write (the caller's `known` also says read-write when the thread's
/// next call maps the descriptor shared and writable:
/// [`Replayer::mapped_writable_next`]). Its file system aligns mappings to 2 MiB as
/// [`thp_aligned_path`] says.
fn open_file(
    id: FileId,
    path: &str,
    prot: Prot,
    flags: MapFlags,
    known: Option<OpenMode>,
) -> OpenFile {
    let shared = flags.intersects(MapFlags::SHARED);
    let mode = known.unwrap_or(if shared && !prot.contains(Prot::WRITE) {
        OpenMode::ReadOnly
    } else {
        OpenMode::ReadWrite
    });
    OpenFile::new(id)
        .mode(mode)
        .thp_aligned(thp_aligned_path(path))
        .refuses_map_sync(refuses_map_sync_path(path))
}

/// What a successful `MADV_COLLAPSE` of `addr..addr+len` shows the program
/// did: `madvise_collapse` turns a private anonymous 2 MiB block into a
/// huge page only if the block has a page table with a present writable
/// page (and the VMA an anon_vma), so the program had written into every
/// aligned block of the range. Its writes are not in a syscall trace; the
/// kernel's result is the evidence, as an `mmap`'s address is for
/// placement. Each such block of a private writable anonymous VMA that has
/// no page present gets the write fault of its first page (a zero byte: a
/// missing page reads as zeros), before the model's own checks (flags,
/// alignment, file mode), which still decide the model's result.
fn writes_shown_by_collapse(sp: &mut AddressSpace, addr: u64, len: u64) {
    const BLOCK: u64 = 2 << 20;
    let first = addr.next_multiple_of(BLOCK);
    let end = addr.saturating_add(len) & !(BLOCK - 1);
    let mut block = first;
    while block < end {
        let unwritten = sp.vma_at(block).is_some_and(|v| {
            v.is_anonymous()
                && !v.is_shared()
                && v.flags().contains(VmFlags::WRITE)
                && v.end() >= block + BLOCK
        }) && !(block..block + BLOCK)
            .step_by(4096)
            .any(|page| sp.is_present(page));
        if unwritten {
            let _ = sp.write_byte(block, 0);
        }
        block += BLOCK;
    }
}

/// Grows each stack of the model (a `VM_GROWSDOWN` VMA) down to where the
/// kernel's layout `kernel` shows the same stack (same end) starting: a
/// program's stack grows by page faults below it (`expand_stack`), which a
/// syscall trace does not show, so a snapshot is the evidence; the replay
/// makes the fault there (its page reads zeros either way) before comparing.
/// Returns how many stacks grew.
fn grow_stacks_as_shown(sp: &mut AddressSpace, kernel: &[MapsLine]) -> usize {
    let mut grown = 0;
    for k in kernel {
        let Some(v) = sp.vma_at(k.end - 1) else {
            continue;
        };
        if v.end() == k.end && v.start() > k.start && v.flags().contains(VmFlags::GROWSDOWN) {
            let _ = sp.write_byte(k.start, 0);
            grown += 1;
        }
    }
    grown
}

/// Where the heap starts when the trace does not say: the end of the run of
/// adjacent VMAs at the lowest address (the program's segments and bss).
fn heap_start_from_layout(lines: &[MapsLine]) -> Option<u64> {
    let first = lines.first()?;
    let mut end = first.end;
    for l in &lines[1..] {
        if l.start != end {
            break;
        }
        end = l.end;
    }
    Some(end)
}

impl<'a> Replayer<'a> {
    fn proc_mut(&mut self, tgid: u32) -> &mut ProcResult {
        self.out.procs.entry(tgid).or_insert_with(|| ProcResult {
            tgid,
            ..Default::default()
        })
    }

    fn space_of(&mut self, tgid: u32) -> Option<&mut Image> {
        let idx = (*self.proc_space.get(&tgid)?)?;
        self.spaces.get_mut(idx)?.as_mut()
    }

    /// Records a mismatch when a call that returns 0 or an errno came out
    /// otherwise in the model (`m`) than in the kernel.
    fn check_status(&mut self, tgid: u32, c: &Call, m: &Result<(), Errno>) {
        if !same_status(&c.ret, m) {
            let n = format!("kernel {}, model {:?}", fmt_ret(&c.ret), m);
            self.mismatch(tgid, c, n);
        }
    }

    fn mismatch(&mut self, tgid: u32, c: &Call, what: String) {
        let p = self.proc_mut(tgid);
        p.result_mismatches += 1;
        if p.mismatch_examples.len() < EXAMPLES {
            p.mismatch_examples
                .push(format!("{}: {}: {what}", c.origin, c.name));
        }
    }

    fn placement(&mut self, tgid: u32, c: &Call, kernel: u64, model: Option<u64>) {
        let t = c.time;
        let _ = writeln!(
            self.out.placements_tsv,
            "{tgid}\t{}\t{}.{:06}\t{}\t{kernel:#x}\t{}",
            c.tid,
            t / 1_000_000,
            t % 1_000_000,
            c.name,
            model
                .map(|m| format!("{m:#x}"))
                .unwrap_or_else(|| "-".into())
        );
        let p = self.proc_mut(tgid);
        p.placements += 1;
        if model != Some(kernel) {
            p.placement_misses += 1;
        }
    }

    /// The `(start_brk, brk)` of a new image: the first `brk(NULL)` of the
    /// exec'ing thread after call `i`, else the end of the program's segments.
    fn initial_brk(&self, i: usize, tid: u32, lines: &[MapsLine]) -> Option<(u64, u64)> {
        for c in &self.cap.calls[i + 1..] {
            if c.tid != tid {
                continue;
            }
            if matches!(c.name.as_str(), "execve" | "execveat") && c.ret == Ret::Val(0) {
                break;
            }
            if c.name == "brk" {
                if let (Ok(Some(Op::Brk { addr: 0 })), Ret::Val(v)) = (decode(c), &c.ret) {
                    return Some((*v, *v));
                }
                break;
            }
        }
        heap_start_from_layout(lines).map(|e| (e, e))
    }

    /// The ELF interpreter's data segment in a new image (its private
    /// writable file mappings, `lines` being the `execexit` layout of the
    /// program `exe`), if the exec'ing thread's trace after call `i` shows
    /// an `mprotect(PROT_READ)` in it before another `execve`: glibc's
    /// loader protects its own RELRO after relocating every object and
    /// setting up TLS, right before the program's code runs (musl's never
    /// does, and a static program has no interpreter: `None`).
    fn loader_relro(
        &self,
        i: usize,
        tid: u32,
        lines: &[MapsLine],
        exe: &str,
    ) -> Option<(u64, u64)> {
        let data = lines
            .iter()
            .filter(|l| l.name.starts_with('/') && l.name != exe && l.write && !l.shared);
        let (start, end) = data.fold(None, |r: Option<(u64, u64)>, l| match r {
            None => Some((l.start, l.end)),
            Some((s, e)) => Some((s.min(l.start), e.max(l.end))),
        })?;
        for c in &self.cap.calls[i + 1..] {
            if c.tid != tid {
                continue;
            }
            if matches!(c.name.as_str(), "execve" | "execveat") && c.ret == Ret::Val(0) {
                break;
            }
            if let Ok(Some(Op::Mprotect { addr, prot, .. })) = decode(c) {
                if prot == Prot::READ && start <= addr && addr < end {
                    return Some((start, end));
                }
            }
        }
        None
    }

    /// The first unused snapshot of `tgid` in `phase` taken during the stop of
    /// call `i`: after its entry and before the thread's next call.
    fn snapshot_of_call(&self, i: usize, tgid: u32, phase: Phase) -> Option<usize> {
        let c = &self.cap.calls[i];
        let until = self.cap.calls[i + 1..]
            .iter()
            .find(|n| n.tid == c.tid)
            .map_or(u64::MAX, |n| n.time);
        self.cap.snapshots.iter().enumerate().position(|(k, s)| {
            s.tgid == tgid
                && s.tid == c.tid
                && s.phase == phase
                && s.time >= c.time
                && s.time <= until
                && !self.used_snapshots.contains(&k)
        })
    }

    fn exec(&mut self, i: usize, c: &Call) -> Result<(), String> {
        let tgid = self.task_tgid.get(&c.tid).copied().unwrap_or(c.tid);
        // The layout being replaced, compared before the exec replaces it.
        if let Some(k) = self.snapshot_of_call(i, tgid, Phase::ExecEntry) {
            self.used_snapshots.insert(k);
            self.snapshot(&self.cap.snapshots[k])?;
        }
        if c.ret != Ret::Val(0) {
            return Ok(());
        }
        if let Some(t) = self.fds.get_mut(&tgid) {
            t.retain(|_, d| !d.cloexec);
        }
        let Some(k) = self.snapshot_of_call(i, tgid, Phase::ExecExit) else {
            // The wrapper's own execve, or no snapshot: nothing to seed from.
            self.proc_space.insert(tgid, None);
            return Ok(());
        };
        let s = &self.cap.snapshots[k];
        self.used_snapshots.insert(k);
        let (lines, vmflags) = self.cap.snapshot_layout(s)?;
        let brk = self.initial_brk(i, c.tid, &lines);
        let img = ProcImage::load(
            &lines,
            vmflags.as_deref(),
            &mut self.files,
            LoadOptions {
                brk,
                config: Config {
                    anon_vma_name: self.cap.anon_vma_names,
                    pkeys: self.cap.pkeys,
                    commit_limit: self.commit_limit,
                    ..exec_config(&lines)
                },
                ..Default::default()
            },
        )
        .map_err(|e| format!("{}/maps.{}: {e}", self.cap.dir.display(), s.name()))?;
        let mut image = Image::new(img);
        image.loader_relro = self.loader_relro(i, c.tid, &lines, &s.exe);
        self.spaces.push(Some(image));
        self.proc_space.insert(tgid, Some(self.spaces.len() - 1));
        self.proc_mut(tgid).exe = s.exe.clone();
        Ok(())
    }

    fn clone_call(&mut self, c: &Call) {
        let Ret::Val(child) = c.ret else { return };
        let child = child as u32;
        if child == 0 {
            return;
        }
        let parent = self.task_tgid.get(&c.tid).copied().unwrap_or(c.tid);
        let (vm, thread) = clone_kind(c);
        if vm {
            // The new task's stack and thread block were written first.
            let written = clone_written(c);
            let idx = self.proc_space.get(&parent).copied().flatten();
            if let Some(Some(im)) = idx.and_then(|i| self.spaces.get_mut(i)) {
                im.pending_writes
                    .settle_handed(&mut im.img.space, c.tid, &written);
            }
        }
        if thread {
            self.task_tgid.insert(child, parent);
            return;
        }
        self.task_tgid.insert(child, child);
        // The child gets a copy of the descriptor table (CLONE_FILES
        // without CLONE_THREAD, which would share it, is not told apart).
        if let Some(t) = self.fds.get(&parent).cloned() {
            self.fds.insert(child, t);
        }
        let exe = self.proc_mut(parent).exe.clone();
        self.proc_mut(child).exe = exe;
        let pidx = self.proc_space.get(&parent).copied().flatten();
        let cidx = match pidx {
            None => None,
            Some(p) if vm => Some(p),
            Some(p) => {
                let Some(Some(img)) = self.spaces.get_mut(p) else {
                    self.proc_space.insert(child, None);
                    return;
                };
                // What the parent wrote before the fork decides what the
                // child inherits.
                img.settle_writes(None);
                match img.img.space.fork() {
                    Ok(space) => {
                        let copy = ProcImage {
                            space,
                            start_stack: img.img.start_stack,
                            gate: img.img.gate.clone(),
                        };
                        self.spaces.push(Some(Image::new(copy)));
                        Some(self.spaces.len() - 1)
                    }
                    Err(e) => {
                        self.mismatch(parent, c, format!("the model's fork failed: {e}"));
                        None
                    }
                }
            }
        };
        self.proc_space.insert(child, cidx);
    }

    /// `open`, `openat`, `openat2`, `creat`, `dup`, `dup2`, `dup3`, `close`:
    /// what they say about the process's descriptors. Returns whether `c`
    /// was one of them.
    fn descriptor_call(&mut self, c: &Call) -> bool {
        let tgid = self.task_tgid.get(&c.tid).copied().unwrap_or(c.tid);
        let table = self.fds.entry(tgid).or_default();
        let new_fd = match c.ret {
            Ret::Val(fd) => Some(fd),
            _ => None,
        };
        if let Some((mode, cloexec)) = open_mode(c) {
            if let (Some(fd), Some(path)) = (new_fd, &c.ret_path) {
                let path = path.clone();
                table.insert(
                    fd,
                    OpenDesc {
                        path,
                        mode,
                        cloexec,
                    },
                );
            }
            return true;
        }
        match c.name.as_str() {
            "dup" | "dup2" | "dup3" => {
                let old = c.args.first().and_then(|a| fd_number(a));
                let from = old.and_then(|o| table.get(&o)).cloned();
                if let Some(fd) = new_fd {
                    match from {
                        Some(d) => {
                            let cloexec = c.name == "dup3"
                                && c.args.get(2).is_some_and(|f| f.contains("O_CLOEXEC"));
                            table.insert(fd, OpenDesc { cloexec, ..d });
                        }
                        None => {
                            table.remove(&fd);
                        }
                    }
                }
                true
            }
            "close" => {
                if let (Some(fd), Ret::Val(0)) = (c.args.first().and_then(|a| fd_number(a)), &c.ret)
                {
                    table.remove(&fd);
                }
                true
            }
            _ => false,
        }
    }

    /// What a shared writable `mmap` the kernel accepted shows: its
    /// descriptor was open for reading and writing (`mmap` needs
    /// `FMODE_READ`, and `FMODE_WRITE` for `MAP_SHARED` with `PROT_WRITE`).
    /// A capture without the opens (a `memfd_create` descriptor, say) then
    /// knows the mode of a later read-only shared mapping of the same
    /// descriptor (which `mprotect(PROT_WRITE)` may make writable). The
    /// descriptor may be `O_CLOEXEC`: it is forgotten at `execve`.
    fn learn_open_mode(&mut self, tgid: u32, c: &Call, op: &Op) {
        let Op::Mmap {
            prot,
            flags,
            file: Some(path),
            fd: Some(fd),
            ..
        } = op
        else {
            return;
        };
        let shared_write = flags.contains(MapFlags::SHARED) && prot.contains(Prot::WRITE);
        if !shared_write || !matches!(c.ret, Ret::Val(_)) || path == DEV_ZERO {
            return;
        }
        let table = self.fds.entry(tgid).or_default();
        if table.get(fd).is_none_or(|d| d.path != *path) {
            table.insert(
                *fd,
                OpenDesc {
                    path: path.clone(),
                    mode: OpenMode::ReadWrite,
                    cloexec: true,
                },
            );
        }
    }

    /// Read-write, when the next memory call of call `i`'s thread maps the
    /// same descriptor, still naming `path`, shared and writable, and the
    /// kernel accepted it (a JIT's two views of one memfd, executable and
    /// writable, as Erlang's BEAM makes them): a capture without the opens
    /// cannot tell the descriptor's mode otherwise.
    fn mapped_writable_next(&self, i: usize, fd: Option<u64>, path: &str) -> Option<OpenMode> {
        let tid = self.cap.calls[i].tid;
        let next = self.cap.calls[i + 1..]
            .iter()
            .filter(|c| c.tid == tid)
            .find_map(|c| decode(c).ok().flatten().map(|op| (c, op)))?;
        match next {
            (
                c,
                Op::Mmap {
                    prot,
                    flags,
                    file: Some(p),
                    fd: Some(f),
                    ..
                },
            ) if Some(f) == fd
                && p == path
                && flags.intersects(MapFlags::SHARED)
                && prot.contains(Prot::WRITE)
                && matches!(c.ret, Ret::Val(_)) =>
            {
                Some(OpenMode::ReadWrite)
            }
            _ => None,
        }
    }

    /// The open mode the trace showed for descriptor `fd` of `tgid`, if it
    /// still names `path` (unlinked since, or not).
    fn known_mode(&self, tgid: u32, fd: Option<u64>, path: &str) -> Option<OpenMode> {
        let d = self.fds.get(&tgid)?.get(&fd?)?;
        fn linked(p: &str) -> &str {
            p.strip_suffix(" (deleted)").unwrap_or(p)
        }
        (linked(&d.path) == linked(path)).then_some(d.mode)
    }

    /// The System V segment `shmid` that call `i` (a `shmat`) attaches: as
    /// `shmget` made it when the trace has that call (`maple capture
    /// --state-calls`); else as the first later snapshot shows it — of the
    /// same process first, then of any — from its `/SYSV<key> (deleted)`
    /// lines whose inode is the shmid (or, failing that, the line starting
    /// at the address the kernel returned): the key from the name, the size
    /// from the farthest offset mapped (whole pages: a size that is not a
    /// multiple of a page is not visible). `None` if nothing shows it.
    fn segment(&mut self, i: usize, tgid: u32, shmid: i64) -> Option<SysvShm> {
        if let Some(s) = self.segments.get(&shmid) {
            return Some(*s);
        }
        let c = &self.cap.calls[i];
        let returned = match c.ret {
            Ret::Val(a) => Some(a),
            _ => None,
        };
        let mut later: Vec<&Snapshot> = self
            .cap
            .snapshots
            .iter()
            .filter(|s| s.time > c.time)
            .collect();
        later.sort_by_key(|s| (s.tgid != tgid, s.time));
        for s in later {
            let Ok((lines, _)) = self.cap.snapshot_layout(s) else {
                continue;
            };
            let sysv = |l: &&MapsLine| SysvShm::key_of_maps_name(&l.name).is_some();
            let inode = lines
                .iter()
                .filter(sysv)
                .find(|l| l.inode as i64 == shmid)
                .or_else(|| {
                    lines
                        .iter()
                        .filter(sysv)
                        .find(|l| Some(l.start) == returned)
                })
                .map(|l| l.inode);
            let Some(inode) = inode else { continue };
            let mine: Vec<&MapsLine> = lines
                .iter()
                .filter(sysv)
                .filter(|l| l.inode == inode)
                .collect();
            let size = mine.iter().map(|l| l.offset + (l.end - l.start)).max()?;
            let key = SysvShm::key_of_maps_name(&mine[0].name)?;
            let seg = SysvShm {
                shmid: shmid as i32,
                key,
                size,
            };
            self.segments.insert(shmid, seg);
            return Some(seg);
        }
        None
    }

    /// Applies memory call `i` (`c`, decoded as `op`). Returns `Some(j)`
    /// when call `i` raced with call `j` of another thread ([`raced_with`]):
    /// then nothing was applied, and the caller applies `j` first.
    /// Takes back a call counted as applied: it is not expressible (`why`).
    fn skip_call(&mut self, tgid: u32, why: &str) {
        let p = self.proc_mut(tgid);
        p.calls -= 1;
        *p.not_modelled.entry(why.into()).or_default() += 1;
    }

    fn memory_call(&mut self, i: usize, c: &Call, op: Op, may_race: bool) -> Option<usize> {
        let tgid = self.task_tgid.get(&c.tid).copied().unwrap_or(c.tid);
        // shmget changes no layout: it names a segment for later shmats.
        // A shmget of an existing segment may ask for less than its size
        // (0 to look it up), never more: the largest size seen is kept.
        if let Op::Shmget { key, size } = op {
            if let (Ret::Val(shmid), true) = (c.ret.clone(), size > 0) {
                let shmid = shmid as i64;
                let seg = SysvShm {
                    shmid: shmid as i32,
                    key,
                    size,
                };
                self.segments
                    .entry(shmid)
                    .and_modify(|s| s.size = s.size.max(size))
                    .or_insert(seg);
            }
            return None;
        }
        let known = match &op {
            Op::Mmap {
                file: Some(p), fd, ..
            } => self
                .known_mode(tgid, *fd, p)
                .or_else(|| self.mapped_writable_next(i, *fd, p)),
            _ => None,
        };
        self.learn_open_mode(tgid, c, &op);
        if self.space_of(tgid).is_none() {
            self.proc_mut(tgid).before_seed += 1;
            return None;
        }
        if c.ret == Ret::Unknown {
            *self
                .proc_mut(tgid)
                .not_modelled
                .entry(format!("{} without a result", c.name))
                .or_default() += 1;
            return None;
        }
        let segment = match op {
            Op::Shmat { shmid, .. } if shmid >= 0 => {
                let seg = self.segment(i, tgid, shmid);
                if seg.is_none() {
                    *self
                        .proc_mut(tgid)
                        .not_modelled
                        .entry("shmat of a segment of unknown size".into())
                        .or_default() += 1;
                    return None;
                }
                seg
            }
            // A negative shmid: EINVAL whatever the segment.
            Op::Shmat { shmid, .. } => Some(SysvShm {
                shmid: shmid as i32,
                key: 0,
                size: 0,
            }),
            _ => None,
        };
        self.proc_mut(tgid).calls += 1;
        let files = &mut self.files;
        let slot = self.proc_space.get(&tgid).copied().flatten()?;
        let im = self.spaces.get_mut(slot).and_then(Option::as_mut)?;
        let next = NextCall::of(c.tid, &op, &im.img.space, im.loader_relro);
        im.settle_writes(Some(next));
        if next.ends_relocation() {
            // Start-up is over: a library loaded later (`dlopen`) has its
            // own RELRO made read-only after its relocation.
            im.loader_relro = None;
        }
        let sp = &mut im.img.space;
        match op {
            Op::Mmap {
                addr,
                len,
                prot,
                mut flags,
                file,
                off,
                ..
            } => {
                let fid = match file.as_deref() {
                    _ if flags.contains(MapFlags::ANONYMOUS) => None,
                    // `mmap_zero`: a shared mapping of /dev/zero is shared
                    // anonymous memory (`shmem_zero_setup`, named
                    // `/dev/zero (deleted)`).
                    Some(DEV_ZERO) if flags.intersects(MapFlags::SHARED) => {
                        flags |= MapFlags::ANONYMOUS;
                        None
                    }
                    // A private one is anonymous memory that keeps the file
                    // (its name in the maps, and what it merges with), placed
                    // by `get_unmapped_area_zero` with
                    // `thp_get_unmapped_area`: a private mapping of a file
                    // of zeros whose file system aligns mappings.
                    Some(DEV_ZERO) => Some(
                        open_file(files.file(DEV_ZERO), DEV_ZERO, prot, flags, known)
                            .thp_aligned(true),
                    ),
                    Some(p) => Some(open_file(files.file(p), p, prot, flags, known)),
                    None => None,
                };
                let fixed = flags.intersects(MapFlags::FIXED | MapFlags::FIXED_NOREPLACE);
                let map = |sp: &mut AddressSpace, addr: u64, flags: MapFlags| match fid {
                    Some(f) => sp.mmap_file(addr, len, prot, flags, f, off),
                    None => sp.mmap(addr, len, prot, flags, None, off),
                };
                let written =
                    touches(prot, flags).then(|| when_written(sp, addr, flags, next.commits()));
                let mut m = map(sp, addr, flags);
                if let (Ret::Val(k), Ok(mv), true) = (&c.ret, &m, may_race && !fixed) {
                    let (k, mv) = (*k, *mv);
                    if k != mv {
                        // Undone while the trace is searched for a race.
                        let _ = sp.munmap(mv, len);
                        let taken = |s: u64, e: u64| sp.tree().range(s..=e - 1).next().is_some();
                        let race = raced_with(
                            self.cap,
                            &self.task_tgid,
                            &self.served_early,
                            i,
                            (mv, k),
                            len,
                            &taken,
                        );
                        if let Some(j) = race {
                            self.proc_mut(tgid).calls -= 1;
                            return Some(j); // `j` goes first
                        }
                        let freed = unmap_served_later(
                            self.cap,
                            &self.task_tgid,
                            &self.unmapped,
                            i,
                            mv,
                            len,
                        );
                        let again = freed.and_then(|freed| {
                            place_before_unmap(sp, freed, |sp| map(sp, addr, flags))
                        });
                        m = match again {
                            Some(at) if at == k => Ok(k),
                            // No race the trace shows: placed as at first.
                            _ => {
                                if let Some(at) = again {
                                    let _ = sp.munmap(at, len);
                                }
                                map(sp, addr, flags)
                            }
                        };
                    }
                }
                let mut note = None;
                let mut place = None;
                match (&c.ret, &m) {
                    (Ret::Val(k), Ok(mv)) => {
                        if !fixed {
                            place = Some((*k, Some(*mv)));
                        }
                        if k != mv {
                            // Put it where the kernel did.
                            let _ = sp.munmap(*mv, len);
                            let r = map(sp, *k, flags | MapFlags::FIXED);
                            if fixed || r.is_err() {
                                note = Some(format!("kernel {k:#x}, model {}", fmt_model(&m)));
                            }
                        }
                    }
                    (Ret::Val(k), Err(_)) => {
                        note = Some(format!("kernel {k:#x}, model {}", fmt_model(&m)));
                        if !fixed {
                            place = Some((*k, None));
                        }
                        let _ = map(sp, *k, flags | MapFlags::FIXED);
                    }
                    (Ret::Err(e), Ok(mv)) => {
                        note = Some(format!("kernel -1 {e}, model {mv:#x}"));
                        if !fixed {
                            let _ = sp.munmap(*mv, len);
                        }
                    }
                    (Ret::Err(e), Err(me)) => {
                        if e != errno_name(*me) {
                            note = Some(format!("kernel -1 {e}, model -1 {}", me.name()));
                        }
                    }
                    (Ret::Unknown, _) => {}
                }
                if let (Ret::Val(k), Some(when)) = (&c.ret, written) {
                    im.pending_writes
                        .add(c.tid, *k, k.saturating_add(len), when);
                }
                if let Some((k, mv)) = place {
                    self.placement(tgid, c, k, mv);
                }
                if let Some(n) = note {
                    self.mismatch(tgid, c, n);
                }
            }
            Op::Munmap { addr, len } => {
                let end = page_align(len).map_or(u64::MAX, |l| addr.saturating_add(l));
                let freed: Vec<(u64, u64)> = if addr < end {
                    let vmas = sp
                        .tree()
                        .range(addr..=end - 1)
                        .map(|(r, _)| (*r.start().max(&addr), r.end().saturating_add(1).min(end)));
                    vmas.collect()
                } else {
                    Vec::new()
                };
                let m = sp.munmap(addr, len);
                if m.is_ok() && c.ret == Ret::Val(0) && !freed.is_empty() {
                    self.unmapped.insert(i, freed);
                }
                self.check_status(tgid, c, &m);
            }
            Op::Mprotect {
                addr,
                len,
                prot,
                pkey,
            } => {
                if pkey >= 0 && !self.cap.traces_pkey_alloc && !sp.pkey_allocated(pkey) {
                    // pkey_alloc is not in the trace set: the key may have
                    // been allocated; the model cannot tell.
                    let p = self.proc_mut(tgid);
                    p.calls -= 1;
                    *p.not_modelled
                        .entry("pkey_mprotect of an untraced key".into())
                        .or_default() += 1;
                    return None;
                }
                let m = sp.pkey_mprotect(addr, len, prot, pkey);
                if next.commits() && m.is_ok() && c.ret == Ret::Val(0) {
                    im.pending_writes.add(
                        c.tid,
                        addr,
                        addr.saturating_add(len),
                        When::AfterCommits,
                    );
                } else if let (Some((start, end)), true) =
                    (next.opened(), m.is_ok() && c.ret == Ret::Val(0))
                {
                    im.pending_writes.add(c.tid, start, end, When::NextUse);
                }
                self.check_status(tgid, c, &m);
            }
            Op::Madvise { addr, len, advice } => {
                let m = if !MADVS.iter().any(|&(_, v)| v == advice as u64) {
                    // No such advice: the kernel's first check (madvise_behavior_valid).
                    Err(Errno::EINVAL)
                } else if let Some(a) = Advice::from_raw(advice) {
                    if a == Advice::Collapse && c.ret == Ret::Val(0) {
                        writes_shown_by_collapse(sp, addr, len);
                    }
                    sp.madvise(addr, len, a)
                } else {
                    let name = MADVS
                        .iter()
                        .find(|&&(_, v)| v == advice as u64)
                        .map(|&(n, _)| n)
                        .unwrap_or("?");
                    let p = self.proc_mut(tgid);
                    p.calls -= 1;
                    *p.not_modelled.entry(format!("madvise {name}")).or_default() += 1;
                    return None;
                };
                self.check_status(tgid, c, &m);
            }
            Op::Mremap {
                old,
                old_len,
                new_len,
                flags,
                new_addr,
            } => {
                // With MREMAP_DONTUNMAP but not MREMAP_FIXED the kernel reads
                // new_addr (a hint, checked for alignment), and strace does
                // not print it. When the kernel said EINVAL, new_addr may be
                // why (a program that passes no fifth argument leaves
                // whatever the register held): the call is not expressible,
                // and skipping it is what the kernel did to the layout.
                // Unless the call is refused whatever new_addr is: a
                // DONTUNMAP move may not resize and must be allowed to move.
                let hidden_hint =
                    flags.contains(RemapFlags::DONTUNMAP) && !flags.contains(RemapFlags::FIXED);
                let refused_anyway = !flags.contains(RemapFlags::MAYMOVE)
                    || page_align(old_len) != page_align(new_len);
                if hidden_hint && !refused_anyway && c.ret == Ret::Err("EINVAL".into()) {
                    let p = self.proc_mut(tgid);
                    p.calls -= 1;
                    *p.not_modelled
                        .entry("mremap DONTUNMAP refused (its new_addr is not in the trace)".into())
                        .or_default() += 1;
                    return None;
                }
                let m = sp.mremap(old, old_len, new_len, flags, new_addr);
                let may_move =
                    flags.contains(RemapFlags::MAYMOVE) && !flags.contains(RemapFlags::FIXED);
                let mut note = None;
                let mut place = None;
                match (&c.ret, &m) {
                    (Ret::Val(k), Ok(mv)) => {
                        if may_move && (*k != old || *mv != old) {
                            place = Some((*k, Some(*mv)));
                        }
                        if k != mv {
                            let r = sp.mremap(
                                *mv,
                                new_len,
                                new_len,
                                RemapFlags::MAYMOVE | RemapFlags::FIXED,
                                *k,
                            );
                            if !may_move || r.is_err() {
                                note = Some(format!("kernel {k:#x}, model {mv:#x}"));
                            }
                        }
                    }
                    (Ret::Val(k), Err(me)) => {
                        if may_move && *k != old {
                            place = Some((*k, None));
                        }
                        note = Some(format!("kernel {k:#x}, model -1 {}", me.name()));
                    }
                    (Ret::Err(e), Ok(mv)) => {
                        note = Some(format!("kernel -1 {e}, model {mv:#x}"));
                    }
                    (Ret::Err(e), Err(me)) => {
                        if e != errno_name(*me) {
                            note = Some(format!("kernel -1 {e}, model -1 {}", me.name()));
                        }
                    }
                    (Ret::Unknown, _) => {}
                }
                if let Some((k, mv)) = place {
                    self.placement(tgid, c, k, mv);
                }
                if let Some(n) = note {
                    self.mismatch(tgid, c, n);
                }
            }
            Op::Shmat { addr, flags, .. } => {
                let seg = segment?;
                let m = sp.shmat(seg, addr, flags);
                let mut note = None;
                match (&c.ret, &m) {
                    (Ret::Val(k), Ok(mv)) if k != mv => {
                        note = Some(format!("kernel {k:#x}, model {mv:#x}"));
                        // Put it where the kernel did.
                        let _ = sp.shmdt(*mv);
                        let _ = sp.shmat(seg, *k, flags | maple_mm::SHM_REMAP);
                    }
                    (Ret::Val(k), Err(me)) => {
                        note = Some(format!("kernel {k:#x}, model -1 {}", me.name()));
                        let _ = sp.shmat(seg, *k, flags | maple_mm::SHM_REMAP);
                    }
                    (Ret::Err(e), Ok(mv)) => {
                        note = Some(format!("kernel -1 {e}, model {mv:#x}"));
                        let _ = sp.shmdt(*mv);
                    }
                    (Ret::Err(e), Err(me)) if e != errno_name(*me) => {
                        note = Some(format!("kernel -1 {e}, model -1 {}", me.name()));
                    }
                    _ => {}
                }
                if let Some(n) = note {
                    self.mismatch(tgid, c, n);
                }
            }
            Op::Shmget { .. } => {}
            Op::Shmdt { addr } => {
                let m = sp.shmdt(addr);
                self.check_status(tgid, c, &m);
            }
            Op::Mlock { addr, len, flags } => {
                let m = sp.mlock2(addr, len, flags);
                self.check_status(tgid, c, &m);
            }
            Op::Munlock { addr, len } => {
                let m = sp.munlock(addr, len);
                self.check_status(tgid, c, &m);
            }
            Op::Mlockall { flags } => {
                let m = sp.mlockall(flags);
                self.check_status(tgid, c, &m);
            }
            Op::SetAnonName { addr, len, name } => {
                let m = match &name {
                    NameArg::Null => sp.set_anon_name(addr, len, None),
                    NameArg::Name(b) => match std::str::from_utf8(b) {
                        Ok(n) => sp.set_anon_name(addr, len, Some(n)),
                        // Bytes the kernel may take (Latin-1) but the model's
                        // names (UTF-8) cannot hold.
                        Err(_) => {
                            self.skip_call(tgid, "prctl PR_SET_VMA_ANON_NAME of a non-UTF-8 name");
                            return None;
                        }
                    },
                    // Longer than strace's -s limit (256): too long for the
                    // kernel too (ANON_VMA_NAME_MAX_LEN), after its
                    // CONFIG_ANON_VMA_NAME check, which is EINVAL as well.
                    NameArg::Truncated => Err(Errno::EINVAL),
                    NameArg::Unreadable => {
                        self.skip_call(tgid, "prctl PR_SET_VMA_ANON_NAME of an unreadable name");
                        return None;
                    }
                };
                self.check_status(tgid, c, &m);
            }
            Op::Munlockall => {
                let m = sp.munlockall();
                self.check_status(tgid, c, &m);
            }
            Op::RemapFilePages {
                addr,
                size,
                prot,
                pgoff,
                flags,
            } => {
                let m = sp.remap_file_pages(addr, size, prot, pgoff, flags);
                self.check_status(tgid, c, &m);
            }
            Op::Mseal { addr, len, flags } => {
                let m = sp.mseal(addr, len, flags);
                self.check_status(tgid, c, &m);
            }
            Op::Mbind {
                addr,
                len,
                mode,
                nodes,
                flags,
            } => {
                let m = sp.mbind(addr, len, mode, nodes, flags);
                self.check_status(tgid, c, &m);
            }
            Op::PkeyAlloc { flags, rights } => {
                let m = sp.pkey_alloc(flags, rights).map(u64::from);
                let same = match (&c.ret, &m) {
                    (Ret::Val(k), Ok(mk)) => k == mk,
                    (Ret::Err(e), Err(me)) => e == errno_name(*me),
                    _ => false,
                };
                if !same {
                    let n = format!("kernel {}, model {}", fmt_ret(&c.ret), fmt_model(&m));
                    self.mismatch(tgid, c, n);
                }
            }
            Op::PkeyFree { pkey } => {
                let m = sp.pkey_free(pkey);
                self.check_status(tgid, c, &m);
            }
            Op::Brk { addr } => {
                let before = sp.current_brk();
                let m = sp.brk(addr);
                if m > before && TOUCH_HEAP {
                    im.pending_writes.add(c.tid, before, m, When::NextUse);
                }
                if c.ret != Ret::Val(m) {
                    let n = format!("kernel {}, model {m:#x}", fmt_ret(&c.ret));
                    self.mismatch(tgid, c, n);
                }
            }
        }
        None
    }

    fn snapshot(&mut self, s: &Snapshot) -> Result<(), String> {
        if s.phase == Phase::ExecExit {
            return Ok(()); // a seed
        }
        let idx = self.proc_space.get(&s.tgid).copied().flatten();
        // The program has had its chance to write what it mapped.
        if let Some(Some(im)) = idx.and_then(|i| self.spaces.get_mut(i)) {
            im.settle_writes(None);
        }
        let seeded = matches!(idx.map(|i| &self.spaces[i]), Some(Some(_)));
        let layout = if seeded {
            Some(self.cap.snapshot_layout(s)?)
        } else {
            None
        };
        if layout.as_ref().is_some_and(|(kernel, _)| kernel.is_empty()) {
            self.proc_mut(s.tgid).empty_snapshots += 1;
            return Ok(());
        }
        if let (Some(Some(im)), Some((kernel, _))) =
            (idx.and_then(|i| self.spaces.get_mut(i)), &layout)
        {
            let grown = grow_stacks_as_shown(&mut im.img.space, kernel);
            self.proc_mut(s.tgid).stack_growths += grown;
        }
        let files = &self.files;
        let (Some(Some(im)), Some((kernel, kflags))) = (idx.map(|i| &self.spaces[i]), layout)
        else {
            if s.phase == Phase::ExecEntry {
                self.proc_mut(s.tgid).before_seed_snapshots += 1;
                return Ok(());
            }
            self.out.unreplayed.push(format!(
                "{}: no seeded image for process {}",
                s.name(),
                s.tgid
            ));
            return Ok(());
        };
        let model = maps_lines(&im.img.space, files, im.img.start_stack, &im.img.gate);
        let mflags = model_vmflags(&im.img.space);
        let diff = compare(&kernel, kflags.as_deref(), &model, &mflags);
        let mut model_maps = String::new();
        for l in &model {
            let _ = writeln!(model_maps, "{l}");
        }
        let mut model_vmflags = String::new();
        for f in &mflags {
            let _ = writeln!(
                model_vmflags,
                "{:x}-{:x} {}",
                f.start,
                f.end,
                maple_mm::procmaps::vmflags_words(f.flags)
            );
        }
        let r = SnapResult {
            name: s.name(),
            phase: s.phase,
            vmas: (kernel.len(), model.len()),
            diff,
            model_maps,
            model_vmflags,
            kernel_lines: kernel,
            model_lines: model,
        };
        self.proc_mut(s.tgid).snapshots.push(r);
        Ok(())
    }
}

/// Replays a capture taken on a machine whose heuristic overcommit refuses
/// one charge above `commit_limit` bytes ([`Config::commit_limit`]).
pub fn replay(cap: &Capture, commit_limit: Option<u64>) -> Result<Outcome, String> {
    let children: HashSet<u32> = cap
        .calls
        .iter()
        .filter(|c| matches!(c.name.as_str(), "clone" | "clone3" | "fork" | "vfork"))
        .filter_map(|c| match c.ret {
            Ret::Val(v) => Some(v as u32),
            _ => None,
        })
        .collect();
    let mut r = Replayer {
        cap,
        files: FileTable::new(),
        fds: HashMap::new(),
        spaces: Vec::new(),
        proc_space: HashMap::new(),
        task_tgid: HashMap::new(),
        used_snapshots: HashSet::new(),
        segments: HashMap::new(),
        commit_limit,
        unmapped: HashMap::new(),
        served_early: HashSet::new(),
        out: Outcome::default(),
    };
    for &t in &cap.tids {
        if !children.contains(&t) {
            r.task_tgid.insert(t, t);
            r.proc_space.insert(t, None);
        }
    }
    let mut si = 0;
    for (i, c) in cap.calls.iter().enumerate() {
        if r.served_early.contains(&i) {
            continue;
        }
        while si < cap.snapshots.len() && cap.snapshots[si].time < c.time {
            if r.used_snapshots.insert(si) {
                r.snapshot(&cap.snapshots[si])?;
            }
            si += 1;
        }
        match c.name.as_str() {
            "execve" | "execveat" => r.exec(i, c)?,
            "clone" | "clone3" | "fork" | "vfork" => r.clone_call(c),
            _ if r.descriptor_call(c) => {}
            name => match decode(c).map_err(|e| format!("{}: {e}", c.origin))? {
                Some(op) => {
                    // Each race found serves the other thread's call (and
                    // what that thread did before it) first; call `i` is
                    // then placed again, and may meet another race.
                    let mut races = 0;
                    while let Some(j) = r.memory_call(i, c, op.clone(), races < MAX_RACES) {
                        let first = served_before(cap, &r.task_tgid, i, j, &r.served_early);
                        if first.is_empty() {
                            // Already applied: place call `i` as it comes.
                            races = MAX_RACES;
                            continue;
                        }
                        for k in first {
                            let first = &cap.calls[k];
                            if let Ok(Some(op_k)) = decode(first) {
                                r.memory_call(k, first, op_k, false);
                            }
                            r.served_early.insert(k);
                        }
                        races += 1;
                    }
                }
                None => {
                    let tgid = r.task_tgid.get(&c.tid).copied().unwrap_or(c.tid);
                    // Other PR_SET_VMA options than PR_SET_VMA_ANON_NAME
                    // (none yet in Linux 6.18) would change VMAs too.
                    let counted = NOT_MODELLED.contains(&name)
                        || (name == "prctl" && c.args.first().is_some_and(|a| a == "PR_SET_VMA"));
                    if counted && r.space_of(tgid).is_some() && !NO_LAYOUT_EFFECT.contains(&name) {
                        *r.proc_mut(tgid)
                            .not_modelled
                            .entry(name.to_string())
                            .or_default() += 1;
                    }
                }
            },
        }
    }
    while si < cap.snapshots.len() {
        if r.used_snapshots.insert(si) {
            r.snapshot(&cap.snapshots[si])?;
        }
        si += 1;
    }
    // Processes that never had an image and made no call of interest are noise
    // (the capture wrapper before its exec is folded into the traced program).
    r.out
        .procs
        .retain(|_, p| p.calls > 0 || !p.snapshots.is_empty() || !p.not_modelled.is_empty());
    Ok(r.out)
}
