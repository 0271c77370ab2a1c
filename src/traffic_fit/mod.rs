//! Fitting traffic to measurements (`parsim fit-trace`): a column of measured times in,
//! phase-type laws, an MMPP(2) and a MAP(2) out, each beside the sample's moments, autocorrelations and
//! a goodness figure, with the TOML to paste into a scenario and a picture.
//!
//! The mathematics is [`crate::analytic::mam`]'s ([`SampleStats`], [`ph_from_two_moments`],
//! [`ph_from_three_moments`], [`fit_mmpp2`], [`ks_distance`]); this module reads, compares and
//! writes.

pub mod plot;
pub mod read;

use std::fmt::Write as _;

use serde::Serialize;

use crate::analytic::mam::{
    KS_POINTS, KsDistance, Map, Mmpp2Fit, Mmpp2Method, Mmpp2Targets, Ph, PhFit, PhForm,
    ProcessStats, SampleStats, fit_mmpp2, ks_distance, map2_from_moments, ph_from_three_moments,
    ph_from_two_moments,
};
use crate::report::num;

/// What the measured times are: the TOML written differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Times between arrivals: a phase-type law (`interarrival = ...`) and an MMPP(2)
    /// (`arrivals = ...`) are fitted.
    Interarrival,
    /// Service times: a phase-type law (`service = ...`) is fitted.
    Service,
}

/// One fitted model beside the sample.
#[derive(Clone, Debug, Serialize)]
pub struct Fitted {
    /// Its name in the table ("PH, 2 moments", "PH, 3 moments", "MMPP(2)").
    pub name: String,
    /// How it was found (the form of the law, the method of the MMPP(2)), and any fallback.
    pub how: String,
    /// Its statistics: mean, SCV, third moment, skewness, autocorrelations at the sample's
    /// lags (0 for a renewal law).
    pub stats: ProcessStats,
    /// The Kolmogorov-Smirnov distance between the sample and the law of one time.
    pub ks: KsDistance,
    /// The TOML of the law or process, to paste into a scenario.
    pub toml: String,
    /// The law of one time (an MMPP(2)'s: phase type, started in the phase just after an
    /// arrival).
    #[serde(skip)]
    pub marginal: Ph,
}

/// The sample and everything fitted to it.
#[derive(Clone, Debug, Serialize)]
pub struct TraceFit {
    /// The file read.
    pub file: String,
    /// What the times are.
    pub role: Role,
    /// The sample's statistics.
    pub sample: SampleStats,
    /// The 5% critical value of the Kolmogorov-Smirnov distance for a sample of this size,
    /// `1.36 / sqrt(n)` (the distance of a law fitted to the sample itself is smaller in
    /// distribution: the value is a yardstick, not a test).
    pub ks_critical: f64,
    /// The fits: PH to two moments, PH to three, and for arrivals the MMPP(2) and the MAP(2).
    pub fits: Vec<Fitted>,
    /// The processes that could not be fitted, each with why ("MAP(2): ...").
    pub not_fitted: Vec<String>,
    /// The samples in increasing order (for the picture).
    #[serde(skip)]
    pub sorted: Vec<f64>,
}

/// Why a fit could not be made.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FitError(pub String);

impl TraceFit {
    /// Fits `times` (read from `file`) as `role`, with autocorrelations at lags `1..=lags`.
    pub fn new(file: &str, times: &[f64], role: Role, lags: usize) -> Result<TraceFit, FitError> {
        let lags = lags.min(times.len().saturating_sub(2)).max(1);
        let sample = SampleStats::new(times, lags)
            .map_err(|e| FitError(format!("{file}: the sample's statistics: {e}")))?;
        if sample.scv < 1.0 / 64.0 {
            return Err(FitError(format!(
                "{file}: the times vary too little for a phase-type law of at most 64 phases (SCV {}, below 1/64): a fixed time (dist = \"det\") or a uniform law describes them better",
                num(sample.scv)
            )));
        }
        let mut sorted = times.to_vec();
        sorted.sort_by(f64::total_cmp);
        let renewal = |fit: PhFit, name: &str| -> Result<Fitted, FitError> {
            let stats =
                renewal_stats(&fit.ph, lags).map_err(|e| FitError(format!("{name}: {e}")))?;
            let ks = ks_distance(&sorted, &fit.ph, KS_POINTS)
                .map_err(|e| FitError(format!("{name}: {e}")))?;
            let mut how = form_name(fit.form);
            if let Some(why) = &fit.fallback {
                let _ = write!(how, "; {why}");
            }
            Ok(Fitted {
                name: name.to_owned(),
                how,
                stats,
                ks,
                toml: ph_toml(&fit.ph, role),
                marginal: fit.ph,
            })
        };
        let two = ph_from_two_moments(sample.mean, sample.scv)
            .map_err(|e| FitError(format!("{file}: PH to two moments: {e}")))?;
        let three = ph_from_three_moments(sample.mean, sample.moment2, sample.moment3)
            .map_err(|e| FitError(format!("{file}: PH to three moments: {e}")))?;
        let mut fits = vec![
            renewal(two, "PH, 2 moments")?,
            renewal(three, "PH, 3 moments")?,
        ];
        let mut not_fitted = Vec::new();
        if role == Role::Interarrival {
            match fit_mmpp2(&Mmpp2Targets::from_sample(&sample)) {
                Ok(m) => fits.push(mmpp2_fitted(&m, &sorted, lags)?),
                Err(e) => not_fitted.push(format!("MMPP(2): {e}")),
            }
            let rho1 = sample.autocorrelations[0];
            match map2_from_moments(sample.mean, sample.moment2, sample.moment3, rho1) {
                Ok(m) => fits.push(map2_fitted(&m.map, &sorted, lags)?),
                Err(e) => not_fitted.push(format!("MAP(2): {e}")),
            }
        }
        Ok(TraceFit {
            file: file.to_owned(),
            role,
            ks_critical: 1.36 / (times.len() as f64).sqrt(),
            sample,
            fits,
            not_fitted,
            sorted,
        })
    }

