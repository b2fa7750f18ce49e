//! `mprotect`.

use crate::error::Errno;
use crate::flags::{Prot, VmFlags};
use crate::memory::Phys;
use crate::range::{page_range, AtHole};
use crate::space::{AddressSpace, Inner};
use crate::vma::Vma;

impl AddressSpace {
    /// `mprotect(addr, len, prot)`: changes the protection of every page of
    /// the range.
    ///
    /// Linux rules (`do_mprotect_pkey`, `mprotect_fixup`, 6.18):
    /// - `PROT_GROWSDOWN | PROT_GROWSUP` together → `EINVAL`; `addr` not page
    ///   aligned → `EINVAL`; `len == 0` → success; the rounded end wrapping
    ///   → `ENOMEM`; bits other than read, write, exec, sem → `EINVAL`;
    ///   `PROT_GROWSUP` → `EINVAL` (x86 has no grows-up VMAs);
    /// - no VMA at `addr` → `ENOMEM`; with `PROT_GROWSDOWN` the change
    ///   starts at the VMA's start, which must grow down (`EINVAL`);
    /// - then VMA by VMA, in address order: a protection the VMA may not
    ///   have (`VM_MAY*`) → `EACCES`; a hole → `ENOMEM`; a split at
    ///   `max_map_count` → `ENOMEM`; a sealed VMA ([`mseal`](Self::mseal))
    ///   → `EPERM`, even for the protection it has. The VMAs before the
    ///   failure keep their new protection, as in Linux;
    /// - making a private mapping writable for the first time adds
    ///   `VM_ACCOUNT` and charges the VMA part (`ENOMEM` above the commit
    ///   limit: see [`Config::commit_limit`](crate::Config::commit_limit));
    ///   making a private anonymous VMA that has no anon_vma
    ///   yet (never written) non-writable drops it again (Linux 6.7+);
    /// - a VMA whose flags do not change is left alone; the others are split
    ///   at the range's ends and merged with compatible neighbours;
    /// - removing write clears the write bit of every page-table entry of
    ///   the range (`change_protection`), so a later write faults; making
    ///   locked private memory writable faults every page in for writing
    ///   (`populate_vma_page_range`).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, Errno};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 3 << 12, Prot::READ, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.munmap(a + 4096, 4096).unwrap();
    /// // The page before the hole changes, then the hole fails the call.
    /// assert_eq!(mm.mprotect(a, 3 << 12, Prot::RW), Err(Errno::ENOMEM));
    /// assert_eq!(mm.vma_at(a).unwrap().prot(), Prot::RW);
    /// assert_eq!(mm.vma_at(a + 2 * 4096).unwrap().prot(), Prot::READ);
    /// ```
    pub fn mprotect(&mut self, addr: u64, len: u64, prot: Prot) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.mprotect(&mut phys, addr, len, prot)
    }
}

impl Inner {
    pub(crate) fn mprotect(
        &mut self,
        phys: &mut Phys,
        start: u64,
        len: u64,
        prot: Prot,
    ) -> Result<(), Errno> {
        self.mprotect_pkey(phys, start, len, prot, -1)
    }

    /// `do_mprotect_pkey`: `pkey` -1 for `mprotect`.
    pub(crate) fn mprotect_pkey(
        &mut self,
        phys: &mut Phys,
        start: u64,
        len: u64,
        prot: Prot,
        pkey: i32,
    ) -> Result<(), Errno> {
        let grows = prot & (Prot::GROWSDOWN | Prot::GROWSUP);
        let prot = prot.without(Prot::GROWSDOWN | Prot::GROWSUP);
        if grows == Prot::GROWSDOWN | Prot::GROWSUP {
            return Err(Errno::EINVAL);
        }
        let Some((start, end)) = page_range(start, len, Errno::ENOMEM)? else {
            return Ok(());
        };
        if prot.bits() & !(Prot::READ | Prot::WRITE | Prot::EXEC | Prot::SEM).bits() != 0 {
            return Err(Errno::EINVAL);
        }
        if grows.contains(Prot::GROWSUP) {
            return Err(Errno::EINVAL);
        }
        // A key the program did not allocate may not be used.
        if pkey != -1 && !self.pkey_is_allocated(pkey) {
            return Err(Errno::EINVAL);
        }
        let Some((_, first)) = self.vmas.range(start..end).next() else {
            return Err(Errno::ENOMEM);
        };
        let start = if grows.contains(Prot::GROWSDOWN) {
            if !first.flags.contains(VmFlags::GROWSDOWN) {
                return Err(Errno::EINVAL);
            }
            first.start
        } else {
            start
        };
        let bits = VmFlags::from_prot(prot);
        self.walk_range(
            phys,
            start,
            end,
            AtHole::Stop,
            &mut |mm, phys, vma, s, e| {
                let key = mm.mprotect_pkey_of(vma, prot, pkey);
                let new_flags = protected_flags(vma, bits)?.with_pkey(key);
                // mprotect_fixup: a sealed VMA refuses even a change to
                // what it has.
                if vma.flags.contains(VmFlags::SEALED) {
                    return Err(Errno::EPERM);
                }
                if new_flags == vma.flags {
                    return Ok(());
                }
                // mprotect_fixup: private memory made writable is charged.
                if new_flags.contains(VmFlags::ACCOUNT) && !vma.flags.contains(VmFlags::ACCOUNT) {
                    mm.vm_enough_memory(e - s)?;
                }
                mm.modify_part(phys, s, e, &mut |v: &Vma| Vma {
                    flags: new_flags,
                    ..v.clone()
                })?;
                if vma.flags.contains(VmFlags::WRITE) && !new_flags.contains(VmFlags::WRITE) {
                    mm.pt.wrprotect(phys, s, e);
                }
                // mprotect_fixup: locked private memory made writable is
                // populated with write faults (copy-on-write broken now).
                let old_bits = vma.flags & (VmFlags::WRITE | VmFlags::SHARED | VmFlags::LOCKED);
                if old_bits == VmFlags::LOCKED && new_flags.contains(VmFlags::WRITE) {
                    mm.mm_populate(phys, s, e);
                }
                Ok(())
            },
        )
    }
}

/// The flags `vma` gets from `mprotect` with the access flags `access`, or
/// `EACCES` (`do_mprotect_pkey`, `mprotect_fixup`).
fn protected_flags(vma: &Vma, access: VmFlags) -> Result<VmFlags, Errno> {
    let old = vma.flags;
    let mut new = old.without(VmFlags::ACCESS) | access;
    // newflags >> 4 shifts VM_MAY% in place of VM_%
    if (new.bits() & !(new.bits() >> 4)) & VmFlags::ACCESS.bits() != 0 {
        return Err(Errno::EACCES);
    }
    if new == old {
        return Ok(old);
    }
    if new.contains(VmFlags::WRITE) {
        // A private mapping becoming writable is charged.
        if !old.intersects(VmFlags::ACCOUNT | VmFlags::WRITE | VmFlags::SHARED | VmFlags::NORESERVE)
        {
            new |= VmFlags::ACCOUNT;
        }
    } else if old.contains(VmFlags::ACCOUNT) && vma.is_anonymous() && vma.anon.is_none() {
        // Linux 6.7+: an anonymous VMA that never got a page is uncharged.
        new = new.without(VmFlags::ACCOUNT);
    }
    Ok(new)
}
