//! Memory locking: `mlock`, `mlock2`, `munlock`, `mlockall`, `munlockall`,
//! and the population of locked memory (`__mm_populate`).
//!
//! By default the caller may lock any amount of memory (`CAP_IPC_LOCK`, as
//! root, or `RLIMIT_MEMLOCK` unlimited); [`Config::memlock_limit`] sets a
//! limit and with it the kernel's `EPERM`, `ENOMEM` and `EAGAIN`.
//!
//! [`Config::memlock_limit`]: crate::Config::memlock_limit

use crate::config::{offset_in_page, PAGE_SHIFT, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::memory::Phys;
use crate::range::AtHole;
use crate::space::{AddressSpace, Inner};
use crate::vma::Vma;

/// `MLOCK_ONFAULT`: the flag of [`mlock2`](AddressSpace::mlock2): lock
/// pages as they fault in instead of populating the range.
pub const MLOCK_ONFAULT: u32 = 0x1;
/// `MCL_CURRENT`: [`mlockall`](AddressSpace::mlockall) locks every VMA now.
pub const MCL_CURRENT: u32 = 0x1;
/// `MCL_FUTURE`: [`mlockall`](AddressSpace::mlockall) makes every later
/// mapping (and heap growth) locked (`mm->def_flags`).
pub const MCL_FUTURE: u32 = 0x2;
/// `MCL_ONFAULT`: with `MCL_CURRENT` or `MCL_FUTURE`, lock on fault.
pub const MCL_ONFAULT: u32 = 0x4;

impl AddressSpace {
    /// `mlock(addr, len)`: [`mlock2`](Self::mlock2) without flags.
    pub fn mlock(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        self.mlock2(addr, len, 0)
    }

    /// `mlock2(addr, len, flags)`: sets `VM_LOCKED` (and `VM_LOCKONFAULT`
    /// with [`MLOCK_ONFAULT`]) on every page of the range.
    ///
    /// Linux rules (`do_mlock`, `apply_vma_lock_flags`, `mlock_fixup`, 6.18):
    /// - flags other than `MLOCK_ONFAULT` → `EINVAL`;
    /// - `addr` need not be aligned: the range is widened to whole pages
    ///   (`len + offset_in_page(addr)` rounded up); an end that wraps →
    ///   `EINVAL`; an empty range succeeds;
    /// - no VMA at the start → `ENOMEM`; then VMA by VMA, each part gets
    ///   the new flags, split and merged like `mprotect` (a split at
    ///   `max_map_count` → `ENOMEM`); a hole → `ENOMEM`, the VMAs before it
    ///   keep the change;
    /// - `VM_SPECIAL` VMAs (`[vvar]`, `[vdso]`, ...) and `VM_DROPPABLE` ones
    ///   are left as they are, without an error;
    /// - after success the range is populated (`__mm_populate`): every page
    ///   of an accessible VMA that is locked without `VM_LOCKONFAULT` is
    ///   faulted in, with write faults for private writable memory.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, VmFlags, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 4 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.mlock(a + PAGE_SIZE, PAGE_SIZE).unwrap();      // three VMAs
    /// assert_eq!(mm.map_count(), 3);
    /// assert!(mm.vma_at(a + PAGE_SIZE).unwrap().flags().contains(VmFlags::LOCKED));
    /// assert_eq!(mm.stats().rss_pages, 1);              // populated
    /// mm.munlock(a, 4 * PAGE_SIZE).unwrap();            // merged back
    /// assert_eq!(mm.map_count(), 1);
    /// ```
    pub fn mlock2(&mut self, addr: u64, len: u64, flags: u32) -> Result<(), Errno> {
        if flags & !MLOCK_ONFAULT != 0 {
            return Err(Errno::EINVAL);
        }
        let mut lock = VmFlags::LOCKED;
        if flags & MLOCK_ONFAULT != 0 {
            lock |= VmFlags::LOCKONFAULT;
        }
        if !self.inner.can_do_mlock() {
            return Err(Errno::EPERM);
        }
        let (start, len) = lock_range(addr, len);
        if !self.inner.may_lock(start, len) {
            return Err(Errno::ENOMEM);
        }
        let Some(end) = lock_end(start, len)? else {
            return Ok(());
        };
        let mut phys = self.mem.lock();
        self.inner
            .apply_vma_lock_flags(&mut phys, start, end, lock)?;
        self.inner.mm_populate(&mut phys, start, end);
        Ok(())
    }

    /// `munlock(addr, len)`: clears `VM_LOCKED` and `VM_LOCKONFAULT` on every
    /// page of the range, with the range rules and errors of
    /// [`mlock2`](Self::mlock2) (nothing is populated).
    pub fn munlock(&mut self, addr: u64, len: u64) -> Result<(), Errno> {
        let (start, len) = lock_range(addr, len);
        let Some(end) = lock_end(start, len)? else {
            return Ok(());
        };
        let mut phys = self.mem.lock();
        self.inner
            .apply_vma_lock_flags(&mut phys, start, end, VmFlags::EMPTY)
    }

    /// `mlockall(flags)`: locks the whole space.
    ///
    /// Linux rules (`sys_mlockall`, `apply_mlockall_flags`, 6.18):
    /// - no flag, an unknown flag, or [`MCL_ONFAULT`] alone → `EINVAL`;
    /// - [`MCL_FUTURE`] makes every later mapping locked: `mmap`, `shmat`
    ///   and heap growth by `brk` get `VM_LOCKED` (and `VM_LOCKONFAULT` with
    ///   [`MCL_ONFAULT`]) from `mm->def_flags` and are populated unless on
    ///   fault; a `mlockall` without `MCL_FUTURE` ends that (see
    ///   [`def_flags`](Self::def_flags)); a child of `fork` does not inherit it;
    /// - [`MCL_CURRENT`] locks every VMA now (each whole, so each may merge
    ///   with its neighbours; `VM_SPECIAL` and `VM_DROPPABLE` VMAs are left alone; a failing
    ///   VMA is skipped), then populates the space like
    ///   [`mlock2`](Self::mlock2).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, VmFlags, MCL_FUTURE, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// mm.mlockall(MCL_FUTURE).unwrap();
    /// let a = mm.mmap(0, 2 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// assert!(mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    /// assert_eq!(mm.stats().rss_pages, 2);
    /// mm.munlockall().unwrap();
    /// assert!(!mm.vma_at(a).unwrap().flags().contains(VmFlags::LOCKED));
    /// ```
    pub fn mlockall(&mut self, flags: u32) -> Result<(), Errno> {
        let known = MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT;
        if flags == 0 || flags & !known != 0 || flags == MCL_ONFAULT {
            return Err(Errno::EINVAL);
        }
        if !self.inner.can_do_mlock() {
            return Err(Errno::EPERM);
        }
        if let (Some(limit), true) = (self.inner.cfg.memlock_limit, flags & MCL_CURRENT != 0) {
            if self.inner.total_vm > limit >> PAGE_SHIFT {
                return Err(Errno::ENOMEM);
            }
        }
        let mut phys = self.mem.lock();
        self.inner.apply_mlockall_flags(&mut phys, flags);
        if flags & MCL_CURRENT != 0 {
            let end = self.inner.cfg.task_size;
            self.inner.mm_populate(&mut phys, 0, end);
        }
        Ok(())
    }

    /// `munlockall()`: clears `VM_LOCKED` and `VM_LOCKONFAULT` on every VMA
    /// and ends `MCL_FUTURE` (`apply_mlockall_flags(0)`). Never fails.
    pub fn munlockall(&mut self) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.apply_mlockall_flags(&mut phys, 0);
        Ok(())
    }

    /// `mm->def_flags`: the flags every new mapping gets (`VM_LOCKED`, and
    /// `VM_LOCKONFAULT`, after [`mlockall(MCL_FUTURE)`](Self::mlockall)).
    pub fn def_flags(&self) -> VmFlags {
        self.inner.def_flags
    }
}

