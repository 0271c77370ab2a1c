//! Rank programs at scale (`cargo bench --bench scale`; figures in `benches/RESULTS.md`).
//!
//! Each case is a scenario of `benches/scale/`, run once by the release binary exactly as a
//! user would (`parsim run --threads 1 FILE --json`, its two replications), under
//! `/usr/bin/time -v` for the user CPU time and the peak resident memory, which is what these
//! cases are about: a run of that size takes seconds to minutes, too long for criterion's ten
//! samples, and the wall clock of this shared machine says little (other builds share its two
//! cores). Printed per case: events, user CPU seconds, M events per CPU-second, peak RSS, and
//! the targets of issues 20 and 43.
//!
//! Select cases by a substring of their file name: `cargo bench --bench scale -- 128x128`.
//! Without `/usr/bin/time` the cases run without the CPU and memory figures.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The cases: scenario file, ranks, target user CPU seconds and peak memory (MB), if any.
const CASES: [(&str, u32, Option<f64>, Option<f64>); 6] = [
    ("allreduce_64x64.toml", 4096, None, None),
    ("allreduce_128x128.toml", 16_384, Some(3.0), None),
    ("allreduce_256x256.toml", 65_536, Some(20.0), Some(1000.0)),
    (
        "allreduce_128x128x64.toml",
        1_048_576,
        Some(600.0),
        Some(8000.0),
    ),
    // issue 43: 2^21 ranks in 150 s of CPU and 2 GB
    (
        "allreduce_128x128x128.toml",
        2_097_152,
        Some(150.0),
        Some(2000.0),
    ),
    // issue 43: 2^23 ranks in 10 minutes of CPU and 8 GB
    (
        "allreduce_256x256x128.toml",
        8_388_608,
        Some(600.0),
        Some(8000.0),
    ),
];

/// A field of `/usr/bin/time -v`'s report, as a number.
fn time_field(report: &str, name: &str) -> Option<f64> {
    report
        .lines()
        .find_map(|l| l.trim().strip_prefix(name))
        .and_then(|v| v.trim_start_matches(':').trim().parse().ok())
}

/// The `events` count of `parsim run --json`'s output.
fn events(json: &str) -> Option<u64> {
    json.lines()
        .find_map(|l| l.trim().strip_prefix("\"events\":"))
        .and_then(|v| v.trim().trim_end_matches(',').parse().ok())
}

fn main() {
    // cargo passes `--bench` and the filter, if any
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let bin = env!("CARGO_BIN_EXE_parsim");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scale");
    let timed = Path::new("/usr/bin/time").exists();
    println!("rank programs at scale: parsim run --threads 1 FILE (2 replications)");
    for (file, ranks, cpu_target, mem_target) in CASES {
        if !filters.is_empty() && !filters.iter().any(|f| file.contains(f.as_str())) {
            continue;
        }
        let path = dir.join(file);
        let mut cmd = if timed {
            let mut c = Command::new("/usr/bin/time");
            c.arg("-v").arg(bin);
            c
        } else {
            Command::new(bin)
        };
        cmd.args(["run", "--threads", "1", "--json"]).arg(&path);
        let started = Instant::now();
        let out = cmd.output().expect("the parsim binary runs");
        let wall = started.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{file} failed: {stderr}");
        let events = events(&stdout).expect("the JSON output counts its events");
        let user = time_field(&stderr, "User time (seconds)");
        let rss_mb = time_field(&stderr, "Maximum resident set size (kbytes)").map(|k| k / 1000.0);
        let rate = user.map(|u| events as f64 / u / 1e6);
        let verdict = |got: Option<f64>, target: Option<f64>| match (got, target) {
            (Some(g), Some(t)) if g <= t => format!(" (target {t}: met)"),
            (Some(_), Some(t)) => format!(" (target {t}: NOT met)"),
            _ => String::new(),
        };
        println!(
            "{file:28} {ranks:>9} ranks  {events:>11} events  user {}s{}  {} M events/CPU-s  peak {} MB{}  (wall {wall:.1} s)",
            user.map_or("?".to_owned(), |u| format!("{u:.2}")),
            verdict(user, cpu_target),
            rate.map_or("?".to_owned(), |r| format!("{r:.2}")),
            rss_mb.map_or("?".to_owned(), |m| format!("{m:.0}")),
            verdict(rss_mb, mem_target),
        );
    }
}
