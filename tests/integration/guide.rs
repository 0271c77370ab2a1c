//! The user guide (`docs/guide/`) runs: every scenario it shows is a file the reader can save
//! and every command it shows prints what the guide says.
//!
//! Conventions of the guide's Markdown, which this test reads:
//! - a fenced block whose first line is `# file: NAME` is saved as `NAME` in the chapter's own
//!   directory, in the order the chapter gives them (a later block of the same name replaces
//!   it);
//! - files of the chapter's `data/` folder (measurements) are copied to `data/` there first;
//! - a ```` ```console ```` block holds commands, each on a line starting with `$ `, followed by
//!   what it prints. The command runs in the chapter's directory with the blocks saved so far;
//!   every printed line the guide shows must appear, in order, in what the command printed
//!   (stdout then stderr; other lines may come between). A line `...` only tells the reader
//!   that lines were left out. The command must exit with status 0, or with the status the
//!   guide gives on a last line `(exit N)`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::root;

/// One fenced block: its info string and its lines.
struct Block {
    info: String,
    lines: Vec<String>,
    /// 1-based line of the opening fence.
    at: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_owned(),
                    lines: Vec::new(),
                    at: i + 1,
                })
            }
            (Some(_), true) => out.extend(open.take()),
            (Some(b), false) => b.lines.push(line.to_owned()),
            (None, false) => {}
        }
    }
    out
}

