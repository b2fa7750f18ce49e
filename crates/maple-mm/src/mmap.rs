//! `mmap` and `munmap`.

use crate::config::{offset_in_page, page_align, PAGE_SHIFT, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::{MapFlags, Prot, VmFlags};
use crate::memory::Phys;
use crate::placement::{thp_offset, Window};
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, FileId, OpenFile, Vma};

impl AddressSpace {
    /// `mmap(addr, len, prot, flags, fd, offset)`: maps `len` bytes and
    /// returns the address. `file` is the file of a file mapping (ignored
    /// with `MAP_ANONYMOUS`, as the fd is by Linux), taken as opened
    /// read-write on a file system that does not align mappings; see
    /// [`mmap_file`](Self::mmap_file) for other files.
    ///
    /// Linux rules followed, in order (`ksys_mmap_pgoff`, `do_mmap`,
    /// `mmap_region`):
    /// - the offset must be page aligned (`EINVAL`, `sys_mmap`); a file
    ///   mapping needs a file (`EBADF`); `MAP_HUGETLB` finds no huge page
    ///   reserved (`ENOMEM`);
    /// - `len == 0` → `EINVAL`; a non-fixed hint below `mmap_min_addr` is
    ///   raised to it (`round_hint_to_min`); `len` is rounded up to pages
    ///   (`ENOMEM` on overflow); offset + length overflowing → `EOVERFLOW`;
    ///   `map_count > max_map_count` → `ENOMEM`;
    /// - placement (`get_unmapped_area`): top-down below `mmap_base` with
    ///   the stack guard gap (`MAP_32BIT`: bottom-up from 1 GiB, below
    ///   2 GiB, `ENOMEM` if nothing fits there), hint honoured if free, transparent-huge-page
    ///   alignment of private anonymous mappings without a hint whose length
    ///   is a multiple of 2 MiB and of files whose file system asks for it
    ///   (see [`OpenFile::thp_aligned`]); `MAP_FIXED` taken as is (page
    ///   aligned or `EINVAL`, not below `mmap_min_addr` or `EPERM`);
    ///   `MAP_FIXED_NOREPLACE` → `EEXIST` if anything is mapped there;
    /// - `MAP_LOCKED` without the right to lock → `EPERM`; a locked mapping
    ///   beyond `RLIMIT_MEMLOCK` → `EAGAIN` (see [`Config::memlock_limit`](crate::Config::memlock_limit));
    /// - the commit charge of a private writable mapping or of shared
    ///   anonymous memory, without `MAP_NORESERVE`, larger than the commit
    ///   limit → `ENOMEM` (see [`Config::commit_limit`](crate::Config::commit_limit));
    /// - a file mapping past `MAX_LFS_FILESIZE` → `EOVERFLOW` (`file_mmap_ok`);
    /// - the sharing type must be `MAP_SHARED`, `MAP_SHARED_VALIDATE` (files
    ///   only), `MAP_DROPPABLE` (anonymous only; not with `MAP_LOCKED` or
    ///   `MAP_GROWSDOWN`) or `MAP_PRIVATE` (`EINVAL`); `MAP_SHARED_VALIDATE` of a file refuses
    ///   `MAP_SYNC` and `MAP_FIXED_NOREPLACE` (`EOPNOTSUPP`); the file must be open for reading
    ///   (`EACCES`); `MAP_SHARED` with `PROT_WRITE` needs it open for
    ///   writing (`EACCES`), and a shared mapping of a file open read-only
    ///   gets neither `VM_SHARED` nor `VM_MAYWRITE`; file mappings and shared
    ///   anonymous memory may not grow down (`EINVAL`); shared anonymous
    ///   memory starts at offset 0, private anonymous memory gets offset
    ///   `addr >> PAGE_SHIFT`;
    /// - flags: `VM_MAY{READ,WRITE,EXEC}`, `VM_SHARED | VM_MAYSHARE` for
    ///   shared, `VM_GROWSDOWN`, `VM_LOCKED` (`MAP_LOCKED`, or
    ///   `mm->def_flags` after `mlockall(MCL_FUTURE)`), `VM_NOHUGEPAGE` for
    ///   `MAP_STACK` (Linux 6.8+), `VM_SYNC` for `MAP_SYNC` (whatever the
    ///   sharing type; a file whose file system refuses it →
    ///   `EOPNOTSUPP`, after the commit charge: [`OpenFile::refuses_map_sync`]),
    ///   `VM_NORESERVE`, `VM_DROPPABLE |
    ///   VM_NORESERVE | VM_WIPEONFORK | VM_DONTDUMP` for `MAP_DROPPABLE`,
    ///   and `VM_ACCOUNT` for
    ///   private writable mappings without `MAP_NORESERVE`
    ///   (`accountable_mapping`);
    /// - `mmap_region`: what the new range covers is unmapped first (the
    ///   split check of `munmap` applies, and a sealed VMA there →
    ///   `EPERM`), then the new VMA merges with compatible neighbours
    ///   (`vma_merge_new_range`);
    /// - `MAP_POPULATE` (without `MAP_NONBLOCK`) and `VM_LOCKED` (without
    ///   `VM_LOCKONFAULT`) fault every page in (write faults for private
    ///   writable mappings; none for `PROT_NONE`: `__mm_populate`).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, PMD_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let small = mm.mmap(0, 4096, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// assert_eq!(small, mm.config().mmap_base - 4096);      // top-down
    /// let huge = mm.mmap(0, 2 * PMD_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// assert_eq!(huge % PMD_SIZE, 0);                       // THP aligned
    /// ```
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
        self.inner.mmap(
            &mut phys,
            addr,
            len,
            prot,
            flags,
            file.map(OpenFile::new),
            offset,
        )
    }

    /// [`mmap`](Self::mmap) of an [`OpenFile`]: the file with its open mode
    /// and its file system's placement rule (with `MAP_ANONYMOUS` the file
    /// is ignored, as the fd is by Linux).
    #[allow(clippy::too_many_arguments)]
    pub fn mmap_file(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        flags: MapFlags,
        file: OpenFile,
        offset: u64,
    ) -> Result<u64, Errno> {
        let mut phys = self.mem.lock();
        self.inner
            .mmap(&mut phys, addr, len, prot, flags, Some(file), offset)
    }

    /// `munmap(addr, len)`: unmaps every page of the range; unmapping
    /// nothing succeeds.
    ///
    /// Rules: `addr` page aligned, `addr <= TASK_SIZE` and
    /// `len <= TASK_SIZE - addr`, else `EINVAL`; `len` rounded up to pages,
    /// zero → `EINVAL`; punching a hole into one VMA needs
    /// `map_count < max_map_count` (`ENOMEM`, `do_vmi_align_munmap`); a
    /// sealed VMA in the range → `EPERM` ([`mseal`](Self::mseal)). Page
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
        file: Option<OpenFile>,
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
        // do_mmap: PROT_EXEC alone takes the execute-only protection key,
        // allocated here even if the call fails later.
        let pkey = if prot == Prot::EXEC {
            self.exec_only_pkey().unwrap_or(0)
        } else {
            0
        };
        let sharing = flags & MapFlags::TYPE;
        let shared = sharing == MapFlags::SHARED || sharing == MapFlags::SHARED_VALIDATE;
        let thp = thp_offset(file, shared, addr, len, pgoff);
        let window = if flags.contains(MapFlags::BIT32) {
            Window::Low32
        } else {
            Window::Whole
        };
        let addr = self.get_unmapped_area_in(addr, len, fixed, thp, window)?;
        let end = addr + len;
        if flags.contains(MapFlags::FIXED_NOREPLACE) && self.vmas.range(addr..end).next().is_some()
        {
            return Err(Errno::EEXIST);
        }
        // do_mmap: locking needs the right to (EPERM) and room under
        // RLIMIT_MEMLOCK (EAGAIN).
        if flags.contains(MapFlags::LOCKED) && !self.can_do_mlock() {
            return Err(Errno::EPERM);
        }
        let lock = if flags.contains(MapFlags::LOCKED) {
            VmFlags::LOCKED
        } else {
            VmFlags::EMPTY
        };
        if !self.mlock_future_ok(self.def_flags | lock, len) {
            return Err(Errno::EAGAIN);
        }
        // file_mmap_ok: the mapping must end below MAX_LFS_FILESIZE.
        if file.is_some() && !file_mapping_fits(pgoff, len) {
            return Err(Errno::EOVERFLOW);
        }

        // do_mmap: mm->def_flags (VM_LOCKED after mlockall(MCL_FUTURE)).
        let mut vmf = VmFlags::from_prot(prot).with_pkey(pkey) | VmFlags::MAY_RWX | self.def_flags;
        vmf.set(VmFlags::GROWSDOWN, flags.contains(MapFlags::GROWSDOWN));
        if flags.contains(MapFlags::LOCKED) {
            vmf |= VmFlags::LOCKED;
        }
        // calc_vm_flag_bits, Linux 6.8+: no huge pages in thread stacks;
        // MAP_SYNC is kept whatever the sharing type.
        vmf.set(VmFlags::NOHUGEPAGE, flags.contains(MapFlags::STACK));
        vmf.set(VmFlags::SYNC, flags.contains(MapFlags::SYNC));
        let droppable = sharing == MapFlags::DROPPABLE;
        if !shared && sharing != MapFlags::PRIVATE && !(droppable && file.is_none()) {
            return Err(Errno::EINVAL);
        }
        let (backing, pgoff) = match file {
            Some(f) => {
                // do_mmap: MAP_SHARED_VALIDATE checks the flags against
                // LEGACY_MAP_MASK and what the file supports (no MAP_SYNC:
                // no DAX file in the model).
                if sharing == MapFlags::SHARED_VALIDATE
                    && flags.intersects(MapFlags::SYNC | MapFlags::FIXED_NOREPLACE)
                {
                    return Err(Errno::EOPNOTSUPP);
                }
                if shared {
                    if prot.contains(Prot::WRITE) && !f.writable() {
                        return Err(Errno::EACCES);
                    }
                    vmf |= VmFlags::SHARED | VmFlags::MAYSHARE;
                    if !f.writable() {
                        vmf = vmf.without(VmFlags::MAYWRITE | VmFlags::SHARED);
                    }
                }
                if !f.readable() {
                    return Err(Errno::EACCES);
                }
                if vmf.contains(VmFlags::GROWSDOWN) {
                    return Err(Errno::EINVAL);
                }
                (Backing::File(f.id), pgoff)
            }
            None if shared => {
                // do_mmap: anonymous memory knows only MAP_SHARED and
                // MAP_PRIVATE; MAP_SHARED_VALIDATE is for files.
                if sharing == MapFlags::SHARED_VALIDATE {
                    return Err(Errno::EINVAL);
                }
                if vmf.contains(VmFlags::GROWSDOWN) {
                    return Err(Errno::EINVAL);
                }
                // shmem_zero_setup: the shmem object is charged whole
                // (shmem_acct_size), unless MAP_NORESERVE.
                if !flags.contains(MapFlags::NORESERVE) {
                    self.vm_enough_memory(len)?;
                }
                vmf |= VmFlags::SHARED | VmFlags::MAYSHARE;
                (Backing::Shm(phys.cache.new_shm()), 0)
            }
            None => {
                if droppable {
                    // do_mmap: droppable memory is never locked nor a stack;
                    // it reserves nothing, and a child or a core dump gets
                    // none of it.
                    if flags.contains(MapFlags::LOCKED) || vmf.contains(VmFlags::GROWSDOWN) {
                        return Err(Errno::EINVAL);
                    }
                    vmf |= VmFlags::DROPPABLE
                        | VmFlags::NORESERVE
                        | VmFlags::WIPEONFORK
                        | VmFlags::DONTDUMP;
                }
                (Backing::Anon, addr >> PAGE_SHIFT)
            }
        };
        if flags.contains(MapFlags::NORESERVE) {
            vmf |= VmFlags::NORESERVE;
        }
        if vmf & (VmFlags::NORESERVE | VmFlags::SHARED | VmFlags::WRITE) == VmFlags::WRITE {
            // mmap_region: charged, less what the VMAs it replaces were.
            self.vm_enough_memory_replacing(addr, end)?;
            vmf |= VmFlags::ACCOUNT;
        }
        // The file system's mmap (ext4_file_mmap, xfs_file_mmap): VM_SYNC
        // needs a DAX file (daxdev_mapping_supported).
        if vmf.contains(VmFlags::SYNC) && file.is_some_and(|f| f.refuses_map_sync) {
            return Err(Errno::EOPNOTSUPP);
        }
        let vma = Vma {
            start: addr,
            end,
            flags: vmf,
            pgoff,
            backing,
            vm_file: file,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        self.install(phys, vma)?;
        // do_mmap: a locked mapping, or MAP_POPULATE without MAP_NONBLOCK,
        // is populated (mm_populate).
        let populate = flags & (MapFlags::POPULATE | MapFlags::NONBLOCK) == MapFlags::POPULATE;
        if populate || vmf.contains(VmFlags::LOCKED) {
            self.mm_populate(phys, addr, end);
        }
        Ok(addr)
    }

    /// `mmap_region` once the new VMA is made: what `vma`'s range showed
    /// is unmapped (the split check of `munmap`: `ENOMEM` at
    /// `max_map_count`; a sealed VMA: `EPERM`, in `plan`), its pages and
    /// guards go, even if `vma` merges back into an identical layout, and
    /// `vma` merges with compatible neighbours.
    pub(crate) fn install(&mut self, phys: &mut Phys, vma: Vma) -> Result<(), Errno> {
        let (start, end) = (vma.start, vma.end);
        let plan = self.plan(start, end, &mut |_| Ok(None), Some(vma))?;
        if plan.punch && self.vmas.len() >= self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        let replaced = self.vmas.range(start..end).next().is_some();
        self.commit(phys, plan);
        if replaced {
            self.pt.zap(phys, start, end);
            self.drop_guards(start, end);
        }
        Ok(())
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
        self.drop_guards(start, end);
        self.free_pgtables(phys, start, end);
        Ok(())
    }
}

/// `file_mmap_ok` for a regular or shmem file: whether `len` bytes from page
/// `pgoff` end below `MAX_LFS_FILESIZE` (`i64::MAX`).
pub(crate) fn file_mapping_fits(pgoff: u64, len: u64) -> bool {
    let max = i64::MAX as u64;
    len <= max && pgoff <= (max - len) >> PAGE_SHIFT
}
