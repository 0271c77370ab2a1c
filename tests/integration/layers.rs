//! The library's layering (DESIGN section 3, the README's "Layout"): every module of `src/`
//! belongs to one layer, and imports point only down or across its own layer; the modules do
//! not import each other in a circle; the engines and the program IR know no model; the
//! analysis vocabulary at the root of `predict/` imports none of the analysers below it.
//!
//! Imports are read from the code (`crate::<module>` paths outside comments), test modules
//! included: a test that needs a higher layer belongs in `tests/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::root;

/// The layers, bottom up, with their top-level modules.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundations",
        &[
            "time", "rng", "linalg", "hash", "files", "memory", "problem",
        ],
    ),
    ("maths", &["analytic", "dist", "stats"]),
    ("IRs", &["network", "program", "schedule", "topology"]),
    ("executors", &["engine", "metrics"]),
    ("analysis", &["predict"]),
    ("models", &["models"]),
    ("input", &["scenario"]),
    ("runs", &["replicate", "study"]),
    (
        "outputs",
        &[
            "report",
            "validate",
            "sweep",
            "shard",
            "plot",
            "timeline",
            "selftest",
            "slurm",
            "provenance",
            "traffic_fit",
        ],
    ),
];

/// The layer index of a top-level module, if it is in the table.
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The code of a file without its comments (line comments and doc comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            // a `//` inside a string literal would cut the line short: good enough for paths,
            // which never follow one
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's code names as `crate::<module>`, with a `use crate::{a, b}`
/// group read too.
fn imported(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// The top-level module of a file under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// (file, its module, the modules it imports) for every library file.
fn library() -> Vec<(PathBuf, String, BTreeSet<String>)> {
    let src = root().join("src");
    sources(&src)
        .into_iter()
        .filter_map(|f| {
            let module = module_of(&src, &f);
            // the binary (cli/, main.rs) sits on top and uses the library by its name
            if matches!(module.as_str(), "cli" | "main" | "lib") {
                return None;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let mut uses = imported(&code(&text));
            uses.remove(&module);
            Some((f, module, uses))
        })
        .collect()
}

#[test]
fn every_module_has_a_layer_and_imports_point_down() {
    let mut wrong = Vec::new();
    for (file, module, uses) in library() {
        let Some(own) = layer(&module) else {
            wrong.push(format!(
                "{}: module {module:?} has no layer",
                file.display()
            ));
            continue;
        };
        for used in uses {
            match layer(&used) {
                Some(l) if l <= own => {}
                Some(l) => wrong.push(format!(
                    "{}: {module} ({}) imports {used} ({}), a higher layer",
                    file.display(),
                    LAYERS[own].0,
                    LAYERS[l].0
                )),
                None => wrong.push(format!("{}: imports unknown module {used}", file.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn modules_import_each_other_in_no_circle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, module, uses) in library() {
        edges.entry(module).or_default().extend(uses);
    }
    // depth-first search for a back edge, reporting the circle it closes
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut circle = stack[i..].to_vec();
            circle.push(m.to_owned());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(circle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_engines_and_the_program_ir_know_no_model_nor_input() {
    let src = root().join("src");
    let mut wrong = Vec::new();
    for dir in ["engine", "program"] {
        for f in sources(&src.join(dir)) {
            let text = std::fs::read_to_string(&f).unwrap().to_lowercase();
            for word in ["spmd", "pipeline"] {
                let mentions = text.match_indices(word).any(|(i, _)| {
                    let after = text[i + word.len()..].chars().next();
                    !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if mentions {
                    wrong.push(format!("{} mentions {word}", f.display()));
                }
            }
            let uses = imported(&code(&std::fs::read_to_string(&f).unwrap()));
            for higher in ["predict", "scenario", "models"] {
                if dir == "program" && uses.contains(higher) {
                    wrong.push(format!("{} imports {higher}", f.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_analysis_vocabulary_imports_no_analyser() {
    let text = std::fs::read_to_string(root().join("src/predict/mod.rs")).unwrap();
    let code = code(&text);
    for analyser in ["network::", "program::"] {
        assert!(
            !code.contains(analyser),
            "src/predict/mod.rs names {analyser}: the vocabulary sits below the analysers"
        );
    }
}

#[test]
fn the_layer_table_knows_every_top_level_module() {
    let src = root().join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(m) = line.strip_prefix("pub mod ") {
            let m = m.trim_end_matches(';');
            assert!(
                layer(m).is_some(),
                "src/lib.rs declares {m}, which has no layer"
            );
        }
    }
}

/// The three workload forms, each the second folder (or file) of every layer that has one.
const FORMS: [&str; 3] = ["network", "program", "schedule"];

/// The forms a form's files may use: a schedule may hold a program lowered to it; a network and
/// a program use no other form.
fn form_may_use(form: &str, other: &str) -> bool {
    form == other || (form == "schedule" && other == "program")
}

/// The workload form a file belongs to by its path: `src/<form>/...` (an IR) or
/// `src/<layer>/<form>/...`, `src/<layer>/<form>.rs`, `src/scenario/check/<form>/...`.
fn form_of_path(rel: &Path) -> Option<&'static str> {
    let parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .collect();
    let at = match parts.first().map(String::as_str) {
        Some("scenario") => 2,
        Some(p) if FORMS.contains(&p) => 0,
        _ => 1,
    };
    if at == 2 && parts.get(1).map(String::as_str) != Some("check") {
        return None;
    }
    let part = parts.get(at)?;
    FORMS.iter().find(|f| *f == part).copied()
}

/// The workload forms a file's code names: `crate::<form>` (an IR), `crate::<layer>::<form>`
/// or `crate::scenario::check::<form>` (another layer's part of it), and a sibling reached
/// through `super::` (`super::program::compile`, `super::{config, schedule}`).
fn forms_named(code: &str) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    let form = |name: &str| FORMS.iter().find(|f| **f == name).copied();
    for (i, _) in code.match_indices("crate::") {
        let path: String = code[i + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let named = match segments.as_slice() {
            ["scenario", "check", f, ..] => form(f),
            [f, ..] if form(f).is_some() => form(f),
            [_, f, ..] => form(f),
            _ => None,
        };
        out.extend(named);
    }
    for (i, _) in code.match_indices("super::") {
        // the start of a chain of `super::`s only
        if code[..i].ends_with("::") {
            continue;
        }
        let mut rest = &code[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(
                group[..end]
                    .split(',')
                    .filter_map(|item| form(item.trim().split("::").next().unwrap_or("").trim())),
            );
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.extend(form(&name));
        }
    }
    out
}

#[test]
fn each_workload_form_keeps_to_its_own_folders() {
    let src = root().join("src");
    let mut wrong = Vec::new();
    let mut seen = BTreeMap::<&str, usize>::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).unwrap();
        let Some(form) = form_of_path(rel) else {
            continue;
        };
        *seen.entry(form).or_default() += 1;
        let text = std::fs::read_to_string(&file).unwrap();
        for other in forms_named(&code(&text)) {
            if !form_may_use(form, other) {
                wrong.push(format!(
                    "{}: a file of the {form} form uses the {other} form (crate::...{other}): it sits in another form's folder, or the two forms share something that belongs in the layer's shared part",
                    rel.display()
                ));
            }
        }
    }
    // the rule reads every form's folders: a renamed folder would make it pass vacuously
    for form in FORMS {
        assert!(
            seen.get(form).is_some_and(|&n| n >= 5),
            "the {form} form has fewer than 5 files in its folders: {seen:?}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_file_in_the_wrong_forms_folder_is_found() {
    // a schedule executor's file put among the program executor's
    let misplaced = "use crate::schedule::dag::Dag;\nuse crate::engine::calendar::Calendar;";
    let form = form_of_path(Path::new("engine/program/lanes.rs")).unwrap();
    assert_eq!(form, "program");
    let named = forms_named(misplaced);
    assert!(named.iter().any(|other| !form_may_use(form, other)));
    // the IR folders and the input's checks are read too; a layer's shared parts are not
    assert_eq!(
        form_of_path(Path::new("network/routing.rs")),
        Some("network")
    );
    assert_eq!(
        form_of_path(Path::new("scenario/check/schedule/goal.rs")),
        Some("schedule")
    );
    assert_eq!(
        form_of_path(Path::new("metrics/schedule.rs")),
        Some("schedule")
    );
    assert_eq!(form_of_path(Path::new("engine/calendar.rs")), None);
    assert_eq!(form_of_path(Path::new("scenario/raw/program.rs")), None);
    // a network checker that reaches into the program check, by any path
    assert!(forms_named("use crate::scenario::check::program::compile;").contains("program"));
    assert!(forms_named("use super::super::program::compile;").contains("program"));
    assert!(forms_named("use super::{config, schedule};").contains("schedule"));
    assert!(forms_named("use super::{config, ranks};").is_empty());
}
