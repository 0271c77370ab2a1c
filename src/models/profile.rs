//! Machine profiles (In et al.): communication costs `a + b m` fitted per primitive and per
//! number of ranks `P` to measured times by least squares, with standard errors; a program
//! scenario can use a profile's point-to-point fit in place of a `[topology]` (`[machine]`),
//! which is the paper's way of projecting an application onto a measured machine.
//!
//! Measurements are CSV with the columns `primitive,ranks,bytes,time` (in any order, others
//! ignored; fields may be quoted), one measured time a line:
//!
//! ```text
//! primitive,ranks,bytes,time
//! send,2,1024,1.3e-5
//! bcast,16,1024,5.1e-5
//! ```
//!
//! The profile is TOML, one `[[fit]]` per (primitive, ranks):
//!
//! ```toml
//! [[fit]]
//! primitive = "send"
//! ranks = 2
//! a = 1.0e-5        # time units
//! b = 2.5e-9        # time units per byte
//! a_se = 1.2e-7
//! b_se = 3.0e-12
//! points = 12
//! residual_sd = 2.9e-7
//! ```
//!
//! In a scenario, `[machine]` with `profile = "machine.toml"` (relative to the scenario) and
//! optionally `primitive` (default `"send"`) makes every message between two ranks cost
//! `a + b m` for the program's `P`: a link per pair of ranks (no contention) with startup `a`
//! and bandwidth `1 / b`. Collectives run as their algorithms over that point-to-point cost; the
//! profile's fits of collectives are for comparison with the simulated collectives.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One measured time.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The primitive measured (`send`, `bcast`, ...).
    pub primitive: String,
    /// Ranks taking part.
    pub ranks: u32,
    /// Message size in bytes.
    pub bytes: f64,
    /// Measured time.
    pub time: f64,
}

/// `a + b m` for one primitive at one number of ranks, with standard errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// The primitive.
    pub primitive: String,
    /// Ranks.
    pub ranks: u32,
    /// Intercept: time of an empty message.
    pub a: f64,
    /// Slope: time per byte.
    pub b: f64,
    /// Standard error of `a`.
    pub a_se: f64,
    /// Standard error of `b`.
    pub b_se: f64,
    /// Measurements fitted.
    pub points: u32,
    /// Standard deviation of the residuals (`sqrt(RSS / (points - 2))`).
    pub residual_sd: f64,
}

/// A machine profile: every fit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineProfile {
    /// The fits, by primitive then ranks.
    #[serde(default, rename = "fit")]
    pub fits: Vec<Fit>,
}

/// Why measurements could not be read or fitted, or a profile not used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// A CSV line is malformed.
    #[error("line {line}: {message}")]
    Csv {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A (primitive, ranks) has fewer than three measurements: two fix the line and leave no
    /// residual to estimate the errors from.
    #[error(
        "{primitive} at {ranks} ranks: {points} measurement(s); a fit with standard errors needs at least 3"
    )]
    TooFewPoints {
        /// The primitive.
        primitive: String,
        /// Ranks.
        ranks: u32,
        /// Measurements found.
        points: usize,
    },
    /// Every measurement of a (primitive, ranks) has the same size, so `b` is undetermined.
    #[error(
        "{primitive} at {ranks} ranks: every measurement has {bytes} bytes; measure at least two sizes"
    )]
    OneSize {
        /// The primitive.
        primitive: String,
        /// Ranks.
        ranks: u32,
        /// The one size.
        bytes: f64,
    },
    /// The file holds a header and no measurement.
    #[error("no measurements after the header: nothing to fit")]
    Empty,
    /// The fit's numbers are beyond floating point (measurements near `f64::MAX` whose line has
    /// a slope or errors no `f64` holds).
    #[error(
        "{primitive} at {ranks} ranks: the fit is beyond floating point ({what}); the sizes or times are out of any sensible range (check their units)"
    )]
    NotFinite {
        /// The primitive.
        primitive: String,
        /// Ranks.
        ranks: u32,
        /// Which numbers.
        what: String,
    },
}

/// The least-squares line of `points` `(x, y)`: `(a, b, se(a), se(b), residual sd)`, and the
/// spread of `x` (`Sxx`, 0 when every `x` is the same).
fn least_squares(points: &[(f64, f64)]) -> ([f64; 5], f64) {
    let nf = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let rss: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let s2 = rss / (nf - 2.0);
    (
        [
            a,
            b,
            (s2 * (1.0 / nf + mx * mx / sxx)).sqrt(),
            (s2 / sxx).sqrt(),
            s2.sqrt(),
        ],
        sxx,
    )
}

