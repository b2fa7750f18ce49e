//! The general write: rebuild the leaf (or the two leaves) a store touches,
//! then carry the change up level by level.
//!
//! A store of `first..=last` follows two paths down, to the slot holding
//! `first` (`lp`) and to the slot holding `last` (`rp`). They share the levels
//! above the node where they part. Every subtree strictly between the two
//! paths lies inside the stored range and is dropped whole. Then, at each
//! level `h`, the new contents are
//!
//! ```text
//! lp's node [.. lp slot]  ++  what level h-1 produced  ++  rp's node [rp slot + 1 ..]
//! ```
//!
//! (at the leaf level, the middle is the left piece of the entry cut at
//! `first`, the new entry, and the right piece of the entry cut at `last`).
//! The contents are packed into one to five nodes (split), which replace
//! `lp`'s through `rp`'s node in the level above. Contents below a node's
//! minimum take in a neighbour first (rebalance); an absent range that now
//! touches an absent range of the neighbouring leaf takes that leaf in too, so
//! that two absent slots never sit side by side, not even across leaves. The
//! climb stops at the first level where one node was replaced by one node:
//! the parent then only needs its child pointer (and gap) updated. At the top
//! the root may grow a level or, left with one child, shrink.
//!
//! In a plain tree, the first node packed at each level goes into the old
//! node it replaces (the one the left path passes through), written once
//! the new nodes are linked (`in_place.rs`). Every other node whose
//! contents were copied out is kept in a `Retired` list and given back only
//! after the nodes that replace it are linked (so the tree never points at
//! a freed node); the pool then hands the same memory to the next store's
//! allocations while it is in cache. In RCU mode nothing is written in
//! place: readers may be inside the old nodes.

use super::content::{slot_item, Content};
use super::in_place::InPlace;
use super::pack::{item_child, pack, Packed, MAX_PACKED};
use super::retired::Retired;
use super::split::{kept_values, Split};
use crate::displaced::Displace;
use crate::gap::{beside, gap_after, node_gap};
use crate::limbo::Garbage;
use crate::node::{value_word, Kind, NodePtr};
use crate::tree::MapleTree;
use crate::walk::{Path, MAX_HEIGHT};

