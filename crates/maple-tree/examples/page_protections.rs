//! An emulator's map of guest page protections, with undo.
//!
//! A CPU emulator checks every guest memory access against the protection
//! of the page it touches. The protections change by ranges (the guest's
//! `mprotect`, a loader mapping a segment, a JIT flipping a page between
//! writable and executable), and a snapshotting emulator or a fuzzer wants
//! to roll such changes back. A `MapleTree<Prot>` holds one entry per run
//! of pages with the same protection. A store over a range cuts the entries
//! at its edges and hands back what it displaced (`insert_displaced`,
//! `remove_range_displaced`): each overlapped entry's part inside the range
//! with its protection, which is exactly what an undo log must keep.
//!
//! Run with `cargo run -p maple-tree --example page_protections`.

use std::ops::RangeInclusive;

use maple_tree::{Displaced, MapleTree};

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

/// What one change covered before it was made: the range it wrote, and the
/// protections it displaced there (unmapped parts by omission).
struct UndoRecord {
    range: RangeInclusive<u64>,
    displaced: Displaced<Prot>,
}

#[derive(Default)]
struct PageProtections {
    pages: MapleTree<Prot>,
    undo: Vec<UndoRecord>,
}

impl PageProtections {
    /// Maps `pages` pages at `addr` with `prot` (whatever was there goes).
    fn map(&mut self, addr: u64, pages: u64, prot: Prot) {
        let range = addr..=addr + pages * PAGE - 1;
        let displaced = self.pages.insert_displaced(range.clone(), prot);
        self.undo.push(UndoRecord { range, displaced });
    }

    /// Unmaps `pages` pages at `addr`.
    fn unmap(&mut self, addr: u64, pages: u64) {
        let range = addr..=addr + pages * PAGE - 1;
        let displaced = self.pages.remove_range_displaced(range.clone());
        self.undo.push(UndoRecord { range, displaced });
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
        let displaced = self.pages.insert_displaced(range.clone(), prot);
        self.undo.push(UndoRecord { range, displaced });
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
        self.pages.remove_range(record.range);
        for (range, prot) in record.displaced {
            self.pages.insert(range, prot);
        }
        true
    }

    /// The protections as maximal runs: adjacent entries with the same
    /// protection joined. The tree never merges adjacent entries by itself,
    /// so after an undo the same protections may sit in more entries than
    /// before (a cut entry comes back as its pieces); the runs are what an
    /// access check sees.
    fn runs(&self) -> Vec<(RangeInclusive<u64>, Prot)> {
        let mut runs: Vec<(RangeInclusive<u64>, Prot)> = Vec::new();
        for (range, prot) in self.pages.iter() {
            match runs.last_mut() {
                Some((last, p)) if p == prot && *last.end() + 1 == *range.start() => {
                    *last = *last.start()..=*range.end();
                }
                _ => runs.push((range, *prot)),
            }
        }
        runs
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
    let runs_before = mem.runs();
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
    assert_eq!(mem.runs(), runs_before);
    for addr in (0x40_0000..0x42_0000).step_by(PAGE as usize) {
        assert_eq!(mem.pages.get(addr), snapshot.get(addr));
    }

    // And undo the loader too: nothing is left.
    while mem.undo() {}
    assert!(mem.pages.is_empty());
    mem.pages.validate().expect("a consistent tree");
}
