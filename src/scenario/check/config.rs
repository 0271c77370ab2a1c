//! `[run]`, `[validate]` and `[analyze]`, and the metric names they refer to.

use toml::Spanned;

use super::Checker;
use crate::scenario::raw::{RawAnalyze, RawRun, RawScenario, RawValidate};
use crate::scenario::{AnalyzeConfig, RunConfig, ValidateConfig, Warmup, Workload};

/// `[run]`, with its defaults.
pub(super) fn run_config(ck: &mut Checker, raw: Option<&Spanned<RawRun>>) -> RunConfig {
    let at = raw.map_or(0, |r| r.span().start);
    let empty = RawRun {
        replications: None,
        length: None,
        warmup: None,
        seed: None,
        precision: None,
        metric: None,
        max_replications: None,
    };
    let r = raw.map_or(&empty, |r| r.get_ref());
    let most = crate::scenario::MAX_REPLICATIONS;
    let mut count = |v: Option<i64>, default: i64, path: &str| -> u32 {
        let n = ck.whole(v, default, 2, at, path);
        if n > u64::from(most) {
            ck.add(
                Some(at),
                path,
                format!("must be at most {most} (each replication keeps its values: a million take a gigabyte), got {n}"),
            );
        }
        n.min(u64::from(most)) as u32
    };
    let replications = count(r.replications, 10, "run.replications");
    let max_replications = count(
        r.max_replications,
        200.max(i64::from(replications)),
        "run.max_replications",
    );
    if max_replications < replications {
        ck.add(
            Some(at),
            "run.max_replications",
            format!("must be >= run.replications ({replications})"),
        );
    }
    if let Some(p) = r.precision
        && !(p > 0.0 && p < 1.0)
    {
        ck.add(
            Some(at),
            "run.precision",
            format!("must be a relative half-width in (0, 1), got {p}"),
        );
    }
    if let Some(seed) = r.seed
        && seed < 0
    {
        ck.add(Some(at), "run.seed", format!("must be >= 0, got {seed}"));
    }
    RunConfig {
        replications,
        length: ck.whole(r.length, 20_000, 1, at, "run.length"),
        warmup: r.warmup.map_or(Warmup::Mser5, |w| {
            Warmup::Fixed(ck.whole(Some(w), 0, 0, at, "run.warmup"))
        }),
        seed: r.seed.unwrap_or(1).max(0) as u64,
        precision: r.precision,
        metric: r.metric.clone(),
        max_replications,
    }
}

/// `[validate]`, with its defaults (every predicted metric, a 1% precision target, no tolerance).
pub(super) fn validate_config(
    ck: &mut Checker,
    raw: Option<&Spanned<RawValidate>>,
) -> ValidateConfig {
    let Some(raw) = raw else {
        return ValidateConfig {
            precision: 0.01,
            ..ValidateConfig::default()
        };
    };
    let at = Some(raw.span().start);
    let v = raw.get_ref();
    let precision = v.precision.unwrap_or(0.01);
    if !(precision > 0.0 && precision < 1.0) {
        ck.add(
            at,
            "validate.precision",
            format!("must be a relative half-width in (0, 1), got {precision}"),
        );
    }
    if let Some(t) = v.tolerance
        && !(t > 0.0 && t.is_finite())
    {
        ck.add(
            at,
            "validate.tolerance",
            format!("must be a positive relative error, got {t}"),
        );
    }
    for (method, t) in v.tolerances.iter().flatten() {
        if !(*t > 0.0 && t.is_finite()) {
            ck.add(
                at,
                format!("validate.tolerances.{method:?}"),
                format!("must be a positive relative error, got {t}"),
            );
        }
    }
    if v.metrics.as_ref().is_some_and(Vec::is_empty) {
        ck.add(
            at,
            "validate.metrics",
            "is empty: leave it out to compare every predicted metric",
        );
    }
    ValidateConfig {
        metrics: v.metrics.clone(),
        precision,
        tolerance: v.tolerance,
        tolerances: v
            .tolerances
            .iter()
            .flatten()
            .map(|(m, t)| (m.clone(), *t))
            .collect(),
        expects_no_prediction: v.expect_prediction == Some(false),
    }
}

/// `[analyze]`, with its default (budget factor 1).
pub(super) fn analyze_config(ck: &mut Checker, raw: Option<&Spanned<RawAnalyze>>) -> AnalyzeConfig {
    let Some(raw) = raw else {
        return AnalyzeConfig::default();
    };
    match crate::analytic::cost::check_factor(raw.get_ref().budget.unwrap_or(1.0)) {
        Ok(budget) => AnalyzeConfig { budget },
        Err(why) => {
            ck.add(Some(raw.span().start), "analyze.budget", why);
            AnalyzeConfig::default()
        }
    }
}

/// `run.metric` and `validate.metrics` must name metrics the network reports.
pub(super) fn check_metric_names(
    ck: &mut Checker,
    raw: &RawScenario,
    run: &RunConfig,
    validate: &ValidateConfig,
    workload: &Workload,
) {
    let known = match workload {
        Workload::Network(n) => crate::metrics::network::names(n),
        Workload::Program(p) => crate::metrics::program::names(p),
        Workload::Schedule(s) => crate::metrics::schedule::names(s),
    };
    // a program's per-link metrics are only known once it has run
    let per_link = matches!(workload, Workload::Program(p) if p.report_each);
    let mut check = |name: &str, at: Option<usize>, path: &str| {
        let spmd = raw.spmd.is_some() && name.starts_with("spmd.");
        if !(known.iter().any(|k| k == name) || per_link && name.starts_with("link.") || spmd) {
            ck.add(at, path, crate::metrics::unknown_metric(name, &known));
        }
    };
    if let Some(m) = &run.metric {
        check(m, raw.run.as_ref().map(|r| r.span().start), "run.metric");
    }
    for (i, m) in validate.metrics.iter().flatten().enumerate() {
        check(
            m,
            raw.validate.as_ref().map(|v| v.span().start),
            &format!("validate.metrics[{i}]"),
        );
    }
}
