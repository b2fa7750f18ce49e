//! Software page tables shaped like x86-64's: four levels (PGD, PUD, PMD,
//! PTE table) of 512 eight-byte entries, 4 KiB pages, 48-bit addresses.
//!
//! Every table lives in one arena ([`Tables`]) shared by all the address
//! spaces of a [`Memory`](crate::Memory), so that a PTE table can be shared
//! by several spaces copy-on-write (seed 004): an entry of an upper table
//! holds the index of the table below; an entry of a PTE table holds the
//! index of a frame, and two bits: [`PRESENT`] and [`WRITABLE`]. A PMD entry
//! without `WRITABLE` marks a PTE table shared copy-on-write: writing through it, or
//! changing it in any way, first makes this space's copy private
//! ([`PageTables::pte_table_mut`]); a write needs `WRITABLE` at both levels, as on
//! x86 where the effective permission is the AND of all levels.
//!
//! A PTE table's `refs` counts the PMD entries pointing at it; an entry of a
//! shared table holds one frame reference however many spaces share it.

use crate::config::{PAGE_SHIFT, PAGE_SIZE, PMD_SIZE};
use crate::error::Errno;
use crate::frames::{FrameId, ZERO_FRAME};
use crate::memory::Phys;

/// The index of a table in the arena.
pub(crate) type TableId = u32;
/// Entries per table.
pub(crate) const ENTRIES: usize = 512;
/// Present.
pub(crate) const PRESENT: u64 = 1;
/// Writable.
pub(crate) const WRITABLE: u64 = 2;

/// The frame or table an entry points at.
#[inline]
pub(crate) fn entry_target(entry: u64) -> u32 {
    (entry >> PAGE_SHIFT) as u32
}

/// An entry pointing at `id` with `flags`.
#[inline]
pub(crate) fn make_entry(id: u32, flags: u64) -> u64 {
    ((id as u64) << PAGE_SHIFT) | flags
}

/// Bytes one entry of a table at `level` covers (level 0 = PTE table).
#[inline]
fn entry_size(level: u32) -> u64 {
    1u64 << (PAGE_SHIFT + 9 * level)
}

/// The index of `addr` in a table at `level`.
#[inline]
pub(crate) fn index(addr: u64, level: u32) -> usize {
    ((addr >> (PAGE_SHIFT + 9 * level)) & (ENTRIES as u64 - 1)) as usize
}

/// Level of the PGD.
const PGD: u32 = 3;
/// Level of a PMD table.
const PMD: u32 = 1;

/// One table (one page of the page tables).
pub(crate) struct Table {
    /// The entries.
    pub(crate) entries: Box<[u64; ENTRIES]>,
    /// PMD entries pointing at it (PTE tables); 1 for upper tables.
    pub(crate) refs: u32,
    /// Non-zero entries.
    pub(crate) used: u32,
    /// Entries mapping a frame other than the zero page (PTE tables): the
    /// table's share of a space's RSS.
    pub(crate) rss: u32,
}

fn zeroed_table() -> Box<[u64; ENTRIES]> {
    let v: Box<[u64]> = vec![0u64; ENTRIES].into_boxed_slice();
    match v.try_into() {
        Ok(b) => b,
        Err(_) => Box::new([0u64; ENTRIES]),
    }
}

/// The arena of tables. A freed table is kept zeroed for reuse.
#[derive(Default)]
pub(crate) struct Tables {
    all: Vec<Table>,
    free: Vec<TableId>,
    live: usize,
}