    /// The table: the sample's figures beside each fit's, then each fit's TOML.
    pub fn table(&self) -> String {
        let s = &self.sample;
        let mut out = String::new();
        let what = match self.role {
            Role::Interarrival => "inter-arrival times",
            Role::Service => "service times",
        };
        let _ = writeln!(out, "# fit of {} ({} {what})", self.file, s.n);
        let significant = if s.significant_lags == 0 {
            "none".to_owned()
        } else {
            format!("1 to {}", s.significant_lags)
        };
        let _ = writeln!(
            out,
            "autocorrelation: independent samples stay within +-{} (95%); lags clearly outside: {significant}{}",
            num(s.white_noise_band),
            s.decay
                .map_or(String::new(), |g| format!(", decay per lag {}", num(g)))
        );
        let width = 16;
        let _ = write!(out, "{:<22}{:>width$}", "", "sample");
        for f in &self.fits {
            let _ = write!(out, "{:>width$}", f.name);
        }
        out.push('\n');
        let mut row = |label: &str, sample: String, of: &dyn Fn(&Fitted) -> String| {
            let _ = write!(out, "{label:<22}{sample:>width$}");
            for f in &self.fits {
                let _ = write!(out, "{:>width$}", of(f));
            }
            out.push('\n');
        };
        row("mean", num(s.mean), &|f| num(f.stats.mean));
        row("SCV", num(s.scv), &|f| num(f.stats.scv));
        row("third moment", num(s.moment3), &|f| {
            num(f.stats.third_moment)
        });
        row("skewness", num(s.skewness), &|f| num(f.stats.skewness));
        for k in shown_lags(s.autocorrelations.len()) {
            row(
                &format!("autocorrelation lag {k}"),
                num(s.autocorrelations[k - 1]),
                &|f| num(rounded_to_zero(f.stats.autocorrelations[k - 1])),
            );
        }
        row("KS distance", "-".to_owned(), &|f| num(f.ks.distance));
        row("autocorr. RMS error", "-".to_owned(), &|f| {
            num(rms_error(&s.autocorrelations, &f.stats.autocorrelations))
        });
        let _ = writeln!(
            out,
            "(KS distance: the largest gap between the sample's and the fit's distribution of one time; a sample drawn from the fit exceeds {} 5% of the time. Autocorrelation RMS error: over lags 1 to {}.)",
            num(self.ks_critical),
            s.autocorrelations.len()
        );
        out.push('\n');
        for f in &self.fits {
            let _ = writeln!(out, "{} ({}):", f.name, f.how);
            let _ = writeln!(out, "  {}", f.toml);
        }
        for why in &self.not_fitted {
            let _ = writeln!(out, "not fitted: {why}");
        }
        out
    }

    /// The TOML fragment of the best fit for the role: for arrivals whose successive times
    /// are correlated the MMPP(2) (fitted to every significant lag), or the MAP(2) (fitted
    /// to the first lag) where the correlation is negative (no MMPP has it) or the MMPP(2)
    /// could not be fitted; the three-moment PH law otherwise.
    pub fn recommended(&self) -> &Fitted {
        let correlated = self.sample.significant_lags > 0;
        let order = if self.sample.autocorrelations[0] < 0.0 {
            ["MAP(2)", "MMPP(2)"]
        } else {
            ["MMPP(2)", "MAP(2)"]
        };
        let process = order
            .iter()
            .find_map(|name| self.fits.iter().find(|f| f.name == *name));
        match process {
            Some(f) if correlated => f,
            _ => &self.fits[1],
        }
    }
}