/// `do_mlock`'s range: `addr` rounded down to its page, `len` widened by
/// the offset and rounded up (wrapping as the kernel's `size_t` does).
fn lock_range(addr: u64, len: u64) -> (u64, u64) {
    let mask = !(PAGE_SIZE - 1);
    let len = len
        .wrapping_add(offset_in_page(addr))
        .wrapping_add(PAGE_SIZE - 1)
        & mask;
    (addr & mask, len)
}

/// `apply_vma_lock_flags`'s end: below the start → `EINVAL`; an empty
/// range → `None`.
fn lock_end(start: u64, len: u64) -> Result<Option<u64>, Errno> {
    let end = start.wrapping_add(len);
    if end < start {
        return Err(Errno::EINVAL);
    }
    Ok((end > start).then_some(end))
}

/// The flags `mlock_fixup` gives a VMA: its lock flags replaced by `lock`;
/// `None` when the VMA is left as it is (`VM_SPECIAL`, `VM_DROPPABLE`).
fn locked_flags(vma: &Vma, lock: VmFlags) -> Option<VmFlags> {
    if vma.flags.intersects(VmFlags::SPECIAL | VmFlags::DROPPABLE) {
        return None;
    }
    Some(vma.flags.without(VmFlags::LOCKED_MASK) | lock)
}

impl Inner {
    /// `mm->locked_vm`: the pages of `VM_LOCKED` VMAs.
    fn locked_vm(&self) -> u64 {
        self.vmas
            .iter()
            .filter(|(_, v)| v.flags.contains(VmFlags::LOCKED))
            .map(|(_, v)| v.pages())
            .sum()
    }