impl Tables {
    /// A new empty table with one reference.
    pub(crate) fn alloc(&mut self) -> TableId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            let table = &mut self.all[id as usize];
            table.refs = 1;
            id
        } else {
            self.all.push(Table {
                entries: zeroed_table(),
                refs: 1,
                used: 0,
                rss: 0,
            });
            (self.all.len() - 1) as TableId
        }
    }

    /// Returns a table to the arena.
    pub(crate) fn free(&mut self, id: TableId) {
        let table = &mut self.all[id as usize];
        if table.used != 0 {
            table.entries.fill(0);
        }
        table.refs = 0;
        table.used = 0;
        table.rss = 0;
        self.free.push(id);
        self.live -= 1;
    }

    /// Tables in use.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// A table.
    #[inline]
    pub(crate) fn table(&self, id: TableId) -> &Table {
        &self.all[id as usize]
    }

    /// A table, mutably.
    #[inline]
    pub(crate) fn table_mut(&mut self, id: TableId) -> &mut Table {
        &mut self.all[id as usize]
    }

    /// Two distinct tables, mutably.
    fn pair_mut(&mut self, a: TableId, b: TableId) -> (&mut Table, &mut Table) {
        debug_assert_ne!(a, b);
        let (a, b) = (a as usize, b as usize);
        if a < b {
            let (below, from_b) = self.all.split_at_mut(b);
            (&mut below[a], &mut from_b[0])
        } else {
            let (below, from_a) = self.all.split_at_mut(a);
            (&mut from_a[0], &mut below[b])
        }
    }
}

/// Unwraps the result of an allocation path that has no failure point.
fn infallible<T>(r: Result<T, Errno>) -> T {
    match r {
        Ok(v) => v,
        Err(_) => unreachable!("an allocation without a failure point failed"),
    }
}

/// One address space's page tables: the root and the counters that belong
/// to the space (`mm_pgtables_bytes`, the RSS counters).
pub(crate) struct PageTables {
    /// The PGD.
    pub(crate) pgd: TableId,
    /// Tables reachable from the PGD, the PGD included (a shared PTE table
    /// counts in every space that maps it).
    pub(crate) pages: usize,
    /// Present entries mapping a frame other than the zero page.
    pub(crate) rss: u64,
}

/// A PTE table found by a walk.
pub(crate) struct Found {
    /// The PMD table holding the entry.
    pub(crate) pmd: TableId,
    /// The index in the PMD table.
    pub(crate) idx: usize,
    /// The PTE table.
    pub(crate) pt: TableId,
}

impl PageTables {
    /// An empty PGD (`mm_alloc_pgd`).
    pub(crate) fn new(phys: &mut Phys) -> PageTables {
        let pgd = phys.tables.alloc();
        phys.roots.insert(pgd);
        PageTables {
            pgd,
            pages: 1,
            rss: 0,
        }
    }

    /// The PTE of `addr` (0 if none) and whether the PMD entry above it is
    /// writable (not shared copy-on-write).
    #[inline]
    pub(crate) fn lookup(&self, phys: &Phys, addr: u64) -> (u64, bool) {
        match self.find(phys, addr) {
            Some(found) => {
                let pmd_entry = phys.tables.table(found.pmd).entries[found.idx];
                (
                    phys.tables.table(found.pt).entries[index(addr, 0)],
                    pmd_entry & WRITABLE != 0,
                )
            }
            None => (0, false),
        }
    }

    /// The PTE table covering `addr`, without changing anything.
    #[inline]
    pub(crate) fn find(&self, phys: &Phys, addr: u64) -> Option<Found> {
        let mut table = self.pgd;
        for level in [PGD, 2] {
            let entry = phys.tables.table(table).entries[index(addr, level)];
            if entry == 0 {
                return None;
            }
            table = entry_target(entry);
        }
        let idx = index(addr, PMD);
        let pmd_entry = phys.tables.table(table).entries[idx];
        if pmd_entry == 0 {
            return None;
        }
        Some(Found {
            pmd: table,
            idx,
            pt: entry_target(pmd_entry),
        })
    }

