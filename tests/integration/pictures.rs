//! Every picture parsim writes (sweep --plot for one key, two keys as heat maps and as lines,
//! validate --plot, run --timeline-svg), rendered with resvg: not blank, every text inside the canvas, tick labels
//! short, file names short. The PNGs are left beside the SVGs for a person to look at.

use std::path::{Path, PathBuf};

use resvg::{tiny_skia, usvg};

use super::util::{call, shard_dir};

/// The SVG files of `dir`.
fn svgs(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    found.sort();
    found
}

/// Every text node of `group`, with its bounding box on the canvas.
fn texts(group: &usvg::Group, out: &mut Vec<(String, usvg::Rect)>) {
    for node in group.children() {
        match node {
            usvg::Node::Group(g) => texts(g, out),
            usvg::Node::Text(t) => {
                let content: String = t.chunks().iter().map(|c| c.text()).collect();
                out.push((content, t.abs_bounding_box()));
            }
            _ => {}
        }
    }
}

/// The texts of `svg`.
fn look_at_texts(svg: &Path, options: &usvg::Options) -> Vec<String> {
    let tree = usvg::Tree::from_data(&std::fs::read(svg).unwrap(), options).unwrap();
    let mut found = Vec::new();
    texts(tree.root(), &mut found);
    found.into_iter().map(|(t, _)| t).collect()
}

/// Renders `svg` to a PNG beside it and returns what is wrong with it (empty if nothing).
fn look_at(svg: &Path, options: &usvg::Options) -> Vec<String> {
    let mut wrong = Vec::new();
    let name = svg.file_name().unwrap().to_string_lossy().into_owned();
    if name.len() > 72 {
        wrong.push(format!("{name}: a file name of {} characters", name.len()));
    }
    let data = std::fs::read(svg).unwrap();
    let tree = usvg::Tree::from_data(&data, options).expect("an SVG usvg reads");
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.save_png(svg.with_extension("png")).unwrap();
    // not blank: a good share of the pixels drawn, in more than one colour
    let pixels = pixmap.pixels();
    let inked = pixels
        .iter()
        .filter(|p| (p.red(), p.green(), p.blue()) != (255, 255, 255))
        .count();
    let colours: std::collections::BTreeSet<(u8, u8, u8)> = pixels
        .iter()
        .map(|p| (p.red() & 0xf0, p.green() & 0xf0, p.blue() & 0xf0))
        .collect();
    if inked * 100 < pixels.len() || colours.len() < 3 {
        wrong.push(format!(
            "{name}: blank ({inked} of {} pixels drawn, {} colours)",
            pixels.len(),
            colours.len()
        ));
    }
    let mut found = Vec::new();
    texts(tree.root(), &mut found);
    if found.len() < 5 {
        wrong.push(format!("{name}: only {} texts", found.len()));
    }
    let (w, h) = (size.width() as f32, size.height() as f32);
    for (text, b) in &found {
        if b.left() < -0.5 || b.top() < -0.5 || b.right() > w + 0.5 || b.bottom() > h + 0.5 {
            wrong.push(format!(
                "{name}: {text:?} at ({:.0}, {:.0})-({:.0}, {:.0}) leaves the {w}x{h} canvas",
                b.left(),
                b.top(),
                b.right(),
                b.bottom()
            ));
        }
        if text.contains("00000") || text.contains("99999") {
            wrong.push(format!("{name}: a tick or label {text:?} with a long tail"));
        }
    }
    wrong
}

/// The options every picture is read with: the system's fonts, so that text is laid out.
fn options() -> usvg::Options<'static> {
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    // plotters asks for "sans-serif", which fontdb maps to Arial unless told otherwise
    let family = options
        .fontdb
        .faces()
        .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
        .find(|name| name == "DejaVu Sans" || name == "Liberation Sans" || name == "Arial")
        .expect("a sans-serif system font to lay text out with (install fonts-dejavu-core)");
    options.fontdb_mut().set_sans_serif_family(family);
    options
}

