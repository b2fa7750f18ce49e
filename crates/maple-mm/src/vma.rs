//! The virtual memory area ([`Vma`]): a page-aligned range with one set of
//! flags and one backing, and the kernel's rules for cutting and merging them.

use crate::config::{PAGE_SHIFT, PAGE_SIZE};
use crate::flags::{Prot, VmFlags};
use core::fmt;
use core::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A file, named by the caller (the model has no file system: a file is a
/// page cache of pages, zero until written through
/// [`Memory::write_file`](crate::Memory::write_file) or a shared mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FileId(pub u64);

/// How a file was opened (`O_ACCMODE` of the descriptor passed to `mmap`):
/// what its mappings may ever do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum OpenMode {
    /// `O_RDONLY`: a shared mapping gets neither `VM_SHARED` nor
    /// `VM_MAYWRITE` (so `mprotect(PROT_WRITE)` on it is `EACCES`), and
    /// `MAP_SHARED` with `PROT_WRITE` is `EACCES`.
    ReadOnly,
    /// `O_WRONLY`: every mapping is `EACCES` (mapping needs read access).
    WriteOnly,
    /// `O_RDWR`.
    #[default]
    ReadWrite,
}

/// A file as `mmap` sees it: which file ([`FileId`], whose pages the
/// page cache holds), how it was opened ([`OpenMode`]), and whether its
/// file system places mappings on 2 MiB boundaries. It stands for the
/// kernel's `struct file`: two VMAs merge only if they map the same
/// `OpenFile` (equal in every field).
///
/// `thp_aligned` is the file system's `get_unmapped_area` being
/// `thp_get_unmapped_area` (Linux 6.18: ext4, xfs, btrfs-less setups ...;
/// not tmpfs with `huge=never`, not procfs or device files): a non-fixed
/// mapping of such a file is placed with `address ≡ file offset (mod 2
/// MiB)` when its range of the file covers a whole aligned 2 MiB block.
///
/// ```
/// use maple_mm::{AddressSpace, FileId, OpenFile, OpenMode, MapFlags, Prot, Errno};
/// let mut mm = AddressSpace::new();
/// let ro = OpenFile::new(FileId(7)).mode(OpenMode::ReadOnly);
/// let a = mm.mmap_file(0, 4096, Prot::READ, MapFlags::SHARED, ro, 0).unwrap();
/// assert!(!mm.vma_at(a).unwrap().is_shared());           // no VM_SHARED ...
/// assert_eq!(mm.mprotect(a, 4096, Prot::RW), Err(Errno::EACCES)); // ... nor VM_MAYWRITE
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OpenFile {
    /// The file.
    pub id: FileId,
    /// Its open mode.
    pub mode: OpenMode,
    /// Whether its file system aligns mappings to 2 MiB
    /// (`thp_get_unmapped_area`).
    pub thp_aligned: bool,
    /// Whether its file system refuses a mapping with `MAP_SYNC`
    /// (`VM_SYNC`) with `EOPNOTSUPP`: ext4 and xfs do for a file that is
    /// not on a DAX device (`daxdev_mapping_supported`); tmpfs and others
    /// map it and keep the flag.
    #[cfg_attr(feature = "serde", serde(default))]
    pub refuses_map_sync: bool,
}

impl OpenFile {
    /// `id` opened read-write on a file system that neither aligns mappings
    /// nor refuses `MAP_SYNC`.
    pub const fn new(id: FileId) -> OpenFile {
        OpenFile {
            id,
            mode: OpenMode::ReadWrite,
            thp_aligned: false,
            refuses_map_sync: false,
        }
    }

    /// The same file with another open mode.
    pub const fn mode(self, mode: OpenMode) -> OpenFile {
        OpenFile { mode, ..self }
    }

    /// The same file on a file system that does (`true`) or does not align
    /// mappings to 2 MiB.
    pub const fn thp_aligned(self, thp_aligned: bool) -> OpenFile {
        OpenFile {
            thp_aligned,
            ..self
        }
    }

    /// The same file on a file system that does (`true`) or does not
    /// refuse `MAP_SYNC`.
    pub const fn refuses_map_sync(self, refuses_map_sync: bool) -> OpenFile {
        OpenFile {
            refuses_map_sync,
            ..self
        }
    }

