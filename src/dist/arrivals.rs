//! Markovian arrival processes (MAP; Neuts 1979, Lucantoni 1991): correlated inter-arrival
//! times driven by a hidden Markov chain. `D0` holds the rates of the phase changes without an
//! arrival, `D1` those with one; `D0 + D1` is the generator of the phase chain. The Markov
//! modulated Poisson process of two phases (MMPP(2)) is the common case: Poisson arrivals at a
//! rate set by the phase, `D1` diagonal.

use rand::RngExt;
use rand_distr::Exp1;
use serde::Deserialize;

use super::phase_type::{MAX_PHASES, PhaseLaw, cumulative_to_one};

/// The largest batch a BMAP may write (`d` holds at most this many matrices).
pub const MAX_BATCH_SIZE: usize = 64;
use super::spec::DistError;
use super::{Dist, Law};
use crate::analytic::mam::Map;
use crate::rng::StreamRng;

/// An arrival process as written on a source: `arrivals = { process = "mmpp2", ... }`.
/// Nothing is checked here: [`ArrivalSpec::build`] checks.
#[derive(Clone, Debug, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "process", rename_all = "snake_case", deny_unknown_fields)]
pub enum ArrivalSpec {
    /// Markov modulated Poisson process of two phases: Poisson arrivals at `rates[i]` in phase
    /// `i`; the phase changes from 1 to 2 at rate `switching[0]`, from 2 to 1 at
    /// `switching[1]`.
    Mmpp2 {
        /// The arrival rate in each phase.
        rates: Vec<f64>,
        /// The rates of leaving phase 1 and phase 2.
        switching: Vec<f64>,
    },
    /// Any Markovian arrival process: `d0` (phase changes without an arrival; negative
    /// diagonal) and `d1` (phase changes with one), square matrices of one size, row by row.
    Map {
        /// Rates of the phase changes without an arrival.
        d0: Vec<Vec<f64>>,
        /// Rates of the phase changes with an arrival.
        d1: Vec<Vec<f64>>,
    },
    /// A batch Markovian arrival process (BMAP; Lucantoni 1991): `d0` as for a MAP, and
    /// `d[k - 1]` the rates of the phase changes with an arrival of a batch of `k` jobs.
    Bmap {
        /// Rates of the phase changes without an arrival.
        d0: Vec<Vec<f64>>,
        /// `d[k - 1]`: rates of the phase changes with a batch of `k` jobs.
        d: Vec<Vec<Vec<f64>>>,
    },
}

fn bad(field: &str, message: String) -> DistError {
    DistError {
        field: field.to_owned(),
        message,
    }
}

impl ArrivalSpec {
    /// Checks the process and builds it as the inter-arrival "distribution" of a source: a
    /// [`Dist`] whose law is [`Law::Markovian`] (its draws are correlated; its marginal law is
    /// phase type).
    pub fn build(&self) -> Result<Dist, DistError> {
        let (d0, d1) = match self {
            ArrivalSpec::Mmpp2 { rates, switching } => {
                let pair = |field: &str, v: &[f64]| -> Result<[f64; 2], DistError> {
                    let [a, b] = v else {
                        return Err(bad(
                            field,
                            format!("needs 2 numbers (one per phase), got {}", v.len()),
                        ));
                    };
                    for x in [a, b] {
                        if !(x.is_finite() && *x >= 0.0) {
                            return Err(bad(field, format!("must be finite and >= 0, got {x}")));
                        }
                    }
                    Ok([*a, *b])
                };
                let (r, s) = (pair("rates", rates)?, pair("switching", switching)?);
                if r == [0.0, 0.0] {
                    return Err(bad(
                        "rates",
                        "are both 0: no job would ever arrive".to_owned(),
                    ));
                }
                if let Some(i) = s.iter().position(|&x| x == 0.0) {
                    return Err(bad(
                        "switching",
                        format!(
                            "phase {} is never left (switching[{i}] = 0): the process is Poisson at rates[{i}] after a start that depends on the run; give both phases a positive switching rate, or use interarrival = {{ dist = \"exp\" }}",
                            i + 1
                        ),
                    ));
                }
                (
                    vec![vec![-(r[0] + s[0]), s[0]], vec![s[1], -(r[1] + s[1])]],
                    vec![vec![r[0], 0.0], vec![0.0, r[1]]],
                )
            }
            ArrivalSpec::Map { d0, d1 } => (d0.clone(), d1.clone()),
            ArrivalSpec::Bmap { d0, d } => {
                return Ok(Dist {
                    law: Law::Markovian(Box::new(MapLaw::batch(d0.clone(), d.clone())?)),
                });
            }
        };
        Ok(Dist {
            law: Law::Markovian(Box::new(MapLaw::new(d0, d1)?)),
        })
    }
}

