//! The progress bar of `run` and `sweep` on a terminal's stderr: replications done, the warm-up
//! pilots running, events per second, elapsed time and ETA.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use parsim::replicate::Step;

/// How the bar is drawn: `{pilots}` and `{rate}` are [`Progress`]'s own keys.
const TEMPLATE: &str = "{msg} [{bar:30}] {pos}/{len} replications{pilots}, {rate} events/s, {elapsed} elapsed, ETA {eta}";

/// A progress bar over a number of replications, told each [`Step`] of the experiments it
/// follows (hidden when stderr is not a terminal).
pub struct Progress {
    bar: ProgressBar,
    /// Events of the finished replications.
    events: Arc<AtomicU64>,
    /// Warm-up pilots running now.
    pilots: Arc<AtomicU64>,
}

impl Progress {
    /// A bar named `name` over `replications` replications.
    pub fn new(name: &str, replications: u64) -> Progress {
        let events = Arc::new(AtomicU64::new(0));
        let pilots = Arc::new(AtomicU64::new(0));
        if !std::io::stderr().is_terminal() {
            return Progress {
                bar: ProgressBar::hidden(),
                events,
                pilots,
            };
        }
        let bar = ProgressBar::new(replications);
        let (done, running) = (Arc::clone(&events), Arc::clone(&pilots));
        let style = ProgressStyle::with_template(TEMPLATE).map(|style| {
            style
                .progress_chars("=> ")
                .with_key(
                    "rate",
                    move |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let secs = state.elapsed().as_secs_f64();
                        let events = done.load(Ordering::Relaxed) as f64;
                        let _ = match secs > 0.0 && events > 0.0 {
                            true => write!(w, "{:.2}M", events / secs / 1e6),
                            false => write!(w, "-"),
                        };
                    },
                )
                .with_key(
                    "pilots",
                    move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = match running.load(Ordering::Relaxed) {
                            0 => Ok(()),
                            1 => write!(w, ", warm-up pilot running"),
                            n => write!(w, ", {n} warm-up pilots running"),
                        };
                    },
                )
        });
        if let Ok(style) = style {
            bar.set_style(style);
        }
        bar.set_message(name.to_owned());
        // redrawn while nothing finishes (a pilot, a long replication): the clock moves on
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress {
            bar,
            events,
            pilots,
        }
    }

    /// Takes in one step of an experiment.
    pub fn tell(&self, step: Step) {
        match step {
            Step::PilotStarted => {
                self.pilots.fetch_add(1, Ordering::Relaxed);
            }
            Step::PilotDone => {
                self.pilots.fetch_sub(1, Ordering::Relaxed);
            }
            Step::Replication { events, .. } => {
                self.events.fetch_add(events, Ordering::Relaxed);
                self.bar.inc(1);
            }
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
