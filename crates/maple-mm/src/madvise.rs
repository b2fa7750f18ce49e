//! `madvise`: advice that sets or clears VMA flags (fork, dump, huge-page
//! and read-ahead advice), advice that acts on pages (`DONTNEED`, `REMOVE`,
//! `POPULATE_*`), and hints the model validates but that change nothing a
//! program can see in it (`WILLNEED`, `FREE`, `COLD`, `PAGEOUT`).

use crate::config::{PAGE_SHIFT, PAGE_SIZE, PMD_SIZE};
use crate::error::Errno;
use crate::flags::{Advice, VmFlags};
use crate::memory::Phys;
use crate::pagecache::Obj;
use crate::pagetable::PRESENT;
use crate::range::{page_range, AtHole};
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, Vma};

impl AddressSpace {
    /// `madvise(addr, len, advice)`.
    ///
    /// Linux rules (`do_madvise`, `madvise_walk_vmas`,
    /// `madvise_vma_behavior`, 6.18):
    /// - `addr` not page aligned → `EINVAL`; `len` rounded up to pages, a
    ///   length that rounds to zero or a range that wraps → `EINVAL`; an
    ///   empty range → success (an advice value Linux does not know is
    ///   `EINVAL` before all this: [`Advice::linux_accepts`]);
    /// - the advice is applied VMA by VMA; a hole in the range does not stop
    ///   it: every mapped part gets the advice, then the call fails with
    ///   `ENOMEM`. A VMA that refuses the advice ends the call with its
    ///   error, the VMAs before it keeping the advice;
    /// - flag advice (see [`Advice`]) splits VMAs at the range's ends (each
    ///   split needs `map_count < max_map_count`, `ENOMEM`) and merges them
    ///   with compatible neighbours, like `mprotect`; a VMA whose flags do
    ///   not change is left alone. `WIPEONFORK` needs private anonymous
    ///   memory, `DOFORK` refuses `VM_IO`, `DODUMP` refuses `VM_SPECIAL`
    ///   and `VM_DROPPABLE`, `KEEPONFORK` refuses `VM_DROPPABLE` (`EINVAL`);
    /// - `DONTNEED` drops every page of the range (`zap_page_range_single`;
    ///   `EINVAL` on `VM_LOCKED` or `VM_PFNMAP`): private anonymous memory
    ///   then reads as zeros, file memory as the file, shared memory
    ///   unchanged; `REMOVE` punches a hole in the file of a shared writable
    ///   mapping; `POPULATE_READ`/`POPULATE_WRITE` fault every page in and
    ///   stop at the first hole (`ENOMEM`) or refusing VMA (`EINVAL`);
    /// - `WILLNEED`, `FREE`, `COLD`, `PAGEOUT` check their VMAs and change
    ///   nothing the model shows (no reclaim, no swap in the model);
    /// - `COLLAPSE` checks each VMA may have huge pages and fills the aligned
    ///   2 MiB blocks that have a page; `GUARD_INSTALL` / `GUARD_REMOVE` put
    ///   and take guard markers (see [`Advice`]).
    /// - on a sealed VMA ([`mseal`](Self::mseal)) of private anonymous
    ///   memory the program may not write (not `VM_WRITE`, or its protection
    ///   key's rights deny writes), advice that discards memory
    ///   (`DONTNEED`, `DONTNEED_LOCKED`, `FREE`, `REMOVE`, `DONTFORK`,
    ///   `WIPEONFORK`, `GUARD_INSTALL`) → `EPERM`.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Advice, MapFlags, Prot, VmFlags, Errno};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 4 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.madvise(a + 4096, 4096, Advice::HugePage).unwrap();      // split in three
    /// assert!(mm.vma_at(a + 4096).unwrap().flags().contains(VmFlags::HUGEPAGE));
    /// assert_eq!(mm.map_count(), 3);
    /// mm.munmap(a + 3 * 4096, 4096).unwrap();
    /// // a hole: the mapped part is advised, then ENOMEM
    /// assert_eq!(mm.madvise(a, 5 << 12, Advice::HugePage), Err(Errno::ENOMEM));
    /// assert_eq!(mm.map_count(), 1);
    /// ```
    pub fn madvise(&mut self, addr: u64, len: u64, advice: Advice) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.madvise(&mut phys, addr, len, advice)
    }

    /// `madvise` with a raw `MADV_*` value, as a system call trace shows it:
    /// `EINVAL` for a value Linux does not know; `None` for one Linux knows
    /// but the model does not implement (see [`Advice::linux_accepts`]),
    /// without touching anything.
    pub fn madvise_raw(&mut self, addr: u64, len: u64, advice: i32) -> Option<Result<(), Errno>> {
        match Advice::from_raw(advice) {
            Some(a) => Some(self.madvise(addr, len, a)),
            None if !Advice::linux_accepts(advice) => Some(Err(Errno::EINVAL)),
            None => None,
        }
    }
}

