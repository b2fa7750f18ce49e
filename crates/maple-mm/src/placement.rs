//! Where a mapping goes (`get_unmapped_area`), as x86-64 Linux places it:
//! a usable hint is taken as is; otherwise the highest free range below
//! `mmap_base` (top-down, `unmapped_area_topdown`, a reverse gap search on
//! the tree), keeping the stack guard gap below grows-down mappings; and if
//! that fails, the lowest free range above `mmap_legacy_base` (bottom-up
//! fallback, `unmapped_area`).

use crate::config::{offset_in_page, PAGE_SIZE};
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::space::Inner;

impl Inner {
    /// `get_unmapped_area` for `len` bytes (already page aligned): `addr`
    /// itself when `fixed`, else a placement (with `addr` as hint).
    ///
    /// Rules: `len > TASK_SIZE` → `ENOMEM`; the result must end inside the
    /// task (`ENOMEM`), be page aligned (`EINVAL`) and not lie below
    /// `mmap_min_addr` (`EPERM`, `cap_mmap_addr`).
    pub(crate) fn get_unmapped_area(&self, addr: u64, len: u64, fixed: bool) -> Result<u64, Errno> {
        let cfg = &self.cfg;
        if len > cfg.task_size {
            return Err(Errno::ENOMEM);
        }
        let addr = if fixed { addr } else { self.search(addr, len)? };
        if addr > cfg.task_size - len {
            return Err(Errno::ENOMEM);
        }
        if offset_in_page(addr) != 0 {
            return Err(Errno::EINVAL);
        }
        if addr < cfg.mmap_min_addr {
            return Err(Errno::EPERM);
        }
        Ok(addr)
    }

    /// `arch_get_unmapped_area_topdown` (arch/x86/kernel/sys_x86_64.c).
    fn search(&self, hint: u64, len: u64) -> Result<u64, Errno> {
        let h = hint & !(PAGE_SIZE - 1);
        if h != 0 && self.hint_fits(h, len) {
            return Ok(h);
        }
        let low = PAGE_SIZE.max(self.cfg.mmap_min_addr);
        if let Some(a) = self.unmapped_area_topdown(len, low, self.cfg.mmap_base) {
            return Ok(a);
        }
        // "A failed mmap() very likely causes application failure, so fall
        // back to the bottom-up function here."
        self.unmapped_area(len, self.cfg.mmap_legacy_base, self.cfg.task_size)
            .ok_or(Errno::ENOMEM)
    }

    /// A hint is used when the range fits in the task
    /// (`mmap_address_hint_valid`), ends below the next VMA's guard gap and
    /// starts at or above the previous VMA's end.
    fn hint_fits(&self, h: u64, len: u64) -> bool {
        if self.cfg.task_size - len < h {
            return false;
        }
        let guard = self.cfg.stack_guard_gap;
        let next_ok = match self.vmas.range(h..).next() {
            Some((_, v)) => h + len <= v.start_gap(guard),
            None => true,
        };
        let prev_ok = match self.vmas.range(..h).next_back() {
            Some((_, p)) => h >= p.end,
            None => true,
        };
        next_ok && prev_ok
    }

    /// `unmapped_area_topdown`: the highest `len`-byte free range inside
    /// `low..high`; if the VMA above it grows down and its guard gap reaches
    /// into the range, search again below the guard gap.
    pub(crate) fn unmapped_area_topdown(&self, len: u64, low: u64, high: u64) -> Option<u64> {
        let low = low.max(self.cfg.mmap_min_addr);
        let guard = self.cfg.stack_guard_gap;
        let mut high = high;
        loop {
            if high <= low || high - low < len {
                return None;
            }
            let s = self.vmas.find_gap_rev(len, low..=high - 1)?;
            let gap_end = s + len;
            if let Some((_, next)) = self.vmas.range(gap_end..).next() {
                if next.flags.contains(VmFlags::GROWSDOWN) && next.start_gap(guard) < gap_end {
                    high = next.start_gap(guard);
                    continue;
                }
            }
            return Some(s);
        }
    }

    /// `unmapped_area`: the lowest `len`-byte free range inside `low..high`,
    /// past the guard gap of a grows-down VMA above it.
    pub(crate) fn unmapped_area(&self, len: u64, low: u64, high: u64) -> Option<u64> {
        let mut low = low.max(self.cfg.mmap_min_addr);
        let guard = self.cfg.stack_guard_gap;
        loop {
            if high <= low || high - low < len {
                return None;
            }
            let s = self.vmas.find_gap(len, low..=high - 1)?;
            if let Some((_, next)) = self.vmas.range(s + len..).next() {
                if next.flags.contains(VmFlags::GROWSDOWN) && next.start_gap(guard) < s + len {
                    low = next.end;
                    continue;
                }
            }
            return Some(s);
        }
    }
}
