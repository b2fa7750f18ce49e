//! `/proc/PID/maps` and `VmFlags`: parsing a real process's layout into an
//! [`AddressSpace`], and printing a model's layout the way the kernel prints
//! it (`show_map_vma` in fs/proc/task_mmu.c).
//!
//! An emulator or sandbox that must continue from a real process's layout
//! parses its `/proc/PID/maps` with [`parse_maps`], the `VmFlags:` lines of
//! `/proc/PID/smaps` with [`parse_vmflags`], and builds the space with
//! [`ProcImage::load`]. Files are named by path through a [`FileTable`],
//! which gives each path one [`FileId`] (so that the same library mapped by
//! two processes, or twice, is one object) and keeps what the kernel prints
//! for it (device and inode).
//!
//! ```
//! use maple_mm::procmaps::{parse_maps, parse_vmflags, FileTable, ProcImage};
//! let maps = "555555554000-555555556000 r--p 00000000 fe:00 42                         /usr/bin/true\n\
//!             7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n";
//! let flags = "555555554000-555555556000 rd mr mw me\n7ffffffde000-7ffffffff000 rd wr mr mw me gd ac\n";
//! let lines = parse_maps(maps).unwrap();
//! let vmflags = parse_vmflags(flags).unwrap();
//! let mut files = FileTable::new();
//! let img = ProcImage::load(&lines, Some(&vmflags), &mut files, Default::default()).unwrap();
//! assert_eq!(img.space.map_count(), 2);
//! assert_eq!(img.to_maps_string(&files), maps);
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::config::{Config, PAGE_SHIFT, PAGE_SIZE};
use crate::flags::VmFlags;
use crate::memory::Memory;
use crate::shm::{attach_file, SysvShm};
use crate::space::AddressSpace;
use crate::vma::{
    anon_vma_label, sysv_name, AnonId, Backing, FileId, OpenFile, OpenMode, ShmId, Special, Vma,
};

/// One line of `/proc/PID/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapsLine {
    /// `vm_start`.
    pub start: u64,
    /// `vm_end`.
    pub end: u64,
    /// The `rwx` columns.
    pub read: bool,
    /// `w`.
    pub write: bool,
    /// `x`.
    pub exec: bool,
    /// `s` (`VM_MAYSHARE`) rather than `p`.
    pub shared: bool,
    /// The offset column (bytes; 0 for anonymous memory).
    pub offset: u64,
    /// Device major and minor.
    pub dev: (u32, u32),
    /// Inode number.
    pub inode: u64,
    /// The path or the `[name]`; empty for plain anonymous memory.
    pub name: String,
}

/// A line of a maps or vmflags text that cannot be parsed: the 1-based line
/// number and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapsError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MapsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for MapsError {}

fn err(line: usize, message: impl Into<String>) -> MapsError {
    MapsError {
        line,
        message: message.into(),
    }
}

fn hex(s: &str, what: &str) -> Result<u64, String> {
    u64::from_str_radix(s, 16).map_err(|_| format!("bad {what} {s:?}"))
}

/// `start-end`, both hex, start below end, page aligned.
fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("bad range {s:?} (want start-end)"))?;
    let (a, b) = (hex(a, "start")?, hex(b, "end")?);
    if a >= b || a % PAGE_SIZE != 0 || b % PAGE_SIZE != 0 {
        return Err(format!(
            "bad range {s:?} (empty, reversed or not page aligned)"
        ));
    }
    Ok((a, b))
}