/// Reads measurements from CSV text (see the module documentation) with the `csv` crate, as
/// `parsim fit` reads its observations: quoted fields are unquoted, the columns are found by
/// name in any order and other columns are ignored. Every bad line is an error naming its line
/// and column.
pub fn read_measurements(text: &str) -> Result<Vec<Measurement>, ProfileError> {
    const HEADER: &str = "primitive,ranks,bytes,time";
    let bad = |line: u64, message: String| ProfileError::Csv {
        line: line as usize,
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| bad(1, format!("header: {e}")))?
        .clone();
    if headers.iter().all(str::is_empty) {
        return Err(bad(1, format!("empty: expected the header {HEADER}")));
    }
    let column = |name: &str| {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            bad(
                1,
                format!("header must name the columns {HEADER} (others are ignored), got {headers:?}, without {name}"),
            )
        })
    };
    let [ip, ir, ib, it] = [
        column("primitive")?,
        column("ranks")?,
        column("bytes")?,
        column("time")?,
    ];
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            bad(line, e.to_string())
        })?;
        let line = record.position().map_or(0, csv::Position::line);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let field = |k: usize| record.get(k).unwrap_or("");
        let number = |k: usize, name: &str| -> Result<f64, ProfileError> {
            match field(k).parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(bad(
                    line,
                    format!("{name}: expected a finite number >= 0, got {:?}", field(k)),
                )),
            }
        };
        let ranks = match field(ir).parse::<u32>() {
            Ok(r) if r >= 1 => r,
            _ => {
                return Err(bad(
                    line,
                    format!("ranks: expected a whole number >= 1, got {:?}", field(ir)),
                ));
            }
        };
        if field(ip).is_empty() {
            return Err(bad(line, "primitive: is empty".into()));
        }
        out.push(Measurement {
            primitive: field(ip).to_owned(),
            ranks,
            bytes: number(ib, "bytes")?,
            time: number(it, "time")?,
        });
    }
    Ok(out)
}

/// Fits `time = a + b bytes` by ordinary least squares to each (primitive, ranks), with the
/// standard errors of the classical linear model: `s^2 = RSS / (n - 2)`,
/// `se(b) = s / sqrt(Sxx)`, `se(a) = s sqrt(1/n + mean(m)^2 / Sxx)`.
pub fn fit(measurements: &[Measurement]) -> Result<MachineProfile, ProfileError> {
    if measurements.is_empty() {
        return Err(ProfileError::Empty);
    }
    let mut groups: BTreeMap<(&str, u32), Vec<(f64, f64)>> = BTreeMap::new();
    for m in measurements {
        groups
            .entry((m.primitive.as_str(), m.ranks))
            .or_default()
            .push((m.bytes, m.time));
    }
    let mut fits = Vec::with_capacity(groups.len());
    for ((primitive, ranks), points) in groups {
        let n = points.len();
        if n < 3 {
            return Err(ProfileError::TooFewPoints {
                primitive: primitive.to_owned(),
                ranks,
                points: n,
            });
        }
        if points.iter().all(|p| p.0 == points[0].0) {
            return Err(ProfileError::OneSize {
                primitive: primitive.to_owned(),
                ranks,
                bytes: points[0].0,
            });
        }
        let ([mut a, mut b, mut a_se, mut b_se, mut sd], sxx) = least_squares(&points);
        if !(sxx > 0.0 && [a, b, a_se, b_se, sd, sxx].iter().all(|v| v.is_finite())) {
            // squares of numbers near f64::MAX overflow (Sxx = inf gave b = 0 and se(b) = 0),
            // and those of sizes near 1e-300 vanish: fit the points divided by their largest
            // sizes and times, then scale back
            let sx = points.iter().map(|p| p.0.abs()).fold(0.0, f64::max);
            let sy = points
                .iter()
                .map(|p| p.1.abs())
                .fold(f64::MIN_POSITIVE, f64::max);
            let scaled: Vec<(f64, f64)> = points.iter().map(|p| (p.0 / sx, p.1 / sy)).collect();
            let ([a1, b1, a_se1, b_se1, sd1], _) = least_squares(&scaled);
            (a, b, a_se, b_se, sd) = (
                a1 * sy,
                b1 * (sy / sx),
                a_se1 * sy,
                b_se1 * (sy / sx),
                sd1 * sy,
            );
        }
        let names = ["a", "b", "se(a)", "se(b)", "residual sd"];
        let bad: Vec<&str> = [a, b, a_se, b_se, sd]
            .iter()
            .zip(names)
            .filter(|(v, _)| !v.is_finite())
            .map(|(_, name)| name)
            .collect();
        if !bad.is_empty() {
            return Err(ProfileError::NotFinite {
                primitive: primitive.to_owned(),
                ranks,
                what: bad.join(", "),
            });
        }
        fits.push(Fit {
            primitive: primitive.to_owned(),
            ranks,
            a,
            b,
            a_se,
            b_se,
            points: n as u32,
            residual_sd: sd,
        });
    }
    Ok(MachineProfile { fits })
}