    /// `FMODE_READ`.
    pub fn readable(self) -> bool {
        self.mode != OpenMode::WriteOnly
    }

    /// `FMODE_WRITE`.
    pub fn writable(self) -> bool {
        self.mode != OpenMode::ReadOnly
    }
}

impl From<FileId> for OpenFile {
    fn from(id: FileId) -> OpenFile {
        OpenFile::new(id)
    }
}

/// The special mappings the kernel installs at `execve`
/// (`_install_special_mapping`, `map_vdso`) and the `[vsyscall]` gate area,
/// with the flags Linux 6.18 gives them on x86-64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Special {
    /// `[vvar]`: the vDSO data pages, `VM_READ | VM_MAYREAD | VM_IO |
    /// VM_DONTDUMP | VM_PFNMAP | VM_DONTEXPAND` (`rd mr pf io de dd`).
    Vvar,
    /// `[vvar_vclock]`: the vDSO clock pages (Linux 6.13+), flags as `[vvar]`.
    VvarVclock,
    /// `[vdso]`: the vDSO code, `VM_READ | VM_EXEC | VM_MAY{READ,WRITE,EXEC}
    /// | VM_DONTEXPAND` (`rd ex mr mw me de`).
    Vdso,
    /// `[vsyscall]`: the legacy gate page at `0xffffffffff600000`, `VM_EXEC`
    /// only (`ex`). It is no VMA of the address space (it lies above
    /// `TASK_SIZE`; `/proc/PID/maps` prints it last): see
    /// [`AddressSpace::set_vsyscall`](crate::AddressSpace::set_vsyscall).
    Vsyscall,
}

impl Special {
    /// The name `/proc/PID/maps` prints.
    pub fn name(self) -> &'static str {
        match self {
            Special::Vvar => "[vvar]",
            Special::VvarVclock => "[vvar_vclock]",
            Special::Vdso => "[vdso]",
            Special::Vsyscall => "[vsyscall]",
        }
    }

    /// The special mapping of a `/proc/PID/maps` name.
    pub fn from_name(name: &str) -> Option<Special> {
        [
            Special::Vvar,
            Special::VvarVclock,
            Special::Vdso,
            Special::Vsyscall,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }

    /// The VMA flags Linux gives it.
    pub fn flags(self) -> VmFlags {
        match self {
            Special::Vvar | Special::VvarVclock => {
                VmFlags::READ
                    | VmFlags::MAYREAD
                    | VmFlags::IO
                    | VmFlags::DONTDUMP
                    | VmFlags::PFNMAP
                    | VmFlags::DONTEXPAND
            }
            Special::Vdso => VmFlags::READ | VmFlags::EXEC | VmFlags::MAY_RWX | VmFlags::DONTEXPAND,
            Special::Vsyscall => VmFlags::EXEC,
        }
    }
}

/// The address of the `[vsyscall]` page (`VSYSCALL_ADDR`).
pub const VSYSCALL_ADDR: u64 = 0xffff_ffff_ff60_0000;

/// A shared anonymous memory object (Linux: the shmem file behind a
/// `MAP_SHARED | MAP_ANONYMOUS` mapping, freed with its last mapping, or
/// a System V segment, kept while its [`Memory`](crate::Memory) lives).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShmId(pub(crate) u64);

impl ShmId {
    /// The tag of a System V segment's id.
    const SYSV: u64 = 1 << 63;

    /// The object of System V segment `shmid` (non-negative) made with
    /// `key`: the id holds both (bits 0..31 the shmid, 31..63 the key), so a
    /// VMA names its segment without growing.
    pub(crate) fn for_sysv(shmid: i32, key: i32) -> ShmId {
        ShmId(ShmId::SYSV | (u64::from(key as u32) << 31) | (shmid as u32 as u64 & 0x7fff_ffff))
    }

    /// `(shmid, key)` of a System V segment's object.
    pub(crate) fn sysv(self) -> Option<(i32, i32)> {
        (self.0 & ShmId::SYSV != 0)
            .then_some(((self.0 & 0x7fff_ffff) as i32, (self.0 >> 31) as u32 as i32))
    }
}

/// The name `/proc/PID/maps` prints for a System V segment made with `key`.
pub(crate) fn sysv_name(key: i32) -> String {
    format!("/SYSV{:08x} (deleted)", key as u32)
}