/// The lags the table shows: 1, 2, 5, 10, 20, 50, ... up to `max`.
fn shown_lags(max: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut decade = 1;
    while decade <= max {
        for k in [1, 2, 5] {
            if k * decade <= max {
                out.push(k * decade);
            }
        }
        decade *= 10;
    }
    out
}

/// `v`, or 0 when it is rounding error around 0 (a renewal law's autocorrelations).
fn rounded_to_zero(v: f64) -> f64 {
    if v.abs() < 1e-12 { 0.0 } else { v }
}

/// The root mean square of the differences between two equally long lists.
fn rms_error(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len()).max(1) as f64;
    (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / n).sqrt()
}

/// How a phase-type law was formed, in words.
fn form_name(form: PhForm) -> String {
    match form {
        PhForm::Exponential => "exponential".to_owned(),
        PhForm::ErlangMixture { k } => format!("mixture of Erlang-{} and Erlang-{k}", k - 1),
        PhForm::BalancedH2 => "hyperexponential with balanced means".to_owned(),
        PhForm::H2 => "hyperexponential matching three moments".to_owned(),
        PhForm::Acyclic { phases } => {
            format!("acyclic phase type of {phases} phases (Bobbio, Horvath and Telek 2005)")
        }
    }
}

/// The statistics of a renewal process of times drawn from `ph`.
fn renewal_stats(ph: &Ph, lags: usize) -> Result<ProcessStats, crate::analytic::AnalyticError> {
    ProcessStats::of_map(&Map::renewal(ph)?, lags)
}

/// The fitted MMPP(2) beside the sample.
fn mmpp2_fitted(m: &Mmpp2Fit, sorted: &[f64], lags: usize) -> Result<Fitted, FitError> {
    let mut how = match m.method {
        Mmpp2Method::ClosedForm => "three moments and the decay, closed form".to_owned(),
        Mmpp2Method::ClosedFormLags => {
            "three moments exactly, the decay fitted to the significant lags".to_owned()
        }
        Mmpp2Method::LeastSquares => "least squares".to_owned(),
    };
    if let Some(note) = &m.note {
        let _ = write!(how, "; {note}");
    }
    let toml = format!(
        "arrivals = {{ process = \"mmpp2\", rates = [{}, {}], switching = [{}, {}] }}",
        full(m.rates[0]),
        full(m.rates[1]),
        full(m.switching[0]),
        full(m.switching[1])
    );
    process_fitted("MMPP(2)", how, &m.map, toml, sorted, lags)
}

/// The fitted MAP(2) beside the sample.
fn map2_fitted(map: &Map, sorted: &[f64], lags: usize) -> Result<Fitted, FitError> {
    let toml = format!(
        "arrivals = {{ process = \"map\", d0 = {}, d1 = {} }}",
        matrix_toml(map.d0()),
        matrix_toml(map.d1())
    );
    let how = "three moments and the lag-1 autocorrelation, canonical form of Bodrog, Heindl, Horvath and Telek 2008";
    process_fitted("MAP(2)", how.to_owned(), map, toml, sorted, lags)
}

/// A fitted arrival process beside the sample: its statistics, and the KS distance of its
/// law of one time (phase type, started in the phase just after an arrival).
fn process_fitted(
    name: &str,
    how: String,
    map: &Map,
    toml: String,
    sorted: &[f64],
    lags: usize,
) -> Result<Fitted, FitError> {
    let fail = |e: crate::analytic::AnalyticError| FitError(format!("{name}: {e}"));
    let marginal = Ph::new(map.embedded_phases(), map.d0().to_vec()).map_err(fail)?;
    Ok(Fitted {
        name: name.to_owned(),
        how,
        stats: ProcessStats::of_map(map, lags).map_err(fail)?,
        ks: ks_distance(sorted, &marginal, KS_POINTS).map_err(fail)?,
        toml,
        marginal,
    })
}

/// A matrix as TOML rows, its numbers in full.
fn matrix_toml(m: &[Vec<f64>]) -> String {
    let rows: Vec<String> = m
        .iter()
        .map(|r| {
            let row: Vec<String> = r.iter().map(|v| full(*v)).collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// A number written in full (it is pasted into a scenario, where rounding would move the
/// moments).
fn full(v: f64) -> String {
    format!("{v:?}")
}

/// The TOML of a phase-type law for `role`.
fn ph_toml(ph: &Ph, role: Role) -> String {
    let key = match role {
        Role::Interarrival => "interarrival",
        Role::Service => "service",
    };
    let alpha: Vec<String> = ph.alpha().iter().map(|v| full(*v)).collect();
    format!(
        "{key} = {{ dist = \"ph\", alpha = [{}], generator = {} }}",
        alpha.join(", "),
        matrix_toml(ph.t())
    )
}
