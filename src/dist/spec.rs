//! The scenario-file form of a distribution and its checked construction.

use std::fmt;
use std::path::Path;

use serde::Deserialize;

use super::Law;
use super::{Dist, Empirical, EmpiricalMode, LogParams, ShapeScale};

/// A distribution as written in a scenario file: `{ dist = "exp", mean = 2.0 }`.
///
/// Parameters have explicit names; which ones a family accepts is listed on each variant.
/// Nothing is checked here: [`DistSpec::build`] checks and reports every problem.
///
/// A bare number where a distribution is expected (`service = 2`, `time = 1e-3`) is a fixed
/// time, the same as `{ dist = "det", value = 2 }`.
#[derive(Clone, Debug, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(
    remote = "Self",
    tag = "dist",
    rename_all = "snake_case",
    deny_unknown_fields
)]
#[schemars(transform = or_a_bare_number)]
pub enum DistSpec {
    /// Exponential: `mean` or `rate`.
    #[serde(alias = "exponential")]
    Exp {
        /// Mean.
        mean: Option<f64>,
        /// Rate, `1/mean`.
        rate: Option<f64>,
    },
    /// Deterministic: `value` (or `mean`).
    #[serde(alias = "deterministic")]
    Det {
        /// The constant value.
        value: Option<f64>,
        /// Same as `value`.
        mean: Option<f64>,
    },
    /// Uniform: `min` and `max`, or `mean` meaning `[0, 2 mean]` (as Cremonesi-Gennaro use it).
    Uniform {
        /// Lower end.
        min: Option<f64>,
        /// Upper end.
        max: Option<f64>,
        /// Mean of `[0, 2 mean]`.
        mean: Option<f64>,
    },
    /// Erlang-k: `k` phases and total `mean`.
    Erlang {
        /// Phases, `>= 1`.
        k: i64,
        /// Mean of the sum.
        mean: f64,
    },
    /// Hyperexponential H2 with balanced means: `mean` and `scv >= 1`.
    #[serde(alias = "hyperexp")]
    H2 {
        /// Mean.
        mean: f64,
        /// Squared coefficient of variation, `>= 1`.
        scv: f64,
    },
    /// Lognormal: `mean` and `scv`, or `mu` and `sigma` of the log.
    Lognormal {
        /// Mean of the value.
        mean: Option<f64>,
        /// SCV of the value.
        scv: Option<f64>,
        /// Mean of the log.
        mu: Option<f64>,
        /// Standard deviation of the log.
        sigma: Option<f64>,
    },
    /// Gamma: `shape` and `scale`, or `mean` and `scv`.
    Gamma {
        /// Shape.
        shape: Option<f64>,
        /// Scale.
        scale: Option<f64>,
        /// Mean.
        mean: Option<f64>,
        /// SCV.
        scv: Option<f64>,
    },
    /// Weibull: `shape` and `scale`.
    Weibull {
        /// Shape `k > 0`.
        shape: f64,
        /// Scale `lambda > 0`.
        scale: f64,
    },
    /// Pareto type I: `shape > 2` (finite variance) and `scale > 0` (the minimum).
    Pareto {
        /// Shape `alpha`.
        shape: f64,
        /// Scale `x_m`.
        scale: f64,
    },
    /// Samples from a text file (one number per line or separated by commas or spaces),
    /// relative to the scenario file; `mode` is `"random"` (default) or `"replay"`.
    Empirical {
        /// Path of the trace.
        file: String,
        /// `"random"` or `"replay"`.
        mode: Option<String>,
        /// Scale the samples so that their mean is this (the trace's shape with a model's
        /// mean, as `[spmd]` uses it); default: the samples as read.
        mean: Option<f64>,
    },
    /// Phase type: `alpha` (the initial probabilities, summing to 1) and `generator` (the
    /// sub-generator among the phases, row by row: negative diagonal, rates between phases
    /// off it, row sums `<= 0`, the shortfall being the rate of ending); at most
    /// [`MAX_PHASES`](super::MAX_PHASES) phases.
    Ph {
        /// Initial probabilities.
        alpha: Vec<f64>,
        /// Sub-generator, row by row.
        generator: Vec<Vec<f64>>,
    },
}

