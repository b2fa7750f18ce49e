//! What `mprotect` and `madvise` share: the argument prologue that turns
//! `(addr, len)` into a page range, and the walk over the VMAs of that
//! range, which Linux does VMA by VMA, so that a call failing half way (a
//! hole, a VMA that refuses the change) keeps what it did before the failure.

use crate::config::{offset_in_page, page_align};
use crate::error::Errno;
use crate::memory::Phys;
use crate::space::Inner;
use crate::vma::Vma;

/// The page range `start..end` of a call on `(start, len)`: `start` must be
/// page aligned (`EINVAL`); a zero length is an empty call (`None`, the call
/// succeeds doing nothing); `len` is rounded up to pages, and a range that
/// wraps fails with `wrap` (`mprotect`: `ENOMEM`, `madvise`: `EINVAL`).
pub(crate) fn page_range(start: u64, len: u64, wrap: Errno) -> Result<Option<(u64, u64)>, Errno> {
    if offset_in_page(start) != 0 {
        return Err(Errno::EINVAL);
    }
    if len == 0 {
        return Ok(None);
    }
    let end = page_align(len)
        .and_then(|l| start.checked_add(l))
        .ok_or(wrap)?;
    Ok(Some((start, end)))
}

/// What a walk does at a hole (an address of the range no VMA covers).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtHole {
    /// Stop there (`mprotect`, `MADV_POPULATE_*`): the VMAs before it keep
    /// the change, the call fails with `ENOMEM`.
    Stop,
    /// Go on with the next VMA (`madvise_walk_vmas`): every mapped part gets
    /// the change, then the call fails with `ENOMEM`.
    Skip,
}

/// The visit of one VMA part: the VMA as it is when reached, and the part
/// `start..end` of it inside the range.
pub(crate) type Visit<'a> =
    &'a mut dyn FnMut(&mut Inner, &mut Phys, &Vma, u64, u64) -> Result<(), Errno>;

impl Inner {
    /// Visits the VMAs of `start..end` in address order, each with the part
    /// of it inside the range. The first error of a visit ends the walk and
    /// is the result (what earlier visits did stays); a hole gives `ENOMEM`
    /// (see [`AtHole`]), also when no VMA overlaps the range.
    pub(crate) fn walk_range(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
        at_hole: AtHole,
        visit: Visit<'_>,
    ) -> Result<(), Errno> {
        let mut at = start;
        let mut hole = false;
        while at < end {
            let Some(vma) = self.vmas.range(at..end).next().map(|(_, v)| v.clone()) else {
                hole = true;
                break;
            };
            if vma.start > at {
                hole = true;
                if at_hole == AtHole::Stop {
                    break;
                }
            }
            let (part_start, part_end) = (vma.start.max(at), vma.end.min(end));
            visit(self, phys, &vma, part_start, part_end)?;
            at = part_end;
        }
        if hole {
            Err(Errno::ENOMEM)
        } else {
            Ok(())
        }
    }

    /// Replaces the part `start..end` of one VMA by `change(part)`, split
    /// and merged by the kernel's rules (`vma_modify`): each split needs
    /// `map_count < max_map_count` (`ENOMEM`, `split_vma`). The split at
    /// `start` comes first: when only the one at `end` fails, the VMA stays
    /// split at `start` with its old flags, as in Linux.
    pub(crate) fn modify_part(
        &mut self,
        phys: &mut Phys,
        start: u64,
        end: u64,
        change: &mut dyn FnMut(&Vma) -> Vma,
    ) -> Result<(), Errno> {
        let plan = self.plan(start, end, &mut |v: &Vma| Ok(Some(change(v))), None)?;
        let count = self.vmas.len();
        let max = self.cfg.max_map_count;
        if plan.cuts > 0 && count + plan.cuts > max {
            if plan.cuts == 2 && count < max {
                self.split_at(start);
            }
            return Err(Errno::ENOMEM);
        }
        self.commit(phys, plan);
        Ok(())
    }

    /// `__split_vma` of the VMA around `addr` into two VMAs with the same
    /// attributes (nothing to do if a VMA starts at `addr`).
    fn split_at(&mut self, addr: u64) {
        let Some(vma) = self.vmas.get(addr).cloned() else {
            return;
        };
        if vma.start == addr {
            return;
        }
        let (below, above) = (vma.slice(vma.start, addr), vma.slice(addr, vma.end));
        self.vmas.insert(below.key(), below);
        self.vmas.insert(above.key(), above);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prologue() {
        assert_eq!(page_range(0x1001, 1, Errno::ENOMEM), Err(Errno::EINVAL));
        assert_eq!(page_range(0x1000, 0, Errno::ENOMEM), Ok(None));
        assert_eq!(
            page_range(0x1000, 1, Errno::ENOMEM),
            Ok(Some((0x1000, 0x2000)))
        );
        assert_eq!(
            page_range(0x1000, u64::MAX, Errno::ENOMEM),
            Err(Errno::ENOMEM)
        );
        assert_eq!(
            page_range(u64::MAX - 0xfff, 0x1000, Errno::EINVAL),
            Err(Errno::EINVAL)
        );
    }
}
