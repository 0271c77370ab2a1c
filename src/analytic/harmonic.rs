//! Harmonic numbers, the one place they are computed.

/// Euler-Mascheroni constant.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// Above this `n` the asymptotic series is used (its truncation error is below `1e-40`).
const DIRECT_SUM_LIMIT: u32 = 1000;

/// The `n`-th harmonic number `H_n = sum_{i=1}^{n} 1/i`, with `H_0 = 0`.
///
/// `H_c` is the expected maximum of `c` i.i.d. unit-mean exponentials (used by the fork-join
/// formulas). For `n <= 1000` the sum is added from the smallest term up; above that the
/// asymptotic expansion `ln n + gamma + 1/(2n) - 1/(12 n^2) + 1/(120 n^4)` is used (Knuth,
/// *The Art of Computer Programming* vol. 1, 1.2.7), which is accurate to double precision there.
pub fn harmonic(n: u32) -> f64 {
    if n <= DIRECT_SUM_LIMIT {
        (1..=n).rev().map(|i| 1.0 / f64::from(i)).sum()
    } else {
        let x = f64::from(n);
        let x2 = x * x;
        x.ln() + EULER_GAMMA + 1.0 / (2.0 * x) - 1.0 / (12.0 * x2) + 1.0 / (120.0 * x2 * x2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_by_hand() {
        assert_eq!(harmonic(0), 0.0);
        assert_eq!(harmonic(1), 1.0);
        assert!((harmonic(2) - 1.5).abs() < 1e-15);
        assert!((harmonic(4) - 25.0 / 12.0).abs() < 1e-15);
    }

    #[test]
    fn asymptotic_branch_joins_the_direct_sum() {
        let direct: f64 = (1..=1001u32).rev().map(|i| 1.0 / f64::from(i)).sum();
        assert!((harmonic(1001) - direct).abs() < 1e-13);
        // H_{10^6} = 14.392726722865723631...
        assert!((harmonic(1_000_000) - 14.392_726_722_865_724).abs() < 1e-12);
    }
}
