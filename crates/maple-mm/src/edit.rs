//! The one way VMAs change: plan the replacement of the VMAs overlapping a
//! range (cutting the ones that stick out, as `__split_vma` does), merge
//! what the change made adjacent and compatible (`vma_merge`), check limits,
//! then commit. Planning changes nothing, so a change that fails any check
//! leaves the space as it was (calls that Linux applies VMA by VMA, such
//! as `mprotect`, plan and commit one VMA at a time: see `range.rs`).

use crate::error::Errno;
use crate::flags::VmFlags;
use crate::memory::Phys;
use crate::space::Inner;
use crate::vma::{Backing, Vma};

/// A planned change of the VMA tree.
pub(crate) struct Plan {
    /// Entries that go (as they are now).
    pub(crate) remove: Vec<Vma>,
    /// Entries that come.
    pub(crate) add: Vec<Vma>,
    /// Cuts into VMAs that partly stay (each one a `split_vma`).
    pub(crate) cuts: usize,
    /// Whether one VMA loses a middle part and keeps both ends (the one case
    /// where `munmap` itself checks `max_map_count`).
    pub(crate) punch: bool,
}

impl Plan {
    /// A plan that only adds.
    pub(crate) fn add(v: Vma) -> Plan {
        Plan {
            remove: Vec::new(),
            add: vec![v],
            cuts: 0,
            punch: false,
        }
    }
}

/// The closure deciding what becomes of each part of a VMA inside the range:
/// `None` removes it.
pub(crate) type Change<'a> = &'a mut dyn FnMut(&Vma) -> Result<Option<Vma>, Errno>;

impl Inner {
    /// Plans the change of `start..end`: each VMA part inside the range
    /// becomes `change(part)` (a special mapping may only change whole:
    /// cutting one is `EINVAL`); a VMA whose part `change` leaves as it is
    /// keeps its full range (no needless split); `insert` is added in the
    /// range (after the parts were changed). Then adjacent VMAs merge when
    /// the kernel would merge them (see [`Vma::can_merge`]) and at least one
    /// of the two was made by this change: untouched neighbours do not merge
    /// with each other, as in the kernel, which only merges around the VMA it modifies.
    pub(crate) fn plan(
        &self,
        start: u64,
        end: u64,
        change: Change<'_>,
        insert: Option<Vma>,
    ) -> Result<Plan, Errno> {
        if start >= end {
            return Ok(Plan {
                remove: Vec::new(),
                add: insert.into_iter().collect(),
                cuts: 0,
                punch: false,
            });
        }
        let mut old: Vec<Vma> = Vec::new();
        if start > 0 {
            if let Some(v) = self.vmas.get(start - 1) {
                if v.end == start {
                    old.push(v.clone());
                }
            }
        }
        for (_, v) in self.vmas.range(start..end) {
            old.push(v.clone());
        }
        if let Some(v) = self.vmas.get(end) {
            if v.start == end {
                old.push(v.clone());
            }
        }

        let mut pieces: Vec<(Vma, bool)> = Vec::with_capacity(old.len() + 3);
        let (mut cuts, mut punch) = (0, false);
        for v in &old {
            if v.end <= start || v.start >= end {
                pieces.push((v.clone(), false));
                continue;
            }
            let (is, ie) = (v.start.max(start), v.end.min(end));
            let part = v.slice(is, ie);
            let r = change(&part)?;
            // A sealed VMA is not unmapped or replaced (the munmap part of
            // `munmap`, `MAP_FIXED`, `mremap`, `brk`: `vms_gather_munmap_vmas`).
            if r.is_none() && part.flags.contains(VmFlags::SEALED) {
                return Err(Errno::EPERM);
            }
            if let Some(nv) = &r {
                if nv.start == is && nv.end == ie && nv.same_attrs(&part) {
                    pieces.push((v.clone(), false));
                    continue;
                }
            }
            let (left, right) = (v.start < start, v.end > end);
            // special_mapping_split: "kernel has expectations over the
            // number of pages in mapping".
            if (left || right) && v.special().is_some() {
                return Err(Errno::EINVAL);
            }
            if left {
                pieces.push((v.slice(v.start, start), false));
                cuts += 1;
            }
            let removed = r.is_none();
            if let Some(nv) = r {
                pieces.push((nv, true));
            }
            if right {
                pieces.push((v.slice(end, v.end), false));
                cuts += 1;
            }
            punch |= left && right && removed;
        }
        if let Some(ins) = insert {
            let pos = pieces
                .iter()
                .position(|(p, _)| p.start >= ins.start)
                .unwrap_or(pieces.len());
            pieces.insert(pos, (ins, true));
        }

        let mut out: Vec<(Vma, bool)> = Vec::with_capacity(pieces.len());
        for (v, touched) in pieces {
            if let Some((last, lt)) = out.last_mut() {
                if (*lt || touched) && last.can_merge(&v) {
                    *last = last.merged(&v);
                    *lt = true;
                    continue;
                }
            }
            out.push((v, touched));
        }

        // Only what differs is rewritten.
        let (mut remove, mut add) = (Vec::new(), Vec::new());
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < out.len() {
            let (o, n) = (&old[i], &out[j].0);
            if o == n {
                i += 1;
                j += 1;
            } else if o.start < n.start {
                remove.push(o.clone());
                i += 1;
            } else if o.start > n.start {
                add.push(n.clone());
                j += 1;
            } else {
                remove.push(o.clone());
                add.push(n.clone());
                i += 1;
                j += 1;
            }
        }
        remove.extend(old[i..].iter().cloned());
        add.extend(out[j..].iter().map(|(v, _)| v.clone()));
        Ok(Plan {
            remove,
            add,
            cuts,
            punch,
        })
    }

    /// Applies a plan to the tree and the counters (not to the page tables).
    pub(crate) fn commit(&mut self, phys: &mut Phys, plan: Plan) {
        for v in &plan.add {
            if let Backing::Shm(id) = v.backing {
                phys.cache.shm_get(id);
            }
        }
        for v in &plan.remove {
            self.vmas.remove(v.start);
            self.total_vm -= v.pages();
        }
        for v in plan.add {
            self.total_vm += v.pages();
            self.vmas.insert(v.key(), v);
        }
        let Phys { cache, frames, .. } = phys;
        for v in &plan.remove {
            if let Backing::Shm(id) = v.backing {
                cache.shm_put(frames, id);
            }
        }
    }

    /// Frees the page tables of `start..end` that no VMA needs any more.
    pub(crate) fn free_pgtables(&mut self, phys: &mut Phys, start: u64, end: u64) {
        let vmas = &self.vmas;
        self.pt
            .free_unused(phys, start, end, &|a, b| vmas.range(a..b).next().is_some());
    }
}
