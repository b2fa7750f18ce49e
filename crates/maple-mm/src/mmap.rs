//! `mmap` and `munmap`.

use crate::config::{offset_in_page, page_align, PAGE_SHIFT, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::{MapFlags, Prot, VmFlags};
use crate::memory::Phys;
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, FileId, Vma};

impl AddressSpace {
    /// `mmap(addr, len, prot, flags, fd, offset)`: maps `len` bytes and
    /// returns the address. `file` is the file of a file mapping (ignored
    /// with `MAP_ANONYMOUS`, as the fd is by Linux).
    ///
    /// Linux rules followed, in order:
    /// - the offset must be page aligned (`EINVAL`, `sys_mmap`); a file
    ///   mapping needs a file (`EBADF`); `MAP_HUGETLB` finds no huge page
    ///   reserved (`ENOMEM`);
    /// - `len == 0` → `EINVAL`; a non-fixed hint below `mmap_min_addr` is
    ///   raised to it (`round_hint_to_min`); `len` is rounded up to pages
    ///   (`ENOMEM` on overflow); offset + length overflowing → `EOVERFLOW`
    ///   (and, for a file, past `MAX_LFS_FILESIZE`, `file_mmap_ok`);
    ///   `map_count > max_map_count` → `ENOMEM` (`do_mmap`);
    /// - placement (`get_unmapped_area`): top-down below
    ///   `mmap_base` with the stack guard gap, hint honoured if free,
    ///   `MAP_FIXED` taken as is (page aligned or `EINVAL`, not below
    ///   `mmap_min_addr` or `EPERM`), `MAP_FIXED_NOREPLACE` → `EEXIST` if
    ///   anything is mapped there;
    /// - the sharing type must be `MAP_SHARED`, `MAP_SHARED_VALIDATE` or
    ///   `MAP_PRIVATE` (`EINVAL`); shared anonymous memory may not grow
    ///   down (`EINVAL`) and starts at offset 0; private anonymous memory
    ///   gets offset `addr >> PAGE_SHIFT`;
    /// - flags: `VM_MAY{READ,WRITE,EXEC}` always, `VM_SHARED | VM_MAYSHARE`
    ///   for shared, `VM_ACCOUNT` for private writable without
    ///   `MAP_NORESERVE` (`accountable_mapping`);
    /// - `mmap_region`: what the new range covers is unmapped first (the
    ///   split check of `munmap` applies), then the new VMA merges with
    ///   compatible neighbours (`vma_merge_new_range`);
    /// - `MAP_POPULATE` faults every page in (write faults for private
    ///   writable mappings, `populate_vma_page_range`).
    #[allow(clippy::too_many_arguments)]
    pub fn mmap(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
        file: Option<FileId>,
        offset: u64,
    ) -> Result<u64, Errno> {
        let mut phys = self.mem.lock();
        self.inner
            .mmap(&mut phys, addr, len, prot, flags, file, offset)
    }

    /// `munmap(addr, len)`: unmaps every page of the range; unmapping
    /// nothing succeeds.
    ///
    /// Rules: `addr` page aligned, `addr <= TASK_SIZE` and
    /// `len <= TASK_SIZE - addr`, else `EINVAL`; `len` rounded up to pages,
    /// zero → `EINVAL`; punching a hole into one VMA needs
    /// `map_count < max_map_count` (`ENOMEM`, `do_vmi_align_munmap`). Page
    /// tables no VMA needs any more are freed (`free_pgtables`).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 3 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.munmap(a + PAGE_SIZE, PAGE_SIZE).unwrap(); // punches a hole: two VMAs
    /// assert_eq!(mm.map_count(), 2);
    /// assert!(mm.vma_at(a + PAGE_SIZE).is_none());
    /// assert_eq!(mm.munmap(a + 1, PAGE_SIZE), Err(Errno::EINVAL)); // not page aligned
    /// mm.munmap(a - PAGE_SIZE, PAGE_SIZE).unwrap(); // nothing mapped there: fine
    /// ```
    pub fn munmap(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.munmap(&mut phys, addr, len)
    }
}