/// A checked Markovian arrival process, with the phase it is in (a source's own copy moves
/// through its phases as it draws).
#[derive(Clone, Debug)]
pub struct MapLaw {
    /// The process for the analytic side: rate, stationary laws, correlations.
    map: Map,
    /// The time-stationary phase law, cumulative: where a run starts.
    start: Vec<f64>,
    /// Mean holding time of each phase, `-1 / D0[i][i]`.
    hold: Vec<f64>,
    /// Per phase, cumulative probabilities of its moves when it ends (see [`moves`]).
    moves: Vec<Vec<f64>>,
    /// The law of one inter-arrival time, `PH(phi, D0)` with `phi = theta D1 / lambda` the
    /// phase law just after an arrival.
    marginal: PhaseLaw,
    /// `sizes[k - 1]`: the rates of the phase changes with an arrival of `k` jobs (`D1` alone
    /// for a MAP; `D1`, `D2`, ... for a BMAP, whose [`Map`] is that of the arrival epochs,
    /// `D0` and `D1 + D2 + ...`).
    sizes: Vec<Vec<Vec<f64>>>,
    /// The size of the last arrival drawn (1 before the first).
    last: u32,
    /// The current phase; `None` before the first draw.
    phase: Option<usize>,
    /// For a Markov-modulated Poisson process (`D1` diagonal: an arrival never changes the
    /// phase), the faster way to draw; `None` for other MAPs.
    modulated: Option<Modulated>,
}

/// A Markov-modulated Poisson process drawn by racing clocks: in phase `i`, arrivals come at
/// rate `D1[i][i]` and the phase ends after an exponential time of rate `sum_(j != i) D0[i][j]`,
/// independent of the arrivals. By memorylessness, the time left in the phase can be kept
/// across draws: one exponential per arrival, as for a Poisson source, and one more per phase
/// change (where the general loop draws an exponential and a uniform per event).
#[derive(Clone, Debug)]
struct Modulated {
    /// Mean time between arrivals in each phase (infinite for a phase without arrivals).
    gap: Vec<f64>,
    /// Mean time in each phase.
    stay: Vec<f64>,
    /// Per phase, cumulative probabilities of the phase it goes to when it ends.
    next: Vec<Vec<f64>>,
    /// Time left in the current phase.
    left: f64,
}

impl Modulated {
    /// The racing clocks of `(d0, d1)` if `d1` is diagonal.
    fn of(d0: &[Vec<f64>], d1: &[Vec<f64>]) -> Option<Modulated> {
        let n = d0.len();
        let diagonal = (0..n).all(|i| (0..n).all(|j| i == j || d1[i][j] == 0.0));
        if !diagonal {
            return None;
        }
        let leave = |i: usize| -> f64 { (0..n).filter(|&j| j != i).map(|j| d0[i][j]).sum() };
        Some(Modulated {
            gap: (0..n).map(|i| 1.0 / d1[i][i]).collect(),
            stay: (0..n).map(|i| 1.0 / leave(i)).collect(),
            next: (0..n)
                .map(|i| {
                    let total = leave(i);
                    let p: Vec<f64> = (0..n)
                        .map(|j| {
                            if j == i || total == 0.0 {
                                0.0
                            } else {
                                d0[i][j] / total
                            }
                        })
                        .collect();
                    cumulative_to_one(&p)
                })
                .collect(),
            left: 0.0,
        })
    }

    /// The time to the next arrival from `phase`, which it moves along.
    #[inline]
    fn sample(&mut self, phase: &mut usize, rng: &mut StreamRng) -> f64 {
        let mut t = 0.0;
        loop {
            let arrival = self.gap[*phase] * rng.sample::<f64, _>(Exp1);
            if arrival < self.left {
                self.left -= arrival;
                return t + arrival;
            }
            t += self.left;
            *phase = pick(&self.next[*phase], rng.random::<f64>());
            self.left = self.stay[*phase] * rng.sample::<f64, _>(Exp1);
        }
    }
}

