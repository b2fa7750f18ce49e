//! `mbind`: NUMA memory policies of VMAs. A policy decides where pages are
//! allocated, which the model does not place on nodes; what it models is
//! what a policy does to the layout: `mbind` splits VMAs at the range's
//! ends, and VMAs of different policies never merge (`mpol_equal` in
//! `is_mergeable_vma`), so a mapping made beside a buffer with a policy
//! (as OpenBLAS gives its buffers) stays apart from it.

use crate::error::Errno;
use crate::memory::Phys;
use crate::range::{page_range, AtHole};
use crate::space::{AddressSpace, Inner};
use crate::vma::{MemPolicy, Vma};

/// `MPOL_DEFAULT`: no policy of the VMA's own (the task's applies).
pub const MPOL_DEFAULT: u32 = 0;
/// `MPOL_PREFERRED`: one preferred node (none: the local node).
pub const MPOL_PREFERRED: u32 = 1;
/// `MPOL_BIND`: only these nodes.
pub const MPOL_BIND: u32 = 2;
/// `MPOL_INTERLEAVE`: round-robin over these nodes.
pub const MPOL_INTERLEAVE: u32 = 3;
/// `MPOL_LOCAL`: the node of the CPU that faults.
pub const MPOL_LOCAL: u32 = 4;
/// `MPOL_PREFERRED_MANY`: several preferred nodes (Linux 5.15+).
pub const MPOL_PREFERRED_MANY: u32 = 5;
/// `MPOL_WEIGHTED_INTERLEAVE`: weighted round-robin (Linux 6.9+).
pub const MPOL_WEIGHTED_INTERLEAVE: u32 = 6;
/// `MPOL_F_STATIC_NODES`: the nodes stay as given when the allowed ones change.
pub const MPOL_F_STATIC_NODES: u32 = 1 << 15;
/// `MPOL_F_RELATIVE_NODES`: the nodes are relative to the allowed ones.
pub const MPOL_F_RELATIVE_NODES: u32 = 1 << 14;
/// `MPOL_F_NUMA_BALANCING`: NUMA balancing within `MPOL_BIND` nodes.
pub const MPOL_F_NUMA_BALANCING: u32 = 1 << 13;
/// `MPOL_MF_STRICT`: pages already placed elsewhere make the call `EIO`.
pub const MPOL_MF_STRICT: u32 = 1 << 0;
/// `MPOL_MF_MOVE`: move the process's pages to fit the policy.
pub const MPOL_MF_MOVE: u32 = 1 << 1;
/// `MPOL_MF_MOVE_ALL`: move shared pages too (`CAP_SYS_NICE`).
pub const MPOL_MF_MOVE_ALL: u32 = 1 << 2;

const MODE_FLAGS: u32 = MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | MPOL_F_NUMA_BALANCING;
const MODE_MAX: u32 = 7;

impl AddressSpace {
    /// `mbind(addr, len, mode, nodemask, maxnode, flags)`: gives the VMAs of
    /// `addr..addr+len` the memory policy `mode` (with its `MPOL_F_*` mode
    /// flags) over the nodes of `nodes` (one bit each: the first word of
    /// the node mask, whose bits beyond `maxnode - 1` the caller has
    /// cleared).
    ///
    /// Linux rules (`kernel_mbind`, `do_mbind`, `mpol_new`,
    /// `mpol_set_nodemask` and `mbind_range` in mm/mempolicy.c, 6.18):
    /// - a mode of 7 or more, `MPOL_F_STATIC_NODES` with
    ///   `MPOL_F_RELATIVE_NODES`, `MPOL_F_NUMA_BALANCING` other than with
    ///   `MPOL_BIND` or `MPOL_PREFERRED_MANY`, `flags` other than
    ///   `MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL` → `EINVAL`;
    /// - `addr` not page aligned, a range that wraps → `EINVAL`; an empty
    ///   range → success;
    /// - `MPOL_DEFAULT` with nodes → `EINVAL` (without: the VMAs lose their
    ///   policy); `MPOL_PREFERRED` without nodes is `MPOL_LOCAL` (`EINVAL`
    ///   with a static or relative flag), `MPOL_LOCAL` with nodes or such a
    ///   flag → `EINVAL`; any other mode without nodes → `EINVAL`; nodes
    ///   none of which has memory ([`Config::numa_nodes`](crate::Config::numa_nodes))
    ///   → `EINVAL`;
    /// - a hole anywhere in the range (or no VMA in it) → `EFAULT`, with
    ///   nothing changed (`queue_pages_range`);
    /// - each VMA part whose policy differs is split off at the range's
    ///   ends (`ENOMEM` past `max_map_count`) and merged with neighbours of
    ///   the same policy (`vma_modify_policy`). Policies are kept by splits,
    ///   moved by `mremap` and inherited at fork.
    ///
    /// The model places no page on a node, so `MPOL_MF_STRICT` never finds
    /// a misplaced page (no `EIO`) and the move flags move nothing.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot, MPOL_PREFERRED, MPOL_DEFAULT};
    /// let mut mm = AddressSpace::new();
    /// let a = mm.mmap(0, 3 << 12, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.mbind(a + 4096, 4096, MPOL_PREFERRED, 0, 0).unwrap(); // the local node: split in three
    /// assert_eq!(mm.map_count(), 3);
    /// mm.mbind(a + 4096, 4096, MPOL_DEFAULT, 0, 0).unwrap();   // merged back
    /// assert_eq!(mm.map_count(), 1);
    /// assert_eq!(mm.mbind(a, 4 << 12, MPOL_PREFERRED, 0, 0), Err(Errno::EFAULT)); // a hole
    /// ```
    pub fn mbind(
        &mut self,
        addr: u64,
        len: u64,
        mode: u32,
        nodes: u64,
        flags: u32,
    ) -> Result<(), Errno> {
        let mut phys = self.mem.lock();
        self.inner.mbind(&mut phys, addr, len, mode, nodes, flags)
    }
}

