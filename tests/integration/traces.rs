//! A schedule converted from a real MPI run (issue 22, "from traces"): NPB CG class S on two
//! ranks, traced with liballprof and converted by LogGOPSim's Schedgen (`tests/data/traces/`),
//! run with the LogGP parameters fitted to this machine's ping-pong, against the per-host times
//! LogGOPSim printed for it. The guide's page is `docs/guide/reference/traces.md`.

use std::path::PathBuf;

use parsim::engine::schedule::DagExecution;
use parsim::models::profile::{fit, read_measurements};
use parsim::scenario::check::schedule::goal;
use parsim::schedule::dag::{OpKind, TICKS_PER_NS};
use parsim::schedule::{Endpoints, FS_PER_TICK, Machine, PerByte, ReadyOrder};

use crate::util::{call, root};

const SCHEDULE: &str = "tests/data/traces/cg_s_2_first_iteration.goal";

fn schedule() -> PathBuf {
    root().join(SCHEDULE)
}

/// The fitted endpoints (`L = 301 ns`, `o = 43 ns`, `g = 92 ns`, `S = 4095 B`, `O = 0`) with
/// `G` in picoseconds per byte.
fn endpoints(big_g_ps: u64) -> Endpoints {
    Endpoints {
        l: 301 * TICKS_PER_NS,
        o: 43 * TICKS_PER_NS,
        g: 92 * TICKS_PER_NS,
        big_g: PerByte::from_fs(big_g_ps * FS_PER_TICK),
        big_o: PerByte::default(),
        s: 4095,
    }
}

fn run(e: Endpoints, order: ReadyOrder) -> parsim::engine::schedule::DagRun {
    let dag = goal::read_file(&schedule()).unwrap();
    let m = Machine {
        endpoints: e,
        links: None,
        order,
    };
    DagExecution::new(&dag, &m).unwrap().run().unwrap()
}

/// `LogGOPSim -f cg.bin -L 301 -o 43 -g 92 -G 0 -O 0 -S 4095` (LogGOPSim takes whole ns, so
/// the fitted 0.245 ns per byte is 0 there): `Host 0: 3306349`, `Host 1: 3306005`, 2957 events.
#[test]
fn cg_class_s_gives_loggopsims_host_times_with_whole_nanosecond_parameters() {
    for order in [ReadyOrder::Program, ReadyOrder::LogGopSim] {
        let r = run(endpoints(0), order);
        let ns: Vec<u64> = r.finish.iter().map(|t| t / TICKS_PER_NS).collect();
        assert_eq!(ns, [3_306_349, 3_306_005], "{order:?}");
        assert!(r.finish.iter().all(|t| t % TICKS_PER_NS == 0));
        assert_eq!(r.makespan_ticks, 3_306_349 * TICKS_PER_NS);
        assert_eq!(r.events, 2957, "LogGOPSim counts 2957 events");
        assert_eq!(r.messages, 423);
    }
}

/// With the fitted `G = 245 ps` per byte: LogGOPSim run on the same schedule with every calc
/// times 1000 (its unit then the picosecond) and `-L 301000 -o 43000 -g 92000 -G 245 -O 0
/// -S 4095` prints `Host 0: 3488977480`, `Host 1: 3488629805`, in ps, which parsim's ticks are.
#[test]
fn cg_class_s_gives_loggopsims_host_times_with_the_fitted_gap_per_byte() {
    for order in [ReadyOrder::Program, ReadyOrder::LogGopSim] {
        let r = run(endpoints(245), order);
        assert_eq!(r.finish, [3_488_977_480, 3_488_629_805], "{order:?}");
        assert_eq!(r.events, 2957);
    }
}

/// The command the guide prints gives the same makespan.
#[test]
fn the_command_line_gives_the_same_makespan() {
    let (code, out, err) = call(&[
        "run",
        SCHEDULE,
        "--loggp",
        "L=3.01e-7,o=4.3e-8,g=9.2e-8,G=2.45e-10,O=0,S=4095",
        "--threads",
        "1",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let metric = |name: &str| {
        v[0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .unwrap()["mean"]
            .as_f64()
            .unwrap()
    };
    let makespan = metric("program.makespan");
    assert!((makespan - 3_488_977_480e-12).abs() < 1e-18, "{makespan}");
    assert_eq!(metric("messages.count"), 423.0);
}

/// What Schedgen wrote ("423 sends, 423 recvs, 1688 execs ... among 2 hosts"), and each rank's
/// compute is the sum of its calcs, whatever the endpoints.
#[test]
fn the_schedule_is_what_schedgen_wrote() {
    let dag = goal::read_file(&schedule()).unwrap();
    assert_eq!(dag.ranks(), 2);
    let count = |k: OpKind| {
        (0..dag.ranks())
            .flat_map(|r| dag.rank_ops(r))
            .filter(|&i| dag.op(i).kind == k)
            .count()
    };
    assert_eq!(count(OpKind::Send), 423);
    assert_eq!(count(OpKind::Recv), 423);
    assert_eq!(count(OpKind::Calc), 1688);
    let mut calcs = [0u64; 2];
    let mut rank = 0;
    let text = std::fs::read_to_string(schedule()).unwrap();
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("rank ") {
            rank = r.trim_end_matches(" {").parse().unwrap();
        } else if let Some((_, ns)) = line.split_once(": calc ") {
            calcs[rank] += ns.parse::<u64>().unwrap();
        }
    }
    for g in [0, 245] {
        let r = run(endpoints(g), ReadyOrder::Program);
        assert_eq!(r.compute, calcs.map(|ns| ns * TICKS_PER_NS));
    }
}

/// The parameters come from the committed ping-pong by the guide's formulas: `G = b` and
/// `L = a + G - 2 o` of `fit-comm`'s `app` fit (1 B to 16 KiB), `o` the fastest batch of
/// `MPI_Send` calls and `g` the fastest batch of a stream, rounded to whole ns (G to ps).
#[test]
fn the_parameters_follow_from_the_ping_pong() {
    let dir = root().join("tests/data/traces");
    let text = std::fs::read_to_string(dir.join("pingpong.csv")).unwrap();
    let profile = fit(&read_measurements(&text).unwrap()).unwrap();
    let app = profile.get("app", 2).unwrap();
    assert_eq!(app.points, 28);
    let mut o = f64::INFINITY;
    let mut g = f64::INFINITY;
    for n in 1..=3 {
        let raw = std::fs::read_to_string(dir.join(format!("pingpong_raw{n}.csv"))).unwrap();
        for line in raw.lines() {
            let f: Vec<&str> = line.split(',').collect();
            match f[0] {
                "send_call" => o = o.min(f[3].parse().unwrap()),
                "stream" => g = g.min(f[3].parse().unwrap()),
                _ => {}
            }
        }
    }
    let ns = |s: f64| (s * 1e9).round() as u64;
    assert_eq!(ns(o), 43, "{o}");
    assert_eq!(ns(g), 92, "{g}");
    assert_eq!((app.b * 1e12).round() as u64, 245, "{}", app.b);
    assert_eq!(ns(app.a + app.b - 2.0 * o), 301, "{} {}", app.a, app.b);
}
