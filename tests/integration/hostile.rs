//! Inputs a careless or malicious user gives (issue 23): values that would add a line to a Slurm
//! script, outputs that name an input, pipes and devices as inputs, counts that multiply work,
//! extreme numbers. Each is refused before anything runs, with what and where, or gives the
//! right numbers; none hangs, panics or exits 0 with a wrong result.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::util::{call, call_bounded, call_in, root, scratch};

/// Every file under `dir` whose name contains `PWNED` (what an injected command would create).
fn pwned(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("PWNED")
            {
                found.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    found
}

/// Text that would run `touch PWNED` if a shell read it unquoted, in every way a shell word
/// can be ended: quotes, substitutions, separators, redirections, globs, comments.
const METACHARACTERS: &str =
    "x y;touch PWNED1|touch PWNED2&$(touch PWNED3)`touch PWNED4`'\"\\*?[a]{b,c}<d>e!#~%^=:,+@";

#[test]
fn slurm_refuses_a_value_that_would_add_a_line_to_a_script() {
    let dir = scratch("slurm-lines");
    std::fs::copy(root().join("scenarios/mm1.toml"), dir.join("mm1.toml")).unwrap();
    let base = ["slurm", "--shards", "2"];
    let run = ["run", "mm1.toml", "--replications", "4"];
    for bad in ["\n", "\r", "\x0b", "\x1b[2J", "\u{85}"] {
        let hostile = format!("short{bad}touch PWNED{bad}#");
        for option in ["--partition", "--time", "--out", "--result"] {
            let mut args = base.to_vec();
            args.extend([option, hostile.as_str()]);
            args.extend(run);
            let (code, _, err) = call_in(&dir, &args);
            assert_eq!(code, Some(2), "{option} {hostile:?}: {err}");
            assert!(err.contains(option), "{option} {hostile:?}: {err}");
            assert!(err.contains("control character"), "{err}");
        }
        // in the command's own words (a --set value the scenario accepts: its title)
        let set = format!("name=x{bad}touch PWNED");
        let mut args = base.to_vec();
        args.extend(run);
        args.extend(["--set", set.as_str()]);
        let (code, _, err) = call_in(&dir, &args);
        assert_eq!(code, Some(2), "{set:?}: {err}");
        assert!(err.contains("control character"), "{err}");
    }
    assert!(!dir.join("parsim-shards").exists(), "nothing written");
    assert!(pwned(&dir).is_empty());
    // a time limit not in Slurm's format is refused, not written
    let mut args = base.to_vec();
    args.extend(["--time", "1;touch"]);
    args.extend(run);
    let (code, _, err) = call_in(&dir, &args);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--time") && err.contains("Slurm time limit"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_control_character_in_any_value_of_a_job_is_refused() {
    use parsim::slurm::Job;
    let job = Job {
        parsim: "/opt/parsim".into(),
        workdir: "/home/u".into(),
        command: vec!["run".into(), "mm1.toml".into()],
        shards: 2,
        out: "shards".into(),
        merge_args: vec!["--json".into()],
        result: "shards/merged.json".into(),
        partition: Some("short".into()),
        time: Some("00:10:00".into()),
        cpus_per_task: 1,
    };
    assert!(job.scripts().is_ok());
    for bad in ["\n", "\r", "\0", "\t", "\x7f", "\u{2028}x\u{9b}"] {
        let value = format!("a{bad}touch PWNED");
        let variants: Vec<Job> = vec![
            Job {
                parsim: value.clone().into(),
                ..job.clone()
            },
            Job {
                workdir: value.clone().into(),
                ..job.clone()
            },
            Job {
                command: vec!["run".into(), value.clone()],
                ..job.clone()
            },
            Job {
                out: value.clone().into(),
                ..job.clone()
            },
            Job {
                merge_args: vec![value.clone()],
                ..job.clone()
            },
            Job {
                result: value.clone().into(),
                ..job.clone()
            },
            Job {
                partition: Some(value.clone()),
                ..job.clone()
            },
            Job {
                time: Some(value.clone()),
                ..job.clone()
            },
        ];
        for (i, j) in variants.iter().enumerate() {
            assert!(j.scripts().is_err(), "field {i} with {bad:?} accepted");
        }
    }
}

/// `bash -n` on every script in `dir`.
fn bash_parses(dir: &Path) {
    for s in ["shards.sbatch", "merge.sbatch", "submit.sh"] {
        let out = Command::new("bash")
            .arg("-n")
            .arg(dir.join(s))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{s}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn slurm_scripts_with_shell_metacharacters_in_every_value_run_nothing_else() {
    // the working directory, the scenario's path, --out, --result, --partition and a --set
    // value are all full of shell syntax; the scripts must still parse, submit and run the
    // sharded run and its merge, and nothing else
    // (the job logs' directory, --out after the working directory, holds neither % nor \:
    // Slurm reads them as file name patterns, so such a directory is refused, below)
    let top = scratch("slurm-meta");
    let safe = METACHARACTERS.replace(['/', '%', '\\'], "_");
    let work = top.join(&safe);
    std::fs::create_dir_all(&work).unwrap();
    let scenario = format!("{}.toml", METACHARACTERS);
    std::fs::copy(root().join("scenarios/mm1.toml"), work.join(&scenario)).unwrap();
    let result = format!("r {METACHARACTERS}.txt");
    let refused = format!("o {METACHARACTERS}");
    let (code, _, err) = call_in(
        &work,
        &[
            "slurm", "--shards", "2", "--out", &refused, "run", &scenario,
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("Slurm reads as a pattern"), "{err}");
    let out = format!("o {safe}");
    let partition = "p;$(touch${IFS}PWNED5)'\"`touch${IFS}PWNED6`";
    let (code, _, err) = call_in(
        &work,
        &[
            "slurm",
            "--shards",
            "2",
            "--out",
            &out,
            "--result",
            &result,
            "--partition",
            partition,
            "--time",
            "1-00:30:00",
            "run",
            &scenario,
            "--replications",
            "4",
            "--length",
            "200",
            "--set",
            "run.seed=7",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let dir = work.join(&out);
    bash_parses(&dir);
    // the #SBATCH lines as sbatch reads them: one word each, in quotes
    let script = std::fs::read_to_string(dir.join("shards.sbatch")).unwrap();
    for line in script.lines().filter(|l| l.starts_with("#SBATCH")) {
        assert!(!line.contains("PWNED") || line.contains('\''), "{line}");
    }
    // submitted with a stand-in sbatch that records its arguments
    let bin = top.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = top.join("sbatch.log");
    std::fs::write(
        bin.join("sbatch"),
        format!(
            "#!/bin/bash\nprintf '%s\\n' \"$@\" >> '{}'\necho 42\n",
            log.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(bin.join("sbatch"))
        .status()
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let submit = Command::new("bash")
        .arg(dir.join("submit.sh"))
        .env("PATH", &path)
        .current_dir(&top)
        .output()
        .unwrap();
    assert!(
        submit.status.success(),
        "{}",
        String::from_utf8_lossy(&submit.stderr)
    );
    let submitted = std::fs::read_to_string(&log).unwrap();
    assert!(
        submitted.contains(&format!("{out}/shards.sbatch")),
        "{submitted}"
    );
    assert!(submitted.contains("--dependency=afterok:42"), "{submitted}");
    // the array's tasks and the merge, run by bash as Slurm would run them
    for k in 0..2 {
        let task = Command::new("bash")
            .arg(dir.join("shards.sbatch"))
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(
            task.status.success(),
            "task {k}: {}",
            String::from_utf8_lossy(&task.stderr)
        );
    }
    let merge = Command::new("bash")
        .arg(dir.join("merge.sbatch"))
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        merge.status.success(),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    let merged = std::fs::read_to_string(work.join(&result)).unwrap();
    let (_, single, _) = call_in(
        &work,
        &[
            "run",
            &scenario,
            "--replications",
            "4",
            "--length",
            "200",
            "--set",
            "run.seed=7",
        ],
    );
    assert_eq!(merged, single);
    assert!(pwned(&top).is_empty(), "{:?}", pwned(&top));
    assert!(pwned(&std::env::temp_dir()).is_empty());
    std::fs::remove_dir_all(top).unwrap();
}

#[test]
fn slurm_refuses_more_shards_than_work_and_a_sweep_that_would_fail() {
    let (code, _, err) = call(&[
        "slurm",
        "--shards",
        "1000000000",
        "--out",
        "/nonexistent/never",
        "run",
        "scenarios/mm1.toml",
        "--replications",
        "10",
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("more shards than the 10 replications"),
        "{err}"
    );
    let (code, _, err) = call(&[
        "slurm",
        "--shards",
        "2",
        "--out",
        "/nonexistent/never",
        "sweep",
        "scenarios/mm1.toml",
        "--vary",
        "station.nowhere.service.mean=1,2",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("would fail in every task"), "{err}");
    assert!(err.contains("nowhere"), "{err}");
}

#[test]
fn an_output_never_replaces_an_input_of_the_same_command() {
    let dir = scratch("output-input");
    let s = dir.join("s.toml");
    std::fs::copy(root().join("scenarios/mm1.toml"), &s).unwrap();
    let before = std::fs::read_to_string(&s).unwrap();
    let s_str = s.to_str().unwrap();
    // the same path, another spelling of it, and a hard link
    let other = format!("{}/./s.toml", dir.display());
    std::fs::hard_link(&s, dir.join("link.toml")).unwrap();
    let link = dir.join("link.toml");
    for out in [s_str, other.as_str(), link.to_str().unwrap()] {
        let (code, stdout, err) = call(&[
            "run",
            s_str,
            "--replications",
            "2",
            "--length",
            "100",
            "--per-replication",
            out,
        ]);
        assert_eq!(code, Some(2), "{out}: {err}");
        assert!(stdout.is_empty(), "refused before running");
        assert!(err.contains("also an input"), "{err}");
    }
    let (code, _, err) = call(&["validate", "--quick", s_str, "--report", s_str]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("also an input"), "{err}");
    // fit-comm --out over its own measurements
    let csv = dir.join("m.csv");
    std::fs::write(
        &csv,
        "primitive,ranks,bytes,time\nsend,2,0,1\nsend,2,10,2\nsend,2,20,3\n",
    )
    .unwrap();
    let (code, _, err) = call(&[
        "fit-comm",
        csv.to_str().unwrap(),
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("also an input"), "{err}");
    assert!(
        std::fs::read_to_string(&csv)
            .unwrap()
            .starts_with("primitive")
    );
    assert_eq!(std::fs::read_to_string(&s).unwrap(), before);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_picture_never_replaces_an_input() {
    // validate --plot DIR draws DIR/<case name>.svg: a case file of that name in DIR was drawn
    // over (plotters wrote the file itself); pictures are written as every output is
    let dir = scratch("picture-input");
    let case = dir.join("case.svg");
    let text = std::fs::read_to_string(root().join("scenarios/mm1.toml"))
        .unwrap()
        .replacen("name = \"M/M/1 at rho 0.8\"", "name = \"case\"", 1);
    std::fs::write(&case, &text).unwrap();
    let (code, _, err) = call(&[
        "validate",
        "--quick",
        case.to_str().unwrap(),
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("also an input"), "{err}");
    assert_eq!(std::fs::read_to_string(&case).unwrap(), text);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_failed_run_leaves_no_half_written_output_and_a_full_disk_is_named() {
    let dir = scratch("half-written");
    let out = dir.join("per-rep.csv");
    std::fs::write(&out, "earlier results\n").unwrap();
    // the second scenario fails at run time (a deadlock), after the first wrote its rows
    let deadlock = dir.join("deadlock.toml");
    std::fs::copy(
        root().join("tests/bad/program_deadlock_recv.toml"),
        &deadlock,
    )
    .unwrap();
    let (code, _, err) = call(&[
        "run",
        "scenarios/mm1.toml",
        deadlock.to_str().unwrap(),
        "--replications",
        "2",
        "--length",
        "100",
        "--per-replication",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier results\n");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "no temporary file left"
    );
    if Path::new("/dev/full").exists() {
        // a device is no file to write results to; a full standard output is named
        let (code, _, err) = call(&[
            "run",
            "scenarios/mm1.toml",
            "--replications",
            "2",
            "--length",
            "100",
            "--per-replication",
            "/dev/full",
        ]);
        assert_eq!(code, Some(2));
        assert!(
            err.contains("/dev/full") && err.contains("a character device"),
            "{err}"
        );
        let status = Command::new("sh")
            .args([
                "-c",
                &format!("{} schema > /dev/full", env!("CARGO_BIN_EXE_parsim")),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&status.stderr);
        assert_eq!(status.status.code(), Some(2), "{err}");
        assert!(
            err.contains("cannot write standard output: No space"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn pipes_and_devices_as_inputs_are_refused_at_once() {
    let dir = scratch("devices");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut inputs = vec!["/dev/zero".to_owned(), "/dev/urandom".to_owned()];
    if made.is_ok_and(|s| s.success()) {
        inputs.push(fifo.to_str().unwrap().to_owned());
    }
    for input in &inputs {
        for args in [
            vec!["run", input.as_str()],
            vec!["analyze", input.as_str()],
            vec!["fit-comm", input.as_str()],
        ] {
            let (code, _, err) = call_bounded(&dir, &args, 20);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
            assert!(err.contains(input.as_str()), "{err}");
        }
        // as a trace a scenario reads, and as a machine profile
        let trace = dir.join("trace.toml");
        std::fs::write(
            &trace,
            root()
                .join("scenarios/mm1.toml")
                .to_str()
                .map(|p| std::fs::read_to_string(p).unwrap())
                .unwrap()
                .replace(
                    "service = { dist = \"exp\", mean = 1.0 }",
                    &format!("service = {{ dist = \"empirical\", file = \"{input}\" }}"),
                ),
        )
        .unwrap();
        let (code, _, err) = call_bounded(&dir, &["run", trace.to_str().unwrap()], 20);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("not a regular file"), "{err}");
        assert!(err.contains("station[1].service.file"), "{err}");
    }
    // a file past the size limit is refused with the limit
    let big = dir.join("big.toml");
    std::fs::write(&big, vec![b'#'; 9 << 20]).unwrap();
    let (code, _, err) = call(&["run", big.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("beyond the limit of 8388608 bytes"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_trace_of_huge_samples_scales_to_its_mean() {
    // 1e308 + 1e308 overflows: the mean was infinite and every scaled sample 0. Scaled to mean
    // 1 the samples are all 1: an M/D/1 queue at rho 0.5, response time 1 + 0.5 = 1.5
    let dir = scratch("huge-trace");
    std::fs::write(dir.join("trace.txt"), "1e308 1e308\n").unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/mm1.toml"))
        .unwrap()
        .replace("rate = 0.8", "rate = 0.5")
        .replace(
            "service = { dist = \"exp\", mean = 1.0 }",
            "service = { dist = \"empirical\", file = \"trace.txt\", mean = 1.0 }",
        );
    assert!(text.contains("empirical") && text.contains("0.5"), "{text}");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let (code, out, err) = call(&[
        "run",
        dir.join("s.toml").to_str().unwrap(),
        "--json",
        "--length",
        "20000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let response = v[0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "class.jobs.response")
        .unwrap()["mean"]
        .as_f64()
        .unwrap();
    assert!((response - 1.5).abs() < 0.05, "{response}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn fit_comm_refuses_a_header_alone_and_numbers_beyond_floating_point() {
    let dir = scratch("fit-comm");
    let header = dir.join("header.csv");
    std::fs::write(&header, "primitive,ranks,bytes,time\n").unwrap();
    let out = dir.join("profile.toml");
    let (code, _, err) = call(&[
        "fit-comm",
        header.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no measurements"), "{err}");
    assert!(!out.exists(), "no empty profile written");
    // sizes from 0 to 1.7e308: Sxx overflowed, and the fit said b = 0, se(b) = 0, se(a) = nan
    let huge = dir.join("huge.csv");
    std::fs::write(
        &huge,
        "primitive,ranks,bytes,time\nsend,2,0,1\nsend,2,1e308,2\nsend,2,1.7e308,3.1\n",
    )
    .unwrap();
    let (code, stdout, err) = call(&[
        "fit-comm",
        huge.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let profile = std::fs::read_to_string(&out).unwrap();
    assert!(
        !profile.contains("nan") && !profile.contains("inf"),
        "{profile}"
    );
    let p: parsim::models::profile::MachineProfile = toml::from_str(&profile).unwrap();
    let f = &p.fits[0];
    assert!(
        f.b > 0.0 && f.b_se > 0.0 && f.a_se.is_finite(),
        "{f:?}\n{stdout}"
    );
    assert!((f.b * 1.7e308 + f.a - 3.1).abs() < 0.2, "{f:?}");
    // times whose slope no f64 holds are refused, naming the primitive
    std::fs::write(
        &huge,
        "primitive,ranks,bytes,time\nsend,2,0,0\nsend,2,1e-300,1e300\nsend,2,2e-300,1.7e308\n",
    )
    .unwrap();
    let (code, _, err) = call(&["fit-comm", huge.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("send at 2 ranks") && err.contains("beyond floating point"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn route_refuses_a_negative_size_before_printing_the_route() {
    let (code, out, err) = call(&[
        "route",
        "scenarios/program_ring_torus.toml",
        "--from",
        "0",
        "--to",
        "1",
        "--bytes=-5",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "printed before refusing: {out}");
    // clap's refusal, naming the flag and the value
    assert!(err.contains("'-5' for '--bytes"), "{err}");
}

#[test]
fn an_unknown_plot_metric_is_refused_before_the_sweep_runs() {
    let dir = scratch("plot-metric");
    let (code, out, err) = call(&[
        "sweep",
        "scenarios/mm1.toml",
        "--vary",
        "station.arrivals.interarrival.rate=0.1..0.8:0.1",
        "--set",
        "run.length=200000",
        "--plot",
        dir.to_str().unwrap(),
        "--plot-metric",
        "no.such.metric",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty(), "the sweep ran first: {out}");
    assert!(err.contains("--plot-metric no.such.metric"), "{err}");
    assert_eq!(err.matches("no.such.metric").count(), 1, "said once: {err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_plot_directory_that_cannot_be_made_is_refused_before_anything_runs() {
    let dir = scratch("plot-dir");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under_a_file = file.join("pictures");
    let under = under_a_file.to_str().unwrap();
    for args in [
        vec![
            "sweep",
            "scenarios/mm1.toml",
            "--vary",
            "run.seed=1,2,3",
            "--plot",
            under,
        ],
        vec!["validate", "--quick", "scenarios/mm1.toml", "--plot", under],
    ] {
        let (code, out, err) = call(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} ran first: {out}");
        assert!(
            err.contains(&format!("cannot make the directory {under} for --plot")),
            "{err}"
        );
        // the reason once (it was printed twice: in the message and as its source)
        assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn spmd_io_times_beyond_the_clock_are_refused_not_wrapped() {
    // SR_io = 1e13 (and 2^63 - 1) on a torus: the disk times passed the calendar's 2^84 ticks,
    // and the run reported ranks.io.mean 7.7e25 against a makespan of 1.2e13 and a speedup of
    // 18 (then 1.8e8) on 16 processors
    for sr_io in ["1e13", "9.223372036854776e18"] {
        let text = format!(
            "[run]\nreplications = 2\n\n[spmd]\np = 16\nd = 1\nw = 0.5\nS_par = 4.0\nS_ser = 0.1\n\
             S0_com = 0.05\nSR_com = 0.2\nS0_io = 0.01\nSR_io = {sr_io}\nn_io = 5\nr = 2\n\
             io = \"sio\"\nnetwork = \"torus\"\n"
        );
        let path = super::util::temp_scenario(&format!("spmd-sr-io-{sr_io}"), &text);
        let (code, out, err) = call(&["run", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "SR_io = {sr_io}: {out}{err}");
        // refused by the [spmd] check, at the field, before a program is built
        assert!(err.contains(":4: spmd.SR_io: makes an I/O burst"), "{err}");
        assert!(err.contains("beyond 1.4e11 (2^37)"), "{err}");
    }
}

#[test]
fn counts_known_only_while_running_stop_at_the_event_budget() {
    use parsim::engine::program::Execution;
    use parsim::program::ProgramFault;
    // the inner loop's count reads the outer counter: not bounded before the run
    let text = r#"
[program]
ranks = 2

[[program.op]]
kind = "repeat"
times = 1000
var = "i"
body = [{ kind = "repeat", times = "i * 1000", body = [{ kind = "compute", time = { dist = "det", value = 1.0 } }] }]

[topology]
kind = "bus"
bandwidth = 1.0
"#;
    let sc = parsim::scenario::parse(text, Path::new("budget.toml")).unwrap();
    let prog = sc.program().unwrap();
    let e = Execution::new(prog, 1, 0)
        .with_budget(1 << 20)
        .run()
        .unwrap_err();
    assert!(matches!(e, ProgramFault::Budget { .. }), "{e}");
    assert!(e.to_string().contains("beyond the budget"), "{e}");
    // and a size that reads a loop counter stops at the clock's bound, naming the operation
    let text = r#"
[program]
ranks = 2

[[program.op]]
kind = "repeat"
times = 70
var = "i"
body = [{ kind = "sendrecv", to = "(rank + 1) % P", from = "(rank + 1) % P", bytes = "2^i" }]

[[program.op]]
kind = "compute"
time = { dist = "det", value = 1e-6 }

[topology]
kind = "bus"
bandwidth = 1e9
"#;
    let sc = parsim::scenario::parse(text, Path::new("span.toml")).unwrap();
    let e = Execution::new(sc.program().unwrap(), 1, 0)
        .run()
        .unwrap_err();
    assert!(e.to_string().contains("the program's clock holds"), "{e}");
    assert!(e.to_string().contains("program.op[0].body[0]"), "{e}");
}

#[test]
fn a_program_of_the_size_limit_is_read_in_memory_proportional_to_it() {
    // 8 MiB of operations (about 80,000), the most a scenario may hold: read, checked and
    // refused or accepted within a bounded time; 9 MiB is refused at once
    let op = "[[program.op]]\nkind = \"compute\"\ntime = { dist = \"det\", value = 1.0 }\n\n";
    let mut text = String::from("[program]\nranks = 2\n\n");
    while text.len() + op.len() + 60 < (8 << 20) {
        text.push_str(op);
    }
    text.push_str("[topology]\nkind = \"bus\"\nbandwidth = 1.0\n");
    let path = super::util::temp_scenario("largest-program", &text);
    // the peak resident memory, where GNU time is there to tell it (CI's runners have it):
    // 0.55 GB for these 8 MiB (a 60 MB program took 3.1 GB before inputs had a limit)
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        let (code, _, err) = call(&["analyze", path.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        return;
    }
    let out = Command::new(time)
        .args(["-f", "peak %M"])
        .arg(env!("CARGO_BIN_EXE_parsim"))
        .arg("analyze")
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let kib: u64 = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak ")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"));
    assert!(kib < 1 << 20, "{kib} KiB for an 8 MiB scenario");
}

#[test]
fn a_delay_of_random_sizes_rounded_to_bytes_is_not_called_exact() {
    // found by the fuzz: sizes of mean 1e-100 bytes all round to 0 in the run (delay 0) while
    // the contention-free delay, labelled exact, was 6.25e-109; of mean 1 byte, exponential,
    // the rounding's mean is 0.96. Deterministic sizes stay exact.
    for (task, message, exact) in [
        ("1e-100", "{ dist = \"uniform\", mean = 1e-100 }", false),
        ("1.0", "{ dist = \"exp\", mean = 1.0 }", false),
        ("1.0", "{ dist = \"det\", value = 1000.0 }", true),
    ] {
        let text = format!(
            "[run]\nreplications = 2\n\n[pipeline]\nranks = 2\nitems = 8\ngroups = 1\n\
             task = {{ dist = \"det\", value = {task} }}\nmessage = {message}\n\
             bandwidth = 1.6e8\n"
        );
        let sc = parsim::scenario::parse(&text, Path::new("pipeline.toml")).unwrap();
        let analysis = parsim::study::analyze_scenario(&sc);
        let delays: Vec<_> = analysis
            .predictions
            .iter()
            .filter(|p| p.metric == "messages.delay" && p.method.starts_with("contention-free"))
            .collect();
        assert!(!delays.is_empty(), "{message}");
        for p in delays {
            assert_eq!(p.exact, exact, "{message}: {}", p.method);
            if !exact {
                assert!(p.method.contains("rounded to whole bytes"), "{}", p.method);
            }
        }
    }
}

#[test]
fn an_expected_maximum_too_costly_to_integrate_is_refused_at_once() {
    // found by the hour-long fuzz: 64 ranks, each a region of 10 r + 1 hyperexponential
    // iterations then a hyperexponential compute. The maximum of 64 different laws, each a
    // convolution integrated over the quantiles of a gamma (found by Newton steps), took over
    // two minutes of `analyze` (the cost model counted a quantile as one evaluation); now the
    // cost counts them and the maximum is refused, and the bounds are given instead.
    let text = r#"
[program]
ranks = 64
[[program.op]]
kind = "compute"
iterations = "rank * 10 + 1"
cost = { dist = "h2", mean = 0.0001, scv = 2.0 }
[[program.op]]
kind = "compute"
time = { dist = "h2", mean = 0.1, scv = 10.0 }
[topology]
kind = "bus"
bandwidth = 1e9
"#;
    let dir = scratch("costly-maximum");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let (code, out, err) = call_bounded(&dir, &["analyze", "--long", "s.toml"], 120);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("too costly"), "{out}");
}

#[test]
fn times_whose_squares_overflow_keep_finite_intervals_and_predictions() {
    // found by the hour-long fuzz: a pipeline whose messages take 1e303 time units ran to a
    // makespan of 6e303 with a half-width of NaN (the replications' squares overflowed), and
    // its Pollaczek-Khinchine T_comm was predicted infinite
    let text = r#"
[run]
replications = 2
[pipeline]
ranks = 2
items = 8
groups = 1
task = { dist = "det", value = 0.0 }
message = { dist = "erlang", k = 1, mean = 1000.0 }
bandwidth = 1e-300
"#;
    let dir = scratch("overflowing-squares");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let (code, out, err) = call_in(&dir, &["run", "--json", "s.toml"]);
    assert_eq!(code, Some(0), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let metrics = report[0]["metrics"].as_array().expect("metrics");
    for m in metrics {
        for field in ["mean", "half_width_95"] {
            assert!(m[field].as_f64().is_some_and(f64::is_finite), "{m}");
        }
    }
    let (code, out, err) = call_in(&dir, &["analyze", "--json", "s.toml"]);
    assert_eq!(code, Some(0), "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    for p in a[0]["analysis"]["predictions"]
        .as_array()
        .expect("predictions")
    {
        assert!(p["value"].as_f64().is_some_and(f64::is_finite), "{p}");
    }
    assert!(out.contains("not a finite number"), "{out}");
}

#[test]
fn class_percentiles_far_below_the_class_demand_are_not_rounded_to_zero() {
    // found by the hour-long fuzz (its third run): a delay station with gamma service of mean
    // 1e15 (SCV 3) makes a class's demand 1e15 while the responses completed in the run are
    // millions of times smaller; the class histogram's unit followed the demand, and p50 to p99
    // were all 0 beside a mean response of 2.2e6
    let text = r#"
[run]
replications = 2
length = 2000
[[class]]
name = "c0"
[[station]]
name = "src0"
kind = "source"
class = "c0"
interarrival = { dist = "exp", mean = 10.0 }
[[station]]
name = "s0"
kind = "fcfs"
service = { dist = "exp", mean = 0.05 }
[[station]]
name = "s2"
kind = "delay"
service = { dist = "gamma", mean = 1e15, scv = 3.0 }
[[route]]
class = "c0"
from = "src0"
to = "s0"
[[route]]
class = "c0"
from = "s0"
to = "s2"
[[route]]
class = "c0"
from = "s2"
branches = [{ to = "exit", p = 0.9 }, { to = "s0", p = 0.1 }]
"#;
    let dir = scratch("class-percentiles");
    std::fs::write(dir.join("s.toml"), text).unwrap();
    let (code, out, err) = call_in(&dir, &["run", "--json", "s.toml"]);
    assert_eq!(code, Some(0), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let metric = |name: &str| {
        report[0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .and_then(|m| m["mean"].as_f64())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let mean = metric("class.c0.response");
    let (p50, p99) = (metric("class.c0.p50"), metric("class.c0.p99"));
    assert!(p50 > 0.0 && p99 >= p50, "p50 {p50}, p99 {p99}, mean {mean}");
    assert!(
        p99 > mean,
        "a right-skewed response: p99 {p99} above the mean {mean}"
    );
}
