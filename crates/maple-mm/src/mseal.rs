//! `mseal`: sealing VMAs against change.
//!
//! A sealed VMA (`VM_SEALED`) stays as it is for the rest of the process's
//! life: the calls that would unmap, replace, move, resize or reprotect it
//! fail with `EPERM` (`munmap`, `mmap` with `MAP_FIXED`, `mremap`, a `brk`
//! shrink, `mprotect`, `pkey_mprotect`), and so does advice that would
//! discard the contents of its private anonymous read-only memory. The
//! checks sit where Linux makes them: in the edit that removes VMAs
//! (`Inner::plan`), `mprotect`'s walk, `mremap`'s source check and
//! `madvise`'s per-VMA check. A child of `fork` keeps the seals.

use crate::config::{page_align, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::range::AtHole;
use crate::space::AddressSpace;
use crate::vma::Vma;

impl AddressSpace {
    /// `mseal(addr, len, flags)`: seals every VMA of the range.
    ///
    /// Linux rules (`do_mseal`, `mseal_apply`, 6.18):
    /// - `flags` other than 0 → `EINVAL`; `addr` not page aligned →
    ///   `EINVAL`; `len` rounded up to pages, a length that rounds up past
    ///   the top of the address space or a range that wraps → `EINVAL`; an
    ///   empty range succeeds;
    /// - a hole anywhere in the range → `ENOMEM`, checked before anything
    ///   changes;
    /// - each VMA part gets `VM_SEALED`, split at the range's ends and
    ///   merged with sealed neighbours (a split at `max_map_count` →
    ///   `ENOMEM`, the parts before it sealed); sealing a sealed VMA again
    ///   is not an error.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot, VmFlags, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 4 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.mseal(a + PAGE_SIZE, 2 * PAGE_SIZE, 0).unwrap();        // three VMAs
    /// assert!(mm.vma_at(a + PAGE_SIZE).unwrap().flags().contains(VmFlags::SEALED));
    /// assert_eq!(mm.munmap(a, 4 * PAGE_SIZE), Err(Errno::EPERM)); // nothing unmapped
    /// assert_eq!(mm.map_count(), 3);
    /// assert_eq!(mm.mprotect(a + PAGE_SIZE, PAGE_SIZE, Prot::READ), Err(Errno::EPERM));
    /// mm.munmap(a, PAGE_SIZE).unwrap();                           // not sealed
    /// ```
    pub fn mseal(&mut self, addr: u64, len: u64, flags: u64) -> Result<(), Errno> {
        if flags != 0 || addr % PAGE_SIZE != 0 {
            return Err(Errno::EINVAL);
        }
        let len = match page_align(len) {
            Some(l) => l,
            None => return Err(Errno::EINVAL),
        };
        let end = addr.checked_add(len).ok_or(Errno::EINVAL)?;
        if end == addr {
            return Ok(());
        }
        if self.inner.range_has_hole(addr, end) {
            return Err(Errno::ENOMEM);
        }
        let mut phys = self.mem.lock();
        self.inner.walk_range(
            &mut phys,
            addr,
            end,
            AtHole::Stop,
            &mut |mm, phys, vma, s, e| {
                if vma.flags.contains(VmFlags::SEALED) {
                    return Ok(());
                }
                mm.modify_part(phys, s, e, &mut |v: &Vma| Vma {
                    flags: v.flags | VmFlags::SEALED,
                    ..v.clone()
                })
            },
        )
    }
}

impl crate::space::Inner {
    /// `range_contains_unmapped`: whether some address of `start..end` is
    /// in no VMA.
    fn range_has_hole(&self, start: u64, end: u64) -> bool {
        let mut covered = start;
        for (_, v) in self.vmas.range(start..end) {
            if v.start > covered {
                return true;
            }
            covered = v.end;
        }
        covered < end
    }
}