/// The new flags of a VMA under flag advice, or the error the kernel gives
/// for that VMA (`madvise_vma_behavior`).
fn advised_flags(v: &Vma, advice: Advice) -> Result<VmFlags, Errno> {
    let f = v.flags;
    Ok(match advice {
        Advice::Normal => f.without(VmFlags::SEQ_READ | VmFlags::RAND_READ),
        Advice::Random => f.without(VmFlags::SEQ_READ) | VmFlags::RAND_READ,
        Advice::Sequential => f.without(VmFlags::RAND_READ) | VmFlags::SEQ_READ,
        Advice::DontFork => f | VmFlags::DONTCOPY,
        Advice::DoFork => {
            if f.contains(VmFlags::IO) {
                return Err(Errno::EINVAL);
            }
            f.without(VmFlags::DONTCOPY)
        }
        Advice::WipeOnFork => {
            // vm_file (a file or a shmem object) or VM_SHARED: EINVAL.
            if matches!(v.backing, Backing::File(_) | Backing::Shm(_)) || v.is_shared() {
                return Err(Errno::EINVAL);
            }
            f | VmFlags::WIPEONFORK
        }
        Advice::KeepOnFork => {
            if f.contains(VmFlags::DROPPABLE) {
                return Err(Errno::EINVAL);
            }
            f.without(VmFlags::WIPEONFORK)
        }
        Advice::DontDump => f | VmFlags::DONTDUMP,
        Advice::DoDump => {
            if f.intersects(VmFlags::SPECIAL | VmFlags::DROPPABLE) {
                return Err(Errno::EINVAL);
            }
            f.without(VmFlags::DONTDUMP)
        }
        Advice::Mergeable => {
            // vma_ksm_compatible
            let incompatible =
                VmFlags::SHARED | VmFlags::MAYSHARE | VmFlags::SPECIAL | VmFlags::DROPPABLE;
            if f.intersects(incompatible) {
                f
            } else {
                f | VmFlags::MERGEABLE
            }
        }
        Advice::Unmergeable => f.without(VmFlags::MERGEABLE),
        Advice::HugePage => f.without(VmFlags::NOHUGEPAGE) | VmFlags::HUGEPAGE,
        Advice::NoHugePage => f.without(VmFlags::HUGEPAGE) | VmFlags::NOHUGEPAGE,
        _ => f,
    })
}

/// `can_madvise_modify`: whether `advice` may apply to `vma` if it is
/// sealed. Advice that discards memory (`DONTNEED`, `DONTNEED_LOCKED`,
/// `FREE`, `REMOVE`, `DONTFORK`, `WIPEONFORK`, `GUARD_INSTALL`) is refused
/// on sealed private anonymous memory the program may not write
/// (`writable`: `VM_WRITE`, and the thread's protection key rights allow
/// writes): its contents could not be changed otherwise.
fn may_discard_sealed(vma: &Vma, writable: bool, advice: Advice) -> bool {
    let discard = matches!(
        advice,
        Advice::DontNeed
            | Advice::DontNeedLocked
            | Advice::Free
            | Advice::Remove
            | Advice::DontFork
            | Advice::WipeOnFork
            | Advice::GuardInstall
    );
    !vma.flags.contains(VmFlags::SEALED)
        || !discard
        || vma.vm_file.is_some()
        || vma.flags.contains(VmFlags::SHARED)
        || writable
}

