//! `--resume`: what a node-classification run saves every `--checkpoint-every` epochs under
//! `<out>/resume/`, so that a run that is killed continues where its last save left it and ends
//! with the same metrics as a run that was never interrupted (every epoch's dropout draws come
//! from a seed of its own, and the kernels are deterministic).

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn_gnn::train::EarlyStopping;
use serde::{Deserialize, Serialize};

use super::cli::{Backend, at_least, exit_with};
use super::output::load_checkpoint;
use super::record::{EpochRow, SeedResult, Setup};

/// `--resume`: continue a killed run (this module).
#[derive(Clone, Debug, clap::Args)]
pub struct ResumeArgs {
    /// Continue a killed run from its last save in `<out>/resume/` (the same flags, or it is
    /// refused); without a save, start afresh.
    #[arg(long, conflicts_with = "eval_only")]
    pub resume: bool,
    /// Save the state `--resume` continues from every N epochs.
    #[arg(long, default_value_t = 10, value_parser = at_least::<1>)]
    pub checkpoint_every: usize,
}

/// How far one seed's training has come: all but the tensors (the model, the optimizer's state
/// and the kept model, saved beside it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedProgress {
    pub seed: u64,
    /// Epochs done.
    pub epoch: usize,
    pub rows: Vec<EpochRow>,
    /// The early-stopping rule's state.
    pub stopping: EarlyStopping,
    /// The kept model's epoch, validation accuracy, validation loss and test accuracy.
    pub kept: (usize, f64, f64, f64),
    /// Seconds spent on this seed before this process.
    pub seconds: f64,
}

impl SeedProgress {
    /// A seed about to start, stopping by `setup`'s rule.
    pub fn new(seed: u64, setup: &Setup) -> SeedProgress {
        SeedProgress {
            seed,
            epoch: 0,
            rows: Vec::new(),
            stopping: EarlyStopping::new(setup.stopping),
            kept: (0, 0.0, f64::MAX, 0.0),
            seconds: 0.0,
        }
    }
}

/// What identifies a run: resuming another run's state is refused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunKey {
    pub example: String,
    pub dataset: String,
    pub backend: Backend,
    pub setup: Setup,
    pub seeds: u64,
    pub dense: bool,
}

/// The run so far: the finished seeds (their checkpoints are `seed-<N>.bpk` already) and the
/// seed in progress, if any.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub key: RunKey,
    pub done: Vec<SeedResult>,
    pub done_rows: Vec<EpochRow>,
    pub current: Option<SeedProgress>,
    /// Seconds of training before this process.
    pub seconds: f64,
}

/// The `resume/` directory of a run's output directory.
pub struct Resume {
    dir: PathBuf,
}

impl Resume {
    /// The resume state of the run writing into `out`.
    pub fn new(out: &Path) -> Resume {
        Resume {
            dir: out.join("resume"),
        }
    }

    /// The saved state for `key`, if there is one (exits with status 2 if it belongs to another
    /// run, 1 if it cannot be read).
    pub fn load(&self, key: &RunKey) -> Option<RunState> {
        let dir = self.readable_dir()?;
        let path = dir.join("state.json");
        let state: RunState = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
            .unwrap_or_else(|e| exit_with(1, format!("cannot read {}: {e}", path.display())));
        if &state.key != key {
            exit_with(
                2,
                format!(
                    "{} was saved by another run ({:?}); drop --resume to start this one afresh",
                    path.display(),
                    state.key
                ),
            );
        }
        Some(state)
    }

    /// `model`, the optimizer and `kept` restored from the saved seed in progress.
    pub fn restore<M: Module>(&self, model: M, kept: M) -> (M, ModuleOptimizer, M) {
        let dir = self.readable_dir().expect("a saved state");
        let optim = burn::optim::AdamConfig::new()
            .init()
            .load(dir.join("optim.bpk"))
            .unwrap_or_else(|e| exit_with(1, format!("cannot read {}: {e}", dir.display())));
        let model = load_checkpoint(model, &dir.join("model.bpk"));
        (model, optim, load_checkpoint(kept, &dir.join("kept.bpk")))
    }

    /// Saves `run`, `seconds` into it, with `progress` as its seed in progress, and the tensors
    /// that go with it.
    pub fn save<M: Module>(
        &self,
        run: &RunState,
        seconds: f64,
        progress: &SeedProgress,
        (model, optim, kept): (&M, &ModuleOptimizer, &M),
    ) {
        let mut state = run.clone();
        (state.current, state.seconds) = (Some(progress.clone()), seconds);
        self.write(&state, |tmp| {
            model
                .clone()
                .save_file(tmp.join("model.bpk"))
                .map_err(|e| e.to_string())?;
            kept.clone()
                .save_file(tmp.join("kept.bpk"))
                .map_err(|e| e.to_string())?;
            optim.save(tmp.join("optim.bpk")).map_err(|e| e.to_string())
        });
    }

    /// Saves `run`, `seconds` into it, between two seeds: the next one starts from its initial
    /// model.
    pub fn save_between_seeds(&self, run: &RunState, seconds: f64) {
        let state = RunState {
            seconds,
            ..run.clone()
        };
        self.write(&state, |_| Ok(()));
    }

    /// Writes `state` and what `tensors` writes into a fresh directory that then replaces the
    /// old one, so that a kill at any point leaves one complete state behind.
    fn write(&self, state: &RunState, tensors: impl FnOnce(&Path) -> Result<(), String>) {
        let tmp = self.dir.with_extension("tmp");
        let written = std::fs::create_dir_all(&tmp)
            .map_err(|e| e.to_string())
            .and_then(|_| tensors(&tmp))
            .and_then(|_| {
                let json = serde_json::to_string(state).map_err(|e| e.to_string())?;
                std::fs::write(tmp.join("state.json"), json).map_err(|e| e.to_string())
            })
            .and_then(|_| self.replace_with(&tmp));
        if let Err(e) = written {
            exit_with(
                1,
                format!("cannot save the resume state in {}: {e}", tmp.display()),
            );
        }
    }

    /// Removes the saved state (the run is complete, or starts afresh).
    pub fn clear(&self) {
        for dir in [self.dir.clone(), self.old(), self.dir.with_extension("tmp")] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir).unwrap_or_else(|e| {
                    exit_with(1, format!("cannot remove {}: {e}", dir.display()))
                });
            }
        }
    }

    /// Where the previous state waits while the new one takes its place.
    fn old(&self) -> PathBuf {
        self.dir.with_extension("old")
    }

    /// The directory holding the last complete state: `resume/`, or `resume.old/` when a kill
    /// came between the two renames of [`replace_with`](Self::replace_with).
    fn readable_dir(&self) -> Option<PathBuf> {
        [self.dir.clone(), self.old()]
            .into_iter()
            .find(|d| d.join("state.json").is_file())
    }

    /// `resume/` ← `tmp`, the previous state kept as `resume.old/` until the new one is in.
    fn replace_with(&self, tmp: &Path) -> Result<(), String> {
        let old = self.old();
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| e.to_string())?;
        }
        if self.dir.exists() {
            std::fs::rename(&self.dir, &old).map_err(|e| e.to_string())?;
        }
        std::fs::rename(tmp, &self.dir).map_err(|e| e.to_string())?;
        if old.exists() {
            std::fs::remove_dir_all(&old).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}