/// The identity of an `anon_vma`: the set of anonymous pages a VMA's pages
/// belong to. Assigned on the first anonymous fault (`anon_vma_prepare`),
/// copied by splits, fresh in a child at fork (`anon_vma_fork`). Two VMAs
/// whose ids differ never merge (`is_mergeable_anon_vma`); see
/// [`Vma::anon_vma_inherited`] for the case where one has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AnonId(NonZeroU64);

static NEXT_ANON: AtomicU64 = AtomicU64::new(1);

impl AnonId {
    /// A new, never used id.
    pub(crate) fn fresh() -> AnonId {
        // Ids start at 1 and a 64-bit counter does not wrap: never zero, so
        // that `Option<AnonId>` is one word in every `Vma`.
        AnonId(
            NonZeroU64::new(NEXT_ANON.fetch_add(1, Ordering::Relaxed))
                .expect("anon_vma ids ran out"),
        )
    }
}

/// The name of an anonymous VMA (the kernel's `struct anon_vma_name`):
/// shared by the VMAs split from one naming and by a child's copies, as the
/// kernel counts references to it. One pointer wide: with `AnonId` non-zero,
/// a `Vma` stays 88 bytes (its allocation size class) with a name.
pub(crate) type AnonName = Arc<String>;

/// What a VMA maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Backing {
    /// Private anonymous memory: zero-filled on demand.
    Anon,
    /// A file, shared or private (the VMA's flags tell).
    File(FileId),
    /// Shared anonymous memory, or a System V segment (its VMAs' `vm_file`
    /// is then the attachment's file).
    Shm(ShmId),
    /// A special mapping of the kernel ([`Special`]): its pages come from
    /// the kernel (the model: one zero-filled object per kind, shared by
    /// every space of a [`Memory`](crate::Memory)).
    Special(Special),
}

/// A virtual memory area: `start..end`, page aligned, with its flags, its
/// backing and the page offset of `start` in it.
///
/// For private anonymous memory the offset is `start >> PAGE_SHIFT` at
/// `mmap` time, as in Linux (so that merging requires contiguous offsets
/// there too); for shared anonymous memory it starts at 0.
#[derive(Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Vma {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) flags: VmFlags,
    pub(crate) pgoff: u64,
    pub(crate) backing: Backing,
    /// `vm_file` for a file mapping: the file, its open mode, its file
    /// system's placement rule; for a System V attachment, the attachment's
    /// own file. (A serialized layout without it has none.)
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) vm_file: Option<OpenFile>,
    pub(crate) anon: Option<AnonId>,
    /// The anon_vma chain is not singular: the VMA was inherited at fork
    /// with anonymous pages (`anon_vma_fork`), so its pages may still be
    /// shared with the parent's anon_vma.
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) anon_inherited: bool,
    /// `anon_vma_name`: the name `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)`
    /// gave the VMA (private or shared anonymous memory only).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) anon_name: Option<AnonName>,
    /// `vm_policy`: the NUMA memory policy `mbind` gave the VMA (`None`:
    /// the task's, as for a VMA no `mbind` touched).
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) policy: Option<MemPolicy>,
}

/// A NUMA memory policy (`struct mempolicy`) as `mbind` sets it and
/// `mpol_equal` compares it: its mode (`MPOL_PREFERRED`, `MPOL_BIND`, ...,
/// with `MPOL_PREFERRED` of no node already made `MPOL_LOCAL`), the nodes
/// it names (a mask, already limited to the nodes with memory), and its
/// mode flags (`MPOL_F_STATIC_NODES`, `MPOL_F_RELATIVE_NODES`,
/// `MPOL_F_NUMA_BALANCING`). VMAs of different policies never merge.
///
/// Four bytes, so that a VMA stays as small as it was before it could
/// carry a policy: the model keeps nodes 0 to 15 (see
/// [`Config::numa_nodes`](crate::Config::numa_nodes)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MemPolicy {
    mode: core::num::NonZeroU8,
    flags: u8,
    nodes: u16,
}

