//! A program run's timeline, written for people: a trace in the Trace Event Format that
//! Perfetto (<https://ui.perfetto.dev>) and `chrome://tracing` open ([`write_trace`]), and a
//! Gantt chart as SVG for small programs ([`gantt_svg`]). The timeline itself is recorded by
//! the program executor ([`crate::engine::program::Execution::run_with_timeline`]).
//!
//! **Times.** The trace format counts microseconds; a program's times are in the scenario's
//! time unit, which the trace reads as one second (the unit of `bandwidth` in bytes per second
//! and of the bundled scenarios' times). `ts` and `dur` are the simulated times times 10^6.
//!
//! **Tracks.** Process 0 holds one thread per rank (`rank 0`, `rank 1`, ...), with a complete
//! event (`"ph": "X"`, category `rank_time`) for each span of compute, communication, waiting
//! or io (the program's rank-time categories) and, around them, one for each phase the rank
//! went through (category `phase`, named after the phase): a rank's `rank_time` events tile its
//! run from 0 to its finish. Process 1 holds one counter (`"ph": "C"`) per link the messages
//! crossed, `link <name>`, the number of messages at the link (queued or being transmitted).

use std::io::{self, Write};

use serde_json::json;

use crate::engine::program::timeline::{Span, Timeline};
use crate::plot::{PALETTE, fit, text_width, tick, ticks_to};
use crate::program::Category;

/// The most events a timeline may hold unless told otherwise (spans, phase spans and changes of
/// a link's occupancy): about 50 MB of memory while it is recorded and 100 MB of JSON.
pub const DEFAULT_LIMIT: u64 = 1_000_000;

/// The events a trace holds before any span: the names and order of its processes and of
/// every rank's track (counted against the limit, so that the limit bounds the file).
pub fn track_events(ranks: u32) -> u64 {
    2 * u64::from(ranks) + 4
}

/// The most bytes a trace of `events` events may take: [`EVENT_BYTES`] an event on average,
/// and room for its header and the run's description. A longer one (names of thousands of
/// characters) is refused rather than written.
pub fn most_trace_bytes(events: u64) -> u64 {
    events.saturating_mul(EVENT_BYTES).saturating_add(64 << 10)
}

/// The bytes of JSON a trace may take per event, on average (an event takes about 100).
pub const EVENT_BYTES: u64 = 256;

/// The most ranks a Gantt chart draws (one row each).
pub const MAX_GANTT_RANKS: u32 = 256;

/// The run a timeline shows, for the trace's `otherData` and the chart's title.
#[derive(Clone, Debug)]
pub struct About {
    /// The scenario's name.
    pub scenario: String,
    /// Its file.
    pub file: String,
    /// The seed of the run (after `--set`).
    pub seed: u64,
    /// The replication shown.
    pub replication: u64,
}

/// The trace's `cat` of a rank-time span.
pub const RANK_TIME: &str = "rank_time";
/// The trace's `cat` of a phase's span.
pub const PHASE: &str = "phase";

