//! Memory protection keys (x86 `PKU`): `pkey_alloc`, `pkey_free`,
//! `pkey_mprotect`, the execute-only key, and the `PKRU` register that
//! decides what a key lets the program access.
//!
//! A key is four bits of a VMA's flags ([`VmFlags::PKEY_MASK`]), so VMAs
//! with different keys never merge. The allocation map and the
//! execute-only key belong to the address space (`mm->context`) and are
//! copied at fork; `PKRU` belongs to a thread, which the model has one of
//! per space: [`AddressSpace::pkru`].

use crate::error::Errno;
use crate::flags::{Prot, VmFlags};
use crate::space::{AddressSpace, Inner};
use crate::vma::Vma;

/// `PKEY_DISABLE_ACCESS`: no data access through pages of the key.
pub const PKEY_DISABLE_ACCESS: u32 = 0x1;
/// `PKEY_DISABLE_WRITE`: no writes through pages of the key.
pub const PKEY_DISABLE_WRITE: u32 = 0x2;

/// `init_pkru_value`: every key but 0 access-disabled, what a new program
/// starts with.
pub(crate) const INIT_PKRU: u32 = 0x5555_5554;

/// The protection-key state of an address space (`mm->context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pkeys {
    /// `pkey_allocation_map`: bit k set when key k is allocated (key 0 from
    /// the start, with protection keys).
    pub(crate) allocated: u16,
    /// `execute_only_pkey`, once one was needed.
    pub(crate) exec_only: Option<u32>,
    /// The `PKRU` register of the space's thread: two bits per key,
    /// `PKEY_DISABLE_ACCESS` and `PKEY_DISABLE_WRITE`.
    pub(crate) pkru: u32,
}

impl Pkeys {
    /// The state of a new space (x86 `init_new_context`): without
    /// protection keys (`enabled` false) the allocation map is left empty.
    pub(crate) fn new(enabled: bool) -> Pkeys {
        Pkeys {
            allocated: u16::from(enabled),
            exec_only: None,
            pkru: INIT_PKRU,
        }
    }
}

impl Inner {
    /// `arch_max_pkey`: 16 with protection keys, else only key 0.
    fn max_pkey(&self) -> u32 {
        if self.cfg.pkeys {
            16
        } else {
            1
        }
    }

    /// `mm_pkey_is_allocated`. Without protection keys no key is: key 0,
    /// the only one below `arch_max_pkey`, is then also the execute-only
    /// key (`mm->context.execute_only_pkey` is left 0, not set to -1), which
    /// no call may name.
    pub(crate) fn pkey_is_allocated(&self, key: i32) -> bool {
        if !self.cfg.pkeys || key < 0 || key as u32 >= self.max_pkey() {
            return false;
        }
        let key = key as u32;
        self.pkeys.exec_only == Some(key) || self.pkeys.allocated & (1 << key) != 0
    }

    /// `mm_pkey_alloc`: the lowest free key.
    fn pkey_alloc_slot(&mut self) -> Option<u32> {
        let all = ((1u32 << self.max_pkey()) - 1) as u16;
        if self.pkeys.allocated == all {
            return None;
        }
        let key = (!self.pkeys.allocated).trailing_zeros();
        self.pkeys.allocated |= 1 << key;
        Some(key)
    }

    /// `arch_set_user_pkey_access` for the space's thread.
    fn set_pkey_access(&mut self, key: u32, rights: u32) {
        let shift = 2 * key;
        self.pkeys.pkru = (self.pkeys.pkru & !(0b11 << shift)) | ((rights & 0b11) << shift);
    }

    /// `execute_only_pkey`: the key of `PROT_EXEC`-only memory, allocated
    /// on first use and made access-disabled in `PKRU` (so the program can
    /// run the code but not read it). `None` without protection keys or
    /// when every key is taken: such memory keeps key 0.
    pub(crate) fn exec_only_pkey(&mut self) -> Option<u32> {
        if !self.cfg.pkeys {
            return None;
        }
        let key = match self.pkeys.exec_only {
            Some(k) => k,
            None => {
                let k = self.pkey_alloc_slot()?;
                self.pkeys.exec_only = Some(k);
                k
            }
        };
        self.set_pkey_access(key, PKEY_DISABLE_ACCESS);
        Some(key)
    }

    /// The key a VMA gets from `mprotect(prot)` with `pkey` (-1: plain
    /// `mprotect`), `arch_override_mprotect_pkey`: an explicit key wins;
    /// `PROT_EXEC` alone takes the execute-only key; a VMA leaving
    /// execute-only goes back to key 0; otherwise the VMA keeps its key.
    pub(crate) fn mprotect_pkey_of(&mut self, vma: &Vma, prot: Prot, pkey: i32) -> u32 {
        if pkey != -1 {
            return pkey as u32;
        }
        if prot == Prot::EXEC {
            if let Some(k) = self.exec_only_pkey().filter(|&k| k > 0) {
                return k;
            }
        } else if vma.flags & VmFlags::ACCESS == VmFlags::EXEC
            && self.pkeys.exec_only.is_some_and(|k| k == vma.flags.pkey())
        {
            return 0;
        }
        vma.flags.pkey()
    }