impl MemPolicy {
    /// The policy `mode` (an `MPOL_*` other than `MPOL_DEFAULT`, which is no
    /// policy) over `nodes` (bits 0 to 15) with the `MPOL_F_*` mode `flags`.
    ///
    /// # Panics
    /// If `mode` is `MPOL_DEFAULT` or above 255, or `nodes` names a node
    /// above 15.
    pub fn new(mode: u32, nodes: u64, flags: u32) -> MemPolicy {
        let mode = u8::try_from(mode)
            .ok()
            .and_then(core::num::NonZeroU8::new)
            .expect("MemPolicy: MPOL_DEFAULT is no policy");
        let nodes = u16::try_from(nodes).expect("MemPolicy: nodes 0 to 15 only");
        // MPOL_F_NUMA_BALANCING, MPOL_F_RELATIVE_NODES, MPOL_F_STATIC_NODES
        // are bits 13 to 15.
        let flags = (flags >> 13) as u8 & 0b111;
        MemPolicy { mode, flags, nodes }
    }

    /// The mode (`MPOL_*`).
    pub fn mode(&self) -> u32 {
        u32::from(self.mode.get())
    }

    /// The nodes, one bit each.
    pub fn nodes(&self) -> u64 {
        u64::from(self.nodes)
    }

    /// The mode flags (`MPOL_F_*`).
    pub fn flags(&self) -> u32 {
        u32::from(self.flags) << 13
    }
}

impl Vma {
    /// First address (`vm_start`).
    pub fn start(&self) -> u64 {
        self.start
    }
    /// One past the last address (`vm_end`).
    pub fn end(&self) -> u64 {
        self.end
    }
    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Never true: a VMA covers at least one page.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    /// Length in pages (`vma_pages`).
    pub fn pages(&self) -> u64 {
        (self.end - self.start) >> PAGE_SHIFT
    }
    /// The `VM_*` flags.
    pub fn flags(&self) -> VmFlags {
        self.flags
    }
    /// The protection (the access flags).
    pub fn prot(&self) -> Prot {
        self.flags.prot()
    }
    /// Page offset of `start` in the backing (`vm_pgoff`).
    pub fn pgoff(&self) -> u64 {
        self.pgoff
    }
    /// What the VMA maps.
    pub fn backing(&self) -> Backing {
        self.backing
    }
    /// The file, for a file mapping.
    pub fn file(&self) -> Option<FileId> {
        match self.backing {
            Backing::File(f) => Some(f),
            _ => None,
        }
    }
    /// The file as it was opened for the mapping (`vm_file`), for a file mapping.
    pub fn open_file(&self) -> Option<OpenFile> {
        match self.backing {
            Backing::File(_) => self.vm_file,
            _ => None,
        }
    }
    /// The special mapping this VMA is, if any.
    pub fn special(&self) -> Option<Special> {
        match self.backing {
            Backing::Special(s) => Some(s),
            _ => None,
        }
    }
    /// The anon_vma identity, once the VMA has anonymous pages.
    pub fn anon_vma(&self) -> Option<AnonId> {
        self.anon
    }
    /// Whether the VMA's anon_vma chain holds more than its own anon_vma:
    /// the VMA (or the one it was split from) was copied at fork with
    /// anonymous pages. Such a VMA merges with a neighbour that has no
    /// anon_vma yet only if the kernel would: never (`vma_had_uncowed_parents`,
    /// Linux 6.16+; before, `list_is_singular(&vma->anon_vma_chain)`).
    pub fn anon_vma_inherited(&self) -> bool {
        self.anon_inherited
    }
    /// The memory policy `mbind` gave the VMA (`vm_policy`), if any.
    pub fn policy(&self) -> Option<MemPolicy> {
        self.policy
    }
    /// The name `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` gave this
    /// anonymous VMA (`anon_vma_name`), printed `[anon:NAME]` (or
    /// `[anon_shmem:NAME]` for shared anonymous memory) in `/proc/PID/maps`.
    pub fn anon_name(&self) -> Option<&str> {
        self.anon_name.as_deref().map(String::as_str)
    }
    /// The shmid of the System V shared memory segment, for a VMA made by
    /// [`shmat`](crate::AddressSpace::shmat) (see
    /// [`sysv_segment`](crate::AddressSpace::sysv_segment)).
    pub fn sysv_shmid(&self) -> Option<i32> {
        self.sysv().map(|(shmid, _)| shmid)
    }

