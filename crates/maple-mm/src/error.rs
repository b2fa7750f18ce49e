//! Errors: the errno-like [`Errno`] of the system calls and the [`Fault`] of a
//! memory access.

use core::fmt;

/// An errno-like error of a system call of the model.
///
/// The numeric values are Linux's (x86-64), see [`Errno::code`]. A call that
/// returns an error has changed nothing, except `mprotect` and `madvise`,
/// which keep what they did to the VMAs before the failure, as in Linux.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Errno {
    /// Operation not permitted (1): e.g. `MAP_FIXED` below `mmap_min_addr`.
    EPERM,
    /// Bad file descriptor (9): a file mapping without a file.
    EBADF,
    /// Try again (11).
    EAGAIN,
    /// Out of memory (12): no room for the mapping, a hole in the range of
    /// `mprotect` / `madvise`, `max_map_count` reached, or an injected failure.
    ENOMEM,
    /// Permission denied (13): a protection the mapping may not have.
    EACCES,
    /// Bad address (14): `mremap` of an address that is not mapped.
    EFAULT,
    /// File exists (17): `MAP_FIXED_NOREPLACE` over an existing mapping.
    EEXIST,
    /// Invalid argument (22): misaligned address, zero length, bad flags.
    EINVAL,
    /// Value too large (75): a file offset that overflows.
    EOVERFLOW,
    /// No space left on device (28): `pkey_alloc` with every protection key taken.
    ENOSPC,
    /// Operation not supported (95): `MAP_SHARED_VALIDATE` of a file with a
    /// flag the file does not support (`MAP_SYNC`, `MAP_FIXED_NOREPLACE`).
    EOPNOTSUPP,
}

impl Errno {
    /// The Linux (x86-64) errno value.
    pub fn code(self) -> i32 {
        match self {
            Errno::EPERM => 1,
            Errno::EBADF => 9,
            Errno::EAGAIN => 11,
            Errno::ENOMEM => 12,
            Errno::EACCES => 13,
            Errno::EFAULT => 14,
            Errno::EEXIST => 17,
            Errno::EINVAL => 22,
            Errno::ENOSPC => 28,
            Errno::EOVERFLOW => 75,
            Errno::EOPNOTSUPP => 95,
        }
    }

    /// The symbolic name, e.g. `"ENOMEM"`.
    pub fn name(self) -> &'static str {
        match self {
            Errno::EPERM => "EPERM",
            Errno::EBADF => "EBADF",
            Errno::EAGAIN => "EAGAIN",
            Errno::ENOMEM => "ENOMEM",
            Errno::EACCES => "EACCES",
            Errno::EFAULT => "EFAULT",
            Errno::EEXIST => "EEXIST",
            Errno::EINVAL => "EINVAL",
            Errno::ENOSPC => "ENOSPC",
            Errno::EOVERFLOW => "EOVERFLOW",
            Errno::EOPNOTSUPP => "EOPNOTSUPP",
        }
    }

    /// The error of a Linux errno value, if the model knows it.
    pub fn from_code(code: i32) -> Option<Errno> {
        [
            Errno::EPERM,
            Errno::EBADF,
            Errno::EAGAIN,
            Errno::ENOMEM,
            Errno::EACCES,
            Errno::EFAULT,
            Errno::EEXIST,
            Errno::EINVAL,
            Errno::ENOSPC,
            Errno::EOVERFLOW,
            Errno::EOPNOTSUPP,
        ]
        .into_iter()
        .find(|e| e.code() == code)
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

impl std::error::Error for Errno {}

/// Why a memory access faulted (the `si_code` of the SIGSEGV Linux would send).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// No mapping covers the address (`SEGV_MAPERR`); as an errno, `EFAULT`.
    Unmapped,
    /// A mapping covers the address but does not allow the access
    /// (`SEGV_ACCERR`); as an errno, `EACCES`.
    Protection,
    /// The page's protection key denies the access in the thread's `PKRU`
    /// register (`SEGV_PKUERR`); as an errno, `EFAULT`.
    ProtectionKey,
    /// The page is in a guard region (`MADV_GUARD_INSTALL`): the kernel
    /// sends `SIGSEGV` (`VM_FAULT_SIGSEGV`); as an errno, `EFAULT`.
    Guard,
}

/// A memory access ([`AddressSpace::read`](crate::AddressSpace::read) /
/// [`write`](crate::AddressSpace::write)) that the hardware would not complete.
///
/// The whole access is checked before any byte moves, so a faulting access
/// has transferred nothing and populated nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fault {
    /// The first address of the access that faults.
    pub addr: u64,
    /// Unmapped or protection.
    pub kind: FaultKind,
    /// Whether the access was a write.
    pub write: bool,
}

impl Fault {
    /// The errno a system call would return for this access: `EFAULT` for an
    /// unmapped address, `EACCES` for a protection fault.
    pub fn errno(&self) -> Errno {
        match self.kind {
            FaultKind::Unmapped => Errno::EFAULT,
            FaultKind::Protection => Errno::EACCES,
            FaultKind::ProtectionKey | FaultKind::Guard => Errno::EFAULT,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FaultKind::Unmapped => "unmapped address",
            FaultKind::Protection => "protection fault",
            FaultKind::ProtectionKey => "protection-key fault",
            FaultKind::Guard => "guard-region fault",
        };
        let rw = if self.write { "write" } else { "read" };
        write!(f, "{what} on {rw} at {:#x}", self.addr)
    }
}

impl std::error::Error for Fault {}

impl From<Fault> for Errno {
    fn from(f: Fault) -> Errno {
        f.errno()
    }
}
