//! `madvise`: the fork advice (`DONTFORK`/`DOFORK`, `WIPEONFORK`/
//! `KEEPONFORK`), `DONTNEED`, and the read-ahead hints that are VMA flags.

use crate::config::{offset_in_page, page_align};
use crate::error::Errno;
use crate::flags::{Advice, VmFlags};
use crate::memory::Phys;
use crate::space::{AddressSpace, Inner};
use crate::vma::{Backing, Vma};

impl AddressSpace {
    /// `madvise(addr, len, advice)`.
    ///
    /// Linux rules (`do_madvise`, `madvise_vma_behavior`):
    /// - `addr` not page aligned → `EINVAL`; `len` rounded up to pages, a
    ///   length that rounds to zero or a range that wraps → `EINVAL`; an
    ///   empty range → success;
    /// - a hole in the range → `ENOMEM`;
    /// - `DONTFORK` / `DOFORK` set / clear `VM_DONTCOPY`; `WIPEONFORK` /
    ///   `KEEPONFORK` set / clear `VM_WIPEONFORK`, which only private
    ///   anonymous VMAs may have (`EINVAL`); `RANDOM` / `SEQUENTIAL` /
    ///   `NORMAL` set the read-ahead flags. VMAs are split at the range's
    ///   ends (`ENOMEM` at `max_map_count`) and merged like `mprotect`'s;
    /// - `DONTNEED` drops every page of the range (`zap_page_range_single`),
    ///   not on `VM_LOCKED` VMAs (`EINVAL`); private anonymous memory then
    ///   reads as zeros, file memory as the file, shared memory unchanged;
    /// - `WILLNEED` does nothing in the model.
    ///
    /// Deviation: Linux applies the advice to the mapped parts of a range
    /// with holes and then returns `ENOMEM`; the model changes nothing.
    pub fn madvise(&mut self, addr: u64, len: u64, advice: Advice) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.madvise(&mut phys, addr, len, advice)
    }
}

impl Inner {
    pub(crate) fn madvise(
        &mut self,
        phys: &mut Phys,
        start: u64,
        len_in: u64,
        advice: Advice,
    ) -> Result<(), Errno> {
        if offset_in_page(start) != 0 {
            return Err(Errno::EINVAL);
        }
        let len = page_align(len_in).unwrap_or(0);
        if len_in != 0 && len == 0 {
            return Err(Errno::EINVAL);
        }
        let end = start.checked_add(len).ok_or(Errno::EINVAL)?;
        if end == start {
            return Ok(());
        }
        if !self.covered(start, end) {
            return Err(Errno::ENOMEM);
        }
        let set = |flags: VmFlags| -> VmFlags {
            match advice {
                Advice::DontFork => flags | VmFlags::DONTCOPY,
                Advice::DoFork => flags.without(VmFlags::DONTCOPY),
                Advice::WipeOnFork => flags | VmFlags::WIPEONFORK,
                Advice::KeepOnFork => flags.without(VmFlags::WIPEONFORK),
                Advice::Normal => flags.without(VmFlags::SEQ_READ | VmFlags::RAND_READ),
                Advice::Random => flags.without(VmFlags::SEQ_READ) | VmFlags::RAND_READ,
                Advice::Sequential => flags.without(VmFlags::RAND_READ) | VmFlags::SEQ_READ,
                Advice::WillNeed | Advice::DontNeed => flags,
            }
        };
        match advice {
            Advice::WillNeed => Ok(()),
            Advice::DontNeed => {
                if self
                    .vmas
                    .range(start..end)
                    .any(|(_, v)| v.flags.contains(VmFlags::LOCKED))
                {
                    return Err(Errno::EINVAL);
                }
                self.pt.zap(phys, start, end);
                Ok(())
            }
            _ => {
                let plan = self.plan(
                    start,
                    end,
                    &mut |v: &Vma| {
                        if advice == Advice::WipeOnFork
                            && (v.backing != Backing::Anon || v.is_shared())
                        {
                            return Err(Errno::EINVAL);
                        }
                        Ok(Some(Vma {
                            flags: set(v.flags),
                            ..v.clone()
                        }))
                    },
                    None,
                )?;
                if plan.cuts > 0 && self.vmas.len() + plan.cuts > self.cfg.max_map_count {
                    return Err(Errno::ENOMEM);
                }
                self.commit(phys, plan);
                Ok(())
            }
        }
    }
}
