//! Least-squares estimates of `[spmd]` parameters from observed speedups `s(p,d)`, as the paper
//! fits QCRD stage 2 (section 5.2): the model speedup `T1 / cycle` comes from the analytic
//! formulas (BUS-AIO and CLU-AIO by exact MVA, SIO by a labelled reading of eq. 16), the sum
//! of squared residuals is minimised by Nelder-Mead (`argmin`), and the standard errors come
//! from the Jacobian at the optimum, `s^2 (J^T J)^-1` with `s^2 = RSS / (n - k)`. When every
//! observation carries its own standard error `sd` (a simulated point's, from its interval),
//! the residuals are weighted by `1/sd` and the standard errors are `(J^T W J)^-1` with
//! `W = diag(1/sd^2)`, the variances being known rather than estimated from the residuals.

use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::neldermead::NelderMead;

use super::formulas::{self, bus_aio, clu_aio, sio_draining, sio_full_population};
use super::{Family, Io, Spmd};
use crate::linalg;

/// One observed speedup.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// Processors.
    pub p: u32,
    /// Disks.
    pub d: u32,
    /// Observed speedup `s(p,d)`.
    pub speedup: f64,
    /// Its standard error, when known.
    pub sd: Option<f64>,
}

/// A parameter of `[spmd]` that can be fitted, named as in the scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// Contention level `w` in `[0, 1]`.
    W,
    /// `S_par`.
    SPar,
    /// `S_ser`.
    SSer,
    /// `S0_com`.
    S0Com,
    /// `SR_com`.
    SRCom,
    /// `S0_io`.
    S0Io,
    /// `SR_io`.
    SRIo,
    /// `n_io` (at least 1).
    NIo,
    /// `r`, the dimensions of the data (at least 1).
    R,
}

/// Every fittable parameter, in the order of [`Param`].
pub const PARAMS: [Param; 9] = [
    Param::W,
    Param::SPar,
    Param::SSer,
    Param::S0Com,
    Param::SRCom,
    Param::S0Io,
    Param::SRIo,
    Param::NIo,
    Param::R,
];

impl Param {
    /// The name in the scenario file (`S_par`, `w`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Param::W => "w",
            Param::SPar => "S_par",
            Param::SSer => "S_ser",
            Param::S0Com => "S0_com",
            Param::SRCom => "SR_com",
            Param::S0Io => "S0_io",
            Param::SRIo => "SR_io",
            Param::NIo => "n_io",
            Param::R => "r",
        }
    }

    /// The parameter named `name`, if any.
    pub fn parse(name: &str) -> Option<Param> {
        PARAMS.into_iter().find(|p| p.name() == name)
    }

    fn get(self, m: &Spmd) -> f64 {
        match self {
            Param::W => m.w,
            Param::SPar => m.s_par,
            Param::SSer => m.s_ser,
            Param::S0Com => m.s0_com,
            Param::SRCom => m.sr_com,
            Param::S0Io => m.s0_io,
            Param::SRIo => m.sr_io,
            Param::NIo => m.n_io,
            Param::R => m.r.unwrap_or(f64::NAN),
        }
    }

    fn set(self, m: &mut Spmd, v: f64) {
        match self {
            Param::W => m.w = v,
            Param::SPar => m.s_par = v,
            Param::SSer => m.s_ser = v,
            Param::S0Com => m.s0_com = v,
            Param::SRCom => m.sr_com = v,
            Param::S0Io => m.s0_io = v,
            Param::SRIo => m.sr_io = v,
            Param::NIo => m.n_io = v,
            Param::R => m.r = Some(v),
        }
    }

    /// Whether `v` is an allowed value.
    fn admits(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                Param::W => (0.0..=1.0).contains(&v),
                Param::NIo | Param::R => v >= 1.0,
                _ => v >= 0.0,
            }
    }
}

/// Which reading of eq. 16 gives the SIO cycle (see [`formulas`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SioReading {
    /// Reading (a), [`sio_full_population`].
    FullPopulation,
    /// Reading (b), [`sio_draining`].
    Draining,
}

