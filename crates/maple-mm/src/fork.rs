//! `fork`: duplicating an address space (`dup_mmap`), with the ways of
//! building the child's VMA tree and of giving it page tables, and the undo
//! of a fork that fails half way.

use crate::config::PMD_SIZE;
use crate::error::Errno;
use crate::flags::VmFlags;
use crate::memory::Phys;
use crate::pagetable::{index, ENTRIES};
use crate::space::{AddressSpace, Inner};
use crate::vma::{AnonId, Backing, Vma};
use maple_tree::{DupError, MapleTree};

/// How fork builds the child's VMA tree.
///
/// `#[non_exhaustive]`: the `bench-internals` feature adds
/// `Insert`, so a `match` needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TreeStrategy {
    /// Each VMA inserted into an empty tree with the append fast path off:
    /// fork before the kernel's `mas_wr_append` fast path and `__mt_dup`.
    /// Only with the `bench-internals` feature (for benchmarks; it needs
    /// maple-tree's `set_append_path`).
    #[cfg(feature = "bench-internals")]
    Insert,
    /// Each VMA stored in order into an empty tree with the append fast path
    /// (the kernel's `mas_wr_append`, which fork's `vma_iter_bulk_store`
    /// reached before `__mt_dup`).
    Append,
    /// The tree duplicated node by node with a value map (the kernel's
    /// `__mt_dup`), then the `VM_DONTCOPY` VMAs erased.
    #[default]
    Dup,
}

/// How fork gives the child its page tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PtStrategy {
    /// Every present PTE copied, one more reference on each frame,
    /// write-protected on both sides for private mappings (Linux's
    /// `copy_page_range`).
    #[default]
    Copy,
    /// Whole PTE tables shared copy-on-write with a table reference count
    /// (the "Introduce Copy-On-Write to Page Table" series proposed for
    /// Linux); a table is copied when either side first writes into it or
    /// changes it. A table holding pages that the child must not get
    /// (`VM_DONTCOPY`, `VM_WIPEONFORK`, or VMAs whose pages are not copied)
    /// is copied entry by entry instead.
    CowPte,
}

/// The strategies of one fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ForkOptions {
    /// How the VMA tree is built.
    pub tree: TreeStrategy,
    /// How the page tables are given.
    pub page_tables: PtStrategy,
}

impl ForkOptions {
    /// Both strategies.
    pub fn new(tree: TreeStrategy, page_tables: PtStrategy) -> ForkOptions {
        ForkOptions { tree, page_tables }
    }
}

/// The child's copy of a VMA (`vm_area_dup` + `anon_vma_fork`): a fresh
/// anon_vma if the parent's VMA has one, chained to the parent's (so the
/// child's chain is not singular, [`Vma::anon_vma_inherited`]); none for
/// `VM_WIPEONFORK` ("a clean slate in the child").
fn child_vma(v: &Vma) -> Vma {
    let anon = if v.flags.contains(VmFlags::WIPEONFORK) {
        None
    } else {
        v.anon.map(|_| AnonId::fresh())
    };
    Vma {
        anon,
        anon_inherited: anon.is_some(),
        // dup_mmap: memory locks are not inherited.
        flags: v.flags.without(VmFlags::LOCKED_MASK),
        ..v.clone()
    }
}

/// `vma_needs_copy`: only VMAs with anonymous pages or guard regions
/// (`VM_MAYBE_GUARD`) get their page tables copied (the child faults file
/// and shared pages in again), and never `VM_WIPEONFORK` ones.
fn needs_copy(child: &Vma) -> bool {
    (child.anon.is_some() || child.flags.contains(VmFlags::MAYBE_GUARD))
        && !child.flags.contains(VmFlags::WIPEONFORK)
}

impl AddressSpace {
    /// `fork()` with the default strategies (`mm-dup`, `mm-copy`): the
    /// child's address space. See [`fork_with`](Self::fork_with).
    ///
    /// ```
    /// use maple_mm::{AddressSpace, MapFlags, Prot, PAGE_SIZE};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.write(a, b"parent").unwrap();
    /// let mut child = mm.fork().unwrap();
    /// child.write(a, b"child!").unwrap(); // copy-on-write: the parent keeps its page
    /// let mut buf = [0; 6];
    /// mm.read(a, &mut buf).unwrap();
    /// assert_eq!(&buf, b"parent");
    /// child.read(a, &mut buf).unwrap();
    /// assert_eq!(&buf, b"child!");
    /// ```
    pub fn fork(&mut self) -> Result<AddressSpace, Errno> {
        self.fork_with(ForkOptions::default())
    }

