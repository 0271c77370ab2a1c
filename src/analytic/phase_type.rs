//! Phase-type laws: the time to absorption of a finite Markov chain. Exponential, Erlang,
//! hypoexponential, the M/M/c sojourn and sums of them along a Markov route are all phase-type,
//! and their CDF is computed the same robust way (uniformization).

use super::check;
use super::error::{AnalyticError, Result};
use super::inverse::invert_cdf;

/// Beyond `Lambda t + TAIL_SDS sqrt(Lambda t) + TAIL_EXTRA` steps the Poisson weights of
/// uniformization sum to less than `1e-30`.
const TAIL_SDS: f64 = 12.0;
const TAIL_EXTRA: f64 = 40.0;

/// Work allowed for one CDF value: uniformization steps (about the chain's fastest rate times
/// `t`) times the moves of one step, about 0.02 s; a quantile takes about 40 values.
const MAX_WORK: f64 = 2e7;

/// A phase-type law: start in phase `i` with probability `initial[i]` (the initial
/// probabilities sum to 1), stay an exponential time of rate `rates[i]`, then move to phase `j`
/// with probability `next[i][j]`, or end (absorb) with the probability left.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseType {
    initial: Vec<f64>,
    rates: Vec<f64>,
    next: Vec<Vec<(usize, f64)>>,
}

impl PhaseType {
    /// Checks and wraps the parts (see [`PhaseType`]).
    ///
    /// Errors: `DimensionMismatch` for lengths that differ; `InvalidParameter` for a rate that
    /// is not finite and positive, a negative or non-finite probability, initial probabilities
    /// that do not sum to 1, a phase whose moves sum above 1, or a move to a phase that does
    /// not exist.
    pub fn new(initial: Vec<f64>, rates: Vec<f64>, next: Vec<Vec<(usize, f64)>>) -> Result<Self> {
        let n = rates.len();
        for (what, len) in [("initial", initial.len()), ("next", next.len())] {
            if len != n {
                return Err(AnalyticError::DimensionMismatch {
                    what: what.to_owned(),
                    expected: n,
                    got: len,
                });
            }
        }
        if n == 0 {
            return Err(AnalyticError::NotApplicable(
                "a phase-type law needs at least one phase".to_owned(),
            ));
        }
        for &r in &rates {
            check::positive("phase rate", r)?;
        }
        let mut total = 0.0;
        for &p in &initial {
            total += check::non_negative("initial probability", p)?;
        }
        if (total - 1.0).abs() > 1e-9 {
            return Err(AnalyticError::InvalidParameter {
                what: "sum of the initial probabilities".to_owned(),
                value: total,
            });
        }
        for moves in &next {
            let mut out = 0.0;
            for &(j, p) in moves {
                if j >= n {
                    return Err(AnalyticError::InvalidParameter {
                        what: "target phase".to_owned(),
                        value: j as f64,
                    });
                }
                out += check::non_negative("move probability", p)?;
            }
            if out > 1.0 + 1e-9 {
                return Err(AnalyticError::InvalidParameter {
                    what: "sum of a phase's move probabilities".to_owned(),
                    value: out,
                });
            }
        }
        Ok(Self {
            initial,
            rates,
            next,
        })
    }

    /// Exponential of rate `rate`.
    ///
    /// Errors: `InvalidParameter` unless `rate` is finite and positive.
    pub fn exponential(rate: f64) -> Result<Self> {
        Self::new(vec![1.0], vec![rate], vec![Vec::new()])
    }

    /// The sum of independent exponentials of rates `rates` (hypoexponential; Erlang when the
    /// rates are equal).
    ///
    /// Errors: as [`PhaseType::new`].
    pub fn hypoexponential(rates: &[f64]) -> Result<Self> {
        let n = rates.len();
        let mut initial = vec![0.0; n];
        if let Some(first) = initial.first_mut() {
            *first = 1.0;
        }
        Self::new(initial, rates.to_vec(), chain(n))
    }

    /// A mixture of Erlangs of one rate: `weights[n]` is the probability of `n + 1` phases of
    /// rate `rate` (the sojourn of a FCFS exponential server found with `n` jobs ahead).
    ///
    /// Errors: as [`PhaseType::new`] (the weights must sum to 1).
    pub fn erlang_mixture(weights: &[f64], rate: f64) -> Result<Self> {
        let n = weights.len();
        // phase i has n - i phases to go: m + 1 phases start at phase n - 1 - m
        let initial = (0..n).map(|i| weights[n - 1 - i]).collect();
        Self::new(initial, vec![rate; n], chain(n))
    }

