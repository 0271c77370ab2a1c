//! Helpers shared by the test modules.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use parsim::replicate::{self, Experiment, Options};
use parsim::scenario::{self, Scenario, Warmup};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `parsim` binary with `args` from the repository root.
pub fn parsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

/// Runs parsim and returns (exit code, stdout, stderr).
pub fn call(args: &[&str]) -> (Option<i32>, String, String) {
    let out = parsim(args);
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A fresh directory for a test's shards.
pub fn shard_dir(test: &str, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}-{test}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Writes `text` to a fresh temporary scenario file and returns its path.
pub fn temp_scenario(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parsim-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Parses scenario text.
pub fn scenario(text: &str) -> Scenario {
    scenario::parse(text, Path::new("inline.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The scenario `file` of the repository (a path from its root), loaded and checked.
pub fn load(file: &str) -> Scenario {
    scenario::load(&root().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

/// Simulates `sc` with `replications` x `length` observations, MSER-5 warm-up, and `seed`.
pub fn simulate(sc: &Scenario, replications: u32, length: u64, seed: u64) -> Experiment {
    let mut opt = Options::from_scenario(sc);
    opt.replications = replications;
    opt.length = length;
    opt.seed = seed;
    opt.warmup = Warmup::Mser5;
    opt.precision = None;
    replicate::run(sc, &opt, &|_| {}).expect("runs")
}

/// An open single-station network: Poisson arrivals at `rate` into `station` (a TOML body of a
/// `[[station]]` named "q" without the name line), then exit.
pub fn open_single(rate: f64, station: &str) -> String {
    format!(
        r#"
[[class]]
name = "jobs"

[[station]]
name = "arrivals"
kind = "source"
class = "jobs"
interarrival = {{ dist = "exp", rate = {rate} }}

[[station]]
name = "q"
{station}

[[route]]
class = "jobs"
from = "arrivals"
to = "q"

[[route]]
class = "jobs"
from = "q"
to = "exit"
"#
    )
}

/// Runs the scripts `parsim slurm` wrote into `dir` as Slurm would: each of the `tasks` array
/// tasks (which must succeed), then the merge, from the repository root; the merge's exit code.
pub fn run_slurm_scripts(dir: &Path, tasks: usize) -> Option<i32> {
    let bash = |script: &str, task: Option<usize>| {
        let mut c = Command::new("bash");
        c.arg(dir.join(script)).current_dir(root());
        if let Some(k) = task {
            c.env("SLURM_ARRAY_TASK_ID", k.to_string());
        }
        c.output().expect("bash runs")
    };
    for k in 0..tasks {
        let out = bash("shards.sbatch", Some(k));
        assert!(
            out.status.success(),
            "task {k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    bash("merge.sbatch", None).status.code()
}

/// `parsim merge DIR`, which must refuse the directory (exit 2); returns its message.
pub fn merge_refusal(dir: &Path) -> String {
    let (code, _, err) = call(&["merge", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    err
}

/// Removes shard `k` of `n` from `dir`, as a lost shard would be.
pub fn lose_shard(dir: &Path, k: usize, n: usize) {
    std::fs::remove_file(dir.join(format!("shard-{k:05}-of-{n:05}.json"))).unwrap();
}

/// Copies shard `k` of `n` in `dir` under a second name, `shard-...-copy.json`, so that it
/// appears twice.
pub fn duplicate_shard(dir: &Path, k: usize, n: usize) {
    let name = format!("shard-{k:05}-of-{n:05}");
    std::fs::copy(
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}-copy.json")),
    )
    .unwrap();
}

/// The simulated `program.makespan` of `sc`: its mean and 99% half-width over `replications`
/// replications from `seed`, on one thread.
pub fn simulated_makespan(sc: &Scenario, replications: u32, seed: u64) -> (f64, f64) {
    let mut opt = Options::from_scenario(sc);
    opt.replications = replications;
    opt.seed = seed;
    opt.threads = 1;
    let ex = replicate::run(sc, &opt, &|_| {}).expect("runs");
    let ci = ex.interval(ex.index_of("program.makespan").expect("a makespan"), 0.99);
    (ci.mean, ci.half_width)
}

/// True for a method of the program's own evaluations (contention-free mean-value, or the
/// stochastic one's exact maxima, critical path or sampled critical path), not a model's
/// formulas.
pub fn from_program_evaluation(method: &str) -> bool {
    use parsim::predict::program::stochastic::{CLARK_METHOD, EXACT_METHOD};
    method.starts_with("contention-free mean-value")
        || method.starts_with(EXACT_METHOD)
        || method.starts_with(CLARK_METHOD)
        || method.starts_with(parsim::predict::program::sampled::METHOD)
}

/// A fresh directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parsim-hostile-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs parsim in `dir` with `args`: (exit code, stdout, stderr).
pub fn call_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs parsim in `dir` with a time bound: a hang fails the test instead of stalling it.
pub fn call_bounded(dir: &Path, args: &[&str], seconds: u64) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_parsim"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed().as_secs() > seconds {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("parsim {args:?} still running after {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The times between arrivals of an MMPP(2) (Poisson at `rates[i]` in phase `i`, leaving phase
/// `i` at `switching[i]`), drawn with a fixed splitmix64 stream.
pub fn mmpp2_trace(n: usize, rates: [f64; 2], switching: [f64; 2], seed: u64) -> Vec<f64> {
    let mut state = seed;
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut phase, mut since, mut out) = (0, 0.0, Vec::with_capacity(n));
    while out.len() < n {
        let total = rates[phase] + switching[phase];
        since += -(1.0 - uniform()).ln() / total;
        if uniform() < rates[phase] / total {
            out.push(since);
            since = 0.0;
        } else {
            phase = 1 - phase;
        }
    }
    out
}

/// The prediction of `metric` whose method starts with `start` (panics, listing them all,
/// when there is none).
pub fn prediction<'a>(
    a: &'a parsim::predict::Analysis,
    metric: &str,
    start: &str,
) -> &'a parsim::predict::Prediction {
    a.predictions
        .iter()
        .find(|p| p.metric == metric && p.method.starts_with(start))
        .unwrap_or_else(|| panic!("no {start:?} for {metric}: {:?}", a.predictions))
}

/// `analyze`'s makespan of `sc` by the method whose name starts with `start`, asserted to be
/// an approximation whose label contains `label`, and the simulated makespan over
/// `replications` (seed 1, one thread).
pub fn labelled_makespan(
    sc: &parsim::scenario::Scenario,
    start: &str,
    label: &str,
    replications: u32,
) -> (f64, f64) {
    let a = parsim::study::analyze_scenario(sc);
    let p = prediction(&a, "program.makespan", start);
    assert!(!p.exact && p.method.contains(label), "{}", p.method);
    let sim = simulated_means(sc, replications, 1, &["program.makespan"])[0];
    (p.value, sim)
}

/// The text of 72 ranks on a dragonfly of 9 groups of 4 routers with 2 hosts each and 2 global
/// links per router, routed by `routing`, running `body` (a TOML array of operations) `times`
/// times.
pub fn dragonfly_text(routing: &str, times: u32, body: &str) -> String {
    format!(
        r#"name = "dragonfly"
[program]
ranks = 72
[[program.op]]
kind = "repeat"
times = {times}
body = {body}
[topology]
kind = "dragonfly"
hosts_per_router = 2
routers_per_group = 4
global_links_per_router = 2
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
routing = "{routing}"
"#
    )
}

/// The simulated means of `metrics` over `replications` on `threads` threads, seed 1.
pub fn simulated_means(
    sc: &parsim::scenario::Scenario,
    replications: u32,
    threads: usize,
    metrics: &[&str],
) -> Vec<f64> {
    let mut opt = parsim::replicate::Options::from_scenario(sc);
    opt.replications = replications;
    opt.threads = threads;
    opt.seed = 1;
    let ex = parsim::replicate::run(sc, &opt, &|_| {}).expect("runs");
    metrics
        .iter()
        .map(|m| {
            let i = ex.index_of(m).expect("the run has the metric");
            ex.interval(i, 0.95).mean
        })
        .collect()
}
