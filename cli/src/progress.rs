//! A progress bar on stderr that shows itself only when the work has taken over a second
//! and stderr is a terminal: short runs and pipes stay quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// Items between two looks at the clock.
const STRIDE: u64 = 4096;

pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// Progress over `total` items of `what` (`"keys"`).
    pub fn new(total: u64, what: &str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            let template = format!("{{bar:40}} {{human_pos}}/{{human_len}} {what} ({{eta}} left)");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar, started: Instant::now(), shown: false }
    }

    /// Records that item `done` (counting from 0) is finished.
    #[inline]
    pub fn at(&mut self, done: u64) {
        if !done.is_multiple_of(STRIDE) {
            return;
        }
        let Some(bar) = &self.bar else { return };
        if !self.shown && self.started.elapsed() >= QUIET_FOR {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position(done);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
