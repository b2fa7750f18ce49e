//! System V shared memory: `shmat` and `shmdt` (`do_shmat`, `ksys_shmdt`
//! in ipc/shm.c).
//!
//! The model has no IPC namespace: the caller names the segment
//! ([`SysvShm`]: its shmid, key and size, what `shmget` made). The pages of
//! a segment are one object per shmid in the space's [`Memory`], kept while
//! the memory lives (the model has no `shmctl(IPC_RMID)`), so spaces forked
//! from one another that attach the same shmid share its pages.
//!
//! [`Memory`]: crate::Memory

use crate::config::{page_align, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::{Prot, VmFlags};
use crate::memory::Phys;
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, FileId, OpenFile, OpenMode, Vma};
use std::sync::atomic::{AtomicU64, Ordering};

/// `SHM_RDONLY`: attach read-only.
pub const SHM_RDONLY: u32 = 0o10000;
/// `SHM_RND`: round an unaligned attach address down to `SHMLBA` (a page
/// on x86-64).
pub const SHM_RND: u32 = 0o20000;
/// `SHM_REMAP`: attach over whatever is mapped at the address.
pub const SHM_REMAP: u32 = 0o40000;
/// `SHM_EXEC`: attach executable.
pub const SHM_EXEC: u32 = 0o100000;

/// A System V shared memory segment as `shmat` needs it (`shmid_kernel`):
/// the id `shmget` returned, the key it was made with (`IPC_PRIVATE` is 0),
/// and its size in bytes (not rounded: the attachment is rounded up to
/// pages). `/proc/PID/maps` prints an attachment as
/// `/SYSV<key as %08x> (deleted)` with the shmid as its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SysvShm {
    /// The segment's id (`shmid`).
    pub shmid: i32,
    /// The key it was made with (`key_t`).
    pub key: i32,
    /// Its size in bytes (`shm_segsz`).
    pub size: u64,
}

impl SysvShm {
    /// The key of a `/proc/PID/maps` name `/SYSV<key> (deleted)`.
    pub fn key_of_maps_name(name: &str) -> Option<i32> {
        let hex = name.strip_prefix("/SYSV")?.get(..8)?;
        u32::from_str_radix(hex, 16).ok().map(|k| k as i32)
    }
}

/// The attachment files: ids of the `struct file`s `do_shmat` clones.
static NEXT_ATTACH: AtomicU64 = AtomicU64::new(1);

/// A new attachment's file (`alloc_file_clone` in `do_shmat`), open
/// read-only for `SHM_RDONLY`: a VMA's `vm_file`, so VMAs of different
/// attachments never merge and `shmdt` finds the pieces of one attachment.
pub(crate) fn attach_file(read_only: bool) -> OpenFile {
    let id = FileId(NEXT_ATTACH.fetch_add(1, Ordering::Relaxed));
    let mode = if read_only {
        OpenMode::ReadOnly
    } else {
        OpenMode::ReadWrite
    };
    OpenFile::new(id).mode(mode)
}

impl AddressSpace {
    /// `shmat(shmid, addr, flags)`: attaches segment `seg` and returns the
    /// address.
    ///
    /// Linux rules (`do_shmat`, then `do_mmap` of the segment's file, 6.18):
    /// - a negative shmid → `EINVAL`;
    /// - with an address: one not page aligned is rounded down with
    ///   [`SHM_RND`] (`EINVAL` if that gives 0 with [`SHM_REMAP`]), else
    ///   `EINVAL`; the attachment is `MAP_FIXED` there, and without
    ///   `SHM_REMAP` anything mapped in `addr..addr + size` → `EINVAL`;
    ///   without an address, `SHM_REMAP` → `EINVAL` and the segment is
    ///   placed like a shared file mapping without a hint (top-down, never
    ///   huge-page aligned: shmem with huge pages off);
    /// - the mapping is `MAP_SHARED` of the whole segment rounded up to
    ///   pages, offset 0: `rd wr sh mr mw me ms`; [`SHM_RDONLY`] maps it
    ///   read-only from a file opened read-only, so it has neither
    ///   `VM_SHARED` nor `VM_MAYWRITE` (`rd mr me ms`); [`SHM_EXEC`] adds
    ///   exec; `mm->def_flags` applies (`mlockall(MCL_FUTURE)`);
    /// - the errors of `do_mmap` (`ENOMEM` when nothing fits or at
    ///   `max_map_count`, `EPERM` below `mmap_min_addr`, `EAGAIN` when
    ///   `mlockall(MCL_FUTURE)` would lock it beyond `RLIMIT_MEMLOCK`);
    /// - each attachment is its own file: its VMAs never merge with
    ///   another attachment's, even of the same segment.
    ///
    /// The model does not check permissions (`EACCES`) nor whether the
    /// segment exists (`EINVAL`): the caller names it.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, SysvShm, SHM_RDONLY, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let seg = SysvShm { shmid: 1, key: 0, size: 10 * PAGE_SIZE + 100 };
    /// let a = mm.shmat(seg, 0, 0).unwrap();
    /// assert_eq!(mm.vma_at(a).unwrap().len(), 11 * PAGE_SIZE);
    /// mm.write(a, b"shared").unwrap();
    /// let b = mm.shmat(seg, 0, SHM_RDONLY).unwrap();
    /// let mut buf = [0u8; 6];
    /// mm.read(b, &mut buf).unwrap();                  // the same pages
    /// assert_eq!(&buf, b"shared");
    /// assert_eq!(mm.vma_at(b).unwrap().flags().smaps(), "rd mr me ms");
    /// mm.shmdt(b).unwrap();
    /// assert!(mm.vma_at(b).is_none());
    /// ```
    pub fn shmat(&mut self, seg: SysvShm, addr: u64, flags: u32) -> Result<u64, Errno> {
        let mut phys = self.mem.lock();
        self.inner.shmat(&mut phys, seg, addr, flags)
    }

