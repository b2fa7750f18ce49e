//! An emulator's map of guest page protections, with undo.
//!
//! A CPU emulator checks every guest memory access against the protection
//! of the page it touches. The protections change by ranges (the guest's
//! `mprotect`, a loader mapping a segment, a JIT flipping a page between
//! writable and executable), and a snapshotting emulator or a fuzzer wants
//! to roll such changes back. A `MapleTree<Prot>` holds one entry per run
//! of pages with the same protection; a store over a range cuts the entries
//! at its edges, and the undo log records the entries each store overlapped
//! so they can be put back.
//!
//! Run with `cargo run -p maple-tree --example page_protections`.

use std::ops::RangeInclusive;

use maple_tree::MapleTree;

const PAGE: u64 = 0x1000;

/// Access rights of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Prot {
    read: bool,
    write: bool,
    exec: bool,
}

const R: Prot = Prot {
    read: true,
    write: false,
    exec: false,
};
const RW: Prot = Prot {
    read: true,
    write: true,
    exec: false,
};
const RX: Prot = Prot {
    read: true,
    write: false,
    exec: true,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    Exec,
}

#[derive(Debug, PartialEq, Eq)]
enum Fault {
    /// No page mapped at the address.
    Unmapped(u64),
    /// The page is mapped without the right.
    Protection(u64, Access),
}

/// What one change covered before it was made: every entry it overlapped,
/// whole (the unmapped parts by omission). Whole, because the tree never
/// merges adjacent entries: a change that cuts an entry leaves its outer
/// parts as separate entries, and putting back only the cut-out piece would
/// leave the entry in three pieces. Undoing rewrites the whole extent of
/// the old entries, so the tree comes back entry for entry.
struct UndoRecord {
    extent: RangeInclusive<u64>,
    before: Vec<(RangeInclusive<u64>, Prot)>,
}

#[derive(Default)]
struct PageProtections {
    pages: MapleTree<Prot>,
    undo: Vec<UndoRecord>,
}

impl PageProtections {
    /// Records what `range` holds now, so that it can be put back.
    fn record(&mut self, range: RangeInclusive<u64>) {
        let before: Vec<_> = self
            .pages
            .range(range.clone())
            .map(|(r, prot)| (r, *prot))
            .collect();
        let first = before.first().map_or(*range.start(), |(r, _)| *r.start());
        let last = before.last().map_or(*range.end(), |(r, _)| *r.end());
        let extent = first.min(*range.start())..=last.max(*range.end());
        self.undo.push(UndoRecord { extent, before });
    }

    /// Maps `pages` pages at `addr` with `prot` (whatever was there goes).
    fn map(&mut self, addr: u64, pages: u64, prot: Prot) {
        let range = addr..=addr + pages * PAGE - 1;
        self.record(range.clone());
        self.pages.insert(range, prot);
    }

    /// Unmaps `pages` pages at `addr`.
    fn unmap(&mut self, addr: u64, pages: u64) {
        let range = addr..=addr + pages * PAGE - 1;
        self.record(range.clone());
        self.pages.remove_range(range);
    }

    /// Changes the protection of mapped pages; like `mprotect`, a hole in the
    /// range fails and changes nothing.
    fn protect(&mut self, addr: u64, pages: u64, prot: Prot) -> Result<(), Fault> {
        let range = addr..=addr + pages * PAGE - 1;
        // Every page of the range must be mapped: walk the ranges with a
        // cursor, gaps included.
        let mut cursor = self.pages.cursor(addr);
        loop {
            if cursor.get().is_none() {
                return Err(Fault::Unmapped(cursor.index().max(addr)));
            }
            if *cursor.range().end() >= *range.end() {
                break;
            }
            cursor.next_range();
        }
        self.record(range.clone());
        self.pages.insert(range, prot);
        Ok(())
    }

    /// The check an emulated load, store or instruction fetch makes.
    fn check(&self, addr: u64, access: Access) -> Result<(), Fault> {
        let prot = self.pages.get(addr).ok_or(Fault::Unmapped(addr))?;
        let allowed = match access {
            Access::Read => prot.read,
            Access::Write => prot.write,
            Access::Exec => prot.exec,
        };
        if allowed {
            Ok(())
        } else {
            Err(Fault::Protection(addr, access))
        }
    }

    /// Rolls back the last change; false if there is none.
    fn undo(&mut self) -> bool {
        let Some(record) = self.undo.pop() else {
            return false;
        };
        self.pages.remove_range(record.extent);
        for (range, prot) in record.before {
            self.pages.insert(range, prot);
        }
        true
    }

    fn print(&self, title: &str) {
        println!("{title}:");
        for (range, prot) in self.pages.iter() {
            println!(
                "  {:#010x}-{:#010x} {}{}{}",
                range.start(),
                range.end() + 1,
                if prot.read { 'r' } else { '-' },
                if prot.write { 'w' } else { '-' },
                if prot.exec { 'x' } else { '-' },
            );
        }
    }
}

fn main() {
    let mut mem = PageProtections::default();

    // The loader maps a program: text, read-only data, data and bss.
    mem.map(0x40_0000, 16, RX);
    mem.map(0x41_0000, 4, R);
    mem.map(0x41_4000, 8, RW);
    mem.print("after loading");
    assert_eq!(mem.check(0x40_0abc, Access::Exec), Ok(()));
    assert_eq!(
        mem.check(0x40_0abc, Access::Write),
        Err(Fault::Protection(0x40_0abc, Access::Write))
    );
    assert_eq!(
        mem.check(0x41_c000, Access::Read),
        Err(Fault::Unmapped(0x41_c000))
    );

    // Snapshot before the guest runs: duplication is O(n).
    let snapshot = mem.pages.clone();
    let undo_depth = mem.undo.len();

    // The guest's JIT makes two data pages executable (W^X: not writable),
    // unmaps part of its read-only data, and asks for a protection change
    // over a hole, which fails and changes nothing.
    mem.protect(0x41_6000, 2, RX).unwrap();
    mem.unmap(0x41_2000, 2);
    assert_eq!(
        mem.protect(0x41_0000, 8, RW),
        Err(Fault::Unmapped(0x41_2000))
    );
    mem.print("after the guest ran");
    assert_eq!(mem.check(0x41_6000, Access::Exec), Ok(()));
    assert_eq!(
        mem.check(0x41_3000, Access::Read),
        Err(Fault::Unmapped(0x41_3000))
    );
    // The data segment is now three entries: rw-, r-x, rw-.
    assert_eq!(mem.pages.range(0x41_4000..0x41_c000).count(), 3);

    // Roll the guest back, change by change, to the snapshot.
    while mem.undo.len() > undo_depth {
        assert!(mem.undo());
    }
    mem.print("after undo");
    assert_eq!(mem.pages, snapshot);

    // And undo the loader too: nothing is left.
    while mem.undo() {}
    assert!(mem.pages.is_empty());
    mem.pages.validate().expect("a consistent tree");
}