    /// `can_do_mlock`: a limit other than 0, or no limit (`CAP_IPC_LOCK`).
    pub(crate) fn can_do_mlock(&self) -> bool {
        self.cfg.memlock_limit != Some(0)
    }

    /// `do_mlock`'s limit check: the pages locked now plus the range's,
    /// less those of the range already locked
    /// (`count_mm_mlocked_page_nr`), within `RLIMIT_MEMLOCK`.
    fn may_lock(&self, start: u64, len: u64) -> bool {
        let Some(limit) = self.cfg.memlock_limit else {
            return true;
        };
        let limit = limit >> PAGE_SHIFT;
        let mut locked = (len >> PAGE_SHIFT) + self.locked_vm();
        if locked > limit {
            let end = start.saturating_add(len);
            let already = self.bytes_flagged(start, end, VmFlags::LOCKED);
            locked -= already >> PAGE_SHIFT;
        }
        locked <= limit
    }

    /// `mlock_future_ok`: whether `bytes` more of a mapping with `flags`
    /// may be locked (always, unless `VM_LOCKED` under a limit).
    pub(crate) fn mlock_future_ok(&self, flags: VmFlags, bytes: u64) -> bool {
        match self.cfg.memlock_limit {
            Some(limit) if flags.contains(VmFlags::LOCKED) => {
                (bytes >> PAGE_SHIFT) + self.locked_vm() <= limit >> PAGE_SHIFT
            }
            _ => true,
        }
    }

    /// `apply_vma_lock_flags` on the aligned, non-empty range `start..end`.
    fn apply_vma_lock_flags(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
        lock: VmFlags,
    ) -> Result<(), Errno> {
        self.walk_range(
            phys,
            start,
            end,
            AtHole::Stop,
            &mut |mm, phys, vma, s, e| mm.mlock_fixup(phys, vma, s, e, lock),
        )
    }

    /// `mlock_fixup` of the part `start..end` of `vma`.
    fn mlock_fixup(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
        lock: VmFlags,
    ) -> Result<(), Errno> {
        let Some(flags) = locked_flags(vma, lock) else {
            return Ok(());
        };
        if flags == vma.flags {
            return Ok(());
        }
        self.modify_part(phys, start, end, &mut |v: &Vma| Vma { flags, ..v.clone() })
    }

    /// `apply_mlockall_flags`: `mm->def_flags` from `MCL_FUTURE`, every VMA
    /// locked (or unlocked, for `flags` without `MCL_CURRENT`) whole,
    /// errors ignored.
    pub(crate) fn apply_mlockall_flags(&mut self, phys: &mut Phys, flags: u32) {
        self.def_flags = self.def_flags.without(VmFlags::LOCKED_MASK);
        let onfault = if flags & MCL_ONFAULT != 0 {
            VmFlags::LOCKONFAULT
        } else {
            VmFlags::EMPTY
        };
        if flags & MCL_FUTURE != 0 {
            self.def_flags |= VmFlags::LOCKED | onfault;
            if flags & MCL_CURRENT == 0 {
                return;
            }
        }
        let lock = if flags & MCL_CURRENT != 0 {
            VmFlags::LOCKED | onfault
        } else {
            VmFlags::EMPTY
        };
        let mut at = 0;
        while let Some(vma) = self.vmas.range(at..).next().map(|(_, v)| v.clone()) {
            // A VMA that cannot be split is skipped, as the kernel does.
            let _ = self.mlock_fixup(phys, &vma, vma.start, vma.end, lock);
            at = vma.end;
        }
    }

    /// `__mm_populate(start, end - start, ignore_errors)`: faults in every
    /// page of `start..end` in VMAs that are accessible, not `VM_IO` nor
    /// `VM_PFNMAP`, and not locked on fault (`populate_vma_page_range`):
    /// write faults where the memory is private and writable (to break
    /// copy-on-write), read faults elsewhere. A VMA whose protection key the
    /// thread's `PKRU` denies, and the part of a VMA from its first guard
    /// region on, are skipped (the fault fails; errors are ignored).
    pub(crate) fn mm_populate(&mut self, phys: &mut Phys, start: u64, end: u64) {
        let mut at = start;
        while at < end {
            let Some(vma) = self.vmas.range(at..end).next().map(|(_, v)| v.clone()) else {
                break;
            };
            let (s, e) = (vma.start.max(at), vma.end.min(end));
            at = e;
            let f = vma.flags;
            if f.intersects(VmFlags::IO | VmFlags::PFNMAP)
                || f.contains(VmFlags::LOCKONFAULT)
                || !f.readable()
            {
                continue;
            }
            let write = f & (VmFlags::WRITE | VmFlags::SHARED) == VmFlags::WRITE;
            if !self.pkey_allows(&vma, write) {
                continue;
            }
            let e = self.first_guard(s, e).unwrap_or(e);
            let mut page = s;
            while page < e {
                self.populate_page(phys, page, write);
                page += PAGE_SIZE;
            }
        }
    }
}
