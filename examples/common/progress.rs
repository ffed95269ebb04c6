//! Progress bars (indicatif) on stderr: drawn in place on a terminal, hidden in logs, where each
//! bar leaves one line when it finishes.

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar for `total` steps, with a label and a status message.
pub struct Progress {
    bar: ProgressBar,
    label: String,
}

impl Progress {
    /// A bar of `total` steps labelled `label`.
    pub fn new(total: u64, label: impl Into<String>) -> Progress {
        Self::styled(
            total,
            label,
            "{prefix} [{bar:24}] {pos}/{len} {msg} ({elapsed})",
        )
    }

    /// A bar of `total` steps labelled `label`, drawn by the indicatif `template`.
    pub fn styled(total: u64, label: impl Into<String>, template: &str) -> Progress {
        let label = label.into();
        let bar = ProgressBar::new(total)
            .with_prefix(label.clone())
            .with_style(
                ProgressStyle::with_template(template)
                    .expect("a valid template")
                    .progress_chars("#>."),
            );
        Progress { bar, label }
    }

    /// Moves to step `pos` with a status message.
    pub fn set(&mut self, pos: u64, msg: impl Into<String>) {
        self.bar.set_position(pos);
        self.bar.set_message(msg.into());
    }

    /// Replaces the bar by one line: its label, `msg` and the time taken.
    pub fn finish(self, msg: impl AsRef<str>) {
        let seconds = self.bar.elapsed().as_secs_f64();
        self.bar.finish_and_clear();
        eprintln!("{} {} ({seconds:.1} s)", self.label, msg.as_ref());
    }
}
