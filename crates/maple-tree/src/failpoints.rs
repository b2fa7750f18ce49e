//! Fault injection for tests (feature `failpoints`): make the node allocator
//! of the current thread fail, to prove that fallible operations clean up.
//!
//! ```
//! # #[cfg(feature = "failpoints")] {
//! use maple_tree::{failpoints, MapleTree};
//! let t: MapleTree<u64> = (0..1000u64).map(|i| (i * 2..=i * 2, i)).collect();
//! failpoints::fail_node_alloc_after(3);
//! assert!(t.try_clone().is_err());
//! failpoints::clear();
//! assert_eq!(t.try_clone().unwrap(), t);
//! # }
//! ```

use crate::error::AllocError;
use std::cell::Cell;

std::thread_local! {
    static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

/// Lets `n` more node allocations on this thread succeed, then fails every one
/// after them until [`clear`].
///
/// ```
/// use maple_tree::{failpoints, MapleTree};
/// let t: MapleTree<u64> = (0..1000u64).map(|i| (i * 2..=i * 2, i)).collect();
/// failpoints::fail_node_alloc_after(2); // two more nodes, then failure
/// let err = t.try_clone().unwrap_err(); // the fallible path reports it
/// assert_eq!(err, maple_tree::AllocError);
/// failpoints::clear();
/// ```
pub fn fail_node_alloc_after(n: usize) {
    LEFT.with(|l| l.set(Some(n)));
}

/// Stops failing node allocations on this thread.
///
/// ```
/// use maple_tree::{failpoints, MapleTree};
/// let t: MapleTree<u64> = (0..100u64).map(|i| (i..=i, i)).collect();
/// failpoints::fail_node_alloc_after(0);
/// assert!(t.try_clone().is_err());
/// failpoints::clear();
/// assert!(t.try_clone().is_ok());
/// ```
pub fn clear() {
    LEFT.with(|l| l.set(None));
}

/// Node allocations made on this thread so far (failed ones included).
///
/// ```
/// use maple_tree::{failpoints, MapleTree};
/// let t: MapleTree<u64> = (0..1000u64).map(|i| (i * 2..=i * 2, i)).collect();
/// let before = failpoints::node_allocs();
/// let copy = t.try_clone().unwrap();
/// assert!(failpoints::node_allocs() > before); // the copy took nodes
/// assert_eq!(copy, t);
/// ```
pub fn node_allocs() -> usize {
    COUNT.with(|c| c.get())
}

pub(crate) fn tick() -> Result<(), AllocError> {
    COUNT.with(|c| c.set(c.get() + 1));
    LEFT.with(|l| match l.get() {
        None => Ok(()),
        Some(0) => Err(AllocError),
        Some(n) => {
            l.set(Some(n - 1));
            Ok(())
        }
    })
}
