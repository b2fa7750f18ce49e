//! Where a mapping goes (`get_unmapped_area`), as x86-64 Linux places it:
//! a usable hint is taken as is; otherwise the highest free range below
//! `mmap_base` (top-down, `unmapped_area_topdown`, a reverse gap search on
//! the tree), keeping the stack guard gap below grows-down mappings; and if
//! that fails, the lowest free range above `mmap_legacy_base` (bottom-up
//! fallback, `unmapped_area`).
//!
//! `MAP_32BIT` placements are searched bottom-up inside `0x40000000..
//! 0x80000000` instead (`find_start_end`, without randomization), a hint
//! being used only when it fits there. In the legacy layout
//! ([`Config::legacy_layout`](crate::Config::legacy_layout)) every
//! placement is searched bottom-up from `mmap_legacy_base`.
//!
//! Transparent huge pages (`__get_unmapped_area`, `thp_get_unmapped_area`,
//! Linux 6.18) add one rule: some mappings are placed so that their pages
//! can be backed by 2 MiB pages:
//! - a private anonymous mapping without a hint whose length is a multiple
//!   of 2 MiB (the length condition since Linux 6.12's "limit THP
//!   alignment of anonymous mappings to PMD-aligned sizes"; 6.7 to 6.11
//!   aligned every anonymous mapping of 2 MiB or more);
//! - a mapping of a file whose file system places mappings with
//!   `thp_get_unmapped_area` ([`OpenFile::thp_aligned`]), when the mapped
//!   range of the file covers an aligned 2 MiB block;
//! - shared anonymous memory goes through `shmem_get_unmapped_area`, which
//!   aligns only when shmem huge pages are enabled: the model assumes the
//!   default, `shmem_enabled=never`, and does not align it.
//!
//! Such a placement searches for `len + 2 MiB` bytes; the mapping starts at
//! the first address of that range that is congruent to the file offset
//! modulo 2 MiB, or, when the range itself starts so (top-down layout),
//! 2 MiB higher (`__thp_get_unmapped_area`; that top-down case since Linux
//! 6.9's "thp_get_unmapped_area must honour topdown preference"). A hint the padded search
//! takes as is stays as is; when the padded search fails, the plain one
//! runs. `MAP_STACK` does not change the placement (it only sets
//! `VM_NOHUGEPAGE`).

use crate::config::{offset_in_page, PAGE_SHIFT, PAGE_SIZE, PMD_SIZE};
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::space::Inner;
use crate::vma::OpenFile;

/// The file offset (in bytes) a non-fixed placement must be congruent to
/// modulo 2 MiB, when the kernel would align it (see the module docs):
/// `file` the mapping's file, `shared` whether the mapping is shared,
/// `hint` the address hint, `pgoff` the file offset in pages.
pub(crate) fn thp_offset(
    file: Option<OpenFile>,
    shared: bool,
    hint: u64,
    len: u64,
    pgoff: u64,
) -> Option<u64> {
    match file {
        Some(f) => f.thp_aligned.then_some(pgoff << PAGE_SHIFT),
        None => (!shared && hint == 0 && len % PMD_SIZE == 0).then_some(0),
    }
}

/// Where a placement may go.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// Anywhere in the task: top-down below `mmap_base`, then bottom-up.
    Whole,
    /// `MAP_32BIT`: bottom-up inside [`LOW32`].
    Low32,
}

/// `MAP_32BIT`'s window on x86-64 (`find_start_end`): from 1 GiB (not
/// randomized, as under `setarch -R`) to 2 GiB.
const LOW32: (u64, u64) = (0x4000_0000, 0x8000_0000);

impl Inner {
    /// `get_unmapped_area` for `len` bytes (already page aligned): `addr`
    /// itself when `fixed`, else a placement (with `addr` as hint).
    ///
    /// Rules: `len > TASK_SIZE` → `ENOMEM`; the result must end inside the
    /// task (`ENOMEM`), be page aligned (`EINVAL`) and not lie below
    /// `mmap_min_addr` (`EPERM`, `cap_mmap_addr`).
    pub(crate) fn get_unmapped_area(&self, addr: u64, len: u64, fixed: bool) -> Result<u64, Errno> {
        self.get_unmapped_area_thp(addr, len, fixed, None)
    }