    /// `shmdt(addr)`: detaches the attachment at `addr`.
    ///
    /// Linux rules (`ksys_shmdt`): `addr` not page aligned → `EINVAL`; the
    /// first System V VMA at or above `addr` whose offset in its segment is
    /// its distance from `addr` is unmapped, and with it every later VMA of
    /// the same attachment whose offset matches likewise and that ends
    /// within the segment's size (rounded up to pages) from `addr` — the
    /// pieces `mprotect` or `munmap` made of one attachment; no such VMA →
    /// `EINVAL`.
    pub fn shmdt(&mut self, addr: u64) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.shmdt(&mut phys, addr)
    }

    /// The System V segment `shmid` as this space's memory knows it: as the
    /// last [`shmat`](Self::shmat) of it named it (or as a loaded
    /// `/proc/PID/maps` showed it).
    pub fn sysv_segment(&self, shmid: i32) -> Option<SysvShm> {
        self.mem.lock().cache.sysv_info(shmid)
    }
}

/// Whether `v` is a piece of an attachment that `shmdt(addr)` detaches:
/// its offset is its distance from `addr` in pages.
fn at_its_offset(v: &Vma, addr: u64) -> bool {
    v.sysv().is_some()
        && v.start
            .checked_sub(addr)
            .is_some_and(|d| d / PAGE_SIZE == v.pgoff)
}

impl Inner {
    pub(crate) fn shmat(
        &mut self,
        phys: &mut Phys,
        seg: SysvShm,
        addr: u64,
        flags: u32,
    ) -> Result<u64, Errno> {
        if seg.shmid < 0 {
            return Err(Errno::EINVAL);
        }
        // do_shmat: an address makes the attachment MAP_FIXED (even when
        // rounding takes it to 0).
        let fixed = addr != 0;
        let mut addr = addr;
        if addr != 0 {
            if addr % PAGE_SIZE != 0 {
                if flags & SHM_RND == 0 {
                    return Err(Errno::EINVAL);
                }
                addr &= !(PAGE_SIZE - 1);
                if addr == 0 && flags & SHM_REMAP != 0 {
                    return Err(Errno::EINVAL);
                }
            }
        } else if flags & SHM_REMAP != 0 {
            return Err(Errno::EINVAL);
        }
        let read_only = flags & SHM_RDONLY != 0;
        let mut prot = if read_only { Prot::READ } else { Prot::RW };
        if flags & SHM_EXEC != 0 {
            prot |= Prot::EXEC;
        }
        if addr != 0 && flags & SHM_REMAP == 0 && seg.size > 0 {
            let end = addr.checked_add(seg.size).ok_or(Errno::EINVAL)?;
            if self.vmas.range(addr..end).next().is_some() {
                return Err(Errno::EINVAL);
            }
        }
        // do_mmap(file, addr, size, prot, MAP_SHARED [| MAP_FIXED], 0).
        let len = match page_align(seg.size) {
            Some(0) => return Err(Errno::EINVAL),
            Some(l) => l,
            None => return Err(Errno::ENOMEM),
        };
        if self.vmas.len() > self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        let start = self.get_unmapped_area_thp(addr, len, fixed, None)?;
        if !self.mlock_future_ok(self.def_flags, len) {
            return Err(Errno::EAGAIN);
        }
        let end = start + len;
        let mut vmf = VmFlags::from_prot(prot)
            | VmFlags::MAY_RWX
            | VmFlags::SHARED
            | VmFlags::MAYSHARE
            | self.def_flags;
        if read_only {
            // A shared mapping of a file open read-only (do_mmap).
            vmf = vmf.without(VmFlags::SHARED | VmFlags::MAYWRITE);
        }
        let vma = Vma {
            start,
            end,
            flags: vmf,
            pgoff: 0,
            backing: Backing::Shm(phys.cache.sysv_segment(seg)),
            vm_file: Some(attach_file(read_only)),
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        self.install(phys, vma)?;
        if vmf.contains(VmFlags::LOCKED) {
            self.mm_populate(phys, start, end);
        }
        Ok(start)
    }

    pub(crate) fn shmdt(&mut self, phys: &mut Phys, addr: u64) -> Result<(), Errno> {
        if addr % PAGE_SIZE != 0 {
            return Err(Errno::EINVAL);
        }
        // The first piece at its offset from addr names the attachment and
        // the size to search.
        let mut at = addr;
        let mut found = None;
        while let Some(v) = self.vmas.range(at..).next().map(|(_, v)| v.clone()) {
            at = v.end;
            if let (true, Some((shmid, _))) = (at_its_offset(&v, addr), v.sysv()) {
                // Whole VMAs: only a sealed one refuses to go, and
                // ksys_shmdt does not look at the unmap's result either.
                let _ = self.unmap_range(phys, v.start, v.end);
                let size = phys.cache.sysv_info(shmid).map_or(0, |s| s.size);
                found = Some((v.vm_file, page_align(size).unwrap_or(u64::MAX)));
                break;
            }
        }
        let Some((file, size)) = found else {
            return Err(Errno::EINVAL);
        };
        while let Some(v) = self.vmas.range(at..).next().map(|(_, v)| v.clone()) {
            if v.end - addr > size {
                break;
            }
            at = v.end;
            if at_its_offset(&v, addr) && v.vm_file == file {
                let _ = self.unmap_range(phys, v.start, v.end);
            }
        }
        Ok(())
    }
}
