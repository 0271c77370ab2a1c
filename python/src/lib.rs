//! `parsim._parsim`: the native half of the Python package. It checks scenarios, runs,
//! analyses, validates and sweeps them through the library, exactly as the command line does,
//! and hands every result over as the JSON the command line prints (`--json`); the Python half
//! (`python/parsim/__init__.py`) makes tables of it.
//!
//! Every simulation runs on a thread of its own while the calling thread, without the GIL,
//! waits for it: other Python threads go on, Ctrl-C is seen within a tenth of a second (the
//! run is then stopped before its next replication and `KeyboardInterrupt` raised), and a
//! Python callable is told of the progress.
#![allow(
    clippy::too_many_arguments,
    reason = "a Python method's keyword arguments are its Rust arguments"
)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use parsim::replicate::{self, Options, StopFlag};
use parsim::report::RunReport;
use parsim::scenario::assign::{Assignment, Value, keyed_seed};
use parsim::scenario::{self, ScenarioError as Problems};
use parsim::sweep::execute::{Execution, SweepError, check_points, run_points};
use parsim::sweep::{Axis, Layout, Sweep};
use parsim::validate::{Effort, ValidateOptions};

create_exception!(
    _parsim,
    ScenarioError,
    PyValueError,
    "A scenario with problems: `.problems` lists each as (file, line, path, message), all of them at once, as the command line reports them."
);