impl<V> MapleTree<V> {
    /// Stores `value` (or nothing) over `first..=last` by rebuilding nodes.
    /// `lp` leads to `first`. Returns the lowest level of `lp` that is still
    /// valid afterwards (`usize::MAX` when the root changed).
    pub(crate) fn store_general<S, D>(
        &mut self,
        lp: &mut Path,
        first: u64,
        last: u64,
        value: Option<V>,
        split: &mut S,
        displaced: &mut D,
    ) -> usize
    where
        S: Split<V>,
        D: Displace<V>,
    {
        let height = self.height();
        let plain = !self.in_rcu_mode();
        // The nodes this store replaces stay as they are until the new ones
        // are linked.
        let mut retired = Retired::new();
        let mut in_place = InPlace::new();
        #[cfg(debug_assertions)]
        let live_before = self.pool().live();
        let mut rp = Path::new();
        right_path(lp, &mut rp, last);
        let (ll, rl) = (lp.lv[0], rp.lv[0]);
        let spanning = ll.node != rl.node;

        // New leaf contents. Pieces are made before anything is changed, so a
        // panicking `split` leaves the tree as it was.
        let mut c = Content::new(ll.min);
        c.push_slots(ll.node, 0, ll.idx, ll.max);
        // Both pieces stay owned values until both exist: if the second
        // `split` panics, the first is dropped, not leaked.
        let (start, end) = (ll.start(), rl.end());
        let left_cut = start < first && ll.node.is_present(ll.idx);
        let right_cut = end > last && rl.node.is_present(rl.idx);
        let same = !spanning && ll.idx == rl.idx;
        let (left_keeps, right_keeps) = kept_values::<V, S>(left_cut, right_cut, same);
        let left_piece = (left_cut && !left_keeps)
            // SAFETY: a leaf of this tree, whose values are `V`s; the
            // reference ends with the call.
            .then(|| split.part(unsafe { ll.node.value::<V>(ll.idx) }, start..=first - 1));
        let right_piece = (right_cut && !right_keeps)
            // SAFETY: as above.
            .then(|| split.part(unsafe { rl.node.value::<V>(rl.idx) }, last + 1..=end));
        // No user code runs from here on. A part that keeps its entry's
        // value takes the slot's word; the slot is passed over below.
        let made = left_cut as usize + right_cut as usize + value.is_some() as usize;
        let left_word = match left_piece {
            Some(v) => Some(value_word(v)),
            None => left_keeps.then(|| ll.node.leaf_word(ll.idx)),
        };
        let right_word = match right_piece {
            Some(v) => Some(value_word(v)),
            None => right_keeps.then(|| rl.node.leaf_word(rl.idx)),
        };
        let (l_kept, r_kept) = (
            (left_keeps as u32) << ll.idx,
            (right_keeps as u32) << rl.idx,
        );
        if start < first {
            c.push_leaf(first - 1, left_word);
        }
        c.push_leaf(last, value.map(value_word));
        if end > last {
            c.push_leaf(end, right_word);
        }
        c.push_slots(rl.node, rl.idx + 1, rl.node.count(), rl.max);

        let rl_is_last_slot = rl.idx + 1 == rl.node.count();

        // Everything the store covers goes, in key order.
        let l_end = if spanning {
            ll.node.count()
        } else {
            rl.idx + 1
        };
        let ll_kept = if spanning { l_kept } else { l_kept | r_kept };
        self.displace_slots(ll.node, ll.idx, l_end, ll.min, ll.max, ll_kept, displaced);
        if spanning {
            self.free_between(lp, &rp, displaced, &mut retired);
            self.displace_slots(rl.node, 0, rl.idx + 1, rl.min, rl.max, r_kept, displaced);
            // Its slots were copied into `c` or displaced; the new
            // leaves replace it.
            retired.push(rl.node);
            self.count_path(|p| &mut p.spanning);
        }
        // The same for `ll`.
        retired.push(ll.node);
        self.entries_added(made);

        // Absent ranges must not meet across a leaf boundary.
        if ll.idx == 0 && c.first_absent() && c.min > 0 && neighbour_edge_absent(lp, height, false)
        {
            self.widen_left(lp, &rp, 0, &mut c, &mut retired);
        }
        if rl_is_last_slot
            && c.last_absent()
            && c.max() < u64::MAX
            && neighbour_edge_absent(&rp, height, true)
        {
            self.widen_right(lp, &mut rp, 0, &mut c, &mut retired);
        }

        let internal = self.internal_kind();
        let mut out = [Packed::NONE; MAX_PACKED];
        // The levels above the leaves are packed from `up`, so that `c`
        // keeps the leaf contents until the old leaf is written (`in_place`).
        let mut up = Content::new(0);
        // Whether `out[0]` already holds this level's one new node: a parent
        // copied whole with its new children (`copy_children`), made without
        // contents or packing.
        let mut copied = false;
        let mut h = 0;
        loop {
            let top = h + 1 == height;
            let mut single = lp.lv[h].node == rp.lv[h].node;
            let n = if copied {
                copied = false;
                1
            } else {
                let cur = if h == 0 { &mut c } else { &mut up };
                let kind = if h == 0 { Kind::Leaf } else { internal };
                if !top && cur.len < kind.min_slots() && cur.max() < u64::MAX {
                    if !self.widen_left(lp, &rp, h, cur, &mut retired) {
                        self.widen_right(lp, &mut rp, h, cur, &mut retired);
                    }
                    single = false;
                    self.count_path(|p| &mut p.rebalance);
                }
                let reuse = plain.then(|| lp.lv[h].node);
                let n = pack(cur, kind, self.is_alloc(), self.pool_mut(), &mut out, reuse);
                if let Some(node) = reuse {
                    // Not freed after all: it takes the first packed node.
                    retired.take_back(node);
                    if h == 0 {
                        in_place.leaf(node, out[0].len);
                    } else {
                        in_place.upper(node, cur, out[0].len);
                    }
                }
                n
            };
            if n > 1 {
                self.count_path(|p| &mut p.split);
            } else if h == 0 && single {
                self.count_path(|p| &mut p.node_rewrite);
            }
            if top {
                // A single top node becomes the root, which `set_root` reads;
                // more get a new root above them, which may fail, first.
                if n == 1 {
                    in_place.write(&c);
                }
                self.set_root(&out[..n], h, &mut retired);
                in_place.write(&c);
                #[cfg(debug_assertions)]
                self.check_taken(live_before, height);
                // SAFETY: the new root is installed; nothing links the
                // retired nodes any more, and each was retired once.
                unsafe { self.release(&retired) };
                return usize::MAX;
            }
            let (pl, pr) = (lp.lv[h + 1], rp.lv[h + 1]);
            if single && n == 1 {
                pl.node.set_child(pl.idx, out[0].node);
                if self.is_alloc() {
                    self.update_gaps(lp, h + 1, out[0].gap);
                }
                in_place.write(&c);
                #[cfg(debug_assertions)]
                self.check_taken(live_before, height);
                // SAFETY: the new node is linked in place of the old
                // subtree; nothing links the retired nodes any more, and
                // each was retired once.
                unsafe { self.release(&retired) };
                return h + 1;
            }
            if pl.node == pr.node
                && self.may_splice_parent()
                && self.splice_children(lp, h + 1, pr.idx, &out[..n])
            {
                in_place.write(&c);
                #[cfg(debug_assertions)]
                self.check_taken(live_before, height);
                // SAFETY: the new nodes are linked in the parent in place of
                // the old ones; nothing links the retired nodes any more,
                // and each was retired once.
                unsafe { self.release(&retired) };
                return h + 1;
            }
            if pl.node == pr.node && self.may_copy_parent() {
                if let Some(copy) = self.copy_children(lp, h + 1, pr.idx, &out[..n]) {
                    // The copy replaces the parent, one node for one: the
                    // next level links it.
                    retired.push(pl.node);
                    out[0] = copy;
                    copied = true;
                    h += 1;
                    continue;
                }
            }
            up.reset(pl.min);
            up.push_slots(pl.node, 0, pl.idx, pl.max);
            for p in &out[..n] {
                up.push_child(p.max, p.node, p.gap);
            }
            up.push_slots(pr.node, pr.idx + 1, pr.node.count(), pr.max);
            // Its slots were copied into `up`; the packed nodes
            // replace it.
            retired.push(pl.node);
            if pr.node != pl.node {
                // The same for `pr`, which is another node.
                retired.push(pr.node);
            }
            h += 1;
        }
    }

