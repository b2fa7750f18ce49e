//! The new contents of one level while a write is rebuilt: a short run of
//! slots (leaf values or children) that will be packed into nodes.

use crate::node::{child_word, span, Kind, NodePtr, Word};
use core::mem::MaybeUninit;

/// Room for the widest rewrite: two nodes' outer parts, three new items, and a
/// neighbour pulled in to merge absent ranges or to refill an underfull node.
pub(crate) const CONTENT_CAP: usize = 48;

/// One slot of new contents.
#[derive(Clone, Copy)]
pub(crate) struct Item {
    /// Last index the slot covers.
    pub(crate) end: u64,
    /// Value encoding (leaves) or child pointer (internal nodes).
    pub(crate) word: Word,
    /// Leaves: 1 when the slot holds a value. Internal nodes: the child's largest gap.
    pub(crate) aux: u64,
}

impl Item {
    #[inline]
    pub(crate) fn is_present(&self) -> bool {
        self.aux != 0
    }
}

/// A run of items covering `min ..= items[len-1].end` without holes.
pub(crate) struct Content {
    /// `items[..len]` are initialised. The rest is left uninitialised: a
    /// rebuild makes one of these per store, and zeroing all 48 items
    /// (1,152 bytes) cost about 84 instructions each time (callgrind).
    items: [MaybeUninit<Item>; CONTENT_CAP],
    pub(crate) len: usize,
    pub(crate) min: u64,
}

impl Content {
    #[inline]
    pub(crate) fn new(min: u64) -> Content {
        Content {
            items: [const { MaybeUninit::uninit() }; CONTENT_CAP],
            len: 0,
            min,
        }
    }

    /// Item `i`, which must be below `len`.
    #[inline]
    fn item(&self, i: usize) -> &Item {
        assert!(i < self.len);
        // SAFETY: `items[..len]` are initialised.
        unsafe { self.items[i].assume_init_ref() }
    }

    /// Item `i`, which must be below `len`, to change.
    #[inline]
    fn item_mut(&mut self, i: usize) -> &mut Item {
        assert!(i < self.len);
        // SAFETY: `items[..len]` are initialised.
        unsafe { self.items[i].assume_init_mut() }
    }

    /// The last item, to change (there must be one).
    #[inline]
    pub(crate) fn last_mut(&mut self) -> &mut Item {
        self.item_mut(self.len - 1)
    }

    /// Starts over for a new level.
    #[inline]
    pub(crate) fn reset(&mut self, min: u64) {
        self.len = 0;
        self.min = min;
    }

    #[inline]
    pub(crate) fn items(&self) -> &[Item] {
        // SAFETY: `items[..len]` are initialised, and `MaybeUninit<Item>`
        // has the layout of `Item`.
        unsafe { core::slice::from_raw_parts(self.items.as_ptr().cast::<Item>(), self.len) }
    }

    /// Last index covered.
    #[inline]
    pub(crate) fn max(&self) -> u64 {
        self.item(self.len - 1).end
    }

    #[inline]
    pub(crate) fn first_absent(&self) -> bool {
        self.len > 0 && !self.item(0).is_present()
    }

    #[inline]
    pub(crate) fn last_absent(&self) -> bool {
        self.len > 0 && !self.item(self.len - 1).is_present()
    }

    /// Appends a leaf slot; an absent slot after an absent slot widens it instead.
    #[inline]
    pub(crate) fn push_leaf(&mut self, end: u64, word: Option<Word>) {
        match word {
            Some(word) => self.push(Item { end, word, aux: 1 }),
            None if self.last_absent() => self.last_mut().end = end,
            None => self.push(Item {
                end,
                word: MaybeUninit::uninit(),
                aux: 0,
            }),
        }
    }

    /// Appends a child.
    #[inline]
    pub(crate) fn push_child(&mut self, end: u64, child: NodePtr, gap: u64) {
        self.push(Item {
            end,
            word: child_word(child),
            aux: gap,
        });
    }

    #[inline]
    fn push(&mut self, item: Item) {
        assert!(
            self.len < CONTENT_CAP,
            "maple tree: rewrite buffer overflow"
        );
        self.items[self.len] = MaybeUninit::new(item);
        self.len += 1;
    }

    /// Appends slots `from..to` of `node` (which ends at `max`) as they are.
    #[inline]
    pub(crate) fn push_slots(&mut self, node: NodePtr, from: usize, to: usize, max: u64) {
        if from >= to {
            return;
        }
        // One read of the header for all the slots (it is an atomic, so
        // the compiler cannot merge the reads `slot_item` makes per slot).
        let snap = node.peek();
        if !snap.is_leaf() {
            for i in from..to {
                self.push(slot_item(node, i, max));
            }
            return;
        }
        for i in from..to {
            let end = snap.slot_end(i, max);
            if snap.is_present(i) {
                self.push(Item {
                    end,
                    word: node.leaf_word(i),
                    aux: 1,
                });
            } else if self.last_absent() {
                self.last_mut().end = end;
            } else {
                self.push(Item {
                    end,
                    word: MaybeUninit::uninit(),
                    aux: 0,
                });
            }
        }
    }

    /// Puts every slot of `node` (covering `min..=max`) in front, merging an
    /// absent last slot of `node` with an absent first item.
    pub(crate) fn prepend_node(&mut self, node: NodePtr, min: u64, max: u64) {
        let mut k = node.count();
        let merge = node.is_leaf() && !node.is_present(k - 1) && self.first_absent();
        if merge {
            k -= 1;
        }
        assert!(
            self.len + k <= CONTENT_CAP,
            "maple tree: rewrite buffer overflow"
        );
        self.items.copy_within(0..self.len, k);
        let snap = node.peek();
        for i in 0..k {
            let item = if snap.is_leaf() {
                Item {
                    end: snap.slot_end(i, max),
                    word: node.leaf_word(i),
                    aux: snap.is_present(i) as u64,
                }
            } else {
                slot_item(node, i, max)
            };
            self.items[i] = MaybeUninit::new(item);
        }
        self.len += k;
        self.min = min;
    }

    /// Puts every slot of `node` (ending at `max`) at the end.
    pub(crate) fn append_node(&mut self, node: NodePtr, max: u64) {
        self.push_slots(node, 0, node.count(), max);
    }

    /// Largest absent range among leaf items, for a node starting at `min`.
    pub(crate) fn leaf_gap(items: &[Item], min: u64) -> u64 {
        let mut gap = 0;
        let mut start = min;
        for item in items {
            if !item.is_present() {
                gap = gap.max(span(start, item.end));
            }
            start = item.end.wrapping_add(1);
        }
        gap
    }
}

/// Slot `i` of `node` (ending at `max`) as an item.
#[inline]
pub(crate) fn slot_item(node: NodePtr, i: usize, max: u64) -> Item {
    let aux = match node.kind() {
        Kind::Leaf => node.is_present(i) as u64,
        Kind::ARange => node.gap(i),
        Kind::Range => 0,
    };
    Item {
        end: node.slot_end(i, max),
        word: node.word(i),
        aux,
    }
}
