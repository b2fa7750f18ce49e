//! `mremap`: shrink, grow in place, move.

use crate::config::{offset_in_page, page_align, PAGE_SHIFT};
use crate::error::Errno;
use crate::flags::{RemapFlags, VmFlags};
use crate::memory::Phys;
use crate::placement::thp_offset;
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, Vma};

impl AddressSpace {
    /// `mremap(old_addr, old_len, new_len, flags, new_addr)`: resizes or
    /// moves a mapping and returns its (new) address. `new_addr` is only
    /// read with `MREMAP_FIXED`.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot, RemapFlags, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let fixed = MapFlags::PRIVATE_ANON | MapFlags::FIXED;
    /// let a = mm.mmap(0x40_0000, PAGE_SIZE, Prot::RW, fixed, None, 0).unwrap();
    /// mm.write(a, b"moves along").unwrap();
    /// // Another mapping right above: the first cannot grow in place.
    /// mm.mmap(a + PAGE_SIZE, PAGE_SIZE, Prot::READ, fixed, None, 0).unwrap();
    /// let grow = mm.mremap(a, PAGE_SIZE, 2 * PAGE_SIZE, RemapFlags::EMPTY, 0);
    /// assert_eq!(grow, Err(Errno::ENOMEM));
    /// // Allowed to move, it moves, its pages with it.
    /// let b = mm.mremap(a, PAGE_SIZE, 2 * PAGE_SIZE, RemapFlags::MAYMOVE, 0).unwrap();
    /// assert_ne!(b, a);
    /// assert!(mm.vma_at(a).is_none());
    /// let mut buf = [0; 11];
    /// mm.read(b, &mut buf).unwrap();
    /// assert_eq!(&buf, b"moves along");
    /// ```
    ///
    /// Linux rules (`SYSCALL_DEFINE5(mremap)`, `vma_to_resize`,
    /// `vma_expandable`, `move_vma`, `mremap_to`):
    /// - unknown flags, `FIXED` without `MAYMOVE`, `DONTUNMAP` without
    ///   `MAYMOVE` or with a size change → `EINVAL`; `old_addr` not page
    ///   aligned → `EINVAL`; lengths rounded up to pages, `new_len == 0` →
    ///   `EINVAL`; with `FIXED` or `DONTUNMAP`, `new_addr` not page aligned,
    ///   the new range outside the task or overlapping the old one →
    ///   `EINVAL`, checked before the VMA lookup (Linux 6.18 on this
    ///   machine: `DONTUNMAP` without `FIXED` takes `new_addr` as a hint but
    ///   checks it all the same); no VMA at `old_addr` → `EFAULT`, a sealed
    ///   one ([`mseal`](Self::mseal)) → `EPERM`, as is a sealed VMA in the
    ///   target of `FIXED`;
    /// - shrinking unmaps the tail `old_addr + new_len .. old_addr + old_len`
    ///   (whatever VMAs it covers) and keeps the address;
    /// - growing needs `old_addr .. old_addr + old_len` inside one VMA
    ///   (`EFAULT`); `old_len == 0` duplicates a shared mapping (a new VMA
    ///   on the same object) and is `EINVAL` for a private one; if the range ends where the VMA ends and the pages
    ///   above are free (and inside the task), the VMA grows in place and
    ///   merges with a compatible VMA above (`vma_merge_extend`);
    /// - otherwise with `MAYMOVE` the range moves to a new placement (top
    ///   down, like `mmap`), its pages with it (`move_page_tables`): the new
    ///   VMA keeps the flags, the anon_vma and the offset (an anonymous VMA
    ///   that never faulted gets `new_addr >> PAGE_SHIFT`, `copy_vma`),
    ///   merges with compatible neighbours, and the old range is unmapped
    ///   (kept, empty, with `DONTUNMAP`); it needs
    ///   `map_count < max_map_count - 3` (`ENOMEM`); without `MAYMOVE` → `ENOMEM`;
    /// - `FIXED` (`mremap_to`): `new_addr` page aligned and the new range
    ///   inside the task (`EINVAL`), not overlapping the old one (`EINVAL`),
    ///   `map_count + 2 < max_map_count - 3` (`ENOMEM`); whatever is at the
    ///   new range is unmapped, the old range is shrunk first if
    ///   `new_len < old_len`, then the move.
    ///
    /// - `FIXED` without a size change over a range of several VMAs (Linux
    ///   6.17+, `remap_move`): every VMA part of the range moves, one after
    ///   the other, keeping the gaps between them (what lies in the target
    ///   under a gap stays); the range must start in a VMA (`EFAULT`); a
    ///   failure stops the walk and keeps the parts already moved.
    /// - with `DONTUNMAP` the VMA left behind (whole: it is not split)
    ///   loses `VM_LOCKED` / `VM_LOCKONFAULT`, without merging
    ///   (`dontunmap_complete`);
    /// - what a `VM_LOCKED` VMA gains by growing (in place or moved) is
    ///   populated, unless locked on fault; growth beyond `RLIMIT_MEMLOCK`
    ///   → `EAGAIN`;
    /// - the growth of a charged VMA (`VM_ACCOUNT`; its whole new length
    ///   with `DONTUNMAP`) larger than the commit limit → `ENOMEM`, checked
    ///   in `move_vma` for a move (see
    ///   [`Config::commit_limit`](crate::Config::commit_limit)).
    ///
    /// Every check comes before any change, except the `max_map_count`
    /// check and the commit charge of `move_vma`, which Linux too makes
    /// after the target was unmapped and the old range shrunk, and the
    /// second look-up of the old VMA after the target was unmapped
    /// (`EFAULT` when the target held it: `old_len` 0 and `new_addr` at
    /// `old_addr`, which the overlap check lets through).
    pub fn mremap(
        &mut self,
        old_addr: u64,
        old_len: u64,
        new_len: u64,
        flags: RemapFlags,
        new_addr: u64,
    ) -> Result<u64, Errno> {
        let mut phys = self.mem.lock();
        self.inner
            .mremap(&mut phys, old_addr, old_len, new_len, flags, new_addr)
    }
}

