//! The address space: the VMA tree, the page tables and the counters of one
//! process (the kernel's `mm_struct`).

use crate::config::{Config, PAGE_SHIFT};
use crate::flags::VmFlags;
use crate::memory::{Memory, Phys};
use crate::pagetable::PageTables;
use crate::vma::{Backing, Vma};
use maple_tree::MapleTree;

/// A process address space (`mm_struct`): VMAs in an allocation maple tree
/// (gap tracking on, as the kernel's `mm_mt`), four-level page tables, and
/// the accounting, on a [`Memory`] it may share with the spaces it forked
/// or was forked from.
///
/// Dropping it is `exit_mmap`: every table freed, every frame reference dropped.
///
/// ```
/// use maple_mm::{AddressSpace, Prot, MapFlags};
/// let mut mm = AddressSpace::new();
/// let a = mm.mmap(0, 8192, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
/// mm.write(a, b"parent").unwrap();
/// let mut child = mm.fork().unwrap();
/// child.write(a, b"child!").unwrap();          // copy-on-write
/// let mut buf = [0u8; 6];
/// mm.read(a, &mut buf).unwrap();
/// assert_eq!(&buf, b"parent");
/// assert_eq!(mm.stats().rss_pages, 1);
/// mm.validate().unwrap();
/// ```
pub struct AddressSpace {
    pub(crate) mem: Memory,
    pub(crate) inner: Inner,
}

/// The state of an address space apart from its memory handle; every
/// operation locks the memory once and works on this.
pub(crate) struct Inner {
    /// The VMAs, keyed by their ranges.
    pub(crate) vmas: MapleTree<Vma>,
    /// The page tables.
    pub(crate) pt: PageTables,
    /// The tunables.
    pub(crate) cfg: Config,
    /// `total_vm`: pages of all VMAs.
    pub(crate) total_vm: u64,
    /// `mm->start_brk`.
    pub(crate) start_brk: u64,
    /// `mm->brk`.
    pub(crate) brk: u64,
    /// Whether the `[vsyscall]` gate page is shown (`get_gate_vma`).
    pub(crate) vsyscall: bool,
    /// Protection keys: the allocation map, the execute-only key, `PKRU`.
    pub(crate) pkeys: crate::pkeys::Pkeys,
    /// Guard-region pages (`MADV_GUARD_INSTALL`).
    pub(crate) guards: crate::guard::Guards,
    /// `mm->def_flags`: flags every new mapping gets (`VM_LOCKED` and
    /// `VM_LOCKONFAULT` after `mlockall(MCL_FUTURE)`).
    pub(crate) def_flags: VmFlags,
}

/// The accounting of an address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MmStats {
    /// `map_count`: number of VMAs.
    pub map_count: usize,
    /// `total_vm`: pages mapped.
    pub total_vm_pages: u64,
    /// Resident pages (`get_mm_rss`): present entries mapping a frame other
    /// than the zero page, shared copy-on-write page tables included.
    pub rss_pages: u64,
    /// Page-table pages reachable from this space's PGD, the PGD included
    /// (`mm_pgtables_bytes / PAGE_SIZE` plus the PGD).
    pub pt_pages: usize,
    /// The program break.
    pub brk: u64,
}

impl Default for AddressSpace {
    fn default() -> AddressSpace {
        AddressSpace::new()
    }
}

impl Inner {
    /// An empty space.
    pub(crate) fn new(phys: &mut Phys, cfg: Config) -> Inner {
        let brk = cfg.start_brk;
        let pkeys = crate::pkeys::Pkeys::new(cfg.pkeys);
        Inner {
            vmas: MapleTree::new_alloc(),
            pt: PageTables::new(phys),
            cfg,
            total_vm: 0,
            start_brk: brk,
            brk,
            vsyscall: false,
            pkeys,
            guards: Default::default(),
            def_flags: VmFlags::EMPTY,
        }
    }