    /// The PMD table covering `addr`, allocating the PUD and PMD tables on
    /// the way; with `fallible`, each allocation is a failure point.
    fn pmd_alloc(&mut self, phys: &mut Phys, addr: u64, fallible: bool) -> Result<TableId, Errno> {
        let mut table = self.pgd;
        for level in [PGD, 2] {
            let i = index(addr, level);
            let entry = phys.tables.table(table).entries[i];
            table = if entry == 0 {
                if fallible {
                    phys.fail.hit()?;
                }
                let new_table = phys.tables.alloc();
                let up = phys.tables.table_mut(table);
                up.entries[i] = make_entry(new_table, PRESENT | WRITABLE);
                up.used += 1;
                self.pages += 1;
                new_table
            } else {
                entry_target(entry)
            };
        }
        Ok(table)
    }

    /// The PTE table covering `addr`, allocated if absent and made private to
    /// this space if shared (breaking copy-on-write page-table sharing).
    pub(crate) fn pte_table_mut(&mut self, phys: &mut Phys, addr: u64) -> TableId {
        let pmd = infallible(self.pmd_alloc(phys, addr, false));
        let i = index(addr, PMD);
        let entry = phys.tables.table(pmd).entries[i];
        if entry == 0 {
            let new_table = phys.tables.alloc();
            let table = phys.tables.table_mut(pmd);
            table.entries[i] = make_entry(new_table, PRESENT | WRITABLE);
            table.used += 1;
            self.pages += 1;
            new_table
        } else if entry & WRITABLE == 0 {
            unshare(phys, pmd, i)
        } else {
            entry_target(entry)
        }
    }

    /// Stores `new` in entry `slot` of the private PTE table `pt`, keeping the
    /// counters. Frame references are the caller's business.
    #[inline]
    pub(crate) fn set_pte(&mut self, phys: &mut Phys, pt: TableId, slot: usize, new: u64) {
        let table = phys.tables.table_mut(pt);
        let old = table.entries[slot];
        table.entries[slot] = new;
        let old_rss = old != 0 && entry_target(old) != ZERO_FRAME;
        let new_rss = new != 0 && entry_target(new) != ZERO_FRAME;
        table.used = table.used + (new != 0) as u32 - (old != 0) as u32;
        table.rss = table.rss + new_rss as u32 - old_rss as u32;
        self.rss = self.rss + new_rss as u64 - old_rss as u64;
    }

    /// `zap_page_range`: removes every PTE of `start..end`, dropping the frame
    /// references. A shared PTE table wholly inside the range is just
    /// dereferenced; one partly inside is made private first.
    pub(crate) fn zap(&mut self, phys: &mut Phys, start: u64, end: u64) {
        if start < end {
            self.zap_level(phys, self.pgd, PGD, 0, start, end);
        }
    }

    fn zap_level(
        &mut self,
        phys: &mut Phys,
        table: TableId,
        level: u32,
        base: u64,
        start: u64,
        end: u64,
    ) {
        let entry_span = entry_size(level);
        let first = ((start - base) / entry_span) as usize;
        let last = ((end - 1 - base) / entry_span) as usize;
        for i in first..=last {
            let entry = phys.tables.table(table).entries[i];
            if entry == 0 {
                continue;
            }
            let entry_base = base + i as u64 * entry_span;
            let (part_start, part_end) = (start.max(entry_base), end.min(entry_base + entry_span));
            if level == PMD {
                let mut pt = entry_target(entry);
                if entry & WRITABLE == 0 && phys.tables.table(pt).refs > 1 {
                    if part_start == entry_base && part_end == entry_base + entry_span {
                        let pte_table = phys.tables.table_mut(pt);
                        pte_table.refs -= 1;
                        let shared_rss = pte_table.rss;
                        let pmd_table = phys.tables.table_mut(table);
                        pmd_table.entries[i] = 0;
                        pmd_table.used -= 1;
                        self.pages -= 1;
                        self.rss -= shared_rss as u64;
                        continue;
                    }
                    pt = unshare(phys, table, i);
                }
                self.zap_ptes(phys, pt, entry_base, part_start, part_end);
            } else {
                self.zap_level(
                    phys,
                    entry_target(entry),
                    level - 1,
                    entry_base,
                    part_start,
                    part_end,
                );
            }
        }
    }