    /// The rate, when the law is a single exponential phase.
    pub fn exponential_rate(&self) -> Option<f64> {
        (self.rates.len() == 1).then_some(self.rates[0])
    }

    /// Number of phases.
    pub fn phases(&self) -> usize {
        self.rates.len()
    }

    /// The law of a walk through `blocks` along a Markov route: it starts in block `b` with
    /// probability `entry[b]`, and after block `b` moves to block `b'` with probability
    /// `route[b][b']` or ends with the probability left. Every block is an independent draw of
    /// its law at each visit.
    ///
    /// Errors: `DimensionMismatch` for lengths that differ; as [`PhaseType::new`] otherwise.
    pub fn routed(blocks: &[PhaseType], entry: &[f64], route: &[Vec<f64>]) -> Result<Self> {
        for (what, len) in [("entry", entry.len()), ("route", route.len())] {
            if len != blocks.len() {
                return Err(AnalyticError::DimensionMismatch {
                    what: what.to_owned(),
                    expected: blocks.len(),
                    got: len,
                });
            }
        }
        let offsets: Vec<usize> = blocks
            .iter()
            .scan(0, |at, b| {
                let start = *at;
                *at += b.phases();
                Some(start)
            })
            .collect();
        let mut initial = Vec::new();
        let mut rates = Vec::new();
        let mut next = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            initial.extend(block.initial.iter().map(|p| p * entry[b]));
            rates.extend_from_slice(&block.rates);
            if route[b].len() != blocks.len() {
                return Err(AnalyticError::DimensionMismatch {
                    what: "route row".to_owned(),
                    expected: blocks.len(),
                    got: route[b].len(),
                });
            }
            for moves in &block.next {
                let inside: f64 = moves.iter().map(|(_, p)| p).sum();
                let leaving = (1.0 - inside).max(0.0);
                let mut row: Vec<(usize, f64)> =
                    moves.iter().map(|&(j, p)| (offsets[b] + j, p)).collect();
                for (to, &r) in route[b].iter().enumerate() {
                    if r > 0.0 && leaving > 0.0 {
                        let target = &blocks[to];
                        row.extend(
                            target
                                .initial
                                .iter()
                                .enumerate()
                                .filter(|(_, p)| **p > 0.0)
                                .map(|(j, p)| (offsets[to] + j, leaving * r * p)),
                        );
                    }
                }
                next.push(row);
            }
        }
        Self::new(initial, rates, next)
    }

    /// The sum of independent draws of `parts`, in order.
    ///
    /// Errors: as [`PhaseType::routed`].
    pub fn sum(parts: &[PhaseType]) -> Result<Self> {
        let n = parts.len();
        let mut entry = vec![0.0; n];
        if let Some(first) = entry.first_mut() {
            *first = 1.0;
        }
        let route: Vec<Vec<f64>> = (0..n)
            .map(|b| (0..n).map(|to| f64::from(u8::from(to == b + 1))).collect())
            .collect();
        Self::routed(parts, &entry, &route)
    }

    /// `P(T > t)` by uniformization: with `L` the largest rate, the chain observed at the
    /// events of a Poisson process of rate `L` is a discrete chain, and `P(T > t)` is the
    /// Poisson-weighted probability of not having absorbed after `k` steps. Every term is
    /// non-negative, so equal or close rates cause no cancellation.
    ///
    /// Errors: `InvalidParameter` for a negative or non-finite `t`; `NotApplicable` when the
    /// steps times the moves per step exceed `2e7`.
    pub fn survival(&self, t: f64) -> Result<f64> {
        check::non_negative("t", t)?;
        let fastest = self.rates.iter().copied().fold(0.0, f64::max);
        let lt = fastest * t;
        let steps = lt + TAIL_SDS * lt.sqrt() + TAIL_EXTRA;
        let moves: usize = self.next.iter().map(|m| m.len() + 1).sum();
        if steps * moves as f64 > MAX_WORK {
            return Err(AnalyticError::NotApplicable(format!(
                "uniformization would need {steps:.0} steps of {moves} moves (rates too far apart for t = {t})"
            )));
        }
        let mut state = self.initial.clone();
        let mut after = vec![0.0; state.len()];
        let mut log_weight = -lt;
        let mut survival = 0.0;
        for k in 0..=(steps as u64) {
            if k > 0 {
                log_weight += lt.ln() - (k as f64).ln();
            }
            let alive: f64 = state.iter().sum();
            survival += log_weight.exp() * alive;
            if alive < 1e-300 {
                break;
            }
            after.iter_mut().for_each(|x| *x = 0.0);
            for (i, &p) in state.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let leave = self.rates[i] / fastest;
                after[i] += p * (1.0 - leave);
                for &(j, m) in &self.next[i] {
                    after[j] += p * leave * m;
                }
            }
            std::mem::swap(&mut state, &mut after);
        }
        Ok(survival.clamp(0.0, 1.0))
    }

    /// `P(T <= t)`.
    ///
    /// Errors: as [`PhaseType::survival`].
    pub fn cdf(&self, t: f64) -> Result<f64> {
        Ok(1.0 - self.survival(t)?)
    }

    /// The mean and second moment, `E[T]` and `E[T^2]` (see [`route_moments`]).
    ///
    /// Errors: `NotApplicable` when the chain does not absorb.
    pub fn moments(&self) -> Result<(f64, f64)> {
        let n = self.rates.len();
        let mut route = vec![vec![0.0; n]; n];
        for (i, moves) in self.next.iter().enumerate() {
            for &(j, p) in moves {
                route[i][j] += p;
            }
        }
        let visit: Vec<(f64, f64)> = self
            .rates
            .iter()
            .map(|r| (1.0 / r, 2.0 / (r * r)))
            .collect();
        route_moments(&self.initial, &route, &visit)
    }

    /// The quantile at level `q` in `(0, 1)` (see [`invert_cdf`]).
    ///
    /// Errors: as [`invert_cdf`] and [`PhaseType::survival`].
    pub fn quantile(&self, q: f64) -> Result<f64> {
        let slowest = self.rates.iter().copied().fold(f64::INFINITY, f64::min);
        invert_cdf(&|t| self.cdf(t), q, 0.0, 1.0 / slowest)
    }
}