/// The inline TOML table of a distribution, fields in declaration order, unset ones left out:
/// `{ dist = "exp", mean = 2.0 }`. Numbers are written so that they read back exactly.
impl fmt::Display for DistSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, fields): (&str, Vec<(&str, Option<String>)>) = {
            let x = |v: &Option<f64>| v.map(|v| format!("{v:?}"));
            let y = |v: f64| Some(format!("{v:?}"));
            match self {
                DistSpec::Exp { mean, rate } => ("exp", vec![("mean", x(mean)), ("rate", x(rate))]),
                DistSpec::Det { value, mean } => {
                    ("det", vec![("value", x(value)), ("mean", x(mean))])
                }
                DistSpec::Uniform { min, max, mean } => (
                    "uniform",
                    vec![("min", x(min)), ("max", x(max)), ("mean", x(mean))],
                ),
                DistSpec::Erlang { k, mean } => (
                    "erlang",
                    vec![("k", Some(k.to_string())), ("mean", y(*mean))],
                ),
                DistSpec::H2 { mean, scv } => ("h2", vec![("mean", y(*mean)), ("scv", y(*scv))]),
                DistSpec::Lognormal {
                    mean,
                    scv,
                    mu,
                    sigma,
                } => (
                    "lognormal",
                    vec![
                        ("mean", x(mean)),
                        ("scv", x(scv)),
                        ("mu", x(mu)),
                        ("sigma", x(sigma)),
                    ],
                ),
                DistSpec::Gamma {
                    shape,
                    scale,
                    mean,
                    scv,
                } => (
                    "gamma",
                    vec![
                        ("shape", x(shape)),
                        ("scale", x(scale)),
                        ("mean", x(mean)),
                        ("scv", x(scv)),
                    ],
                ),
                DistSpec::Weibull { shape, scale } => {
                    ("weibull", vec![("shape", y(*shape)), ("scale", y(*scale))])
                }
                DistSpec::Pareto { shape, scale } => {
                    ("pareto", vec![("shape", y(*shape)), ("scale", y(*scale))])
                }
                DistSpec::Empirical { file, mode, mean } => (
                    "empirical",
                    vec![
                        ("file", Some(toml::Value::String(file.clone()).to_string())),
                        (
                            "mode",
                            mode.as_ref()
                                .map(|m| toml::Value::String(m.clone()).to_string()),
                        ),
                        ("mean", x(mean)),
                    ],
                ),
                DistSpec::Ph { alpha, generator } => (
                    "ph",
                    vec![
                        ("alpha", Some(numbers(alpha))),
                        (
                            "generator",
                            Some(format!(
                                "[{}]",
                                generator
                                    .iter()
                                    .map(|r| numbers(r))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )),
                        ),
                    ],
                ),
            }
        };
        write!(f, "{{ dist = \"{name}\"")?;
        for (key, value) in fields {
            if let Some(value) = value {
                write!(f, ", {key} = {value}")?;
            }
        }
        f.write_str(" }")
    }
}

/// `[1.0, 0.5]`: numbers as TOML reads them back exactly.
fn numbers(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    format!("[{}]", items.join(", "))
}