impl MapsLine {
    /// Parses one line of `/proc/PID/maps`.
    pub fn parse(line: &str) -> Result<MapsLine, String> {
        // Six columns; the name (the rest, leading spaces dropped) may hold spaces.
        let mut rest = line;
        let mut cols = [""; 5];
        for c in cols.iter_mut() {
            rest = rest.trim_start_matches(' ');
            let end = rest.find(' ').unwrap_or(rest.len());
            *c = &rest[..end];
            rest = &rest[end..];
        }
        let name = rest.trim_start_matches(' ').to_string();
        let [range, perms, off, dev, ino] = cols;
        let (start, end) = parse_range(range)?;
        let p = perms.as_bytes();
        if p.len() != 4
            || !matches!(p[0], b'r' | b'-')
            || !matches!(p[1], b'w' | b'-')
            || !matches!(p[2], b'x' | b'-')
            || !matches!(p[3], b's' | b'p')
        {
            return Err(format!("bad permissions {perms:?}"));
        }
        let offset = hex(off, "offset")?;
        let (ma, mi) = dev
            .split_once(':')
            .ok_or_else(|| format!("bad device {dev:?}"))?;
        let dev = (
            u32::from_str_radix(ma, 16).map_err(|_| format!("bad device {dev:?}"))?,
            u32::from_str_radix(mi, 16).map_err(|_| format!("bad device {dev:?}"))?,
        );
        let inode = ino.parse().map_err(|_| format!("bad inode {ino:?}"))?;
        Ok(MapsLine {
            start,
            end,
            read: p[0] == b'r',
            write: p[1] == b'w',
            exec: p[2] == b'x',
            shared: p[3] == b's',
            offset,
            dev,
            inode,
            name,
        })
    }

    /// The `rwxp` column.
    pub fn perms(&self) -> String {
        let mut s = String::with_capacity(4);
        s.push(if self.read { 'r' } else { '-' });
        s.push(if self.write { 'w' } else { '-' });
        s.push(if self.exec { 'x' } else { '-' });
        s.push(if self.shared { 's' } else { 'p' });
        s
    }

    /// What backs the range, as far as a maps line tells.
    pub fn kind(&self) -> MapsKind {
        let n = self.name.as_str();
        if n.is_empty() || n == "[heap]" || n == "[stack]" || n.starts_with("[anon:") {
            MapsKind::Anon
        } else if SPECIAL.contains(&n) {
            MapsKind::Special
        } else if n.starts_with("/dev/zero")
            || n.starts_with("/SYSV")
            || n.starts_with("[anon_shmem:")
        {
            MapsKind::SharedAnon
        } else {
            MapsKind::File
        }
    }
}

/// The kind of a maps line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapsKind {
    /// Private anonymous memory (including `[heap]`, `[stack]`, `[anon:…]`).
    Anon,
    /// Shared anonymous memory (`/dev/zero (deleted)`, System V shm).
    SharedAnon,
    /// A file.
    File,
    /// A special mapping (`[vdso]`, `[vvar]`, `[vvar_vclock]`, `[vsyscall]`, …).
    Special,
}

/// The special mappings the kernel installs at `execve` (`_install_special_mapping`).
pub const SPECIAL: [&str; 5] = [
    "[vdso]",
    "[vvar]",
    "[vvar_vclock]",
    "[vsyscall]",
    "[uprobes]",
];

impl fmt::Display for MapsLine {
    /// The line as the kernel prints it (`show_vma_header_prefix`, then the
    /// name padded to column 73).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = format!(
            "{:08x}-{:08x} {} {:08x} {:02x}:{:02x} {} ",
            self.start,
            self.end,
            self.perms(),
            self.offset,
            self.dev.0,
            self.dev.1,
            self.inode
        );
        if self.name.is_empty() {
            f.write_str(&head)
        } else {
            write!(f, "{head:<73}{}", self.name)
        }
    }
}

/// Parses a `/proc/PID/maps` text: lines in address order, not overlapping.
pub fn parse_maps(text: &str) -> Result<Vec<MapsLine>, MapsError> {
    let mut out: Vec<MapsLine> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let m = MapsLine::parse(l).map_err(|e| err(i + 1, e))?;
        if let Some(p) = out.last() {
            if m.start < p.end {
                return Err(err(i + 1, "overlaps or precedes the line before"));
            }
        }
        out.push(m);
    }
    Ok(out)
}

/// The flags of `VmFlags:` words (`rd wr mr mw me ac`), keeping the bits of
/// every word the kernel prints (also of flags the model does not model).
/// Unknown words are an error.
pub fn vmflags_from_words(words: &str) -> Result<VmFlags, String> {
    VmFlags::from_smaps_retain(words).map_err(|w| format!("unknown VmFlags word {w:?}"))
}

/// The `VmFlags:` words of `flags`, in the kernel's order; bits that have no
/// word are left out (the same as [`VmFlags::smaps`]).
pub fn vmflags_words(flags: VmFlags) -> String {
    flags.smaps()
}

