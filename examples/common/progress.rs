//! A small progress bar on stderr: redrawn in place on a terminal (at most 10 times a second),
//! one line per tenth of the work otherwise (CI logs).

use std::io::Write;
use std::time::{Duration, Instant};

/// A progress bar for `total` steps (0: unknown).
pub struct Progress {
    total: u64,
    label: String,
    start: Instant,
    last_draw: Option<Instant>,
    last_tenth: u64,
    tty: bool,
}

impl Progress {
    /// A bar labelled `label`.
    pub fn new(total: u64, label: impl Into<String>) -> Progress {
        Progress {
            total,
            label: label.into(),
            start: Instant::now(),
            last_draw: None,
            last_tenth: 0,
            tty: super::interactive(),
        }
    }

    fn line(&self, pos: u64, msg: &str) -> String {
        let secs = self.start.elapsed().as_secs_f64();
        if self.total == 0 {
            return format!("{} {pos} {msg} ({secs:.1} s)", self.label);
        }
        let frac = (pos as f64 / self.total as f64).clamp(0.0, 1.0);
        let filled = (frac * 24.0).round() as usize;
        format!(
            "{} [{}{}] {pos}/{} {msg} ({secs:.1} s)",
            self.label,
            "#".repeat(filled),
            ".".repeat(24 - filled),
            self.total
        )
    }

    /// Moves to step `pos` with a status message.
    pub fn set(&mut self, pos: u64, msg: impl AsRef<str>) {
        let now = Instant::now();
        if self.tty {
            if self
                .last_draw
                .is_some_and(|t| now - t < Duration::from_millis(100))
            {
                return;
            }
            self.last_draw = Some(now);
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[2K{}", self.line(pos, msg.as_ref()));
            let _ = err.flush();
        } else if let Some(tenth) = (pos * 10).checked_div(self.total)
            && tenth > self.last_tenth
        {
            self.last_tenth = tenth;
            eprintln!("{}", self.line(pos, msg.as_ref()));
        }
    }

    /// Ends the bar with a final message on its own line.
    pub fn finish(self, msg: impl AsRef<str>) {
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!(
            "{} {} ({:.1} s)",
            self.label,
            msg.as_ref(),
            self.start.elapsed().as_secs_f64()
        );
    }
}
