//! `brk`: the heap.

use crate::config::{page_align, PAGE_SHIFT, PAGE_SIZE};
use crate::edit::Plan;
use crate::flags::VmFlags;
use crate::memory::Phys;
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, Vma};

impl AddressSpace {
    /// `brk(addr)`: moves the program break and returns the new break, or
    /// the old one if the move is refused (Linux's `brk` never returns an
    /// error). `brk(0)` asks for the current break.
    ///
    /// Linux rules (`SYSCALL_DEFINE1(brk)`, `do_brk_flags`):
    /// - below `start_brk` → refused;
    /// - same page → only the recorded break moves;
    /// - shrinking unmaps the freed pages, refused if no VMA is there or
    ///   one of them is sealed ([`mseal`](Self::mseal));
    /// - growing is refused if the new end plus one page reaches into the
    ///   next VMA's start (minus its guard gap if it grows down), or at
    ///   `map_count > max_map_count`; the heap VMA
    ///   (`VM_READ | VM_WRITE | VM_MAY* | VM_ACCOUNT`, anonymous private,
    ///   offset `addr >> PAGE_SHIFT`) is extended when it ends at the old
    ///   break and is compatible, else a new VMA is made (never merged with
    ///   a VMA below `start_brk`); after `mlockall(MCL_FUTURE)` the growth
    ///   is locked (`mm->def_flags`) and populated, and refused beyond
    ///   `RLIMIT_MEMLOCK` (`mlock_future_ok`); the growth is charged, and
    ///   refused above the commit limit (see
    ///   [`Config::commit_limit`](crate::Config::commit_limit)).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let start = mm.brk(0); // the current break
    /// assert_eq!(start, mm.config().start_brk);
    /// let end = mm.brk(start + 3 * PAGE_SIZE); // grows the heap
    /// assert_eq!(end, start + 3 * PAGE_SIZE);
    /// mm.write(start, b"heap").unwrap();
    /// assert_eq!(mm.brk(start - PAGE_SIZE), end); // below start_brk: refused
    /// assert_eq!(mm.brk(start), start); // shrinking unmaps the pages
    /// assert!(mm.vma_at(start).is_none());
    /// ```
    pub fn brk(&mut self, addr: u64) -> u64 {
        let mut phys = self.mem.lock();
        self.inner.brk(&mut phys, addr)
    }
}

impl Inner {
    pub(crate) fn brk(&mut self, phys: &mut Phys, brk: u64) -> u64 {
        let orig = self.brk;
        if brk < self.start_brk {
            return orig;
        }
        let (Some(newbrk), Some(oldbrk)) = (page_align(brk), page_align(self.brk)) else {
            return orig;
        };
        if newbrk > self.cfg.task_size {
            return orig;
        }
        if oldbrk == newbrk {
            self.brk = brk;
            return brk;
        }
        if brk <= self.brk {
            match self.vmas.range(newbrk..oldbrk).next() {
                Some((_, v)) if v.start < oldbrk => {}
                _ => return orig,
            }
            if self.unmap_range(phys, newbrk, oldbrk).is_err() {
                return orig;
            }
            self.brk = brk;
            return brk;
        }
        let guard = self.cfg.stack_guard_gap;
        let limit = newbrk.saturating_add(PAGE_SIZE).saturating_add(guard);
        if let Some((_, next)) = self.vmas.range(oldbrk..limit).next() {
            if newbrk + PAGE_SIZE > next.start_gap(guard) {
                return orig;
            }
        }
        if self.vmas.len() > self.cfg.max_map_count {
            return orig;
        }
        // mlock_future_ok: growth locked by mlockall(MCL_FUTURE) must fit
        // RLIMIT_MEMLOCK.
        if !self.mlock_future_ok(self.def_flags, newbrk - oldbrk) {
            return orig;
        }
        // do_brk_flags: the growth is charged.
        if self.vm_enough_memory(newbrk - oldbrk).is_err() {
            return orig;
        }
        // do_brk_flags: VM_DATA_DEFAULT_FLAGS | VM_ACCOUNT | mm->def_flags.
        let flags =
            VmFlags::READ | VmFlags::WRITE | VmFlags::MAY_RWX | VmFlags::ACCOUNT | self.def_flags;
        let new = Vma {
            start: oldbrk,
            end: newbrk,
            flags,
            pgoff: oldbrk >> PAGE_SHIFT,
            backing: Backing::Anon,
            vm_file: None,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        let prev = if oldbrk > self.start_brk {
            self.vmas
                .get(oldbrk - 1)
                .filter(|p| p.end == oldbrk)
                .cloned()
        } else {
            None
        };
        let plan = match prev {
            Some(p) if p.can_merge(&new) => {
                let m = p.merged(&new);
                Plan {
                    remove: vec![p],
                    add: vec![m],
                    cuts: 0,
                    punch: false,
                }
            }
            _ => Plan::add(new),
        };
        self.commit(phys, plan);
        self.brk = brk;
        // sys_brk: growth under mlockall(MCL_FUTURE) is populated.
        if self.def_flags.contains(VmFlags::LOCKED) {
            self.mm_populate(phys, oldbrk, newbrk);
        }
        brk
    }
}
