//! Page geometry and the per-address-space tunables ([`Config`]), with
//! Linux's x86-64 defaults (address-space randomization off).

/// Bytes in a page (x86-64 base pages).
pub const PAGE_SIZE: u64 = 4096;
/// `PAGE_SHIFT`.
pub const PAGE_SHIFT: u32 = 12;
/// Bytes covered by one page table (512 entries of 4 KiB: 2 MiB).
pub const PMD_SIZE: u64 = PAGE_SIZE * 512;
/// Bytes covered by one PMD table (1 GiB).
pub const PUD_SIZE: u64 = PMD_SIZE * 512;
/// `TASK_SIZE_MAX` with 4-level paging: `(1 << 47) - PAGE_SIZE`.
pub const TASK_SIZE: u64 = (1 << 47) - PAGE_SIZE;

/// `PAGE_ALIGN`: rounds up to a page boundary; `None` on overflow.
pub fn page_align(x: u64) -> Option<u64> {
    x.checked_add(PAGE_SIZE - 1).map(|v| v & !(PAGE_SIZE - 1))
}

/// `offset_in_page`.
pub fn offset_in_page(x: u64) -> u64 {
    x & (PAGE_SIZE - 1)
}

/// Tunables of one address space. [`Config::default`] is a 64-bit x86 Linux
/// process with randomization off (as under `setarch -R` or gdb).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Config {
    /// `TASK_SIZE`: the end of the user address space.
    pub task_size: u64,
    /// `mm->mmap_base`: top-down placement searches below it. Linux:
    /// `PAGE_ALIGN(TASK_SIZE - gap)`, `gap` the stack rlimit plus the guard
    /// gap, at least 128 MiB (`mmap_base()` in arch/x86/mm/mmap.c).
    pub mmap_base: u64,
    /// `mm->mmap_legacy_base` (`TASK_UNMAPPED_BASE` = `TASK_SIZE / 3`): where
    /// the bottom-up fallback starts searching when top-down finds nothing.
    pub mmap_legacy_base: u64,
    /// `vm.mmap_min_addr`: nothing may be mapped below it (`EPERM` for a fixed mapping).
    pub mmap_min_addr: u64,
    /// `stack_guard_gap`: the gap kept below a grows-down mapping (256 pages).
    pub stack_guard_gap: u64,
    /// `RLIMIT_STACK`: how large a grows-down mapping may grow by faults.
    pub stack_rlimit: u64,
    /// `vm.max_map_count`: the most VMAs an address space may hold.
    pub max_map_count: usize,
    /// `mm->start_brk`: the initial program break.
    pub start_brk: u64,
    /// Whether the CPU has memory protection keys and the kernel uses them
    /// (x86 `PKU` with `OSPKE`, as on the machines this model was checked
    /// on): 16 keys, `PROT_EXEC`-only mappings get the execute-only key, and
    /// the model's accesses obey [`AddressSpace::pkru`](crate::AddressSpace::pkru).
    /// Without them (`false`) there is only key 0 and `pkey_alloc` fails
    /// (`ENOSPC`), as Linux does on such machines.
    #[cfg_attr(feature = "serde", serde(default = "pkeys_default"))]
    pub pkeys: bool,
    /// `RLIMIT_MEMLOCK` in bytes for a process without `CAP_IPC_LOCK`, or
    /// `None` (the default) for one that may lock any amount (root, or an
    /// unlimited rlimit). With a limit: `mlock`, `mlockall(MCL_CURRENT)`
    /// beyond it → `ENOMEM`; a locked `mmap`, `shmat` or `mremap` growth
    /// beyond it → `EAGAIN` and heap growth is refused (`mlock_future_ok`);
    /// a limit of 0 makes `mlock`, `mlockall` and `MAP_LOCKED` `EPERM`
    /// (`can_do_mlock`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub memlock_limit: Option<u64>,
    /// Whether the kernel was built with `CONFIG_ANON_VMA_NAME` (Linux
    /// 5.17+), so that `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` names
    /// anonymous VMAs (see
    /// [`AddressSpace::set_anon_name`](crate::AddressSpace::set_anon_name)).
    /// Default `false`: the call fails with `EINVAL` and changes nothing,
    /// as on kernels built without it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub anon_vma_name: bool,
    /// The legacy layout (`ADDR_COMPAT_LAYOUT`, as under `setarch -L`, or
    /// `vm.legacy_va_layout`): placements go bottom-up from
    /// `mmap_legacy_base` (`arch_get_unmapped_area`), with no top-down
    /// search. Default `false`: the top-down layout below `mmap_base`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub legacy_layout: bool,
    /// The commit limit of the kernel's heuristic overcommit
    /// (`vm.overcommit_memory = 0`, Linux's default): the machine's RAM plus
    /// swap in bytes (`MemTotal` + `SwapTotal` of `/proc/meminfo`). One
    /// charge of more than that fails with `ENOMEM` (`__vm_enough_memory`):
    /// a private writable `mmap` without `MAP_NORESERVE` (less what charged
    /// VMAs it replaces already held), shared anonymous memory without
    /// `MAP_NORESERVE`, a `brk` growth, the growth of a charged VMA by
    /// `mremap` (its whole new length with `MREMAP_DONTUNMAP`), and each
    /// VMA part an `mprotect` makes writable for the first time. Charges are
    /// not summed, as that mode does not sum them. `None` (the default):
    /// every charge succeeds, as under `vm.overcommit_memory = 1`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub commit_limit: Option<u64>,
    /// The NUMA nodes with memory, one bit each (`node_states[N_MEMORY]`):
    /// what an `mbind` node mask is limited to. Default: node 0 alone, a
    /// machine of one node (as this project's). The model knows nodes 0 to
    /// 15 ([`MemPolicy`](crate::MemPolicy)); higher bits are ignored.
    #[cfg_attr(feature = "serde", serde(default = "numa_nodes_default"))]
    pub numa_nodes: u64,
}

