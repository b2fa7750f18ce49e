//! Physical frames: an arena of 4 KiB pages with reference counts.
//!
//! A frame is 16 bytes of bookkeeping plus its contents, boxed and allocated
//! only when first written (a frame without contents reads as zeros), so a
//! gigabyte of touched memory costs a gigabyte and 4 MiB. Frame 0 is the
//! shared zero page: never refcounted, never written (Linux's `ZERO_PAGE`,
//! mapped read-only by read faults on private anonymous memory).

use crate::config::PAGE_SIZE;

/// The index of a frame in the arena.
pub(crate) type FrameId = u32;

/// The zero page.
pub(crate) const ZERO_FRAME: FrameId = 0;

/// Contents of one frame.
pub(crate) type Page = [u8; PAGE_SIZE as usize];

/// One physical frame.
#[derive(Default)]
pub(crate) struct Frame {
    /// The contents; `None` while all zero.
    data: Option<Box<Page>>,
    /// References: one per page-table entry that maps it (an entry of a
    /// page table shared by several address spaces counts once) plus one
    /// while it sits in the page cache. 0 = free.
    pub(crate) refs: u32,
    /// Whether the page cache holds it (it then belongs to a file or a
    /// shared anonymous object, never to one process alone).
    pub(crate) cached: bool,
}

/// A new zeroed page (calloc'ed: no page of zeros is built on the stack).
fn zeroed_page() -> Box<Page> {
    let v: Box<[u8]> = vec![0u8; PAGE_SIZE as usize].into_boxed_slice();
    match v.try_into() {
        Ok(b) => b,
        Err(_) => Box::new([0u8; PAGE_SIZE as usize]),
    }
}

/// The frame arena.
pub(crate) struct Frames {
    v: Vec<Frame>,
    free: Vec<FrameId>,
    live: usize,
}

impl Frames {
    /// An arena holding only the zero page.
    pub(crate) fn new() -> Frames {
        Frames {
            v: vec![Frame::default()],
            free: Vec::new(),
            live: 0,
        }
    }

    /// Frames in use (the zero page not counted).
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Number of slots (live and free), the zero page included.
    pub(crate) fn slots(&self) -> usize {
        self.v.len()
    }

    /// A new zero-filled frame with one reference.
    pub(crate) fn alloc(&mut self) -> FrameId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            let f = &mut self.v[id as usize];
            f.refs = 1;
            f.cached = false;
            id
        } else {
            self.v.push(Frame {
                data: None,
                refs: 1,
                cached: false,
            });
            (self.v.len() - 1) as FrameId
        }
    }

    /// A new frame with the contents of `src` and one reference (the copy of
    /// a copy-on-write fault).
    pub(crate) fn alloc_copy(&mut self, src: FrameId) -> FrameId {
        let id = self.alloc();
        if let Some(d) = &self.v[src as usize].data {
            let mut p = zeroed_page();
            p.copy_from_slice(&d[..]);
            self.v[id as usize].data = Some(p);
        }
        id
    }

    /// Adds a reference.
    #[inline]
    pub(crate) fn get(&mut self, id: FrameId) {
        if id != ZERO_FRAME {
            self.v[id as usize].refs += 1;
        }
    }

    /// Drops a reference; frees the frame at zero.
    #[inline]
    pub(crate) fn put(&mut self, id: FrameId) {
        if id == ZERO_FRAME {
            return;
        }
        let f = &mut self.v[id as usize];
        f.refs -= 1;
        if f.refs == 0 {
            f.data = None;
            f.cached = false;
            self.free.push(id);
            self.live -= 1;
        }
    }

    /// The frame's bookkeeping.
    #[inline]
    pub(crate) fn frame(&self, id: FrameId) -> &Frame {
        &self.v[id as usize]
    }

    /// Marks a frame as held by the page cache.
    pub(crate) fn set_cached(&mut self, id: FrameId, cached: bool) {
        self.v[id as usize].cached = cached;
    }

    /// Copies bytes out of a frame.
    pub(crate) fn read(&self, id: FrameId, off: usize, out: &mut [u8]) {
        match &self.v[id as usize].data {
            Some(d) => out.copy_from_slice(&d[off..off + out.len()]),
            None => out.fill(0),
        }
    }

    /// Copies bytes into a frame (never the zero page).
    pub(crate) fn write(&mut self, id: FrameId, off: usize, src: &[u8]) {
        debug_assert_ne!(id, ZERO_FRAME);
        let d = self.v[id as usize].data.get_or_insert_with(zeroed_page);
        d[off..off + src.len()].copy_from_slice(src);
    }

    /// Whether the slot is free (refcount 0), for the checker.
    pub(crate) fn is_free(&self, id: FrameId) -> bool {
        id != ZERO_FRAME && self.v[id as usize].refs == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_counted_reused_and_copied() {
        let mut f = Frames::new();
        let a = f.alloc();
        assert_ne!(a, ZERO_FRAME);
        f.write(a, 10, b"abc");
        let b = f.alloc_copy(a);
        let mut out = [0u8; 3];
        f.read(b, 10, &mut out);
        assert_eq!(&out, b"abc");
        f.get(a);
        f.put(a);
        assert_eq!(f.live(), 2);
        f.put(a);
        assert!(f.is_free(a));
        assert_eq!(f.live(), 1);
        let c = f.alloc();
        assert_eq!(c, a, "the slot is reused");
        f.read(c, 10, &mut out);
        assert_eq!(out, [0, 0, 0], "a reused frame is zero");
        f.get(ZERO_FRAME);
        f.put(ZERO_FRAME);
        assert_eq!(
            f.frame(ZERO_FRAME).refs,
            0,
            "the zero page is never counted"
        );
    }
}
