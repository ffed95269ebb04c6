//! The node-classification runner of `gat_cora`, `gcn_cora` and `hetero_academic`: training over
//! seeds stopped by the library's `EarlyStopping`, progress bars, `--resume`, `--eval-only`, and
//! the outputs of `record`, for any model input (a Planetoid graph, a heterogeneous graph).

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn::train::accuracy;
use burn_gnn_data::Planetoid;

use super::cli::Backend;
use super::output::{Outputs, load_checkpoint};
use super::progress::Progress;
use super::record::{EpochRow, SeedResult, Setup, Summary, verify_checkpoint};
use super::resume::{Resume, ResumeArgs, RunKey, RunState, SeedProgress};

/// A model's input on the training and on the evaluation device, the labels and the splits.
pub struct Prepared<D> {
    /// The training device: `base.autodiff()`.
    pub train_dev: Device,
    /// The input on the training device.
    pub train: D,
    /// The input on the evaluation device.
    pub eval: D,
    pub train_idx: Tensor<1, Int>,
    pub train_labels: Tensor<1, Int>,
    pub eval_labels: Tensor<1, Int>,
    pub val_idx: Tensor<1, Int>,
    pub test_idx: Tensor<1, Int>,
}

impl<D> Prepared<D> {
    /// `input` built on `base.autodiff()` (training) and `base` (evaluation), with the labels
    /// `labels` of the classified nodes and their train, validation and test masks.
    pub fn new(
        input: impl Fn(&Device) -> D,
        labels: impl Fn(&Device) -> Tensor<1, Int>,
        [train, val, test]: [&[bool]; 3],
        base: &Device,
    ) -> Prepared<D> {
        let train_dev = base.clone().autodiff();
        let train_idx = Planetoid::mask_indices(train, &train_dev);
        Prepared {
            train: input(&train_dev),
            eval: input(base),
            train_labels: labels(&train_dev).select(0, train_idx.clone()),
            train_idx,
            eval_labels: labels(base),
            val_idx: Planetoid::mask_indices(val, base),
            test_idx: Planetoid::mask_indices(test, base),
            train_dev,
        }
    }
}

// ANCHOR: classifier
/// A model the node-classification loop trains on inputs `D`.
pub trait NodeClassifier<D>: Module + Clone {
    /// Logits `[N, classes]` of the classified nodes.
    fn logits(&self, input: &D) -> Tensor<2>;
    /// `Σ w²` over the parameters that get weight decay.
    fn decayed(&self) -> Tensor<1>;
}

// ANCHOR_END: classifier

/// Validation loss, validation accuracy and test accuracy of `model` (evaluation mode).
pub fn evaluate<D, M: NodeClassifier<D>>(model: &M, p: &Prepared<D>) -> (f64, f64, f64) {
    let logits = model.logits(&p.eval);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(
            logits.clone().select(0, p.val_idx.clone()),
            p.eval_labels.clone().select(0, p.val_idx.clone()),
        );
    let split = |idx: &Tensor<1, Int>| {
        let labels = p.eval_labels.clone().select(0, idx.clone());
        accuracy(logits.clone().select(0, idx.clone()), labels)
    };
    (
        loss.into_scalar::<f64>(),
        split(&p.val_idx),
        split(&p.test_idx),
    )
}

/// Trains one seed from `progress` on (a fresh [`SeedProgress`] or a resumed one), with
/// `model`, `optim` and `kept` as they were then; returns the kept model (by `setup.stopping`),
/// its figures and the per-epoch rows. Every epoch's dropout draws come from a seed of their
/// own, so a resumed seed continues exactly. `save` is called every `every` epochs; `bar`
/// shows progress.
#[allow(clippy::too_many_arguments)]
pub fn train_seed<D, M: NodeClassifier<D>>(
    (mut model, mut optim, mut kept): (M, ModuleOptimizer, M),
    mut progress: SeedProgress,
    setup: &Setup,
    p: &Prepared<D>,
    train_dev: &Device,
    every: usize,
    bar: &mut Progress,
    mut save: impl FnMut(&SeedProgress, (&M, &ModuleOptimizer, &M)),
) -> (M, SeedResult, Vec<EpochRow>) {
    let start = Instant::now();
    let loss_fn = CrossEntropyLossConfig::new().init(train_dev);
    let seed = progress.seed;
    bar.set(progress.epoch as u64, "");
    for epoch in progress.epoch + 1..=setup.epochs {
        train_dev.seed(epoch_seed(seed, epoch));
        // ANCHOR: step
        let train_logits = model.logits(&p.train).select(0, p.train_idx.clone());
        let train_acc = accuracy(train_logits.clone(), p.train_labels.clone());
        let ce = loss_fn.forward(train_logits, p.train_labels.clone());
        let train_loss = ce.clone().into_scalar::<f64>();
        let loss = ce + model.decayed() * (setup.weight_decay / 2.0);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(setup.lr, model, grads);
        // ANCHOR_END: step

        let eval = model.valid();
        let (val_loss, val_acc, test_acc) = evaluate(&eval, p);
        progress.rows.push(EpochRow {
            seed,
            epoch,
            train_loss,
            train_acc,
            val_loss,
            val_acc,
            test_acc,
        });
        progress.epoch = epoch;
        bar.set(
            epoch as u64,
            format!("loss {train_loss:.3}  val acc {val_acc:.3}  val loss {val_loss:.3}"),
        );
        let verdict = progress.stopping.observe(val_acc, val_loss);
        if verdict.keep {
            (kept, progress.kept) = (eval, (epoch, val_acc, val_loss, test_acc));
        }
        if verdict.stop {
            break;
        }
        if epoch % every == 0 && epoch < setup.epochs {
            let mut snapshot = progress.clone();
            snapshot.seconds += start.elapsed().as_secs_f64();
            save(&snapshot, (&model, &optim, &kept));
        }
    }
    let (kept_epoch, val_acc, val_loss, test_acc) = progress.kept;
    let result = SeedResult {
        seed,
        kept_epoch,
        epochs_run: progress.rows.len(),
        val_acc,
        val_loss,
        test_acc,
        seconds: progress.seconds + start.elapsed().as_secs_f64(),
        checkpoint: None,
    };
    (kept, result, progress.rows)
}