impl Inner {
    pub(crate) fn madvise(
        &mut self,
        phys: &mut Phys,
        start: u64,
        len: u64,
        advice: Advice,
    ) -> Result<(), Errno> {
        let Some((start, end)) = page_range(start, len, Errno::EINVAL)? else {
            return Ok(());
        };
        match advice {
            Advice::PopulateRead | Advice::PopulateWrite => {
                let write = advice == Advice::PopulateWrite;
                self.walk_range(phys, start, end, AtHole::Stop, &mut |mm, phys, v, s, e| {
                    mm.populate(phys, v, s, e, write)
                })
            }
            _ => self.walk_range(phys, start, end, AtHole::Skip, &mut |mm, phys, v, s, e| {
                mm.advise_vma(phys, v, s, e, advice)
            }),
        }
    }

    /// The advice on the part `start..end` of `vma`.
    fn advise_vma(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
        advice: Advice,
    ) -> Result<(), Errno> {
        let flags = vma.flags;
        let writable = flags.contains(VmFlags::WRITE) && self.pkey_allows(vma, true);
        if !may_discard_sealed(vma, writable, advice) {
            return Err(Errno::EPERM);
        }
        match advice {
            Advice::WillNeed => Ok(()),
            Advice::DontNeed | Advice::DontNeedLocked | Advice::Free => {
                // madvise_dontneed_free_valid_vma
                let mut forbidden = VmFlags::PFNMAP;
                if advice != Advice::DontNeedLocked {
                    forbidden |= VmFlags::LOCKED;
                }
                if flags.intersects(forbidden) {
                    return Err(Errno::EINVAL);
                }
                if advice == Advice::Free {
                    // madvise_free_single_vma: private anonymous only; the
                    // pages stay until reclaim, which the model never does.
                    return if vma.is_anonymous() {
                        Ok(())
                    } else {
                        Err(Errno::EINVAL)
                    };
                }
                self.pt.zap(phys, start, end);
                Ok(())
            }
            Advice::Cold | Advice::PageOut => {
                // can_madv_lru_vma
                if flags.intersects(VmFlags::LOCKED | VmFlags::PFNMAP) {
                    Err(Errno::EINVAL)
                } else {
                    Ok(())
                }
            }
            Advice::Remove => self.remove_range(phys, vma, start, end),
            Advice::Collapse => self.collapse(phys, vma, start, end),
            Advice::GuardInstall => self.guard_install(phys, vma, start, end),
            Advice::GuardRemove => self.guard_remove(vma, start, end),
            Advice::PopulateRead | Advice::PopulateWrite => {
                unreachable!("populate advice walks the range itself")
            }
            _ => {
                let new_flags = advised_flags(vma, advice)?;
                self.modify_part(phys, start, end, &mut |v: &Vma| Vma {
                    flags: new_flags,
                    ..v.clone()
                })
            }
        }
    }

    /// `madvise_remove`: punches a hole in the object behind a shared
    /// writable mapping (`vfs_fallocate(FALLOC_FL_PUNCH_HOLE)`): this
    /// space's entries of the range go, and the object's pages read back as
    /// zeros in every mapping (a page nobody else maps is freed; one that is
    /// still mapped elsewhere is zeroed in place, where the kernel would
    /// unmap it everywhere and fault a fresh zero page in later).
    fn remove_range(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
    ) -> Result<(), Errno> {
        if vma.flags.contains(VmFlags::LOCKED) {
            return Err(Errno::EINVAL);
        }
        let obj = match vma.backing {
            Backing::File(_) | Backing::Shm(_) => Obj::of(vma.backing),
            Backing::Anon | Backing::Special(_) => None,
        };
        let Some(obj) = obj else {
            return Err(Errno::EINVAL);
        };
        if !vma.flags.contains(VmFlags::SHARED | VmFlags::MAYWRITE) {
            return Err(Errno::EACCES);
        }
        self.pt.zap(phys, start, end);
        let first = vma.pgoff_of(start);
        let pages = (end - start) >> PAGE_SHIFT;
        let Phys { cache, frames, .. } = phys;
        cache.punch_hole(frames, obj, first, first + pages);
        Ok(())
    }