/// The huge-page alignment of a moving `mremap` (`get_unmapped_area` with
/// the VMA's file, `MAP_SHARED` for a `VM_MAYSHARE` VMA, and the offset of
/// `addr` in it): as for `mmap`.
fn remap_thp(vma: &Vma, addr: u64, hint: u64, new_len: u64) -> Option<u64> {
    let shared = vma.flags.contains(VmFlags::MAYSHARE);
    thp_offset(vma.vm_file, shared, hint, new_len, vma.pgoff_of(addr))
}

impl Inner {
    pub(crate) fn mremap(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        old_len: u64,
        new_len: u64,
        flags: RemapFlags,
        new_addr: u64,
    ) -> Result<u64, Errno> {
        let to = self.remap(phys, addr, old_len, new_len, flags, new_addr)?;
        // mremap: what a locked VMA gained (grown in place or moved) is
        // populated (mm_populate of new_addr + old_len .. + new_len).
        let (old_len, new_len) = (
            page_align(old_len).unwrap_or(0),
            page_align(new_len).unwrap_or(0),
        );
        let locked = self
            .vmas
            .get(to)
            .is_some_and(|v| v.flags.contains(VmFlags::LOCKED));
        if locked && new_len > old_len {
            self.mm_populate(phys, to + old_len, to + new_len);
        }
        Ok(to)
    }

    /// `mremap` without the population of locked memory.
    fn remap(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        old_len: u64,
        new_len: u64,
        flags: RemapFlags,
        new_addr: u64,
    ) -> Result<u64, Errno> {
        let (maymove, fixed, dontunmap) = (
            flags.contains(RemapFlags::MAYMOVE),
            flags.contains(RemapFlags::FIXED),
            flags.contains(RemapFlags::DONTUNMAP),
        );
        if flags.bits() & !7 != 0
            || (fixed && !maymove)
            || (dontunmap && (!maymove || old_len != new_len))
        {
            return Err(Errno::EINVAL);
        }
        if offset_in_page(addr) != 0 {
            return Err(Errno::EINVAL);
        }
        let old_len = page_align(old_len).unwrap_or(0);
        let new_len = page_align(new_len).unwrap_or(0);
        if new_len == 0 {
            return Err(Errno::EINVAL);
        }
        // With FIXED or DONTUNMAP the kernel takes `new_addr` as the target
        // (DONTUNMAP: as a hint), and checks it before it looks at any VMA:
        // page aligned, inside the task size, not overlapping the old range.
        // (A C caller that passes DONTUNMAP without a fifth argument hands
        // the kernel whatever its register held, and usually gets EINVAL.)
        if fixed || dontunmap {
            let ts = self.cfg.task_size;
            if offset_in_page(new_addr) != 0 || new_len > ts || new_addr > ts - new_len {
                return Err(Errno::EINVAL);
            }
            if addr.saturating_add(old_len) > new_addr && new_addr + new_len > addr {
                return Err(Errno::EINVAL);
            }
        }
        self.check_source(addr)?;
        if fixed && old_len == new_len {
            let first_end = self.vmas.get(addr).map_or(addr, |v| v.end);
            if addr.saturating_add(old_len) > first_end {
                return self.remap_move(phys, addr, old_len, new_addr, dontunmap);
            }
        }
        if fixed || dontunmap {
            return self.mremap_to(phys, addr, old_len, new_addr, new_len, fixed, dontunmap);
        }
        if old_len >= new_len {
            if old_len > new_len {
                let tail = addr.checked_add(new_len).ok_or(Errno::EINVAL)?;
                self.munmap(phys, tail, old_len - new_len)?;
            }
            return Ok(addr);
        }
        let vma = self.vma_to_resize(addr, old_len, new_len)?;
        if old_len == vma.end - addr && self.vma_expandable(&vma, new_len - old_len) {
            // The growth of a charged VMA is charged.
            if vma.flags.contains(VmFlags::ACCOUNT) {
                self.vm_enough_memory(new_len - old_len)?;
            }
            let ext = Vma {
                start: vma.end,
                end: vma.end + (new_len - old_len),
                pgoff: vma.pgoff + vma.pages(),
                ..vma.clone()
            };
            let plan = self.plan(ext.start, ext.end, &mut |_| Ok(None), Some(ext))?;
            self.commit(phys, plan);
            return Ok(addr);
        }
        if !maymove {
            return Err(Errno::ENOMEM);
        }
        let to =
            self.get_unmapped_area_thp(0, new_len, false, remap_thp(&vma, addr, 0, new_len))?;
        self.move_vma(phys, &vma, addr, old_len, new_len, to, false)
    }