/// The seed of epoch `epoch`'s random draws in seed `seed`'s run.
fn epoch_seed(seed: u64, epoch: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ epoch as u64
}

/// `--eval-only`: the checkpoint at `path` loaded into `model`, evaluated and checked against
/// the `summary.json` beside it.
pub fn evaluate_checkpoint<D, M: NodeClassifier<D>>(
    model: M,
    p: &Prepared<D>,
    path: &Path,
    backend: Backend,
) {
    let model = load_checkpoint(model, path).valid();
    let (val_loss, val_acc, test_acc) = evaluate(&model, p);
    println!(
        "{}: val acc {val_acc:.4}  val loss {val_loss:.4}  test acc {test_acc:.4}",
        path.display()
    );
    verify_checkpoint(path, backend, (val_acc, test_acc));
}

/// What identifies a training run to [`train_seeds`]: its names, where it writes, and whether it
/// resumes.
pub struct RunSpec<'a> {
    pub example: &'a str,
    /// The paper's figures, printed under the table.
    pub paper: &'a str,
    /// What is classified (a dataset's name, a generated graph's description).
    pub dataset: String,
    pub backend: Backend,
    pub seeds: u64,
    pub dense: bool,
    pub out: PathBuf,
    pub resume: ResumeArgs,
}

/// Trains seeds `0..spec.seeds` (resuming the last save with `--resume`), each model made by
/// `make` on the training device after seeding it; prints the table and writes the outputs.
pub fn train_seeds<D, M: NodeClassifier<D>>(
    spec: &RunSpec,
    setup: Setup,
    p: &Prepared<D>,
    make: impl Fn(&Device) -> M,
) {
    let outputs = Outputs::create(spec.out.clone());
    let train_dev = &p.train_dev;
    let resume = Resume::new(&outputs.dir);
    let key = RunKey {
        example: spec.example.into(),
        dataset: spec.dataset.clone(),
        backend: spec.backend,
        setup,
        seeds: spec.seeds,
        dense: spec.dense,
    };
    let args = &spec.resume;
    let saved = if args.resume {
        resume.load(&key)
    } else {
        resume.clear();
        None
    };
    let mut run = saved.unwrap_or_else(|| RunState {
        key,
        done: Vec::new(),
        done_rows: Vec::new(),
        current: None,
        seconds: 0.0,
    });
    let run_start = Instant::now();
    if args.resume && run.done.is_empty() && run.current.is_none() {
        println!(
            "nothing to resume in {}: starting afresh",
            outputs.dir.display()
        );
    } else if args.resume {
        let epoch = run.current.as_ref().map_or(0, |c| c.epoch);
        println!("resuming at seed {}, epoch {epoch}", run.done.len());
    }
    // Training time of this run so far, earlier processes included.
    let seconds = |run: &RunState| run.seconds + run_start.elapsed().as_secs_f64();
    for seed in run.done.len() as u64..spec.seeds {
        train_dev.seed(seed);
        let model = make(train_dev);
        let (tensors, progress) = match run.current.take() {
            Some(progress) => (resume.restore(model.clone(), model), progress),
            None => (
                (model.clone(), AdamConfig::new().init(), model),
                SeedProgress::new(seed, &setup),
            ),
        };
        let mut bar = Progress::new(
            setup.epochs as u64,
            format!("seed {}/{}", seed + 1, spec.seeds),
        );
        let save = |progress: &SeedProgress, tensors: (&M, &ModuleOptimizer, &M)| {
            resume.save(&run, seconds(&run), progress, tensors)
        };
        let (kept, mut r, rows) = train_seed(
            tensors,
            progress,
            &setup,
            p,
            train_dev,
            args.checkpoint_every,
            &mut bar,
            save,
        );
        bar.finish(format!(
            "kept epoch {} of {}: val acc {:.3}, test acc {:.3}",
            r.kept_epoch, r.epochs_run, r.val_acc, r.test_acc
        ));
        r.checkpoint = Some(outputs.save_model(kept, seed));
        run.done.push(r);
        run.done_rows.extend(rows);
        if seed + 1 < spec.seeds {
            // The next seed starts from its initial model: the state alone says where.
            resume.save_between_seeds(&run, seconds(&run));
        }
    }
    let seconds = seconds(&run);
    let example = spec.example;
    let summary = Summary::new(
        example,
        &spec.dataset,
        spec.backend,
        &setup,
        run.done,
        seconds,
    );
    summary.print(spec.paper, "seed");
    outputs.write_all(
        &format!("{example} on {}", spec.dataset),
        &summary,
        &run.done_rows,
    );
    resume.clear();
}
