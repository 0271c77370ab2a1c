//! `parsim fit-trace`: a synthetic MMPP(2) trace's parameters are recovered, time stamps and
//! CSV columns are read as the measurements they are, and bad measurements are refused with
//! the file, the line and what to do.

use std::path::{Path, PathBuf};

use crate::util::{call, mmpp2_trace, scratch};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn lines(values: &[f64]) -> String {
    let text: Vec<String> = values.iter().map(|v| format!("{v:.9e}")).collect();
    text.join("\n") + "\n"
}

/// The numbers of `key = [a, b]` in a TOML line.
fn pair(toml: &str, key: &str) -> [f64; 2] {
    let from = toml.find(&format!("{key} = [")).unwrap() + key.len() + 4;
    let to = from + toml[from..].find(']').unwrap();
    let v: Vec<f64> = toml[from..to]
        .split(',')
        .map(|x| x.trim().parse().unwrap())
        .collect();
    [v[0], v[1]]
}

/// The check: 10^6 arrivals of an MMPP(2) (rates 1.5 and 0.1, switching 0.05 both
/// ways), fitted from the command line; every parameter in the TOML written is within 3% of
/// the one that made the trace (about 1% is typical at this size).
#[test]
fn a_synthetic_mmpp2_trace_gives_back_its_parameters() {
    let dir = scratch("fit_trace_recovery");
    let trace = write(
        &dir,
        "mmpp.txt",
        &lines(&mmpp2_trace(1_000_000, [1.5, 0.1], [0.05, 0.05], 2026)),
    );
    let toml = dir.join("fitted.toml");
    let (code, out, err) = call(&[
        "fit-trace",
        trace.to_str().unwrap(),
        "--toml",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("MMPP(2)") && out.contains("MAP(2)") && out.contains("KS distance"),
        "{out}"
    );
    let fragment = std::fs::read_to_string(&toml).unwrap();
    assert!(fragment.contains("process = \"mmpp2\""), "{fragment}");
    let (rates, switching) = (pair(&fragment, "rates"), pair(&fragment, "switching"));
    for (got, want) in rates
        .iter()
        .zip([1.5, 0.1])
        .chain(switching.iter().zip([0.05, 0.05]))
    {
        assert!(
            (got / want - 1.0).abs() < 0.03,
            "rates {rates:?}, switching {switching:?}"
        );
    }
}

/// Time stamps are the running sums of the intervals: the same fit.
#[test]
fn time_stamps_give_the_fit_of_their_differences() {
    let dir = scratch("fit_trace_stamps");
    let intervals = mmpp2_trace(20_000, [2.0, 0.2], [0.1, 0.1], 7);
    let mut t = 0.0;
    let stamps: Vec<f64> = intervals
        .iter()
        .map(|x| {
            t += x;
            t
        })
        .collect();
    let csv = format!(
        "host,stamp\n{}",
        stamps
            .iter()
            .map(|s| format!("a,{s:.12e}\n"))
            .collect::<String>()
    );
    let by_stamps = write(&dir, "stamps.csv", &csv);
    let by_intervals = write(&dir, "intervals.txt", &lines(&intervals));
    let (code, from_stamps, err) = call(&[
        "fit-trace",
        by_stamps.to_str().unwrap(),
        "--timestamps",
        "--column",
        "stamp",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (_, from_intervals, _) = call(&["fit-trace", by_intervals.to_str().unwrap(), "--json"]);
    let mean = |json: &str| -> f64 {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["sample"]["mean"].as_f64().unwrap()
    };
    // one interval fewer (the first stamp starts the clock) and rounding of the stamps
    let (a, b) = (mean(&from_stamps), mean(&from_intervals));
    assert!((a / b - 1.0).abs() < 1e-3, "{a} against {b}");
}

/// Service times get a phase-type law written for `service`, and no MMPP(2).
#[test]
fn service_times_get_a_phase_type_law() {
    let dir = scratch("fit_trace_service");
    let times: Vec<f64> = (0..5000).map(|i| 0.5 + f64::from(i % 10) * 0.1).collect();
    let file = write(&dir, "service.txt", &lines(&times));
    let toml = dir.join("service.toml");
    let (code, out, err) = call(&[
        "fit-trace",
        file.to_str().unwrap(),
        "--as",
        "service",
        "--toml",
        toml.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!out.contains("MMPP(2)"), "{out}");
    let fragment = std::fs::read_to_string(&toml).unwrap();
    assert!(fragment.contains("service = { dist = \"ph\""), "{fragment}");
}

/// Every bad line is named, with the file, the line and what to do, exit 2.
#[test]
fn bad_measurements_are_refused_with_file_and_line() {
    let dir = scratch("fit_trace_bad");
    let cases: [(&str, &str, &[&str], &[&str]); 5] = [
        (
            "negative.txt",
            "1.0\n-2.0\n3.0\nx\n",
            &[],
            &[
                "negative.txt:2:",
                "negative.txt:4:",
                "not a finite number >= 0",
            ],
        ),
        (
            "header.csv",
            "t,host\n1.0,a\n",
            &[],
            &["header.csv:1:", "needs --column NAME"],
        ),
        (
            "column.csv",
            "t,host\n1.0,a\n",
            &["--column", "time"],
            &["column.csv:1:", "no column \"time\"", "\"t\", \"host\""],
        ),
        (
            "unsorted.txt",
            "1.0\n3.0\n2.0\n4.0\n",
            &["--timestamps"],
            &[
                "unsorted.txt:3:",
                "before the one above it",
                "sort the file by time",
            ],
        ),
        ("single.txt", "1.0\n", &[], &["single.txt", "at least 2"]),
    ];
    for (name, text, flags, wanted) in cases {
        let file = write(&dir, name, text);
        let mut args = vec!["fit-trace", file.to_str().unwrap()];
        args.extend_from_slice(flags);
        let (code, _, err) = call(&args);
        assert_eq!(code, Some(2), "{name}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{name}: {w:?} not in\n{err}");
        }
    }
    // the fragment may not replace the measurements
    let file = write(&dir, "keep.txt", "1.0\n2.0\n0.5\n");
    let (code, _, err) = call(&[
        "fit-trace",
        file.to_str().unwrap(),
        "--toml",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "1.0\n2.0\n0.5\n");
}

/// Successive times that mostly alternate between short and long have a negative lag-1
/// autocorrelation, which no MMPP reaches: the MAP(2) is fitted to it and recommended.
#[test]
fn a_negative_correlation_gets_the_map2() {
    let dir = scratch("fit_trace_negative");
    // exponential times (a Poisson trace) and uniforms made from another one
    let base = mmpp2_trace(40_000, [1.0, 1.0], [1.0, 1.0], 5);
    let flips = mmpp2_trace(40_000, [1.0, 1.0], [1.0, 1.0], 6);
    let mut long = false;
    let times: Vec<f64> = base
        .iter()
        .zip(&flips)
        .map(|(x, e)| {
            // the scale changes with probability 0.8 from one time to the next
            if 1.0 - (-e).exp() < 0.8 {
                long = !long;
            }
            if long { 1.4 * x } else { 0.6 * x }
        })
        .collect();
    let file = write(&dir, "alternating.txt", &lines(&times));
    let toml = dir.join("alternating.toml");
    let (code, out, err) = call(&[
        "fit-trace",
        file.to_str().unwrap(),
        "--toml",
        toml.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rho1 = v["sample"]["autocorrelations"][0].as_f64().unwrap();
    assert!(rho1 < -0.05, "lag 1: {rho1}");
    let map2 = v["fits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "MAP(2)")
        .expect("a MAP(2) is fitted");
    let fitted = map2["stats"]["autocorrelations"][0].as_f64().unwrap();
    assert!((fitted - rho1).abs() < 1e-6, "{fitted} against {rho1}");
    let fragment = std::fs::read_to_string(&toml).unwrap();
    assert!(fragment.contains("process = \"map\""), "{fragment}");
}