/// Writes `timeline` as a Trace Event Format JSON object (`traceEvents`, `displayTimeUnit`,
/// `otherData`), one event a line. The same timeline gives the same bytes. Fails, having
/// written part of it, when it would pass `most_bytes`.
pub fn write_trace(
    w: impl Write,
    timeline: &Timeline,
    about: &About,
    most_bytes: u64,
) -> io::Result<()> {
    let mut w = Bounded {
        inner: w,
        left: most_bytes,
    };
    // microseconds to 12 significant digits (1e-6 s is not exact in binary: 67.736, not
    // 67.73600000001268), far finer than the clock's resolution relative to the run
    let us = |t: f64| round12(t * 1e6);
    let mut first = true;
    let mut event = |w: &mut dyn Write, e: serde_json::Value| -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer(&mut *w, &e).map_err(io::Error::from)
    };
    w.write_all(b"{\"traceEvents\":[")?;
    let ranks = timeline.finish.len() as u32;
    event(
        &mut w,
        json!({"name": "process_name", "ph": "M", "pid": 0, "tid": 0,
               "args": {"name": format!("{} ranks", ranks)}}),
    )?;
    event(
        &mut w,
        json!({"name": "process_sort_index", "ph": "M", "pid": 0, "tid": 0,
               "args": {"sort_index": 0}}),
    )?;
    for r in 0..ranks {
        event(
            &mut w,
            json!({"name": "thread_name", "ph": "M", "pid": 0, "tid": r,
                   "args": {"name": format!("rank {r}")}}),
        )?;
        event(
            &mut w,
            json!({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": r,
                   "args": {"sort_index": r}}),
        )?;
    }
    // per rank, in order of start, an enclosing span before those it encloses (the longer
    // first, a phase before a rank-time span that starts and ends with it)
    let mut spans = timeline.spans.iter().peekable();
    let mut phases = timeline.phases.iter().peekable();
    for r in 0..ranks {
        let mut own: Vec<(f64, f64, bool, &str)> = Vec::new();
        while let Some(p) = phases.next_if(|p| p.rank == r) {
            let name = &timeline.phase_names[usize::from(p.phase)];
            own.push((p.start, p.end, true, name));
        }
        while let Some(s) = spans.next_if(|s| s.rank == r) {
            own.push((s.start, s.end, false, s.category.name()));
        }
        own.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(b.1.total_cmp(&a.1))
                .then(b.2.cmp(&a.2))
        });
        for (start, end, phase, name) in own {
            let (ts, end) = (us(start), us(end));
            event(
                &mut w,
                json!({"name": name, "cat": if phase { PHASE } else { RANK_TIME },
                       "ph": "X", "ts": ts, "dur": round12(end - ts), "pid": 0, "tid": r}),
            )?;
        }
    }
    if !timeline.links.is_empty() {
        event(
            &mut w,
            json!({"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
                   "args": {"name": "links: messages at each link"}}),
        )?;
        event(
            &mut w,
            json!({"name": "process_sort_index", "ph": "M", "pid": 1, "tid": 0,
                   "args": {"sort_index": 1}}),
        )?;
    }
    for link in &timeline.links {
        let name = format!("link {}", link.name);
        for &(t, n) in &link.counts {
            event(
                &mut w,
                json!({"name": name, "ph": "C", "ts": us(t), "pid": 1, "tid": 0,
                       "args": {"messages": n}}),
            )?;
        }
    }
    w.write_all(b"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":")?;
    let other = json!({
        "scenario": about.scenario,
        "file": about.file,
        "seed": about.seed,
        "replication": about.replication,
        "makespan": timeline.makespan,
        "time_unit": "the scenario's time unit, read as 1 s: ts and dur are in microseconds",
    });
    serde_json::to_writer(&mut w, &other)?;
    w.write_all(b"}\n")?;
    w.flush()
}

/// A writer that fails past a number of bytes.
struct Bounded<W> {
    inner: W,
    left: u64,
}

impl<W: Write> Write for Bounded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() as u64 > self.left {
            return Err(io::Error::other(format!(
                "the trace would pass its bound of {EVENT_BYTES} bytes an event (names of thousands of characters?): shorten the scenario's phase names or lower --timeline-limit"
            )));
        }
        let n = self.inner.write(buf)?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `v` rounded to 12 significant digits.
fn round12(v: f64) -> f64 {
    format!("{v:.11e}").parse().unwrap_or(v)
}

/// The colour of a category in the Gantt chart.
fn colour(c: Category) -> (u8, u8, u8) {
    let rgb = |p: usize| (PALETTE[p].0, PALETTE[p].1, PALETTE[p].2);
    match c {
        Category::Compute => rgb(1),
        Category::Communication => rgb(0),
        Category::Waiting => (200, 200, 200),
        Category::Io => rgb(2),
    }
}

/// `s` with the characters XML gives a meaning escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Why a Gantt chart was not drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GanttError {
    /// More ranks than rows a chart can show.
    #[error(
        "a Gantt chart draws at most {MAX_GANTT_RANKS} ranks (a row each) and this program has {0}: open the trace (--timeline) in Perfetto instead, or draw fewer ranks (e.g. --set program.ranks=64)"
    )]
    TooManyRanks(u32),
}

/// A time unit for an axis to `max` (in the scenario's unit, read as seconds): its name and
/// the factor times are multiplied by.
fn axis_unit(max: f64) -> (&'static str, f64) {
    if max < 1e-3 {
        ("µs", 1e6)
    } else if max < 1.0 {
        ("ms", 1e3)
    } else {
        ("s", 1.0)
    }
}

