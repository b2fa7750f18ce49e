//! The page cache: the frames of files and of shared anonymous objects,
//! keyed by object and page offset. The cache holds one reference on each
//! of its frames. Shared anonymous objects count the VMAs that map them and
//! are freed, pages and all, with the last one.

use crate::config::PAGE_SIZE;
use crate::frames::{FrameId, Frames};
use crate::shm::SysvShm;
use crate::vma::{Backing, FileId, ShmId, Special};
use std::collections::{BTreeMap, HashMap};

/// An object whose pages the cache holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Obj {
    File(FileId),
    Shm(ShmId),
    /// The pages of a special mapping (one object per kind).
    Special(Special),
}

impl Obj {
    /// The cached object behind a backing, if any.
    pub(crate) fn of(b: Backing) -> Option<Obj> {
        match b {
            Backing::Anon => None,
            Backing::File(f) => Some(Obj::File(f)),
            Backing::Shm(s) => Some(Obj::Shm(s)),
            Backing::Special(s) => Some(Obj::Special(s)),
        }
    }
}

/// The cache.
#[derive(Default)]
pub(crate) struct PageCache {
    pages: BTreeMap<(Obj, u64), FrameId>,
    shm_refs: HashMap<ShmId, usize>,
    next_shm: u64,
    /// System V segments by shmid, as last named (their page objects hold
    /// one reference of their own: a segment outlives its attachments).
    sysv: HashMap<i32, SysvShm>,
}

impl PageCache {
    /// The cached frame of `obj` at page `pgoff`, created zero-filled if absent.
    /// The cache's reference is the caller's to share: map it with `Frames::get`.
    pub(crate) fn frame(&mut self, frames: &mut Frames, obj: Obj, pgoff: u64) -> FrameId {
        *self.pages.entry((obj, pgoff)).or_insert_with(|| {
            let f = frames.alloc();
            frames.set_cached(f, true);
            f
        })
    }

    /// Punches a hole in `obj` over the pages `first..end`: a page only the
    /// cache holds is freed; one still mapped somewhere is zeroed in place
    /// (so every mapping keeps seeing the object's one page, now zeros).
    pub(crate) fn punch_hole(&mut self, frames: &mut Frames, obj: Obj, first: u64, end: u64) {
        if first >= end {
            return;
        }
        let cached: Vec<(u64, FrameId)> = self
            .pages
            .range((obj, first)..(obj, end))
            .map(|(&(_, pgoff), &f)| (pgoff, f))
            .collect();
        let zeros = [0u8; PAGE_SIZE as usize];
        for (pgoff, f) in cached {
            if frames.frame(f).refs == 1 {
                self.pages.remove(&(obj, pgoff));
                frames.set_cached(f, false);
                frames.put(f);
            } else {
                frames.write(f, 0, &zeros);
            }
        }
    }

    /// The cached frame, if present.
    pub(crate) fn lookup(&self, obj: Obj, pgoff: u64) -> Option<FrameId> {
        self.pages.get(&(obj, pgoff)).copied()
    }

    /// A new shared anonymous object with no mapping yet.
    pub(crate) fn new_shm(&mut self) -> ShmId {
        self.next_shm += 1;
        ShmId(self.next_shm)
    }

    /// The page object of System V segment `seg` (by shmid and key), held
    /// (with the segment's own reference) from its first use on; `seg`
    /// becomes what is known of the segment (its key and size).
    pub(crate) fn sysv_segment(&mut self, seg: SysvShm) -> ShmId {
        let id = ShmId::for_sysv(seg.shmid, seg.key);
        if !self.shm_refs.contains_key(&id) {
            self.shm_get(id);
        }
        self.sysv.insert(seg.shmid, seg);
        id
    }

    /// What is known of System V segment `shmid`.
    pub(crate) fn sysv_info(&self, shmid: i32) -> Option<SysvShm> {
        self.sysv.get(&shmid).copied()
    }

    /// One more VMA maps the object.
    pub(crate) fn shm_get(&mut self, id: ShmId) {
        *self.shm_refs.entry(id).or_insert(0) += 1;
    }

    /// One VMA less maps the object; the last one frees its pages.
    pub(crate) fn shm_put(&mut self, frames: &mut Frames, id: ShmId) {
        let Some(r) = self.shm_refs.get_mut(&id) else {
            return;
        };
        *r -= 1;
        if *r > 0 {
            return;
        }
        self.shm_refs.remove(&id);
        let keys: Vec<(Obj, u64)> = self
            .pages
            .range((Obj::Shm(id), 0)..=(Obj::Shm(id), u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            if let Some(f) = self.pages.remove(&k) {
                frames.set_cached(f, false);
                frames.put(f);
            }
        }
    }

    /// Live shared anonymous objects.
    pub(crate) fn shm_objects(&self) -> usize {
        self.shm_refs.len()
    }

    /// Every cached frame, for the checker.
    pub(crate) fn frames(&self) -> impl Iterator<Item = (Obj, u64, FrameId)> + '_ {
        self.pages.iter().map(|(&(o, p), &f)| (o, p, f))
    }

    /// Writes file contents through the cache.
    pub(crate) fn write_file(
        &mut self,
        frames: &mut Frames,
        file: FileId,
        offset: u64,
        data: &[u8],
    ) {
        let mut done = 0usize;
        while done < data.len() {
            let pos = offset + done as u64;
            let off = (pos % PAGE_SIZE) as usize;
            let n = (PAGE_SIZE as usize - off).min(data.len() - done);
            let f = self.frame(frames, Obj::File(file), pos / PAGE_SIZE);
            frames.write(f, off, &data[done..done + n]);
            done += n;
        }
    }

    /// Reads file contents through the cache (absent pages read as zeros).
    pub(crate) fn read_file(&self, frames: &Frames, file: FileId, offset: u64, out: &mut [u8]) {
        let mut done = 0usize;
        while done < out.len() {
            let pos = offset + done as u64;
            let off = (pos % PAGE_SIZE) as usize;
            let n = (PAGE_SIZE as usize - off).min(out.len() - done);
            match self.lookup(Obj::File(file), pos / PAGE_SIZE) {
                Some(f) => frames.read(f, off, &mut out[done..done + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
    }
}