/// The mean and second moment of the total time of a walk that enters state `i` with
/// probability `entry[i]`, moves from `i` to `j` with probability `route[i][j]` (it ends with
/// the probability left), and spends in each visit to `i` an independent time with mean and
/// second moment `visit[i]`. With `G` the mean and `H` the second moment of the time left from
/// `i`: `G = m1 + R G` and `H = m2 + 2 m1 (R G) + R H`; the number of visits may be random.
///
/// Errors: `NotApplicable` when the walk does not end with probability 1 (`I - R` singular).
pub fn route_moments(
    entry: &[f64],
    route: &[Vec<f64>],
    visit: &[(f64, f64)],
) -> Result<(f64, f64)> {
    let n = entry.len();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i * n + i] += 1.0;
        for j in 0..n {
            a[i * n + j] -= route[i][j];
        }
    }
    let stuck = || AnalyticError::NotApplicable("the route does not end".to_owned());
    let first: Vec<f64> = visit.iter().map(|m| m.0).collect();
    let g = crate::linalg::solve(a.clone(), first).ok_or_else(stuck)?;
    let rhs: Vec<f64> = (0..n)
        .map(|i| {
            let onward: f64 = (0..n).map(|j| route[i][j] * g[j]).sum();
            visit[i].1 + 2.0 * visit[i].0 * onward
        })
        .collect();
    let h = crate::linalg::solve(a, rhs).ok_or_else(stuck)?;
    let dot = |x: &[f64]| entry.iter().zip(x).map(|(e, v)| e * v).sum::<f64>();
    Ok((dot(&g), dot(&h)))
}

