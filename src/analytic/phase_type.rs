//! Phase-type laws: the time to absorption of a finite Markov chain. Exponential, Erlang,
//! hypoexponential, the M/M/c sojourn and sums of them along a Markov route are all phase-type,
//! and their CDF is computed the same robust way (uniformization).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::check;
use super::cost::{TRANSCENDENTAL, WORK_BUDGET, allowance, scaled, within_budget};
use super::error::{AnalyticError, Result};
use super::inverse::invert_cdf;

/// Beyond `Lambda t + TAIL_SDS sqrt(Lambda t) + TAIL_EXTRA` steps the Poisson weights of
/// uniformization sum to less than `1e-30`.
const TAIL_SDS: f64 = 12.0;
const TAIL_EXTRA: f64 = 40.0;

/// Work allowed for one CDF value: uniformization steps (about the chain's fastest rate times
/// `t`) times the moves of one step. A cap behind the estimate a quantile is held to
/// ([`PhaseType::quantile_work`]), for CDF values asked for directly.
const MAX_WORK: f64 = 2e7;

/// How far past the budget a quantile search may go when its estimate was too low.
const GUARD: f64 = 2.0;

/// CDF values a law remembers (a quantile search asks for about 45).
const MAX_REMEMBERED: usize = 4096;

/// A phase-type law: start in phase `i` with probability `initial[i]` (the initial
/// probabilities sum to 1), stay an exponential time of rate `rates[i]`, then move to phase `j`
/// with probability `next[i][j]`, or end (absorb) with the probability left.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseType {
    initial: Vec<f64>,
    rates: Vec<f64>,
    next: Vec<Vec<(usize, f64)>>,
    /// The steps of the uniformized chain computed so far, kept for the next CDF value.
    steps: StepCache,
}

/// What uniformization knows of a law whatever `t` is: the probability `alive[k]` that the
/// uniformized chain has not absorbed after `k` steps (and `ln k`). A CDF value is the
/// Poisson-weighted sum of these, so a quantile search, which asks for some forty values at
/// nearby `t`, runs the chain once instead of once per value. The numbers are those the chain
/// gives when run afresh, in the same order, so a value does not depend on what was asked
/// before.
#[derive(Default)]
struct StepCache(Mutex<Steps>);

/// The chain's steps so far (see [`StepCache`]).
#[derive(Default)]
struct Steps {
    /// `alive[k]`: the chain's mass not yet absorbed after `k` steps.
    alive: Vec<f64>,
    /// `ln_k[k] = ln k` (`ln_k[0]` unused).
    ln_k: Vec<f64>,
    /// The chain's distribution after `alive.len()` steps (empty before the first step).
    state: Vec<f64>,
    /// Scratch for the next step.
    after: Vec<f64>,
    /// Per phase, the probability `rate / L` that a step leaves it (`L` the fastest rate).
    leave: Vec<f64>,
    /// CDF values already computed, by the bits of `t` (a quantile search meets the same `t`
    /// again: every search doubles from the same start).
    values: HashMap<u64, f64>,
    /// Set once `alive` fell below `1e-300`: the sum stops there.
    absorbed: bool,
    /// Operations spent so far, counted as [`PhaseType::quantile_work`] estimates them.
    spent: f64,
}

impl Clone for StepCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for StepCache {
    /// A cache never makes two laws differ.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for StepCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StepCache({} steps)", self.lock().alive.len())
    }
}