    /// `remap_move`: `MREMAP_FIXED` of `len` bytes at `addr` spanning
    /// several VMAs to `new_addr`, VMA by VMA, each part to the target
    /// address that keeps its distance from the previous part.
    fn remap_move(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        len: u64,
        new_addr: u64,
        dontunmap: bool,
    ) -> Result<u64, Errno> {
        let ts = self.cfg.task_size;
        let end = addr.checked_add(len).ok_or(Errno::EINVAL)?;
        if offset_in_page(new_addr) != 0 || len > ts || new_addr > ts - len {
            return Err(Errno::EINVAL);
        }
        if end > new_addr && new_addr + len > addr {
            return Err(Errno::EINVAL);
        }
        // (part start, part end, end of its whole VMA), before anything moves.
        let parts: Vec<(u64, u64, u64)> = self
            .vmas
            .range(addr..end)
            .map(|(_, v)| (v.start.max(addr), v.end.min(end), v.end))
            .collect();
        let mut target = new_addr;
        let mut last_vma_end: Option<u64> = None;
        let mut first_result = None;
        for (part_start, part_end, vma_end) in parts {
            let gap = match last_vma_end {
                Some(last) => part_start - last,
                None if part_start > addr => return Err(Errno::EFAULT),
                None => 0,
            };
            let part_len = part_end - part_start;
            let to = self.mremap_to(
                phys,
                part_start,
                part_len,
                target + gap,
                part_len,
                true,
                dontunmap,
            )?;
            first_result.get_or_insert(to);
            target = to + part_len;
            last_vma_end = Some(vma_end);
        }
        first_result.ok_or(Errno::EFAULT)
    }

    /// `check_prep_vma`'s first checks: a VMA at `addr` (`EFAULT`), not
    /// sealed (`EPERM`: a sealed VMA is neither moved nor resized).
    fn check_source(&self, addr: u64) -> Result<(), Errno> {
        match self.vmas.get(addr) {
            None => Err(Errno::EFAULT),
            Some(v) if v.flags.contains(VmFlags::SEALED) => Err(Errno::EPERM),
            Some(_) => Ok(()),
        }
    }

    /// `vma_to_resize`: the VMA at `addr`, which must hold the whole old range.
    fn vma_to_resize(&self, addr: u64, old_len: u64, new_len: u64) -> Result<Vma, Errno> {
        let vma = self.vmas.get(addr).cloned().ok_or(Errno::EFAULT)?;
        if old_len > vma.end - addr {
            return Err(Errno::EFAULT);
        }
        // Duplicating a mapping (old_len 0) only makes sense when shared.
        if old_len == 0 && !vma.flags.contains(VmFlags::MAYSHARE) {
            return Err(Errno::EINVAL);
        }
        // resize_is_valid: special mappings do not grow.
        if new_len > old_len && vma.flags.intersects(VmFlags::DONTEXPAND | VmFlags::PFNMAP) {
            return Err(Errno::EFAULT);
        }
        // resize_is_valid: a locked VMA's growth must fit RLIMIT_MEMLOCK.
        if new_len > old_len && !self.mlock_future_ok(vma.flags, new_len - old_len) {
            return Err(Errno::EAGAIN);
        }
        if new_len != old_len
            && vma
                .pgoff_of(addr)
                .checked_add(new_len >> PAGE_SHIFT)
                .is_none()
        {
            return Err(Errno::EINVAL);
        }
        Ok(vma)
    }

