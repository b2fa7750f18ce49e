//! The in-place write paths: exact fit and append (seed 002).
//!
//! Neither moves an existing slot: exact fit replaces one slot word, append
//! writes the new slots past the leaf's last one and then shortens the old
//! last slot by storing its pivot. Both keep the path valid.

use crate::node::value_word;
use crate::tree::MapleTree;
use crate::walk::Path;
use core::ops::RangeInclusive;

impl<V> MapleTree<V> {
    /// The range is exactly the slot `path` leads to.
    pub(super) fn store_exact<D: FnMut(RangeInclusive<u64>, V)>(
        &mut self,
        path: &Path,
        value: V,
        displaced: &mut D,
    ) {
        let leaf = *path.leaf();
        let (node, i) = (leaf.node, leaf.idx);
        let word = value_word(value);
        if node.is_present(i) {
            let old = node.take_value::<V>(i);
            node.set_word(i, word);
            node.set_present_bits(node.present_bits() | 1 << i);
            displaced(leaf.start()..=leaf.end(), old);
        } else {
            node.set_word(i, word);
            node.set_present_bits(node.present_bits() | 1 << i);
            self.len += 1;
            self.refresh_leaf_gap(path);
        }
        self.paths.exact_fit += 1;
    }

    /// The range lies inside the absent last slot of the leaf, which has room
    /// for the extra slots.
    pub(super) fn store_append(&mut self, path: &Path, first: u64, last: u64, value: V) {
        let leaf = *path.leaf();
        let (node, i) = (leaf.node, leaf.idx);
        let (start, end) = (leaf.start(), leaf.end());
        let word = value_word(value);
        let mut bits = node.present_bits();
        let mut count = node.count();
        // Slot i stays absent before `first` (if anything is left of it there);
        // the value comes next; the rest of the old range stays absent.
        let at = if first > start { i + 1 } else { i };
        node.set_word(at, word);
        bits |= 1 << at;
        if at > i {
            count += 1;
        }
        if last < end {
            count += 1;
            node.set_pivot(at, last);
        }
        if at > i {
            node.set_pivot(i, first - 1);
        }
        // One store publishes the new slots to concurrent readers.
        node.publish_leaf(count, bits);
        self.len += 1;
        self.paths.append += 1;
        self.refresh_leaf_gap(path);
    }

    /// After an in-place change of the leaf `path` leads to, records its new
    /// largest gap in the levels above (allocation trees only).
    pub(crate) fn refresh_leaf_gap(&mut self, path: &Path) {
        if !self.alloc || self.height < 2 {
            return;
        }
        let leaf = path.leaf();
        let gap = crate::gap::leaf_gap(leaf.node, leaf.min, leaf.max);
        self.update_gaps(path, 1, gap);
    }
}
