//! Where a run's files go: the `--out` directory, checkpoints (Burn's burnpack records) and
//! CSV tables.

use std::path::{Path, PathBuf};

use burn::module::Module;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::cli::exit_with;

/// Everything a run writes under `--out`: `metrics.csv`, `summary.json`, `curves.svg` and one
/// checkpoint per seed, `seed-<N>.bpk`.
pub struct Outputs {
    pub dir: PathBuf,
}

impl Outputs {
    /// Creates `dir`.
    pub fn create(dir: PathBuf) -> Outputs {
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| exit_with(1, format!("cannot create {}: {e}", dir.display())));
        Outputs { dir }
    }

    /// Saves a model with Burn's record system (burnpack) as `seed-<seed>.bpk`.
    pub fn save_model<M: Module>(&self, model: M, seed: u64) -> PathBuf {
        let path = self.dir.join(format!("seed-{seed}.bpk"));
        model
            .save_file(&path)
            .unwrap_or_else(|e| exit_with(1, format!("cannot save {}: {e}", path.display())));
        path
    }
}

/// Writes the per-epoch rows as CSV, with a header.
pub fn write_csv<R: Serialize>(path: &Path, rows: &[R]) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    rows.iter().try_for_each(|r| w.serialize(r))?;
    w.flush().map_err(Into::into)
}

/// Loads a checkpoint into `model` (built with the same configuration).
pub fn load_checkpoint<M: Module>(model: M, path: &Path) -> M {
    let record = burn::store::ModuleRecord::load(path).unwrap_or_else(|e| {
        exit_with(1, format!("cannot read checkpoint {}: {e}", path.display()))
    });
    model.try_load_record(record).unwrap_or_else(|e| {
        exit_with(
            1,
            format!(
                "checkpoint {} does not fit this model (another dataset or setup?): {e}",
                path.display()
            ),
        )
    })
}

/// The summary.json written beside `checkpoint`, as `T`; exits 1 naming both files when it is
/// missing or is not a summary `writer` wrote.
pub fn read_summary<T: DeserializeOwned>(checkpoint: &Path, writer: &str) -> T {
    let path = checkpoint.with_file_name("summary.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| cannot_check(checkpoint, e.to_string()));
    serde_json::from_str(&text).unwrap_or_else(|e| {
        cannot_check(
            checkpoint,
            format!("not a summary written by {writer} ({e})"),
        )
    })
}

/// Exits 1: `checkpoint` cannot be checked against the summary.json beside it, because `why`.
pub fn cannot_check(checkpoint: &Path, why: String) -> ! {
    let summary = checkpoint.with_file_name("summary.json");
    exit_with(
        1,
        format!(
            "cannot check {}: {}: {why}",
            checkpoint.display(),
            summary.display()
        ),
    )
}
