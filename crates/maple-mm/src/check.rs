//! `validate()`: every invariant of an address space and of the memory
//! under it, with a precise message for the first one broken.

use crate::config::PAGE_SIZE;
use crate::flags::VmFlags;
use crate::frames::ZERO_FRAME;
use crate::memory::Phys;
use crate::pagecache::Obj;
use crate::pagetable::{entry_target, walk_tables, TableId, PRESENT, WRITABLE};
use crate::space::AddressSpace;
use crate::vma::{Backing, Vma};
use core::fmt;
use maple_tree::MapleTree;
use std::collections::HashMap;

/// A broken invariant found by [`AddressSpace::validate`] or
/// [`Memory::validate`](crate::Memory::validate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    /// Short name of the invariant, e.g. `"frame refcount"`.
    pub invariant: &'static str,
    /// What exactly is wrong.
    pub detail: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} broken: {}", self.invariant, self.detail)
    }
}

impl std::error::Error for CheckError {}

fn err<T>(invariant: &'static str, detail: String) -> Result<T, CheckError> {
    Err(CheckError { invariant, detail })
}

impl AddressSpace {
    /// Checks the whole address space: the tree is valid; every VMA is keyed
    /// by its own range, page aligned, non-empty, inside the task, with
    /// consistent flags (a file VMA's `vm_file` is its file, an inherited
    /// anon_vma chain has an anon_vma, a special mapping keeps the kernel's
    /// special and sharing flags); the counters match; every present page-table entry
    /// lies in a VMA that allows what the entry allows (write only in a
    /// writable VMA; a writable private entry maps a frame no one else
    /// maps; a shared VMA maps its object's page-cache frames; the zero page
    /// only read-only in private anonymous memory); then the memory's
    /// invariants over all spaces ([`Memory::validate`](crate::Memory::validate)).
    pub fn validate(&self) -> Result<(), CheckError> {
        let phys = self.mem.lock();
        let inner = &self.inner;
        if let Err(e) = inner.vmas.validate() {
            return err("maple tree", e.to_string());
        }
        // Guard markers live in page tables, so only inside VMAs that
        // record them.
        for &g in &inner.guards {
            match inner.vmas.get(g) {
                Some(v) if v.flags.contains(VmFlags::MAYBE_GUARD) && g % PAGE_SIZE == 0 => {}
                _ => return err("guard page", format!("{g:#x} outside a guarded VMA")),
            }
        }
        let mut total = 0u64;
        let mut prev_end = 0u64;
        for (r, v) in inner.vmas.iter() {
            if *r.start() != v.start || *r.end() != v.end.wrapping_sub(1) {
                return err(
                    "vma key",
                    format!("{:?} stored at {:#x}..={:#x}", v, r.start(), r.end()),
                );
            }
            if v.start % PAGE_SIZE != 0 || v.end % PAGE_SIZE != 0 || v.start >= v.end {
                return err("vma alignment", format!("{:?}", v));
            }
            if v.end > inner.cfg.task_size {
                return err("vma inside task", format!("{:?}", v));
            }
            if v.start < prev_end {
                return err(
                    "vma order",
                    format!("{:?} starts below the previous end {:#x}", v, prev_end),
                );
            }
            prev_end = v.end;
            let shared = v.flags.contains(VmFlags::SHARED);
            if shared && !v.flags.contains(VmFlags::MAYSHARE) {
                return err("vma flags", format!("shared without MAYSHARE: {:?}", v));
            }
            match v.backing {
                Backing::Anon if shared => {
                    return err(
                        "vma flags",
                        format!("shared anonymous VMA without an object: {:?}", v),
                    )
                }
                // (a read-only System V attachment has VM_MAYSHARE only)
                Backing::Shm(_) if !v.flags.contains(VmFlags::MAYSHARE) => {
                    return err(
                        "vma flags",
                        format!("private VMA on a shared object: {:?}", v),
                    )
                }
                _ => {}
            }
            if v.flags.contains(VmFlags::WIPEONFORK)
                && (shared || matches!(v.backing, Backing::File(_) | Backing::Shm(_)))
            {
                return err(
                    "vma flags",
                    format!("WIPEONFORK on a shared or file VMA: {:?}", v),
                );
            }
            // A file VMA's vm_file is its file; a System V segment's is its
            // attachment's; no other VMA has one.
            let sysv = v.sysv().is_some();
            let file_ok = match (v.backing, v.vm_file) {
                (Backing::File(id), Some(f)) => f.id == id,
                (Backing::File(_), None) => false,
                (_, Some(_)) => sysv,
                (_, None) => !sysv,
            };
            if !file_ok {
                return err(
                    "vm_file",
                    format!("vm_file does not match the backing: {:?}", v),
                );
            }
            if v.anon_inherited && v.anon.is_none() {
                return err(
                    "anon_vma chain",
                    format!("an inherited chain without an anon_vma: {:?}", v),
                );
            }
            if let Backing::Special(sp) = v.backing {
                let fixed = VmFlags::SPECIAL | VmFlags::MAYSHARE | VmFlags::SHARED;
                if v.flags & fixed != sp.flags() & fixed {
                    return err(
                        "special mapping flags",
                        format!("{} with {:?}", sp.name(), v.flags),
                    );
                }
            }
            total += v.pages();
        }
        if total != inner.total_vm {
            return err(
                "total_vm",
                format!("counted {} pages, VMAs hold {}", inner.total_vm, total),
            );
        }

        let mut rss = 0u64;
        let mut bad: Option<CheckError> = None;
        inner.pt.for_each_pte(&phys, &mut |addr, pte, _pmd, _pt| {
            if entry_target(pte) != ZERO_FRAME {
                rss += 1;
            }
            if bad.is_none() {
                bad = check_pte(&phys, &inner.vmas, addr, pte).err();
            }
        });
        if let Some(e) = bad {
            return Err(e);
        }
        if rss != inner.pt.rss {
            return err(
                "rss",
                format!("counted {} pages, page tables map {}", inner.pt.rss, rss),
            );
        }
        let mut pages = 0usize;
        inner.pt.for_each_table(&phys, &mut |_, _| pages += 1);
        if pages != inner.pt.pages {
            return err(
                "page-table pages",
                format!("counted {}, reachable {}", inner.pt.pages, pages),
            );
        }
        check_phys(&phys)
    }
}

