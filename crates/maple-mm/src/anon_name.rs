//! `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name)`: names for
//! anonymous VMAs (Linux 5.17+, `CONFIG_ANON_VMA_NAME`), which
//! `/proc/PID/maps` prints as `[anon:NAME]`.

use crate::error::Errno;
use crate::memory::Phys;
use crate::range::{page_range, AtHole};
use crate::space::{AddressSpace, Inner};
use crate::vma::{AnonName, Backing, Vma};
use std::sync::Arc;

/// `ANON_VMA_NAME_MAX_LEN`: the longest name, in bytes, counting the
/// terminating NUL the C caller passes (so at most 79 bytes of text).
pub const ANON_VMA_NAME_MAX_LEN: usize = 80;

/// Whether the kernel accepts `b` in a VMA name (`is_valid_name_char` in
/// kernel/sys.c): printable (the kernel's Latin-1 `isprint`: `0x20..=0x7e`
/// and `0xa0..=0xff`) and none of `[`, `]`, `\`, `$`, `` ` ``, which would
/// make `/proc/PID/maps` ambiguous or unsafe to paste into a shell.
fn valid_name_byte(b: u8) -> bool {
    let printable = matches!(b, 0x20..=0x7e | 0xa0..=0xff);
    printable && !matches!(b, b'[' | b']' | b'\\' | b'$' | b'`')
}

impl AddressSpace {
    /// `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, name)`: names
    /// the anonymous VMAs of `addr..addr+len` (`None` clears the name).
    ///
    /// Linux rules (`prctl_set_vma` in kernel/sys.c, then
    /// `madvise_set_anon_name` and `madvise_vma_anon_name` in
    /// mm/madvise.c, 6.18):
    /// - a kernel without `CONFIG_ANON_VMA_NAME`
    ///   ([`Config::anon_vma_name`](crate::Config::anon_vma_name) `false`,
    ///   the default) → `EINVAL`, nothing changes;
    /// - the name is checked first: longer than
    ///   [`ANON_VMA_NAME_MAX_LEN`] bytes with its NUL, or holding a byte that
    ///   is not printable or is one of `[`, `]`, `\`, `$`, `` ` `` →
    ///   `EINVAL`;
    /// - `addr` not page aligned → `EINVAL`; `len` rounded up to pages, a
    ///   range that wraps → `EINVAL`; an empty range → success;
    /// - the VMAs of the range are named one by one: a VMA with a file
    ///   behind it (other than shared anonymous memory, which is named
    ///   `[anon_shmem:NAME]`) ends the call with `EBADF`; a hole does not
    ///   stop the walk: the mapped parts are named, then the call fails
    ///   with `ENOMEM` (as `madvise`);
    /// - VMAs are split at the range's ends (each split needs
    ///   `map_count < max_map_count`, `ENOMEM`) and merged with neighbours
    ///   of the same name (`vma_modify_name`); a VMA that already has the
    ///   name is left alone. Names take part in every merge
    ///   (`is_mergeable_vma`): two VMAs with different names never merge,
    ///   so a new `mmap` beside a named VMA stays apart. The name is kept by
    ///   splits, moved by `mremap` and inherited at fork.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Config, Errno, MapFlags, Prot};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// // This kernel has no CONFIG_ANON_VMA_NAME:
    /// assert_eq!(mm.set_anon_name(a, 4096, Some("heap")), Err(Errno::EINVAL));
    /// let mut mm = AddressSpace::with_config(Config { anon_vma_name: true, ..Config::default() });
    /// let a = mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.set_anon_name(a + 4096, 4096, Some("arena")).unwrap(); // split in three
    /// assert_eq!(mm.vma_at(a + 4096).unwrap().anon_name(), Some("arena"));
    /// assert!(mm.vma_at(a + 4096).unwrap().to_string().ends_with("[anon:arena]"));
    /// assert_eq!(mm.map_count(), 3);
    /// mm.set_anon_name(a + 4096, 4096, None).unwrap();          // merged back
    /// assert_eq!(mm.map_count(), 1);
    /// assert_eq!(mm.set_anon_name(a, 4096, Some("a$b")), Err(Errno::EINVAL));
    /// ```
    pub fn set_anon_name(&mut self, addr: u64, len: u64, name: Option<&str>) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.set_anon_name(&mut phys, addr, len, name)
    }
}

impl Inner {
    pub(crate) fn set_anon_name(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        len: u64,
        name: Option<&str>,
    ) -> Result<(), Errno> {
        if !self.cfg.anon_vma_name {
            return Err(Errno::EINVAL);
        }
        if let Some(n) = name {
            if n.len() + 1 > ANON_VMA_NAME_MAX_LEN || !n.bytes().all(valid_name_byte) {
                return Err(Errno::EINVAL);
            }
        }
        let Some((start, end)) = page_range(addr, len, Errno::EINVAL)? else {
            return Ok(());
        };
        let name: Option<AnonName> = name.map(|n| Arc::new(n.to_owned()));
        self.walk_range(phys, start, end, AtHole::Skip, &mut |mm, phys, v, s, e| {
            mm.name_vma(phys, v, s, e, &name)
        })
    }

    /// `madvise_vma_anon_name` on the part `start..end` of `vma`.
    fn name_vma(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
        name: &Option<AnonName>,
    ) -> Result<(), Errno> {
        // vma->vm_file && !vma_is_anon_shmem(vma): files and System V
        // segments (whose vm_file is the attachment's) cannot be named.
        let named_kind = match vma.backing {
            Backing::Anon | Backing::Special(_) => true,
            Backing::Shm(id) => id.sysv().is_none(),
            Backing::File(_) => false,
        };
        if !named_kind {
            return Err(Errno::EBADF);
        }
        if vma.anon_name == *name {
            return Ok(());
        }
        self.modify_part(phys, start, end, &mut |v: &Vma| Vma {
            anon_name: name.clone(),
            ..v.clone()
        })
    }
}
