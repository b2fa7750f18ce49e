//! Range arguments of *queries*: an empty range asks for nothing and gets
//! nothing, a reversed one is a programming error — the rule of
//! `BTreeMap::range`.
//!
//! Stores keep the stricter rule of [`bounds`](crate::tree::bounds): storing
//! over an empty range is always a mistake, so it panics there.

use core::ops::{Bound, RangeBounds};

/// Turns a query's range argument into `Some((first, last))`, or `None` when
/// it holds no index (`5..5`, `..0`, `(Excluded(7), Included(7))`).
///
/// # Panics
/// If the range is reversed: its start bound lies above its end bound, or
/// both are the same excluded index (as `BTreeMap::range` panics).
#[track_caller]
pub(crate) fn query_bounds(range: &impl RangeBounds<u64>) -> Option<(u64, u64)> {
    let start = range.start_bound();
    let end = range.end_bound();
    let reversed = match (start, end) {
        (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
        (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => s > e,
        _ => false,
    };
    if reversed {
        panic!("maple tree: reversed range ({start:?}, {end:?})");
    }
    let first = match start {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let last = match end {
        Bound::Included(&e) => e,
        Bound::Excluded(&e) => e.checked_sub(1)?,
        Bound::Unbounded => u64::MAX,
    };
    (first <= last).then_some((first, last))
}

#[cfg(test)]
mod tests {
    use super::query_bounds;
    use core::ops::Bound::{Excluded, Included, Unbounded};

    #[test]
    fn empty_ranges_hold_nothing() {
        assert_eq!(query_bounds(&(5..5)), None);
        assert_eq!(query_bounds(&(..0)), None);
        assert_eq!(query_bounds(&(Excluded(7), Included(7))), None);
        assert_eq!(query_bounds(&(Excluded(u64::MAX), Unbounded)), None);
        assert_eq!(query_bounds(&(Excluded(4), Excluded(5))), None);
    }

    #[test]
    fn non_empty_ranges_are_inclusive_pairs() {
        assert_eq!(query_bounds(&(5..6)), Some((5, 5)));
        assert_eq!(query_bounds(&(..)), Some((0, u64::MAX)));
        assert_eq!(query_bounds(&(3..=3)), Some((3, 3)));
        assert_eq!(query_bounds(&(Excluded(3), Unbounded)), Some((4, u64::MAX)));
    }

    #[test]
    #[should_panic(expected = "reversed range")]
    fn reversed_range_panics() {
        #[allow(clippy::reversed_empty_ranges)]
        query_bounds(&(6..5));
    }

    #[test]
    #[should_panic(expected = "reversed range")]
    fn reversed_inclusive_range_panics() {
        #[allow(clippy::reversed_empty_ranges)]
        query_bounds(&(6..=5));
    }

    #[test]
    #[should_panic(expected = "reversed range")]
    fn same_excluded_bounds_panic() {
        query_bounds(&(Excluded(5), Excluded(5)));
    }
}