/// One line of a vmflags text: a range and its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmFlagsLine {
    /// `vm_start`.
    pub start: u64,
    /// `vm_end`.
    pub end: u64,
    /// The flags.
    pub flags: VmFlags,
}

/// Parses `start-end words...` lines (the ranges of smaps with their `VmFlags:`).
pub fn parse_vmflags(text: &str) -> Result<Vec<VmFlagsLine>, MapsError> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let (range, words) = l.split_once(' ').unwrap_or((l, ""));
        let (start, end) = parse_range(range).map_err(|e| err(i + 1, e))?;
        let flags = vmflags_from_words(words).map_err(|e| err(i + 1, e))?;
        out.push(VmFlagsLine { start, end, flags });
    }
    Ok(out)
}

/// What the kernel prints for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileInfo {
    name: String,
    dev: (u32, u32),
    inode: u64,
}

/// Files by name: one [`FileId`] per path, with the device and inode the
/// kernel prints for it; and the names of shared anonymous objects.
#[derive(Debug, Clone, Default)]
pub struct FileTable {
    ids: HashMap<String, FileId>,
    info: Vec<FileInfo>,
    shm: HashMap<ShmId, (String, u64)>,
}

impl FileTable {
    /// An empty table.
    pub fn new() -> FileTable {
        FileTable::default()
    }

    /// The id of the file named `name`, new if the name is new.
    pub fn file(&mut self, name: &str) -> FileId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = FileId(self.info.len() as u64 + 1);
        self.info.push(FileInfo {
            name: name.to_string(),
            dev: (0, 0),
            inode: 0,
        });
        self.ids.insert(name.to_string(), id);
        id
    }

    /// The id of `name` if it has one.
    pub fn lookup(&self, name: &str) -> Option<FileId> {
        self.ids.get(name).copied()
    }

    /// Records the device and inode printed for a file.
    pub fn set_identity(&mut self, id: FileId, dev: (u32, u32), inode: u64) {
        if let Some(i) = self.info.get_mut((id.0 as usize).wrapping_sub(1)) {
            i.dev = dev;
            i.inode = inode;
        }
    }

    /// The name of a file of this table.
    pub fn name(&self, id: FileId) -> Option<&str> {
        self.info
            .get((id.0 as usize).wrapping_sub(1))
            .map(|i| i.name.as_str())
    }

    fn identity(&self, id: FileId) -> ((u32, u32), u64) {
        self.info
            .get((id.0 as usize).wrapping_sub(1))
            .map(|i| (i.dev, i.inode))
            .unwrap_or(((0, 0), 0))
    }

    /// Names a shared anonymous object (default: `/dev/zero (deleted)`).
    pub fn set_shm_name(&mut self, id: ShmId, name: &str, inode: u64) {
        self.shm.insert(id, (name.to_string(), inode));
    }
}

/// A process layout loaded from `/proc/PID/maps`: the [`AddressSpace`]
/// plus what the kernel prints that is not a VMA of the space.
#[derive(Debug)]
pub struct ProcImage {
    /// The address space.
    pub space: AddressSpace,
    /// `mm->start_stack`: the VMA containing it is printed `[stack]`.
    pub start_stack: Option<u64>,
    /// Lines above the user address space (the `[vsyscall]` gate area): not
    /// VMAs of the space, printed after them.
    pub gate: Vec<MapsLine>,
}

/// How [`ProcImage::load`] builds the space.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The tunables (default: [`Config::default`]).
    pub config: Config,
    /// `(mm->start_brk, mm->brk)`, if known; else taken from a `[heap]` line,
    /// or left at the config's `start_brk` if there is none.
    pub brk: Option<(u64, u64)>,
    /// The memory to build the space on (default: a new one).
    pub memory: Option<Memory>,
}

