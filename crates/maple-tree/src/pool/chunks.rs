//! A pool's chunks: how one is allocated and freed, and the list of them,
//! in 16 bytes.
//!
//! The pool is part of every tree struct, and a duplication writes a new tree
//! struct for each copy: at 21 entries that struct was a fifth of the bytes a
//! copy wrote, and at over 128 bytes it was moved with `memcpy` calls. So a
//! chunk is one word, its size class and alignment offset kept in the low
//! bits of its (node-aligned) start, and only the first chunk is held inline:
//! a tree that grows a second chunk lists the rest in one heap allocation (a
//! `ThinVec`, one word inline).
//!
//! Nodes must be node-aligned (a tree's root word and a chunk word keep tags
//! in the low bits), but a chunk is not allocated with that alignment: glibc
//! serves an aligned request (`posix_memalign`) by carving a larger block and
//! freeing its ends, which cost about 670 instructions per 1 KiB chunk, most
//! of the 1,556 a 21-entry duplication took when its chunk was new
//! (callgrind, `maple bench --workload dup --n 21 --count instructions`). A
//! chunk is allocated with the allocator's usual 16-byte alignment and
//! `NODE_SIZE - 16` spare bytes instead, and starts at the first node-aligned
//! address in it; the offset is kept to free it.

use super::{class_nodes, CLASSES, NODE_SIZE};
use crate::node::Node;
use alloc::alloc::{alloc, dealloc, Layout};
use core::num::NonZero;
use core::ptr::NonNull;
use thin_vec::ThinVec;

/// The alignment chunks are allocated with (what `malloc` gives anyway).
const ALLOC_ALIGN: usize = 16;
/// The low address bits that hold the class and the offset.
const TAG_BITS: usize = NODE_SIZE - 1;
/// The class takes the bits below [`ALLOC_ALIGN`]; the offset, a multiple
/// of it below `NODE_SIZE`, the rest.
const CLASS_MASK: usize = ALLOC_ALIGN - 1;
const _: () = assert!(CLASSES <= ALLOC_ALIGN && ALLOC_ALIGN < NODE_SIZE);

/// The layout a chunk of `class` is allocated with: its nodes and room to
/// align their start.
pub(super) fn alloc_layout(class: usize) -> Layout {
    Layout::from_size_align(
        class_nodes(class) * NODE_SIZE + NODE_SIZE - ALLOC_ALIGN,
        ALLOC_ALIGN,
    )
    .expect("node chunk size")
}

/// A chunk: the address of its start, tagged with its size class and its
/// offset from the start of its allocation (not a pointer to a node until
/// [`start`](Chunk::start) clears the tag).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Chunk(NonNull<u8>);

impl Chunk {
    /// Allocates a chunk of `class` from the global allocator.
    pub(super) fn alloc(class: usize) -> Option<Self> {
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { alloc(alloc_layout(class)) })?;
        let offset = base.as_ptr().addr().wrapping_neg() & (NODE_SIZE - 1);
        debug_assert_eq!(offset % ALLOC_ALIGN, 0, "the allocator broke the alignment");
        // SAFETY: `offset < NODE_SIZE - ALLOC_ALIGN + 1`: the start and the
        // chunk's nodes after it lie inside the allocation (the layout's
        // spare bytes).
        let start = unsafe { base.add(offset) };
        Some(Chunk::tag(start.cast(), class, offset))
    }

    /// Gives the chunk's memory back to the global allocator.
    ///
    /// # Safety
    /// The chunk was made by [`Chunk::alloc`], is freed once, and none of
    /// its nodes is used again.
    pub(super) unsafe fn free(self) {
        let offset = self.0.as_ptr().addr() & TAG_BITS & !CLASS_MASK;
        // SAFETY: the start lies `offset` bytes into the allocation.
        let base = unsafe { self.start().cast::<u8>().sub(offset) };
        // SAFETY: the caller's promise; allocated with this layout.
        unsafe { dealloc(base.as_ptr(), alloc_layout(self.class())) };
    }

    fn tag(start: NonNull<Node>, class: usize, offset: usize) -> Self {
        debug_assert!(class < CLASSES);
        debug_assert_eq!(
            start.as_ptr().addr() & TAG_BITS,
            0,
            "chunk not node-aligned"
        );
        debug_assert!(offset % ALLOC_ALIGN == 0 && offset < NODE_SIZE);
        Chunk(start.cast::<u8>().map_addr(|a| a | offset | class))
    }

    pub(super) fn start(self) -> NonNull<Node> {
        // The start is node-aligned and non-null, so clearing the tag leaves
        // it non-zero; `unwrap_or` is never taken.
        self.0
            .map_addr(|a| NonZero::new(a.get() & !TAG_BITS).unwrap_or(a))
            .cast()
    }

    pub(super) fn class(self) -> usize {
        self.0.as_ptr().addr() & CLASS_MASK
    }
}

