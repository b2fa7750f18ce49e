//! The Linux kernel's maple tree, written anew in Rust for user space.
//!
//! (Skeleton: the crate docs are written with the implementation.)
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;

mod cursor;
mod error;
mod iter;
mod tree;

pub use cursor::{Cursor, CursorMut};
pub use error::{AllocError, CheckError, DupError, NoSpace, OccupiedError, Stats, WritePaths};
pub use iter::{IntoIter, Iter, IterMut, Range};
pub use tree::MapleTree;