/// The Python exception for a scenario's problems.
fn scenario_error(py: Python<'_>, e: &Problems) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let problems: Vec<(String, Option<usize>, String, String)> = e
        .problems
        .iter()
        .map(|p| {
            let file = p.file.as_deref().unwrap_or(&e.file);
            (
                file.display().to_string(),
                p.line,
                p.path.clone(),
                p.message.clone(),
            )
        })
        .collect();
    match err.value(py).setattr("problems", problems) {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// The assignments of `set` (key, value written as TOML), checked as `--set` checks them.
fn assignments(set: Vec<(String, String)>) -> PyResult<Vec<Assignment>> {
    let parsed = set
        .into_iter()
        .map(|(key, value)| {
            Assignment::parse(&format!("{key}={value}"))
                .map_err(|e| PyValueError::new_err(format!("set: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    parsim::scenario::assign::check_distinct(&parsed)
        .map_err(|e| PyValueError::new_err(format!("set: {e}")))?;
    Ok(parsed)
}

/// A checked scenario, with the text and the assignments it came from (a sweep applies its
/// points to them).
#[pyclass(frozen, module = "parsim._parsim")]
struct Scenario {
    text: String,
    path: PathBuf,
    set: Vec<Assignment>,
    checked: scenario::Scenario,
}

/// Runs `work` on a thread of its own and waits for it without the GIL, checking for signals
/// (Ctrl-C) every 0.1 s and telling `progress(done, total)` how far it is when that changed.
/// On a signal, or an exception of `progress`, the run is stopped through `stop` and the
/// exception raised.
fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &StopFlag,
    done: &AtomicU64,
    total: u64,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let handle = s.spawn(work);
        let mut told = u64::MAX;
        loop {
            py.detach(|| {
                for _ in 0..10 {
                    if handle.is_finished() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            let now = done.load(Ordering::Relaxed);
            let told_now = match progress {
                Some(callback) if now != told || handle.is_finished() => {
                    told = now;
                    callback.call1((now, total.max(now))).map(drop)
                }
                _ => Ok(()),
            };
            if handle.is_finished() && told_now.is_ok() {
                return handle
                    .join()
                    .map_err(|_| PyRuntimeError::new_err("the simulation thread panicked"));
            }
            // a signal (Ctrl-C), or the progress callable raising: the run stops before its
            // next replication, and what it returns is dropped
            if let Err(raised) = told_now.and_then(|()| py.check_signals()) {
                stop.raise();
                let _ = py.detach(|| handle.join());
                return Err(raised);
            }
        }
    })
}

/// A JSON text of `value`, for the Python half.
fn json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

#[pymethods]
impl Scenario {
    /// Parses and checks `text`, named `name` in messages, with the fields of `set` overridden.
    #[staticmethod]
    fn from_text(
        py: Python<'_>,
        text: String,
        name: PathBuf,
        set: Vec<(String, String)>,
    ) -> PyResult<Scenario> {
        let set = assignments(set)?;
        let checked =
            scenario::parse_with(&text, &name, &set).map_err(|e| scenario_error(py, &e))?;
        Ok(Scenario {
            text,
            path: name,
            set,
            checked,
        })
    }

    /// Reads the scenario file `path` (`-`: standard input), then as [`Scenario::from_text`].
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf, set: Vec<(String, String)>) -> PyResult<Scenario> {
        let text = scenario::read_text(&path).map_err(|e| scenario_error(py, &e))?;
        let name = scenario::source_name(&path).to_owned();
        Scenario::from_text(py, text, name, set)
    }

    /// The scenario's title.
    #[getter]
    fn name(&self) -> &str {
        &self.checked.name
    }

    /// Its description.
    #[getter]
    fn description(&self) -> &str {
        &self.checked.description
    }

    /// The file it came from (or the name it was given).
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// Its text, before the overrides.
    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    /// The overrides, as `KEY=VALUE`.
    #[getter]
    fn set(&self) -> Vec<String> {
        self.set.iter().map(ToString::to_string).collect()
    }

    /// What it describes: "network", "program" or "schedule".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.checked.network().is_some() {
            "network"
        } else if self.checked.program().is_some() {
            "program"
        } else {
            "schedule"
        }
    }

    /// Every metric a run reports.
    #[getter]
    fn metric_names(&self) -> Vec<String> {
        self.checked.metric_names()
    }

    /// What the checker warns about (as `parsim: warning:` lines on the command line).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.checked.warnings()
    }

    /// The scenario's hash (its text and the files it read).
    #[getter]
    fn scenario_hash(&self) -> &str {
        &self.checked.text_hash
    }

    /// Simulates it as `parsim run --json` does; returns `{"report": <the report>, "values":
    /// [[every replication's value of every metric]]}` as JSON.
    #[pyo3(signature = (replications=None, seed=None, threads=0, length=None, precision=None, progress=None))]
    fn run(
        &self,
        py: Python<'_>,
        replications: Option<u32>,
        seed: Option<u64>,
        threads: usize,
        length: Option<u64>,
        precision: Option<f64>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let sc = &self.checked;
        let mut opt = Options::from_scenario(sc);
        let master = seed.unwrap_or(opt.seed);
        opt.seed = keyed_seed(master, &self.set);
        if let Some(r) = replications {
            if !(2..=scenario::MAX_REPLICATIONS).contains(&r) {
                return Err(PyValueError::new_err(format!(
                    "replications must lie from 2 to {} (an interval needs two), got {r}",
                    scenario::MAX_REPLICATIONS
                )));
            }
            opt.replications = r;
            opt.max_replications = opt.max_replications.max(r);
        }
        if let Some(length) = length {
            if sc.runs_to_completion() {
                return Err(PyValueError::new_err(
                    "length sets the run length of a queueing network, and this scenario is a rank program, which runs to completion once per replication: leave length out (replications gives more samples)",
                ));
            }
            if length == 0 {
                return Err(PyValueError::new_err("length must be at least 1"));
            }
            opt.length = length;
        }
        if let Some(p) = precision {
            if !(p > 0.0 && p < 1.0) {
                return Err(PyValueError::new_err(format!(
                    "precision must lie in (0, 1), got {p}"
                )));
            }
            opt.precision = Some(p);
        }
        opt.threads = threads;
        let done = AtomicU64::new(0);
        let count = |step: replicate::Step| {
            if let replicate::Step::Replication { .. } = step {
                done.fetch_add(1, Ordering::Relaxed);
            }
        };
        let stop = opt.stop.clone();
        let total = u64::from(opt.replications);
        let ex = interruptible(py, &stop, &done, total, progress.as_ref(), || {
            replicate::run(sc, &opt, &count)
        })?
        .map_err(|e| PyRuntimeError::new_err(format!("running {}: {e}", sc.path.display())))?;
        let report = RunReport::new(sc, &opt, &ex).keyed_from(master);
        json(&serde_json::json!({
            "report": report,
            "metrics": ex.metrics,
            "values": ex.replications,
        }))
    }

    /// Every analytic prediction, bound and refusal, as `parsim analyze --json` gives them.
    fn analyze(&self) -> PyResult<String> {
        json(&parsim::study::analyze_scenario(&self.checked))
    }

    /// Validates the scenario as `parsim validate --json` does (`quick`: `--quick`). It reports
    /// no progress (the library's validation tells none), but Ctrl-C stops it.
    #[pyo3(signature = (quick=true, replications=None, length=None, seed=None, threads=0))]
    fn validate(
        &self,
        py: Python<'_>,
        quick: bool,
        replications: Option<u32>,
        length: Option<u64>,
        seed: Option<u64>,
        threads: usize,
    ) -> PyResult<String> {
        let sc = &self.checked;
        if length.is_some() && sc.runs_to_completion() {
            return Err(PyValueError::new_err(
                "length sets the run length of a queueing network, and this scenario is a rank program, which runs to completion once per replication: leave length out (replications gives more samples)",
            ));
        }
        let seed = if self.set.is_empty() {
            seed
        } else {
            Some(keyed_seed(
                seed.unwrap_or(Options::from_scenario(sc).seed),
                &self.set,
            ))
        };
        let options = ValidateOptions {
            effort: if quick { Effort::Quick } else { Effort::Full },
            threads,
            seed,
            replications,
            length,
            stop: StopFlag::default(),
        };
        let done = AtomicU64::new(0);
        let stop = options.stop.clone();
        let found = interruptible(py, &stop, &done, 0, None, || {
            parsim::validate::validate(sc, &options)
        })?
        .map_err(|e| PyRuntimeError::new_err(format!("validating {}: {e}", sc.path.display())))?;
        json(&found.rows)
    }
}

/// Runs the sweep of `scenario` over `vary` (each a key and its values written as TOML), as
/// `parsim sweep --json` does; returns `{"report": <its report>, "warnings": [what the command
/// line prints on standard error]}` as JSON.
#[pyfunction]
#[pyo3(signature = (scenario, vary, zip=false, seed=None, threads=0, analytic_only=false, progress=None))]
fn sweep(
    py: Python<'_>,
    scenario: &Scenario,
    vary: Vec<(String, Vec<String>)>,
    zip: bool,
    seed: Option<u64>,
    threads: usize,
    analytic_only: bool,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let axes = vary
        .into_iter()
        .map(|(key, values)| {
            let key = parsim::scenario::assign::check_key(&key)
                .map_err(|e| PyValueError::new_err(format!("vary: {e}")))?;
            let values = values
                .iter()
                .map(|v| {
                    Value::parse(v).map_err(|e| PyValueError::new_err(format!("vary {key}: {e}")))
                })
                .collect::<PyResult<Vec<_>>>()?;
            if values.is_empty() {
                return Err(PyValueError::new_err(format!("vary {key}: no values")));
            }
            Ok(Axis { key, values })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let layout = if zip { Layout::Zip } else { Layout::Grid };
    let sweep = Sweep::with_text(
        &scenario.path,
        scenario.text.clone(),
        scenario.set.clone(),
        axes,
        layout,
        seed,
    )
    .map_err(PyValueError::new_err)?;
    let points = sweep.points();
    let checked = check_points(&sweep, &points, None).map_err(|e| invalid_points(py, &sweep, e))?;
    let all: Vec<_> = points.iter().collect();
    let pool =
        replicate::thread_pool(threads).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let done = AtomicU64::new(0);
    let count = |step: replicate::Step| {
        if let replicate::Step::Replication { .. } = step {
            done.fetch_add(1, Ordering::Relaxed);
        }
    };
    let stop = StopFlag::default();
    let total = if analytic_only {
        0
    } else {
        checked.replications
    };
    let results = interruptible(py, &stop, &done, total, progress.as_ref(), || {
        run_points(
            &sweep,
            &all,
            &Execution {
                analytic_only,
                pool: &pool,
                progress: &count,
                stop: &stop,
            },
        )
    })?
    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let report = sweep.report(&checked, results);
    // what `parsim sweep` prints on standard error: points short of their precision target,
    // points with wide intervals (without the command line's flag to accept them)
    let warnings = report.warnings(true);
    json(&serde_json::json!({ "report": report, "warnings": warnings }))
}

/// The Python exception for a sweep whose points have problems: one entry of `.problems` per
/// bad point shown (the file, no line, the point and its problems).
fn invalid_points(py: Python<'_>, sweep: &Sweep, e: SweepError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let problems: Vec<(String, Option<usize>, String, String)> = match &e {
        SweepError::Invalid { shown, .. } => shown
            .iter()
            .map(|point| {
                let (name, problems) = point.split_once(": ").unwrap_or((point, ""));
                (
                    sweep.path.display().to_string(),
                    None,
                    name.to_owned(),
                    problems.to_owned(),
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    match err.value(py).setattr("problems", problems) {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// The version of parsim the package was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The native module.
#[pymodule]
fn _parsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scenario>()?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SWEEP_COLUMNS", parsim::sweep::output::COLUMNS.to_vec())?;
    Ok(())
}
