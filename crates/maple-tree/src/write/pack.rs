//! Packing a level's new contents into nodes.

use super::content::{Content, Item};
use crate::node::{word_child, Kind, NodePtr, ARANGE_SLOTS};
use crate::pool::NodePool;

/// A node made by [`pack`]: where it ends, its largest gap, and how many of
/// the contents' items it holds.
#[derive(Clone, Copy)]
pub(crate) struct Packed {
    pub(crate) node: NodePtr,
    pub(crate) max: u64,
    pub(crate) gap: u64,
    pub(crate) len: usize,
}

impl Packed {
    pub(crate) const NONE: Packed = Packed {
        node: NodePtr::DANGLING,
        max: 0,
        gap: 0,
        len: 0,
    };
}

/// At most this many nodes come out of one level (see `CONTENT_CAP`).
pub(crate) const MAX_PACKED: usize = 5;

/// Splits `c` into as few nodes of `kind` as hold it, writes them, and returns
/// them in order. At the right edge of the tree (`c` ends at `u64::MAX`) nodes
/// are filled completely from the left, so that sequential stores leave full
/// nodes behind them; elsewhere the items are shared out evenly, which keeps
/// every node above its minimum.
///
/// With `reuse`, the first node is that one (an old node of `kind` whose
/// contents were copied into `c`), left as it is: the caller writes
/// `c.items()[..out[0].len]` into it later (`in_place.rs`).
pub(crate) fn pack(
    c: &Content,
    kind: Kind,
    track_gaps: bool,
    pool: &mut NodePool,
    out: &mut [Packed; MAX_PACKED],
    reuse: Option<NodePtr>,
) -> usize {
    let cap = kind.capacity();
    let k = c.len;
    let n = k.div_ceil(cap);
    assert!(n <= MAX_PACKED, "maple tree: rewrite of {k} slots");
    let right_edge = c.max() == u64::MAX;
    let (base, extra) = (k / n, k % n);
    let mut from = 0;
    let mut min = c.min;
    for (j, slot) in out.iter_mut().enumerate().take(n) {
        let size = if right_edge {
            cap.min(k - from)
        } else {
            base + (j < extra) as usize
        };
        let items = &c.items()[from..from + size];
        let (node, gap) = match reuse {
            Some(node) if j == 0 => (node, items_gap(items, min, kind, track_gaps)),
            _ => {
                let node = pool.alloc_or_abort(kind);
                (node, fill(node, items, min, track_gaps))
            }
        };
        let max = items[size - 1].end;
        *slot = Packed {
            node,
            max,
            gap,
            len: size,
        };
        from += size;
        min = max.wrapping_add(1);
    }
    debug_assert_eq!(from, k);
    n
}

/// Writes `items` into `node` (starting at `min`); returns its largest gap
/// when gaps are tracked (0 otherwise). An allocation tree's internal node
/// gets its children's gaps either way.
pub(crate) fn fill(node: NodePtr, items: &[Item], min: u64, track_gaps: bool) -> u64 {
    let last = items.len() - 1;
    let kind = node.kind();
    if kind == Kind::Leaf {
        // The kind read once, and the count and value bits set in one
        // header store (the node is not linked yet).
        let mut bits = 0u16;
        for (i, item) in items.iter().enumerate() {
            if i < last {
                node.set_pivot(i, item.end);
            }
            node.set_leaf_word(i, item.word);
            bits |= (item.is_present() as u16) << i;
        }
        node.publish_leaf(items.len(), bits);
    } else {
        for (i, item) in items.iter().enumerate() {
            if i < last {
                node.set_pivot(i, item.end);
            }
            node.set_word(i, item.word);
        }
        node.set_count(items.len());
    }
    match kind {
        Kind::Leaf => {
            if track_gaps {
                Content::leaf_gap(items, min)
            } else {
                0
            }
        }
        Kind::ARange => {
            debug_assert!(items.len() <= ARANGE_SLOTS);
            let mut gap = 0;
            for (i, item) in items.iter().enumerate() {
                node.set_gap(i, item.aux);
                gap = gap.max(item.aux);
            }
            gap
        }
        Kind::Range => 0,
    }
}

/// The largest gap a node holding `items` (from `min`) would have, as
/// [`fill`] returns it, without writing the node.
fn items_gap(items: &[Item], min: u64, kind: Kind, track_gaps: bool) -> u64 {
    match kind {
        Kind::Leaf if track_gaps => Content::leaf_gap(items, min),
        Kind::Leaf | Kind::Range => 0,
        Kind::ARange => items.iter().map(|item| item.aux).max().unwrap_or(0),
    }
}

/// The child an item points to.
///
/// # Safety
/// `item` was taken from an internal node (or made with a child) whose
/// child is still live.
#[inline]
pub(crate) unsafe fn item_child(item: &Item) -> NodePtr {
    // SAFETY: the caller's promise.
    unsafe { word_child(item.word) }
}