    /// Replaces children `lp.lv[p].idx..=to` of the internal node at level
    /// `p` of `lp` by `new`, in place, when the node still fits and keeps its
    /// minimum (a root keeps at least two children): the parent of a split
    /// leaf takes the new leaf beside the old one's replacement, like
    /// `BTreeMap`'s insert into a node with room, instead of being rebuilt
    /// into a new node with its own parent rewritten. False, having changed
    /// nothing, when it does not fit.
    ///
    /// Not with concurrent readers: they would see the slots move (`plan.rs`
    /// decides, in [`may_splice_parent`](Self::may_splice_parent)).
    fn splice_children(&mut self, lp: &Path, p: usize, to: usize, new: &[Packed]) -> bool {
        let Some(new_count) = self.spliced_count(lp, p, to, new.len()) else {
            return false;
        };
        let at = lp.lv[p];
        let (node, from) = (at.node, at.idx);
        let kind = node.kind();
        let count = node.count();
        let gaps = kind == Kind::ARange;
        // The children after the replaced ones move as they are.
        let mut tail = [(0u64, NodePtr::DANGLING, 0u64); crate::node::RANGE_SLOTS];
        let tail_len = count - to - 1;
        for (k, t) in tail.iter_mut().enumerate().take(tail_len) {
            let j = to + 1 + k;
            let end = if j + 1 == count {
                at.max
            } else {
                node.pivot(j)
            };
            *t = (end, node.child(j), if gaps { node.gap(j) } else { 0 });
        }
        let mut k = from;
        let mut put = |end: u64, child: NodePtr, gap: u64| {
            if k + 1 < new_count {
                node.set_pivot(k, end);
            }
            node.set_child(k, child);
            if gaps {
                node.set_gap(k, gap);
            }
            k += 1;
        };
        for q in new {
            put(q.max, q.node, q.gap);
        }
        for &(end, child, gap) in &tail[..tail_len] {
            put(end, child, gap);
        }
        node.set_count(new_count);
        if gaps {
            self.update_gaps(lp, p + 1, crate::gap::node_gap(node));
        }
        true
    }

    /// The child count of the internal node at level `p` of `lp` once its
    /// children `lp.lv[p].idx..=to` are replaced by `new_len` nodes, if it
    /// still fits and keeps its minimum (a root keeps at least two children).
    #[inline(always)]
    fn spliced_count(&self, lp: &Path, p: usize, to: usize, new_len: usize) -> Option<usize> {
        let at = lp.lv[p];
        let kind = at.node.kind();
        let new_count = at.node.count() - (to - at.idx + 1) + new_len;
        let top = p + 1 == self.height();
        let underfull = if top {
            new_count < 2
        } else {
            new_count < kind.min_slots() && at.max < u64::MAX
        };
        (new_count <= kind.capacity() && !underfull).then_some(new_count)
    }

