//! The virtual memory area ([`Vma`]): a page-aligned range with one set of
//! flags and one backing, and the kernel's rules for cutting and merging them.

use crate::config::{PAGE_SHIFT, PAGE_SIZE};
use crate::flags::{Prot, VmFlags};
use core::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// A file, named by the caller (the model has no file system: a file is a
/// page cache of pages, zero until written through
/// [`Memory::write_file`](crate::Memory::write_file) or a shared mapping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FileId(pub u64);

/// A shared anonymous memory object (Linux: the shmem file behind a
/// `MAP_SHARED | MAP_ANONYMOUS` mapping). Freed with its last mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ShmId(pub(crate) u64);

/// The identity of an `anon_vma`: the set of anonymous pages a VMA's pages
/// belong to. Assigned on the first anonymous fault (`anon_vma_prepare`),
/// copied by splits, fresh in a child at fork (`anon_vma_fork`). Two VMAs
/// whose ids differ never merge (`is_mergeable_anon_vma`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AnonId(u64);

static NEXT_ANON: AtomicU64 = AtomicU64::new(1);

impl AnonId {
    /// A new, never used id.
    pub(crate) fn fresh() -> AnonId {
        AnonId(NEXT_ANON.fetch_add(1, Ordering::Relaxed))
    }
}

/// What a VMA maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Backing {
    /// Private anonymous memory: zero-filled on demand.
    Anon,
    /// A file, shared or private (the VMA's flags tell).
    File(FileId),
    /// Shared anonymous memory.
    Shm(ShmId),
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
    pub(crate) anon: Option<AnonId>,
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
    /// The anon_vma identity, once the VMA has anonymous pages.
    pub fn anon_vma(&self) -> Option<AnonId> {
        self.anon
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
            && self.anon == o.anon
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
    /// `can_vma_merge_after`): `self` ends where `next` starts, the flags are
    /// equal, the backing is the same object, the page offsets are contiguous,
    /// and the anon_vmas are equal or at least one is still unassigned.
    pub(crate) fn can_merge(&self, next: &Vma) -> bool {
        self.end == next.start
            && self.flags == next.flags
            && self.backing == next.backing
            && self.pgoff + self.pages() == next.pgoff
            && (self.anon.is_none() || next.anon.is_none() || self.anon == next.anon)
    }

    /// `self` and `next` as one VMA (assumes [`can_merge`](Self::can_merge)).
    pub(crate) fn merged(&self, next: &Vma) -> Vma {
        Vma {
            end: next.end,
            anon: self.anon.or(next.anon),
            ..self.clone()
        }
    }

    /// `anon_vma_compatible`: neighbours close enough to share an anon_vma
    /// (`find_mergeable_anon_vma`): adjacent, same backing, contiguous
    /// offsets, and flags equal except for the access bits.
    pub(crate) fn anon_compatible(&self, next: &Vma) -> bool {
        self.end == next.start
            && self.backing == next.backing
            && self.pgoff + self.pages() == next.pgoff
            && (self.flags.bits() ^ next.flags.bits()) & !VmFlags::ACCESS.bits() == 0
    }
}

impl fmt::Debug for Vma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Vma({:#x}-{:#x} {} {:?} pgoff={:#x} {:?} anon={:?})",
            self.start,
            self.end,
            perms(self.flags),
            self.backing,
            self.pgoff,
            self.flags,
            self.anon.map(|a| a.0)
        )
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
    /// 00:00 and the file id; shared anonymous memory is named `/dev/zero (deleted)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (off, ino, name) = match self.backing {
            Backing::Anon => (0, 0, String::new()),
            Backing::File(id) => (self.pgoff * PAGE_SIZE, id.0, format!("file:{}", id.0)),
            Backing::Shm(id) => (
                self.pgoff * PAGE_SIZE,
                id.0,
                "/dev/zero (deleted)".to_string(),
            ),
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
            anon: None,
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
            ..b.clone()
        };
        assert!(!a.can_merge(&f));
    }

    #[test]
    fn slices_move_the_offset() {
        let f = Vma {
            start: 0x10000,
            end: 0x20000,
            flags: RW,
            pgoff: 5,
            backing: Backing::File(FileId(2)),
            anon: None,
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
            anon: None,
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