impl Inner {
    pub(crate) fn mbind(
        &mut self,
        phys: &mut Phys,
        addr: u64,
        len: u64,
        mode: u32,
        nodes: u64,
        flags: u32,
    ) -> Result<(), Errno> {
        let (mode_flags, mode) = (mode & MODE_FLAGS, mode & !MODE_FLAGS);
        let static_or_relative = mode_flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES);
        if mode >= MODE_MAX
            || static_or_relative == MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES
            || (mode_flags & MPOL_F_NUMA_BALANCING != 0
                && mode != MPOL_BIND
                && mode != MPOL_PREFERRED_MANY)
            || flags & !(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL) != 0
        {
            return Err(Errno::EINVAL);
        }
        let Some((start, end)) = page_range(addr, len, Errno::EINVAL)? else {
            return Ok(());
        };
        let policy = self.new_policy(mode, mode_flags, nodes)?;
        // Every address of the range must be mapped before anything changes.
        let mut at = start;
        while at < end {
            match self.vmas.range(at..end).next() {
                Some((_, v)) if v.start() <= at => at = v.end(),
                _ => return Err(Errno::EFAULT),
            }
        }
        self.walk_range(phys, start, end, AtHole::Stop, &mut |mm, phys, v, s, e| {
            mm.set_policy(phys, v, s, e, policy)
        })
    }

    /// `mpol_new` and `mpol_set_nodemask`: the policy of `mode` over
    /// `nodes` (`None` for `MPOL_DEFAULT`).
    fn new_policy(&self, mode: u32, flags: u32, nodes: u64) -> Result<Option<MemPolicy>, Errno> {
        let static_or_relative = flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES) != 0;
        let mode = match mode {
            MPOL_DEFAULT if nodes != 0 => return Err(Errno::EINVAL),
            MPOL_DEFAULT => return Ok(None),
            MPOL_PREFERRED if nodes == 0 && static_or_relative => return Err(Errno::EINVAL),
            MPOL_PREFERRED if nodes == 0 => MPOL_LOCAL,
            MPOL_LOCAL if nodes != 0 || static_or_relative => return Err(Errno::EINVAL),
            MPOL_LOCAL => MPOL_LOCAL,
            _ if nodes == 0 => return Err(Errno::EINVAL),
            m => m,
        };
        if mode == MPOL_LOCAL {
            return Ok(Some(MemPolicy::new(mode, 0, flags)));
        }
        // A policy keeps nodes 0 to 15 (see `MemPolicy`).
        let online = self.cfg.numa_nodes & 0xffff;
        let usable = if flags & MPOL_F_RELATIVE_NODES != 0 {
            relative_nodes(nodes, online)
        } else {
            nodes & online
        };
        if usable == 0 {
            return Err(Errno::EINVAL);
        }
        let usable = if mode == MPOL_PREFERRED {
            usable & usable.wrapping_neg() // the first node
        } else {
            usable
        };
        // `mpol_equal` compares the nodes the caller gave for a static or
        // relative policy, else those it got.
        let nodes = if static_or_relative {
            nodes & 0xffff
        } else {
            usable
        };
        Ok(Some(MemPolicy::new(mode, nodes, flags)))
    }

    /// `mbind_range` on the part `start..end` of `vma`.
    fn set_policy(
        &mut self,
        phys: &mut Phys,
        vma: &Vma,
        start: u64,
        end: u64,
        policy: Option<MemPolicy>,
    ) -> Result<(), Errno> {
        if vma.policy() == policy {
            return Ok(());
        }
        self.modify_part(phys, start, end, &mut |v: &Vma| Vma {
            policy,
            ..v.clone()
        })
    }
}

/// `mpol_relative_nodemask`: node `n` of a relative mask is the
/// `(n mod w)`-th of the `w` nodes with memory.
fn relative_nodes(nodes: u64, online: u64) -> u64 {
    let w = online.count_ones();
    if w == 0 {
        return 0;
    }
    let mut out = 0;
    for n in (0..64).filter(|n| nodes >> n & 1 != 0) {
        let mut rank = n % w;
        let mut bits = online;
        while rank > 0 {
            bits &= bits - 1;
            rank -= 1;
        }
        out |= bits & bits.wrapping_neg();
    }
    out
}
