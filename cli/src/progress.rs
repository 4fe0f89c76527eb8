//! Progress on stderr for long runs: a bar on a terminal once the work has taken over a
//! second; when stderr is not a terminal (a log, a pipe), a plain line every
//! [`LINE_EVERY`] once the work has taken that long. Short runs stay quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// Between two plain progress lines when stderr is not a terminal (the first after as long).
const LINE_EVERY: Duration = Duration::from_secs(10);
/// Items between two looks at the clock.
const STRIDE: u64 = 4096;

pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
    /// Not a terminal: the total, what is counted, and when the last line was written.
    lines: Option<(u64, String, Instant)>,
}

impl Progress {
    /// Progress over `total` items of `what`, when the total is known (else none).
    pub fn optional(total: Option<u64>, what: &str) -> Progress {
        match total {
            Some(total) => Progress::new(total, what),
            None => Progress { bar: None, started: Instant::now(), shown: false, lines: None },
        }
    }

    /// Progress over `total` items of `what` (`"keys"`).
    pub fn new(total: u64, what: &str) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let started = Instant::now();
        let lines = (!terminal).then(|| (total, what.to_string(), started));
        let bar = terminal.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            let template = format!("{{bar:40}} {{human_pos}}/{{human_len}} {what} ({{eta}} left)");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar, started, shown: false, lines }
    }

    /// Records that item `done` (counting from 0) is finished.
    #[inline]
    pub fn at(&mut self, done: u64) {
        self.at_of(done, done);
    }

    /// Records that item `index` is finished, at `position` of the total (bytes of a file).
    #[inline]
    pub fn at_of(&mut self, index: u64, position: u64) {
        if !index.is_multiple_of(STRIDE) {
            return;
        }
        if let Some((total, what, last)) = &mut self.lines {
            if last.elapsed() >= LINE_EVERY {
                *last = Instant::now();
                let percent = if *total == 0 { 0.0 } else { position as f64 * 100.0 / *total as f64 };
                eprintln!(
                    "shardroute: {position} of {total} {what} ({percent:.1}%, {} s)",
                    self.started.elapsed().as_secs()
                );
            }
            return;
        }
        let Some(bar) = &self.bar else { return };
        if !self.shown && self.started.elapsed() >= QUIET_FOR {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position(position);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
