//! `parsim run --timeline` (issue 21, item 3): the trace follows the Trace Event Format, each
//! rank's spans tile its run and add up to the run's own per-rank figures, the same seed gives
//! the same bytes on any number of threads, and what cannot be drawn is refused with exit 2.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::util::{call, shard_dir, temp_scenario};

/// Runs parsim with `args`, expecting success; its stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = call(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    out
}

/// The trace at `path`, parsed.
fn trace(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).expect("the timeline is JSON")
}

/// Checks the Trace Event Format's shape: the object form, each event with the fields its
/// phase needs; returns the problems found.
fn format_problems(t: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let events = t["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");
    if !matches!(t["displayTimeUnit"].as_str(), Some("ms" | "ns")) {
        wrong.push(format!("displayTimeUnit {:?}", t["displayTimeUnit"]));
    }
    for e in events {
        let ph = e["ph"].as_str().unwrap_or("");
        let has_ids = e["pid"].is_u64() && e["tid"].is_u64();
        let named = e["name"].is_string();
        let fine = match ph {
            "M" => {
                has_ids
                    && matches!(
                        e["name"].as_str(),
                        Some(
                            "process_name"
                                | "thread_name"
                                | "process_sort_index"
                                | "thread_sort_index"
                        )
                    )
                    && e["args"].is_object()
            }
            "X" => {
                has_ids
                    && named
                    && e["ts"].as_f64().is_some_and(|v| v >= 0.0)
                    && e["dur"].as_f64().is_some_and(|v| v >= 0.0)
                    && e["cat"].is_string()
            }
            "C" => {
                named
                    && e["pid"].is_u64()
                    && e["ts"].as_f64().is_some_and(|v| v >= 0.0)
                    && e["args"]
                        .as_object()
                        .is_some_and(|a| !a.is_empty() && a.values().all(Value::is_u64))
            }
            _ => false,
        };
        if !fine {
            wrong.push(format!("not a well-formed event: {e}"));
        }
    }
    wrong
}

