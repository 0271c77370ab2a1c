//! `parsim fit-comm` and machine profiles: known coefficients recovered from simulated
//! measurements, and a profile used in place of a topology.

use parsim::models::profile::{MachineProfile, Measurement, fit};
use parsim::replicate::{self, Options};

use super::util::{parsim, scenario, temp_scenario};

/// Startup and time per byte of the simulated machine.
const A0: f64 = 5e-6;
const B0: f64 = 1e-9;
/// The root's noise before each operation: uniform on [0, 2 us], mean 1 us.
const NOISE_MEAN: f64 = 1e-6;

/// One "measurement": the mean makespan of two replications of `op` on `ranks` ranks of a
/// network with a link per pair (startup A0, bandwidth 1 / B0), after the root's noise.
fn measure(ranks: u32, op: &str, seed: u64) -> f64 {
    let text = format!(
        "[program]\nranks = {ranks}\n[[program.op]]\nkind = \"compute\"\nwhen = \"rank == 0\"\ntime = {{ dist = \"uniform\", min = 0, max = {} }}\n[[program.op]]\n{op}\n[topology]\nkind = \"full\"\nbandwidth = {}\nstartup = {A0}\n",
        2.0 * NOISE_MEAN,
        1.0 / B0
    );
    let sc = scenario(&text);
    let mut opt = Options::from_scenario(&sc);
    opt.replications = 2;
    opt.seed = seed;
    opt.threads = 1;
    let ex = replicate::run(&sc, &opt, &|_| {}).expect("runs");
    ex.interval(ex.index_of("program.makespan").unwrap(), 0.95)
        .mean
}

#[test]
fn fitting_simulated_measurements_recovers_the_machines_coefficients() {
    let mut measurements = Vec::new();
    for ranks in [2_u32, 8] {
        for bytes in [1024_u32, 4096, 16384, 65536, 262_144] {
            for seed in 0..4 {
                for (primitive, op) in [
                    (
                        "send",
                        format!(
                            "kind = \"send\"\nto = {}\nbytes = {bytes}\nwhen = \"rank == 0\"\n[[program.op]]\nkind = \"recv\"\nfrom = 0\nwhen = \"rank == {}\"",
                            ranks - 1,
                            ranks - 1
                        ),
                    ),
                    (
                        "bcast",
                        format!("kind = \"bcast\"\nalgorithm = \"binomial\"\nbytes = {bytes}"),
                    ),
                ] {
                    measurements.push(Measurement {
                        primitive: primitive.to_owned(),
                        ranks,
                        bytes: f64::from(bytes),
                        time: measure(ranks, &op, seed),
                    });
                }
            }
        }
    }
    let profile = fit(&measurements).expect("fits");
    assert_eq!(profile.fits.len(), 4);
    for f in &profile.fits {
        // a message costs A0 + B0 m; a binomial broadcast lg P of them; the root's noise adds
        // its mean to the intercept and nothing to the slope
        let rounds = if f.primitive == "bcast" {
            f64::from(f.ranks.trailing_zeros())
        } else {
            1.0
        };
        let (a, b) = (rounds * A0 + NOISE_MEAN, rounds * B0);
        assert_eq!(f.points, 20);
        assert!(f.a_se > 0.0 && f.b_se > 0.0, "{f:?}");
        assert!(
            (f.a - a).abs() <= 4.0 * f.a_se,
            "{} at {}: a = {} +- {}, true {a}",
            f.primitive,
            f.ranks,
            f.a,
            f.a_se
        );
        assert!(
            (f.b - b).abs() <= 4.0 * f.b_se && f.b_se < 1e-3 * b,
            "{} at {}: b = {} +- {}, true {b}",
            f.primitive,
            f.ranks,
            f.b,
            f.b_se
        );
    }

    // the profile in place of a topology: a message of m bytes costs a + b m of the send fit
    let dir = temp_scenario("fit_comm_dummy", "")
        .parent()
        .unwrap()
        .to_owned();
    std::fs::write(dir.join("machine.toml"), profile.to_toml()).unwrap();
    let text = "[program]\nranks = 8\n[[program.op]]\nkind = \"send\"\nto = 5\nbytes = 10000\nwhen = \"rank == 2\"\n[[program.op]]\nkind = \"recv\"\nfrom = 2\nwhen = \"rank == 5\"\n[machine]\nprofile = \"machine.toml\"\n";
    let path = temp_scenario("with_profile", text);
    let sc = parsim::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut opt = Options::from_scenario(&sc);
    opt.replications = 2;
    let ex = replicate::run(&sc, &opt, &|_| {}).expect("runs");
    let sim = ex
        .interval(ex.index_of("program.makespan").unwrap(), 0.95)
        .mean;
    let send = MachineProfile::load(&dir.join("machine.toml"))
        .unwrap()
        .get("send", 8)
        .cloned()
        .unwrap();
    let expected = send.a + send.b * 10000.0;
    assert!(
        (sim - expected).abs() <= 1e-9 * expected,
        "{sim} vs {expected}"
    );
}

#[test]
fn fit_comm_writes_a_profile_and_names_bad_lines() {
    let csv = temp_scenario(
        "measurements",
        "primitive,ranks,bytes,time\nsend,4,0,1.0\nsend,4,10,2.1\nsend,4,20,2.9\n",
    );
    let out_path = csv.with_extension("profile.toml");
    let out = parsim(&[
        "fit-comm",
        csv.to_str().unwrap(),
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let profile = MachineProfile::load(&out_path).unwrap();
    assert!((profile.get("send", 4).unwrap().b - 0.095).abs() < 1e-12);

    let bad = temp_scenario(
        "bad_measurements",
        "primitive,ranks,bytes,time\nsend,4,0,1\nsend,four,1,2\n",
    );
    let out = parsim(&["fit-comm", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3: ranks: expected a whole number >= 1, got \"four\""),
        "{err}"
    );
    let missing = temp_scenario(
        "missing_profile",
        "[program]\nranks = 2\n[[program.op]]\nkind = \"barrier\"\n[machine]\nprofile = \"nowhere.toml\"\n",
    );
    let out = parsim(&["run", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("machine.profile: cannot read"));
}
