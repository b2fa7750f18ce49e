//! Software page tables shaped like x86-64's: four levels (PGD, PUD, PMD,
//! PTE table) of 512 eight-byte entries, 4 KiB pages, 48-bit addresses.
//!
//! Every table lives in one arena ([`Tables`]) shared by all the address
//! spaces of a [`Memory`](crate::Memory), so that a PTE table can be shared
//! by several spaces copy-on-write (seed 004): an entry of an upper table
//! holds the index of the table below; an entry of a PTE table holds the
//! index of a frame. Bits: `P` (present) and `W` (writable). A PMD entry
//! without `W` marks a PTE table shared copy-on-write: writing through it, or
//! changing it in any way, first makes this space's copy private
//! ([`PageTables::pte_table_mut`]); a write needs `W` at both levels, as on
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
pub(crate) const P: u64 = 1;
/// Writable.
pub(crate) const W: u64 = 2;

/// The frame or table an entry points at.
#[inline]
pub(crate) fn ent_id(e: u64) -> u32 {
    (e >> PAGE_SHIFT) as u32
}

/// An entry pointing at `id` with `flags`.
#[inline]
pub(crate) fn mk(id: u32, flags: u64) -> u64 {
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
    pub(crate) e: Box<[u64; ENTRIES]>,
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
    t: Vec<Table>,
    free: Vec<TableId>,
    live: usize,
}