    /// `(shmid, key)` of the System V segment a VMA of `shmat` maps.
    pub(crate) fn sysv(&self) -> Option<(i32, i32)> {
        match self.backing {
            Backing::Shm(id) => id.sysv(),
            _ => None,
        }
    }
    /// `VM_SHARED`.
    pub fn is_shared(&self) -> bool {
        self.flags.contains(VmFlags::SHARED)
    }
    /// `vma_is_anonymous`: no file behind it (private anonymous memory).
    pub fn is_anonymous(&self) -> bool {
        self.backing == Backing::Anon
    }
    /// Whether `addr` lies inside.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }

    /// The page offset of `addr` in the backing (`linear_page_index`).
    pub(crate) fn pgoff_of(&self, addr: u64) -> u64 {
        self.pgoff + ((addr - self.start) >> PAGE_SHIFT)
    }

    /// The key of the VMA in the tree.
    pub(crate) fn key(&self) -> core::ops::RangeInclusive<u64> {
        self.start..=self.end - 1
    }

    /// The part `start..end` of this VMA, its offset moved along (what
    /// `__split_vma` leaves on each side of a cut).
    pub(crate) fn slice(&self, start: u64, end: u64) -> Vma {
        debug_assert!(self.start <= start && start < end && end <= self.end);
        Vma {
            start,
            end,
            pgoff: self.pgoff_of(start),
            ..self.clone()
        }
    }

    /// Everything but the range: flags, backing, offset at `start`, anon_vma.
    pub(crate) fn same_attrs(&self, o: &Vma) -> bool {
        self.flags == o.flags
            && self.backing == o.backing
            && self.vm_file == o.vm_file
            && self.anon == o.anon
            && self.anon_inherited == o.anon_inherited
            && self.anon_name == o.anon_name
            && self.policy == o.policy
            && self.pgoff == o.pgoff
    }

    /// `vm_start_gap`: the start including the stack guard gap of a
    /// grows-down VMA (placement keeps that much room below a stack).
    pub(crate) fn start_gap(&self, guard: u64) -> u64 {
        if self.flags.contains(VmFlags::GROWSDOWN) {
            self.start.saturating_sub(guard)
        } else {
            self.start
        }
    }

    /// The kernel's merge rule (`is_mergeable_vma`, `is_mergeable_anon_vma`,
    /// `can_vma_merge_after`): `self` ends where `next` starts, neither is a
    /// special mapping (`VM_SPECIAL`), the flags are equal, the backing is
    /// the same object opened the same way (`vm_file`), the page offsets are
    /// contiguous, the anon_vmas are compatible: equal, or one
    /// unassigned and the other's chain singular (not inherited at fork),
    /// the anonymous names are equal (`anon_vma_name_eq`) and so are the
    /// memory policies (`mpol_equal`).
    /// Sticky flags ([`VmFlags::STICKY`]: `VM_MAYBE_GUARD`) do not count.
    pub(crate) fn can_merge(&self, next: &Vma) -> bool {
        let anon_ok = match (self.anon, next.anon) {
            (None, None) => true,
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => !self.anon_inherited,
            (None, Some(_)) => !next.anon_inherited,
        };
        self.end == next.start
            && self.flags.without(VmFlags::STICKY) == next.flags.without(VmFlags::STICKY)
            && !self.flags.intersects(VmFlags::SPECIAL)
            && self.backing == next.backing
            && self.vm_file == next.vm_file
            && self.pgoff + self.pages() == next.pgoff
            && anon_ok
            && self.anon_name == next.anon_name
            && self.policy == next.policy
    }

    /// `self` and `next` as one VMA (assumes [`can_merge`](Self::can_merge)).
    pub(crate) fn merged(&self, next: &Vma) -> Vma {
        let (anon, anon_inherited) = match self.anon {
            Some(a) => (Some(a), self.anon_inherited),
            None => (next.anon, next.anon_inherited),
        };
        Vma {
            end: next.end,
            anon,
            anon_inherited,
            // Sticky flags survive a merge: the merged VMA has them if
            // either part had.
            flags: self.flags | (next.flags & VmFlags::STICKY),
            ..self.clone()
        }
    }

    /// `anon_vma_compatible`: neighbours close enough to share an anon_vma
    /// (`find_mergeable_anon_vma`): adjacent, same backing, contiguous
    /// offsets, and flags equal except for the access bits.
    pub(crate) fn anon_compatible(&self, next: &Vma) -> bool {
        self.end == next.start
            && self.backing == next.backing
            && self.vm_file == next.vm_file
            && self.pgoff + self.pages() == next.pgoff
            && (self.flags.bits() ^ next.flags.bits()) & !VmFlags::ACCESS.bits() == 0
    }
}