    /// The copy of [`splice_children`](Self::splice_children) for a tree
    /// with readers: a new node of the parent's kind holding its children,
    /// with `lp.lv[p].idx..=to` replaced by `new`, or None when that does not
    /// fit. The old parent is left as it is; the caller links the copy in its
    /// place with one pointer store, as for any rebuilt node (the kernel
    /// rebuilds the parent of a split node in RCU mode the same way). No
    /// slot has to be classified, as the general rebuild's contents and
    /// packing would: the copy starts as the whole old node, so the children
    /// before the replaced ones are already in place; the new ones are
    /// written one by one, and those after them copied as a run.
    fn copy_children(&mut self, lp: &Path, p: usize, to: usize, new: &[Packed]) -> Option<Packed> {
        let new_count = self.spliced_count(lp, p, to, new.len())?;
        let at = lp.lv[p];
        let (old, from) = (at.node, at.idx);
        let kind = old.kind();
        let count = old.count();
        let gaps = kind == Kind::ARange;
        let node = self.pool_mut().alloc_or_abort(kind);
        // SAFETY: `node` is new, so no reader can reach it. Both nodes then
        // link the same children; the old one is only retired as memory
        // (the caller's `retired`), so each child stays linked from the
        // tree once.
        unsafe { node.copy_from(old) };
        let mut k = from;
        for q in new {
            if k + 1 < new_count {
                node.set_pivot(k, q.max);
            }
            node.set_child_of(kind, k, q.node);
            if gaps {
                node.set_gap(k, q.gap);
            }
            k += 1;
        }
        // SAFETY: `node` is new and distinct from `old`, both of `kind`; the
        // children after `to` are `old`'s last, and they end at `new_count`.
        // The old parent leaves the tree as memory only (the caller retires
        // it).
        unsafe { old.copy_children_to(kind, to + 1, node, k, count - to - 1) };
        node.publish_count(kind, new_count);
        let gap = if gaps { crate::gap::node_gap(node) } else { 0 };
        Some(Packed {
            node,
            max: at.max,
            gap,
            len: new_count,
        })
    }

    /// Checks that a rebuild, about to give back its old nodes, took no more
    /// new ones than its plan allows (`plan.rs`).
    #[cfg(debug_assertions)]
    fn check_taken(&self, live_before: usize, height: usize) {
        debug_assert!(
            self.pool().live() <= live_before + super::plan::worst_case_nodes(height),
            "a rebuild took more nodes than its plan allows"
        );
    }

    /// Regular trees use 16-child internal nodes, allocation trees 10 with gaps.
    #[inline]
    pub(crate) fn internal_kind(&self) -> Kind {
        if self.is_alloc() {
            Kind::ARange
        } else {
            Kind::Range
        }
    }

    /// Installs what the top level packed into (`h` is its level).
    fn set_root(&mut self, out: &[Packed], h: usize, retired: &mut Retired) {
        if out.len() > 1 {
            assert!(
                h + 2 <= MAX_HEIGHT,
                "maple tree taller than {MAX_HEIGHT} levels"
            );
            let mut c = Content::new(0);
            for p in out {
                c.push_child(p.max, p.node, p.gap);
            }
            let mut top = [Packed::NONE; MAX_PACKED];
            let n = pack(
                &c,
                self.internal_kind(),
                self.is_alloc(),
                self.pool_mut(),
                &mut top,
                None,
            );
            debug_assert_eq!(n, 1);
            self.set_top(Some(top[0].node), h + 2);
            return;
        }
        let mut root = out[0].node;
        let mut height = h + 1;
        while height > 1 && root.count() == 1 {
            let child = root.child(0);
            // A root of one child: the child becomes the root.
            retired.push(root);
            root = child;
            height -= 1;
        }
        if height == 1 && root.count() == 1 && !root.is_present(0) {
            // A root leaf of one absent slot: the tree is empty.
            retired.push(root);
            self.set_top(None, 0);
        } else {
            self.set_top(Some(root), height);
        }
    }

