//! `remap_file_pages`: the deprecated nonlinear mapping call, which Linux
//! (since 4.0) emulates with a new mapping of the same object.

use crate::config::{PAGE_SHIFT, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::{MapFlags, VmFlags};
use crate::memory::Phys;
use crate::mmap::file_mapping_fits;
use crate::space::{AddressSpace, Inner};
use crate::vma::Vma;

impl AddressSpace {
    /// `remap_file_pages(start, size, prot, pgoff, flags)`: maps page
    /// `pgoff` of a shared mapping's object (a file, shared anonymous
    /// memory or a System V segment) and the pages after it at `start`,
    /// in place of what the range showed.
    ///
    /// Linux rules (`SYSCALL_DEFINE5(remap_file_pages)`, 6.18):
    /// - `prot` other than 0 → `EINVAL`; `start` and `size` are rounded down
    ///   to pages, and an empty or wrapping range → `EINVAL`; `pgoff` plus
    ///   the range's pages wrapping → `EINVAL`;
    /// - the VMA at `start` must be shared (`VM_SHARED`), and a range that
    ///   goes past it must continue in VMAs right after it of the same
    ///   object with the same flags (`EINVAL`);
    /// - then it is `mmap(start, size, prot, MAP_SHARED | MAP_FIXED |
    ///   MAP_POPULATE, object, pgoff)` with the VMA's protection (and
    ///   `MAP_LOCKED` for a locked VMA; `MAP_NONBLOCK` in `flags` is kept,
    ///   which skips the population): the new VMA has the object at
    ///   `pgoff`, `mmap`'s flags (not the old VMA's advice), replaces the
    ///   range and merges like any new mapping; its errors are `mmap`'s
    ///   (`EOVERFLOW` for a range that would end past `MAX_LFS_FILESIZE`).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 4 * PAGE_SIZE, Prot::RW, MapFlags::SHARED_ANON, None, 0).unwrap();
    /// mm.write(a + 2 * PAGE_SIZE, b"page 2").unwrap();
    /// mm.remap_file_pages(a, PAGE_SIZE, 0, 2, 0).unwrap(); // page 2 also at a
    /// let mut buf = [0; 6];
    /// mm.read(a, &mut buf).unwrap();
    /// assert_eq!(&buf, b"page 2");
    /// assert_eq!(mm.map_count(), 2);
    /// ```
    pub fn remap_file_pages(
        &mut self,
        start: u64,
        size: u64,
        prot: u64,
        pgoff: u64,
        flags: u64,
    ) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner
            .remap_file_pages(&mut phys, start, size, prot, pgoff, flags)
    }
}

impl Inner {
    fn remap_file_pages(
        &mut self,
        phys: &mut Phys,
        start: u64,
        size: u64,
        prot: u64,
        pgoff: u64,
        flags: u64,
    ) -> Result<(), Errno> {
        if prot != 0 {
            return Err(Errno::EINVAL);
        }
        let start = start & !(PAGE_SIZE - 1);
        let size = size & !(PAGE_SIZE - 1);
        let end = start.wrapping_add(size);
        if end <= start || pgoff.checked_add(size >> PAGE_SHIFT).is_none() {
            return Err(Errno::EINVAL);
        }
        let vma = match self.vmas.get(start) {
            Some(v) if v.flags.contains(VmFlags::SHARED) => v.clone(),
            _ => return Err(Errno::EINVAL),
        };
        if end > vma.end && !self.same_object_through(&vma, end) {
            return Err(Errno::EINVAL);
        }
        let mut map_flags = MapFlags::SHARED | MapFlags::FIXED;
        if flags & u64::from(MapFlags::NONBLOCK.bits()) == 0 {
            map_flags |= MapFlags::POPULATE;
        }
        if vma.flags.contains(VmFlags::LOCKED) {
            map_flags |= MapFlags::LOCKED;
        }
        self.map_object_at(phys, &vma, start, end, pgoff, map_flags)
    }

    /// Whether the VMAs right after `vma` up to `end` continue it without a
    /// hole, with its object and its flags.
    fn same_object_through(&self, vma: &Vma, end: u64) -> bool {
        let mut covered = vma.end;
        for (_, next) in self.vmas.range(vma.end..end) {
            if next.start != covered
                || next.backing != vma.backing
                || next.vm_file != vma.vm_file
                || next.flags != vma.flags
            {
                return false;
            }
            covered = next.end;
        }
        covered >= end
    }

    /// `do_mmap` of `like`'s object (shared, writable: it backs a
    /// `VM_SHARED` VMA) at `start..end` from page `pgoff`, with `like`'s
    /// protection and `flags` (`MAP_SHARED | MAP_FIXED`, maybe
    /// `MAP_POPULATE` and `MAP_LOCKED`).
    fn map_object_at(
        &mut self,
        phys: &mut Phys,
        like: &Vma,
        start: u64,
        end: u64,
        pgoff: u64,
        flags: MapFlags,
    ) -> Result<(), Errno> {
        if self.vmas.len() > self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        let locked = flags.contains(MapFlags::LOCKED);
        if locked && !self.can_do_mlock() {
            return Err(Errno::EPERM);
        }
        let lock = if locked {
            VmFlags::LOCKED
        } else {
            VmFlags::EMPTY
        };
        if !self.mlock_future_ok(self.def_flags | lock, end - start) {
            return Err(Errno::EAGAIN);
        }
        // file_mmap_ok: the objects are regular or shmem files, whose
        // mappings must end below MAX_LFS_FILESIZE.
        if !file_mapping_fits(pgoff, end - start) {
            return Err(Errno::EOVERFLOW);
        }
        // do_mmap: the protection key of a new mapping (the execute-only
        // key for PROT_EXEC alone), not the old VMA's.
        let access = like.flags & VmFlags::ACCESS;
        let pkey = if access == VmFlags::EXEC {
            self.exec_only_pkey().unwrap_or(0)
        } else {
            0
        };
        let vmf =
            access | VmFlags::MAY_RWX | VmFlags::SHARED | VmFlags::MAYSHARE | self.def_flags | lock;
        let vma = Vma {
            start,
            end,
            flags: vmf.with_pkey(pkey),
            pgoff,
            backing: like.backing,
            vm_file: like.vm_file,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        self.install(phys, vma)?;
        if flags.contains(MapFlags::POPULATE) || locked {
            self.mm_populate(phys, start, end);
        }
        Ok(())
    }
}
