//! Gap search by scanning entries: what a user of a range map without gap tracking
//! writes. Shared by the peers that have no gap search of their own in the needed
//! direction; the reference model has its own, separate code.

/// The lowest `s` in `min..=max` with `s..=s+size-1` inside `min..=max` and free,
/// given the entries overlapping `min..=max` as `(first, last)`, ascending.
#[inline]
pub fn first_fit(
    entries: impl Iterator<Item = (u64, u64)>,
    min: u64,
    max: u64,
    size: u64,
) -> Option<u64> {
    let mut cand = min; // lowest index not known to be covered
    for (first, last) in entries {
        if first > cand && first - cand >= size {
            return Some(cand);
        }
        if last >= max {
            return None;
        }
        cand = cand.max(last + 1);
    }
    (max - cand >= size - 1).then_some(cand)
}

/// The highest such `s`, given the entries overlapping `min..=max`, descending.
#[inline]
pub fn last_fit(
    entries: impl Iterator<Item = (u64, u64)>,
    min: u64,
    max: u64,
    size: u64,
) -> Option<u64> {
    let mut top = max; // highest index not known to be covered
    for (first, last) in entries {
        if last < top && top - last >= size {
            return Some(top - (size - 1));
        }
        if first <= min {
            return None;
        }
        top = top.min(first - 1);
    }
    (top - min >= size - 1).then(|| top - (size - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: [(u64, u64); 2] = [(10, 19), (25, 29)];

    #[test]
    fn forward() {
        let f = |min, max, size| {
            let it = E.iter().copied().filter(|&(a, b)| b >= min && a <= max);
            first_fit(it, min, max, size)
        };
        assert_eq!(f(0, 40, 5), Some(0));
        assert_eq!(f(6, 40, 5), Some(20));
        assert_eq!(f(0, 40, 12), None);
        assert_eq!(f(0, 40, 11), Some(30));
        assert_eq!(f(12, 19, 1), None);
        assert_eq!(f(12, 24, 5), Some(20));
        assert_eq!(f(12, 23, 5), None);
    }

    #[test]
    fn reverse() {
        let f = |min, max, size| {
            let it = E
                .iter()
                .rev()
                .copied()
                .filter(|&(a, b)| b >= min && a <= max);
            last_fit(it, min, max, size)
        };
        assert_eq!(f(0, 40, 5), Some(36));
        assert_eq!(f(0, 28, 5), Some(20));
        assert_eq!(f(0, 28, 6), Some(4));
        assert_eq!(f(12, 28, 6), None);
        assert_eq!(f(0, 9, 10), Some(0));
        assert_eq!(f(0, 9, 11), None);
        assert_eq!(f(0, u64::MAX, 1), Some(u64::MAX));
    }
}