    /// Records `gap` as the largest gap of the child `lp.lv[level]` leads to,
    /// and carries the change up as far as it changes anything.
    pub(crate) fn update_gaps(&mut self, lp: &Path, level: usize, gap: u64) {
        let height = self.height();
        let mut gap = gap;
        for l in level..height {
            let at = lp.lv[l];
            let old = at.node.gap(at.idx);
            if old == gap {
                return;
            }
            at.node.set_gap(at.idx, gap);
            if l + 1 == height {
                // The root's own largest gap is recorded nowhere.
                return;
            }
            let up = lp.lv[l + 1];
            gap = gap_after(
                up.node.gap(up.idx),
                old,
                gap,
                || beside(&at),
                || node_gap(at.node),
            );
        }
    }

    /// Pulls the node left of `lp`'s level-`h` node into `c`. False when there
    /// is none (the contents start at index 0).
    fn widen_left(
        &mut self,
        lp: &mut Path,
        rp: &Path,
        h: usize,
        c: &mut Content,
        retired: &mut Retired,
    ) -> bool {
        let Some(j) = (h + 1..self.height()).find(|&j| lp.lv[j].idx > 0) else {
            return false;
        };
        // The old path nodes between are emptied by this rewrite.
        for m in h + 1..j {
            if lp.lv[m].node != rp.lv[m].node {
                // Emptied by this rewrite (only `nb` below it stays
                // in use, and its contents move into `c`).
                retired.push(lp.lv[m].node);
            }
        }
        lp.lv[j].idx -= 1;
        lp.descend_edge(j, h, true);
        let nb = lp.lv[h];
        c.prepend_node(nb.node, nb.min, nb.max);
        // Its contents were copied into `c`.
        retired.push(nb.node);
        true
    }

    /// Pulls the node right of `rp`'s level-`h` node into `c`. False when
    /// there is none.
    fn widen_right(
        &mut self,
        lp: &Path,
        rp: &mut Path,
        h: usize,
        c: &mut Content,
        retired: &mut Retired,
    ) -> bool {
        let Some(j) = (h + 1..self.height()).find(|&j| rp.lv[j].idx + 1 < rp.lv[j].node.count())
        else {
            return false;
        };
        for m in h + 1..j {
            if rp.lv[m].node != lp.lv[m].node {
                // Emptied by this rewrite, as in `widen_left`.
                retired.push(rp.lv[m].node);
            }
        }
        rp.lv[j].idx += 1;
        rp.descend_edge(j, h, false);
        let nb = rp.lv[h];
        c.append_node(nb.node, nb.max);
        // Its contents were copied into `c`.
        retired.push(nb.node);
        true
    }

    /// Drops the subtrees strictly between the two paths, in key order.
    fn free_between<D: Displace<V>>(
        &mut self,
        lp: &Path,
        rp: &Path,
        displaced: &mut D,
        retired: &mut Retired,
    ) {
        let mut split = self.height();
        for h in 1..self.height() {
            let (l, r) = (lp.lv[h], rp.lv[h]);
            if l.node == r.node {
                for i in l.idx + 1..r.idx {
                    let item = slot_item(l.node, i, l.max);
                    self.unlink_subtree(
                        // SAFETY: a child slot of a node of this tree.
                        unsafe { item_child(&item) },
                        l.node.slot_start(i, l.min),
                        item.end,
                        displaced,
                        retired,
                    );
                }
                split = h;
                break;
            }
            for i in l.idx + 1..l.node.count() {
                self.unlink_subtree(
                    l.node.child(i),
                    l.node.slot_start(i, l.min),
                    l.node.slot_end(i, l.max),
                    displaced,
                    retired,
                );
            }
        }
        for h in (1..split).rev() {
            let r = rp.lv[h];
            for i in 0..r.idx {
                self.unlink_subtree(
                    r.node.child(i),
                    r.node.slot_start(i, r.min),
                    r.node.slot_end(i, r.max),
                    displaced,
                    retired,
                );
            }
        }
    }

    /// Removes the values of leaf slots `from..to` of a leaf being replaced:
    /// to `displaced`, or in RCU mode to the current garbage batch (readers
    /// may still see the leaf, so it is left as it is). The slots in `kept`
    /// (a bit each) are counted out of the tree's entries but their values
    /// stay: a part of the cut entry took them over.
    #[allow(clippy::too_many_arguments)]
    fn displace_slots<D: Displace<V>>(
        &mut self,
        leaf: NodePtr,
        from: usize,
        to: usize,
        min: u64,
        max: u64,
        kept: u32,
        displaced: &mut D,
    ) {
        if let Some(limbo) = self.limbo_mut() {
            // The present slots of `from..to`, a bit each (`to <= 16`).
            let range = ((1u32 << to) - 1) & !((1u32 << from) - 1);
            let present = u32::from(leaf.present_bits()) & range;
            let mut gone = present & !kept;
            while gone != 0 {
                let i = gone.trailing_zeros() as usize;
                limbo.push_value::<V>(leaf.leaf_word(i));
                gone &= gone - 1;
            }
            self.entries_removed(present.count_ones() as usize);
            return;
        }
        self.take_slots(leaf, from, to, min, max, kept, displaced);
    }