/// What went wrong, with the field or column it concerns.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FitError {
    /// The measurements are not a CSV with columns `p,d,speedup` and valid values.
    #[error("line {line}: {field}: {message}")]
    Measurement {
        /// 1-based line of the CSV.
        line: u64,
        /// Column.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A parameter or option is unusable.
    #[error("{field}: {message}")]
    Input {
        /// The option or scenario field (`--free`, `spmd.r`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The free parameters cannot all be told apart by the observations.
    #[error(
        "--free: {free} are not identifiable from these observations (J^T J is singular at the \
         optimum); the speedup is unchanged when every time is scaled by one factor, so fix at \
         least one of the times"
    )]
    NotIdentifiable {
        /// The free parameters, comma-separated.
        free: String,
    },
    /// The optimiser failed.
    #[error("the minimiser failed: {0}")]
    Solver(String),
}

/// Reads observations from CSV text with the header `p,d,speedup` and optionally `sd`, the
/// standard error of each speedup (columns in any order).
pub fn read_observations(text: &str) -> Result<Vec<Observation>, FitError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| FitError::Measurement {
        line: 1,
        field: "header",
        message: e.to_string(),
    })?;
    let column = |name: &'static str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or(FitError::Measurement {
                line: 1,
                field: name,
                message: "missing column (the header must be p,d,speedup)".into(),
            })
    };
    let (ip, id, is) = (column("p")?, column("d")?, column("speedup")?);
    let isd = headers.iter().position(|h| h == "sd");
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| FitError::Measurement {
            line: e.position().map_or(0, |p| p.line()),
            field: "row",
            message: e.to_string(),
        })?;
        let line = record.position().map_or(0, |p| p.line());
        let whole = |i: usize, field: &'static str| {
            let text = record.get(i).unwrap_or("");
            match text.parse::<u32>() {
                Ok(v) if v >= 1 && i64::from(v) <= super::MAX_P => Ok(v),
                _ => Err(FitError::Measurement {
                    line,
                    field,
                    message: format!(
                        "must be a whole number in 1..={}, got {text:?}",
                        super::MAX_P
                    ),
                }),
            }
        };
        let (p, d) = (whole(ip, "p")?, whole(id, "d")?);
        let text = record.get(is).unwrap_or("");
        let speedup = match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => v,
            _ => {
                return Err(FitError::Measurement {
                    line,
                    field: "speedup",
                    message: format!("must be a finite number > 0, got {text:?}"),
                });
            }
        };
        let sd = match isd.map(|i| record.get(i).unwrap_or("")) {
            None => None,
            Some(text) => match text.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => Some(v),
                _ => {
                    return Err(FitError::Measurement {
                        line,
                        field: "sd",
                        message: format!("must be a finite number > 0, got {text:?}"),
                    });
                }
            },
        };
        out.push(Observation { p, d, speedup, sd });
    }
    if out.is_empty() {
        return Err(FitError::Measurement {
            line: 1,
            field: "row",
            message: "no observations".into(),
        });
    }
    Ok(out)
}

/// The model's speedup `T1 / cycle` of `base` at `p` processors and `d` disks, `g` from `r`.
/// `h(c)` is that of the CPU family, or `H_c` (the paper's exponential assumption) for
/// families without a closed form. `None` when the model has no finite answer there.
pub fn model_speedup(base: &Spmd, reading: SioReading, p: u32, d: u32) -> Option<f64> {
    let mut m = base.clone();
    m.p = p;
    m.d = d;
    m.g = formulas::g(p, m.r?);
    let h = formulas::h(&m.cpu, m.c).or_else(|| formulas::h(&Family::Exp, m.c))?;
    let cycle = match m.io {
        Io::BusAio => bus_aio(&m, h).ok()?,
        Io::CluAio => clu_aio(&m, h).ok()?,
        Io::Sio => match reading {
            SioReading::FullPopulation => sio_full_population(&m, h),
            SioReading::Draining => sio_draining(&m, h),
        },
    };
    let s = m.t1() / cycle;
    (s.is_finite() && s > 0.0).then_some(s)
}

/// One fitted parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The parameter.
    pub param: Param,
    /// Its value in the base scenario (the starting point).
    pub start: f64,
    /// The least-squares estimate.
    pub value: f64,
    /// Its standard error.
    pub se: f64,
}