/// One present entry against the VMA it lies in.
fn check_pte(phys: &Phys, vmas: &MapleTree<Vma>, addr: u64, pte: u64) -> Result<(), CheckError> {
    if pte & PRESENT == 0 {
        return err(
            "pte present bit",
            format!("entry {pte:#x} at {addr:#x} without PRESENT"),
        );
    }
    let Some(v) = vmas.get(addr) else {
        return err("pte inside a vma", format!("entry {pte:#x} at {addr:#x}"));
    };
    let f = entry_target(pte);
    let w = pte & WRITABLE != 0;
    if f != ZERO_FRAME && ((f as usize) >= phys.frames.slots() || phys.frames.is_free(f)) {
        return err(
            "pte maps a live frame",
            format!("{addr:#x} maps free frame {f}"),
        );
    }
    if w && !v.flags.contains(VmFlags::WRITE) {
        return err(
            "pte write bit",
            format!("writable entry at {addr:#x} in {v:?}"),
        );
    }
    let fr = phys.frames.frame(f);
    let obj = Obj::of(v.backing);
    let cached = obj.and_then(|o| phys.cache.lookup(o, v.pgoff_of(addr)));
    if v.is_shared() {
        if cached != Some(f) {
            return err(
                "shared pte maps the page cache",
                format!("{addr:#x} maps frame {f} in {v:?}"),
            );
        }
    } else if f == ZERO_FRAME {
        if w || obj.is_some() {
            return err(
                "zero page",
                format!("{addr:#x} maps the zero page (w={w}) in {v:?}"),
            );
        }
    } else if fr.cached {
        if cached != Some(f) || w {
            return err(
                "private pte of a cached page",
                format!("{addr:#x} maps cached frame {f} (w={w}) in {v:?}"),
            );
        }
    } else if w && fr.refs != 1 {
        return err(
            "writable private pte is exclusive",
            format!("{addr:#x} frame {f} refs {}", fr.refs),
        );
    }
    Ok(())
}

/// The physical invariants (see [`Memory::validate`](crate::Memory::validate)).
pub(crate) fn check_phys(phys: &Phys) -> Result<(), CheckError> {
    let mut expected = vec![0u32; phys.frames.slots()];
    let mut table_refs: HashMap<TableId, (u32, u32)> = HashMap::new(); // id -> (references, level)
    for &root in &phys.roots {
        walk_tables(phys, root, 3, &mut |t, level| {
            table_refs.entry(t).or_insert((0, level)).0 += 1;
        });
    }
    for (&t, &(n, level)) in &table_refs {
        let tab = phys.tables.table(t);
        if tab.refs != n {
            return err(
                "table refcount",
                format!(
                    "table {t} (level {level}) has refs {} but {n} references",
                    tab.refs
                ),
            );
        }
        if level > 0 && n != 1 {
            return err(
                "upper tables are private",
                format!("table {t} (level {level}) referenced {n} times"),
            );
        }
        let used = tab.entries.iter().filter(|&&x| x != 0).count() as u32;
        if used != tab.used {
            return err(
                "table used count",
                format!("table {t}: {} counted, {used} entries", tab.used),
            );
        }
        if level == 0 {
            let mut rss = 0;
            for &x in tab.entries.iter() {
                if x != 0 {
                    let f = entry_target(x);
                    if (f as usize) >= expected.len() {
                        return err("pte frame index", format!("table {t} entry {x:#x}"));
                    }
                    if f != ZERO_FRAME {
                        expected[f as usize] += 1;
                        rss += 1;
                    }
                }
            }
            if rss != tab.rss {
                return err(
                    "table rss count",
                    format!("table {t}: {} counted, {rss} entries", tab.rss),
                );
            }
        }
    }
    if table_refs.len() != phys.tables.live() {
        return err(
            "no leaked tables",
            format!(
                "{} tables live, {} reachable from {} spaces",
                phys.tables.live(),
                table_refs.len(),
                phys.roots.len()
            ),
        );
    }
    let mut in_cache = vec![false; expected.len()];
    for (_, _, f) in phys.cache.frames() {
        expected[f as usize] += 1;
        in_cache[f as usize] = true;
    }
    let mut live = 0usize;
    for id in 1..expected.len() {
        let fr = phys.frames.frame(id as u32);
        if phys.frames.is_free(id as u32) {
            if expected[id] != 0 {
                return err(
                    "frame refcount",
                    format!("free frame {id} is mapped {} times", expected[id]),
                );
            }
            continue;
        }
        live += 1;
        if fr.refs != expected[id] {
            return err(
                "frame refcount",
                format!(
                    "frame {id} has refs {} but {} mappings",
                    fr.refs, expected[id]
                ),
            );
        }
        if fr.cached != in_cache[id] {
            return err(
                "frame cached flag",
                format!("frame {id} cached={} in cache={}", fr.cached, in_cache[id]),
            );
        }
    }
    if live != phys.frames.live() {
        return err(
            "frame count",
            format!("{} counted live, {} found", phys.frames.live(), live),
        );
    }
    Ok(())
}