    /// Unlinks a subtree the store covers: its values go to `displaced` now
    /// and its nodes to `retired`; in RCU mode it is retired whole, values
    /// and all, since readers may still be walking it.
    fn unlink_subtree<D: Displace<V>>(
        &mut self,
        node: NodePtr,
        min: u64,
        max: u64,
        displaced: &mut D,
        retired: &mut Retired,
    ) {
        if self.in_rcu_mode() {
            self.entries_removed(count_entries(node));
            if let Some(limbo) = self.limbo_mut() {
                limbo.push(Garbage::Subtree(node));
            }
        } else {
            self.take_subtree_values(node, min, max, displaced);
            retired.push_subtree(node);
        }
    }

    /// Moves the values of leaf slots `from..to` out to `displaced`, but
    /// those of the slots in `kept` (see `displace_slots`), which are only
    /// counted out.
    #[allow(clippy::too_many_arguments)]
    fn take_slots<D: Displace<V>>(
        &mut self,
        leaf: NodePtr,
        from: usize,
        to: usize,
        min: u64,
        max: u64,
        kept: u32,
        displaced: &mut D,
    ) {
        for i in from..to {
            if kept >> i & 1 != 0 && leaf.is_present(i) {
                self.entries_removed(1);
            } else if leaf.is_present(i) {
                // SAFETY: a leaf of this tree (callers' contract), whose
                // values are `V`s; no reference into the tree is alive during
                // a write, and the node is being replaced (or, in RCU mode,
                // already is), so no reader sees the slot change.
                let v = unsafe { leaf.take_value::<V>(i) };
                self.entries_removed(1);
                displaced.displace(leaf.slot_start(i, min)..=leaf.slot_end(i, max), v);
            }
        }
    }

    /// Hands every value of a subtree to `displaced`.
    fn take_subtree_values<D: Displace<V>>(
        &mut self,
        node: NodePtr,
        min: u64,
        max: u64,
        displaced: &mut D,
    ) {
        if node.is_leaf() {
            self.take_slots(node, 0, node.count(), min, max, 0, displaced);
        } else {
            for i in 0..node.count() {
                self.take_subtree_values(
                    node.child(i),
                    node.slot_start(i, min),
                    node.slot_end(i, max),
                    displaced,
                );
            }
        }
    }
}

/// Entries stored below `node`.
fn count_entries(node: NodePtr) -> usize {
    if node.is_leaf() {
        node.present_bits().count_ones() as usize
    } else {
        (0..node.count())
            .map(|i| count_entries(node.child(i)))
            .sum()
    }
}

/// Fills `rp` with the path to `last`, sharing `lp`'s levels down to where
/// the two part.
fn right_path(lp: &Path, rp: &mut Path, last: u64) {
    rp.height = lp.height;
    rp.low = 0;
    let mut h = lp.height - 1;
    loop {
        let l = lp.lv[h];
        let mut idx = l.idx;
        let end = l.node.count() - 1;
        while idx < end && l.node.pivot(idx) < last {
            idx += 1;
        }
        rp.lv.set(h, crate::walk::Level { idx, ..l });
        if idx != l.idx && h > 0 {
            rp.descend_from(h, last);
            return;
        }
        if h == 0 {
            return;
        }
        h -= 1;
    }
}

/// Whether the leaf beside the path's leaf (left, or with `right` the right
/// one) has an absent slot at the edge it shares with it.
fn neighbour_edge_absent(p: &Path, height: usize, right: bool) -> bool {
    let found = if right {
        (1..height).find(|&j| p.lv[j].idx + 1 < p.lv[j].node.count())
    } else {
        (1..height).find(|&j| p.lv[j].idx > 0)
    };
    let Some(j) = found else { return false };
    let at = p.lv[j];
    let mut node = at.node.child(if right { at.idx + 1 } else { at.idx - 1 });
    while !node.is_leaf() {
        node = node.child(if right { 0 } else { node.count() - 1 });
    }
    !node.is_present(if right { 0 } else { node.count() - 1 })
}