impl MapLaw {
    /// Checks `d0` and `d1`: square, one size (at most [`MAX_PHASES`]), rates off `D0`'s
    /// diagonal and in `D1` finite and `>= 0`, rows of `D0 + D1` summing to 0, `D0`
    /// non-singular (every phase leads to an arrival), the phase chain one recurrent class.
    pub fn new(d0: Vec<Vec<f64>>, d1: Vec<Vec<f64>>) -> Result<MapLaw, DistError> {
        let n = d0.len();
        if n == 0 || n > MAX_PHASES {
            return Err(bad(
                "d0",
                format!("needs from 1 to {MAX_PHASES} phases, got {n}"),
            ));
        }
        for (field, m) in [("d0", &d0), ("d1", &d1)] {
            if m.len() != n || m.iter().any(|r| r.len() != n) {
                return Err(bad(
                    field,
                    format!(
                        "must be a {n} x {n} matrix (d0 and d1 of one size), got {} rows of lengths {:?}",
                        m.len(),
                        m.iter().map(Vec::len).collect::<Vec<_>>()
                    ),
                ));
            }
        }
        for i in 0..n {
            for j in 0..n {
                for (field, v) in [("d0", d0[i][j]), ("d1", d1[i][j])] {
                    if field == "d0" && i == j {
                        continue;
                    }
                    if !(v.is_finite() && v >= 0.0) {
                        return Err(bad(
                            field,
                            format!(
                                "row {}, column {}: a rate must be finite and >= 0, got {v}",
                                i + 1,
                                j + 1
                            ),
                        ));
                    }
                }
            }
            let diagonal = d0[i][i];
            if !(diagonal.is_finite() && diagonal < 0.0) {
                return Err(bad(
                    "d0",
                    format!(
                        "row {}: the diagonal entry is minus the phase's total rate and must be < 0, got {diagonal}",
                        i + 1
                    ),
                ));
            }
            let sum: f64 = d0[i].iter().sum::<f64>() + d1[i].iter().sum::<f64>();
            if sum.abs() > 1e-9 * diagonal.abs() {
                return Err(bad(
                    "d0",
                    format!(
                        "row {}: the rows of d0 + d1 must sum to 0 (the diagonal of d0 is minus everything else in the row), this one sums to {sum}",
                        i + 1
                    ),
                ));
            }
        }
        if d1.iter().flatten().all(|&v| v == 0.0) {
            return Err(bad("d1", "is all 0: no job would ever arrive".to_owned()));
        }
        let map = Map::new(d0.clone(), d1.clone()).map_err(|e| {
            bad(
                "d0",
                format!("the phases do not form one recurrent class, or some phase never leads to an arrival: {e}"),
            )
        })?;
        let marginal = PhaseLaw::new(&map.embedded_phases(), &d0).map_err(|e| {
            bad(
                "d0",
                format!(
                    "the time between arrivals: {}",
                    e.message.replace("generator", "d0")
                ),
            )
        })?;
        let hold = (0..n).map(|i| -1.0 / d0[i][i]).collect();
        Ok(MapLaw {
            start: cumulative_to_one(map.stationary_phases()),
            map,
            hold,
            moves: moves(&d0, std::slice::from_ref(&d1)),
            marginal,
            sizes: vec![d1.clone()],
            last: 1,
            phase: None,
            modulated: Modulated::of(&d0, &d1),
        })
    }

