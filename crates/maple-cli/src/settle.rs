//! When a case's ratios have had rounds enough to be trusted.
//!
//! A peer's ratio to maple is the median over the rounds of the ratio
//! within a round (see `measure::paired_ratio`). Most cases' per-round
//! ratios agree within a few percent, and five rounds pin their median
//! down. Some do not: where one implementation's speed depends on how a
//! fresh process's allocator happened to lay its structure out (pointer
//! chasing through a million nodes), a case's turns fall into a fast and a
//! slow mode, process by process, and the median of five such ratios moves
//! by more than 15% from one run to the next.
//!
//! So after the rounds asked for, `maple bench --max-rounds` keeps sweeping
//! the cases that are not yet settled, and only those. A case is settled
//! when, for every implementation, a 90% confidence interval of the median of
//! its per-round ratios to maple spans at most [`SETTLED_SPAN`]. The interval
//! is the distribution-free one, between two order statistics of the
//! ratios (how far in from each end follows from the binomial distribution),
//! so it makes no assumption about how the rounds spread: two modes keep a
//! case unsettled until one of them clearly holds the median, and with
//! rounds enough one outlying round falls outside the interval.

use crate::measure::{Measurement, Outcome};

/// The widest confidence interval of a median ratio that counts as
/// settled: its ends at most 20% apart. Two runs whose medians lie in
/// such intervals around the same true ratio mostly differ by well under
/// the 15% that `scripts/results.sh check` allows.
pub const SETTLED_SPAN: f64 = 1.2;

/// The confidence asked of the interval.
const CONFIDENCE: f64 = 0.9;

/// `P(X <= j)` for `X` binomial with `n` trials of probability 1/2.
fn binomial_half_cdf(n: usize, j: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32); // C(n, 0) / 2^n
    let mut sum = term;
    for i in 1..=j.min(n) {
        term *= (n + 1 - i) as f64 / i as f64;
        sum += term;
    }
    sum
}

/// A confidence interval of the median of `xs` (non-empty): the `k`-th
/// smallest and the `k`-th largest, for the largest `k` whose interval
/// still covers the true median with probability [`CONFIDENCE`] (at
/// least the whole range: below 5 samples no interval reaches 90%).
fn median_interval(xs: &[f64]) -> (f64, f64) {
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let mut k = 1;
    // [s[k], s[n-1-k]] (the (k+1)-th from each end) misses the median with
    // probability 2 P(X <= k).
    while k < n / 2 && 1.0 - 2.0 * binomial_half_cdf(n, k) >= CONFIDENCE {
        k += 1;
    }
    (s[k - 1], s[n - k])
}

