//! The list of a pool's chunks, in 16 bytes.
//!
//! The pool is part of every tree struct, and a duplication writes a new tree
//! struct for each copy: at 21 entries that struct was a fifth of the bytes a
//! copy wrote, and at over 128 bytes it was moved with `memcpy` calls. So a
//! chunk is one word, its size class kept in the low bits of its address,
//! and only the first chunk is held inline: a tree that grows a second chunk
//! lists the rest in one heap allocation (a `ThinVec`, one word inline).

use super::{CLASSES, NODE_SIZE};
use crate::node::Node;
use core::num::NonZero;
use core::ptr::NonNull;
use thin_vec::ThinVec;

/// The low address bits that hold the class (chunks are node-aligned).
const CLASS_BITS: usize = NODE_SIZE - 1;
const _: () = assert!(CLASSES <= NODE_SIZE);

/// A chunk: the address of its start, tagged with its size class (not a
/// pointer to a node until [`start`](Chunk::start) clears the tag).
#[derive(Clone, Copy)]
pub(super) struct Chunk(NonNull<u8>);

impl Chunk {
    pub(super) fn new(start: NonNull<Node>, class: usize) -> Self {
        debug_assert!(class < CLASSES);
        debug_assert_eq!(
            start.as_ptr().addr() & CLASS_BITS,
            0,
            "chunk not node-aligned"
        );
        Chunk(start.cast::<u8>().map_addr(|a| a | class))
    }

    pub(super) fn start(self) -> NonNull<Node> {
        // The start is node-aligned and non-null, so clearing the class bits
        // leaves it non-zero; `unwrap_or` is never taken.
        self.0
            .map_addr(|a| NonZero::new(a.get() & !CLASS_BITS).unwrap_or(a))
            .cast()
    }

    pub(super) fn class(self) -> usize {
        self.0.as_ptr().addr() & CLASS_BITS
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
            let c = Chunk::new(at(class), class);
            assert_eq!((c.start(), c.class()), (at(class), class));
        }
    }

    #[test]
    fn the_list_keeps_order_and_empties() {
        let mut list = ChunkList::new();
        assert!(list.last().is_none());
        for i in 0..5 {
            list.push(Chunk::new(at(i), i));
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