/// The Gantt chart of `timeline` as SVG: a row per rank, its spans coloured by category, the
/// phases' starts and ends marked on each row, a time axis with its unit, and a legend.
pub fn gantt_svg(timeline: &Timeline, about: &About) -> Result<String, GanttError> {
    use std::fmt::Write as _;
    let ranks = timeline.finish.len() as u32;
    if ranks > MAX_GANTT_RANKS {
        return Err(GanttError::TooManyRanks(ranks));
    }
    let width = 900.0;
    let font = 12;
    let row = (480.0 / f64::from(ranks.max(1))).clamp(2.0, 22.0).floor();
    let bar = if row >= 6.0 { row - 3.0 } else { row };
    let left = f64::from(text_width(
        &format!("rank {}", ranks.saturating_sub(1)),
        font,
    )) + 14.0;
    let right = 24.0;
    let top = 64.0;
    let rows_bottom = top + row * f64::from(ranks);
    let height = rows_bottom + 64.0;
    let span = timeline.makespan.max(f64::MIN_POSITIVE);
    let plot_width = width - left - right;
    let x = |t: f64| left + plot_width * (t / span);
    let mut svg = String::new();
    let w = &mut svg;
    // (writing to a String cannot fail)
    let _ = writeln!(
        w,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="{font}">"#
    );
    let _ = writeln!(w, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!(
        "{}: replication {}, seed {}",
        about.scenario, about.replication, about.seed
    );
    let _ = writeln!(
        w,
        r#"<text x="{}" y="20" font-size="15">{}</text>"#,
        left,
        escape(&fit(&title, (width - left - right) as u32, 15))
    );
    // legend
    let mut lx = left;
    let ly = 40.0;
    for c in Category::ALL {
        let (r, g, b) = colour(c);
        let _ = writeln!(
            w,
            r#"<rect x="{lx}" y="{}" width="12" height="12" fill="rgb({r},{g},{b})"/><text x="{}" y="{}">{}</text>"#,
            ly - 10.0,
            lx + 16.0,
            ly,
            c.name()
        );
        lx += 16.0 + f64::from(text_width(c.name(), font)) + 14.0;
    }
    if !timeline.phases.is_empty() {
        let _ = writeln!(
            w,
            r#"<line x1="{lx}" y1="{}" x2="{lx}" y2="{}" stroke="black" stroke-width="2"/><text x="{}" y="{}">phase start / end</text>"#,
            ly - 11.0,
            ly + 2.0,
            lx + 6.0,
            ly
        );
    }
    // rows: adjacent spans of one category drawn as one rectangle
    let label_every = (14.0 / row).ceil().max(1.0) as u32;
    let mut spans = timeline.spans.iter().peekable();
    for r in 0..ranks {
        let y = top + row * f64::from(r);
        if r % label_every == 0 {
            let _ = writeln!(
                w,
                r#"<text x="{}" y="{}" text-anchor="end" font-size="{}">rank {r}</text>"#,
                left - 6.0,
                y + row / 2.0 + f64::from(font.min(row as u32 + 2)) * 0.35,
                font.min(row as u32 + 2).max(8)
            );
        }
        let mut current: Option<Span> = None;
        let draw = |s: &Span, w: &mut String| {
            let (cr, cg, cb) = colour(s.category);
            let _ = writeln!(
                w,
                r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{bar}" fill="rgb({cr},{cg},{cb})"/>"#,
                x(s.start),
                (x(s.end) - x(s.start)).max(0.01)
            );
        };
        while let Some(s) = spans.next_if(|s| s.rank == r) {
            match &mut current {
                Some(c) if c.category == s.category && c.end == s.start => c.end = s.end,
                _ => {
                    if let Some(c) = current.replace(*s) {
                        draw(&c, w);
                    }
                }
            }
        }
        if let Some(c) = current {
            draw(&c, w);
        }
    }
    for p in &timeline.phases {
        let y = top + row * f64::from(p.rank);
        for t in [p.start, p.end] {
            let _ = writeln!(
                w,
                r#"<line x1="{0:.2}" y1="{1}" x2="{0:.2}" y2="{2}" stroke="black" stroke-width="1.5"/>"#,
                x(t),
                y - 1.0,
                y + bar + 1.0
            );
        }
    }
    // time axis
    let (unit, factor) = axis_unit(span);
    let axis_y = rows_bottom + 4.0;
    let _ = writeln!(
        w,
        r#"<line x1="{left}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="black"/>"#,
        width - right
    );
    for t in ticks_to(span * factor, 8) {
        let tx = x(t / factor);
        let _ = writeln!(
            w,
            r#"<line x1="{tx:.2}" y1="{axis_y}" x2="{tx:.2}" y2="{}" stroke="black"/><text x="{tx:.2}" y="{}" text-anchor="middle">{}</text>"#,
            axis_y + 5.0,
            axis_y + 19.0,
            tick(t)
        );
    }
    let _ = writeln!(
        w,
        r#"<text x="{}" y="{}" text-anchor="middle">simulated time ({unit}; the scenario's time unit read as 1 s)</text>"#,
        left + plot_width / 2.0,
        axis_y + 40.0
    );
    svg.push_str("</svg>\n");
    Ok(crate::plot::xml_safe(svg))
}
