//! The commit charge of the kernel's heuristic overcommit
//! (`vm.overcommit_memory = 0`, `__vm_enough_memory`).
//!
//! Memory a process may write without a file behind it is charged when it
//! is mapped: private writable mappings (`VM_ACCOUNT`), shared anonymous
//! memory, heap growth. In the heuristic mode the kernel refuses one charge
//! of more pages than the machine has RAM and swap, and nothing else: the
//! charges are counted but not summed against a limit. So a 1 TiB private
//! writable `mmap` fails on a 24 GiB machine while any number of 8 GiB ones
//! succeed. [`Config::commit_limit`](crate::Config::commit_limit) is that
//! RAM plus swap; without it every charge succeeds, as under
//! `vm.overcommit_memory = 1`.

use crate::config::PAGE_SHIFT;
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::space::Inner;

impl Inner {
    /// `security_vm_enough_memory_mm` for a charge of `bytes` (whole pages):
    /// `ENOMEM` when it is more pages than the commit limit.
    pub(crate) fn vm_enough_memory(&self, bytes: u64) -> Result<(), Errno> {
        match self.cfg.commit_limit {
            Some(limit) if bytes >> PAGE_SHIFT > limit >> PAGE_SHIFT => Err(Errno::ENOMEM),
            _ => Ok(()),
        }
    }

    /// [`vm_enough_memory`](Self::vm_enough_memory) for a new charged
    /// mapping of `start..end`, less what the charged VMAs (`VM_ACCOUNT`)
    /// it replaces held (`nr_accounted` in `mmap_region`). Without a limit
    /// the VMAs are not even looked at.
    pub(crate) fn vm_enough_memory_replacing(&self, start: u64, end: u64) -> Result<(), Errno> {
        if self.cfg.commit_limit.is_none() {
            return Ok(());
        }
        let held = self.bytes_flagged(start, end, VmFlags::ACCOUNT);
        self.vm_enough_memory(end - start - held)
    }
}
