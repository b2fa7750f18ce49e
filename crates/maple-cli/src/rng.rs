//! The yardstick's random numbers: splitmix64 seeded with 42, and `perm(N)`
//! (BENCHMARKS.md, "Random numbers").

/// The seed every workload starts from (and resets to).
pub const SEED: u64 = 42;

/// splitmix64, exactly as BENCHMARKS.md spells it.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state is [`SEED`].
    pub fn new() -> Self {
        Self::with_seed(SEED)
    }

    /// A generator with an explicit starting state.
    pub fn with_seed(state: u64) -> Self {
        SplitMix64 { state }
    }

    /// The next output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Default for SplitMix64 {
    fn default() -> Self {
        Self::new()
    }
}

/// `perm(N)`: `p = [0, .., N-1]`; for `i` from `N-1` down to 1, `j = next() % (i+1)`,
/// swap `p[i]` and `p[j]`. Draws from `rng`, which the caller has seeded.
pub fn perm(n: u64, rng: &mut SplitMix64) -> Vec<u64> {
    let mut p: Vec<u64> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_first_outputs_from_42() {
        // Computed independently (Python, from BENCHMARKS.md's pseudocode).
        let mut r = SplitMix64::new();
        assert_eq!(r.next_u64(), 0xbdd7_3226_2feb_6e95);
        assert_eq!(r.next_u64(), 0x28ef_e333_b266_f103);
        assert_eq!(r.next_u64(), 0x4752_6757_130f_9f52);
        assert_eq!(r.next_u64(), 0x581c_e1ff_0e4a_e394);
    }

    #[test]
    fn splitmix64_seed_zero_is_the_published_sequence() {
        // The first output of splitmix64 from state 0 (Vigna's reference code).
        assert_eq!(SplitMix64::with_seed(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn perm_of_ten_from_42() {
        let mut r = SplitMix64::new();
        assert_eq!(perm(10, &mut r), vec![0, 9, 5, 8, 6, 4, 7, 2, 1, 3]);
    }

    #[test]
    fn perm_is_a_permutation() {
        let mut r = SplitMix64::new();
        let mut p = perm(1000, &mut r);
        p.sort_unstable();
        assert!(p.iter().enumerate().all(|(i, &x)| x == i as u64));
        assert!(perm(0, &mut r).is_empty());
        assert_eq!(perm(1, &mut r), vec![0]);
    }
}
