//! `parsim analyze`.

use std::io::Write as _;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use parsim::report::num;
use parsim::scenario::assign::Assignment;
use parsim::study::analyze_scenario;

/// Options of `parsim analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Scenario files (TOML; `-` reads one from standard input), or GOAL schedules (`.goal`: no
    /// closed form, it says why). A program
    /// of one collective with `[loggp]` gets that algorithm's LogGP closed form; a program whose
    /// links more than one rank sends across also gets M/G/1 waits at those links.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Override a scenario field (repeatable), as `run --set` does: KEY is its path, e.g.
    /// class.jobs.population, station.disk.service.mean, program.ranks; VALUE is read as TOML
    /// (a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Assignment::parse)]
    set: Vec<Assignment>,
    /// Multiply every analytic method's work budget by FACTOR (up to 1e4), as `[analyze]
    /// budget` does in a file: a method refused as too costly says the factor it needs.
    #[arg(long, value_name = "FACTOR", value_parser = parse_budget)]
    budget: Option<f64>,
    /// Print JSON instead of tables.
    #[arg(long, conflicts_with = "long")]
    json: bool,
    /// Print one line per prediction (metric, value, kind, method) instead of a table per
    /// station and class with the methods side by side.
    #[arg(long)]
    long: bool,
}

/// Prints the predictions and refusals of each scenario.
pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let scenarios = load_with_budget(&args.files, &args.set, args.budget)?;
    let analyses: Vec<_> = scenarios
        .iter()
        .map(|sc| (sc, analyze_scenario(sc)))
        .collect();
    if args.json {
        let out: Vec<_> = analyses
            .iter()
            .map(|(sc, a)| serde_json::json!({ "scenario": sc.name, "file": sc.path, "analysis": a }))
            .collect();
        writeln!(
            parsim::files::stdout(),
            "{}",
            serde_json::to_string_pretty(&out)?
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for (sc, a) in analyses {
        writeln!(
            parsim::files::stdout(),
            "# {} ({})",
            sc.name,
            sc.path.display()
        )?;
        if args.long {
            long_form(&a)?;
        } else {
            writeln!(parsim::files::stdout(), "{}", tables(&a))?;
        }
        details(&a)?;
        writeln!(parsim::files::stdout())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--budget`: a factor of the analysis budget in (0, 1e4].
pub fn parse_budget(text: &str) -> Result<f64, String> {
    let factor = text
        .parse::<f64>()
        .map_err(|_| format!("must be a number, a factor of the analysis budget; got {text}"))?;
    parsim::analytic::cost::check_factor(factor)
}

/// [`super::run::load_all`], with every scenario's `[analyze] budget` replaced by `budget`
/// when given.
pub fn load_with_budget(
    files: &[PathBuf],
    set: &[Assignment],
    budget: Option<f64>,
) -> anyhow::Result<Vec<parsim::scenario::Scenario>> {
    let mut scenarios = super::run::load_all(files, set)?;
    if let Some(budget) = budget {
        for sc in &mut scenarios {
            sc.analyze.budget = budget;
        }
    }
    Ok(scenarios)
}

/// What a cell of the tables holds: a method's value (and whether it is the recommended one
/// of several), or its bounds.
#[derive(Clone, Copy)]
enum Cell {
    Value(f64, bool),
    Bounds(f64, f64),
}

/// A method as the tables name it: its key letter, its label and what kind of answer it gives.
struct Method<'a> {
    name: &'a str,
    kind: &'static str,
}

/// The name of the `i`-th method's column: A, B, ..., Z, AA, AB, ...
fn key(i: usize) -> String {
    let letter = |k: usize| char::from(b'A' + (k % 26) as u8);
    if i < 26 {
        letter(i).to_string()
    } else {
        format!("{}{}", letter(i / 26 - 1), letter(i))
    }
}

/// The metric's table and row: `station.cpu.response` is row `response` of `station cpu`; a
/// name without a dot (a model's term) is a row of `terms`.
fn place(metric: &str) -> (String, &str) {
    match metric.rsplit_once('.') {
        Some((group, quantity)) => (group.replace('.', " "), quantity),
        None => ("terms".to_owned(), metric),
    }
}

/// The predictions as tables: the methods listed once with a key and their kind (exact,
/// approximation, bounds, term), then one table per station, class or other group of metrics
/// (rows: its quantities; columns: the methods that predict one of them).
fn tables(a: &parsim::predict::Analysis) -> String {
    use std::fmt::Write as _;
    let mut methods: Vec<Method> = Vec::new();
    // (group, quantity, method index, cell), in the analysis's order
    let mut cells: Vec<(String, &str, usize, Cell)> = Vec::new();
    // a recommendation is marked where there is a choice among approximations: several
    // predictions of the metric, none exact
    let mut per_metric: std::collections::HashMap<&str, (usize, bool)> =
        std::collections::HashMap::new();
    for p in &a.predictions {
        let (n, exact) = per_metric.entry(p.metric.as_str()).or_default();
        *n += 1;
        *exact |= p.exact;
    }
    let choice = |metric: &str| {
        per_metric
            .get(metric)
            .is_some_and(|&(n, exact)| n > 1 && !exact)
    };
    let entries = a
        .predictions
        .iter()
        .map(|p| {
            let kind = if p.exact { "exact" } else { "approximation" };
            (
                p.metric.as_str(),
                p.method.as_str(),
                kind,
                Cell::Value(p.value, p.recommended && choice(&p.metric)),
            )
        })
        .chain(a.terms.iter().map(|t| {
            (
                t.metric.as_str(),
                t.method.as_str(),
                "term",
                Cell::Value(t.value, false),
            )
        }))
        .chain(a.bounds.iter().map(|b| {
            (
                b.metric.as_str(),
                b.method.as_str(),
                "bounds",
                Cell::Bounds(b.lower, b.upper),
            )
        }));
    for (metric, method, kind, cell) in entries {
        let m = match methods
            .iter()
            .position(|m| m.name == method && m.kind == kind)
        {
            Some(m) => m,
            None => {
                methods.push(Method { name: method, kind });
                methods.len() - 1
            }
        };
        let (group, quantity) = place(metric);
        cells.push((group, quantity, m, cell));
    }
    let mut s = String::new();
    if methods.is_empty() {
        let _ = writeln!(s, "no analytic prediction applies (the reasons follow)");
        return s;
    }
    let _ = writeln!(s, "methods:");
    for (i, m) in methods.iter().enumerate() {
        let _ = writeln!(s, "  {:<3} {:<13}  {}", key(i), m.kind, m.name);
        if let Some(line) = measured_line(a, m.name) {
            let _ = writeln!(s, "  {:<3} {:<13}  {line}", "", "");
        }
    }
    let mut groups: Vec<&str> = Vec::new();
    for (g, ..) in &cells {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    let marks = |c: &(String, &str, usize, Cell)| matches!(c.3, Cell::Value(_, true));
    let marked = cells.iter().any(marks);
    // (a group with a mark pads its other values, so that the digits stay aligned)
    let shown = |c: Cell, pad: bool| match c {
        Cell::Value(v, true) => format!("{}*", num(v)),
        Cell::Value(v, false) if pad => format!("{} ", num(v)),
        Cell::Value(v, false) => num(v),
        Cell::Bounds(lo, hi) => format!("[{}, {}]", num(lo), num(hi)),
    };
    for group in groups {
        let of_group: Vec<&(String, &str, usize, Cell)> =
            cells.iter().filter(|c| c.0 == group).collect();
        let pad = of_group.iter().any(|c| marks(c));
        let mut rows: Vec<&str> = Vec::new();
        let mut cols: Vec<usize> = Vec::new();
        for (_, q, m, _) in &of_group {
            if !rows.contains(q) {
                rows.push(q);
            }
            if !cols.contains(m) {
                cols.push(*m);
            }
        }
        cols.sort_unstable();
        // a method giving two values of one metric (rare) shows the first
        let cell = |q: &str, m: usize| {
            of_group
                .iter()
                .find(|c| c.1 == q && c.2 == m)
                .map_or_else(|| "-".to_owned(), |c| shown(c.3, pad))
        };
        let first = rows.iter().map(|q| q.len()).max().unwrap_or(0).max(8);
        let widths: Vec<usize> = cols
            .iter()
            .map(|&m| {
                rows.iter()
                    .map(|q| cell(q, m).len())
                    .chain([key(m).len(), short_kind(methods[m].kind).len()])
                    .max()
                    .unwrap_or(1)
            })
            .collect();
        let _ = writeln!(s, "\n{group}");
        let mut line = format!("  {:<first$}", "");
        for (&m, w) in cols.iter().zip(&widths) {
            let _ = write!(line, "  {:>w$}", key(m));
        }
        let _ = writeln!(s, "{}", line.trim_end());
        let mut line = format!("  {:<first$}", "");
        for (&m, w) in cols.iter().zip(&widths) {
            let _ = write!(line, "  {:>w$}", short_kind(methods[m].kind));
        }
        let _ = writeln!(s, "{}", line.trim_end());
        for q in &rows {
            let mut line = format!("  {q:<first$}");
            for (&m, w) in cols.iter().zip(&widths) {
                let _ = write!(line, "  {:>w$}", cell(q, m));
            }
            let _ = writeln!(s, "{}", line.trim_end());
        }
    }
    if marked {
        let _ = writeln!(
            s,
            "\n* recommended where only approximations predict a metric: the smallest median error measured over the validation suite on such a metric (--long: each method's figures; validation/measured/method-errors.toml)"
        );
    }
    s
}

/// The validation suite's measured error of the method labelled `label` over every metric it
/// was compared on, as one line (`None`: an exact method here, or never measured).
fn measured_line(a: &parsim::predict::Analysis, label: &str) -> Option<String> {
    let approximate = a.predictions.iter().any(|p| p.method == label && !p.exact);
    let m = parsim::predict::measured::suite().overall(label)?;
    approximate.then(|| {
        format!(
            "measured over the validation suite: median |error| {}, worst {}, over {} comparisons",
            percent(m.median),
            percent(m.worst),
            m.comparisons
        )
    })
}

/// A relative error as a percentage with two significant digits below 10%.
fn percent(x: f64) -> String {
    let p = 100.0 * x;
    if p < 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// The kind of a method's answer as a column head.
fn short_kind(kind: &str) -> &str {
    match kind {
        "approximation" => "approx.",
        other => other,
    }
}

/// One line per prediction, term and bound (`--long`).
fn long_form(a: &parsim::predict::Analysis) -> anyhow::Result<()> {
    let width = a
        .predictions
        .iter()
        .map(|p| p.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    writeln!(
        parsim::files::stdout(),
        "{:<width$}  {:>14}  {:<13}  method",
        "metric",
        "value",
        "kind"
    )?;
    for p in &a.predictions {
        let kind = if p.exact { "exact" } else { "approximation" };
        let mark = if p.recommended { "*" } else { " " };
        let measured = p.measured.as_ref().map_or_else(String::new, |m| {
            format!(
                " [measured |error| on {}: median {}, worst {} over {} comparisons]",
                m.metric,
                percent(m.median),
                percent(m.worst),
                m.comparisons
            )
        });
        writeln!(
            parsim::files::stdout(),
            "{:<width$}  {:>14}{mark} {kind:<13}  {}{measured}",
            p.metric,
            num(p.value),
            p.method
        )?;
    }
    for t in &a.terms {
        writeln!(
            parsim::files::stdout(),
            "{:<width$}  {:>14}  {:<13}  {}",
            t.metric,
            num(t.value),
            "term",
            t.method
        )?;
    }
    for b in &a.bounds {
        writeln!(
            parsim::files::stdout(),
            "{:<width$}  {:>14}  {:<13}  {}",
            b.metric,
            format!("[{}, {}]", num(b.lower), num(b.upper)),
            "bounds",
            b.method
        )?;
    }
    if a.predictions.iter().any(|p| p.recommended) {
        writeln!(
            parsim::files::stdout(),
            "* recommended for its metric: the exact prediction, else the approximation with the smallest median error measured over the validation suite (validation/measured/method-errors.toml)"
        )?;
    }
    Ok(())
}

/// Approximations against the exact values, visits and demands, bottlenecks and the methods
/// that do not apply.
fn details(a: &parsim::predict::Analysis) -> anyhow::Result<()> {
    let against = parsim::report::against_exact(
        a.predictions
            .iter()
            .map(|p| (p.method.as_str(), p.exact, p.metric.as_str(), p.value)),
    );
    if !against.is_empty() {
        writeln!(
            parsim::files::stdout(),
            "approximations against the exact value (relative error):"
        )?;
        for line in against {
            writeln!(parsim::files::stdout(), "{line}")?;
        }
    }
    if !a.demands.is_empty() {
        writeln!(
            parsim::files::stdout(),
            "visits and demands (any distribution; Little's law L = X R holds at every station):"
        )?;
        for d in &a.demands {
            writeln!(
                parsim::files::stdout(),
                "  {} at {}: visits {}, demand {}",
                d.class,
                d.station,
                num(d.visits),
                num(d.demand)
            )?;
        }
    }
    for b in &a.bottlenecks {
        let n_star = b
            .saturation_population
            .map_or(String::new(), |n| format!(", N* = {}", num(n)));
        writeln!(
            parsim::files::stdout(),
            "bottleneck of {}: {} (demand per server {}, throughput at most {}{n_star})",
            b.class,
            b.station,
            num(b.demand_per_server),
            num(1.0 / b.demand_per_server)
        )?;
    }
    for r in &a.refusals {
        writeln!(
            parsim::files::stdout(),
            "not applicable: {}: {}",
            r.method,
            r.reason
        )?;
    }
    Ok(())
}