    /// `vma_expandable`: nothing mapped in the `delta` bytes above the VMA
    /// and the grown VMA inside the task.
    fn vma_expandable(&self, vma: &Vma, delta: u64) -> bool {
        let Some(end) = vma.end.checked_add(delta) else {
            return false;
        };
        if self.vmas.range(vma.end..end).next().is_some() {
            return false;
        }
        self.get_unmapped_area(vma.start, end - vma.start, true)
            .is_ok()
    }

    /// `mremap_to`: `MREMAP_FIXED` and/or `MREMAP_DONTUNMAP`.
    #[allow(clippy::too_many_arguments)]
    fn mremap_to(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        old_len: u64,
        new_addr: u64,
        new_len: u64,
        fixed: bool,
        dontunmap: bool,
    ) -> Result<u64, Errno> {
        // remap_move moves each part through here: each one's VMA checked.
        self.check_source(addr)?;
        let ts = self.cfg.task_size;
        if self.vmas.len() + 2 >= self.cfg.max_map_count.saturating_sub(3) {
            return Err(Errno::ENOMEM);
        }
        // Every check before any change: the resize check on what the old
        // range will be after its tail is cut, and the placement.
        if old_len > new_len {
            let ok = addr.checked_add(old_len).is_some_and(|e| e <= ts);
            if !ok {
                return Err(Errno::EINVAL);
            }
        }
        let eff_old = old_len.min(new_len);
        let vma = self.vma_to_resize(addr, eff_old, new_len)?;
        let to = if fixed {
            self.get_unmapped_area(new_addr, new_len, true)?
        } else {
            let thp = remap_thp(&vma, addr, new_addr, new_len);
            self.get_unmapped_area_thp(new_addr, new_len, false, thp)?
        };
        let _ = vma;
        if fixed {
            self.unmap_range(phys, to, to + new_len)?;
        }
        if old_len > new_len {
            self.unmap_range(phys, addr + new_len, addr + old_len)?;
        }
        let vma = self.vmas.get(addr).cloned().ok_or(Errno::EFAULT)?;
        self.move_vma(phys, &vma, addr, eff_old, new_len, to, dontunmap)
    }

    /// `move_vma`: moves `old_len` bytes at `old` (inside `vma`) to a new
    /// VMA of `new_len` bytes at `to`.
    #[allow(clippy::too_many_arguments)]
    fn move_vma(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        old: u64,
        old_len: u64,
        new_len: u64,
        to: u64,
        dontunmap: bool,
    ) -> Result<u64, Errno> {
        if self.vmas.len() >= self.cfg.max_map_count.saturating_sub(3) {
            return Err(Errno::ENOMEM);
        }
        // A charged VMA's move is charged its growth, or its whole new
        // length when the old range stays (DONTUNMAP).
        if vma.flags.contains(VmFlags::ACCOUNT) {
            let charge = if dontunmap {
                new_len
            } else {
                new_len.saturating_sub(old_len)
            };
            self.vm_enough_memory(charge)?;
        }
        let mut nv = Vma {
            start: to,
            end: to + new_len,
            pgoff: vma.pgoff_of(old),
            ..vma.clone()
        };
        if vma.is_anonymous() && vma.anon.is_none() {
            nv.pgoff = to >> PAGE_SHIFT;
        }
        // The object must outlive the moment its last VMA is gone and the
        // new one is not there yet (the kernel inserts the copy first).
        if let Backing::Shm(id) = vma.backing {
            phys.cache.shm_get(id);
        }
        let ptes = self.pt.take_range(phys, old, old + old_len);
        // dontunmap_complete: the VMA left behind, whole and unsplit, loses
        // its memory lock (in place: no merge).
        if dontunmap {
            if let Some(left) = self.vmas.get(old).cloned() {
                let unlocked = Vma {
                    flags: left.flags.without(VmFlags::LOCKED_MASK),
                    ..left
                };
                self.vmas.insert(unlocked.key(), unlocked);
            }
        }
        let dontunmap = dontunmap || old_len == 0;
        if !dontunmap {
            let plan = self.plan(old, old + old_len, &mut |_| Ok(None), None)?;
            self.commit(phys, plan);
        }
        let plan = self.plan(to, to + new_len, &mut |_| Ok(None), Some(nv))?;
        self.commit(phys, plan);
        for (a, pte) in ptes {
            self.pt.install(phys, to + (a - old), pte);
        }
        // Guard markers move with the page tables.
        self.move_guards(old, old_len, to);
        if !dontunmap {
            self.free_pgtables(phys, old, old + old_len);
        }
        if let Backing::Shm(id) = vma.backing {
            let Phys { cache, frames, .. } = phys;
            cache.shm_put(frames, id);
        }
        Ok(to)
    }
}
