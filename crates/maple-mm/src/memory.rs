//! Physical memory: the frames, the page-table pages and the page cache
//! that the address spaces forked from one another share, plus the failure
//! injection of fork (feature `failpoints`).

use crate::check::CheckError;
use crate::error::Errno;
use crate::frames::Frames;
use crate::pagecache::PageCache;
use crate::pagetable::{TableId, Tables};
use crate::vma::FileId;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

/// Failure points: a counter every failure point of fork passes, and the
/// number of the one that must fail. Without the `failpoints` feature it is
/// empty and a failure point never fails, at no cost.
#[derive(Default)]
pub(crate) struct FailPoints {
    #[cfg(feature = "failpoints")]
    passed: u64,
    #[cfg(feature = "failpoints")]
    fail_at: Option<u64>,
}

impl FailPoints {
    /// Passes one failure point: `ENOMEM` if it is the chosen one (once).
    #[cfg(feature = "failpoints")]
    #[inline]
    pub(crate) fn hit(&mut self) -> Result<(), Errno> {
        let n = self.passed;
        self.passed += 1;
        if self.fail_at == Some(n) {
            self.fail_at = None;
            return Err(Errno::ENOMEM);
        }
        Ok(())
    }

    /// Passes one failure point: never fails (no `failpoints` feature).
    #[cfg(not(feature = "failpoints"))]
    #[inline(always)]
    pub(crate) fn hit(&mut self) -> Result<(), Errno> {
        Ok(())
    }
}

/// Everything physical, behind the [`Memory`] lock.
pub(crate) struct Phys {
    pub(crate) frames: Frames,
    pub(crate) tables: Tables,
    pub(crate) cache: PageCache,
    pub(crate) fail: FailPoints,
    /// The PGDs of the live address spaces.
    pub(crate) roots: BTreeSet<TableId>,
}

/// The physical memory that address spaces map: frames with reference
/// counts and contents, page-table pages, and the page cache of files and
/// shared anonymous memory. Cloning the handle shares the memory; a forked
/// child shares its parent's.
///
/// ```
/// use maple_mm::{AddressSpace, Memory, FileId, Prot, MapFlags};
/// let mem = Memory::new();
/// mem.write_file(FileId(7), 0, b"hello");
/// let mut a = AddressSpace::with_memory(&mem, Default::default());
/// let p = a.mmap(0, 4096, Prot::READ, MapFlags::PRIVATE, Some(FileId(7)), 0).unwrap();
/// let mut buf = [0u8; 5];
/// a.read(p, &mut buf).unwrap();
/// assert_eq!(&buf, b"hello");
/// ```
#[derive(Clone)]
pub struct Memory {
    inner: Arc<Mutex<Phys>>,
}

impl Default for Memory {
    fn default() -> Memory {
        Memory::new()
    }
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = self.lock();
        f.debug_struct("Memory")
            .field("frames", &p.frames.live())
            .field("page_table_pages", &p.tables.live())
            .field("spaces", &p.roots.len())
            .finish()
    }
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Memory {
        Memory {
            inner: Arc::new(Mutex::new(Phys {
                frames: Frames::new(),
                tables: Tables::default(),
                cache: PageCache::default(),
                fail: FailPoints::default(),
                roots: BTreeSet::new(),
            })),
        }
    }

    /// Locks the memory (a poisoned lock is taken over: no operation leaves
    /// it half done, since none panics).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Phys> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether two handles share the same memory.
    pub fn same(&self, other: &Memory) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Frames in use (the zero page not counted), including page-cache pages.
    pub fn frames_in_use(&self) -> usize {
        self.lock().frames.live()
    }

    /// Page-table pages in use over all address spaces (a shared PTE table once).
    pub fn page_table_pages(&self) -> usize {
        self.lock().tables.live()
    }

    /// Live address spaces.
    pub fn spaces(&self) -> usize {
        self.lock().roots.len()
    }

    /// Live shared anonymous memory objects (System V segments included,
    /// which live as long as the memory once attached).
    pub fn shm_objects(&self) -> usize {
        self.lock().cache.shm_objects()
    }

    /// Writes file contents through the page cache (seen at once by every
    /// shared mapping of the file, and by private ones where no copy was made).
    pub fn write_file(&self, file: FileId, offset: u64, data: &[u8]) {
        let mut p = self.lock();
        let Phys { cache, frames, .. } = &mut *p;
        cache.write_file(frames, file, offset, data);
    }

    /// Reads file contents through the page cache (never written = zeros).
    pub fn read_file(&self, file: FileId, offset: u64, out: &mut [u8]) {
        let p = self.lock();
        p.cache.read_file(&p.frames, file, offset, out);
    }

    #[cfg(feature = "failpoints")]
    /// Makes failure point number `n` (0-based, counted from now) of the
    /// coming forks fail with `ENOMEM`. Fork passes one failure point before
    /// each VMA it copies, one before each page-table page it allocates, one
    /// for the PGD and one at the very end (the kernel's `arch_dup_mmap`).
    ///
    /// Only with the `failpoints` feature, for tests.
    ///
    /// ```
    /// use maple_mm::{AddressSpace, Errno, MapFlags, Prot};
    /// let mut mm = AddressSpace::new();
    /// mm.mmap(0, 4096, Prot::RW, MapFlags::PRIVATE_ANON, None, 0).unwrap();
    /// mm.memory().inject_fork_failure(0);
    /// assert_eq!(mm.fork().unwrap_err(), Errno::ENOMEM);
    /// assert!(mm.fork().is_ok()); // the injected failure fired once
    /// ```
    pub fn inject_fork_failure(&self, n: u64) {
        let mut p = self.lock();
        let at = p.fail.passed + n;
        p.fail.fail_at = Some(at);
    }

    #[cfg(feature = "failpoints")]
    /// Cancels an injected failure that has not fired.
    pub fn clear_fork_failure(&self) {
        self.lock().fail.fail_at = None;
    }

    #[cfg(feature = "failpoints")]
    /// Failure points passed so far (the difference around a fork tells how
    /// many that fork has).
    pub fn failure_points_passed(&self) -> u64 {
        self.lock().fail.passed
    }

    /// Checks the physical invariants over every live address space: each
    /// frame's reference count equals the page-table entries mapping it (a
    /// shared table's entry once) plus its page-cache reference; each PTE
    /// table's count equals the PMD entries pointing at it; each table's
    /// counters match its entries; nothing is live that no one reaches.
    pub fn validate(&self) -> Result<(), CheckError> {
        crate::check::check_phys(&self.lock())
    }
}