    /// `fork()` (`dup_mmap`): a child with a copy of every VMA but the
    /// `VM_DONTCOPY` ones (a gap in the child); `VM_WIPEONFORK` VMAs come
    /// without their pages; the pages of the others are shared copy-on-write
    /// (the parent's private writable entries become read-only). Shared
    /// mappings stay shared.
    ///
    /// Failure (the tree's allocator, or, with the `failpoints` feature, an
    /// injected one: `Memory::inject_fork_failure`) returns `ENOMEM` after
    /// undoing everything (the kernel's `undo_dup_mmap`, added with
    /// `__mt_dup`): the half-built child is torn down, so
    /// no frame, table or VMA leaks and every count is back to its value
    /// before the fork; only write bits the parent lost stay cleared, which
    /// costs at most a spurious fault.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, ForkOptions, MapFlags, Prot, PtStrategy, TreeStrategy, PAGE_SIZE};
    /// let mut parent = AddressSpace::new();
    /// let a = parent.mmap(0, 512 * PAGE_SIZE, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// for i in 0..512 {
    ///     parent.write(a + i * PAGE_SIZE, &[1]).unwrap();
    /// }
    /// // Duplicate the VMA tree, share whole page tables copy-on-write.
    /// let opts = ForkOptions::new(TreeStrategy::Dup, PtStrategy::CowPte);
    /// let mut child = parent.fork_with(opts).unwrap();
    /// assert_eq!(child.maps(), parent.maps());
    /// assert!(child.memory().same(parent.memory()));
    /// child.write(a, &[2]).unwrap(); // copies the page table, then the page
    /// let mut b = [0];
    /// parent.read(a, &mut b).unwrap();
    /// assert_eq!(b, [1]);
    /// ```
    pub fn fork_with(&mut self, opts: ForkOptions) -> Result<AddressSpace, Errno> {
        let mut phys = self.mem.lock();
        let inner = self.inner.fork(&mut phys, opts)?;
        drop(phys);
        Ok(AddressSpace {
            mem: self.mem.clone(),
            inner,
        })
    }
}

impl Inner {
    fn fork(&mut self, phys: &mut Phys, opts: ForkOptions) -> Result<Inner, Errno> {
        // mm_alloc_pgd
        phys.fail.hit()?;
        let tree = self.dup_tree(phys, opts.tree)?;
        let mut child = Inner {
            vmas: tree,
            pt: crate::pagetable::PageTables::new(phys),
            cfg: self.cfg.clone(),
            total_vm: 0,
            start_brk: self.start_brk,
            brk: self.brk,
            vsyscall: self.vsyscall,
            // arch_dup_pkeys; the thread's PKRU is inherited too.
            pkeys: self.pkeys,
            guards: Default::default(),
            // mm_init: the child keeps only VM_INIT_DEF_MASK of def_flags,
            // so mlockall(MCL_FUTURE) is not inherited.
            def_flags: VmFlags::EMPTY,
        };
        // From here the child is a whole address space: on failure it is torn
        // down like any other, which undoes everything.
        let mut ranges = Vec::new();
        for (_, v) in child.vmas.iter() {
            child.total_vm += v.pages();
            if let Backing::Shm(id) = v.backing {
                phys.cache.shm_get(id);
            }
            if needs_copy(v) {
                ranges.push((v.start, v.end, v.flags.is_cow()));
                // Guard markers are page-table entries: copied with them.
                child
                    .guards
                    .extend(self.guards.range(v.start..v.end).copied());
            }
        }
        let r = self
            .copy_page_tables(&mut child, phys, &ranges, opts.page_tables)
            .and_then(|_| phys.fail.hit()); // arch_dup_mmap
        if let Err(e) = r {
            child.teardown(phys);
            return Err(e);
        }
        Ok(child)
    }