/// The routing of `n` phases in a line: phase `i` goes on to `i + 1`, the last one ends.
fn chain(n: usize) -> Vec<Vec<(usize, f64)>> {
    (0..n)
        .map(|i| {
            if i + 1 < n {
                vec![(i + 1, 1.0)]
            } else {
                Vec::new()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exponential_and_an_erlang() {
        let e = PhaseType::exponential(0.5).unwrap();
        for t in [0.0, 0.3, 2.0, 11.0] {
            assert!((e.survival(t).unwrap() - (-0.5 * t).exp()).abs() < 1e-13);
        }
        let q = e.quantile(0.9).unwrap();
        assert!((q / (10f64.ln() / 0.5) - 1.0).abs() < 1e-10, "{q}");
        // Erlang-3 of rate 2: P(T > t) = e^(-2t) (1 + 2t + 2t^2)
        let erlang = PhaseType::hypoexponential(&[2.0, 2.0, 2.0]).unwrap();
        for t in [0.1_f64, 1.0, 4.0] {
            let x = 2.0 * t;
            let want = (-x).exp() * (1.0 + x + x * x / 2.0);
            assert!((erlang.survival(t).unwrap() - want).abs() < 1e-13, "t {t}");
        }
    }

    #[test]
    fn hypoexponential_with_distinct_rates() {
        // rates a != b: P(T > t) = (b e^(-a t) - a e^(-b t)) / (b - a)
        let (a, b) = (1.0, 3.0);
        let h = PhaseType::hypoexponential(&[a, b]).unwrap();
        for t in [0.05, 0.7, 5.0] {
            let want = (b * (-a * t).exp() - a * (-b * t).exp()) / (b - a);
            assert!((h.survival(t).unwrap() - want).abs() < 1e-13, "t {t}");
        }
        // the same as the sum of two exponentials
        let parts = [
            PhaseType::exponential(a).unwrap(),
            PhaseType::exponential(b).unwrap(),
        ];
        let s = PhaseType::sum(&parts).unwrap();
        assert!((s.survival(0.7).unwrap() - h.survival(0.7).unwrap()).abs() < 1e-15);
    }

    #[test]
    fn a_geometric_number_of_visits_is_exponential() {
        // an exponential of rate 1 repeated with probability 1/2: exponential of rate 1/2
        let once = PhaseType::exponential(1.0).unwrap();
        let g = PhaseType::routed(&[once], &[1.0], &[vec![0.5]]).unwrap();
        for t in [0.2, 3.0] {
            assert!((g.survival(t).unwrap() - (-0.5 * t).exp()).abs() < 1e-13);
        }
    }

    #[test]
    fn bad_parts_are_refused() {
        assert!(PhaseType::exponential(0.0).is_err());
        assert!(PhaseType::exponential(f64::NAN).is_err());
        assert!(PhaseType::new(vec![0.5], vec![1.0], vec![vec![]]).is_err());
        assert!(PhaseType::new(vec![1.0], vec![1.0], vec![vec![(1, 0.5)]]).is_err());
        assert!(PhaseType::new(vec![1.0], vec![1.0], vec![vec![(0, 1.5)]]).is_err());
        assert!(PhaseType::hypoexponential(&[]).is_err());
        let e = PhaseType::exponential(1.0).unwrap();
        assert!(e.survival(-1.0).is_err());
        assert!(e.quantile(1.0).is_err());
        // rates 1e9 apart: refused, not an endless loop
        let wide = PhaseType::hypoexponential(&[1e-3, 1e6]).unwrap();
        assert!(wide.quantile(0.99).is_err());
    }

    #[test]
    fn moments_of_an_erlang_and_of_a_geometric_number_of_visits() {
        // Erlang-2 of rate 2: mean 1, second moment k (k + 1) / r^2 = 1.5
        let (m, m2) = PhaseType::hypoexponential(&[2.0, 2.0])
            .unwrap()
            .moments()
            .unwrap();
        assert!(
            (m - 1.0).abs() < 1e-12 && (m2 - 1.5).abs() < 1e-12,
            "{m} {m2}"
        );
        // one state revisited w.p. 1/2, each visit exactly 1: N geometric on {1, 2, ...} of
        // mean 2, E[N^2] = (2 - p) / p^2 = 6
        let (m, m2) = route_moments(&[1.0], &[vec![0.5]], &[(1.0, 1.0)]).unwrap();
        assert!(
            (m - 2.0).abs() < 1e-12 && (m2 - 6.0).abs() < 1e-12,
            "{m} {m2}"
        );
        assert!(route_moments(&[1.0], &[vec![1.0]], &[(1.0, 1.0)]).is_err());
    }
}