/// The chunks of a pool, oldest first.
pub(super) struct ChunkList {
    first: Option<Chunk>,
    rest: ThinVec<Chunk>,
}

impl ChunkList {
    pub(super) const fn new() -> Self {
        ChunkList {
            first: None,
            rest: ThinVec::new(),
        }
    }

    pub(super) fn push(&mut self, chunk: Chunk) {
        if self.first.is_none() {
            self.first = Some(chunk);
        } else {
            self.rest.push(chunk);
        }
    }

    /// The newest chunk.
    pub(super) fn last(&self) -> Option<Chunk> {
        self.rest.last().copied().or(self.first)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = Chunk> + '_ {
        self.first.into_iter().chain(self.rest.iter().copied())
    }

    /// Empties the list, handing out its chunks.
    pub(super) fn take_all(&mut self) -> impl Iterator<Item = Chunk> {
        let rest = core::mem::take(&mut self.rest);
        self.first.take().into_iter().chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::{Chunk, ChunkList};
    use crate::node::{Node, NODE_SIZE};
    use core::ptr::NonNull;

    /// A fake node-aligned address: chunks in these tests are never dereferenced.
    fn at(i: usize) -> NonNull<Node> {
        NonNull::new(core::ptr::without_provenance_mut((i + 1) * 4 * NODE_SIZE)).unwrap()
    }

    #[test]
    fn a_chunk_keeps_its_start_and_class() {
        for class in 0..super::CLASSES {
            for offset in [0, 16, NODE_SIZE - 16] {
                let c = Chunk::tag(at(class), class, offset);
                assert_eq!((c.start(), c.class()), (at(class), class));
            }
        }
    }

    #[test]
    fn an_allocated_chunk_is_node_aligned_and_frees() {
        for class in 0..4 {
            let chunks: alloc::vec::Vec<Chunk> =
                (0..8).map(|_| Chunk::alloc(class).unwrap()).collect();
            for c in &chunks {
                assert_eq!(c.start().as_ptr().addr() % NODE_SIZE, 0);
                assert_eq!(c.class(), class);
                // The whole chunk is writable (Miri checks the bounds).
                let bytes = super::class_nodes(class) * NODE_SIZE;
                // SAFETY: the chunk's nodes lie inside its allocation.
                unsafe { core::ptr::write_bytes(c.start().as_ptr().cast::<u8>(), 0xa5, bytes) };
            }
            for c in chunks {
                // SAFETY: made by `Chunk::alloc` above, freed once.
                unsafe { c.free() };
            }
        }
    }

    #[test]
    fn the_list_keeps_order_and_empties() {
        let mut list = ChunkList::new();
        assert!(list.last().is_none());
        for i in 0..5 {
            list.push(Chunk::tag(at(i), i, 16 * i));
            assert_eq!(list.last().map(Chunk::start), Some(at(i)));
        }
        let seen: alloc::vec::Vec<_> = list.iter().map(|c| (c.start(), c.class())).collect();
        assert_eq!(
            seen,
            (0..5).map(|i| (at(i), i)).collect::<alloc::vec::Vec<_>>()
        );
        assert_eq!(list.take_all().count(), 5);
        assert!(list.last().is_none() && list.iter().next().is_none());
    }
}
