//! The special mappings the kernel gives every process at `execve`
//! (`[vvar]`, `[vvar_vclock]`, `[vdso]`: `_install_special_mapping`) and
//! the `[vsyscall]` gate page (`get_gate_vma`), so that a model of a real
//! process (seeded from its `/proc/PID/maps`) holds them as Linux does.

use crate::config::{offset_in_page, PAGE_SHIFT, PAGE_SIZE};
use crate::error::Errno;
use crate::space::AddressSpace;
use crate::vma::{Backing, Special, Vma, VSYSCALL_ADDR};

impl AddressSpace {
    /// Installs the special mapping `kind` at `addr..addr + len`
    /// (`_install_special_mapping`) with the kernel's flags
    /// ([`Special::flags`]); for [`Special::Vsyscall`] the range must be
    /// the gate page (`VSYSCALL_ADDR`, one page) and it turns
    /// [`gate_vma`](Self::gate_vma) on.
    ///
    /// Errors: `addr` or `len` not page aligned, `len == 0`, or the range
    /// outside the task → `EINVAL`; anything mapped in the range or
    /// `map_count` at `max_map_count` → `ENOMEM` (`insert_vm_struct`).
    ///
    /// Special mappings never merge (`VM_SPECIAL`), cannot grow with
    /// `mremap` (`VM_DONTEXPAND`: `EFAULT`), and `[vvar]` refuses
    /// `MADV_DODUMP`, `MADV_DOFORK` (`VM_IO`) and page advice on `VM_PFNMAP`.
    /// Their pages read as zeros in the model (one object per kind, shared
    /// by the spaces of a [`Memory`](crate::Memory)).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Special};
    /// let mut mm = AddressSpace::new();
    /// mm.map_special(Special::Vvar, 0x7ffff7fc2000, 4 << 12).unwrap();
    /// mm.map_special(Special::Vdso, 0x7ffff7fc8000, 2 << 12).unwrap();
    /// mm.map_special(Special::Vsyscall, 0xffffffffff600000, 4096).unwrap();
    /// assert!(mm.maps().ends_with("[vsyscall]\n"));
    /// assert_eq!(mm.vma_at(0x7ffff7fc8000).unwrap().flags().smaps(), "rd ex mr mw me de");
    /// ```
    pub fn map_special(&mut self, kind: Special, addr: u64, len: u64) -> Result<(), Errno> {
        if kind == Special::Vsyscall {
            if addr != VSYSCALL_ADDR || len != PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            self.inner.vsyscall = true;
            return Ok(());
        }
        let task = self.inner.cfg.task_size;
        if offset_in_page(addr) != 0
            || offset_in_page(len) != 0
            || len == 0
            || len > task
            || addr > task - len
        {
            return Err(Errno::EINVAL);
        }
        let end = addr + len;
        if self.inner.vmas.range(addr..end).next().is_some()
            || self.inner.vmas.len() >= self.inner.cfg.max_map_count
        {
            return Err(Errno::ENOMEM);
        }
        let vma = Vma {
            start: addr,
            end,
            flags: kind.flags(),
            pgoff: 0,
            backing: Backing::Special(kind),
            vm_file: None,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        };
        self.inner.total_vm += len >> PAGE_SHIFT;
        self.inner.vmas.insert(vma.key(), vma);
        Ok(())
    }

    /// Turns the `[vsyscall]` gate page off (or on again).
    pub fn set_vsyscall(&mut self, on: bool) {
        self.inner.vsyscall = on;
    }

    /// The `[vsyscall]` gate page, if the space has it (`get_gate_vma`): no
    /// VMA of the tree (it lies above `TASK_SIZE` and is not counted in
    /// [`map_count`](Self::map_count)), but printed last by
    /// [`maps`](Self::maps), as by `/proc/PID/maps`.
    pub fn gate_vma(&self) -> Option<Vma> {
        self.inner.vsyscall.then(|| Vma {
            start: VSYSCALL_ADDR,
            end: VSYSCALL_ADDR + PAGE_SIZE,
            flags: Special::Vsyscall.flags(),
            pgoff: 0,
            backing: Backing::Special(Special::Vsyscall),
            vm_file: None,
            anon: None,
            anon_inherited: false,
            anon_name: None,
            policy: None,
        })
    }
}
