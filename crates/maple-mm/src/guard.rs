//! Guard regions (`MADV_GUARD_INSTALL`, `MADV_GUARD_REMOVE`, Linux 6.13+):
//! pages that fault on every access, marked in the page tables rather than
//! by a VMA of their own, so installing them splits nothing.
//!
//! The kernel keeps them as PTE markers; the model keeps the guarded pages
//! in a set beside its page tables and gives them the markers' lives: they
//! survive `MADV_DONTNEED`, `MADV_FREE` and `mprotect`; `munmap`, a
//! `MAP_FIXED` mapping over them and `brk` shrinking remove them; `mremap`
//! moves them with the pages (`MREMAP_DONTUNMAP` leaves the old range
//! without them); fork copies them unless the VMA is wiped on fork.

use std::collections::BTreeSet;

use crate::config::PAGE_SIZE;
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::memory::Phys;
use crate::space::Inner;
use crate::vma::Vma;

/// The guarded pages of an address space, by address.
pub(crate) type Guards = BTreeSet<u64>;

impl Inner {
    /// `madvise_guard_install` on the part `start..end` of `vma`: `EINVAL`
    /// on `VM_LOCKED` or `VM_SPECIAL` VMAs (`is_valid_guard_vma`);
    /// otherwise the pages there are dropped (their contents are lost) and
    /// replaced by guard markers, and the whole VMA gets `VM_MAYBE_GUARD`
    /// (set in place, no split), which makes fork copy its page tables.
    pub(crate) fn guard_install(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
    ) -> Result<(), Errno> {
        if vma.flags.intersects(VmFlags::LOCKED | VmFlags::SPECIAL) {
            return Err(Errno::EINVAL);
        }
        self.pt.zap(phys, start, end);
        self.guards.extend((start..end).step_by(PAGE_SIZE as usize));
        if !vma.flags.contains(VmFlags::MAYBE_GUARD) {
            if let Some(v) = self.vmas.get_mut(start) {
                v.flags |= VmFlags::MAYBE_GUARD;
            }
        }
        Ok(())
    }

    /// `madvise_guard_remove` on the part `start..end` of `vma`: `EINVAL`
    /// on `VM_SPECIAL` VMAs (a locked VMA may lose its guards); the pages
    /// read as before the guard (zeros, or the file) after the next fault.
    pub(crate) fn guard_remove(&mut self, vma: &Vma, start: u64, end: u64) -> Result<(), Errno> {
        if vma.flags.intersects(VmFlags::SPECIAL) {
            return Err(Errno::EINVAL);
        }
        self.drop_guards(start, end);
        Ok(())
    }

    /// Removes the guards of `start..end` (the range is unmapped).
    pub(crate) fn drop_guards(&mut self, start: u64, end: u64) {
        if self.guards.range(start..end).next().is_some() {
            let gone: Vec<u64> = self.guards.range(start..end).copied().collect();
            for a in gone {
                self.guards.remove(&a);
            }
        }
    }

    /// Moves the guards of `old..old + len` to `to` (`mremap`).
    pub(crate) fn move_guards(&mut self, old: u64, len: u64, to: u64) {
        let moved: Vec<u64> = self.guards.range(old..old + len).copied().collect();
        for a in &moved {
            self.guards.remove(a);
        }
        self.guards
            .extend(moved.into_iter().map(|a| to + (a - old)));
    }

    /// The first guarded page of `start..end`.
    pub(crate) fn first_guard(&self, start: u64, end: u64) -> Option<u64> {
        self.guards.range(start..end).next().copied()
    }
}
