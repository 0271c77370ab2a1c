"""The Python package against the command line: the same checks, the same numbers, tables of
the documented shape, Ctrl-C, the GIL released, and tables without pandas."""

import json
import math
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

import parsim

ROOT = pathlib.Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "scenarios" / "mm1.toml")


def cli(*args: str) -> subprocess.CompletedProcess:
    """The command line, built from the same repository (cargo builds it if it is not)."""
    return subprocess.run(
        ["cargo", "run", "--release", "--quiet", "--", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_a_run_gives_the_command_lines_numbers_bit_for_bit():
    s = parsim.Scenario.from_file(MM1, set={"run.length": 4000})
    r = s.run(replications=6, seed=11, threads=2, progress=False)
    out = cli(
        "run", MM1, "--set", "run.length=4000", "--replications", "6", "--seed", "11", "--json"
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)[0]
    assert report["run_id"] == r.run_id
    expected = {m["metric"]: (m["mean"], m["half_width_95"]) for m in report["metrics"]}
    got = r.metrics
    assert list(got.columns[:5]) == ["metric", "mean", "half_width_95", "rel", "reps"]
    assert len(got) == len(expected)
    for row in got.itertuples():
        assert (row.mean, row.half_width_95) == expected[row.metric]
        assert row.reps == 6
        assert row.rel == pytest.approx(abs(row.half_width_95 / row.mean))
    # the replications' values give the means
    reps = r.replications
    response = reps[reps.metric == "class.jobs.response"]["value"]
    assert len(response) == 6
    assert response.mean() == pytest.approx(r.mean("class.jobs.response"), rel=1e-12)
    # the same on one thread
    again = s.run(replications=6, seed=11, threads=1, progress=False)
    assert again.metrics.equals(got)


def test_from_toml_checks_as_the_command_line_does():
    text = '[run]\nlength = "long"\nreplications = 1\n'
    with pytest.raises(parsim.ScenarioError) as caught:
        parsim.Scenario.from_toml(text, name="bad.toml")
    problems = caught.value.problems
    assert ("bad.toml", 2, "run.length") in [p[:3] for p in problems]
    assert all(len(p) == 4 for p in problems)
    assert any(p[2] == "class" for p in problems), "every problem at once"
    # the message is the command line's
    out = subprocess.run(
        ["cargo", "run", "--release", "--quiet", "--", "run", "-"],
        cwd=ROOT,
        input=text,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    for _, line, path, message in problems:
        assert f"{line}: {path}: {message}" in out.stderr
    # a bad override is the override's problem
    with pytest.raises(parsim.ScenarioError) as caught:
        parsim.Scenario.from_file(MM1, set={"station.nowhere.servers": 2})
    assert "--set station.nowhere.servers=2" in caught.value.problems[0][2]


def test_overrides_take_python_values():
    s = parsim.Scenario.from_file(
        MM1,
        set={
            "station.server.service": {"dist": "exp", "mean": 0.5},
            "station.server.servers": 2,
            "run.warmup": 100,
        },
    )
    a = s.analyze()
    mmc = a[(a.metric == "class.jobs.response") & (a.method.str.startswith("M/M/c"))]
    # M/M/2, lambda 0.8, mu 2: Erlang C with a = 0.4, rho = 0.2
    rho, a_ = 0.2, 0.4
    p0 = 1 / (1 + a_ + a_**2 / 2 / (1 - rho))
    wait = (a_**2 / 2 / (1 - rho)) * p0 / (2 * 2 - 0.8)
    assert mmc["value"].iloc[0] == pytest.approx(wait + 0.5, rel=1e-9)
    assert parsim.to_toml({"a b": [1, 2.5, True, "x"]}) == '{ "a b" = [1, 2.5, true, "x"] }'


def test_analyze_gives_predictions_and_refusals():
    a = parsim.Scenario.from_file(MM1).analyze()
    assert list(a.columns[:5]) == ["metric", "method", "exact", "value", "reason"]
    mm1 = a[(a.metric == "class.jobs.response") & (a.method == "M/M/1")]
    assert mm1["exact"].iloc[0]
    assert mm1["value"].iloc[0] == pytest.approx(5.0, rel=1e-12)
    refusals = a.attrs["refusals"]
    closed = parsim.Scenario.from_file(ROOT / "scenarios" / "pipeline_mm1.toml").analyze()
    assert closed.attrs["refusals"], "some methods do not apply to a pipeline"
    refused = closed[closed.kind == "not applicable"]
    assert len(refused) == len(closed.attrs["refusals"])
    assert refused["reason"].map(bool).all() and refused["value"].isna().all()
    assert isinstance(refusals, list)


def test_analyze_carries_measured_errors_and_a_recommendation():
    s = parsim.Scenario.from_file(ROOT / "validation" / "prog_ring_torus_p64.toml")
    a = s.analyze()
    makespan = a[(a.metric == "program.makespan") & (a.kind == "approximation")]
    assert len(makespan) >= 2, "several approximations of the makespan"
    assert makespan["recommended"].sum() == 1
    best = makespan[makespan["recommended"]].iloc[0]
    measured = makespan[makespan["measured_comparisons"] > 0]
    assert best["measured_median"] == measured["measured_median"].min()
    # the numbers are the command line's
    out = cli("analyze", "--json", str(s.path))
    flagged = [p for p in json.loads(out.stdout)[0]["analysis"]["predictions"] if p["recommended"]]
    assert best["method"] in [p["method"] for p in flagged]


def test_validate_judges_every_prediction():
    s = parsim.Scenario.from_file(ROOT / "validation" / "mm1_rho50.toml")
    v = s.validate(threads=2)
    assert list(v.columns[:7]) == [
        "metric",
        "method",
        "analytic",
        "simulated",
        "half_width_99",
        "relative_error",
        "verdict",
    ]
    out = cli("validate", str(ROOT / "validation" / "mm1_rho50.toml"), "--quick", "--json")
    assert out.returncode == 0, out.stderr
    expected = json.loads(out.stdout)
    assert len(v) == len(expected)
    for row, e in zip(v.itertuples(), expected):
        assert (row.metric, row.method, row.verdict) == (e["metric"], e["method"], e["verdict"])
        assert row.simulated == e["simulated"]
    with pytest.raises(ValueError, match="rank program"):
        parsim.Scenario.from_file(ROOT / "scenarios" / "program_tree_sum.toml").validate(length=10)


def test_a_sweep_is_tidy_and_each_point_is_its_run():
    s = parsim.Scenario.from_file(MM1, set={"run.replications": 3, "run.length": 3000})
    key = "station.arrivals.interarrival.rate"
    df = parsim.sweep(s, vary={key: [0.5, 0.7, 1.2]}, seed=5, threads=2, progress=False)
    assert list(df.columns[:3]) == [key, "metric", "method"]
    assert sorted(df[key].unique()) == [0.5, 0.7, 1.2]
    unstable = df[df[key] == 1.2]
    assert len(unstable) == 1 and unstable["verdict"].iloc[0] == "unstable"
    assert "utilisation" in unstable["unstable"].iloc[0]
    point = df[(df[key] == 0.7) & (df.metric == "class.jobs.response") & (df.method == "M/M/1")]
    assert point["analytic"].iloc[0] == pytest.approx(1 / (1 - 0.7), rel=1e-12)
    alone = s.with_set({key: 0.7}).run(seed=5, threads=1, progress=False)
    assert point["simulated"].iloc[0] == alone.mean("class.jobs.response")
    # as the command line's sweep
    out = cli(
        "sweep", MM1, "--set", "run.replications=3", "--set", "run.length=3000",
        "--vary", f"{key}=0.5,0.7,1.2", "--seed", "5", "--json",
    )
    assert out.returncode == 0, out.stderr
    cli_rows = [r for p in json.loads(out.stdout)["points"] for r in p["rows"]]
    simulated = df[df.metric.notna()]["simulated"].tolist()
    assert simulated == [r["simulated"] for r in cli_rows]
    zipped = parsim.sweep(
        s, vary={key: [0.5, 0.6], "station.server.servers": [1, 2]}, zip=True, analytic_only=True
    )
    assert sorted(zipped["point"].unique()) == [0, 1]
    assert zipped["replications"].eq(0).all()
    with pytest.warns(parsim.ParsimWarning, match="precision target 0.001"):
        parsim.sweep(
            s.with_set({"run.precision": 0.001, "run.max_replications": 4}),
            vary={key: [0.5]},
            progress=False,
        )
    with pytest.raises(parsim.ScenarioError) as caught:
        parsim.sweep(s, vary={"station.server.servers": [1, 0]}, analytic_only=True)
    assert caught.value.problems and "point 1" in caught.value.problems[0][2]


def test_ctrl_c_stops_a_run_and_the_next_one_runs():
    # Python's own handler, as in a terminal or a notebook (a shell's background job, as CI
    # may be, starts with SIGINT ignored, and Python then installs none)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        s = parsim.Scenario.from_file(MM1)
        main = threading.main_thread().ident
        threading.Timer(0.5, signal.pthread_kill, (main, signal.SIGINT)).start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            # a minute or two of work on two threads
            s.run(replications=2000, length=200_000, threads=2, progress=False)
        assert time.monotonic() - started < 10
    finally:
        signal.signal(signal.SIGINT, previous)
    r = s.run(replications=2, length=2000, progress=False)
    assert r.report["replications"] == 2


def test_a_run_releases_the_gil():
    s = parsim.Scenario.from_file(MM1)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    started = time.monotonic()
    s.run(replications=4, length=4_000_000, threads=1, progress=False)
    elapsed = time.monotonic() - started
    done.set()
    t.join()
    # the other thread ran throughout (a millisecond's sleep a tick; at least a tenth of them)
    assert elapsed > 0.2
    assert len(ticks) > elapsed * 1000 / 10


def test_progress_is_told_until_the_end():
    seen = []
    parsim.Scenario.from_file(MM1).run(
        replications=4, length=20_000, threads=1, progress=lambda done, total: seen.append((done, total))
    )
    assert seen[-1] == (4, 4)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_a_progress_callable_that_raises_stops_the_run():
    def fail(done, total):
        if done >= 1:
            raise RuntimeError("enough")

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="enough"):
        # a minute or two of work on one thread
        parsim.Scenario.from_file(MM1).run(
            replications=1000, length=400_000, threads=1, progress=fail
        )
    assert time.monotonic() - started < 10


def test_tables_without_pandas_are_lists_of_dicts(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    s = parsim.Scenario.from_file(MM1)
    a = s.analyze()
    assert isinstance(a, list) and isinstance(a[0], dict)
    assert list(a[0])[:5] == ["metric", "method", "exact", "value", "reason"]
    assert a.attrs["refusals"] == []
    r = s.run(replications=2, length=2000, progress=False)
    rows = r.metrics
    assert rows[0]["metric"] == "class.jobs.response" and rows[0]["reps"] == 2
    assert not math.isnan(rows[0]["mean"])


def test_a_program_runs_to_completion():
    s = parsim.Scenario.from_file(ROOT / "scenarios" / "program_tree_sum.toml")
    assert s.kind == "program"
    with pytest.raises(ValueError, match="rank program"):
        s.run(length=100, progress=False)
    r = s.run(replications=3, seed=2, progress=False)
    assert "program.makespan" in set(r.metrics["metric"])