/// The result of [`fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The free parameters' estimates, in the order asked for.
    pub estimates: Vec<Estimate>,
    /// The model at the estimates.
    pub model: Spmd,
    /// Per observation: the observation and the fitted model's speedup.
    pub residuals: Vec<(Observation, f64)>,
    /// Residual variance `RSS / (n - k)`; with known standard errors, the reduced chi-square
    /// `sum ((s - s_obs)/sd)^2 / (n - k)` (near 1 when the model fits within the errors).
    pub s2: f64,
    /// Whether the observations' own standard errors weighted the fit.
    pub weighted: bool,
    /// The paper's average error `(1/N) sqrt(sum ((s - s_obs)/s_obs)^2)`.
    pub average_error: f64,
}

/// The least-squares problem: free parameters over a fixed base.
#[derive(Clone, Copy)]
struct LeastSquares<'a> {
    base: &'a Spmd,
    free: &'a [Param],
    obs: &'a [Observation],
    reading: SioReading,
}

impl LeastSquares<'_> {
    fn model(&self, x: &[f64]) -> Spmd {
        let mut m = self.base.clone();
        for (param, &v) in self.free.iter().zip(x) {
            param.set(&mut m, v);
        }
        m
    }

    fn admits(&self, x: &[f64]) -> bool {
        self.free.iter().zip(x).all(|(p, &v)| p.admits(v))
    }

    /// The model's speedups at `x`, or `None` outside the domain.
    fn speedups(&self, x: &[f64]) -> Option<Vec<f64>> {
        if !self.admits(x) {
            return None;
        }
        let m = self.model(x);
        if m.s_par + m.s_ser <= 0.0 || m.s0_io + m.sr_io <= 0.0 {
            return None;
        }
        self.obs
            .iter()
            .map(|o| model_speedup(&m, self.reading, o.p, o.d))
            .collect()
    }

    fn rss(&self, x: &[f64]) -> f64 {
        self.speedups(x).map_or(f64::INFINITY, |s| {
            s.iter()
                .zip(self.obs)
                .map(|(s, o)| ((s - o.speedup) / o.sd.unwrap_or(1.0)).powi(2))
                .sum()
        })
    }

    /// The Jacobian of the model speedups at `x` (row-major, `n x k`) by central differences,
    /// one-sided at the edge of the domain.
    fn jacobian(&self, x: &[f64]) -> Option<Vec<f64>> {
        let (n, k) = (self.obs.len(), x.len());
        let mut jac = vec![0.0; n * k];
        for j in 0..k {
            let step = 1e-6 * x[j].abs().max(1e-3);
            let shifted = |delta: f64| {
                let mut y = x.to_vec();
                y[j] += delta;
                self.speedups(&y)
            };
            let (hi, lo, width) = match (shifted(step), shifted(-step)) {
                (Some(hi), Some(lo)) => (hi, lo, 2.0 * step),
                (Some(hi), None) => (hi, self.speedups(x)?, step),
                (None, Some(lo)) => (self.speedups(x)?, lo, step),
                (None, None) => return None,
            };
            for i in 0..n {
                jac[i * k + j] = (hi[i] - lo[i]) / width;
            }
        }
        Some(jac)
    }
}

impl CostFunction for LeastSquares<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, ArgminError> {
        Ok(self.rss(x))
    }
}