    fn zap_ptes(&mut self, phys: &mut Phys, pt: TableId, base: u64, start: u64, end: u64) {
        let Phys { tables, frames, .. } = phys;
        let pte_table = tables.table_mut(pt);
        if pte_table.used == 0 {
            return;
        }
        let first_slot = ((start - base) >> PAGE_SHIFT) as usize;
        let end_slot = ((end - base) >> PAGE_SHIFT) as usize;
        for slot in first_slot..end_slot {
            let pte = pte_table.entries[slot];
            if pte == 0 {
                continue;
            }
            pte_table.entries[slot] = 0;
            pte_table.used -= 1;
            let frame = entry_target(pte);
            if frame != ZERO_FRAME {
                pte_table.rss -= 1;
                self.rss -= 1;
                frames.put(frame);
            }
        }
    }

    /// `free_pgtables`: frees the tables overlapping `start..end` whose whole span
    /// `used(span_start, span_end)` says no VMA touches any more (a table
    /// stays while a VMA still covers part of it). Anything still mapped
    /// under a freed table is zapped.
    pub(crate) fn free_unused(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
        used: &dyn Fn(u64, u64) -> bool,
    ) {
        if start < end {
            self.free_level(phys, self.pgd, PGD, 0, start, end, used);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn free_level(
        &mut self,
        phys: &mut Phys,
        table: TableId,
        level: u32,
        base: u64,
        start: u64,
        end: u64,
        used: &dyn Fn(u64, u64) -> bool,
    ) {
        let entry_span = entry_size(level);
        let first = ((start - base) / entry_span) as usize;
        let last = ((end - 1 - base) / entry_span) as usize;
        for i in first..=last {
            let entry = phys.tables.table(table).entries[i];
            if entry == 0 {
                continue;
            }
            let entry_base = base + i as u64 * entry_span;
            if !used(entry_base, entry_base + entry_span) {
                if level == PMD {
                    self.release_pte_table(phys, entry_target(entry));
                } else {
                    self.release_table(phys, entry_target(entry), level - 1);
                }
                let parent = phys.tables.table_mut(table);
                parent.entries[i] = 0;
                parent.used -= 1;
            } else if level > PMD {
                self.free_level(
                    phys,
                    entry_target(entry),
                    level - 1,
                    entry_base,
                    start.max(entry_base),
                    end.min(entry_base + entry_span),
                    used,
                );
            }
        }
    }

    /// Drops this space's reference on a PTE table: frees it (and its frame
    /// references) if it was the last one.
    fn release_pte_table(&mut self, phys: &mut Phys, pt: TableId) {
        let Phys { tables, frames, .. } = phys;
        let pte_table = tables.table_mut(pt);
        self.pages -= 1;
        self.rss -= pte_table.rss as u64;
        if pte_table.refs > 1 {
            pte_table.refs -= 1;
            return;
        }
        if pte_table.used > 0 {
            for &pte in pte_table.entries.iter() {
                if pte != 0 {
                    frames.put(entry_target(pte));
                }
            }
        }
        tables.free(pt);
    }

    /// Frees an upper table at `level` and everything below it.
    fn release_table(&mut self, phys: &mut Phys, table: TableId, level: u32) {
        if phys.tables.table(table).used > 0 {
            for i in 0..ENTRIES {
                let entry = phys.tables.table(table).entries[i];
                if entry == 0 {
                    continue;
                }
                if level == PMD {
                    self.release_pte_table(phys, entry_target(entry));
                } else {
                    self.release_table(phys, entry_target(entry), level - 1);
                }
            }
        }
        phys.tables.free(table);
        self.pages -= 1;
    }

    /// Frees every table and drops every frame reference (`exit_mmap`).
    pub(crate) fn teardown(&mut self, phys: &mut Phys) {
        let pgd = self.pgd;
        self.release_table(phys, pgd, PGD);
        phys.roots.remove(&pgd);
    }

    /// The present PTE tables overlapping `start..end`, each made private, with
    /// the part of the range it covers: `(table, span base, start, end)`.
    fn pte_tables_mut(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
    ) -> Vec<(TableId, u64, u64, u64)> {
        let mut out = Vec::new();
        let mut a = start;
        while a < end {
            let base = a & !(PMD_SIZE - 1);
            let part_end = end.min(base + PMD_SIZE);
            if let Some(found) = self.find(phys, a) {
                let pmd_entry = phys.tables.table(found.pmd).entries[found.idx];
                let pt = if pmd_entry & WRITABLE == 0 {
                    unshare(phys, found.pmd, found.idx)
                } else {
                    found.pt
                };
                out.push((pt, base, a, part_end));
            }
            a = part_end;
        }
        out
    }

    /// `change_protection` removing write: clears `WRITABLE` in every PTE of `start..end`.
    pub(crate) fn wrprotect(&mut self, phys: &mut Phys, start: u64, end: u64) {
        for (pt, base, part_start, part_end) in self.pte_tables_mut(phys, start, end) {
            let pte_table = phys.tables.table_mut(pt);
            if pte_table.used == 0 {
                continue;
            }
            for slot in ((part_start - base) >> PAGE_SHIFT) as usize
                ..((part_end - base) >> PAGE_SHIFT) as usize
            {
                pte_table.entries[slot] &= !WRITABLE;
            }
        }
    }

    /// Takes the PTEs of `start..end` out (frame references move with them):
    /// `(address, entry)` in address order.
    pub(crate) fn take_range(&mut self, phys: &mut Phys, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if start >= end {
            return out;
        }
        for (pt, base, part_start, part_end) in self.pte_tables_mut(phys, start, end) {
            if phys.tables.table(pt).used == 0 {
                continue;
            }
            for slot in ((part_start - base) >> PAGE_SHIFT) as usize
                ..((part_end - base) >> PAGE_SHIFT) as usize
            {
                let pte = phys.tables.table(pt).entries[slot];
                if pte != 0 {
                    out.push((base + slot as u64 * PAGE_SIZE, pte));
                    self.set_pte(phys, pt, slot, 0);
                }
            }
        }
        out
    }

    /// Puts a PTE taken by [`take_range`](Self::take_range) at `addr`.
    pub(crate) fn install(&mut self, phys: &mut Phys, addr: u64, pte: u64) {
        let pt = self.pte_table_mut(phys, addr);
        self.set_pte(phys, pt, index(addr, 0), pte);
    }

    /// The child's private PTE table for `addr` during fork, every
    /// allocation a failure point.
    pub(crate) fn fork_table(&mut self, phys: &mut Phys, addr: u64) -> Result<TableId, Errno> {
        let pmd = self.pmd_alloc(phys, addr, true)?;
        let i = index(addr, PMD);
        let entry = phys.tables.table(pmd).entries[i];
        if entry != 0 {
            return Ok(entry_target(entry));
        }
        phys.fail.hit()?;
        let new_table = phys.tables.alloc();
        let table = phys.tables.table_mut(pmd);
        table.entries[i] = make_entry(new_table, PRESENT | WRITABLE);
        table.used += 1;
        self.pages += 1;
        Ok(new_table)
    }

    /// `copy_pte_range`: copies the present entries of `start..end` (inside one
    /// 2 MiB span) from the parent's table `src` into this (the child's)
    /// table `dst`, taking a frame reference for each; for a copy-on-write
    /// mapping `WRITABLE` is cleared on both sides.
    pub(crate) fn fork_copy_ptes(
        &mut self,
        phys: &mut Phys,
        src: TableId,
        dst: TableId,
        start: u64,
        end: u64,
        cow: bool,
    ) {
        let Phys { tables, frames, .. } = phys;
        let (src_table, dst_table) = tables.pair_mut(src, dst);
        let first_slot = index(start, 0);
        let end_slot = first_slot + ((end - start) >> PAGE_SHIFT) as usize;
        let mut rss = 0u32;
        let mut used = 0u32;
        for slot in first_slot..end_slot {
            let pte = src_table.entries[slot];
            if pte == 0 {
                continue;
            }
            let copied = if cow { pte & !WRITABLE } else { pte };
            src_table.entries[slot] = copied;
            dst_table.entries[slot] = copied;
            used += 1;
            let frame = entry_target(pte);
            if frame != ZERO_FRAME {
                frames.get(frame);
                rss += 1;
            }
        }
        dst_table.used += used;
        dst_table.rss += rss;
        self.rss += rss as u64;
    }

    /// Copy-on-write page tables (seed 004): maps the parent's PTE table
    /// `found` into this (the child's) PMD, read-only at the PMD level in
    /// both spaces, and takes a table reference. The child's RSS counts the
    /// table's pages at once.
    pub(crate) fn fork_share(
        &mut self,
        phys: &mut Phys,
        found: &Found,
        addr: u64,
    ) -> Result<(), Errno> {
        let pmd = self.pmd_alloc(phys, addr, true)?;
        let i = index(addr, PMD);
        let src = phys.tables.table_mut(found.pt);
        src.refs += 1;
        let r = src.rss;
        phys.tables.table_mut(found.pmd).entries[found.idx] &= !WRITABLE;
        let table = phys.tables.table_mut(pmd);
        debug_assert_eq!(table.entries[i], 0);
        table.entries[i] = make_entry(found.pt, PRESENT);
        table.used += 1;
        self.pages += 1;
        self.rss += r as u64;
        Ok(())
    }

    /// Calls `f(addr, pte, pmd_entry, table)` for every present PTE, in
    /// address order (for the checker).
    pub(crate) fn for_each_pte(&self, phys: &Phys, f: &mut dyn FnMut(u64, u64, u64, TableId)) {
        self.walk(phys, self.pgd, PGD, 0, f);
    }

    fn walk(
        &self,
        phys: &Phys,
        table: TableId,
        level: u32,
        base: u64,
        f: &mut dyn FnMut(u64, u64, u64, TableId),
    ) {
        let entry_span = entry_size(level);
        for i in 0..ENTRIES {
            let entry = phys.tables.table(table).entries[i];
            if entry == 0 {
                continue;
            }
            let entry_base = base + i as u64 * entry_span;
            if level == PMD {
                let pt = entry_target(entry);
                for (slot, &pte) in phys.tables.table(pt).entries.iter().enumerate() {
                    if pte != 0 {
                        f(entry_base + slot as u64 * PAGE_SIZE, pte, entry, pt);
                    }
                }
            } else {
                self.walk(phys, entry_target(entry), level - 1, entry_base, f);
            }
        }
    }

    /// Calls `f(table, level)` for every table reachable from the PGD, the
    /// PGD included; shared PTE tables are visited once per PMD entry.
    pub(crate) fn for_each_table(&self, phys: &Phys, f: &mut dyn FnMut(TableId, u32)) {
        walk_tables(phys, self.pgd, PGD, f);
    }
}

/// Calls `f(table, level)` for `table` and every table below it.
pub(crate) fn walk_tables(
    phys: &Phys,
    table: TableId,
    level: u32,
    f: &mut dyn FnMut(TableId, u32),
) {
    f(table, level);
    if level == 0 {
        return;
    }
    for i in 0..ENTRIES {
        let entry = phys.tables.table(table).entries[i];
        if entry != 0 {
            walk_tables(phys, entry_target(entry), level - 1, f);
        }
    }
}

/// Breaks copy-on-write sharing of the PTE table under entry `i` of the PMD
/// table `pmd`: if others still share it, this space gets its own copy (one
/// more reference on every frame; `WRITABLE` cleared in both copies so that the
/// frames themselves are now copied on write); if not, the PMD entry just
/// becomes writable again. Returns the now private table.
fn unshare(phys: &mut Phys, pmd: TableId, i: usize) -> TableId {
    let entry = phys.tables.table(pmd).entries[i];
    let old = entry_target(entry);
    if phys.tables.table(old).refs == 1 {
        phys.tables.table_mut(pmd).entries[i] = entry | WRITABLE;
        return old;
    }
    let new = phys.tables.alloc();
    let Phys { tables, frames, .. } = phys;
    let (old_table, new_table) = tables.pair_mut(old, new);
    if old_table.used > 0 {
        for slot in 0..ENTRIES {
            let pte = old_table.entries[slot];
            if pte == 0 {
                continue;
            }
            let copied = pte & !WRITABLE;
            old_table.entries[slot] = copied;
            new_table.entries[slot] = copied;
            let frame: FrameId = entry_target(pte);
            frames.get(frame);
        }
    }
    new_table.used = old_table.used;
    new_table.rss = old_table.rss;
    old_table.refs -= 1;
    tables.table_mut(pmd).entries[i] = make_entry(new, PRESENT | WRITABLE);
    new
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Memory;

    #[test]
    fn indices_follow_x86_64() {
        let a = 0x7fff_ffff_f000u64;
        assert_eq!(
            [index(a, 3), index(a, 2), index(a, 1), index(a, 0)],
            [255, 511, 511, 511]
        );
        assert_eq!(entry_size(0), 4096);
        assert_eq!(entry_size(1), PMD_SIZE);
        assert_eq!(entry_target(make_entry(77, PRESENT | WRITABLE)), 77);
    }

    #[test]
    fn shared_tables_are_copied_on_change_and_dropped_whole() {
        let mem = Memory::new();
        let mut phys = mem.lock();
        let p = &mut *phys;
        let mut a = PageTables::new(p);
        let mut b = PageTables::new(p);
        let addr = 0x4000_0000;
        let pt = a.pte_table_mut(p, addr);
        for slot in 0..3 {
            let f = p.frames.alloc();
            a.set_pte(p, pt, slot, make_entry(f, PRESENT | WRITABLE));
        }
        assert_eq!((a.rss, a.pages), (3, 4));
        let found = a.find(p, addr).unwrap();
        b.fork_share(p, &found, addr).unwrap();
        assert_eq!(p.tables.table(pt).refs, 2);
        assert_eq!(b.rss, 3);
        assert!(
            !a.lookup(p, addr).1,
            "the parent's PMD entry is read-only now"
        );
        // b changes the table: it gets its own copy, every frame one more reference
        let bt = b.pte_table_mut(p, addr);
        assert_ne!(bt, pt);
        assert_eq!(p.tables.table(pt).refs, 1);
        assert_eq!(
            p.frames
                .frame(entry_target(p.tables.table(pt).entries[0]))
                .refs,
            2
        );
        assert_eq!(
            p.tables.table(pt).entries[0] & WRITABLE,
            0,
            "write bits cleared on both sides"
        );
        // a is alone again: its PMD entry just becomes writable
        assert_eq!(a.pte_table_mut(p, addr), pt);
        // sharing again, then zapping the whole span only drops a reference
        let mut c = PageTables::new(p);
        let found = a.find(p, addr).unwrap();
        c.fork_share(p, &found, addr).unwrap();
        c.zap(p, addr, addr + PMD_SIZE);
        assert_eq!((c.rss, p.tables.table(pt).refs), (0, 1));
        for mut table in [a, b, c] {
            table.teardown(p);
        }
        assert_eq!((p.tables.live(), p.frames.live()), (0, 0));
    }
}