/// Whether one case's turns so far (`turns[implementation][round]`) leave
/// some ratio to the implementation at `base` unsettled. A case with a turn
/// that did not run cleanly, or with fewer than two rounds, is settled:
/// more rounds would not change what it reports.
pub fn unsettled(turns: &[Vec<Measurement>], base: usize) -> bool {
    let times = |imp: &[Measurement]| -> Option<Vec<f64>> {
        imp.iter()
            .map(|m| match &m.outcome {
                Outcome::Ok(t) => Some(t.ns_per_op),
                _ => None,
            })
            .collect()
    };
    let Some(base_times) = turns.get(base).and_then(|b| times(b)) else {
        return false;
    };
    if base_times.len() < 2 {
        return false;
    }
    turns.iter().enumerate().any(|(i, imp)| {
        if i == base {
            return false;
        }
        let Some(t) = times(imp) else {
            return false;
        };
        if t.len() != base_times.len() {
            return false;
        }
        let ratios: Vec<f64> = t.iter().zip(&base_times).map(|(a, b)| a / b).collect();
        let (lo, hi) = median_interval(&ratios);
        hi > lo * SETTLED_SPAN
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected::Source;
    use crate::measure::Timing;
    use crate::workloads::{Case, Workload};

    fn turns(name: &'static str, ns: &[f64]) -> Vec<Measurement> {
        ns.iter()
            .map(|&ns| Measurement {
                case: Case {
                    workload: Workload::Iter,
                    n: 1000,
                    q: None,
                },
                impl_name: name,
                expected: 7,
                expected_from: Source::Table,
                outcome: Outcome::Ok(Timing {
                    ns_per_op: ns,
                    all_ns_per_op: vec![ns],
                    round_medians: vec![ns],
                    checksum: 7,
                    bytes_per_entry: None,
                    heap_bytes_per_entry: None,
                    shared: None,
                    instructions_per_op: None,
                }),
            })
            .collect()
    }

    #[test]
    fn the_interval_narrows_with_rounds() {
        assert!((binomial_half_cdf(5, 1) - 6.0 / 32.0).abs() < 1e-12);
        assert_eq!(binomial_half_cdf(3, 3), 1.0);
        let xs: Vec<f64> = (1..=5).map(f64::from).collect();
        assert_eq!(median_interval(&xs), (1.0, 5.0));
        // 10 samples: the 2nd from each end (97.9%; the 3rd would be 89.1%).
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&xs), (2.0, 9.0));
        // 15 samples: the 4th (96.5%; the 5th would be 88.2%).
        let xs: Vec<f64> = (1..=15).map(f64::from).collect();
        assert_eq!(median_interval(&xs), (4.0, 12.0));
        assert_eq!(median_interval(&[3.0]), (3.0, 3.0));
    }

    #[test]
    fn ratios_that_agree_are_settled() {
        // Both drift together from round to round: the ratio stays near 2.
        let case = [
            turns("maple", &[10.0, 14.0, 9.0, 12.0, 11.0]),
            turns("peer", &[20.2, 27.8, 18.1, 24.0, 22.1]),
        ];
        assert!(!unsettled(&case, 0));
    }

    #[test]
    fn an_outlying_round_needs_rounds_enough_to_be_outvoted() {
        let peer = [20.0, 20.4, 19.8, 35.0, 20.1, 20.3, 19.9, 20.2];
        let at = |n: usize| [turns("maple", &vec![10.0; n]), turns("peer", &peer[..n])];
        assert!(unsettled(&at(5), 0));
        assert!(!unsettled(&at(8), 0));
    }

    #[test]
    fn two_modes_are_unsettled_until_one_clearly_holds_the_median() {
        // The peer's process is fast or slow by turns: ratios 1.5 and 2.1.
        let at = |peer: &[f64]| [turns("maple", &vec![10.0; peer.len()]), turns("peer", peer)];
        assert!(unsettled(&at(&[15.0, 21.0, 15.0, 21.0, 15.0]), 0));
        let alternating: Vec<f64> = (0..15)
            .map(|i| if i % 2 == 0 { 15.0 } else { 21.0 })
            .collect();
        assert!(unsettled(&at(&alternating), 0));
        let mostly_fast = [
            15.0, 21.0, 15.0, 15.0, 15.0, 15.0, 21.0, 15.0, 15.0, 15.0, 15.0, 15.0,
        ];
        assert!(!unsettled(&at(&mostly_fast), 0));
    }

    #[test]
    fn the_base_is_compared_with_every_other_implementation() {
        let case = [
            turns("peer", &[20.0, 20.0, 20.0, 20.0, 20.0]),
            turns("maple", &[10.0, 10.0, 10.0, 10.0, 10.0]),
            turns("other", &[10.0, 20.0, 10.0, 20.0, 15.0]),
        ];
        assert!(unsettled(&case, 1));
        assert!(!unsettled(&case[..2], 1));
    }

    #[test]
    fn one_round_or_an_unclean_turn_is_settled() {
        let case = [turns("maple", &[10.0]), turns("peer", &[20.0])];
        assert!(!unsettled(&case, 0));
        let mut failed = turns("peer", &[10.0, 30.0, 10.0]);
        failed[1].outcome = Outcome::Failed("boom".into());
        let case = [turns("maple", &[10.0, 10.0, 10.0]), failed];
        assert!(!unsettled(&case, 0));
    }
}
