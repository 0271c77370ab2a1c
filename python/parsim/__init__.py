"""parsim from Python: simulate queueing networks and parallel programs, and put every analytic
prediction beside the simulation, from a notebook.

    import parsim
    s = parsim.Scenario.from_file("scenarios/mm1.toml", set={"run.replications": 4})
    r = s.run(replications=10, seed=1, threads=2)
    r.metrics        # metric, mean, half_width_95, rel, reps
    a = s.analyze()  # metric, method, exact, value, reason; a.attrs["refusals"]
    v = s.validate() # metric, method, analytic, simulated, half_width_99, relative_error, verdict
    df = parsim.sweep(s, vary={"station.arrivals.interarrival.rate": [0.5, 0.7, 0.9]})

Scenarios are checked exactly as the command line checks them (the same messages); a scenario
with problems raises :class:`ScenarioError`, whose ``problems`` lists every one as (file, line,
path, message). The same seed gives the same numbers as ``parsim run --seed`` (and ``--set``).

Tables are pandas DataFrames when pandas is installed, else lists of dicts (with the same
``attrs``). Simulations release the GIL; Ctrl-C (or the notebook's interrupt) stops them before
their next replication and raises ``KeyboardInterrupt``; a run that lasts more than a second shows
a progress bar (tqdm's, in a notebook, when tqdm is installed).
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from . import _parsim
from ._parsim import ScenarioError

__all__ = [
    "Scenario",
    "RunResult",
    "ScenarioError",
    "ParsimWarning",
    "sweep",
    "to_toml",
    "__version__",
]

__version__ = _parsim.version()


class ParsimWarning(UserWarning):
    """What the command line prints as ``parsim: warning:`` (a scenario's warnings, a precision
    target not met)."""


class Records(list):
    """A table as a list of dicts (one per row), with ``attrs`` as a DataFrame has: what a table
    is when pandas is not installed."""

    def __init__(self, rows: Iterable[dict] = (), attrs: Optional[dict] = None):
        super().__init__(rows)
        self.attrs = dict(attrs or {})


def _table(rows: list, columns: Sequence[str], attrs: Optional[dict] = None):
    """A DataFrame of ``rows`` (dicts) with ``columns`` first, or :class:`Records` without pandas."""
    ordered = []
    for row in rows:
        first = {c: row.get(c) for c in columns}
        first.update({k: v for k, v in row.items() if k not in first})
        ordered.append(first)
    try:
        import pandas
    except ImportError:
        return Records(ordered, attrs)
    frame = pandas.DataFrame(ordered, columns=_all_columns(ordered, columns))
    frame.attrs.update(attrs or {})
    return frame


def _all_columns(rows: list, columns: Sequence[str]) -> list:
    names = list(columns)
    for row in rows:
        for k in row:
            if k not in names:
                names.append(k)
    return names


def _number(v):
    """A number from the JSON the native module gives (null for a missing or undefined value)."""
    return math.nan if v is None else v


def to_toml(value: Any) -> str:
    """``value`` written as a TOML value, as ``--set KEY=VALUE`` reads it: numbers, booleans,
    strings, lists and dicts (inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        parts = [f"{_toml_key(str(k))} = {to_toml(v)}" for k, v in value.items()]
        return "{ " + ", ".join(parts) + " }" if parts else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_toml(v) for v in value) + "]"
    # numpy scalars and the like
    if hasattr(value, "item"):
        return to_toml(value.item())
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) as a TOML value")


def _toml_key(key: str) -> str:
    bare = key and all(c.isalnum() and c.isascii() or c in "-_" for c in key)
    return key if bare else json.dumps(key)


def _assignments(set: Optional[Mapping[str, Any]]) -> list:
    return [(str(k), to_toml(v)) for k, v in (set or {}).items()]