impl ProcImage {
    /// Builds the space of a maps text (and, when given, the `VmFlags` of
    /// the same moment, which must have one line per maps line with the same
    /// range).
    ///
    /// What a maps line cannot tell is assumed:
    /// - without `VmFlags`, a special mapping gets the kernel's flags
    ///   ([`Special::flags`]); any other the permissions plus
    ///   `VM_MAY{READ,WRITE,EXEC}`, `VM_SHARED | VM_MAYSHARE` for `s`,
    ///   `VM_GROWSDOWN` for `[stack]` and `VM_ACCOUNT` for private writable
    ///   anonymous memory;
    /// - a private anonymous VMA's page offset is `start >> PAGE_SHIFT` (as
    ///   at its `mmap`; the kernel keeps the original one through `mremap`);
    /// - only `[stack]` has an `anon_vma` (the kernel wrote the arguments
    ///   into it; no other anonymous page of a fresh `execve` image is
    ///   faulted yet); no page is present;
    /// - a file is one [`FileId`] per name; a shared anonymous object is
    ///   one per inode;
    /// - `[anon:NAME]` / `[anon_shmem:NAME]` lines are private / shared
    ///   anonymous VMAs named `NAME` ([`Vma::anon_name`]); the config is
    ///   the caller's (set [`Config::anon_vma_name`] to rename them);
    /// - lines at or above the config's `task_size` go to [`gate`](Self::gate).
    pub fn load(
        lines: &[MapsLine],
        vmflags: Option<&[VmFlagsLine]>,
        files: &mut FileTable,
        opts: LoadOptions,
    ) -> Result<ProcImage, MapsError> {
        if let Some(vf) = vmflags {
            if vf.len() != lines.len() {
                return Err(err(
                    vf.len().min(lines.len()) + 1,
                    format!("vmflags has {} lines, maps {}", vf.len(), lines.len()),
                ));
            }
        }
        let mem = opts.memory.unwrap_or_default();
        let mut space = AddressSpace::with_memory(&mem, opts.config);
        let task_size = space.inner.cfg.task_size;
        let mut gate = Vec::new();
        let mut start_stack = None;
        let mut heap = None;
        let mut shms: HashMap<u64, ShmId> = HashMap::new();
        let (sysv, sysv_sizes) = sysv_attachments(lines);
        let mut attach_files: HashMap<usize, OpenFile> = HashMap::new();
        let mut prev_end = 0;
        {
            let mut phys = mem.lock();
            for (i, m) in lines.iter().enumerate() {
                if m.start < prev_end {
                    return Err(err(i + 1, "overlaps or precedes the line before"));
                }
                prev_end = m.end;
                let flags = match vmflags {
                    Some(vf) => {
                        let f = vf[i];
                        if (f.start, f.end) != (m.start, m.end) {
                            return Err(err(
                                i + 1,
                                format!(
                                    "vmflags range {:x}-{:x} differs from maps range {:x}-{:x}",
                                    f.start, f.end, m.start, m.end
                                ),
                            ));
                        }
                        f.flags
                    }
                    None => assumed_flags(m),
                };
                if m.end > task_size {
                    gate.push(m.clone());
                    continue;
                }
                if m.name == "[vsyscall]" {
                    space.inner.vsyscall = true;
                    continue;
                }
                let kind = m.kind();
                let mut vm_file = None;
                let backing = match kind {
                    MapsKind::Anon => Backing::Anon,
                    MapsKind::Special => match Special::from_name(&m.name) {
                        Some(sp) => Backing::Special(sp),
                        None => Backing::File(files.file(&m.name)),
                    },
                    MapsKind::File => {
                        let id = files.file(&m.name);
                        files.set_identity(id, m.dev, m.inode);
                        // A shared mapping without VM_MAYWRITE is of a file
                        // opened read-only (do_mmap); otherwise assume read-write.
                        let mode = if m.shared && !flags.contains(VmFlags::MAYWRITE) {
                            OpenMode::ReadOnly
                        } else {
                            OpenMode::ReadWrite
                        };
                        vm_file = Some(
                            OpenFile::new(id)
                                .mode(mode)
                                .thp_aligned(thp_aligned_path(&m.name))
                                .refuses_map_sync(refuses_map_sync_path(&m.name)),
                        );
                        Backing::File(id)
                    }
                    MapsKind::SharedAnon if sysv[i].is_some() => {
                        let (shmid, key, group) = sysv[i].unwrap_or_default();
                        let seg = SysvShm {
                            shmid,
                            key,
                            size: sysv_sizes.get(&shmid).copied().unwrap_or(0),
                        };
                        // SHM_RDONLY attachments have no VM_MAYWRITE.
                        let read_only = !flags.contains(VmFlags::MAYWRITE);
                        vm_file = Some(
                            *attach_files
                                .entry(group)
                                .or_insert_with(|| attach_file(read_only)),
                        );
                        Backing::Shm(phys.cache.sysv_segment(seg))
                    }
                    MapsKind::SharedAnon => {
                        let id = *shms.entry(m.inode).or_insert_with(|| phys.cache.new_shm());
                        // A named VMA's line shows the VMA's name, not the object's.
                        if anon_name(&m.name).is_none() {
                            files.set_shm_name(id, &m.name, m.inode);
                        }
                        Backing::Shm(id)
                    }
                };
                let pgoff = match backing {
                    Backing::Anon => m.start >> PAGE_SHIFT,
                    _ => m.offset >> PAGE_SHIFT,
                };
                if m.name == "[stack]" {
                    start_stack = Some(m.end - PAGE_SIZE);
                }
                if m.name == "[heap]" {
                    heap = Some((m.start, m.end));
                }
                let anon = (m.name == "[stack]").then(AnonId::fresh);
                let vma = Vma {
                    start: m.start,
                    end: m.end,
                    flags,
                    pgoff,
                    backing,
                    vm_file,
                    anon,
                    anon_inherited: false,
                    anon_name: anon_name(&m.name).map(|n| Arc::new(n.to_owned())),
                    policy: None,
                };
                space.inner.commit(&mut phys, crate::edit::Plan::add(vma));
            }
        }
        if let Some((s, b)) = opts.brk.or(heap) {
            space.inner.start_brk = s;
            space.inner.brk = b;
        }
        Ok(ProcImage {
            space,
            start_stack,
            gate,
        })
    }