impl Tables {
    /// A new empty table with one reference.
    pub(crate) fn alloc(&mut self) -> TableId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            let t = &mut self.t[id as usize];
            t.refs = 1;
            id
        } else {
            self.t.push(Table {
                e: zeroed_table(),
                refs: 1,
                used: 0,
                rss: 0,
            });
            (self.t.len() - 1) as TableId
        }
    }

    /// Returns a table to the arena.
    pub(crate) fn free(&mut self, id: TableId) {
        let t = &mut self.t[id as usize];
        if t.used != 0 {
            t.e.fill(0);
        }
        t.refs = 0;
        t.used = 0;
        t.rss = 0;
        self.free.push(id);
        self.live -= 1;
    }

    /// Tables in use.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// A table.
    #[inline]
    pub(crate) fn t(&self, id: TableId) -> &Table {
        &self.t[id as usize]
    }

    /// A table, mutably.
    #[inline]
    pub(crate) fn tm(&mut self, id: TableId) -> &mut Table {
        &mut self.t[id as usize]
    }

    /// Two distinct tables, mutably.
    fn pair_mut(&mut self, a: TableId, b: TableId) -> (&mut Table, &mut Table) {
        debug_assert_ne!(a, b);
        let (a, b) = (a as usize, b as usize);
        if a < b {
            let (x, y) = self.t.split_at_mut(b);
            (&mut x[a], &mut y[0])
        } else {
            let (x, y) = self.t.split_at_mut(a);
            (&mut y[0], &mut x[b])
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
            Some(f) => {
                let pe = phys.tables.t(f.pmd).e[f.idx];
                (phys.tables.t(f.pt).e[index(addr, 0)], pe & W != 0)
            }
            None => (0, false),
        }
    }

    /// The PTE table covering `addr`, without changing anything.
    #[inline]
    pub(crate) fn find(&self, phys: &Phys, addr: u64) -> Option<Found> {
        let mut t = self.pgd;
        for level in [PGD, 2] {
            let e = phys.tables.t(t).e[index(addr, level)];
            if e == 0 {
                return None;
            }
            t = ent_id(e);
        }
        let idx = index(addr, PMD);
        let pe = phys.tables.t(t).e[idx];
        if pe == 0 {
            return None;
        }
        Some(Found {
            pmd: t,
            idx,
            pt: ent_id(pe),
        })
    }

    /// The PMD table covering `addr`, allocating the PUD and PMD tables on
    /// the way; with `fallible`, each allocation is a failure point.
    fn pmd_alloc(&mut self, phys: &mut Phys, addr: u64, fallible: bool) -> Result<TableId, Errno> {
        let mut t = self.pgd;
        for level in [PGD, 2] {
            let i = index(addr, level);
            let e = phys.tables.t(t).e[i];
            t = if e == 0 {
                if fallible {
                    phys.fail.hit()?;
                }
                let n = phys.tables.alloc();
                let up = phys.tables.tm(t);
                up.e[i] = mk(n, P | W);
                up.used += 1;
                self.pages += 1;
                n
            } else {
                ent_id(e)
            };
        }
        Ok(t)
    }

    /// The PTE table covering `addr`, allocated if absent and made private to
    /// this space if shared (breaking copy-on-write page-table sharing).
    pub(crate) fn pte_table_mut(&mut self, phys: &mut Phys, addr: u64) -> TableId {
        let pmd = infallible(self.pmd_alloc(phys, addr, false));
        let i = index(addr, PMD);
        let e = phys.tables.t(pmd).e[i];
        if e == 0 {
            let n = phys.tables.alloc();
            let t = phys.tables.tm(pmd);
            t.e[i] = mk(n, P | W);
            t.used += 1;
            self.pages += 1;
            n
        } else if e & W == 0 {
            unshare(phys, pmd, i)
        } else {
            ent_id(e)
        }
    }

    /// Stores `new` in entry `k` of the private PTE table `pt`, keeping the
    /// counters. Frame references are the caller's business.
    #[inline]
    pub(crate) fn set_pte(&mut self, phys: &mut Phys, pt: TableId, k: usize, new: u64) {
        let t = phys.tables.tm(pt);
        let old = t.e[k];
        t.e[k] = new;
        let old_rss = old != 0 && ent_id(old) != ZERO_FRAME;
        let new_rss = new != 0 && ent_id(new) != ZERO_FRAME;
        t.used = t.used + (new != 0) as u32 - (old != 0) as u32;
        t.rss = t.rss + new_rss as u32 - old_rss as u32;
        self.rss = self.rss + new_rss as u64 - old_rss as u64;
    }

    /// `zap_page_range`: removes every PTE of `s..e`, dropping the frame
    /// references. A shared PTE table wholly inside the range is just
    /// dereferenced; one partly inside is made private first.
    pub(crate) fn zap(&mut self, phys: &mut Phys, s: u64, e: u64) {
        if s < e {
            self.zap_level(phys, self.pgd, PGD, 0, s, e);
        }
    }

    fn zap_level(&mut self, phys: &mut Phys, t: TableId, level: u32, base: u64, s: u64, e: u64) {
        let esz = entry_size(level);
        let i0 = ((s - base) / esz) as usize;
        let i1 = ((e - 1 - base) / esz) as usize;
        for i in i0..=i1 {
            let ent = phys.tables.t(t).e[i];
            if ent == 0 {
                continue;
            }
            let eb = base + i as u64 * esz;
            let (cs, ce) = (s.max(eb), e.min(eb + esz));
            if level == PMD {
                let mut pt = ent_id(ent);
                if ent & W == 0 && phys.tables.t(pt).refs > 1 {
                    if cs == eb && ce == eb + esz {
                        let tab = phys.tables.tm(pt);
                        tab.refs -= 1;
                        let r = tab.rss;
                        let pm = phys.tables.tm(t);
                        pm.e[i] = 0;
                        pm.used -= 1;
                        self.pages -= 1;
                        self.rss -= r as u64;
                        continue;
                    }
                    pt = unshare(phys, t, i);
                }
                self.zap_ptes(phys, pt, eb, cs, ce);
            } else {
                self.zap_level(phys, ent_id(ent), level - 1, eb, cs, ce);
            }
        }
    }

    fn zap_ptes(&mut self, phys: &mut Phys, pt: TableId, base: u64, s: u64, e: u64) {
        let Phys { tables, frames, .. } = phys;
        let tab = tables.tm(pt);
        if tab.used == 0 {
            return;
        }
        let k0 = ((s - base) >> PAGE_SHIFT) as usize;
        let k1 = ((e - base) >> PAGE_SHIFT) as usize;
        for k in k0..k1 {
            let x = tab.e[k];
            if x == 0 {
                continue;
            }
            tab.e[k] = 0;
            tab.used -= 1;
            let f = ent_id(x);
            if f != ZERO_FRAME {
                tab.rss -= 1;
                self.rss -= 1;
                frames.put(f);
            }
        }
    }

    /// `free_pgtables`: frees the tables overlapping `s..e` whose whole span
    /// `used(span_start, span_end)` says no VMA touches any more (a table
    /// stays while a VMA still covers part of it). Anything still mapped
    /// under a freed table is zapped.
    pub(crate) fn free_unused(
        &mut self,
        phys: &mut Phys,
        s: u64,
        e: u64,
        used: &dyn Fn(u64, u64) -> bool,
    ) {
        if s < e {
            self.free_level(phys, self.pgd, PGD, 0, s, e, used);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn free_level(
        &mut self,
        phys: &mut Phys,
        t: TableId,
        level: u32,
        base: u64,
        s: u64,
        e: u64,
        used: &dyn Fn(u64, u64) -> bool,
    ) {
        let esz = entry_size(level);
        let i0 = ((s - base) / esz) as usize;
        let i1 = ((e - 1 - base) / esz) as usize;
        for i in i0..=i1 {
            let ent = phys.tables.t(t).e[i];
            if ent == 0 {
                continue;
            }
            let eb = base + i as u64 * esz;
            if !used(eb, eb + esz) {
                if level == PMD {
                    self.release_pte_table(phys, ent_id(ent));
                } else {
                    self.release_table(phys, ent_id(ent), level - 1);
                }
                let tm = phys.tables.tm(t);
                tm.e[i] = 0;
                tm.used -= 1;
            } else if level > PMD {
                self.free_level(
                    phys,
                    ent_id(ent),
                    level - 1,
                    eb,
                    s.max(eb),
                    e.min(eb + esz),
                    used,
                );
            }
        }
    }

    /// Drops this space's reference on a PTE table: frees it (and its frame
    /// references) if it was the last one.
    fn release_pte_table(&mut self, phys: &mut Phys, pt: TableId) {
        let Phys { tables, frames, .. } = phys;
        let tab = tables.tm(pt);
        self.pages -= 1;
        self.rss -= tab.rss as u64;
        if tab.refs > 1 {
            tab.refs -= 1;
            return;
        }
        if tab.used > 0 {
            for &x in tab.e.iter() {
                if x != 0 {
                    frames.put(ent_id(x));
                }
            }
        }
        tables.free(pt);
    }

    /// Frees an upper table at `level` and everything below it.
    fn release_table(&mut self, phys: &mut Phys, t: TableId, level: u32) {
        if phys.tables.t(t).used > 0 {
            for i in 0..ENTRIES {
                let ent = phys.tables.t(t).e[i];
                if ent == 0 {
                    continue;
                }
                if level == PMD {
                    self.release_pte_table(phys, ent_id(ent));
                } else {
                    self.release_table(phys, ent_id(ent), level - 1);
                }
            }
        }
        phys.tables.free(t);
        self.pages -= 1;
    }

    /// Frees every table and drops every frame reference (`exit_mmap`).
    pub(crate) fn teardown(&mut self, phys: &mut Phys) {
        let pgd = self.pgd;
        self.release_table(phys, pgd, PGD);
        phys.roots.remove(&pgd);
    }

    /// The present PTE tables overlapping `s..e`, each made private, with
    /// the part of the range it covers: `(table, span base, start, end)`.
    fn pte_tables_mut(&mut self, phys: &mut Phys, s: u64, e: u64) -> Vec<(TableId, u64, u64, u64)> {
        let mut out = Vec::new();
        let mut a = s;
        while a < e {
            let base = a & !(PMD_SIZE - 1);
            let ce = e.min(base + PMD_SIZE);
            if let Some(f) = self.find(phys, a) {
                let pe = phys.tables.t(f.pmd).e[f.idx];
                let pt = if pe & W == 0 {
                    unshare(phys, f.pmd, f.idx)
                } else {
                    f.pt
                };
                out.push((pt, base, a, ce));
            }
            a = ce;
        }
        out
    }

    /// `change_protection` removing write: clears `W` in every PTE of `s..e`.
    pub(crate) fn wrprotect(&mut self, phys: &mut Phys, s: u64, e: u64) {
        for (pt, base, cs, ce) in self.pte_tables_mut(phys, s, e) {
            let tab = phys.tables.tm(pt);
            if tab.used == 0 {
                continue;
            }
            for k in ((cs - base) >> PAGE_SHIFT) as usize..((ce - base) >> PAGE_SHIFT) as usize {
                tab.e[k] &= !W;
            }
        }
    }

    /// Takes the PTEs of `s..e` out (frame references move with them):
    /// `(address, entry)` in address order.
    pub(crate) fn take_range(&mut self, phys: &mut Phys, s: u64, e: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if s >= e {
            return out;
        }
        for (pt, base, cs, ce) in self.pte_tables_mut(phys, s, e) {
            if phys.tables.t(pt).used == 0 {
                continue;
            }
            for k in ((cs - base) >> PAGE_SHIFT) as usize..((ce - base) >> PAGE_SHIFT) as usize {
                let x = phys.tables.t(pt).e[k];
                if x != 0 {
                    out.push((base + k as u64 * PAGE_SIZE, x));
                    self.set_pte(phys, pt, k, 0);
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
        let e = phys.tables.t(pmd).e[i];
        if e != 0 {
            return Ok(ent_id(e));
        }
        phys.fail.hit()?;
        let n = phys.tables.alloc();
        let t = phys.tables.tm(pmd);
        t.e[i] = mk(n, P | W);
        t.used += 1;
        self.pages += 1;
        Ok(n)
    }

    /// `copy_pte_range`: copies the present entries of `s..e` (inside one
    /// 2 MiB span) from the parent's table `src` into this (the child's)
    /// table `dst`, taking a frame reference for each; for a copy-on-write
    /// mapping `W` is cleared on both sides.
    pub(crate) fn fork_copy_ptes(
        &mut self,
        phys: &mut Phys,
        src: TableId,
        dst: TableId,
        s: u64,
        e: u64,
        cow: bool,
    ) {
        let Phys { tables, frames, .. } = phys;
        let (st, dt) = tables.pair_mut(src, dst);
        let k0 = index(s, 0);
        let k1 = k0 + ((e - s) >> PAGE_SHIFT) as usize;
        let mut rss = 0u32;
        let mut used = 0u32;
        for k in k0..k1 {
            let x = st.e[k];
            if x == 0 {
                continue;
            }
            let y = if cow { x & !W } else { x };
            st.e[k] = y;
            dt.e[k] = y;
            used += 1;
            let f = ent_id(x);
            if f != ZERO_FRAME {
                frames.get(f);
                rss += 1;
            }
        }
        dt.used += used;
        dt.rss += rss;
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
        let src = phys.tables.tm(found.pt);
        src.refs += 1;
        let r = src.rss;
        phys.tables.tm(found.pmd).e[found.idx] &= !W;
        let t = phys.tables.tm(pmd);
        debug_assert_eq!(t.e[i], 0);
        t.e[i] = mk(found.pt, P);
        t.used += 1;
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
        t: TableId,
        level: u32,
        base: u64,
        f: &mut dyn FnMut(u64, u64, u64, TableId),
    ) {
        let esz = entry_size(level);
        for i in 0..ENTRIES {
            let ent = phys.tables.t(t).e[i];
            if ent == 0 {
                continue;
            }
            let eb = base + i as u64 * esz;
            if level == PMD {
                let pt = ent_id(ent);
                for (k, &x) in phys.tables.t(pt).e.iter().enumerate() {
                    if x != 0 {
                        f(eb + k as u64 * PAGE_SIZE, x, ent, pt);
                    }
                }
            } else {
                self.walk(phys, ent_id(ent), level - 1, eb, f);
            }
        }
    }

    /// Calls `f(table, level)` for every table reachable from the PGD, the
    /// PGD included; shared PTE tables are visited once per PMD entry.
    pub(crate) fn for_each_table(&self, phys: &Phys, f: &mut dyn FnMut(TableId, u32)) {
        walk_tables(phys, self.pgd, PGD, f);
    }
}

/// Calls `f(table, level)` for `t` and every table below it.
pub(crate) fn walk_tables(phys: &Phys, t: TableId, level: u32, f: &mut dyn FnMut(TableId, u32)) {
    f(t, level);
    if level == 0 {
        return;
    }
    for i in 0..ENTRIES {
        let ent = phys.tables.t(t).e[i];
        if ent != 0 {
            walk_tables(phys, ent_id(ent), level - 1, f);
        }
    }
}

/// Breaks copy-on-write sharing of the PTE table under entry `i` of the PMD
/// table `pmd`: if others still share it, this space gets its own copy (one
/// more reference on every frame; `W` cleared in both copies so that the
/// frames themselves are now copied on write); if not, the PMD entry just
/// becomes writable again. Returns the now private table.
fn unshare(phys: &mut Phys, pmd: TableId, i: usize) -> TableId {
    let ent = phys.tables.t(pmd).e[i];
    let old = ent_id(ent);
    if phys.tables.t(old).refs == 1 {
        phys.tables.tm(pmd).e[i] = ent | W;
        return old;
    }
    let new = phys.tables.alloc();
    let Phys { tables, frames, .. } = phys;
    let (o, n) = tables.pair_mut(old, new);
    if o.used > 0 {
        for k in 0..ENTRIES {
            let x = o.e[k];
            if x == 0 {
                continue;
            }
            let y = x & !W;
            o.e[k] = y;
            n.e[k] = y;
            let f: FrameId = ent_id(x);
            frames.get(f);
        }
    }
    n.used = o.used;
    n.rss = o.rss;
    o.refs -= 1;
    tables.tm(pmd).e[i] = mk(new, P | W);
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
        assert_eq!(ent_id(mk(77, P | W)), 77);
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
        for k in 0..3 {
            let f = p.frames.alloc();
            a.set_pte(p, pt, k, mk(f, P | W));
        }
        assert_eq!((a.rss, a.pages), (3, 4));
        let found = a.find(p, addr).unwrap();
        b.fork_share(p, &found, addr).unwrap();
        assert_eq!(p.tables.t(pt).refs, 2);
        assert_eq!(b.rss, 3);
        assert!(
            !a.lookup(p, addr).1,
            "the parent's PMD entry is read-only now"
        );
        // b changes the table: it gets its own copy, every frame one more reference
        let bt = b.pte_table_mut(p, addr);
        assert_ne!(bt, pt);
        assert_eq!(p.tables.t(pt).refs, 1);
        assert_eq!(p.frames.frame(ent_id(p.tables.t(pt).e[0])).refs, 2);
        assert_eq!(
            p.tables.t(pt).e[0] & W,
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
        assert_eq!((c.rss, p.tables.t(pt).refs), (0, 1));
        for mut t in [a, b, c] {
            t.teardown(p);
        }
        assert_eq!((p.tables.live(), p.frames.live()), (0, 0));
    }
}
