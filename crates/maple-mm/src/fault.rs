//! Memory accesses and page faults: `read` / `write` go through the page
//! tables like the hardware; a missing or write-protected entry is a fault
//! that the handler resolves the way `handle_mm_fault` does, or reports.

use crate::config::{PAGE_SHIFT, PAGE_SIZE};
use crate::error::{Fault, FaultKind};
use crate::flags::VmFlags;
use crate::frames::{FrameId, ZERO_FRAME};
use crate::memory::Phys;
use crate::pagecache::Obj;
use crate::pagetable::{entry_target, index, make_entry, PRESENT, WRITABLE};
use crate::space::{AddressSpace, Inner};
use crate::vma::{AnonId, Vma};

impl AddressSpace {
    /// Reads `buf.len()` bytes at `addr`, faulting pages in like the
    /// hardware and the fault handler would: a page not yet touched reads
    /// as zeros (private anonymous memory maps the shared zero page) or as
    /// the file's contents.
    ///
    /// The whole range is checked first: an address no VMA covers is a
    /// [`FaultKind::Unmapped`] fault (unless a grows-down VMA right above
    /// may grow down to it: `expand_stack`), a `PROT_NONE` VMA a
    /// [`FaultKind::Protection`] fault; then nothing was read or populated.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, FaultKind, MapFlags, Prot, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, PAGE_SIZE, Prot::READ, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// let mut buf = [0xff; 8];
    /// mm.read(a, &mut buf).unwrap();
    /// assert_eq!(buf, [0; 8]); // untouched anonymous memory reads as zeros
    /// let fault = mm.read(a - PAGE_SIZE, &mut buf).unwrap_err();
    /// assert_eq!(fault.kind, FaultKind::Unmapped);
    /// ```
    pub fn read(&mut self, addr: u64, buf: &mut [u8]) -> Result<(), Fault> {
        if buf.is_empty() {
            return Ok(());
        }
        let mut phys = self.mem.lock();
        self.inner
            .prepare_access(&mut phys, addr, buf.len() as u64, false)?;
        let mut done = 0usize;
        while done < buf.len() {
            let a = addr + done as u64;
            let off = (a % PAGE_SIZE) as usize;
            let n = (PAGE_SIZE as usize - off).min(buf.len() - done);
            let f = self.inner.frame_for(&mut phys, a, false);
            phys.frames.read(f, off, &mut buf[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `buf` at `addr`. A write to a page not yet present allocates
    /// it (zero-filled for anonymous memory, a private copy of the file page
    /// for a private file mapping, the page-cache page itself for a shared
    /// mapping); a write to a page shared copy-on-write copies it first
    /// (`do_wp_page`), or reuses it when this space holds the only reference;
    /// a write into a page table shared copy-on-write first gives this space
    /// its own table.
    ///
    /// The whole range is checked first (see [`read`](Self::read)); a VMA
    /// without `PROT_WRITE` is a protection fault.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, FaultKind, MapFlags, Prot, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 2 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.write(a + PAGE_SIZE - 2, b"span").unwrap(); // across a page boundary
    /// let mut buf = [0; 4];
    /// mm.read(a + PAGE_SIZE - 2, &mut buf).unwrap();
    /// assert_eq!(&buf, b"span");
    /// mm.mprotect(a, 2 * PAGE_SIZE, Prot::READ).unwrap();
    /// assert_eq!(mm.write(a, b"x").unwrap_err().kind, FaultKind::Protection);
    /// ```
    pub fn write(&mut self, addr: u64, buf: &[u8]) -> Result<(), Fault> {
        if buf.is_empty() {
            return Ok(());
        }
        let mut phys = self.mem.lock();
        self.inner
            .prepare_access(&mut phys, addr, buf.len() as u64, true)?;
        let mut done = 0usize;
        while done < buf.len() {
            let a = addr + done as u64;
            let off = (a % PAGE_SIZE) as usize;
            let n = (PAGE_SIZE as usize - off).min(buf.len() - done);
            let f = self.inner.frame_for(&mut phys, a, true);
            phys.frames.write(f, off, &buf[done..done + n]);
            done += n;
        }
        Ok(())
    }

    /// Reads one byte.
    pub fn read_byte(&mut self, addr: u64) -> Result<u8, Fault> {
        let mut b = [0u8];
        self.read(addr, &mut b)?;
        Ok(b[0])
    }

    /// Writes one byte.
    pub fn write_byte(&mut self, addr: u64, v: u8) -> Result<(), Fault> {
        self.write(addr, &[v])
    }

    /// `anon_vma_prepare`: gives the private VMA at `addr` the anon_vma its
    /// first write fault would give it (reusing a compatible neighbour's,
    /// so that they may merge), without faulting a page in. A replay of a
    /// system call trace, which shows no faults, uses it to state that the
    /// program wrote to a mapping: merges and `VM_ACCOUNT` depend on it.
    ///
    /// Returns whether the VMA has an anon_vma afterwards: `false` for a
    /// shared VMA (its pages are the object's, never anonymous) or no VMA at
    /// `addr`.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, VmFlags};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 4096, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// assert!(mm.anon_vma_prepare(a));
    /// mm.mprotect(a, 4096, Prot::READ).unwrap();      // written: stays charged
    /// assert!(mm.vma_at(a).unwrap().flags().contains(VmFlags::ACCOUNT));
    /// ```
    pub fn anon_vma_prepare(&mut self, addr: u64) -> bool {
        match self.inner.vmas.get(addr) {
            Some(v) if !v.is_shared() => {
                self.inner.anon_vma_prepare(addr);
                true
            }
            _ => false,
        }
    }

    /// Whether the page at `addr` is present in the page tables (resident
    /// or the zero page), without faulting.
    pub fn is_present(&self, addr: u64) -> bool {
        let phys = self.mem.lock();
        self.inner.pt.lookup(&phys, addr & !(PAGE_SIZE - 1)).0 & PRESENT != 0
    }
}

/// `access_error`: reads need any access right (x86: write and exec imply
/// read), writes need `VM_WRITE`.
fn allowed(v: &Vma, write: bool) -> bool {
    if write {
        v.flags.contains(VmFlags::WRITE)
    } else {
        v.flags.readable()
    }
}

impl Inner {
    /// Checks an access of `len` bytes at `addr` and grows a stack if the
    /// access needs it; changes nothing when it faults.
    pub(crate) fn prepare_access(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        len: u64,
        write: bool,
    ) -> Result<(), Fault> {
        let fault = |a: u64, kind| Fault {
            addr: a,
            kind,
            write,
        };
        let end = match addr.checked_add(len) {
            Some(e) if e <= self.cfg.task_size => e,
            _ => {
                let a = addr.max(self.cfg.task_size);
                return Err(fault(a, FaultKind::Unmapped));
            }
        };
        let mut expand: Option<(u64, u64)> = None;
        let mut at = addr;
        while at < end {
            if let Some(v) = self.vmas.get(at) {
                if !allowed(v, write) {
                    return Err(fault(at, FaultKind::Protection));
                }
                if !self.pkey_allows(v, write) {
                    return Err(fault(at, FaultKind::ProtectionKey));
                }
                let upto = v.end.min(end);
                if let Some(g) = self.first_guard(at & !(PAGE_SIZE - 1), upto) {
                    return Err(fault(g.max(at), FaultKind::Guard));
                }
                at = v.end;
                continue;
            }
            match self.vmas.range(at..).next() {
                Some((_, n)) if expand.is_none() && self.may_expand_stack(n, at) => {
                    if !allowed(n, write) {
                        return Err(fault(at, FaultKind::Protection));
                    }
                    if !self.pkey_allows(n, write) {
                        return Err(fault(at, FaultKind::ProtectionKey));
                    }
                    expand = Some((n.start, at & !(PAGE_SIZE - 1)));
                    at = n.end;
                }
                _ => return Err(fault(at, FaultKind::Unmapped)),
            }
        }
        if let Some((vstart, new_start)) = expand {
            self.expand_stack(phys, vstart, new_start);
        }
        Ok(())
    }

    /// `expand_downwards` checks: the VMA grows down, the new start is not
    /// below `mmap_min_addr`, stays `stack_guard_gap` above an accessible
    /// VMA below that is not itself a stack, and the stack stays within
    /// `RLIMIT_STACK` (`acct_stack_growth`).
    fn may_expand_stack(&self, v: &Vma, addr: u64) -> bool {
        if !v.flags.contains(VmFlags::GROWSDOWN) {
            return false;
        }
        let a = addr & !(PAGE_SIZE - 1);
        if a < self.cfg.mmap_min_addr {
            return false;
        }
        if let Some((_, p)) = (v.start > 0)
            .then(|| self.vmas.range(..v.start).next_back())
            .flatten()
        {
            if !p.flags.contains(VmFlags::GROWSDOWN)
                && p.flags.readable()
                && a - p.end < self.cfg.stack_guard_gap
            {
                return false;
            }
        }
        v.end - a <= self.cfg.stack_rlimit
    }

    /// Moves the start of the stack VMA at `vstart` down to `new_start`
    /// (no merge, as in the kernel); the VMA gets its anon_vma first.
    fn expand_stack(&mut self, phys: &mut Phys, vstart: u64, new_start: u64) {
        let _ = phys;
        self.anon_vma_prepare(vstart);
        if let Some((_, old)) = self.vmas.remove(vstart) {
            let grow = (old.start - new_start) >> PAGE_SHIFT;
            let v = Vma {
                start: new_start,
                pgoff: old.pgoff.wrapping_sub(grow),
                ..old
            };
            self.total_vm += grow;
            self.vmas.insert(v.key(), v);
        }
    }

    /// The frame behind `addr` for the access, faulting if the page tables
    /// do not allow it (the access was checked against the VMAs).
    #[inline]
    pub(crate) fn frame_for(&mut self, phys: &mut Phys, addr: u64, write: bool) -> FrameId {
        let (pte, pmd_w) = self.pt.lookup(phys, addr);
        if pte & PRESENT != 0 && (!write || (pte & WRITABLE != 0 && pmd_w)) {
            return entry_target(pte);
        }
        self.handle_fault(phys, addr, write)
    }

    /// Faults one page in (`MAP_POPULATE`).
    pub(crate) fn populate_page(&mut self, phys: &mut Phys, addr: u64, write: bool) {
        self.frame_for(phys, addr, write);
    }

    /// `handle_mm_fault` for a page of a VMA that allows the access.
    fn handle_fault(&mut self, phys: &mut Phys, addr: u64, write: bool) -> FrameId {
        let page = addr & !(PAGE_SIZE - 1);
        let Some(vma) = self.vmas.get(page).cloned() else {
            return ZERO_FRAME;
        };
        let pt = self.pt.pte_table_mut(phys, page);
        let slot = index(page, 0);
        let old = phys.tables.table(pt).entries[slot];
        let shared = vma.is_shared();
        if old == 0 {
            match Obj::of(vma.backing) {
                // do_anonymous_page
                None => {
                    if !write {
                        self.pt
                            .set_pte(phys, pt, slot, make_entry(ZERO_FRAME, PRESENT));
                        return ZERO_FRAME;
                    }
                    self.anon_vma_prepare(page);
                    let frame = phys.frames.alloc();
                    self.pt
                        .set_pte(phys, pt, slot, make_entry(frame, PRESENT | WRITABLE));
                    frame
                }
                // do_read_fault / do_shared_fault / do_cow_fault
                Some(obj) => {
                    let Phys { cache, frames, .. } = &mut *phys;
                    let cached = cache.frame(frames, obj, vma.pgoff_of(page));
                    if shared || !write {
                        frames.get(cached);
                        let writable = if shared && vma.flags.contains(VmFlags::WRITE) {
                            WRITABLE
                        } else {
                            0
                        };
                        self.pt
                            .set_pte(phys, pt, slot, make_entry(cached, PRESENT | writable));
                        return cached;
                    }
                    self.anon_vma_prepare(page);
                    let frame = phys.frames.alloc_copy(cached);
                    self.pt
                        .set_pte(phys, pt, slot, make_entry(frame, PRESENT | WRITABLE));
                    frame
                }
            }
        } else {
            let frame = entry_target(old);
            if !write || old & WRITABLE != 0 {
                return frame;
            }
            // do_wp_page
            if shared {
                self.pt.set_pte(phys, pt, slot, old | WRITABLE);
                return frame;
            }
            let frame_info = phys.frames.frame(frame);
            if frame != ZERO_FRAME && frame_info.refs == 1 && !frame_info.cached {
                // wp_page_reuse: the only reference, an anonymous page.
                self.pt.set_pte(phys, pt, slot, old | WRITABLE);
                return frame;
            }
            self.anon_vma_prepare(page);
            let copy = if frame == ZERO_FRAME {
                phys.frames.alloc()
            } else {
                phys.frames.alloc_copy(frame)
            };
            phys.frames.put(frame);
            self.pt
                .set_pte(phys, pt, slot, make_entry(copy, PRESENT | WRITABLE));
            copy
        }
    }

    /// `anon_vma_prepare`: gives the VMA at `addr` an anon_vma, reusing a
    /// compatible neighbour's (`find_mergeable_anon_vma`: the next VMA
    /// first, then the previous) so that they may merge later; only a
    /// neighbour whose chain is singular lends its anon_vma
    /// (`reusable_anon_vma`), never one inherited at fork.
    pub(crate) fn anon_vma_prepare(&mut self, addr: u64) {
        let Some(v) = self.vmas.get(addr) else { return };
        if v.anon.is_some() {
            return;
        }
        let mut id = None;
        if let Some(n) = self.vmas.get(v.end) {
            if n.anon.is_some() && !n.anon_inherited && v.anon_compatible(n) {
                id = n.anon;
            }
        }
        if id.is_none() && v.start > 0 {
            if let Some(p) = self.vmas.get(v.start - 1) {
                if p.anon.is_some() && !p.anon_inherited && p.anon_compatible(v) {
                    id = p.anon;
                }
            }
        }
        if let Some(m) = self.vmas.get_mut(addr) {
            m.anon = Some(id.unwrap_or_else(AnonId::fresh));
        }
    }
}
