//! `validate()`: every structural invariant, checked from the root down; and
//! the node census behind `stats()`.

use crate::error::CheckError;
use crate::gap::leaf_gap;
use crate::node::{Kind, NodePtr, LEAF_SLOTS};
use crate::stats::Stats;
use crate::tree::MapleTree;
use alloc::format;
use alloc::string::String;

struct Checker {
    alloc: bool,
    height: usize,
    entries: usize,
    /// Whether the last slot of the previous leaf (in key order) was absent.
    prev_absent: bool,
    /// The next index the walk expects to be covered.
    next: u64,
}

fn fail(
    level: usize,
    min: u64,
    max: u64,
    invariant: &'static str,
    detail: String,
) -> Result<(), CheckError> {
    Err(CheckError {
        level,
        node_range: min..=max,
        invariant,
        detail,
    })
}

/// Checks `tree` completely.
pub(crate) fn validate<V>(tree: &MapleTree<V>) -> Result<(), CheckError> {
    let Some(root) = tree.root else {
        if tree.height() != 0 || tree.len != 0 {
            return fail(
                0,
                0,
                u64::MAX,
                "empty tree",
                format!("no root but height {} and len {}", tree.height(), tree.len),
            );
        }
        return Ok(());
    };
    if tree.height() == 0 {
        return fail(
            0,
            0,
            u64::MAX,
            "height",
            String::from("a root but height 0"),
        );
    }
    let mut c = Checker {
        alloc: tree.alloc,
        height: tree.height(),
        entries: 0,
        prev_absent: false,
        next: 0,
    };
    c.node(root, tree.height() - 1, 0, u64::MAX, true)?;
    if tree.height() == 1 && root.count() == 1 && !root.is_present(0) {
        return fail(
            0,
            0,
            u64::MAX,
            "empty tree",
            String::from("a root leaf with no entry should be no root"),
        );
    }
    if c.entries != tree.len {
        return fail(
            tree.height() - 1,
            0,
            u64::MAX,
            "len",
            format!("len() is {} but {} entries are stored", tree.len, c.entries),
        );
    }
    Ok(())
}

impl Checker {
    /// Checks the subtree of `node` at `level`, covering `min..=max`; returns
    /// its largest gap.
    fn node(
        &mut self,
        node: NodePtr,
        level: usize,
        min: u64,
        max: u64,
        root: bool,
    ) -> Result<u64, CheckError> {
        let kind = node.kind();
        let want = match (level, self.alloc) {
            (0, _) => Kind::Leaf,
            (_, true) => Kind::ARange,
            (_, false) => Kind::Range,
        };
        if kind != want {
            fail(
                level,
                min,
                max,
                "node kind",
                format!(
                    "{kind:?} node where {want:?} belongs (uniform height {})",
                    self.height
                ),
            )?;
        }
        let count = node.count();
        if count == 0 || count > kind.capacity() {
            fail(
                level,
                min,
                max,
                "slot count",
                format!("{count} slots, capacity {}", kind.capacity()),
            )?;
        }
        if !root && max != u64::MAX && count < kind.min_slots() {
            fail(
                level,
                min,
                max,
                "minimum occupancy",
                format!("{count} slots, minimum {}", kind.min_slots()),
            )?;
        }
        if min != self.next {
            fail(
                level,
                min,
                max,
                "coverage",
                format!("node starts at {min:#x}, expected {:#x}", self.next),
            )?;
        }
        // Pivots: strictly increasing, every slot non-empty, inside the node.
        let mut start = min;
        for i in 0..count - 1 {
            let p = node.pivot(i);
            if p < start || p >= max {
                fail(
                    level,
                    min,
                    max,
                    "pivot order",
                    format!("pivot {i} is {p:#x}: slot {i} would be empty or leave the node"),
                )?;
            }
            start = p + 1;
        }
        if kind == Kind::Leaf {
            return self.leaf(node, min, max);
        }
        let mut gap = 0;
        for i in 0..count {
            let (s, e) = (node.slot_start(i, min), node.slot_end(i, max));
            let child_gap = self.node(node.child(i), level - 1, s, e, false)?;
            if kind == Kind::ARange {
                if node.gap(i) != child_gap {
                    fail(
                        level,
                        min,
                        max,
                        "recorded gap",
                        format!(
                            "child {i} records gap {:#x}, its largest gap is {child_gap:#x}",
                            node.gap(i)
                        ),
                    )?;
                }
                gap = gap.max(child_gap);
            }
        }
        Ok(gap)
    }