/// Per rank (tid): its `rank_time` spans (ts, end, name), in the order written.
fn rank_spans(t: &Value) -> BTreeMap<u64, Vec<(f64, f64, String)>> {
    let mut out: BTreeMap<u64, Vec<(f64, f64, String)>> = BTreeMap::new();
    for e in t["traceEvents"].as_array().unwrap() {
        if e["ph"] == "X" && e["cat"] == "rank_time" {
            let ts = e["ts"].as_f64().unwrap();
            out.entry(e["tid"].as_u64().unwrap()).or_default().push((
                ts,
                ts + e["dur"].as_f64().unwrap(),
                e["name"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

/// Replication 0's value of every metric in a `--per-replication` file.
fn replication_zero(path: &Path) -> BTreeMap<String, f64> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records()
        .map(|row| row.unwrap())
        .filter(|row| &row[1] == "0")
        .map(|row| (row[2].to_owned(), row[3].parse().unwrap()))
        .collect()
}

/// Checks that each rank's spans tile `0..finish` (in microseconds) with no gap and no
/// overlap, their sum its finish, and that each category adds up to the run's figure for the
/// rank where `figures` has one (`rank.<r>.<category>`, `rank.<r>.finish`, time units).
/// Returns the latest end.
fn check_tiling(
    spans: &BTreeMap<u64, Vec<(f64, f64, String)>>,
    figures: &BTreeMap<String, f64>,
    ranks: u64,
) -> f64 {
    let makespan_us = figures["program.makespan"] * 1e6;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * makespan_us;
    assert_eq!(spans.len() as u64, ranks, "a track per rank");
    let mut latest: f64 = 0.0;
    for (&r, own) in spans {
        assert!(close(own[0].0, 0.0), "rank {r} starts at {}", own[0].0);
        let mut sum = 0.0;
        let mut by_category: BTreeMap<&str, f64> = BTreeMap::new();
        for pair in own.windows(2) {
            assert!(
                close(pair[0].1, pair[1].0),
                "rank {r}: a gap or an overlap between {:?} and {:?}",
                pair[0],
                pair[1]
            );
        }
        for (start, end, name) in own {
            assert!(end > start, "rank {r}: an empty span at {start}");
            sum += end - start;
            *by_category.entry(name).or_default() += end - start;
        }
        let end = own.last().unwrap().1;
        assert!(
            close(sum, end),
            "rank {r}: spans sum to {sum}, end at {end}"
        );
        if let Some(finish) = figures.get(&format!("rank.{r}.finish")) {
            assert!(
                close(end, finish * 1e6),
                "rank {r} ends {end}, finishes {finish}"
            );
        }
        for c in ["compute", "communication", "waiting", "io"] {
            if let Some(v) = figures.get(&format!("rank.{r}.{c}")) {
                let got = by_category.get(c).copied().unwrap_or(0.0);
                assert!(
                    close(got, v * 1e6),
                    "rank {r}: {c} spans sum to {got} us, the run reports {v}"
                );
            }
        }
        latest = latest.max(end);
    }
    assert!(
        close(latest, makespan_us),
        "latest end {latest} us, makespan {makespan_us} us"
    );
    latest
}

#[test]
fn the_trace_of_the_ring_follows_the_format_and_tiles_every_rank() {
    let dir = shard_dir("timeline", "ring");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("ring.json");
    let values = dir.join("values.csv");
    let out = ok(&[
        "run",
        "scenarios/program_ring_torus.toml",
        "--json",
        "--timeline",
        json.to_str().unwrap(),
        "--per-replication",
        values.to_str().unwrap(),
    ]);
    let t = trace(&json);
    let wrong = format_problems(&t);
    assert!(
        wrong.is_empty(),
        "{}",
        wrong[..wrong.len().min(10)].join("\n")
    );
    let events = t["traceEvents"].as_array().unwrap();
    // ranks labelled, the phase and the links there
    for r in 0..16 {
        assert!(
            events.iter().any(|e| e["name"] == "thread_name"
                && e["tid"] == r
                && e["args"]["name"] == format!("rank {r}")),
            "rank {r} has no name"
        );
    }
    let phases: Vec<&Value> = events.iter().filter(|e| e["cat"] == "phase").collect();
    assert_eq!(phases.len(), 16, "one exchange phase per rank");
    assert!(phases.iter().all(|p| p["name"] == "exchange"));
    let counters: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    let links: std::collections::BTreeSet<&str> = counters
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // 12 messages of one hop along x and 4 of two hops (x then y) each exchange: 20 links
    assert_eq!(links.len(), 20, "{links:?}");
    for link in &links {
        let own: Vec<&&Value> = counters.iter().filter(|c| c["name"] == *link).collect();
        assert!(
            own.iter()
                .all(|c| c["args"]["messages"].as_u64().unwrap() <= 16)
        );
        assert_eq!(
            own.last().unwrap()["args"]["messages"],
            0,
            "{link} ends empty"
        );
    }
    // every rank's spans tile its run and match replication 0's own figures
    let figures = replication_zero(&values);
    assert!(figures.contains_key("rank.15.compute"), "per-rank figures");
    let latest = check_tiling(&rank_spans(&t), &figures, 16);
    assert_eq!(t["otherData"]["replication"], 0);
    assert!((t["otherData"]["makespan"].as_f64().unwrap() * 1e6 - latest).abs() < 1e-3);
    let reports: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        reports.as_array().unwrap().len(),
        1,
        "the run still reports"
    );
}

#[test]
fn a_deterministic_program_ends_at_the_makespan_the_run_reports() {
    let dir = shard_dir("timeline", "tree");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("tree.json");
    let out = ok(&[
        "run",
        "scenarios/program_tree_sum.toml",
        "--json",
        "--timeline",
        json.to_str().unwrap(),
    ]);
    let reports: Value = serde_json::from_str(&out).unwrap();
    let makespan = reports[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "program.makespan")
        .expect("the makespan")["mean"]
        .as_f64()
        .unwrap();
    let t = trace(&json);
    assert!(format_problems(&t).is_empty());
    let figures = BTreeMap::from([("program.makespan".to_owned(), makespan)]);
    let latest = check_tiling(&rank_spans(&t), &figures, 64);
    assert!(
        (latest - 10.5).abs() < 1e-9,
        "{latest} us: lg 64 (1 + 0.5 + 0.25) us"
    );
}

/// Every kind of rank time, two ranks per single-core node (queueing for the processor),
/// disks with queues, nested phases, collectives, fair-shared links with store and forward.
const MIXED: &str = r#"
[run]
replications = 2
[program]
ranks = 8
ranks_per_node = 2
[[disk]]
name = "d"
count = 2
startup = 1e-4
bandwidth = 1e7
[[program.op]]
kind = "phase"
name = "outer"
body = [
 { kind = "repeat", times = 3, var = "i", body = [
   { kind = "compute", time = { dist = "exp", mean = 1e-4 } },
   { kind = "phase", name = "inner", body = [
     { kind = "io", disk = "d", unit = "rank", bytes = 2000 },
     { kind = "allreduce", bytes = 4000, algorithm = "ring" },
   ] },
   { kind = "send", to = "rank + 1", bytes = 3000, when = "rank % 2 == 0" },
   { kind = "recv", from = "rank - 1", when = "rank % 2 == 1" },
   { kind = "barrier", algorithm = "ideal" },
 ] },
]
[topology]
kind = "mesh"
dims = [2, 2]
bandwidth = 1e8
latency = 1e-6
startup = 1e-6
sharing = "fair"
switching = "store_and_forward"
"#;

#[test]
fn every_kind_of_rank_time_tiles_and_adds_up() {
    let dir = shard_dir("timeline", "mixed");
    std::fs::create_dir_all(&dir).unwrap();
    let sc = temp_scenario("timeline_mixed", MIXED);
    let json = dir.join("mixed.json");
    let values = dir.join("values.csv");
    ok(&[
        "run",
        sc.to_str().unwrap(),
        "--timeline",
        json.to_str().unwrap(),
        "--per-replication",
        values.to_str().unwrap(),
    ]);
    let t = trace(&json);
    let wrong = format_problems(&t);
    assert!(
        wrong.is_empty(),
        "{}",
        wrong[..wrong.len().min(10)].join("\n")
    );
    let spans = rank_spans(&t);
    let names: std::collections::BTreeSet<&str> = spans
        .values()
        .flatten()
        .map(|(_, _, n)| n.as_str())
        .collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["communication", "compute", "io", "waiting"]
    );
    let latest = check_tiling(&spans, &replication_zero(&values), 8);
    // times are written to 12 significant digits: boundaries agree to a part in 10^9
    let eps = 1e-9 * latest;
    // phases nest: each rank is once in outer, three times in inner, inside outer
    let events = t["traceEvents"].as_array().unwrap();
    for r in 0..8u64 {
        let of = |name: &str| -> Vec<(f64, f64)> {
            events
                .iter()
                .filter(|e| e["cat"] == "phase" && e["tid"] == r && e["name"] == name)
                .map(|e| {
                    let ts = e["ts"].as_f64().unwrap();
                    (ts, ts + e["dur"].as_f64().unwrap())
                })
                .collect()
        };
        let (outer, inner) = (of("outer"), of("inner"));
        assert_eq!((outer.len(), inner.len()), (1, 3), "rank {r}");
        assert!(
            inner
                .iter()
                .all(|i| i.0 >= outer[0].0 - eps && i.1 <= outer[0].1 + eps)
        );
        // no rank-time span crosses a phase's boundary
        for (s, e, _) in &spans[&r] {
            for (a, b) in outer.iter().chain(&inner) {
                let crosses = |x: f64| *s < x - eps && x + eps < *e;
                assert!(
                    !crosses(*a) && !crosses(*b),
                    "rank {r}: span {s}..{e} crosses a phase at {a}..{b}"
                );
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_on_one_thread_or_four() {
    let dir = shard_dir("timeline", "threads");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for threads in ["1", "4"] {
        let json = dir.join(format!("t{threads}.json"));
        let svg = dir.join(format!("t{threads}.svg"));
        ok(&[
            "run",
            "scenarios/program_ring_torus.toml",
            "--seed",
            "11",
            "--threads",
            threads,
            "--timeline",
            json.to_str().unwrap(),
            "--timeline-svg",
            svg.to_str().unwrap(),
        ]);
        files.push((std::fs::read(json).unwrap(), std::fs::read(svg).unwrap()));
    }
    assert!(
        files[0] == files[1],
        "the timelines differ between 1 and 4 threads"
    );
    // and another seed gives another run
    let other = dir.join("seed12.json");
    ok(&[
        "run",
        "scenarios/program_ring_torus.toml",
        "--seed",
        "12",
        "--timeline",
        other.to_str().unwrap(),
    ]);
    assert_ne!(std::fs::read(other).unwrap(), files[0].0);
}

#[test]
fn a_timeline_past_its_limit_is_refused_and_leaves_no_file() {
    let dir = shard_dir("timeline", "limit");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("big.json");
    let (code, out, err) = call(&[
        "run",
        "scenarios/program_ring_torus.toml",
        "--timeline",
        json.to_str().unwrap(),
        "--timeline-limit",
        "1000",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "nothing run: {out}");
    for word in [
        "more than 1000 events",
        "fewer ranks or iterations",
        "--timeline-limit",
    ] {
        assert!(err.contains(word), "{word:?} not in: {err}");
    }
    assert!(!json.exists());
    assert!(!dir.join("big.json.tmp").exists());
}

#[test]
fn a_queueing_network_has_no_timeline() {
    let dir = shard_dir("timeline", "network");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("mm1.json");
    let (code, out, err) = call(&[
        "run",
        "scenarios/mm1.toml",
        "--timeline",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("queueing network") && err.contains("[program]"),
        "{err}"
    );
    assert!(!json.exists());
}

#[test]
fn a_gantt_chart_of_too_many_ranks_is_refused_before_the_run() {
    let dir = shard_dir("timeline", "ranks");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("big.svg");
    let (code, _, err) = call(&[
        "run",
        "scenarios/program_tree_sum.toml",
        "--set",
        "program.ranks=300",
        "--timeline-svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("at most 256 ranks") && err.contains("300") && err.contains("Perfetto"),
        "{err}"
    );
    assert!(!svg.exists());
}