    /// The layout as `/proc/PID/maps` lines (see [`maps_lines`]).
    pub fn maps_lines(&self, files: &FileTable) -> Vec<MapsLine> {
        maps_lines(&self.space, files, self.start_stack, &self.gate)
    }

    /// The layout as a `/proc/PID/maps` text.
    pub fn to_maps_string(&self, files: &FileTable) -> String {
        let mut s = String::new();
        for l in self.maps_lines(files) {
            s.push_str(&l.to_string());
            s.push('\n');
        }
        s
    }
}

/// The System V segment and attachment of each maps line
/// (`/SYSV<key> (deleted)`, the shmid as inode): `(shmid, key, attachment)`,
/// a line continuing the one before (adjacent, same segment, contiguous
/// offsets) being the same attachment, any other a new one. And each
/// segment's size, taken as the farthest offset its lines map (the maps
/// text does not show `shm_segsz`).
#[allow(clippy::type_complexity)]
fn sysv_attachments(lines: &[MapsLine]) -> (Vec<Option<(i32, i32, usize)>>, HashMap<i32, u64>) {
    let mut out: Vec<Option<(i32, i32, usize)>> = Vec::with_capacity(lines.len());
    let mut sizes: HashMap<i32, u64> = HashMap::new();
    for (i, m) in lines.iter().enumerate() {
        let Some(key) = SysvShm::key_of_maps_name(&m.name) else {
            out.push(None);
            continue;
        };
        let shmid = m.inode as i32;
        let size = sizes.entry(shmid).or_insert(0);
        *size = (*size).max(m.offset + (m.end - m.start));
        let prev = i.checked_sub(1).map(|p| (&lines[p], out[p]));
        let group = match prev {
            Some((p, Some((_, _, g))))
                if p.end == m.start
                    && p.inode == m.inode
                    && p.offset + (p.end - p.start) == m.offset =>
            {
                g
            }
            _ => i,
        };
        out.push(Some((shmid, key, group)));
    }
    (out, sizes)
}

/// The flags a maps line stands for when no `VmFlags` are known.
fn assumed_flags(m: &MapsLine) -> VmFlags {
    if let Some(sp) = Special::from_name(&m.name) {
        return sp.flags();
    }
    let mut f = VmFlags::MAY_RWX;
    if m.read {
        f |= VmFlags::READ;
    }
    if m.write {
        f |= VmFlags::WRITE;
    }
    if m.exec {
        f |= VmFlags::EXEC;
    }
    if m.shared {
        f |= VmFlags::MAYSHARE | VmFlags::SHARED;
    }
    if m.name == "[stack]" {
        f |= VmFlags::GROWSDOWN;
    }
    if m.write && !m.shared && m.kind() == MapsKind::Anon {
        f |= VmFlags::ACCOUNT;
    }
    f
}