impl fmt::Debug for Vma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Vma({:#x}-{:#x} {} {:?} pgoff={:#x} {:?} anon={:?}{}{})",
            self.start,
            self.end,
            perms(self.flags),
            self.backing,
            self.pgoff,
            self.flags,
            self.anon.map(|a| a.0),
            if self.anon_inherited {
                " inherited"
            } else {
                ""
            },
            match &self.anon_name {
                Some(n) => format!(" name={n:?}"),
                None => String::new(),
            }
        )
    }
}

/// The `/proc/PID/maps` name of an anonymous VMA called `name`
/// (`show_map_vma`): `[anon:NAME]`, `[anon_shmem:NAME]` for shared
/// anonymous memory, empty without a name.
pub(crate) fn anon_vma_label(name: Option<&str>, shmem: bool) -> String {
    match (name, shmem) {
        (None, _) => String::new(),
        (Some(n), false) => format!("[anon:{n}]"),
        (Some(n), true) => format!("[anon_shmem:{n}]"),
    }
}

/// The `rwxp` / `rwxs` column of `/proc/PID/maps`.
pub(crate) fn perms(f: VmFlags) -> String {
    let mut s = String::with_capacity(4);
    s.push(if f.contains(VmFlags::READ) { 'r' } else { '-' });
    s.push(if f.contains(VmFlags::WRITE) { 'w' } else { '-' });
    s.push(if f.contains(VmFlags::EXEC) { 'x' } else { '-' });
    s.push(if f.contains(VmFlags::MAYSHARE) {
        's'
    } else {
        'p'
    });
    s
}