    /// The child's VMA tree, built the chosen way; one failure point per VMA.
    fn dup_tree(&self, phys: &mut Phys, how: TreeStrategy) -> Result<MapleTree<Vma>, Errno> {
        match how {
            TreeStrategy::Dup => {
                let mut dontcopy = Vec::new();
                let r = self.vmas.try_dup_with(|v| {
                    phys.fail.hit()?;
                    if v.flags.contains(VmFlags::DONTCOPY) {
                        dontcopy.push(v.start);
                    }
                    Ok(child_vma(v))
                });
                let mut tree = match r {
                    Ok(t) => t,
                    Err(DupError::Map(e)) => return Err(e),
                    Err(DupError::Alloc(_)) => return Err(Errno::ENOMEM),
                };
                for s in dontcopy {
                    tree.remove(s);
                }
                Ok(tree)
            }
            #[cfg(feature = "bench-internals")]
            TreeStrategy::Insert => self.insert_each(phys, false),
            TreeStrategy::Append => self.insert_each(phys, true),
        }
    }

    /// The child's VMA tree built by storing each copied VMA in address
    /// order; `append`: whether stores may take the append fast path.
    fn insert_each(&self, phys: &mut Phys, append: bool) -> Result<MapleTree<Vma>, Errno> {
        let mut tree = MapleTree::new_alloc();
        #[cfg(feature = "bench-internals")]
        tree.set_append_path(append);
        // Without the feature the append path is always on.
        #[cfg(not(feature = "bench-internals"))]
        debug_assert!(append);
        for (r, v) in self.vmas.iter() {
            if v.flags.contains(VmFlags::DONTCOPY) {
                continue;
            }
            phys.fail.hit()?;
            tree.insert(r, child_vma(v));
        }
        Ok(tree)
    }

    /// `copy_page_range` over the child VMAs that need it (`ranges`: start,
    /// end, copy-on-write), sorted by address.
    fn copy_page_tables(
        &mut self,
        child: &mut Inner,
        phys: &mut Phys,
        ranges: &[(u64, u64, bool)],
        how: PtStrategy,
    ) -> Result<(), Errno> {
        // The 2 MiB span decided last under CowPte: (base, shared?).
        let mut decided: Option<(u64, bool)> = None;
        for &(s, e, cow) in ranges {
            let mut a = s;
            while a < e {
                let base = a & !(PMD_SIZE - 1);
                let part_end = e.min(base + PMD_SIZE);
                let Some(found) = self.pt.find(phys, a) else {
                    a = part_end;
                    continue;
                };
                if phys.tables.table(found.pt).used == 0 {
                    a = part_end;
                    continue;
                }
                if how == PtStrategy::CowPte {
                    let shared = match decided {
                        Some((b, sh)) if b == base => sh,
                        _ => {
                            let sh = cow && self.shareable(phys, found.pt, base, ranges, s, e);
                            if sh {
                                child.pt.fork_share(phys, &found, a)?;
                            }
                            decided = Some((base, sh));
                            sh
                        }
                    };
                    if shared {
                        a = part_end;
                        continue;
                    }
                }
                let dst = child.pt.fork_table(phys, a)?;
                child
                    .pt
                    .fork_copy_ptes(phys, found.pt, dst, a, part_end, cow);
                a = part_end;
            }
        }
        Ok(())
    }

    /// Whether the PTE table `pt` covering `base..base + 2 MiB` may be shared
    /// whole with the child: every present entry lies in a copy-on-write
    /// range the child gets pages of. The common case, one range covering
    /// the whole span, needs no scan.
    fn shareable(
        &self,
        phys: &Phys,
        pt: u32,
        base: u64,
        ranges: &[(u64, u64, bool)],
        s: u64,
        e: u64,
    ) -> bool {
        if s <= base && e >= base + PMD_SIZE {
            return true;
        }
        let t = phys.tables.table(pt);
        let first = ranges.partition_point(|r| r.1 <= base);
        for k in 0..ENTRIES {
            if t.entries[k] == 0 {
                continue;
            }
            let addr = base + ((k as u64) << 12);
            let inside = ranges[first..]
                .iter()
                .take_while(|r| r.0 < base + PMD_SIZE)
                .any(|r| r.2 && r.0 <= addr && addr < r.1);
            if !inside {
                return false;
            }
        }
        debug_assert_eq!(index(base, 0), 0);
        true
    }
}