/// A space's layout as the kernel prints it in `/proc/PID/maps`: file paths
/// and devices from `files`, `[heap]` for the VMAs overlapping
/// `start_brk..brk`, `[stack]` for the one containing `start_stack`,
/// `/dev/zero (deleted)` for shared anonymous memory, `[anon:NAME]` and
/// `[anon_shmem:NAME]` for named anonymous VMAs, then the `gate` lines.
pub fn maps_lines(
    space: &AddressSpace,
    files: &FileTable,
    start_stack: Option<u64>,
    gate: &[MapsLine],
) -> Vec<MapsLine> {
    let (start_brk, brk) = (space.inner.start_brk, space.inner.brk);
    let mut out = Vec::with_capacity(space.map_count() + gate.len());
    for v in space.vmas() {
        let f = v.flags();
        let (offset, dev, inode, name) = match v.backing() {
            Backing::File(id) => {
                let (dev, inode) = files.identity(id);
                let name = files.name(id).unwrap_or("").to_string();
                (v.pgoff() << PAGE_SHIFT, dev, inode, name)
            }
            Backing::Shm(id) if id.sysv().is_some() => {
                let (shmid, key) = id.sysv().unwrap_or_default();
                (
                    v.pgoff() << PAGE_SHIFT,
                    (0, 1),
                    shmid as u64,
                    sysv_name(key),
                )
            }
            Backing::Shm(id) => {
                let (name, inode) = files
                    .shm
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| ("/dev/zero (deleted)".to_string(), 0));
                let name = match v.anon_name() {
                    Some(n) => anon_vma_label(Some(n), true),
                    None => name,
                };
                (v.pgoff() << PAGE_SHIFT, (0, 1), inode, name)
            }
            Backing::Special(sp) => (0, (0, 0), 0, sp.name().to_string()),
            Backing::Anon => {
                // vma_is_initial_heap / vma_is_initial_stack.
                let name = if v.start() < brk && v.end() > start_brk {
                    "[heap]".to_string()
                } else if start_stack.is_some_and(|s| v.start() <= s && v.end() >= s) {
                    "[stack]".to_string()
                } else {
                    // After the heap and the stack (get_vma_name).
                    anon_vma_label(v.anon_name(), false)
                };
                (0, (0, 0), 0, name)
            }
        };
        out.push(MapsLine {
            start: v.start(),
            end: v.end(),
            read: f.contains(VmFlags::READ),
            write: f.contains(VmFlags::WRITE),
            exec: f.contains(VmFlags::EXEC),
            shared: f.contains(VmFlags::MAYSHARE),
            offset,
            dev,
            inode,
            name,
        });
    }
    if let Some(g) = space.gate_vma() {
        out.push(MapsLine {
            start: g.start(),
            end: g.end(),
            read: false,
            write: false,
            exec: true,
            shared: false,
            offset: 0,
            dev: (0, 0),
            inode: 0,
            name: Special::Vsyscall.name().to_string(),
        });
    }
    out.extend(gate.iter().cloned());
    out
}

/// The anonymous VMA name in a maps line's name column: `NAME` of
/// `[anon:NAME]` or `[anon_shmem:NAME]`.
pub fn anon_name(column: &str) -> Option<&str> {
    let inner = column.strip_suffix(']')?;
    inner
        .strip_prefix("[anon:")
        .or_else(|| inner.strip_prefix("[anon_shmem:"))
}

/// Whether the file system of `path` places mappings on 2 MiB boundaries
/// (`thp_get_unmapped_area`): assumed for regular paths (ext4, xfs, btrfs
/// in Linux 6.18), not for device files, procfs/sysfs, memfd or shared
/// memory (tmpfs with huge pages off).
pub fn thp_aligned_path(path: &str) -> bool {
    path.starts_with('/')
        && !["/dev/", "/proc/", "/sys/", "/memfd:", "/SYSV", "/run/"]
            .iter()
            .any(|p| path.starts_with(p))
}