/// Checks that `base` can be evaluated at every observation.
fn check(base: &Spmd, free: &[Param], obs: &[Observation]) -> Result<(), FitError> {
    let input = |field: &str, message: String| FitError::Input {
        field: field.into(),
        message,
    };
    if free.is_empty() {
        return Err(input("--free", "name at least one parameter".into()));
    }
    for (i, p) in free.iter().enumerate() {
        if free[..i].contains(p) {
            return Err(input("--free", format!("{} named twice", p.name())));
        }
    }
    if base.r.is_none() {
        return Err(input(
            "spmd.r",
            "the fit needs r, so that g(p) follows p (the base scenario gives g at one p)".into(),
        ));
    }
    if obs.len() < free.len() + 1 {
        return Err(input(
            "--free",
            format!(
                "{} free parameters need more than {} observations for standard errors, got {}",
                free.len(),
                free.len(),
                obs.len()
            ),
        ));
    }
    if obs.iter().any(|o| o.sd.is_some()) && obs.iter().any(|o| o.sd.is_none()) {
        return Err(input(
            "sd",
            "give a standard error for every observation or for none".into(),
        ));
    }
    for o in obs {
        if !o.p.is_multiple_of(base.c) {
            return Err(input(
                "p",
                format!(
                    "c = {} of the base scenario must divide p = {}",
                    base.c, o.p
                ),
            ));
        }
        if base.io == Io::CluAio && !(o.p / base.c).is_multiple_of(o.d) {
            return Err(input(
                "d",
                format!(
                    "CLU-AIO needs p/c = {} to be a multiple of d = {}",
                    o.p / base.c,
                    o.d
                ),
            ));
        }
    }
    Ok(())
}

/// The starting simplex: `x0` and one vertex per parameter moved by 10% (0.05 from 0), inward
/// at the edge of the domain.
fn simplex(free: &[Param], x0: &[f64]) -> Vec<Vec<f64>> {
    let mut vertices = vec![x0.to_vec()];
    for (j, p) in free.iter().enumerate() {
        let step = if x0[j] == 0.0 { 0.05 } else { 0.1 * x0[j] };
        let mut y = x0.to_vec();
        y[j] = x0[j] + step;
        if !p.admits(y[j]) {
            y[j] = x0[j] - step;
        }
        vertices.push(y);
    }
    vertices
}

