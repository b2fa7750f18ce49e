//! The flag vocabulary of the system calls (`PROT_*`, `MAP_*`, `MREMAP_*`,
//! `MADV_*`) and of the VMAs (`VM_*`), with Linux's (x86-64) numeric values so
//! that raw values from an `strace` log can be passed straight through.

use core::fmt;
use core::ops::{BitAnd, BitOr, BitOrAssign, Not};

macro_rules! flag_type {
    (
        $(#[$meta:meta])*
        $name:ident : $repr:ty {
            $( $(#[$fmeta:meta])* $flag:ident = $value:expr ; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub struct $name($repr);

        impl $name {
            $( $(#[$fmeta])* pub const $flag: $name = $name($value); )*
            /// No flag set.
            pub const EMPTY: $name = $name(0);

            /// The raw value.
            pub const fn bits(self) -> $repr {
                self.0
            }
            /// Wraps a raw value as is (unknown bits are kept).
            pub const fn from_bits_retain(bits: $repr) -> $name {
                $name(bits)
            }
            /// Whether every flag of `other` is set.
            pub const fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            /// Whether any flag of `other` is set.
            pub const fn intersects(self, other: $name) -> bool {
                self.0 & other.0 != 0
            }
            /// Whether no flag is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }
            /// `self` with the flags of `other` added.
            pub const fn with(self, other: $name) -> $name {
                $name(self.0 | other.0)
            }
            /// `self` with the flags of `other` removed.
            pub const fn without(self, other: $name) -> $name {
                $name(self.0 & !other.0)
            }
            /// Sets or clears the flags of `other`.
            pub fn set(&mut self, other: $name, on: bool) {
                if on {
                    self.0 |= other.0
                } else {
                    self.0 &= !other.0
                }
            }
            const NAMES: &'static [(&'static str, $repr)] = &[$((stringify!($flag), $value)),*];
        }

        impl BitOr for $name {
            type Output = $name;
            fn bitor(self, o: $name) -> $name {
                $name(self.0 | o.0)
            }
        }
        impl BitOrAssign for $name {
            fn bitor_assign(&mut self, o: $name) {
                self.0 |= o.0
            }
        }
        impl BitAnd for $name {
            type Output = $name;
            fn bitand(self, o: $name) -> $name {
                $name(self.0 & o.0)
            }
        }
        impl Not for $name {
            type Output = $name;
            fn not(self) -> $name {
                $name(!self.0)
            }
        }
        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut rest = self.0;
                let mut first = true;
                write!(f, "{}(", stringify!($name))?;
                for &(n, v) in Self::NAMES {
                    if v != 0 && v.count_ones() == 1 && rest & v != 0 {
                        if !first {
                            f.write_str(" | ")?;
                        }
                        f.write_str(n)?;
                        rest &= !v;
                        first = false;
                    }
                }
                if rest != 0 {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{:#x}", rest)?;
                    first = false;
                }
                if first {
                    f.write_str("0")?;
                }
                f.write_str(")")
            }
        }
    };
}

flag_type! {
    /// `PROT_*`: the protection of `mmap` and `mprotect`.
    ///
    /// On x86-64 (the model's hardware) every access right implies read: a
    /// `PROT_WRITE` or `PROT_EXEC` page can be read; only `PROT_NONE` cannot.
    Prot: u32 {
        /// `PROT_NONE`: no access.
        NONE = 0;
        /// `PROT_READ`.
        READ = 0x1;
        /// `PROT_WRITE`.
        WRITE = 0x2;
        /// `PROT_EXEC`.
        EXEC = 0x4;
        /// `PROT_SEM`: accepted and ignored, as on x86.
        SEM = 0x8;
        /// `PROT_GROWSDOWN` (mprotect only): extend the change down to the
        /// start of a grows-down mapping.
        GROWSDOWN = 0x0100_0000;
        /// `PROT_GROWSUP`: rejected on x86 (`EINVAL`).
        GROWSUP = 0x0200_0000;
    }
}

impl Prot {
    /// `PROT_READ | PROT_WRITE`.
    pub const RW: Prot = Prot(0x3);
}

flag_type! {
    /// `MAP_*`: the flags of `mmap`.
    MapFlags: u32 {
        /// `MAP_SHARED`: writes go to the object and are seen by every mapper.
        SHARED = 0x01;
        /// `MAP_PRIVATE`: copy-on-write.
        PRIVATE = 0x02;
        /// `MAP_SHARED_VALIDATE` (= SHARED | PRIVATE): shared, unknown flags rejected.
        SHARED_VALIDATE = 0x03;
        /// `MAP_DROPPABLE` (Linux 6.11; a sharing type, like `MAP_PRIVATE`):
        /// private anonymous memory whose pages the kernel may drop (to
        /// zeros) under memory pressure: `VM_DROPPABLE | VM_NORESERVE |
        /// VM_WIPEONFORK | VM_DONTDUMP`. Go's (1.24+) `getrandom` vDSO
        /// state lives in such mappings.
        DROPPABLE = 0x08;
        /// `MAP_FIXED`: exactly at the address, replacing what is there.
        FIXED = 0x10;
        /// `MAP_ANONYMOUS`: not backed by a file (the file argument is ignored).
        ANONYMOUS = 0x20;
        /// `MAP_32BIT` (x86-64): placed in the first 2 GiB, bottom-up from
        /// 1 GiB; ignored with `MAP_FIXED`.
        BIT32 = 0x40;
        /// `MAP_GROWSDOWN`: a stack that grows down on faults below it.
        GROWSDOWN = 0x0100;
        /// `MAP_DENYWRITE`: ignored, as by Linux.
        DENYWRITE = 0x0800;
        /// `MAP_EXECUTABLE`: ignored, as by Linux.
        EXECUTABLE = 0x1000;
        /// `MAP_LOCKED`: sets `VM_LOCKED` (no other effect in the model).
        LOCKED = 0x2000;
        /// `MAP_NORESERVE`: no commit charge (`VM_NORESERVE`, so no `VM_ACCOUNT`).
        NORESERVE = 0x4000;
        /// `MAP_POPULATE`: fault every page in at once.
        POPULATE = 0x8000;
        /// `MAP_NONBLOCK`: ignored.
        NONBLOCK = 0x1_0000;
        /// `MAP_STACK`: sets `VM_NOHUGEPAGE` (Linux 6.8, `calc_vm_flag_bits`),
        /// so that thread stacks are not backed by huge pages.
        STACK = 0x2_0000;
        /// `MAP_HUGETLB`: the model reserves no huge pages, so `ENOMEM`.
        HUGETLB = 0x4_0000;
        /// `MAP_SYNC`: `VM_SYNC`, for files on DAX devices, which the model
        /// has none of: `EOPNOTSUPP` with `MAP_SHARED_VALIDATE` of a file and
        /// for a file whose file system refuses it
        /// ([`OpenFile::refuses_map_sync`](crate::OpenFile::refuses_map_sync));
        /// kept as `VM_SYNC` otherwise (anonymous memory, tmpfs).
        SYNC = 0x8_0000;
        /// `MAP_FIXED_NOREPLACE`: exactly at the address, `EEXIST` if anything is there.
        FIXED_NOREPLACE = 0x10_0000;
    }
}

impl MapFlags {
    /// `MAP_TYPE`: the mask of the sharing type.
    pub const TYPE: MapFlags = MapFlags(0x0f);
    /// `MAP_PRIVATE | MAP_ANONYMOUS`, the most common combination.
    pub const PRIVATE_ANON: MapFlags = MapFlags(0x22);
    /// `MAP_SHARED | MAP_ANONYMOUS`.
    pub const SHARED_ANON: MapFlags = MapFlags(0x21);
}

flag_type! {
    /// `MREMAP_*`: the flags of `mremap`.
    RemapFlags: u32 {
        /// `MREMAP_MAYMOVE`: the mapping may move if it cannot grow in place.
        MAYMOVE = 1;
        /// `MREMAP_FIXED`: move to exactly `new_addr` (requires `MAYMOVE`).
        FIXED = 2;
        /// `MREMAP_DONTUNMAP`: move the pages but leave the old mapping in place, empty.
        DONTUNMAP = 4;
    }
}

flag_type! {
    /// `VM_*`: the flags of a VMA (Linux's bit values).
    VmFlags: u64 {
        /// `VM_READ`.
        READ = 0x1;
        /// `VM_WRITE`.
        WRITE = 0x2;
        /// `VM_EXEC`.
        EXEC = 0x4;
        /// `VM_SHARED`.
        SHARED = 0x8;
        /// `VM_MAYREAD`: `mprotect` may add read.
        MAYREAD = 0x10;
        /// `VM_MAYWRITE`: `mprotect` may add write.
        MAYWRITE = 0x20;
        /// `VM_MAYEXEC`: `mprotect` may add exec.
        MAYEXEC = 0x40;
        /// `VM_MAYSHARE`.
        MAYSHARE = 0x80;
        /// `VM_GROWSDOWN`: a stack.
        GROWSDOWN = 0x100;
        /// `VM_PFNMAP`: page frames without `struct page` (`[vvar]`).
        PFNMAP = 0x400;
        /// `VM_MAYBE_GUARD` (Linux 6.18, smaps `gu`): a guard region was
        /// installed in the VMA at some time; its page tables are copied at
        /// fork so that the guards are. Never cleared.
        MAYBE_GUARD = 0x800;
        /// `VM_LOCKED`.
        LOCKED = 0x2000;
        /// `VM_IO`: memory-mapped I/O (`[vvar]`): never dumped, no `MADV_DOFORK`.
        IO = 0x4000;
        /// `VM_SEQ_READ` (`MADV_SEQUENTIAL`).
        SEQ_READ = 0x8000;
        /// `VM_RAND_READ` (`MADV_RANDOM`).
        RAND_READ = 0x1_0000;
        /// `VM_DONTCOPY` (`MADV_DONTFORK`): not copied into a child at fork.
        DONTCOPY = 0x2_0000;
        /// `VM_DONTEXPAND`: `mremap` may not grow it (the special mappings).
        DONTEXPAND = 0x4_0000;
        /// `VM_LOCKONFAULT` (`mlock2(MLOCK_ONFAULT)`, `MCL_ONFAULT`): with
        /// `VM_LOCKED`, pages are locked as they fault in, not populated.
        LOCKONFAULT = 0x8_0000;
        /// `VM_ACCOUNT`: charged to the commit limit (private writable mappings).
        ACCOUNT = 0x10_0000;
        /// `VM_NORESERVE` (`MAP_NORESERVE`).
        NORESERVE = 0x20_0000;
        /// `VM_SYNC` (`MAP_SYNC`, smaps `sf`): synchronous page faults, for
        /// files on DAX devices; kept on any mapping a file system accepts.
        SYNC = 0x80_0000;
        /// `VM_WIPEONFORK` (`MADV_WIPEONFORK`): the child gets the mapping empty.
        WIPEONFORK = 0x200_0000;
        /// `VM_DONTDUMP` (`MADV_DONTDUMP`): left out of core dumps.
        DONTDUMP = 0x400_0000;
        /// `VM_MIXEDMAP`: pages with and without `struct page`.
        MIXEDMAP = 0x1000_0000;
        /// `VM_HUGEPAGE` (`MADV_HUGEPAGE`).
        HUGEPAGE = 0x2000_0000;
        /// `VM_NOHUGEPAGE` (`MADV_NOHUGEPAGE`, `MAP_STACK`).
        NOHUGEPAGE = 0x4000_0000;
        /// `VM_MERGEABLE` (`MADV_MERGEABLE`): KSM may merge its pages.
        MERGEABLE = 0x8000_0000;
        /// `VM_PKEY_BIT0` (`VM_HIGH_ARCH_0`): bit 0 of the VMA's protection key.
        PKEY_BIT0 = 1 << 32;
        /// `VM_PKEY_BIT1`.
        PKEY_BIT1 = 1 << 33;
        /// `VM_PKEY_BIT2`.
        PKEY_BIT2 = 1 << 34;
        /// `VM_PKEY_BIT3`.
        PKEY_BIT3 = 1 << 35;
        /// `VM_DROPPABLE` (`MAP_DROPPABLE`, smaps `dp`): the pages may be
        /// dropped instead of swapped; never locked by `mlock`, and
        /// `MADV_KEEPONFORK`, `MADV_DODUMP` and `MADV_MERGEABLE` do not
        /// apply.
        DROPPABLE = 1 << 40;
        /// `VM_SEALED` (`mseal`, smaps `sl`): the VMA may not be unmapped,
        /// replaced, moved, resized or reprotected, nor its anonymous
        /// read-only memory discarded (see
        /// [`AddressSpace::mseal`](crate::AddressSpace::mseal)).
        SEALED = 1 << 42;
    }
}

/// The two-letter words of the `VmFlags:` line of `/proc/PID/smaps`
/// (`show_smap_vma_flags`) and their `VM_*` bits, in the kernel's order:
/// every word the kernel prints on x86-64, also for flags the model never
/// sets (`um`, `sd`, `ss`, ...), so that captured kernel text parses.
const SMAPS_WORDS: [(&str, u64); 36] = [
    ("rd", 0x1),
    ("wr", 0x2),
    ("ex", 0x4),
    ("sh", 0x8),
    ("mr", 0x10),
    ("mw", 0x20),
    ("me", 0x40),
    ("ms", 0x80),
    ("gd", 0x100),
    ("um", 0x200),
    ("pf", 0x400),
    ("gu", 0x800),
    ("uw", 0x1000),
    ("lo", 0x2000),
    ("io", 0x4000),
    ("sr", 0x8000),
    ("rr", 0x1_0000),
    ("dc", 0x2_0000),
    ("de", 0x4_0000),
    ("lf", 0x8_0000),
    ("ac", 0x10_0000),
    ("nr", 0x20_0000),
    ("ht", 0x40_0000),
    ("sf", 0x80_0000),
    ("ar", 0x100_0000),
    ("wf", 0x200_0000),
    ("dd", 0x400_0000),
    ("sd", 0x800_0000),
    ("mm", 0x1000_0000),
    ("hg", 0x2000_0000),
    ("nh", 0x4000_0000),
    ("mg", 0x8000_0000),
    ("ss", 1 << 37),
    ("ui", 1 << 38),
    ("dp", 1 << 40),
    ("sl", 1 << 42),
];

impl VmFlags {
    /// `VM_STICKY` (Linux 6.18): flags that do not stop a merge and that the
    /// merged VMA keeps if either part had them: `VM_MAYBE_GUARD`.
    pub const STICKY: VmFlags = VmFlags(0x800);
    /// `VM_LOCKED_MASK`: `VM_LOCKED | VM_LOCKONFAULT`, what `mlock`,
    /// `munlock`, `mlockall` and `munlockall` set and clear.
    pub const LOCKED_MASK: VmFlags = VmFlags(0x2000 | 0x8_0000);
    /// `VM_ACCESS_FLAGS`: read, write, exec.
    pub const ACCESS: VmFlags = VmFlags(0x7);
    /// `ARCH_VM_PKEY_FLAGS`: the four bits that hold a VMA's protection key.
    /// They are part of the flags, so VMAs with different keys never merge;
    /// `/proc/PID/smaps` prints the key as `ProtectionKey:`, not in `VmFlags:`.
    pub const PKEY_MASK: VmFlags = VmFlags(0xf << 32);

    /// The protection key (`vma_pkey`).
    pub fn pkey(self) -> u32 {
        ((self.0 & VmFlags::PKEY_MASK.0) >> 32) as u32
    }

    /// The same flags with protection key `key` (0..=15).
    pub fn with_pkey(self, key: u32) -> VmFlags {
        VmFlags((self.0 & !VmFlags::PKEY_MASK.0) | ((key as u64 & 0xf) << 32))
    }
    /// `VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC`.
    pub const MAY_RWX: VmFlags = VmFlags(0x70);

    /// `calc_vm_prot_bits`: the access flags of a protection.
    pub fn from_prot(prot: Prot) -> VmFlags {
        VmFlags((prot.bits() & 0x7) as u64)
    }

    /// The protection the access flags stand for.
    pub fn prot(self) -> Prot {
        Prot::from_bits_retain((self.0 & 0x7) as u32)
    }

    /// `vma_is_accessible`: any of read, write, exec (x86: each implies read).
    pub fn readable(self) -> bool {
        self.intersects(VmFlags::ACCESS)
    }

    /// `VM_SPECIAL`: `VM_IO | VM_DONTEXPAND | VM_PFNMAP | VM_MIXEDMAP`, the
    /// flags of mappings that never merge and that `MADV_DODUMP` refuses.
    pub const SPECIAL: VmFlags = VmFlags(0x4000 | 0x4_0000 | 0x400 | 0x1000_0000);

    /// The flags as the `VmFlags:` line of `/proc/PID/smaps` prints them
    /// (`show_smap_vma_flags`), e.g. `"rd wr mr mw me ac"`, in the kernel's
    /// order; bits that have no word are left out.
    ///
    /// ```
    /// use maple_mm::VmFlags;
    /// let f = VmFlags::READ | VmFlags::WRITE | VmFlags::MAY_RWX | VmFlags::ACCOUNT;
    /// assert_eq!(f.smaps(), "rd wr mr mw me ac");
    /// assert_eq!(VmFlags::from_smaps("rd wr mr mw me ac"), Ok(f));
    /// ```
    pub fn smaps(self) -> String {
        let words: Vec<&str> = SMAPS_WORDS
            .iter()
            .filter(|&&(_, bit)| self.0 & bit != 0)
            .map(|&(word, _)| word)
            .collect();
        words.join(" ")
    }

    /// Parses the words of a `VmFlags:` line (without the `VmFlags:` label)
    /// into flags the model has. A word the model has no flag for (the
    /// kernel prints more: `sd`, `um`, `ss`, ...) is returned as the error.
    pub fn from_smaps(words: &str) -> Result<VmFlags, String> {
        let known = Self::NAMES.iter().fold(0, |m, &(_, bit)| m | bit);
        let f = Self::from_smaps_retain(words)?;
        match SMAPS_WORDS
            .iter()
            .find(|&&(_, bit)| f.0 & bit & !known != 0)
        {
            Some(&(word, _)) => Err(word.to_string()),
            None => Ok(f),
        }
    }

    /// Parses the words of a `VmFlags:` line, keeping the bits of every
    /// word the kernel prints, also of flags the model has no name for (for
    /// comparing with captured kernel text). An unknown word is returned as
    /// the error.
    pub(crate) fn from_smaps_retain(words: &str) -> Result<VmFlags, String> {
        let mut f = VmFlags::EMPTY;
        for w in words.split_whitespace() {
            match SMAPS_WORDS.iter().find(|&&(word, _)| word == w) {
                Some(&(_, bit)) => f.0 |= bit,
                None => return Err(w.to_string()),
            }
        }
        Ok(f)
    }

    /// `is_cow_mapping`: private and may become writable, so pages are
    /// shared copy-on-write at fork.
    pub fn is_cow(self) -> bool {
        self.0 & (VmFlags::SHARED.0 | VmFlags::MAYWRITE.0) == VmFlags::MAYWRITE.0
    }
}

/// `MADV_*`: the advice of `madvise` that the model implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Advice {
    /// `MADV_NORMAL` (0): clears `VM_SEQ_READ` and `VM_RAND_READ`.
    Normal,
    /// `MADV_RANDOM` (1): sets `VM_RAND_READ`.
    Random,
    /// `MADV_SEQUENTIAL` (2): sets `VM_SEQ_READ`.
    Sequential,
    /// `MADV_WILLNEED` (3): read-ahead into the page cache (`madvise_willneed`);
    /// nothing the model's page tables show.
    WillNeed,
    /// `MADV_DONTNEED` (4): drops the pages; private anonymous memory reads
    /// back as zeros, file memory as the file's contents. `EINVAL` on
    /// `VM_LOCKED` or `VM_PFNMAP` VMAs.
    DontNeed,
    /// `MADV_FREE` (8): the pages may be reclaimed lazily
    /// (`madvise_free_single_vma`); only private anonymous VMAs (`EINVAL`
    /// otherwise). The model has no memory pressure, so the pages stay as
    /// they are (what a program sees when the kernel did not reclaim them).
    Free,
    /// `MADV_REMOVE` (9): punches a hole in the file behind a shared writable
    /// mapping (`madvise_remove`): the range reads back as zeros in every
    /// mapping of the file. `EINVAL` without a file or on `VM_LOCKED`,
    /// `EACCES` unless the VMA is shared and may be written.
    Remove,
    /// `MADV_DONTFORK` (10): sets `VM_DONTCOPY`.
    DontFork,
    /// `MADV_DOFORK` (11): clears `VM_DONTCOPY` (`EINVAL` on `VM_IO`).
    DoFork,
    /// `MADV_MERGEABLE` (12): sets `VM_MERGEABLE` (`ksm_madvise`), except on
    /// VMAs KSM cannot handle (shared, `VM_SPECIAL`, `VM_DROPPABLE`), which
    /// it silently skips.
    Mergeable,
    /// `MADV_UNMERGEABLE` (13): clears `VM_MERGEABLE`.
    Unmergeable,
    /// `MADV_HUGEPAGE` (14): sets `VM_HUGEPAGE`, clears `VM_NOHUGEPAGE`
    /// (`hugepage_madvise`).
    HugePage,
    /// `MADV_NOHUGEPAGE` (15): sets `VM_NOHUGEPAGE`, clears `VM_HUGEPAGE`.
    NoHugePage,
    /// `MADV_DONTDUMP` (16): sets `VM_DONTDUMP`.
    DontDump,
    /// `MADV_DODUMP` (17): clears `VM_DONTDUMP`; `EINVAL` on `VM_SPECIAL`
    /// and `VM_DROPPABLE` VMAs.
    DoDump,
    /// `MADV_WIPEONFORK` (18): sets `VM_WIPEONFORK` (private anonymous only).
    WipeOnFork,
    /// `MADV_KEEPONFORK` (19): clears `VM_WIPEONFORK`; `EINVAL` on
    /// `VM_DROPPABLE` VMAs.
    KeepOnFork,
    /// `MADV_COLD` (20): deactivates the pages (LRU only: no visible effect);
    /// `EINVAL` on `VM_LOCKED` or `VM_PFNMAP` VMAs (`can_madv_lru_vma`).
    Cold,
    /// `MADV_PAGEOUT` (21): reclaims the pages. The model has no swap device
    /// and does not model reclaim: contents and page tables stay (a program
    /// reads the same data either way). Errors as [`Cold`](Self::Cold).
    PageOut,
    /// `MADV_POPULATE_READ` (22): faults every page in for reading
    /// (`madvise_populate`); `EINVAL` on a VMA without `VM_READ` or with
    /// `VM_IO`/`VM_PFNMAP`, `ENOMEM` at a hole.
    PopulateRead,
    /// `MADV_POPULATE_WRITE` (23): faults every page in for writing (a
    /// private VMA gets its anon_vma); `EINVAL` on a VMA without `VM_WRITE`.
    PopulateWrite,
    /// `MADV_DONTNEED_LOCKED` (24): [`DontNeed`](Self::DontNeed) that also
    /// works on `VM_LOCKED` VMAs.
    DontNeedLocked,
    /// `MADV_COLLAPSE` (25, Linux 6.1+): collapses the range's aligned 2 MiB
    /// blocks into transparent huge pages at once (`madvise_collapse`),
    /// whatever the sysfs THP settings say. `EINVAL` on a VMA that may not
    /// have huge pages (`VM_NOHUGEPAGE`, `VM_SPECIAL`, no aligned 2 MiB
    /// block inside it, anonymous memory without an anon_vma, a file not
    /// opened read-only) and on a range with no aligned block whose ends
    /// round past each other. No VMA changes. A private anonymous block
    /// collapses when any page of it is present (the zero page and pages
    /// shared copy-on-write with a child count): every page of it is then
    /// present and the process's own (missing ones zero-filled), as in the
    /// huge page; a block with no present page is `EINVAL`, and the other
    /// blocks are still collapsed. The model has no huge pages in its page
    /// tables and leaves file and shared memory as it is (reads see the same
    /// data either way).
    Collapse,
    /// `MADV_GUARD_INSTALL` (102, Linux 6.13+): makes every page of the
    /// range a guard page that faults on access ([`FaultKind::Guard`](crate::FaultKind::Guard)),
    /// dropping what was there, without splitting a VMA. `EINVAL` on
    /// `VM_LOCKED` or `VM_SPECIAL` VMAs. Guards survive `DONTNEED`, `FREE`
    /// and `mprotect`; unmapping removes them; `mremap` moves them; fork
    /// copies them (except with `VM_WIPEONFORK`); `MADV_POPULATE_*` over
    /// them is `EFAULT`.
    GuardInstall,
    /// `MADV_GUARD_REMOVE` (103): removes the range's guards; `EINVAL` on
    /// `VM_SPECIAL` VMAs (locked ones are allowed).
    GuardRemove,
}

/// Every advice the model implements, in `MADV_*` order.
const ALL_ADVICE: [Advice; 25] = [
    Advice::Normal,
    Advice::Random,
    Advice::Sequential,
    Advice::WillNeed,
    Advice::DontNeed,
    Advice::Free,
    Advice::Remove,
    Advice::DontFork,
    Advice::DoFork,
    Advice::Mergeable,
    Advice::Unmergeable,
    Advice::HugePage,
    Advice::NoHugePage,
    Advice::DontDump,
    Advice::DoDump,
    Advice::WipeOnFork,
    Advice::KeepOnFork,
    Advice::Cold,
    Advice::PageOut,
    Advice::PopulateRead,
    Advice::PopulateWrite,
    Advice::DontNeedLocked,
    Advice::Collapse,
    Advice::GuardInstall,
    Advice::GuardRemove,
];

impl Advice {
    /// The advice of a raw `MADV_*` value, if the model implements it.
    /// [`linux_accepts`](Self::linux_accepts) tells the values Linux
    /// rejects with `EINVAL` before looking at the range.
    pub fn from_raw(raw: i32) -> Option<Advice> {
        ALL_ADVICE.into_iter().find(|a| a.raw() == raw)
    }

    /// Whether Linux 6.18 (x86-64, the usual configuration: swap, KSM,
    /// transparent huge pages, memory failure) knows the advice
    /// (`madvise_behavior_valid`); `madvise` with any other value fails with
    /// `EINVAL` and changes nothing. Known values the model does not
    /// implement: `MADV_HWPOISON` (100) and `MADV_SOFT_OFFLINE` (101).
    pub fn linux_accepts(raw: i32) -> bool {
        matches!(raw, 0..=4 | 8..=25 | 100..=103)
    }

    /// The raw `MADV_*` value.
    pub fn raw(self) -> i32 {
        match self {
            Advice::Normal => 0,
            Advice::Random => 1,
            Advice::Sequential => 2,
            Advice::WillNeed => 3,
            Advice::DontNeed => 4,
            Advice::Free => 8,
            Advice::Remove => 9,
            Advice::DontFork => 10,
            Advice::DoFork => 11,
            Advice::Mergeable => 12,
            Advice::Unmergeable => 13,
            Advice::HugePage => 14,
            Advice::NoHugePage => 15,
            Advice::DontDump => 16,
            Advice::DoDump => 17,
            Advice::WipeOnFork => 18,
            Advice::KeepOnFork => 19,
            Advice::Cold => 20,
            Advice::PageOut => 21,
            Advice::PopulateRead => 22,
            Advice::PopulateWrite => 23,
            Advice::DontNeedLocked => 24,
            Advice::Collapse => 25,
            Advice::GuardInstall => 102,
            Advice::GuardRemove => 103,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_flags() {
        assert_eq!(format!("{:?}", Prot::RW), "Prot(READ | WRITE)");
        assert_eq!(format!("{:?}", Prot::NONE), "Prot(0)");
        assert_eq!(
            format!("{:?}", MapFlags::from_bits_retain(0x22 | 0x4000_0000)),
            "MapFlags(PRIVATE | ANONYMOUS | 0x40000000)"
        );
    }

    #[test]
    fn prot_bits_round_trip() {
        for p in [
            Prot::NONE,
            Prot::READ,
            Prot::WRITE,
            Prot::RW,
            Prot::READ | Prot::EXEC,
        ] {
            assert_eq!(VmFlags::from_prot(p).prot(), p);
        }
        assert!(!VmFlags::from_prot(Prot::NONE).readable());
        assert!(VmFlags::from_prot(Prot::WRITE).readable());
    }

    #[test]
    fn cow_mappings() {
        assert!(VmFlags::MAYWRITE.is_cow());
        assert!((VmFlags::MAYWRITE | VmFlags::WRITE).is_cow());
        assert!(!(VmFlags::MAYWRITE | VmFlags::SHARED).is_cow());
        assert!(!VmFlags::READ.is_cow());
    }

    #[test]
    fn advice_round_trip() {
        for raw in [
            0, 1, 2, 3, 4, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 102, 103,
        ] {
            assert_eq!(Advice::from_raw(raw).map(Advice::raw), Some(raw));
            assert!(Advice::linux_accepts(raw));
        }
        for raw in [5, 6, 7, 26, 99, 104, -1] {
            assert_eq!(Advice::from_raw(raw), None);
            assert!(!Advice::linux_accepts(raw), "{raw}");
        }
    }

    #[test]
    fn smaps_words_round_trip() {
        let vvar = VmFlags::READ
            | VmFlags::MAYREAD
            | VmFlags::PFNMAP
            | VmFlags::IO
            | VmFlags::DONTEXPAND
            | VmFlags::DONTDUMP;
        assert_eq!(vvar.smaps(), "rd mr pf io de dd");
        assert_eq!(VmFlags::from_smaps("rd mr pf io de dd"), Ok(vvar));
        assert_eq!(VmFlags::from_smaps("rd sd"), Err("sd".to_string()));
        assert_eq!(VmFlags::from_smaps("rd xx"), Err("xx".to_string()));
    }

    #[test]
    fn every_kernel_word_round_trips_and_the_model_flags_have_words() {
        let all: Vec<&str> = SMAPS_WORDS.iter().map(|&(w, _)| w).collect();
        let text = all.join(" ");
        let f = VmFlags::from_smaps_retain(&text).unwrap();
        assert_eq!(f.smaps(), text);
        // A word the model has no flag for is kept by the retaining parse.
        assert_eq!(
            VmFlags::from_smaps_retain("rd sd").map(|f| f.smaps()),
            Ok("rd sd".to_string())
        );
        // Every flag the model names has its word, and parses back alone;
        // but the protection-key bits, which smaps shows on its own
        // `ProtectionKey:` line instead.
        for &(name, bit) in VmFlags::NAMES {
            if VmFlags::PKEY_MASK.contains(VmFlags::from_bits_retain(bit)) {
                continue;
            }
            let one = VmFlags::from_bits_retain(bit);
            assert_eq!(VmFlags::from_smaps(&one.smaps()), Ok(one), "{name}");
        }
    }
}