#[cfg(feature = "serde")]
fn pkeys_default() -> bool {
    true
}

#[cfg(feature = "serde")]
fn numa_nodes_default() -> u64 {
    1
}

/// The least gap `mmap_base` keeps below the top of the address space.
const MMAP_GAP_MIN: u64 = 128 << 20;

impl Config {
    /// The configuration of a process whose stack rlimit (`RLIMIT_STACK`,
    /// the soft limit) is `rlimit` bytes, `None` for unlimited: the default
    /// one with `stack_rlimit` and `mmap_base` set as Linux sets them at
    /// `execve` (`mmap_base()` in arch/x86/mm/mmap.c, without
    /// randomization): `TASK_SIZE` less a gap of the rlimit plus the stack
    /// guard gap, that gap kept between 128 MiB and five sixths of
    /// `TASK_SIZE`. So any rlimit up to 127 MiB gives the default layout,
    /// and an unlimited one starts placements at about a sixth of the
    /// address space (top-down still: Linux 6.x no longer switches to the
    /// legacy bottom-up layout for an unlimited stack).
    ///
    /// ```
    /// use maple_mm::Config;
    /// assert_eq!(Config::with_stack_rlimit(Some(8 << 20)), Config::default());
    /// let big = Config::with_stack_rlimit(Some(512 << 20));
    /// assert_eq!(big.mmap_base, 0x7fff_dfef_f000);
    /// let unlimited = Config::with_stack_rlimit(None);
    /// assert_eq!(unlimited.mmap_base, 0x1555_5555_6000);
    /// ```
    pub fn with_stack_rlimit(rlimit: Option<u64>) -> Config {
        let mut c = Config::default();
        let gap_max = c.task_size / 6 * 5;
        // Linux adds the guard gap unless that overflows (an unlimited
        // rlimit is all ones); either way the gap is clamped.
        let gap = match rlimit {
            Some(r) => r.checked_add(c.stack_guard_gap).unwrap_or(r),
            None => u64::MAX,
        };
        let gap = gap.clamp(MMAP_GAP_MIN, gap_max);
        c.mmap_base = page_align(c.task_size - gap).unwrap_or(c.task_size);
        c.stack_rlimit = rlimit.unwrap_or(u64::MAX);
        c
    }
}

impl Default for Config {
    fn default() -> Config {
        let task_size = TASK_SIZE;
        // max(8 MiB rlimit + 1 MiB guard, 128 MiB), as `with_stack_rlimit`.
        let gap = MMAP_GAP_MIN;
        Config {
            task_size,
            mmap_base: (task_size - gap) & !(PAGE_SIZE - 1),
            mmap_legacy_base: page_align(task_size / 3).unwrap_or(task_size / 3),
            mmap_min_addr: 65536,
            stack_guard_gap: 256 * PAGE_SIZE,
            stack_rlimit: 8 << 20,
            max_map_count: 65530,
            start_brk: 0x5555_5555_9000,
            pkeys: true,
            memlock_limit: None,
            anon_vma_name: false,
            legacy_layout: false,
            commit_limit: None,
            numa_nodes: 1,
        }
    }
}