    /// The bytes of `start..end` that VMAs with `flag` cover (the locked or
    /// charged part of a range).
    pub(crate) fn bytes_flagged(&self, start: u64, end: u64, flag: VmFlags) -> u64 {
        self.vmas
            .range(start..end)
            .filter(|(_, v)| v.flags.contains(flag))
            .map(|(_, v)| v.end.min(end) - v.start.max(start))
            .sum()
    }

    /// `exit_mmap`: frees the page tables and drops the VMAs.
    pub(crate) fn teardown(&mut self, phys: &mut Phys) {
        self.pt.teardown(phys);
        let Phys { cache, frames, .. } = phys;
        for (_, v) in self.vmas.iter() {
            if let Backing::Shm(id) = v.backing {
                cache.shm_put(frames, id);
            }
        }
        self.vmas.clear();
        self.total_vm = 0;
    }
}

impl AddressSpace {
    /// An empty address space with the default [`Config`] on its own new [`Memory`].
    pub fn new() -> AddressSpace {
        AddressSpace::with_memory(&Memory::new(), Config::default())
    }

    /// An empty address space with `cfg` on its own new [`Memory`].
    pub fn with_config(cfg: Config) -> AddressSpace {
        AddressSpace::with_memory(&Memory::new(), cfg)
    }

    /// An empty address space on `mem`, shared with the other spaces on it.
    pub fn with_memory(mem: &Memory, cfg: Config) -> AddressSpace {
        let inner = Inner::new(&mut mem.lock(), cfg);
        AddressSpace {
            mem: mem.clone(),
            inner,
        }
    }

    /// The memory this space maps.
    pub fn memory(&self) -> &Memory {
        &self.mem
    }

    /// The tunables.
    pub fn config(&self) -> &Config {
        &self.inner.cfg
    }

    /// Sets `vm.max_map_count` for this space.
    pub fn set_max_map_count(&mut self, n: usize) {
        self.inner.cfg.max_map_count = n;
    }

    /// The VMAs in address order.
    pub fn vmas(&self) -> impl DoubleEndedIterator<Item = &Vma> + '_ {
        self.inner.vmas.iter().map(|(_, v)| v)
    }

    /// The VMA containing `addr` (`vma_lookup`).
    pub fn vma_at(&self, addr: u64) -> Option<&Vma> {
        self.inner.vmas.get(addr)
    }

    /// The first VMA ending above `addr` (`find_vma`).
    pub fn find_vma(&self, addr: u64) -> Option<&Vma> {
        self.inner.vmas.range(addr..).next().map(|(_, v)| v)
    }

    /// The VMA tree itself (read only), e.g. for its [`stats`](MapleTree::stats).
    pub fn tree(&self) -> &MapleTree<Vma> {
        &self.inner.vmas
    }

    /// Number of VMAs (`map_count`).
    pub fn map_count(&self) -> usize {
        self.inner.vmas.len()
    }

    /// The current program break.
    pub fn current_brk(&self) -> u64 {
        self.inner.brk
    }

    /// The accounting.
    pub fn stats(&self) -> MmStats {
        MmStats {
            map_count: self.inner.vmas.len(),
            total_vm_pages: self.inner.total_vm,
            rss_pages: self.inner.pt.rss,
            pt_pages: self.inner.pt.pages,
            brk: self.inner.brk,
        }
    }

    /// The layout as `/proc/PID/maps` prints it, one line per VMA, the
    /// `[vsyscall]` gate page last if the space has it.
    pub fn maps(&self) -> String {
        let mut s = String::new();
        for v in self.vmas().cloned().chain(self.gate_vma()) {
            s.push_str(&v.to_string());
            s.push('\n');
        }
        s
    }

    /// Total mapped bytes.
    pub fn total_vm_bytes(&self) -> u64 {
        self.inner.total_vm << PAGE_SHIFT
    }
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        let mut phys = self.mem.lock();
        self.inner.teardown(&mut phys);
    }
}

impl std::fmt::Debug for AddressSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressSpace")
            .field("stats", &self.stats())
            .field("vmas", &self.vmas().collect::<Vec<_>>())
            .finish()
    }
}