    /// [`get_unmapped_area`](Self::get_unmapped_area) with the huge-page
    /// alignment to the file offset `thp_off` (bytes; from [`thp_offset`])
    /// for a non-fixed placement.
    pub(crate) fn get_unmapped_area_thp(
        &self,
        addr: u64,
        len: u64,
        fixed: bool,
        thp_off: Option<u64>,
    ) -> Result<u64, Errno> {
        self.get_unmapped_area_in(addr, len, fixed, thp_off, Window::Whole)
    }

    /// [`get_unmapped_area_thp`](Self::get_unmapped_area_thp) searching
    /// `window` (`MAP_32BIT`'s, for `mmap`).
    pub(crate) fn get_unmapped_area_in(
        &self,
        addr: u64,
        len: u64,
        fixed: bool,
        thp_off: Option<u64>,
        window: Window,
    ) -> Result<u64, Errno> {
        let cfg = &self.cfg;
        if len > cfg.task_size {
            return Err(Errno::ENOMEM);
        }
        let addr = if fixed {
            addr
        } else {
            match thp_off.and_then(|off| self.thp_search(addr, len, off, window)) {
                Some(a) => a,
                None => self.search(addr, len, window)?,
            }
        };
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

    /// `__thp_get_unmapped_area`: `None` when the mapped part of the file
    /// (`off .. off + len`) covers no aligned 2 MiB block or the padded
    /// search fails; the caller then places without alignment.
    fn thp_search(&self, hint: u64, len: u64, off: u64, window: Window) -> Option<u64> {
        let off_end = off.checked_add(len)?;
        let off_align = off.checked_next_multiple_of(PMD_SIZE)?;
        if off_end <= off_align || off_end - off_align < PMD_SIZE {
            return None;
        }
        let len_pad = len.checked_add(PMD_SIZE)?;
        off.checked_add(len_pad)?;
        let found = self.search(hint, len_pad, window).ok()?;
        if found == hint {
            return Some(hint);
        }
        // Top-down (MMF_TOPDOWN, which the address space keeps even when
        // this search was `MAP_32BIT`'s bottom-up one): a range that already
        // starts aligned moves up by a whole block.
        let off_sub = off.wrapping_sub(found) & (PMD_SIZE - 1);
        if off_sub == 0 && !self.cfg.legacy_layout {
            Some(found + PMD_SIZE)
        } else {
            Some(found + off_sub)
        }
    }

    /// `arch_get_unmapped_area_topdown` (arch/x86/kernel/sys_x86_64.c).
    fn search(&self, hint: u64, len: u64, window: Window) -> Result<u64, Errno> {
        if len > self.cfg.task_size {
            return Err(Errno::ENOMEM);
        }
        if window == Window::Low32 {
            let (begin, end) = LOW32;
            return self.search_bottom_up(hint, len, begin, end);
        }
        if self.cfg.legacy_layout {
            let (begin, end) = (self.cfg.mmap_legacy_base, self.cfg.task_size);
            return self.search_bottom_up(hint, len, begin, end);
        }
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

    /// `arch_get_unmapped_area`, the bottom-up search of the legacy layout
    /// and of `MAP_32BIT` (where the top-down search sends it) inside
    /// `begin..end`: the hint if the range fits below `end` and below the
    /// next VMA's guard gap, else the lowest free range in the window.
    fn search_bottom_up(&self, hint: u64, len: u64, begin: u64, end: u64) -> Result<u64, Errno> {
        if len > end {
            return Err(Errno::ENOMEM);
        }
        let h = hint & !(PAGE_SIZE - 1);
        if h != 0 && end - len >= h {
            // `find_vma`: the first VMA ending above the hint, which may
            // hold it.
            let next_ok = match self.vmas.range(h..).next() {
                Some((_, v)) => h + len <= v.start_gap(self.cfg.stack_guard_gap),
                None => true,
            };
            if next_ok {
                return Ok(h);
            }
        }
        self.unmapped_area(len, begin, end).ok_or(Errno::ENOMEM)
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