impl StepCache {
    fn lock(&self) -> MutexGuard<'_, Steps> {
        // a panic while the cache was held leaves it consistent up to its last whole step
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Steps {
    /// Runs `law`'s uniformized chain until `alive[last]` is known or it has absorbed.
    fn extend(&mut self, law: &PhaseType, fastest: f64, last: usize) {
        if self.alive.is_empty() && self.state.is_empty() {
            self.state = law.initial.clone();
            self.after = vec![0.0; self.state.len()];
            self.leave = law.rates.iter().map(|r| r / fastest).collect();
        }
        let step = (law.moves() + law.rates.len()) as f64 + TRANSCENDENTAL;
        while self.alive.len() <= last && !self.absorbed {
            self.spent += step;
            let k = self.alive.len();
            self.ln_k.push((k as f64).ln());
            let alive: f64 = self.state.iter().sum();
            self.alive.push(alive);
            if alive < 1e-300 {
                self.absorbed = true;
                break;
            }
            self.after.iter_mut().for_each(|x| *x = 0.0);
            for (i, &p) in self.state.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                let leave = self.leave[i];
                self.after[i] += p * (1.0 - leave);
                let moving = p * leave;
                for &(j, m) in &law.next[i] {
                    self.after[j] += moving * m;
                }
            }
            std::mem::swap(&mut self.state, &mut self.after);
        }
    }
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
            steps: StepCache::default(),
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
    /// non-negative, so equal or close rates cause no cancellation. The chain's steps do not
    /// depend on `t`: the law keeps them (and the values it gave) for the next call, so the
    /// values of a quantile search cost a Poisson sum each and the chain is run once.
    ///
    /// Errors: `InvalidParameter` for a negative or non-finite `t`; `NotApplicable` when the
    /// steps times the moves per step exceed `2e7`.
    pub fn survival(&self, t: f64) -> Result<f64> {
        check::non_negative("t", t)?;
        let fastest = self.rates.iter().copied().fold(0.0, f64::max);
        let lt = fastest * t;
        let steps = lt + TAIL_SDS * lt.sqrt() + TAIL_EXTRA;
        let moves = self.moves();
        if steps * moves as f64 > scaled(MAX_WORK) {
            return Err(AnalyticError::NotApplicable(format!(
                "uniformization would need {steps:.0} steps of {moves} moves (rates too far apart for t = {t}); {}",
                allowance(steps * moves as f64, MAX_WORK)
            )));
        }
        let last = steps as u64 as usize;
        let mut cache = self.steps.lock();
        if let Some(&known) = cache.values.get(&t.to_bits()) {
            return Ok(known);
        }
        cache.extend(self, fastest, last);
        let ln_lt = lt.ln();
        let mut log_weight = -lt;
        let mut survival = 0.0;
        let (mut summed, mut weighed) = (0.0, 0.0);
        for k in 0..=last {
            let Some(&alive) = cache.alive.get(k) else {
                break;
            };
            summed += 1.0;
            if k > 0 {
                log_weight += ln_lt - cache.ln_k[k];
            }
            // below -750 the exponential is 0 in f64: the term adds nothing
            if log_weight >= -750.0 || log_weight.is_nan() {
                weighed += 1.0;
                survival += log_weight.exp() * alive;
            }
            if alive < 1e-300 {
                break;
            }
        }
        cache.spent += summed + TRANSCENDENTAL * weighed;
        let survival = survival.clamp(0.0, 1.0);
        if cache.values.len() < MAX_REMEMBERED {
            cache.values.insert(t.to_bits(), survival);
        }
        Ok(survival)
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
    /// Errors: `TooCostly` when [`PhaseType::quantile_work`] is over the budget, or when the
    /// search, estimated within it, has spent twice the budget; as [`invert_cdf`] and
    /// [`PhaseType::survival`].
    pub fn quantile(&self, q: f64) -> Result<f64> {
        if !(q > 0.0 && q < 1.0) {
            return invert_cdf(&|t| self.cdf(t), q, 0.0, 1.0);
        }
        let estimate = self.quantile_work(&[q]);
        estimate.check()?;
        // the estimate is a gamma fit's: should the search cost more than twice the budget
        // after all, it stops there
        let start = self.steps.lock().spent;
        let guarded = |t: f64| {
            let spent = self.steps.lock().spent - start;
            if spent > GUARD * scaled(WORK_BUDGET) {
                return Err(AnalyticError::TooCostly {
                    what: format!(
                        "uniformization spent {spent:.1e} operations on the {q} quantile without finding it (estimated {:.1e})",
                        estimate.work
                    ),
                    work: spent,
                    budget: scaled(WORK_BUDGET),
                    allow: allowance(estimate.work, WORK_BUDGET),
                });
            }
            self.cdf(t)
        };
        invert_cdf(&guarded, q, 0.0, 1.0 / self.slowest())
    }

    /// The work of computing the quantiles at `levels` (each in `(0, 1)`) by
    /// [`PhaseType::quantile`], estimated before any CDF value is, in operations: a quantile
    /// is found by bracketing and bisection ([`invert_cdf`]), some forty CDF values around the
    /// `t` where a gamma law with the same mean and variance puts it; each value is a
    /// Poisson-weighted sum over `L t + 12 sqrt(L t) + 40` steps of the uniformized chain (`L`
    /// the fastest rate), of which those within about `51 sqrt(L t)` of `L t` take an
    /// exponential; and the chain itself is run once as far as the largest `t`, each step
    /// costing its moves.
    pub fn quantile_work(&self, levels: &[f64]) -> QuantileWork {
        let fastest = self.rates.iter().copied().fold(0.0, f64::max);
        let start = 1.0 / self.slowest();
        let (mean, second) = self.sparse_moments();
        let scv = (second / (mean * mean) - 1.0).max(0.0);
        let moves = self.moves();
        let steps = |t: f64| {
            let lt = fastest * t;
            lt + TAIL_SDS * lt.sqrt() + TAIL_EXTRA
        };
        let value_work = |t: f64| {
            let all = steps(t);
            let weighed = all.min(51.0 * (fastest * t).sqrt() + TAIL_EXTRA);
            all + TRANSCENDENTAL * weighed
        };
        // every search takes the value at 0, then doubles from `start`: those values are
        // shared (remembered); the bisections are each search's own
        let mut work = value_work(0.0);
        let mut values = 1u32;
        let mut largest = start;
        for &q in levels.iter().filter(|&&q| q > 0.0 && q < 1.0) {
            let at = gamma_quantile(mean, scv, q);
            let mut hi = start;
            let mut doublings = 0;
            while hi < at && doublings < 1100 {
                hi *= 2.0;
                doublings += 1;
            }
            if hi > largest {
                // the doublings past those already counted
                let mut t = largest;
                while t < hi {
                    t *= 2.0;
                    work += value_work(t);
                    values += 1;
                }
                largest = hi;
            }
            let lo = if hi > start { hi / 2.0 } else { 0.0 };
            let halvings = ((hi - lo) / (1e-12 * at)).log2().ceil().clamp(0.0, 200.0);
            work += halvings * value_work(at);
            values += halvings as u32;
        }
        if levels.is_empty() {
            return QuantileWork {
                work: 0.0,
                steps: 0.0,
                moves,
                values: 0,
                fastest,
                mean,
            };
        }
        work += value_work(start);
        values += 1;
        let chain = steps(largest) * (moves + self.rates.len()) as f64;
        QuantileWork {
            work: work + chain + TRANSCENDENTAL * steps(largest),
            steps: steps(largest),
            moves,
            values,
            fastest,
            mean,
        }
    }

    /// Moves of one step of the uniformized chain: one per phase and one per transition.
    fn moves(&self) -> usize {
        self.next.iter().map(|m| m.len() + 1).sum()
    }

    fn slowest(&self) -> f64 {
        self.rates.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// The mean and second moment, [`PhaseType::moments`] found in one pass over the moves
    /// when the phases form no cycle (Erlang mixtures, sums, tandem routes), else by a dense
    /// solve for up to 150 phases and by Gauss-Seidel sweeps from below (a lower estimate)
    /// past that; for work estimates.
    fn sparse_moments(&self) -> (f64, f64) {
        let n = self.rates.len();
        // Kahn's algorithm: phases in an order where every move goes forward
        let mut into = vec![0usize; n];
        for moves in &self.next {
            for &(j, _) in moves {
                into[j] += 1;
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|&i| into[i] == 0).collect();
        let mut at = 0;
        while at < order.len() {
            for &(j, _) in &self.next[order[at]] {
                into[j] -= 1;
                if into[j] == 0 {
                    order.push(j);
                }
            }
            at += 1;
        }
        let acyclic = order.len() == n;
        if !acyclic {
            // with cycles: exactly, by a dense solve, for a few phases; else from below by
            // Gauss-Seidel sweeps, a million moves at most
            if n <= 150
                && let Ok(moments) = self.moments()
            {
                return moments;
            }
            order = (0..n).collect();
        }
        let sweeps = if acyclic {
            1
        } else {
            (1e6 / self.moves() as f64).clamp(1.0, 300.0) as usize
        };
        // g[i], h[i]: mean and second moment of the time left from phase i
        let mut g = vec![0.0; n];
        let mut h = vec![0.0; n];
        for _ in 0..sweeps {
            for &i in order.iter().rev() {
                let m1 = 1.0 / self.rates[i];
                let onward_g: f64 = self.next[i].iter().map(|&(j, p)| p * g[j]).sum();
                let onward_h: f64 = self.next[i].iter().map(|&(j, p)| p * h[j]).sum();
                g[i] = m1 + onward_g;
                h[i] = 2.0 * m1 * m1 + 2.0 * m1 * onward_g + onward_h;
            }
        }
        let dot = |x: &[f64]| self.initial.iter().zip(x).map(|(e, v)| e * v).sum::<f64>();
        (dot(&g), dot(&h))
    }
}

/// The estimated work of [`PhaseType::quantile`] at some levels, with the figures behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantileWork {
    /// The estimated work, in operations (see [`WORK_BUDGET`](super::WORK_BUDGET)).
    pub work: f64,
    /// Steps of the uniformized chain at the largest `t` the searches reach.
    pub steps: f64,
    /// Moves of one step of the chain (one per phase and one per transition).
    pub moves: usize,
    /// CDF values the searches take.
    pub values: u32,
    /// The fastest rate, which sets the steps per unit of time.
    pub fastest: f64,
    /// The law's mean.
    pub mean: f64,
}

impl QuantileWork {
    /// `Ok` within the budget, else `TooCostly` with the figures.
    pub fn check(&self) -> Result<()> {
        within_budget(self.work, || {
            format!(
                "uniformization would take {} CDF values of up to {:.0} steps and run a chain of {} moves that far (fastest rate {:.4e} for a mean of {:.4e}: rates too far apart)",
                self.values, self.steps, self.moves, self.fastest, self.mean,
            )
        })
    }
}

/// The `q` quantile of a gamma law of mean `mean` and SCV `scv` by Wilson and Hilferty's cube
/// of a normal (`mean` itself for SCV 0); an estimate for work.
fn gamma_quantile(mean: f64, scv: f64, q: f64) -> f64 {
    let z = std::f64::consts::SQRT_2 * statrs::function::erf::erf_inv(2.0 * q - 1.0);
    let base = 1.0 - scv / 9.0 + z * scv.sqrt() / 3.0;
    mean * base.max(0.05).powi(3)
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
    fn a_dear_quantile_is_refused_before_any_value_with_the_estimate() {
        // rates 1e9 apart: the 0.99 quantile is near 4600, a chain of 4.6e9 steps
        let wide = PhaseType::hypoexponential(&[1e-3, 1e6]).unwrap();
        let work = wide.quantile_work(&[0.99]);
        assert!(work.work > 1e9, "{work:?}");
        let Err(AnalyticError::TooCostly { what, work: w, .. }) = wide.quantile(0.99) else {
            panic!("not refused as too costly");
        };
        assert_eq!(w, work.work);
        assert!(what.contains("rates too far apart"), "{what}");
        assert!(wide.steps.lock().alive.is_empty(), "the chain was run");
        // a quantile level outside (0, 1) is an invalid parameter, not a cost
        assert!(matches!(
            wide.quantile(1.0),
            Err(AnalyticError::InvalidParameter { .. })
        ));
    }

    #[test]
    fn the_estimate_counts_the_values_a_search_takes() {
        // the arrival-theorem law of a bus: an Erlang mixture of 64 phases
        let weights: Vec<f64> = (0..64)
            .map(|j| 0.9f64.powi(j) * 0.1 / (1.0 - 0.9f64.powi(64)))
            .collect();
        for law in [
            PhaseType::erlang_mixture(&weights, 800.0).unwrap(),
            PhaseType::hypoexponential(&[1.0, 3.0, 10.0]).unwrap(),
            PhaseType::exponential(0.5).unwrap(),
        ] {
            let levels = [0.5, 0.9, 0.95, 0.99];
            let work = law.quantile_work(&levels);
            for q in levels {
                law.quantile(q).unwrap();
            }
            let taken = law.steps.lock().values.len() as f64;
            let estimated = f64::from(work.values);
            assert!(
                (estimated / taken - 1.0).abs() < 0.15,
                "estimated {estimated} values, took {taken}"
            );
        }
    }

    #[test]
    fn a_value_does_not_depend_on_what_was_asked_before() {
        let weights = [0.2, 0.3, 0.5];
        let law = PhaseType::routed(
            &[
                PhaseType::erlang_mixture(&weights, 40.0).unwrap(),
                PhaseType::exponential(2.0).unwrap(),
            ],
            &[1.0, 0.0],
            &[vec![0.0, 1.0], vec![0.3, 0.0]],
        )
        .unwrap();
        let fresh = |t: f64| law.clone().survival(t).unwrap();
        let later = [0.7, 3.5, 0.01];
        for t in [2.0, 0.3, 9.0] {
            law.survival(t).unwrap();
        }
        for t in later {
            assert_eq!(law.survival(t).unwrap().to_bits(), fresh(t).to_bits());
        }
        // and the remembered values are the same as computed afresh
        assert_eq!(law.survival(9.0).unwrap().to_bits(), fresh(9.0).to_bits());
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