    /// Whether `PKRU` lets the program read (or write) memory of `vma`
    /// (`arch_vma_access_permitted` for a data access of its own).
    pub(crate) fn pkey_allows(&self, vma: &Vma, write: bool) -> bool {
        if !self.cfg.pkeys {
            return true;
        }
        let bits = self.pkeys.pkru >> (2 * vma.flags.pkey());
        bits & PKEY_DISABLE_ACCESS == 0 && !(write && bits & PKEY_DISABLE_WRITE != 0)
    }
}

impl AddressSpace {
    /// `pkey_alloc(flags, access_rights)`: allocates the lowest free
    /// protection key and sets the thread's `PKRU` rights for it.
    ///
    /// Linux rules (`SYSCALL_DEFINE2(pkey_alloc)`, x86, 6.18): `flags` other
    /// than 0 or rights other than [`PKEY_DISABLE_ACCESS`] |
    /// [`PKEY_DISABLE_WRITE`] → `EINVAL`; every key taken (16 with
    /// protection keys, counting key 0 and the execute-only key) → `ENOSPC`.
    /// Without protection keys ([`Config::pkeys`](crate::Config::pkeys))
    /// only key 0 exists, not allocated: the first call takes it, fails to
    /// set `PKRU` (`EINVAL`) and cannot give it back (`mm_pkey_free` finds
    /// it not allocated), so every later call finds it taken (`ENOSPC`), in
    /// a child of `fork` too (the map is copied with the `mm`).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno};
    /// let mut mm = AddressSpace::new();
    /// assert_eq!(mm.pkey_alloc(0, 0), Ok(1));
    /// assert_eq!(mm.pkey_alloc(0, 4), Err(Errno::EINVAL));
    /// for k in 2..16 {
    ///     assert_eq!(mm.pkey_alloc(0, 0), Ok(k));
    /// }
    /// assert_eq!(mm.pkey_alloc(0, 0), Err(Errno::ENOSPC));
    /// ```
    pub fn pkey_alloc(&mut self, flags: u32, access_rights: u32) -> Result<u32, Errno> {
        let inner = &mut self.inner;
        if flags != 0 || access_rights & !(PKEY_DISABLE_ACCESS | PKEY_DISABLE_WRITE) != 0 {
            return Err(Errno::EINVAL);
        }
        let key = inner.pkey_alloc_slot().ok_or(Errno::ENOSPC)?;
        if !inner.cfg.pkeys {
            // arch_set_user_pkey_access fails; the key stays in the map.
            return Err(Errno::EINVAL);
        }
        inner.set_pkey_access(key, access_rights);
        Ok(key)
    }

    /// `pkey_free(pkey)`: `EINVAL` unless the key is allocated (key 0 is,
    /// from the start with protection keys, and may be freed). VMAs keep the
    /// key they have.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno};
    /// let mut mm = AddressSpace::new();
    /// assert_eq!(mm.pkey_free(5), Err(Errno::EINVAL));
    /// let k = mm.pkey_alloc(0, 0).unwrap();
    /// assert_eq!(mm.pkey_free(k as i32), Ok(()));
    /// assert_eq!(mm.pkey_free(k as i32), Err(Errno::EINVAL));
    /// ```
    pub fn pkey_free(&mut self, pkey: i32) -> Result<(), Errno> {
        let inner = &mut self.inner;
        if !inner.pkey_is_allocated(pkey) {
            return Err(Errno::EINVAL);
        }
        inner.pkeys.allocated &= !(1 << pkey);
        Ok(())
    }

    /// `pkey_mprotect(addr, len, prot, pkey)`: [`mprotect`](Self::mprotect)
    /// that also gives every VMA of the range protection key `pkey` (-1:
    /// what `mprotect` does). After the checks of a zero length, a wrapping
    /// range and the protection bits, a key that is not allocated (or
    /// below -1) → `EINVAL`.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// assert_eq!(mm.pkey_mprotect(a, 4096, Prot::RW, 3), Err(Errno::EINVAL));
    /// let k = mm.pkey_alloc(0, 0).unwrap();
    /// mm.pkey_mprotect(a + 4096, 4096, Prot::RW, k as i32).unwrap();
    /// assert_eq!(mm.map_count(), 3);                 // a key of its own: no merge
    /// assert_eq!(mm.vma_at(a + 4096).unwrap().flags().pkey(), k);
    /// ```
    pub fn pkey_mprotect(
        &mut self,
        addr: u64,
        len: u64,
        prot: Prot,
        pkey: i32,
    ) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.mprotect_pkey(&mut phys, addr, len, prot, pkey)
    }

    /// The `PKRU` register of the space's thread: for key k, bit 2k is
    /// `PKEY_DISABLE_ACCESS` and bit 2k+1 `PKEY_DISABLE_WRITE`. The model's
    /// [`read`](Self::read) and [`write`](Self::write) fault
    /// ([`FaultKind::ProtectionKey`](crate::FaultKind::ProtectionKey)) on a
    /// page whose key it denies. A new space starts with every key but 0
    /// access-disabled; `pkey_alloc` sets the rights of the key it returns;
    /// a fork's child inherits the register.
    pub fn pkru(&self) -> u32 {
        self.inner.pkeys.pkru
    }

    /// Whether protection key `pkey` is allocated (`mm_pkey_is_allocated`).
    pub fn pkey_allocated(&self, pkey: i32) -> bool {
        self.inner.pkey_is_allocated(pkey)
    }

    /// `WRPKRU`: sets the thread's `PKRU` register.
    pub fn set_pkru(&mut self, pkru: u32) {
        self.inner.pkeys.pkru = pkru;
    }
}
