//! What a classification run writes and `--eval-only` reads back: `metrics.csv` (one row per
//! epoch), `summary.json` (a typed [`Summary`]), `curves.svg` and one checkpoint per seed; the
//! setup and per-epoch rows they record.

use std::path::{Path, PathBuf};

use burn_gnn::train::{StoppingRule, mean_std};
use plotters::style::RGBColor;
use serde::{Deserialize, Serialize};

use super::cli::{Backend, exit_with};
use super::output::{Outputs, cannot_check, read_summary, write_csv};
use super::plot::{self, Row, Series};

/// The version of `summary.json`'s layout; `--eval-only` refuses any other.
pub const SUMMARY_SCHEMA: u32 = 1;

/// Optimisation settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub lr: f64,
    /// L2 coefficient `λ` of `λ/2 · Σ w²` over the decayed parameters.
    pub weight_decay: f64,
    pub epochs: usize,
    pub stopping: StoppingRule,
}

/// One epoch's figures: a row of `metrics.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochRow {
    pub seed: u64,
    pub epoch: usize,
    pub train_loss: f64,
    pub train_acc: f64,
    pub val_loss: f64,
    pub val_acc: f64,
    pub test_acc: f64,
}

/// One seed's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedResult {
    pub seed: u64,
    /// The epoch whose model was kept.
    pub kept_epoch: usize,
    pub epochs_run: usize,
    pub val_acc: f64,
    pub val_loss: f64,
    pub test_acc: f64,
    pub seconds: f64,
    /// The kept model's checkpoint.
    pub checkpoint: Option<PathBuf>,
}

/// `summary.json`: the run's setup, each seed's outcome, and the mean test accuracy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// [`SUMMARY_SCHEMA`].
    pub schema: u32,
    pub example: String,
    /// The dataset, or the generated graph and model.
    pub run: String,
    pub backend: Backend,
    pub setup: Setup,
    pub test_acc_mean: f64,
    pub test_acc_std: f64,
    pub seconds: f64,
    pub seeds: Vec<SeedResult>,
    /// The epoch whose test accuracy averaged over the seeds is best (Xu et al.'s protocol);
    /// only runs that report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_epoch_best: Option<EpochBest>,
}

/// An epoch and the mean ± std over the seeds of its test accuracy.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpochBest {
    pub epoch: usize,
    pub mean: f64,
    pub std: f64,
}

impl Summary {
    /// The summary of `seeds`, trained in `seconds` in all.
    pub fn new(
        example: &str,
        run: &str,
        backend: Backend,
        setup: &Setup,
        seeds: Vec<SeedResult>,
        seconds: f64,
    ) -> Summary {
        let tests: Vec<f64> = seeds.iter().map(|r| r.test_acc).collect();
        let (test_acc_mean, test_acc_std) = mean_std(&tests);
        Summary {
            schema: SUMMARY_SCHEMA,
            example: example.into(),
            run: run.into(),
            backend,
            setup: *setup,
            test_acc_mean,
            test_acc_std,
            seconds,
            seeds,
            per_epoch_best: None,
        }
    }

    /// Prints each seed's (or fold's: `unit`) row and the mean ± std, next to the published
    /// figure `paper`.
    pub fn print(&self, paper: &str, unit: &str) {
        println!("\n {unit:>4} | kept epoch | epochs | val acc | val loss | test acc | seconds");
        for r in &self.seeds {
            println!(
                " {:>4} | {:>10} | {:>6} | {:>7.3} | {:>8.4} | {:>8.3} | {:>7.1}",
                r.seed, r.kept_epoch, r.epochs_run, r.val_acc, r.val_loss, r.test_acc, r.seconds
            );
        }
        println!(
            "\n{} test accuracy over {} {unit}(s): {:.1} ± {:.1} %  ({paper}); {:.0} s in all",
            self.run,
            self.seeds.len(),
            100.0 * self.test_acc_mean,
            100.0 * self.test_acc_std,
            self.seconds
        );
    }
}

impl Outputs {
    /// Writes the metrics, the summary and the plot, and says where.
    pub fn write_all(&self, title: &str, summary: &Summary, rows: &[EpochRow]) {
        let (csv_path, json, svg) = (
            self.dir.join("metrics.csv"),
            self.dir.join("summary.json"),
            self.dir.join("curves.svg"),
        );
        let written = write_csv(&csv_path, rows)
            .and_then(|_| {
                let text = serde_json::to_string_pretty(summary).expect("a summary serialises");
                std::fs::write(&json, text + "\n").map_err(Into::into)
            })
            .and_then(|_| std::fs::write(&svg, curves_svg(title, rows)).map_err(Into::into));
        if let Err(e) = written {
            exit_with(1, format!("cannot write to {}: {e}", self.dir.display()));
        }
        println!(
            "wrote {}, {}, {} and {} checkpoint(s) seed-<N>.bpk in {}",
            csv_path.display(),
            json.display(),
            svg.display(),
            summary.seeds.len(),
            self.dir.display()
        );
    }
}

/// After `--eval-only`: compares the reloaded model's accuracies with those recorded in the
/// `summary.json` beside the checkpoint. Exits with status 1 when the summary is missing,
/// unreadable or of another schema, names no such checkpoint, or (same backend) records other
/// accuracies: the checkpoint did not round-trip.
pub fn verify_checkpoint(checkpoint: &Path, backend: Backend, (val_acc, test_acc): (f64, f64)) {
    let path = checkpoint.with_file_name("summary.json");
    let fail = |why: String| -> ! { cannot_check(checkpoint, why) };
    let writer = format!("these examples with schema {SUMMARY_SCHEMA}");
    let summary: Summary = read_summary(checkpoint, &writer);
    if summary.schema != SUMMARY_SCHEMA {
        fail(format!(
            "schema {}, expected {SUMMARY_SCHEMA}",
            summary.schema
        ));
    }
    let name = checkpoint.file_name();
    let Some(entry) = summary
        .seeds
        .iter()
        .find(|s| s.checkpoint.as_deref().and_then(Path::file_name) == name)
    else {
        fail("it records no such checkpoint".into())
    };
    let recorded = (entry.val_acc, entry.test_acc);
    if recorded == (val_acc, test_acc) {
        println!(
            "matches the accuracies recorded when it was trained ({})",
            path.display()
        );
    } else if summary.backend == backend {
        exit_with(
            1,
            format!(
                "the reloaded model differs from the training run: {} recorded val/test {recorded:?}",
                path.display()
            ),
        );
    } else {
        println!("trained on another backend; recorded val/test accuracies {recorded:?}");
    }
}

impl Row for EpochRow {
    fn seed(&self) -> u64 {
        self.seed
    }
    fn epoch(&self) -> usize {
        self.epoch
    }
}

const LOSSES: [Series<EpochRow>; 2] = [
    ("train loss", RGBColor(31, 119, 180), |r| r.train_loss),
    ("val loss", RGBColor(255, 127, 14), |r| r.val_loss),
];
const ACCURACIES: [Series<EpochRow>; 2] = [
    ("val acc", RGBColor(44, 160, 44), |r| r.val_acc),
    ("test acc", RGBColor(214, 39, 40), |r| r.test_acc),
];

/// The loss and accuracy curves of `rows` under `title`, as an SVG document.
pub fn curves_svg(title: &str, rows: &[EpochRow]) -> String {
    plot::panels_svg(title, rows, [("loss", &LOSSES), ("accuracy", &ACCURACIES)])
}