    /// Checks a batch Markovian arrival process: `d[k - 1]` (at most [`MAX_BATCH_SIZE`] of
    /// them) square of `d0`'s size, finite and `>= 0`, and `(d0, d[0] + d[1] + ...)` a MAP as
    /// [`MapLaw::new`] checks (the process of the arrival epochs).
    pub fn batch(d0: Vec<Vec<f64>>, d: Vec<Vec<Vec<f64>>>) -> Result<MapLaw, DistError> {
        let n = d0.len();
        if d.is_empty() || d.len() > MAX_BATCH_SIZE {
            return Err(bad(
                "d",
                format!(
                    "needs from 1 to {MAX_BATCH_SIZE} matrices (d[k - 1] for batches of k jobs), got {}",
                    d.len()
                ),
            ));
        }
        for (k, m) in d.iter().enumerate() {
            let field = format!("d[{k}]");
            if m.len() != n || m.iter().any(|r| r.len() != n) {
                return Err(bad(
                    &field,
                    format!(
                        "must be a {n} x {n} matrix (of d0's size), got {} rows of lengths {:?}",
                        m.len(),
                        m.iter().map(Vec::len).collect::<Vec<_>>()
                    ),
                ));
            }
            for (i, row) in m.iter().enumerate() {
                if let Some((j, v)) = row
                    .iter()
                    .enumerate()
                    .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
                {
                    return Err(bad(
                        &field,
                        format!(
                            "row {}, column {}: a rate must be finite and >= 0, got {v}",
                            i + 1,
                            j + 1
                        ),
                    ));
                }
            }
        }
        let epochs: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| d.iter().map(|m| m[i][j]).sum()).collect())
            .collect();
        let mut law = MapLaw::new(d0, epochs).map_err(|e| DistError {
            field: if e.field == "d1" {
                "d".to_owned()
            } else {
                e.field
            },
            message: e.message.replace("d0 + d1", "d0 + d[0] + d[1] + ..."),
        })?;
        law.moves = moves(law.map.d0(), &d);
        law.modulated = None;
        law.sizes = d;
        Ok(law)
    }

    /// The batch sizes' rates: `[k - 1]` holds `D_k`, the phase changes with an arrival of `k`
    /// jobs (one entry, `D1`, for a MAP).
    pub fn sizes(&self) -> &[Vec<Vec<f64>>] {
        &self.sizes
    }

    /// The size of the last arrival drawn by [`MapLaw::sample`] (1 for a MAP).
    pub fn last_batch(&self) -> u32 {
        self.last
    }

    /// The mean and second moment of an arrival's size, `sum_k k^j theta D_k 1 / lambda`
    /// (`theta` the phases' stationary law, `lambda` the rate of arrival epochs).
    pub fn batch_moments(&self) -> (f64, f64) {
        let theta = self.map.stationary_phases();
        let rate = |m: &Vec<Vec<f64>>| -> f64 {
            m.iter()
                .zip(theta)
                .map(|(row, t)| t * row.iter().sum::<f64>())
                .sum()
        };
        let lambda = self.map.lambda();
        let (mut first, mut second) = (0.0, 0.0);
        for (k, m) in self.sizes.iter().enumerate() {
            let (size, r) = ((k + 1) as f64, rate(m));
            first += size * r;
            second += size * size * r;
        }
        (first / lambda, second / lambda)
    }

    /// The process as the analytic side takes it.
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// The mean arrival rate `lambda = theta D1 1`.
    pub fn rate(&self) -> f64 {
        self.map.lambda()
    }

    /// The law of one inter-arrival time (phase type).
    pub fn marginal(&self) -> &PhaseLaw {
        &self.marginal
    }

    /// The correlation of inter-arrival times `k >= 1` apart (NaN if it cannot be computed).
    pub fn lag_correlation(&self, k: u32) -> f64 {
        self.map.autocorrelation(k).unwrap_or(f64::NAN)
    }

    /// Draws the time to the next arrival from the current phase (the first from the
    /// time-stationary phase law), moving the phase along.
    pub fn sample(&mut self, rng: &mut StreamRng) -> f64 {
        let n = self.hold.len();
        let mut phase = match self.phase {
            Some(p) => p,
            None => {
                let p = pick(&self.start, rng.random::<f64>());
                if let Some(m) = &mut self.modulated {
                    m.left = m.stay[p] * rng.sample::<f64, _>(Exp1);
                }
                p
            }
        };
        if let Some(m) = &mut self.modulated {
            let t = m.sample(&mut phase, rng);
            self.phase = Some(phase);
            return t;
        }
        let mut t = 0.0;
        loop {
            t += self.hold[phase] * rng.sample::<f64, _>(Exp1);
            let next = pick(&self.moves[phase], rng.random::<f64>());
            if next >= n {
                self.phase = Some((next - n) % n);
                self.last = ((next - n) / n + 1) as u32;
                return t;
            }
            phase = next;
        }
    }
}

/// Per phase `i` of a (B)MAP with `D0 = d0` and `D_k = sizes[k - 1]`, the cumulative
/// probabilities of its moves when it ends: to phase `j` without an arrival (index `j < n`),
/// to phase `j` with `k` jobs (index `k n + j`).
fn moves(d0: &[Vec<f64>], sizes: &[Vec<Vec<f64>>]) -> Vec<Vec<f64>> {
    let n = d0.len();
    (0..n)
        .map(|i| {
            let total = -d0[i][i];
            let p: Vec<f64> = (0..n)
                .map(|j| if j == i { 0.0 } else { d0[i][j] / total })
                .chain(sizes.iter().flat_map(|m| m[i].iter().map(|&v| v / total)))
                .collect();
            cumulative_to_one(&p)
        })
        .collect()
}

/// The first index whose cumulative probability exceeds `u` (the last when rounding leaves `u`
/// past every entry).
fn pick(cumulative: &[f64], u: f64) -> usize {
    super::phase_type::pick(cumulative, u).unwrap_or(cumulative.len() - 1)
}
