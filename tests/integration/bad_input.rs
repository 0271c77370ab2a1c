//! The corpus of malformed scenarios in `tests/bad/`: each file starts with the lines it must
//! produce (`# expect line N`, `# expect path FIELD`, `# expect message TEXT`); `parsim run` on
//! it must exit 2 with nothing on stdout and every expected fragment on stderr, and never panic.
//! Files whose problem is found before running (they expect a field path) must be refused the
//! same way by `analyze` and `validate`.

use std::path::PathBuf;

use super::util::{parsim, root};

/// One corpus file and what it must produce.
struct Case {
    /// Path relative to the repository root, as the user would type it.
    file: String,
    /// The line the first expected problem is reported at.
    line: Option<String>,
    /// The field path of that problem.
    path: Option<String>,
    /// A fragment of its message.
    message: String,
}

fn corpus() -> Vec<Case> {
    let dir: PathBuf = root().join("tests/bad");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let expect = |what: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("# expect {what} ")))
                    .map(str::to_owned)
            };
            let file = format!("tests/bad/{}", p.file_name().unwrap().to_string_lossy());
            Case {
                line: expect("line"),
                path: expect("path"),
                message: expect("message")
                    .unwrap_or_else(|| panic!("{file} has no `# expect message` line")),
                file,
            }
        })
        .collect()
}

/// Checks one command's output against `case`, returning what is wrong (empty if nothing).
fn problems(case: &Case, args: &[&str]) -> Vec<String> {
    let out = parsim(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut wrong = Vec::new();
    let mut expect = |ok: bool, what: String| {
        if !ok {
            wrong.push(format!("{}: {}: {what}\n{stderr}", case.file, args[0]));
        }
    };
    expect(!stderr.contains("panicked"), "panicked".into());
    expect(
        out.status.code() == Some(2),
        format!("exit {:?}, not 2", out.status.code()),
    );
    expect(out.stdout.is_empty(), "wrote to stdout".into());
    expect(
        stderr.contains(&case.message),
        format!("no `{}`", case.message),
    );
    if let Some(path) = &case.path {
        let at = match &case.line {
            Some(line) => format!("{}:{line}: {path}: ", case.file),
            None => format!(": {path}: "),
        };
        expect(stderr.contains(&at), format!("no `{at}`"));
    }
    wrong
}

#[test]
fn every_malformed_scenario_is_refused_with_its_field_and_no_panic() {
    let cases = corpus();
    assert!(cases.len() >= 60, "the corpus has {} files", cases.len());
    let mut wrong = Vec::new();
    for case in &cases {
        // a rank program has no run length: `run` refuses --length for one (it runs to
        // completion), so a program that loads runs without it to show its own failure
        let program = parsim::scenario::load(&root().join(&case.file))
            .is_ok_and(|sc| sc.runs_to_completion());
        let mut run = vec!["run", &case.file, "--replications", "2"];
        if !program {
            run.extend(["--length", "200"]);
        }
        wrong.extend(problems(case, &run));
        if case.path.is_some() {
            wrong.extend(problems(case, &["analyze", &case.file]));
            wrong.extend(problems(case, &["validate", "--quick", &case.file]));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} failures:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