/// Fits the `free` parameters of `base` to `obs` by least squares on the speedup, starting
/// from the base values; Nelder-Mead is restarted from its best point until the residual sum
/// of squares stops falling.
pub fn fit(
    base: &Spmd,
    free: &[Param],
    obs: &[Observation],
    reading: SioReading,
) -> Result<Fitted, FitError> {
    check(base, free, obs)?;
    let problem = LeastSquares {
        base,
        free,
        obs,
        reading,
    };
    let start: Vec<f64> = free.iter().map(|p| p.get(base)).collect();
    if !problem.rss(&start).is_finite() {
        return Err(FitError::Input {
            field: "--scenario".into(),
            message: "the model has no finite speedup at the base scenario's values".into(),
        });
    }
    let mut x = start.clone();
    let mut best = problem.rss(&x);
    for _ in 0..20 {
        let solver = NelderMead::new(simplex(free, &x))
            .with_sd_tolerance(1e-16)
            .map_err(|e| FitError::Solver(e.to_string()))?;
        let result = Executor::new(problem, solver)
            .configure(|state| state.max_iters(4000))
            .run()
            .map_err(|e| FitError::Solver(e.to_string()))?;
        let (Some(y), cost) = (result.state.best_param, result.state.best_cost) else {
            break;
        };
        let improved = cost < best * (1.0 - 1e-10);
        if cost < best {
            (x, best) = (y, cost);
        }
        if !improved {
            break;
        }
    }
    let (n, k) = (obs.len(), free.len());
    let s2 = best / (n - k) as f64;
    let weighted = obs.iter().all(|o| o.sd.is_some());
    let weight = |i: usize| obs[i].sd.map_or(1.0, |sd| 1.0 / (sd * sd));
    let not_identifiable = || FitError::NotIdentifiable {
        free: free.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
    };
    let jac = problem.jacobian(&x).ok_or_else(not_identifiable)?;
    let mut jtj = vec![0.0; k * k];
    for a in 0..k {
        for b in 0..k {
            jtj[a * k + b] = (0..n)
                .map(|i| weight(i) * jac[i * k + a] * jac[i * k + b])
                .sum();
        }
    }
    let mut se = Vec::with_capacity(k);
    for j in 0..k {
        let mut unit = vec![0.0; k];
        unit[j] = 1.0;
        let column = linalg::solve(jtj.clone(), unit).ok_or_else(not_identifiable)?;
        let scale = if weighted { 1.0 } else { s2 };
        se.push((scale * column[j]).max(0.0).sqrt());
    }
    let model = problem.model(&x);
    let speedups = problem.speedups(&x).ok_or_else(not_identifiable)?;
    let residuals: Vec<(Observation, f64)> = obs.iter().copied().zip(speedups).collect();
    let relative: f64 = residuals
        .iter()
        .map(|(o, s)| ((s - o.speedup) / o.speedup).powi(2))
        .sum();
    Ok(Fitted {
        estimates: free
            .iter()
            .enumerate()
            .map(|(j, &param)| Estimate {
                param,
                start: start[j],
                value: x[j],
                se: se[j],
            })
            .collect(),
        model,
        residuals,
        s2,
        weighted,
        average_error: relative.sqrt() / n as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QCRD stage 2 (Table 4, times over `T1` with `n_io = 1`): BUS-AIO, `c = 1`,
    /// `g(p) = 1/p` (r very large).
    fn qcrd() -> Spmd {
        Spmd {
            p: 1,
            d: 1,
            c: 1,
            w: 0.19,
            g: 0.0,
            r: Some(1e9),
            s_par: 0.71,
            s_ser: 0.0,
            s0_com: 0.049,
            sr_com: 0.41,
            s0_io: 0.0,
            sr_io: 0.001,
            n_io: 1.0,
            io: Io::BusAio,
            cpu: Family::Exp,
            com: Family::Exp,
            io_dist: Family::Exp,
            network: None,
            phases: Vec::new(),
        }
    }

    /// The 42 points of the paper's surface: p = 1..64 by powers of 2, d = 1..32.
    fn surface(m: &Spmd) -> Vec<Observation> {
        let mut obs = Vec::new();
        for p in [1, 2, 4, 8, 16, 32, 64] {
            for d in [1, 2, 4, 8, 16, 32] {
                let speedup = model_speedup(m, SioReading::Draining, p, d).unwrap();
                obs.push(Observation {
                    p,
                    d,
                    speedup,
                    sd: None,
                });
            }
        }
        obs
    }

    /// From a noise-free surface of the true parameters and a start 30-50% off, the fit
    /// returns the true values to 1e-5 relative, with an average error below 1e-7.
    #[test]
    fn recovers_qcrd_parameters_from_their_exact_surface() {
        let truth = qcrd();
        let obs = surface(&truth);
        let mut base = truth.clone();
        base.w = 0.1;
        base.s0_com = 0.07;
        base.sr_com = 0.6;
        let free = [Param::W, Param::S0Com, Param::SRCom];
        let fitted = fit(&base, &free, &obs, SioReading::Draining).unwrap();
        for e in &fitted.estimates {
            let want = e.param.get(&truth);
            assert!(
                (e.value - want).abs() <= 1e-5 * want,
                "{}: {} vs {want}",
                e.param.name(),
                e.value
            );
        }
        assert!(fitted.average_error < 1e-7, "{}", fitted.average_error);
    }

    /// Every time scaled by one factor leaves the speedup unchanged: freeing all of them is
    /// refused, not answered with meaningless standard errors.
    #[test]
    fn a_common_scale_is_not_identifiable() {
        let truth = qcrd();
        let obs = surface(&truth);
        let free = [Param::SPar, Param::S0Com, Param::SRCom, Param::SRIo];
        let err = fit(&truth, &free, &obs, SioReading::Draining).unwrap_err();
        assert!(matches!(err, FitError::NotIdentifiable { .. }), "{err}");
    }

    #[test]
    fn bad_measurements_name_line_and_column() {
        let err = read_observations("p,d,speedup\n2,1,1.5\n4,0,2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3: d: must be a whole number in 1..=100000, got \"0\""
        );
        let err = read_observations("p,speedup\n2,1.5\n").unwrap_err();
        assert!(
            err.to_string().starts_with("line 1: d: missing column"),
            "{err}"
        );
        let err = read_observations("p,d,speedup\n2,1,-1\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2: speedup:"), "{err}");
        let err = read_observations("p,d,speedup,sd\n2,1,1.5,0\n").unwrap_err();
        assert!(err.to_string().starts_with("line 2: sd:"), "{err}");
    }
}