impl MachineProfile {
    /// The fit of `primitive` at `ranks`, if measured.
    pub fn get(&self, primitive: &str, ranks: u32) -> Option<&Fit> {
        self.fits
            .iter()
            .find(|f| f.primitive == primitive && f.ranks == ranks)
    }

    /// The profile as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a profile is plain numbers and strings")
    }

    /// Reads a profile file.
    pub fn load(path: &Path) -> Result<MachineProfile, String> {
        let text = crate::files::read_text(path, crate::files::Limit::Scenario)
            .map_err(|e| format!("cannot read {}: {}", path.display(), e.reason()))?;
        toml::from_str(&text).map_err(|e| {
            // where in the profile: its line, as the scenario's problems give theirs
            let line = e
                .span()
                .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count());
            match line {
                Some(line) => format!("{}:{line}: {}", path.display(), e.message()),
                None => format!("{}: {}", path.display(), e.message()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_with_noise_is_fitted_with_its_textbook_standard_errors() {
        // six points on x = 0, 2, ..., 10 scattered about a line
        let ys = [3.0, 4.0, 9.0, 10.0, 15.0, 16.0];
        let text = std::iter::once("primitive,ranks,bytes,time".to_owned())
            .chain(
                ys.iter()
                    .enumerate()
                    .map(|(x, y)| format!("send,2,{},{}", x * 2, y)),
            )
            .collect::<Vec<_>>()
            .join("\n");
        let p = fit(&read_measurements(&text).unwrap()).unwrap();
        let f = p.get("send", 2).unwrap();
        // x = 0,2,..,10: mean 5, Sxx = 70, Sxy = sum (x-5)(y-9.5) = 99 -> b = 99/70
        assert!((f.b - 99.0 / 70.0).abs() < 1e-12);
        assert!((f.a - (9.5 - 5.0 * 99.0 / 70.0)).abs() < 1e-12);
        let rss: f64 = ys
            .iter()
            .enumerate()
            .map(|(x, y)| (y - f.a - f.b * (2 * x) as f64).powi(2))
            .sum();
        assert!((f.b_se - (rss / 4.0 / 70.0).sqrt()).abs() < 1e-12);
        assert!((f.a_se - (rss / 4.0 * (1.0 / 6.0 + 25.0 / 70.0)).sqrt()).abs() < 1e-12);
        let back: MachineProfile = toml::from_str(&p.to_toml()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn bad_measurements_say_where() {
        let e = read_measurements("primitive,ranks,bytes,time\nsend,2,x,1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: bytes: expected a finite number >= 0, got \"x\""
        );
        let e = read_measurements("p,r\n").unwrap_err();
        assert!(e.to_string().starts_with("line 1: header"), "{e}");
        let two = read_measurements("primitive,ranks,bytes,time\nsend,2,1,1\nsend,2,2,2\n");
        assert!(matches!(
            fit(&two.unwrap()),
            Err(ProfileError::TooFewPoints { points: 2, .. })
        ));
        let same = read_measurements("primitive,ranks,bytes,time\na,2,1,1\na,2,1,2\na,2,1,3\n");
        assert!(matches!(
            fit(&same.unwrap()),
            Err(ProfileError::OneSize { .. })
        ));
    }

    #[test]
    fn measurements_are_read_as_csv_with_quotes_and_extra_columns() {
        let text = "\"primitive\",ranks,bytes,time,host\n\"send\",2,\"1024\",1.5e-5,node01\n";
        let m = read_measurements(text).expect("quoted fields and an extra column are CSV");
        assert_eq!(
            m[0].primitive, "send",
            "the quotes are not part of the name"
        );
        assert_eq!((m[0].ranks, m[0].bytes, m[0].time), (2, 1024.0, 1.5e-5));
        // the columns are found by name, in any order
        let m = read_measurements("time,bytes,primitive,ranks\n2.0,8,bcast,4\n").unwrap();
        assert_eq!(
            (m[0].primitive.as_str(), m[0].ranks, m[0].bytes),
            ("bcast", 4, 8.0)
        );
        // a short record is refused with its line
        let e = read_measurements("primitive,ranks,bytes,time\nsend,2,1\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2:"), "{e}");
    }
}