impl fmt::Display for Vma {
    /// One line of `/proc/PID/maps` (`show_map_vma`): the offset column is
    /// the file offset for file mappings, 0 otherwise; device and inode are
    /// 00:00 and the file id; shared anonymous memory is named `/dev/zero
    /// (deleted)`, a System V segment `/SYSV<key> (deleted)` with its shmid
    /// as the inode; a named anonymous VMA is `[anon:NAME]` (shared:
    /// `[anon_shmem:NAME]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (off, ino, name) = match self.backing {
            Backing::Anon => (0, 0, anon_vma_label(self.anon_name(), false)),
            Backing::File(id) => (self.pgoff * PAGE_SIZE, id.0, format!("file:{}", id.0)),
            Backing::Shm(id) => match id.sysv() {
                Some((shmid, key)) => (self.pgoff * PAGE_SIZE, shmid as u64, sysv_name(key)),
                None => (
                    self.pgoff * PAGE_SIZE,
                    id.0,
                    match self.anon_name() {
                        Some(n) => anon_vma_label(Some(n), true),
                        None => "/dev/zero (deleted)".to_string(),
                    },
                ),
            },
            Backing::Special(s) => (0, 0, s.name().to_string()),
        };
        let head = format!(
            "{:08x}-{:08x} {} {:08x} 00:00 {}",
            self.start,
            self.end,
            perms(self.flags),
            off,
            ino
        );
        if name.is_empty() {
            f.write_str(&head)
        } else {
            write!(f, "{:<73}{}", head, name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anon(start: u64, end: u64, flags: VmFlags) -> Vma {
        Vma {
            start,
            end,
            flags,
            pgoff: start >> PAGE_SHIFT,
            backing: Backing::Anon,
            vm_file: None,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        }
    }

    const RW: VmFlags = VmFlags::from_bits_retain(0x3 | 0x70 | 0x10_0000);

    #[test]
    fn merge_rules() {
        let a = anon(0x1000, 0x3000, RW);
        let b = anon(0x3000, 0x5000, RW);
        assert!(a.can_merge(&b));
        assert!(!b.can_merge(&a), "order matters");
        assert!(!a.can_merge(&anon(0x4000, 0x5000, RW)), "not adjacent");
        assert!(
            !a.can_merge(&anon(0x3000, 0x5000, VmFlags::READ | VmFlags::MAY_RWX)),
            "flags differ"
        );
        let moved = Vma {
            pgoff: 99,
            ..b.clone()
        };
        assert!(!a.can_merge(&moved), "offsets not contiguous");
        let (x, y) = (AnonId::fresh(), AnonId::fresh());
        let ax = Vma {
            anon: Some(x),
            ..a.clone()
        };
        assert!(ax.can_merge(&b), "one anon_vma unassigned");
        assert!(
            !ax.can_merge(&Vma {
                anon: Some(y),
                ..b.clone()
            }),
            "two different anon_vmas"
        );
        assert_eq!(ax.merged(&b).anon, Some(x));
        let f = Vma {
            backing: Backing::File(FileId(1)),
            vm_file: Some(OpenFile::new(FileId(1))),
            ..b.clone()
        };
        assert!(!a.can_merge(&f));
        let ro = Vma {
            vm_file: Some(OpenFile::new(FileId(1)).mode(OpenMode::ReadOnly)),
            ..f.clone()
        };
        let f0 = Vma {
            start: 0x1000,
            end: 0x3000,
            pgoff: f.pgoff - 2,
            ..f.clone()
        };
        assert!(f0.can_merge(&f), "same file, same open mode");
        assert!(!f0.can_merge(&ro), "another open of the file");
    }

    /// `is_mergeable_anon_vma`: a VMA inherited at fork with an anon_vma
    /// does not merge with a neighbour that has none; with one of the same
    /// id (its own split part) it does.
    #[test]
    fn inherited_anon_vma_blocks_merges_with_unassigned() {
        let x = AnonId::fresh();
        let parent_side = Vma {
            anon: Some(x),
            ..anon(0x1000, 0x3000, RW)
        };
        let fresh = anon(0x3000, 0x5000, RW);
        assert!(parent_side.can_merge(&fresh), "singular chain: merges");
        let child_side = Vma {
            anon_inherited: true,
            ..parent_side.clone()
        };
        assert!(!child_side.can_merge(&fresh), "inherited chain: no merge");
        let before = anon(0x0, 0x1000, RW);
        assert!(!before.can_merge(&child_side), "in either order");
        let split_part = Vma {
            start: 0x3000,
            end: 0x4000,
            pgoff: 3,
            ..child_side.clone()
        };
        assert!(child_side.can_merge(&split_part), "same anon_vma: merges");
        let special = Vma {
            flags: RW | VmFlags::DONTEXPAND,
            ..anon(0x1000, 0x3000, RW)
        };
        let special2 = Vma {
            flags: RW | VmFlags::DONTEXPAND,
            ..fresh.clone()
        };
        assert!(!special.can_merge(&special2), "VM_SPECIAL never merges");
    }

    #[test]
    fn slices_move_the_offset() {
        let f = Vma {
            start: 0x10000,
            end: 0x20000,
            flags: RW,
            pgoff: 5,
            backing: Backing::File(FileId(2)),
            vm_file: Some(OpenFile::new(FileId(2))),
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        let s = f.slice(0x13000, 0x15000);
        assert_eq!((s.start, s.end, s.pgoff), (0x13000, 0x15000, 8));
        assert_eq!(f.pgoff_of(0x11fff), 6);
    }

    #[test]
    fn proc_maps_lines() {
        let v = anon(0x7fff_f7ff_d000, 0x7fff_f7ff_f000, RW);
        assert_eq!(
            v.to_string(),
            "7ffff7ffd000-7ffff7fff000 rw-p 00000000 00:00 0"
        );
        let f = Vma {
            start: 0x400000,
            end: 0x401000,
            flags: VmFlags::READ | VmFlags::EXEC,
            pgoff: 2,
            backing: Backing::File(FileId(9)),
            vm_file: Some(OpenFile::new(FileId(9))),
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        assert!(f
            .to_string()
            .starts_with("00400000-00401000 r-xp 00002000 00:00 9 "));
        assert!(f.to_string().ends_with("file:9"));
    }

    #[test]
    fn guard_gap_only_below_stacks() {
        let s = anon(0x10_0000, 0x20_0000, RW | VmFlags::GROWSDOWN);
        assert_eq!(s.start_gap(0x1000), 0xff000);
        assert_eq!(s.start_gap(0x20_0000), 0);
        assert_eq!(anon(0x10_0000, 0x20_0000, RW).start_gap(0x1000), 0x10_0000);
    }
}