impl<'de> Deserialize<'de> for DistSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DistSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a distribution table, e.g. { dist = \"exp\", mean = 2.0 }, or a number (a fixed time)",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DistSpec, E> {
                Ok(DistSpec::det(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DistSpec, E> {
                Ok(DistSpec::det(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DistSpec, E> {
                Ok(DistSpec::det(v))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<DistSpec, M::Error> {
                DistSpec::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_any(V)
    }
}

/// The JSON schema of a distribution: its tables, or a bare number (a fixed time), as
/// [`DistSpec`]'s deserialiser reads them.
fn or_a_bare_number(schema: &mut schemars::Schema) {
    or_a_scalar(
        schema,
        "number",
        "A fixed time: 2 is { dist = \"det\", value = 2 }.",
    );
}

/// Turns the schema of a tagged table into "a scalar of JSON type `scalar` (described by
/// `description`), or one of the tables", keeping the tables' description on the whole.
pub(crate) fn or_a_scalar(schema: &mut schemars::Schema, scalar: &str, description: &str) {
    let mut tables = std::mem::replace(schema, schemars::json_schema!({}));
    let outer = tables.remove("description");
    *schema = schemars::json_schema!({
        "anyOf": [
            { "type": scalar, "description": description },
            tables
        ]
    });
    if let Some(d) = outer {
        schema.insert("description".to_owned(), d);
    }
}

/// One problem with a distribution's parameters: the parameter's name and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct DistError {
    /// The parameter, as named in the scenario file (`mean`, `scv`, ...).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

fn err(field: &str, message: impl Into<String>) -> DistError {
    DistError {
        field: field.to_owned(),
        message: message.into(),
    }
}

fn positive(field: &str, v: f64) -> Result<f64, DistError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(err(field, format!("must be a finite number > 0, got {v}")))
    }
}

fn non_negative(field: &str, v: f64) -> Result<f64, DistError> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(err(field, format!("must be a finite number >= 0, got {v}")))
    }
}

/// Exactly one of two alternative parameter sets must be given.
fn one_of<T>(
    first: Option<T>,
    second: Option<T>,
    names: (&str, &str),
) -> Result<Either<T>, DistError> {
    match (first, second) {
        (Some(a), None) => Ok(Either::First(a)),
        (None, Some(b)) => Ok(Either::Second(b)),
        (Some(_), Some(_)) => Err(err(
            names.0,
            format!("give `{}` or `{}`, not both", names.0, names.1),
        )),
        (None, None) => Err(err(
            names.0,
            format!("missing: give `{}` or `{}`", names.0, names.1),
        )),
    }
}

enum Either<T> {
    First(T),
    Second(T),
}

fn pair(a: Option<f64>, b: Option<f64>) -> Option<(Option<f64>, Option<f64>)> {
    (a.is_some() || b.is_some()).then_some((a, b))
}

fn both(pair: (Option<f64>, Option<f64>), names: (&str, &str)) -> Result<(f64, f64), DistError> {
    match pair {
        (Some(a), Some(b)) => Ok((a, b)),
        (None, _) => Err(err(
            names.0,
            format!("missing: `{}` goes with `{}`", names.0, names.1),
        )),
        (_, None) => Err(err(
            names.1,
            format!("missing: `{}` goes with `{}`", names.1, names.0),
        )),
    }
}

/// The largest mean or standard deviation of an accepted distribution, and the smallest
/// positive mean, in the scenario's time unit: inside these bounds squares and sums of squares
/// of times (variances) stay far from the limits of floating point.
pub const TIME_BOUNDS: (f64, f64) = (1e-100, 1e100);

impl DistSpec {
    /// Exponential with this mean.
    pub fn exp(mean: f64) -> DistSpec {
        DistSpec::Exp {
            mean: Some(mean),
            rate: None,
        }
    }

    /// A constant time.
    pub fn det(value: f64) -> DistSpec {
        DistSpec::Det {
            value: Some(value),
            mean: None,
        }
    }

    /// Erlang with `k` phases and this total mean.
    pub fn erlang(k: i64, mean: f64) -> DistSpec {
        DistSpec::Erlang { k, mean }
    }

    /// Balanced-means hyperexponential with this mean and squared coefficient of variation.
    pub fn h2(mean: f64, scv: f64) -> DistSpec {
        DistSpec::H2 { mean, scv }
    }

    /// Checks the parameters and builds the distribution. `base` is the directory that
    /// relative trace paths are resolved against.
    ///
    /// Besides each family's own conditions, the distribution must have a finite mean and
    /// variance with both inside [`TIME_BOUNDS`]: an infinite or overflowing mean (an
    /// exponential of rate `5e-324`, a lognormal with `mu = 800`) cannot be simulated, and
    /// a variance the confidence intervals cannot use is refused rather than reported as
    /// zero.
    pub fn build(&self, base: &Path) -> Result<Dist, DistError> {
        let dist = Dist {
            law: self.construct(base)?,
        };
        self.check_moments(&dist)?;
        Ok(dist)
    }

    /// The parameter that sets the distribution's scale, named in messages about its moments.
    fn scale_parameter(&self) -> &'static str {
        match self {
            DistSpec::Exp { rate: Some(_), .. } => "rate",
            DistSpec::Det { value: Some(_), .. } => "value",
            DistSpec::Uniform { max: Some(_), .. } => "max",
            DistSpec::Lognormal { mu: Some(_), .. } => "mu",
            DistSpec::Gamma { scale: Some(_), .. } | DistSpec::Weibull { .. } => "scale",
            DistSpec::Pareto { .. } => "scale",
            DistSpec::Empirical { .. } => "file",
            DistSpec::Ph { .. } => "generator",
            _ => "mean",
        }
    }

    fn check_moments(&self, d: &Dist) -> Result<(), DistError> {
        let (low, high) = TIME_BOUNDS;
        let field = self.scale_parameter();
        let mean = d.mean();
        if !(mean.is_finite() && mean <= high) {
            return Err(err(
                field,
                format!(
                    "gives a mean of {mean:e}, beyond the {high:e} time units parsim can simulate with precision; express the times in a larger unit"
                ),
            ));
        }
        if mean > 0.0 && mean < low {
            return Err(err(
                field,
                format!(
                    "gives a mean of {mean:e}, below the {low:e} time units parsim can simulate with precision; express the times in a smaller unit"
                ),
            ));
        }
        let sd = mean * d.scv().sqrt();
        if !(sd.is_finite() && sd <= high) {
            return Err(err(
                field,
                format!(
                    "gives a standard deviation of {sd:e}, beyond {high:e} (the variance must be finite for confidence intervals to mean anything)"
                ),
            ));
        }
        Ok(())
    }

    fn construct(&self, base: &Path) -> Result<Law, DistError> {
        match self {
            DistSpec::Exp { mean, rate } => {
                let mean = match one_of(*mean, *rate, ("mean", "rate"))? {
                    Either::First(m) => positive("mean", m)?,
                    Either::Second(r) => 1.0 / positive("rate", r)?,
                };
                Ok(Law::Exponential { mean })
            }
            DistSpec::Det { value, mean } => {
                let value = match one_of(*value, *mean, ("value", "mean"))? {
                    Either::First(v) => non_negative("value", v)?,
                    Either::Second(m) => non_negative("mean", m)?,
                };
                Ok(Law::Deterministic { value })
            }
            DistSpec::Uniform { min, max, mean } => {
                let (min, max) = match one_of(
                    pair(*min, *max),
                    mean.map(|m| (Some(m), None)),
                    ("min", "mean"),
                )? {
                    Either::First(p) => both(p, ("min", "max"))?,
                    Either::Second((m, _)) => (0.0, 2.0 * non_negative("mean", m.unwrap_or(0.0))?),
                };
                non_negative("min", min)?;
                non_negative("max", max)?;
                if max < min {
                    return Err(err("max", format!("must be >= min ({min}), got {max}")));
                }
                Ok(Law::Uniform { min, max })
            }
            DistSpec::Erlang { k, mean } => {
                let k = u32::try_from(*k)
                    .ok()
                    .filter(|k| (1..=1000).contains(k))
                    .ok_or_else(|| {
                        err(
                            "k",
                            format!("must be a whole number from 1 to 1000, got {k}"),
                        )
                    })?;
                Ok(Law::Erlang {
                    k,
                    mean: positive("mean", *mean)?,
                })
            }
            DistSpec::H2 { mean, scv } => {
                let mean = positive("mean", *mean)?;
                if !(scv.is_finite() && *scv >= 1.0) {
                    return Err(err(
                        "scv",
                        format!("an H2 needs scv >= 1 (use erlang or uniform below 1), got {scv}"),
                    ));
                }
                let p1 = 0.5 * (1.0 + ((scv - 1.0) / (scv + 1.0)).sqrt());
                Ok(Law::HyperExp {
                    p1,
                    mean1: mean / (2.0 * p1),
                    mean2: mean / (2.0 * (1.0 - p1)),
                })
            }
            DistSpec::Lognormal {
                mean,
                scv,
                mu,
                sigma,
            } => {
                let params = match one_of(pair(*mean, *scv), pair(*mu, *sigma), ("mean", "mu"))? {
                    Either::First(p) => {
                        let (mean, scv) = both(p, ("mean", "scv"))?;
                        let mean = positive("mean", mean)?;
                        let s2 = positive("scv", scv)?.ln_1p();
                        LogParams {
                            mu: mean.ln() - 0.5 * s2,
                            sigma: s2.sqrt(),
                        }
                    }
                    Either::Second(p) => {
                        let (mu, sigma) = both(p, ("mu", "sigma"))?;
                        if !mu.is_finite() {
                            return Err(err("mu", format!("must be finite, got {mu}")));
                        }
                        LogParams {
                            mu,
                            sigma: positive("sigma", sigma)?,
                        }
                    }
                };
                let d = rand_distr::LogNormal::new(params.mu, params.sigma)
                    .map_err(|e| err("sigma", e.to_string()))?;
                Ok(Law::LogNormal(d, params))
            }
            DistSpec::Gamma {
                shape,
                scale,
                mean,
                scv,
            } => {
                let p = match one_of(pair(*shape, *scale), pair(*mean, *scv), ("shape", "mean"))? {
                    Either::First(p) => {
                        let (shape, scale) = both(p, ("shape", "scale"))?;
                        ShapeScale {
                            shape: positive("shape", shape)?,
                            scale: positive("scale", scale)?,
                        }
                    }
                    Either::Second(p) => {
                        let (mean, scv) = both(p, ("mean", "scv"))?;
                        let (mean, scv) = (positive("mean", mean)?, positive("scv", scv)?);
                        ShapeScale {
                            shape: 1.0 / scv,
                            scale: mean * scv,
                        }
                    }
                };
                let d = rand_distr::Gamma::new(p.shape, p.scale)
                    .map_err(|e| err("shape", e.to_string()))?;
                Ok(Law::Gamma(d, p))
            }
            DistSpec::Weibull { shape, scale } => {
                let p = ShapeScale {
                    shape: positive("shape", *shape)?,
                    scale: positive("scale", *scale)?,
                };
                let d = rand_distr::Weibull::new(p.scale, p.shape)
                    .map_err(|e| err("shape", e.to_string()))?;
                Ok(Law::Weibull(d, p))
            }
            DistSpec::Pareto { shape, scale } => {
                if !(shape.is_finite() && *shape > 2.0) {
                    return Err(err(
                        "shape",
                        format!(
                            "must be > 2, got {shape}: at or below 2 the variance is infinite, and the confidence intervals parsim reports need a finite variance"
                        ),
                    ));
                }
                let p = ShapeScale {
                    shape: *shape,
                    scale: positive("scale", *scale)?,
                };
                let d = rand_distr::Pareto::new(p.scale, p.shape)
                    .map_err(|e| err("shape", e.to_string()))?;
                Ok(Law::Pareto(d, p))
            }
            DistSpec::Empirical { file, mode, mean } => {
                let mode = match mode.as_deref() {
                    None | Some("random") => EmpiricalMode::Random,
                    Some("replay") => EmpiricalMode::Replay,
                    Some(other) => {
                        return Err(err(
                            "mode",
                            format!("must be \"random\" or \"replay\", got {other:?}"),
                        ));
                    }
                };
                let mut samples = read_trace(&base.join(file)).map_err(|m| err("file", m))?;
                if let Some(target) = *mean {
                    let target = positive("mean", target)?;
                    let have = super::empirical::mean_of(&samples);
                    if have <= 0.0 {
                        return Err(err(
                            "mean",
                            "the trace's samples are all 0: they cannot be scaled to a mean",
                        ));
                    }
                    // target / have overflows or vanishes when the trace's mean is extreme
                    // (1e308, 1e-300) though every scaled sample is ordinary: then x / have first
                    let factor = target / have;
                    for x in &mut samples {
                        *x = if factor.is_normal() {
                            *x * factor
                        } else {
                            *x / have * target
                        };
                    }
                }
                Ok(Law::Empirical(Empirical::new(samples, mode)))
            }
            DistSpec::Ph { alpha, generator } => Ok(Law::PhaseType(Box::new(
                super::PhaseLaw::new(alpha, generator)?,
            ))),
        }
    }
}

/// Reads finite, non-negative numbers separated by white space, commas or new lines, from a
/// regular file of at most [`crate::files::Limit::Data`] bytes, line by line.
fn read_trace(path: &Path) -> Result<Vec<f64>, String> {
    let mut lines =
        crate::files::open_lines(path, crate::files::Limit::Data).map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    while let Some(line) = lines.next_line() {
        let (line_no, line) = line.map_err(|e| e.to_string())?;
        let line = line.split('#').next().unwrap_or("");
        for token in line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            match token.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => samples.push(v),
                _ => {
                    return Err(format!(
                        "{}:{line_no}: {token:?} is not a finite number >= 0",
                        path.display(),
                    ));
                }
            }
        }
    }
    if samples.is_empty() {
        return Err(format!("{} holds no samples", path.display()));
    }
    Ok(samples)
}