/// Splits a command line into words: white space separates, single and double quotes group.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// The Markdown files of the guide.
fn chapters(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(chapters(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Where a page's commands run.
enum Workdir {
    /// A fresh directory of its own, where its `# file:` blocks are saved (the guide).
    Scratch,
    /// The repository's root, which the page must not write into (the README's tour).
    Root,
}

/// Runs one page; returns what went wrong (empty: nothing).
fn check_chapter(md: &Path, workdir: Workdir) -> Vec<String> {
    let text = std::fs::read_to_string(md).unwrap();
    let name = md.strip_prefix(root()).unwrap_or(md).display().to_string();
    let scratch = std::env::temp_dir().join(format!(
        "parsim-guide-{}-{}",
        std::process::id(),
        name.replace(['/', '.'], "_")
    ));
    let dir = match workdir {
        Workdir::Scratch => {
            let _ = std::fs::remove_dir_all(&scratch);
            std::fs::create_dir_all(&scratch).unwrap();
            // measurements the guide reads (`data/...`) are files of the repository
            let data = md.parent().unwrap().join("data");
            if data.is_dir() {
                std::fs::create_dir_all(scratch.join("data")).unwrap();
                for entry in std::fs::read_dir(&data).unwrap() {
                    let path = entry.unwrap().path();
                    std::fs::copy(&path, scratch.join("data").join(path.file_name().unwrap()))
                        .unwrap();
                }
            }
            scratch.clone()
        }
        Workdir::Root => root(),
    };
    let mut wrong = Vec::new();
    for b in blocks(&text) {
        if let Some(file) = b.lines.first().and_then(|l| l.strip_prefix("# file: ")) {
            match workdir {
                Workdir::Scratch => {
                    std::fs::write(dir.join(file.trim()), b.lines.join("\n") + "\n").unwrap()
                }
                Workdir::Root => wrong.push(format!(
                    "{name}:{}: `# file:` blocks belong in the guide, not here",
                    b.at
                )),
            }
            continue;
        }
        if b.info != "console" {
            continue;
        }
        // commands and what each prints
        let mut runs: Vec<(String, Vec<String>)> = Vec::new();
        for line in &b.lines {
            if let Some(cmd) = line.strip_prefix("$ ") {
                runs.push((cmd.to_owned(), Vec::new()));
            } else if let Some((_, shown)) = runs.last_mut() {
                shown.push(line.trim_end().to_owned());
            }
        }
        for (cmd, mut shown) in runs {
            let mut expected_status = 0;
            if let Some(last) = shown.last()
                && let Some(n) = last
                    .strip_prefix("(exit ")
                    .and_then(|r| r.strip_suffix(')'))
            {
                expected_status = n.parse().unwrap();
                shown.pop();
            }
            let argv = words(&cmd);
            if argv.first().map(String::as_str) != Some("parsim") {
                wrong.push(format!(
                    "{name}:{}: a guide command must start with `parsim`: {cmd}",
                    b.at
                ));
                continue;
            }
            let out = Command::new(env!("CARGO_BIN_EXE_parsim"))
                .args(&argv[1..])
                .current_dir(&dir)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let printed = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            let lines: Vec<&str> = printed.lines().map(str::trim_end).collect();
            if out.status.code() != Some(expected_status) {
                wrong.push(format!(
                    "{name}:{}: `{cmd}` exited with {:?}, the guide says {expected_status}:\n{printed}",
                    b.at,
                    out.status.code()
                ));
                continue;
            }
            let mut next = 0;
            for want in shown
                .iter()
                .filter(|l| l.as_str() != "..." && !l.is_empty())
            {
                match lines[next..].iter().position(|l| l == want) {
                    Some(i) => next += i + 1,
                    None => {
                        wrong.push(format!(
                            "{name}:{}: `{cmd}` did not print, in order, the line\n  {want}\nIt printed:\n{printed}",
                            b.at
                        ));
                        break;
                    }
                }
            }
        }
    }
    if let Workdir::Scratch = workdir {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    wrong
}

#[test]
fn every_scenario_and_command_of_the_guide_works_as_shown() {
    let mut wrong = Vec::new();
    let files = chapters(&root().join("docs/guide"));
    assert!(!files.is_empty(), "docs/guide has no chapter");
    for md in files {
        wrong.extend(check_chapter(&md, Workdir::Scratch));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn the_readme_tour_prints_what_it_shows() {
    let wrong = check_chapter(&root().join("README.md"), Workdir::Root);
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The targets of a page's relative Markdown links and images, with their 1-based lines
/// (`](target)` outside fenced blocks; web addresses and in-page anchors left out).
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            let file = target.split('#').next().unwrap_or("");
            if !file.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push((i + 1, file.to_owned()));
            }
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_readme_and_the_guide_leads_to_a_file() {
    let mut pages = chapters(&root().join("docs/guide"));
    pages.push(root().join("README.md"));
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let base = page.parent().unwrap();
        for (line, target) in relative_links(&text) {
            if !base.join(&target).exists() {
                broken.push(format!("{}:{line}: {target}", page.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn links_are_found_outside_code_only() {
    let page = "see [a](a.md) and ![b](../b.svg#x), [web](https://x.org)\n```\n[c](c.md)\n```\n[d](#in-page)";
    assert_eq!(
        relative_links(page),
        [(1, "a.md".to_owned()), (1, "../b.svg".to_owned())]
    );
}

#[test]
fn command_lines_split_as_a_shell_would() {
    assert_eq!(
        words(r#"parsim sweep a.toml --vary "class.jobs.population=1..4" --set 'run.seed=2'"#),
        [
            "parsim",
            "sweep",
            "a.toml",
            "--vary",
            "class.jobs.population=1..4",
            "--set",
            "run.seed=2"
        ]
    );
    assert_eq!(words("a '' b"), ["a", "", "b"]);
}

/// The `parsim` commands of a `sh` block: continuation lines joined, comments and what follows
/// a shell operator (`>`, `|`, `;`, `&&`) dropped. `cargo` and other lines are left out.
fn sh_commands(b: &Block) -> Vec<String> {
    let mut joined: Vec<String> = Vec::new();
    let mut carry = String::new();
    for line in &b.lines {
        let line = line.trim_end();
        match line.strip_suffix('\\') {
            Some(head) => carry.push_str(head),
            None => {
                carry.push_str(line);
                joined.push(std::mem::take(&mut carry));
            }
        }
    }
    joined
        .into_iter()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("time ").unwrap_or(l);
            l.starts_with("parsim ").then_some(l.to_owned())
        })
        .map(|l| {
            // (the guide's sh lines quote no '#', '>', '|' or ';')
            let cut = l.find([' ', '\t']).map_or(l.len(), |_| {
                [" #", " >", " |", ";", " &&"]
                    .iter()
                    .filter_map(|op| l.find(op))
                    .min()
                    .unwrap_or(l.len())
            });
            l[..cut].to_owned()
        })
        .collect()
}

#[test]
fn every_parsim_command_in_the_guides_sh_blocks_is_accepted() {
    // the `sh` blocks (sweeps of thousands of points, Slurm, placeholders like FILE) are not
    // run; their command lines must still parse, every flag and value as the CLI takes them
    let mut pages = chapters(&root().join("docs/guide"));
    pages.push(root().join("README.md"));
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for b in blocks(&text).iter().filter(|b| b.info == "sh") {
            for cmd in sh_commands(b) {
                let args = words(&cmd);
                let out = Command::new(env!("CARGO_BIN_EXE_parsim"))
                    .args(&args[1..])
                    .env("PARSIM_CHECK_ARGUMENTS", "1")
                    .output()
                    .expect("the binary runs");
                checked += 1;
                if !out.status.success() {
                    wrong.push(format!(
                        "{}:{}: `{cmd}` is refused:\n{}",
                        page.display(),
                        b.at,
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