/// Runs parsim with `args`, expecting success.
fn parsim_ok(args: &[&str]) {
    let (code, _, err) = call(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
}

#[test]
fn every_picture_is_drawn_with_its_text_inside() {
    let options = options();
    let dir = shard_dir("pictures", "all");
    let one = dir.join("one_key");
    let grid = dir.join("heat_maps");
    let lines = dir.join("lines");
    let cases = dir.join("validate");
    let short = ["--set", "run.length=2000", "--set", "run.replications=3"];
    let d = |p: &Path| p.to_str().unwrap().to_owned();
    let mut args = vec![
        "sweep",
        "scenarios/closed_delay_two_queues.toml",
        "--vary",
        "class.jobs.population=1..12",
    ];
    args.extend(short);
    let one_dir = d(&one);
    args.extend(["--plot", &one_dir, "--plot-metric", "class.jobs.cycle"]);
    parsim_ok(&args);
    // two keys, one of them a fraction (ticks of 0.1 steps: 0.30000000000000004 in f64)
    let two_keys = [
        "sweep",
        "validation/np_fj4_uniform_rho60.toml",
        "--vary",
        "station.arrivals.interarrival.rate=0.3..0.7:0.1",
        "--vary",
        "run.seed=1,2",
        "--set",
        "run.length=2000",
        "--set",
        "run.replications=3",
    ];
    let grid_dir = d(&grid);
    let mut args = two_keys.to_vec();
    args.extend(["--plot", &grid_dir]);
    parsim_ok(&args);
    let lines_dir = d(&lines);
    let mut args = two_keys.to_vec();
    args.extend(["--plot", &lines_dir, "--plot-lines"]);
    parsim_ok(&args);
    // along a simulated metric instead of the first key (heat maps cannot: refused first)
    let along = dir.join("along_a_metric");
    let along_dir = d(&along);
    let mut args = two_keys.to_vec();
    args.extend(["--plot", &along_dir, "--plot-x", "class.jobs.throughput"]);
    let (code, _, err) = call(&args);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--plot-x draws line charts"), "{err}");
    args.push("--plot-lines");
    parsim_ok(&args);
    let labels: Vec<String> = svgs(&along)
        .iter()
        .flat_map(|f| look_at_texts(f, &options))
        .collect();
    assert!(
        labels
            .iter()
            .any(|t| t.starts_with("class.jobs.throughput")),
        "no axis along class.jobs.throughput: {labels:?}"
    );
    let cases_dir = d(&cases);
    parsim_ok(&[
        "validate",
        "--quick",
        "--allow-outside-tolerance",
        "validation/closed_3q_n8.toml",
        "validation/fjmax_exp_c8.toml",
        "validation/np_fj_series_h2_det_rho60.toml",
        "--plot",
        &cases_dir,
    ]);
    let mut wrong = Vec::new();
    let mut drawn = 0;
    for sub in [&one, &grid, &lines, &along, &cases] {
        let files = svgs(sub);
        assert!(!files.is_empty(), "no pictures in {}", sub.display());
        for f in files {
            wrong.extend(look_at(&f, &options));
            drawn += 1;
        }
    }
    println!("{drawn} pictures rendered as PNG in {}", dir.display());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_gantt_chart_of_a_program_is_drawn_with_its_text_inside() {
    let options = options();
    let dir = shard_dir("pictures", "gantt");
    std::fs::create_dir_all(&dir).unwrap();
    let mut wrong = Vec::new();
    // 16 ranks (a row each, every one labelled) and 64 (labels thinned)
    for (scenario, name) in [
        ("scenarios/program_ring_torus.toml", "ring.svg"),
        ("scenarios/program_tree_sum.toml", "tree.svg"),
    ] {
        let svg = dir.join(name);
        parsim_ok(&["run", scenario, "--timeline-svg", svg.to_str().unwrap()]);
        wrong.extend(look_at(&svg, &options));
        let text = std::fs::read_to_string(&svg).unwrap();
        for word in [
            "compute",
            "communication",
            "waiting",
            "phase start / end",
            "rank 0",
        ] {
            if !text.contains(word) {
                wrong.push(format!("{name}: no {word:?}"));
            }
        }
        if !text.contains("simulated time (") {
            wrong.push(format!("{name}: no time axis with its unit"));
        }
    }
    println!("Gantt charts rendered as PNG in {}", dir.display());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Two texts' boxes overlap (by more than half a pixel each way).
fn overlap(a: &usvg::Rect, b: &usvg::Rect) -> bool {
    a.left() + 0.5 < b.right()
        && b.left() + 0.5 < a.right()
        && a.top() + 0.5 < b.bottom()
        && b.top() + 0.5 < a.bottom()
}

#[test]
fn a_validation_picture_names_every_metric_and_method_in_full() {
    // 58 metrics and 7 methods, some of them 400 characters long; and 3 metrics, 7 methods
    let options = options();
    let dir = shard_dir("pictures", "validate_names");
    let (code, json, err) = call(&[
        "validate",
        "--quick",
        "--allow-outside-tolerance",
        "--json",
        "validation/spmd_bus_aio_p16.toml",
        "validation/closed_3q_n8.toml",
        "--plot",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let finite = |v: &serde_json::Value| v.as_f64().is_some_and(f64::is_finite);
    let mut cases: Vec<&str> = rows.iter().map(|r| r["case"].as_str().unwrap()).collect();
    cases.dedup();
    assert_eq!(cases.len(), 2);
    let mut wrong = Vec::new();
    for case in cases {
        // what the picture draws: rows with a simulation and a finite value or bounds
        let drawn: Vec<&serde_json::Value> = rows
            .iter()
            .filter(|r| r["case"] == case)
            .filter(|r| r["replications"].as_u64() > Some(0))
            .filter(|r| finite(&r["simulated"]) && r["simulated"].as_f64() != Some(0.0))
            .filter(|r| {
                finite(&r["analytic"]) || (finite(&r["lower_bound"]) && finite(&r["upper_bound"]))
            })
            .collect();
        let mut metrics: Vec<&str> = drawn
            .iter()
            .map(|r| r["metric"].as_str().unwrap())
            .collect();
        metrics.sort_unstable();
        metrics.dedup();
        let mut methods: Vec<&str> = drawn
            .iter()
            .map(|r| r["method"].as_str().unwrap())
            .collect();
        methods.sort_unstable();
        methods.dedup();
        let svg = dir.join(format!("{}.svg", parsim::plot::short_file_part(case)));
        wrong.extend(look_at(&svg, &options));
        let tree = usvg::Tree::from_data(&std::fs::read(&svg).unwrap(), &options).unwrap();
        let mut found = Vec::new();
        texts(tree.root(), &mut found);
        let name = svg.file_name().unwrap().to_string_lossy().into_owned();
        for (text, _) in &found {
            if text.contains('…') {
                wrong.push(format!("{name}: {text:?} is cut"));
            }
        }
        // each metric labelled by its full name, no two labels overlapping
        let mut labels = Vec::new();
        for m in &metrics {
            match found.iter().find(|(t, _)| t == m) {
                Some((_, b)) => labels.push((m, *b)),
                None => wrong.push(format!("{name}: no label {m:?}")),
            }
        }
        for (i, (a, ra)) in labels.iter().enumerate() {
            for (b, rb) in &labels[i + 1..] {
                if overlap(ra, rb) {
                    wrong.push(format!("{name}: the labels {a:?} and {b:?} overlap"));
                }
            }
        }
        // the title and every method's name whole, line after line
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let all = words(
            &found
                .iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let title = format!("{case}: simulated (99% interval) and analytic");
        for whole in std::iter::once(title.as_str()).chain(methods.iter().copied()) {
            if !all.contains(&words(whole)) {
                wrong.push(format!("{name}: {whole:?} is not written whole"));
            }
        }
        assert!(
            metrics.len() >= 3 && methods.len() >= 5,
            "{name}: {metrics:?} {methods:?}"
        );
    }
    println!("validation pictures rendered as PNG in {}", dir.display());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