    /// `MADV_POPULATE_READ` / `MADV_POPULATE_WRITE` on the part `start..end`
    /// of `vma` (`madvise_populate`, `faultin_page_range`): the VMA must
    /// allow the access and not be `VM_IO`/`VM_PFNMAP` (`EINVAL`, from
    /// `check_vma_flags`); then every page is faulted in as an access would.
    fn populate(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
        write: bool,
    ) -> Result<(), Errno> {
        let needed = if write { VmFlags::WRITE } else { VmFlags::READ };
        if vma.flags.intersects(VmFlags::IO | VmFlags::PFNMAP) || !vma.flags.contains(needed) {
            return Err(Errno::EINVAL);
        }
        // check_vma_flags: arch_vma_access_permitted (the thread's PKRU).
        if !self.pkey_allows(vma, write) {
            return Err(Errno::EFAULT);
        }
        // A guard page fails the fault (VM_FAULT_SIGSEGV): the pages before
        // it are populated.
        let end = match self.first_guard(start, end) {
            Some(g) => {
                self.populate_pages(phys, start, g, write);
                return Err(Errno::EFAULT);
            }
            None => end,
        };
        self.populate_pages(phys, start, end, write);
        Ok(())
    }

    fn populate_pages(&mut self, phys: &mut Phys, start: u64, end: u64, write: bool) {
        let mut page = start;
        while page < end {
            self.populate_page(phys, page, write);
            page += PAGE_SIZE;
        }
    }

    /// `madvise_collapse` on the part `start..end` of `vma` (see
    /// [`Advice::Collapse`]).
    fn collapse(&mut self, phys: &mut Phys, vma: &Vma, start: u64, end: u64) -> Result<(), Errno> {
        // thp_vma_allowable_order with a forced collapse: VM_NO_KHUGEPAGED,
        // VM_NOHUGEPAGE, an aligned block inside the VMA (with the file
        // offset aligned alike), an anon_vma for anonymous memory, a file
        // nobody writes (CONFIG_READ_ONLY_THP_FOR_FS).
        if vma.flags.intersects(VmFlags::NOHUGEPAGE | VmFlags::SPECIAL) {
            return Err(Errno::EINVAL);
        }
        let last_block = vma.end.saturating_sub(PMD_SIZE) & !(PMD_SIZE - 1);
        let offset_aligned = vma.is_anonymous()
            || ((vma.start >> PAGE_SHIFT).wrapping_sub(vma.pgoff)) % (PMD_SIZE >> PAGE_SHIFT) == 0;
        if vma.end < PMD_SIZE || last_block < vma.start || !offset_aligned {
            return Err(Errno::EINVAL);
        }
        let private_anon = vma.is_anonymous() && !vma.is_shared();
        match vma.backing {
            Backing::Anon if private_anon && vma.anon.is_none() => return Err(Errno::EINVAL),
            Backing::File(_) if vma.vm_file.is_none_or(|f| f.writable()) => {
                return Err(Errno::EINVAL)
            }
            Backing::Special(_) => return Err(Errno::EINVAL),
            _ => {}
        }
        let hstart = start.next_multiple_of(PMD_SIZE);
        let hend = end & !(PMD_SIZE - 1);
        if hstart > hend {
            return Err(Errno::EINVAL);
        }
        if !private_anon {
            return Ok(());
        }
        // The new huge page is the process's own (copy-on-write sharing
        // ends) and writable if the VMA is: the write fault of each page.
        let write = vma.flags.contains(VmFlags::WRITE);
        let mut result = Ok(());
        for block in (hstart..hend).step_by(PMD_SIZE as usize) {
            let any_present = (block..block + PMD_SIZE)
                .step_by(PAGE_SIZE as usize)
                .any(|page| self.pt.lookup(phys, page).0 & PRESENT != 0);
            if any_present {
                self.populate_pages(phys, block, block + PMD_SIZE, write);
            } else {
                result = Err(Errno::EINVAL); // SCAN_PMD_NULL, SCAN_PTE_NON_PRESENT
            }
        }
        result
    }
}