impl Inner {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn mmap(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
        file: Option<FileId>,
        offset: u64,
    ) -> Result<u64, Errno> {
        if offset_in_page(offset) != 0 {
            return Err(Errno::EINVAL);
        }
        let file = if flags.contains(MapFlags::ANONYMOUS) {
            None
        } else {
            Some(file.ok_or(Errno::EBADF)?)
        };
        if flags.contains(MapFlags::HUGETLB) {
            return Err(Errno::ENOMEM);
        }
        if len == 0 {
            return Err(Errno::EINVAL);
        }
        let fixed = flags.intersects(MapFlags::FIXED | MapFlags::FIXED_NOREPLACE);
        let addr = if fixed {
            addr
        } else {
            self.round_hint_to_min(addr)
        };
        let len = match page_align(len) {
            Some(l) if l != 0 => l,
            _ => return Err(Errno::ENOMEM),
        };
        let pgoff = offset >> PAGE_SHIFT;
        if pgoff.checked_add(len >> PAGE_SHIFT).is_none() {
            return Err(Errno::EOVERFLOW);
        }
        if self.vmas.len() > self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        let addr = self.get_unmapped_area(addr, len, fixed)?;
        let end = addr + len;
        if flags.contains(MapFlags::FIXED_NOREPLACE) && self.vmas.range(addr..end).next().is_some()
        {
            return Err(Errno::EEXIST);
        }
        // file_mmap_ok: the mapping must end below MAX_LFS_FILESIZE.
        if file.is_some() {
            let max = i64::MAX as u64;
            if len > max || pgoff > (max - len) >> PAGE_SHIFT {
                return Err(Errno::EOVERFLOW);
            }
        }

        let mut vmf = VmFlags::from_prot(prot) | VmFlags::MAY_RWX;
        if flags.contains(MapFlags::GROWSDOWN) {
            vmf |= VmFlags::GROWSDOWN;
        }
        if flags.contains(MapFlags::LOCKED) {
            vmf |= VmFlags::LOCKED;
        }
        let ty = (flags & MapFlags::TYPE).bits();
        let (backing, pgoff) = match ty {
            0x01 | 0x03 => {
                vmf |= VmFlags::SHARED | VmFlags::MAYSHARE;
                match file {
                    Some(f) => (Backing::File(f), pgoff),
                    None => {
                        if vmf.contains(VmFlags::GROWSDOWN) {
                            return Err(Errno::EINVAL);
                        }
                        (Backing::Shm(phys.cache.new_shm()), 0)
                    }
                }
            }
            0x02 => match file {
                Some(f) => (Backing::File(f), pgoff),
                None => (Backing::Anon, addr >> PAGE_SHIFT),
            },
            _ => return Err(Errno::EINVAL),
        };
        if flags.contains(MapFlags::NORESERVE) {
            vmf |= VmFlags::NORESERVE;
        }
        if vmf & (VmFlags::NORESERVE | VmFlags::SHARED | VmFlags::WRITE) == VmFlags::WRITE {
            vmf |= VmFlags::ACCOUNT;
        }
        let vma = Vma {
            start: addr,
            end,
            flags: vmf,
            pgoff,
            backing,
            anon: None,
        };
        let plan = self.plan(addr, end, &mut |_| Ok(None), Some(vma))?;
        if plan.punch && self.vmas.len() >= self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        // What was mapped there goes, even if the new VMA merges back into
        // an identical layout.
        let replaced = self.vmas.range(addr..end).next().is_some();
        self.commit(phys, plan);
        if replaced {
            self.pt.zap(phys, addr, end);
        }
        if flags.contains(MapFlags::POPULATE) {
            let write = vmf & (VmFlags::WRITE | VmFlags::SHARED) == VmFlags::WRITE;
            let mut a = addr;
            while a < end {
                self.populate_page(phys, a, write);
                a += PAGE_SIZE;
            }
        }
        Ok(addr)
    }

    /// `round_hint_to_min`.
    fn round_hint_to_min(&self, hint: u64) -> u64 {
        let hint = hint & !(PAGE_SIZE - 1);
        if hint != 0 && hint < self.cfg.mmap_min_addr {
            return page_align(self.cfg.mmap_min_addr).unwrap_or(hint);
        }
        hint
    }

    pub(crate) fn munmap(&mut self, phys: &mut Phys, addr: u64, len: u64) -> Result<(), Errno> {
        let ts = self.cfg.task_size;
        if offset_in_page(addr) != 0 || addr > ts || len > ts - addr {
            return Err(Errno::EINVAL);
        }
        let len = match page_align(len) {
            Some(l) if l != 0 => l,
            _ => return Err(Errno::EINVAL),
        };
        self.unmap_range(phys, addr, addr + len)
    }

    /// `do_vmi_munmap` of an aligned range.
    pub(crate) fn unmap_range(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
    ) -> Result<(), Errno> {
        let plan = self.plan(start, end, &mut |_| Ok(None), None)?;
        if plan.punch && self.vmas.len() >= self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        if plan.remove.is_empty() {
            return Ok(());
        }
        self.commit(phys, plan);
        self.pt.zap(phys, start, end);
        self.free_pgtables(phys, start, end);
        Ok(())
    }
}