class _Progress:
    """The progress the native module reports (replications done, of how many), shown as a bar
    once the work has lasted a second: tqdm's (a widget in a notebook) when tqdm is installed,
    else a line on standard error."""

    def __init__(self, what: str):
        self.what = what
        self.start = time.monotonic()
        self.bar = None
        self.text = False

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None and not self.text:
            if time.monotonic() - self.start < 1.0:
                return
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=total or None, desc=self.what, unit="rep")
            except ImportError:
                self.text = True
        if self.bar is not None:
            if total and self.bar.total != total:
                self.bar.total = total
            self.bar.n = done
            self.bar.refresh()
        else:
            shown = f"{done}/{total}" if total else f"{done}"
            print(f"\r{self.what}: {shown} replications", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.text:
            print(file=sys.stderr, flush=True)


def _progress_for(progress, what: str):
    """The callable the native module is given, and what to close after: ``True`` (a bar for
    long runs), ``False`` (nothing), or the caller's own ``callable(done, total)``."""
    if progress is True:
        bar = _Progress(what)
        return bar, bar
    if progress is False or progress is None:
        return None, None
    if callable(progress):
        return progress, None
    raise TypeError("progress must be True, False or a callable(done, total)")


def _with_progress(progress, what: str, work: Callable):
    callback, bar = _progress_for(progress, what)
    try:
        return work(callback)
    finally:
        if bar is not None:
            bar.close()


class Scenario:
    """A checked scenario: a queueing network, a rank program or a GOAL schedule, with the
    overrides (``set``) it was loaded with."""

    def __init__(self, native: "_parsim.Scenario"):
        self._native = native
        for w in native.warnings:
            warnings.warn(w, ParsimWarning, stacklevel=3)

    @classmethod
    def from_file(cls, path, set: Optional[Mapping[str, Any]] = None) -> "Scenario":
        """Reads and checks a scenario file (``"-"``: standard input), with the fields ``set``
        names overridden (keys as ``--set`` takes them, e.g. ``"class.jobs.population"``;
        values as Python numbers, strings, lists or dicts)."""
        return cls(_parsim.Scenario.from_file(str(path), _assignments(set)))

    @classmethod
    def from_toml(
        cls, text: str, set: Optional[Mapping[str, Any]] = None, name: str = "<string>"
    ) -> "Scenario":
        """Checks scenario ``text`` (named ``name`` in messages; files it names are relative to
        the working directory unless ``name`` is a path), with the same checks and messages as
        a file."""
        return cls(_parsim.Scenario.from_text(text, name, _assignments(set)))

    def with_set(self, set: Mapping[str, Any]) -> "Scenario":
        """The same scenario with more fields overridden (those given again are replaced)."""
        merged = dict(kv.split("=", 1) for kv in self._native.set)
        merged.update({str(k): to_toml(v) for k, v in set.items()})
        return Scenario(
            _parsim.Scenario.from_text(self._native.text, self._native.path, list(merged.items()))
        )

    @property
    def name(self) -> str:
        """The scenario's title."""
        return self._native.name

    @property
    def description(self) -> str:
        """Its description."""
        return self._native.description

    @property
    def path(self) -> str:
        """The file it was read from (or the name it was given)."""
        return self._native.path

    @property
    def text(self) -> str:
        """Its text, before the overrides."""
        return self._native.text

    @property
    def kind(self) -> str:
        """``"network"``, ``"program"`` or ``"schedule"``."""
        return self._native.kind

    @property
    def metric_names(self) -> list:
        """Every metric a run reports (``parsim metrics --names``)."""
        return list(self._native.metric_names)

    @property
    def scenario_hash(self) -> str:
        """The hash of its text and of the files it read."""
        return self._native.scenario_hash

    def __repr__(self) -> str:
        return f"<parsim.Scenario {self.name!r} ({self.kind}) from {self.path}>"

    def run(
        self,
        replications: Optional[int] = None,
        seed: Optional[int] = None,
        threads: int = 0,
        length: Optional[int] = None,
        precision: Optional[float] = None,
        progress: Union[bool, Callable[[int, int], Any]] = True,
    ) -> "RunResult":
        """Simulates the scenario (``parsim run``): ``replications``, ``seed``, ``length`` and
        ``precision`` override the scenario's; ``threads=0`` uses every core (results do not
        depend on it)."""
        raw = _with_progress(
            progress,
            self.name,
            lambda cb: self._native.run(replications, seed, threads, length, precision, cb),
        )
        result = RunResult(json.loads(raw))
        p = result.precision
        if p is not None and not p.get("met", True):
            warnings.warn(
                f"{self.path}: precision target {p.get('target')} on "
                f"{', '.join(p.get('metrics', []))} NOT met within {result.report['replications']} "
                "replications (raise max_replications or the run length)",
                ParsimWarning,
                stacklevel=2,
            )
        return result

    def analyze(self):
        """Every analytic prediction that applies (``parsim analyze``): one row per prediction,
        term and bound, then one per method that does not apply, with its ``reason``. Columns
        metric, method, exact, value, reason, then kind (exact, approximation, term, bounds,
        not applicable), lower and upper (for bounds), recommended (the prediction ``analyze``
        recommends for its metric) and measured_comparisons, measured_median, measured_worst (the
        validation suite's |relative error| of the approximation on such a metric).
        ``attrs``: ``refusals`` (method, reason), ``demands`` and ``bottlenecks``."""
        a = json.loads(self._native.analyze())
        rows = []
        for p in a.get("predictions", []):
            kind = "exact" if p["exact"] else "approximation"
            rows.append(_prediction(p, kind))
        for t in a.get("terms", []):
            rows.append(_prediction(t, "term"))
        for b in a.get("bounds", []):
            rows.append(
                {
                    "metric": b["metric"],
                    "method": b["method"],
                    "exact": True,
                    "value": math.nan,
                    "reason": None,
                    "kind": "bounds",
                    "lower": _number(b["lower"]),
                    "upper": _number(b["upper"]),
                }
            )
        refusals = [{"method": r["method"], "reason": r["reason"]} for r in a.get("refusals", [])]
        for r in refusals:
            rows.append(
                {
                    "metric": None,
                    "method": r["method"],
                    "exact": False,
                    "value": math.nan,
                    "reason": r["reason"],
                    "kind": "not applicable",
                    "lower": math.nan,
                    "upper": math.nan,
                }
            )
        attrs = {
            "refusals": refusals,
            "demands": a.get("demands", []),
            "bottlenecks": a.get("bottlenecks", []),
        }
        columns = [
            "metric",
            "method",
            "exact",
            "value",
            "reason",
            "kind",
            "lower",
            "upper",
            "recommended",
            "measured_comparisons",
            "measured_median",
            "measured_worst",
        ]
        return _table(rows, columns, attrs)

    def validate(
        self,
        quick: bool = True,
        replications: Optional[int] = None,
        length: Optional[int] = None,
        seed: Optional[int] = None,
        threads: int = 0,
    ):
        """Simulates and judges every prediction (``parsim validate``; ``quick=False`` runs the
        declared lengths and precision targets): one row per comparison, with the columns
        metric, method, analytic, simulated, half_width_99, relative_error, verdict, then the
        rest of ``parsim validate --json``'s fields; a method that does not apply is a row of
        verdict ``not_applicable`` with its reason in ``method``. No progress bar (the validation
        tells no progress); Ctrl-C stops it."""
        raw = self._native.validate(quick, replications, length, seed, threads)
        rows = [
            {k: (_number(v) if k in _NUMERIC else v) for k, v in row.items()}
            for row in json.loads(raw)
        ]
        columns = [
            "metric",
            "method",
            "analytic",
            "simulated",
            "half_width_99",
            "relative_error",
            "verdict",
        ]
        return _table(rows, columns)


_NUMERIC = {
    "analytic",
    "lower_bound",
    "upper_bound",
    "simulated",
    "half_width_99",
    "relative_error",
    "relative_error_half_width_99",
    "half_width_95",
}


def _prediction(p: dict, kind: str) -> dict:
    measured = p.get("measured") or {}
    return {
        "metric": p["metric"],
        "method": p["method"],
        "exact": bool(p["exact"]),
        "value": _number(p["value"]),
        "reason": None,
        "kind": kind,
        "lower": math.nan,
        "upper": math.nan,
        "recommended": bool(p.get("recommended", False)),
        "measured_comparisons": measured.get("comparisons", 0),
        "measured_median": _number(measured.get("median", math.nan)),
        "measured_worst": _number(measured.get("worst", math.nan)),
    }


class RunResult:
    """What a run measured: ``metrics`` (a table), ``replications`` (every replication's
    values), and the report ``parsim run --json`` prints (``report``)."""

    def __init__(self, raw: dict):
        self.report = raw["report"]
        self._names = raw["metrics"]
        self._values = raw["values"]

    @property
    def metrics(self):
        """One row per metric: metric, mean, half_width_95 (of its 95% interval), rel (the
        half-width relative to the mean) and reps (replications)."""
        rows = []
        for m in self.report["metrics"]:
            mean = _number(m["mean"])
            half = _number(m["half_width_95"])
            rel = abs(half / mean) if mean not in (0, 0.0) and not math.isnan(mean) else math.nan
            rows.append(
                {
                    "metric": m["metric"],
                    "mean": mean,
                    "half_width_95": half,
                    "rel": rel,
                    "reps": m["replications"],
                }
            )
        return _table(rows, ["metric", "mean", "half_width_95", "rel", "reps"])

    @property
    def replications(self):
        """Every replication's value of every metric, tidy: replication, metric, value (the
        reported mean is the mean of each metric's values)."""
        rows = [
            {"replication": i, "metric": name, "value": _number(v)}
            for i, values in enumerate(self._values)
            for name, v in zip(self._names, values)
        ]
        return _table(rows, ["replication", "metric", "value"])

    def mean(self, metric: str) -> float:
        """The mean of ``metric``."""
        return self._metric(metric)[0]

    def interval(self, metric: str) -> tuple:
        """The 95% interval of ``metric``'s mean as (low, high)."""
        mean, half = self._metric(metric)
        return (mean - half, mean + half)

    def _metric(self, metric: str) -> tuple:
        for m in self.report["metrics"]:
            if m["metric"] == metric:
                return (_number(m["mean"]), _number(m["half_width_95"]))
        raise KeyError(f"{metric}: the run reports no such metric (see Scenario.metric_names)")

    @property
    def seed(self) -> int:
        """The seed the run was keyed from."""
        return self.report["seed"]

    @property
    def run_id(self) -> str:
        """The run's id (the scenario, the seed and the settings)."""
        return self.report["run_id"]

    @property
    def precision(self) -> Optional[dict]:
        """The precision rule's outcome, if the run had a target."""
        return self.report.get("precision")

    @property
    def events(self) -> int:
        """Events simulated."""
        return self.report["events"]

    def __repr__(self) -> str:
        return (
            f"<parsim.RunResult {self.report['scenario']!r}: {self.report['replications']} "
            f"replications, seed {self.seed}>"
        )


def sweep(
    scenario: Scenario,
    vary: Mapping[str, Sequence[Any]],
    zip: bool = False,
    seed: Optional[int] = None,
    threads: int = 0,
    analytic_only: bool = False,
    progress: Union[bool, Callable[[int, int], Any]] = True,
):
    """Runs ``scenario`` at every point of ``vary`` (``parsim sweep``): a grid of the keys'
    values, or with ``zip=True`` their i-th values together. Tidy: one row per point, metric
    and analytic method, with a column per varied key (its value), then metric, method, exact,
    analytic, lower_bound, upper_bound, simulated, half_width_95, replications, relative_error,
    verdict, point and unstable (why a point was not run). Each point's numbers equal
    ``Scenario.run`` of the same values (``with_set``) under the same seed. Points that miss
    their precision target (``run.precision``) or whose 95% interval on a predicted metric is 10%
    of the mean or more are named in a :class:`ParsimWarning`, as ``parsim sweep`` names them."""
    if not isinstance(scenario, Scenario):
        raise TypeError("sweep takes a parsim.Scenario")
    if not vary:
        raise ValueError("a sweep needs at least one key in vary")
    axes = []
    for key, values in vary.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise TypeError(f"vary[{key!r}] must be a list of values")
        axes.append((str(key), [to_toml(v) for v in values]))
    raw = _with_progress(
        progress,
        scenario.name,
        lambda cb: _parsim.sweep(
            scenario._native, axes, zip, seed, threads, analytic_only, cb
        ),
    )
    answer = json.loads(raw)
    report = answer["report"]
    for w in answer["warnings"]:
        warnings.warn(w, ParsimWarning, stacklevel=2)
    keys = report["keys"]
    originals = [values for _, values in vary.items()]
    rows = []
    for point in report["points"]:
        # each key's value as the caller gave it (grid order: the last key varies fastest)
        given = _point_values(point["index"], originals, zip)
        base = dict(zip_(keys, given))
        base_rows = point["rows"] or [None]
        for r in base_rows:
            row = dict(base)
            if r is None:
                row.update({"metric": None, "verdict": "unstable" if point.get("unstable") else None})
            else:
                row.update({k: (_number(v) if k in _NUMERIC else v) for k, v in r.items()})
            row["point"] = point["index"]
            row["unstable"] = point.get("unstable")
            rows.append(row)
    # the columns of `parsim sweep`'s CSV, then the point and why it was not run
    columns = list(keys) + list(_parsim.SWEEP_COLUMNS) + ["point", "unstable"]
    return _table(rows, columns, {"scenario": report["scenario"], "keys": keys})


zip_ = zip


def _point_values(index: int, values: list, zipped: bool) -> list:
    """The values of point ``index``: the i-th of each list (zipped) or the grid's (the last
    key fastest)."""
    if zipped:
        return [v[index] for v in values]
    chosen = []
    for v in reversed(values):
        chosen.append(v[index % len(v)])
        index //= len(v)
    return list(reversed(chosen))