    fn leaf(&mut self, leaf: NodePtr, min: u64, max: u64) -> Result<u64, CheckError> {
        let count = leaf.count();
        if count < LEAF_SLOTS && leaf.present_bits() >> count != 0 {
            fail(
                0,
                min,
                max,
                "presence bits",
                format!("bits {:#06x} set beyond {count} slots", leaf.present_bits()),
            )?;
        }
        for i in 0..count {
            let absent = !leaf.is_present(i);
            if absent && self.prev_absent {
                let at = leaf.slot_start(i, min);
                fail(
                    0,
                    min,
                    max,
                    "adjacent absent slots",
                    format!("the absent slot at {at:#x} follows another absent slot"),
                )?;
            }
            self.prev_absent = absent;
            self.entries += !absent as usize;
        }
        self.next = max.wrapping_add(1);
        Ok(if self.alloc {
            leaf_gap(leaf, min, max)
        } else {
            0
        })
    }
}

/// Counts the nodes of each kind below `node` into `s`.
pub(crate) fn count_nodes(node: NodePtr, s: &mut Stats) {
    match node.kind() {
        Kind::Leaf => s.leaves += 1,
        Kind::Range => s.internal += 1,
        Kind::ARange => s.alloc_internal += 1,
    }
    if !node.is_leaf() {
        for i in 0..node.count() {
            count_nodes(node.child(i), s);
        }
    }
}

/// Draws the tree one node per line, indented by depth:
/// `leaf 0x0..=0xff [0x0..=0x9: v, 0xa..=0xf: -, ..]`.
pub(crate) fn dump<V: core::fmt::Debug>(tree: &MapleTree<V>) -> String {
    let mut out = String::new();
    match tree.root {
        None => out.push_str("(empty)\n"),
        Some(root) => dump_node::<V>(&mut out, root, 0, u64::MAX, 0),
    }
    out
}

fn dump_node<V: core::fmt::Debug>(
    out: &mut String,
    node: NodePtr,
    min: u64,
    max: u64,
    depth: usize,
) {
    use core::fmt::Write;
    let _ = write!(
        out,
        "{:indent$}{:?} {min:#x}..={max:#x} [",
        "",
        node.kind(),
        indent = depth * 2
    );
    for i in 0..node.count() {
        let (s, e) = (node.slot_start(i, min), node.slot_end(i, max));
        let sep = if i == 0 { "" } else { ", " };
        match node.kind() {
            Kind::Leaf if node.is_present(i) => {
                // SAFETY: a node of the borrowed tree, whose values are `V`s.
                let value = unsafe { node.value::<V>(i) };
                let _ = write!(out, "{sep}{s:#x}..={e:#x}: {value:?}");
            }
            Kind::Leaf => {
                let _ = write!(out, "{sep}{s:#x}..={e:#x}: -");
            }
            Kind::ARange => {
                let _ = write!(out, "{sep}{s:#x}..={e:#x} gap {:#x}", node.gap(i));
            }
            Kind::Range => {
                let _ = write!(out, "{sep}{s:#x}..={e:#x}");
            }
        }
    }
    out.push_str("]\n");
    if !node.is_leaf() {
        for i in 0..node.count() {
            dump_node::<V>(
                out,
                node.child(i),
                node.slot_start(i, min),
                node.slot_end(i, max),
                depth + 1,
            );
        }
    }
}
