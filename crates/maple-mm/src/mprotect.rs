//! `mprotect`.

use crate::config::{offset_in_page, page_align};
use crate::error::Errno;
use crate::flags::{Prot, VmFlags};
use crate::memory::Phys;
use crate::space::{AddressSpace, Inner};
use crate::vma::Vma;

impl AddressSpace {
    /// `mprotect(addr, len, prot)`: changes the protection of every page of
    /// the range.
    ///
    /// Linux rules (`do_mprotect_pkey`, `mprotect_fixup`):
    /// - `PROT_GROWSDOWN | PROT_GROWSUP` together → `EINVAL`; `addr` not page
    ///   aligned → `EINVAL`; `len == 0` → success; the rounded end wrapping
    ///   → `ENOMEM`; bits other than read, write, exec, sem → `EINVAL`;
    ///   `PROT_GROWSUP` → `EINVAL` (x86 has no grows-up VMAs);
    /// - no VMA at `addr` → `ENOMEM`; with `PROT_GROWSDOWN` the change
    ///   starts at the VMA's start, which must grow down (`EINVAL`);
    /// - a hole anywhere in the range → `ENOMEM`;
    /// - a protection the VMA may not have (`VM_MAY*`) → `EACCES`;
    /// - making a private mapping writable for the first time adds
    ///   `VM_ACCOUNT` (never removed again);
    /// - a VMA whose flags do not change is left alone; the others are split
    ///   at the range's ends (each split needs `map_count < max_map_count`,
    ///   `ENOMEM`) and merged with compatible neighbours;
    /// - removing write clears the write bit of every page-table entry of
    ///   the range (`change_protection`), so a later write faults.
    ///
    /// Deviation: Linux may change the VMAs before a hole and then return
    /// `ENOMEM`; the model checks the whole range first and changes nothing.
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
        let grows = prot & (Prot::GROWSDOWN | Prot::GROWSUP);
        let prot = prot.without(Prot::GROWSDOWN | Prot::GROWSUP);
        if grows == Prot::GROWSDOWN | Prot::GROWSUP {
            return Err(Errno::EINVAL);
        }
        if offset_in_page(start) != 0 {
            return Err(Errno::EINVAL);
        }
        if len == 0 {
            return Ok(());
        }
        let end = page_align(len)
            .and_then(|l| start.checked_add(l))
            .unwrap_or(start);
        if end <= start {
            return Err(Errno::ENOMEM);
        }
        if prot.bits() & !(Prot::READ | Prot::WRITE | Prot::EXEC | Prot::SEM).bits() != 0 {
            return Err(Errno::EINVAL);
        }
        if grows.contains(Prot::GROWSUP) {
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
            if first.start > start {
                return Err(Errno::ENOMEM);
            }
            start
        };
        if !self.covered(start, end) {
            return Err(Errno::ENOMEM);
        }
        let bits = VmFlags::from_prot(prot);
        let mut lost_write = false;
        let plan = self.plan(
            start,
            end,
            &mut |v: &Vma| {
                let mut nf = v.flags.without(VmFlags::ACCESS) | bits;
                // newflags >> 4 shifts VM_MAY% in place of VM_%
                if (nf.bits() & !(nf.bits() >> 4)) & VmFlags::ACCESS.bits() != 0 {
                    return Err(Errno::EACCES);
                }
                if nf == v.flags {
                    return Ok(Some(v.clone()));
                }
                if nf.contains(VmFlags::WRITE)
                    && !v.flags.intersects(
                        VmFlags::ACCOUNT | VmFlags::WRITE | VmFlags::SHARED | VmFlags::NORESERVE,
                    )
                {
                    nf |= VmFlags::ACCOUNT;
                }
                lost_write |= v.flags.contains(VmFlags::WRITE) && !nf.contains(VmFlags::WRITE);
                Ok(Some(Vma {
                    flags: nf,
                    ..v.clone()
                }))
            },
            None,
        )?;
        if plan.cuts > 0 && self.vmas.len() + plan.cuts > self.cfg.max_map_count {
            return Err(Errno::ENOMEM);
        }
        self.commit(phys, plan);
        if lost_write {
            self.pt.wrprotect(phys, start, end);
        }
        Ok(())
    }
}