/// Whether the file system of `path` refuses `MAP_SYNC` for it
/// ([`OpenFile::refuses_map_sync`]): assumed for the same regular paths as
/// [`thp_aligned_path`], taken to be on ext4 or xfs without DAX.
pub fn refuses_map_sync_path(path: &str) -> bool {
    thp_aligned_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_kernel_lines() {
        for l in [
            "555555554000-555555558000 r--p 00000000 fe:00 247493                     /usr/bin/ls",
            "555555579000-55555557a000 rw-p 00000000 00:00 0 ",
            "7ffff7fc2000-7ffff7fc6000 r--p 00000000 00:00 0                          [vvar]",
            "7ffff7f00000-7ffff7f01000 rw-s 00000000 00:01 1031                       /dev/zero (deleted)",
            "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
        ] {
            let m = MapsLine::parse(l).unwrap();
            assert_eq!(m.to_string(), l);
        }
        let m = MapsLine::parse("00400000-00401000 r-xp 00001000 08:01 7 /a b").unwrap();
        assert_eq!((m.offset, m.dev, m.inode), (0x1000, (8, 1), 7));
        assert_eq!(m.name, "a b".replace("a b", "/a b"));
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = parse_maps("00400000-00401000 r-xp 0 08:01 7 /a\nzz-1 r--p 0 0:0 0\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("bad start"), "{e}");
        let e = parse_maps("00400000-00401000 rxxp 0 08:01 7\n").unwrap_err();
        assert!(e.message.contains("permissions"));
        let e = parse_maps("00402000-00403000 r--p 0 0:0 0\n00400000-00401000 r--p 0 0:0 0\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_vmflags("00400000-00401000 rd zz\n").unwrap_err();
        assert!(e.message.contains("zz"));
    }

    #[test]
    fn vmflags_words_round_trip() {
        let f = vmflags_from_words("rd wr mr mw me gd ac").unwrap();
        assert_eq!(
            f,
            VmFlags::READ
                | VmFlags::WRITE
                | VmFlags::MAY_RWX
                | VmFlags::GROWSDOWN
                | VmFlags::ACCOUNT
        );
        assert_eq!(vmflags_words(f), "rd wr mr mw me gd ac");
    }

    #[test]
    fn load_and_continue() {
        let maps = "555555554000-555555558000 r--p 00000000 fe:00 9                          /usr/bin/ls\n\
                    7ffff7fc8000-7ffff7fca000 r-xp 00000000 00:00 0                          [vdso]\n\
                    7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n\
                    ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
        let lines = parse_maps(maps).unwrap();
        let mut files = FileTable::new();
        let opts = LoadOptions {
            brk: Some((0x5555_5555_8000, 0x5555_5555_8000)),
            ..Default::default()
        };
        let mut img = ProcImage::load(&lines, None, &mut files, opts).unwrap();
        assert_eq!(
            img.space.map_count(),
            3,
            "[vsyscall] is no VMA of the space"
        );
        assert_eq!(img.to_maps_string(&files), maps);
        let b = img.space.brk(0x5555_5555_9000);
        assert_eq!(b, 0x5555_5555_9000);
        let text = img.to_maps_string(&files);
        assert!(
            text.contains(
                "555555558000-555555559000 rw-p 00000000 00:00 0                          [heap]"
            ),
            "{text}"
        );
        // The next mmap goes top-down, right below mmap_base.
        let a = img
            .space
            .mmap(
                0,
                4096,
                crate::Prot::READ,
                crate::MapFlags::PRIVATE_ANON,
                None,
                0,
            )
            .unwrap();
        assert_eq!(a, 0x7fff_f7ff_e000);
        img.space.validate().unwrap();
    }

    #[test]
    fn vmflags_must_match_maps() {
        let lines = parse_maps("00400000-00401000 r--p 00000000 00:00 0 \n").unwrap();
        let vf = parse_vmflags("00400000-00402000 rd mr\n").unwrap();
        let e = ProcImage::load(&lines, Some(&vf), &mut FileTable::new(), Default::default())
            .unwrap_err();
        assert_eq!(e.line, 1);
    }
}
