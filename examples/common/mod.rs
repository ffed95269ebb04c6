//! What the node-classification examples share: data loading (download on first use),
//! training over seeds with early stopping, a progress bar, metrics (CSV + JSON), a training
//! curve plot (SVG) and checkpoints (Burn's burnpack records).
#![allow(dead_code)] // each example uses a part of it

pub mod large;
pub mod plot;
pub mod progress;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::{DATA_DIR_ENV, DownloadEvent, Planetoid, data_dir};
use burn_gnn_graph::{GraphsTuple, SparseMatrix};

pub use progress::Progress;

/// Prints `msg` and exits with status 1 (2 for usage errors).
pub fn exit_with(code: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("{msg}");
    std::process::exit(code)
}

/// The device of a backend name.
#[allow(deprecated)] // Device::ndarray: deprecated in Burn 0.22, still supported.
pub fn device(name: &str) -> Result<Device, String> {
    Ok(match name {
        "flex" => Device::flex(),
        "ndarray" => Device::ndarray(),
        #[cfg(feature = "wgpu")]
        "wgpu" => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => return Err("build with `--features wgpu` for the wgpu backend".into()),
        other => return Err(format!("unknown backend `{other}` (flex, ndarray, wgpu)")),
    })
}

/// Loads a Planetoid dataset: from `--data-dir` or `BURN_GNN_DATA_DIR` if given (nothing is
/// downloaded there), else from the cache `datasets/cache/planetoid`, downloading missing files
/// first with a progress bar.
pub fn planetoid(name: &str, explicit_dir: Option<PathBuf>) -> Planetoid {
    let given = explicit_dir.is_some() || std::env::var_os(DATA_DIR_ENV).is_some();
    let dir = data_dir(explicit_dir);
    let loaded = if given {
        Planetoid::load(name, &dir)
    } else {
        let mut bar: Option<Progress> = None;
        Planetoid::fetch(name, &dir, |event| match event {
            DownloadEvent::Start { file, total } => {
                bar = Some(Progress::new(
                    total.unwrap_or(0),
                    format!("downloading {file}"),
                ));
            }
            DownloadEvent::Progress { received } => {
                if let Some(b) = bar.as_mut() {
                    b.set(received, format!("{} kB", received / 1000));
                }
            }
            DownloadEvent::Done { file } => {
                if let Some(b) = bar.take() {
                    b.finish(format!("{file} verified"));
                }
            }
        })
    };
    loaded
        .unwrap_or_else(|e| exit_with(1, format!("cannot load {name} from {}: {e}", dir.display())))
}

/// Test/validation/training index tensors and the graph on the training and the evaluation
/// device.
pub struct Prepared {
    pub graph: GraphsTuple,
    pub x: Tensor<2>,
    /// `x` and `eval_x` as sparse matrices, unless `--dense`.
    pub sparse: Option<(SparseMatrix, SparseMatrix)>,
    pub train_idx: Tensor<1, Int>,
    pub train_labels: Tensor<1, Int>,
    pub eval_graph: GraphsTuple,
    pub eval_x: Tensor<2>,
    pub eval_labels: Tensor<1, Int>,
    pub val_idx: Tensor<1, Int>,
    pub test_idx: Tensor<1, Int>,
}

pub fn indices(mask: &[bool], device: &Device) -> Tensor<1, Int> {
    let v: Vec<i64> = (0..mask.len() as i64)
        .filter(|&i| mask[i as usize])
        .collect();
    let n = v.len();
    Tensor::from_data(TensorData::new(v, [n]), device)
}

impl Prepared {
    /// Puts `data` on `base` (evaluation) and `base.autodiff()` (training), edges sorted by
    /// receiver.
    pub fn new(data: &Planetoid, base: &Device, dense: bool) -> Prepared {
        let train_dev = base.clone().autodiff();
        let graph = data
            .graph(&train_dev)
            .expect("a loaded dataset is valid")
            .sort_by_receiver();
        let eval_graph = data
            .graph(base)
            .expect("a loaded dataset is valid")
            .sort_by_receiver();
        let train_idx = indices(&data.train_mask, &train_dev);
        let x = graph.node_tensor::<2>().expect("node features");
        let eval_x = eval_graph.node_tensor::<2>().expect("node features");
        Prepared {
            sparse: (!dense).then(|| {
                (
                    SparseMatrix::from_dense(&x),
                    SparseMatrix::from_dense(&eval_x),
                )
            }),
            x,
            train_labels: data.labels(&train_dev).select(0, train_idx.clone()),
            train_idx,
            graph,
            eval_x,
            eval_graph,
            eval_labels: data.labels(base),
            val_idx: indices(&data.val_mask, base),
            test_idx: indices(&data.test_mask, base),
        }
    }
}

/// Accuracy of `logits` on the rows `idx`.
pub fn accuracy(logits: Tensor<2>, labels: &Tensor<1, Int>, idx: &Tensor<1, Int>) -> f64 {
    fraction_right(
        logits.select(0, idx.clone()),
        labels.clone().select(0, idx.clone()),
    )
}

/// The fraction of rows of `logits` whose argmax is the row's label.
pub fn fraction_right(logits: Tensor<2>, labels: Tensor<1, Int>) -> f64 {
    let rows = labels.dims()[0];
    let pred = logits.argmax(1).squeeze_dim::<1>(1);
    let right = pred.equal(labels).int().sum().into_scalar::<i64>();
    right as f64 / rows as f64
}

/// A model the node-classification loop trains.
pub trait NodeClassifier: Module + Clone {
    /// Logits `[N, classes]`.
    fn logits(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2>;
    /// Logits from sparse features (the models' `forward_sparse`); dense by default.
    fn logits_sparse(&self, x: &SparseMatrix, graph: &GraphsTuple) -> Tensor<2> {
        self.logits(x.to_dense(), graph)
    }
    /// `Σ w²` over the parameters that get weight decay.
    fn decayed(&self) -> Tensor<1>;
}

/// When to stop and which epoch's model to keep.
#[derive(Clone, Copy, Debug)]
pub enum Stopping {
    /// The GAT reference code: patience restarts when validation accuracy reaches its maximum
    /// or validation loss its minimum; the model is kept when both are at least as good.
    GatReference { patience: usize },
    /// The GCN reference code: stop once validation loss exceeds the mean of the previous
    /// `window` epochs; keep the last model.
    KipfWindow { window: usize },
    /// PyG's examples: run every epoch, keep the first model with the highest validation
    /// accuracy.
    BestValAcc,
}

/// Optimisation settings.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub lr: f64,
    /// L2 coefficient `λ` of `λ/2 · Σ w²` over [`NodeClassifier::decayed`].
    pub weight_decay: f64,
    pub epochs: usize,
    pub stopping: Stopping,
}

/// One epoch's figures.
#[derive(Clone, Debug)]
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
#[derive(Clone, Debug)]
pub struct SeedResult {
    pub seed: u64,
    pub best_epoch: usize,
    pub epochs_run: usize,
    pub val_acc: f64,
    pub val_loss: f64,
    pub test_acc: f64,
    pub seconds: f64,
}

/// Validation loss, validation accuracy and test accuracy of `model` (evaluation mode).
pub fn evaluate<M: NodeClassifier>(model: &M, p: &Prepared) -> (f64, f64, f64) {
    let logits = match &p.sparse {
        Some((_, x)) => model.logits_sparse(x, &p.eval_graph),
        None => model.logits(p.eval_x.clone(), &p.eval_graph),
    };
    let loss = CrossEntropyLossConfig::new()
        .init(&p.eval_x.device())
        .forward(
            logits.clone().select(0, p.val_idx.clone()),
            p.eval_labels.clone().select(0, p.val_idx.clone()),
        );
    (
        loss.into_scalar::<f64>(),
        accuracy(logits.clone(), &p.eval_labels, &p.val_idx),
        accuracy(logits, &p.eval_labels, &p.test_idx),
    )
}

/// Trains `model` for one seed; returns the kept model (see [`Stopping`]), its figures and the
/// per-epoch rows. `bar` shows progress.
pub fn train_seed<M: NodeClassifier>(
    mut model: M,
    seed: u64,
    setup: &Setup,
    p: &Prepared,
    bar: &mut Progress,
) -> (M, SeedResult, Vec<EpochRow>) {
    let start = Instant::now();
    let loss_fn = CrossEntropyLossConfig::new().init(&p.x.device());
    let mut optim = AdamConfig::new().init();
    let (mut acc_max, mut loss_min) = (f64::MIN, f64::MAX);
    let mut since_best = 0;
    let mut rows: Vec<EpochRow> = Vec::new();
    let mut kept = (model.clone(), 0usize, 0.0, f64::MAX, 0.0);
    for epoch in 1..=setup.epochs {
        // ANCHOR: step
        let logits = match &p.sparse {
            Some((x, _)) => model.logits_sparse(x, &p.graph),
            None => model.logits(p.x.clone(), &p.graph),
        };
        let train_logits = logits.select(0, p.train_idx.clone());
        let train_acc = fraction_right(train_logits.clone(), p.train_labels.clone());
        let ce = loss_fn.forward(train_logits, p.train_labels.clone());
        let train_loss = ce.clone().into_scalar::<f64>();
        let loss = ce + model.decayed() * (setup.weight_decay / 2.0);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(setup.lr, model, grads);
        // ANCHOR_END: step

        let eval = model.valid();
        let (val_loss, val_acc, test_acc) = evaluate(&eval, p);
        rows.push(EpochRow {
            seed,
            epoch,
            train_loss,
            train_acc,
            val_loss,
            val_acc,
            test_acc,
        });
        bar.set(
            epoch as u64,
            format!("loss {train_loss:.3}  val acc {val_acc:.3}  val loss {val_loss:.3}"),
        );
        let stop = match setup.stopping {
            // ANCHOR: stopping
            Stopping::GatReference { patience } => {
                if val_acc >= acc_max || val_loss <= loss_min {
                    if val_acc >= acc_max && val_loss <= loss_min {
                        kept = (eval, epoch, val_acc, val_loss, test_acc);
                    }
                    acc_max = acc_max.max(val_acc);
                    loss_min = loss_min.min(val_loss);
                    since_best = 0;
                    false
                } else {
                    since_best += 1;
                    since_best >= patience
                }
            }
            // ANCHOR_END: stopping
            Stopping::BestValAcc => {
                if val_acc > acc_max {
                    acc_max = val_acc;
                    kept = (eval, epoch, val_acc, val_loss, test_acc);
                }
                false
            }
            Stopping::KipfWindow { window } => {
                kept = (eval, epoch, val_acc, val_loss, test_acc);
                epoch > window && {
                    let prev = &rows[rows.len() - 1 - window..rows.len() - 1];
                    val_loss > prev.iter().map(|r| r.val_loss).sum::<f64>() / window as f64
                }
            }
        };
        if stop {
            break;
        }
    }
    let (kept_model, best_epoch, val_acc, val_loss, test_acc) = kept;
    let result = SeedResult {
        seed,
        best_epoch,
        epochs_run: rows.len(),
        val_acc,
        val_loss,
        test_acc,
        seconds: start.elapsed().as_secs_f64(),
    };
    (kept_model, result, rows)
}

/// Mean and (population) standard deviation.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / v.len() as f64;
    (mean, var.sqrt())
}

/// Writes the per-epoch rows as CSV.
pub fn write_csv(path: &Path, rows: &[EpochRow]) -> std::io::Result<()> {
    let mut s = String::from("seed,epoch,train_loss,train_acc,val_loss,val_acc,test_acc\n");
    for r in rows {
        s += &format!(
            "{},{},{:.6},{:.4},{:.6},{:.4},{:.4}\n",
            r.seed, r.epoch, r.train_loss, r.train_acc, r.val_loss, r.val_acc, r.test_acc
        );
    }
    std::fs::write(path, s)
}

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

    /// The checkpoint path of `seed`.
    pub fn checkpoint(&self, seed: u64) -> PathBuf {
        self.dir.join(format!("seed-{seed}.bpk"))
    }

    /// Saves a model with Burn's record system (burnpack).
    pub fn save_model<M: Module>(&self, model: M, seed: u64) -> PathBuf {
        let path = self.checkpoint(seed);
        model
            .save_file(&path)
            .unwrap_or_else(|e| exit_with(1, format!("cannot save {}: {e}", path.display())));
        path
    }

    /// Writes the metrics, the summary and the plot; returns their paths.
    pub fn write_all(
        &self,
        title: &str,
        summary: serde_json::Value,
        rows: &[EpochRow],
    ) -> Vec<PathBuf> {
        let (csv, json, svg) = (
            self.dir.join("metrics.csv"),
            self.dir.join("summary.json"),
            self.dir.join("curves.svg"),
        );
        let written = write_csv(&csv, rows)
            .and_then(|_| {
                std::fs::write(
                    &json,
                    serde_json::to_string_pretty(&summary).expect("JSON") + "\n",
                )
            })
            .and_then(|_| std::fs::write(&svg, plot::curves_svg(title, rows)));
        if let Err(e) = written {
            exit_with(1, format!("cannot write to {}: {e}", self.dir.display()));
        }
        vec![csv, json, svg]
    }
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

/// Whether stderr is a terminal (progress bars redraw in place there).
pub fn interactive() -> bool {
    std::io::stderr().is_terminal()
}

/// The flags the node-classification examples share.
pub struct Args {
    pub dataset: String,
    pub backend: String,
    pub epochs: usize,
    pub seeds: usize,
    pub patience: usize,
    pub data_dir: Option<PathBuf>,
    pub out: PathBuf,
    pub eval_only: bool,
    pub checkpoint: Option<PathBuf>,
    /// Dense input features instead of the sparse first layer.
    pub dense: bool,
}

/// Parses the shared flags; `example` names the program in messages and the default `--out`.
pub fn parse_args(example: &str, epochs: usize, patience: usize) -> Args {
    let usage = format!(
        "usage: {example} [--dataset cora|citeseer|pubmed] [--backend flex|ndarray|wgpu] [--epochs N] \
         [--seeds N] [--patience N] [--data-dir DIR] [--out DIR] [--eval-only --checkpoint FILE] [--dense]"
    );
    let mut a = Args {
        dataset: "cora".into(),
        backend: "flex".into(),
        epochs,
        seeds: 10,
        patience,
        data_dir: None,
        out: PathBuf::new(),
        eval_only: false,
        checkpoint: None,
        dense: false,
    };
    let mut out = None;
    let mut it = std::env::args().skip(1);
    let result: Result<(), String> = (|| {
        while let Some(flag) = it.next() {
            let mut value = || it.next().ok_or(format!("{flag} needs a value"));
            let number = |v: String| {
                v.parse::<usize>()
                    .map_err(|_| format!("{flag} takes a number, got `{v}`"))
            };
            match flag.as_str() {
                "--dataset" => a.dataset = value()?.to_ascii_lowercase(),
                "--backend" => a.backend = value()?,
                "--epochs" => a.epochs = number(value()?)?,
                "--seeds" => a.seeds = number(value()?)?,
                "--patience" => a.patience = number(value()?)?,
                "--data-dir" => a.data_dir = Some(PathBuf::from(value()?)),
                "--out" => out = Some(PathBuf::from(value()?)),
                "--eval-only" => a.eval_only = true,
                "--dense" => a.dense = true,
                "--checkpoint" => a.checkpoint = Some(PathBuf::from(value()?)),
                "-h" | "--help" => return Err(usage.clone()),
                other => return Err(format!("unknown flag `{other}`\n{usage}")),
            }
        }
        if a.seeds == 0 || a.epochs == 0 {
            return Err("--seeds and --epochs must be at least 1".into());
        }
        if a.eval_only != a.checkpoint.is_some() {
            return Err("--eval-only and --checkpoint FILE go together".into());
        }
        Ok(())
    })();
    if let Err(e) = result {
        exit_with(2, e);
    }
    a.out = out.unwrap_or_else(|| PathBuf::from(format!("runs/{example}-{}", a.dataset)));
    a
}

/// Runs a node-classification example: either `--eval-only` on a checkpoint, or training over
/// seeds with a progress bar, a final table, metrics, plot and checkpoints. `make` builds the
/// model for a dataset on a device.
pub fn run_node_classification<M: NodeClassifier>(
    example: &str,
    paper: &str,
    args: &Args,
    setup: Setup,
    make: impl Fn(&Planetoid, &Device) -> M,
) {
    let base = device(&args.backend).unwrap_or_else(|e| exit_with(2, e));
    let mut data = planetoid(&args.dataset, args.data_dir.clone());
    data.row_normalize();
    println!(
        "{}: {} nodes, {} edges, {} features, {} classes; train/val/test {}/{}/{}",
        data.name,
        data.num_nodes,
        data.senders.len(),
        data.num_features,
        data.num_classes,
        data.train_mask.iter().filter(|&&m| m).count(),
        data.val_mask.iter().filter(|&&m| m).count(),
        data.test_mask.iter().filter(|&&m| m).count()
    );
    let p = Prepared::new(&data, &base, args.dense);
    if let Some(path) = &args.checkpoint {
        let model = load_checkpoint(make(&data, &base), path).valid();
        let (val_loss, val_acc, test_acc) = evaluate(&model, &p);
        println!(
            "{}: val acc {val_acc:.4}  val loss {val_loss:.4}  test acc {test_acc:.4}",
            path.display()
        );
        check_against_summary(path, &args.backend, (val_acc, test_acc));
        return;
    }
    let outputs = Outputs::create(args.out.clone());
    let train_dev = base.clone().autodiff();
    let (mut results, mut all_rows) = (Vec::new(), Vec::new());
    let run_start = Instant::now();
    for seed in 0..args.seeds as u64 {
        train_dev.seed(seed);
        let model = make(&data, &train_dev);
        let mut bar = Progress::new(
            setup.epochs as u64,
            format!("seed {}/{}", seed + 1, args.seeds),
        );
        let (kept, r, rows) = train_seed(model, seed, &setup, &p, &mut bar);
        bar.finish(format!(
            "kept epoch {} of {}: val acc {:.3}, test acc {:.3}",
            r.best_epoch, r.epochs_run, r.val_acc, r.test_acc
        ));
        outputs.save_model(kept, seed);
        results.push(r);
        all_rows.extend(rows);
    }
    println!("\n seed | kept epoch | epochs | val acc | val loss | test acc | seconds");
    for r in &results {
        println!(
            " {:>4} | {:>10} | {:>6} | {:>7.3} | {:>8.4} | {:>8.3} | {:>7.1}",
            r.seed, r.best_epoch, r.epochs_run, r.val_acc, r.val_loss, r.test_acc, r.seconds
        );
    }
    let tests: Vec<f64> = results.iter().map(|r| r.test_acc).collect();
    let (mean, std) = mean_std(&tests);
    let total = run_start.elapsed().as_secs_f64();
    println!(
        "\n{} test accuracy over {} seed(s): {:.1} ± {:.1} %  ({paper}); {:.0} s in all",
        data.name,
        tests.len(),
        100.0 * mean,
        100.0 * std,
        total
    );
    let summary = serde_json::json!({
        "example": example,
        "dataset": data.name,
        "backend": args.backend,
        "setup": { "lr": setup.lr, "weight_decay": setup.weight_decay, "epochs": setup.epochs,
                   "stopping": format!("{:?}", setup.stopping) },
        "test_acc_mean": mean,
        "test_acc_std": std,
        "seconds": total,
        "seeds": results.iter().map(|r| serde_json::json!({
            "seed": r.seed, "kept_epoch": r.best_epoch, "epochs_run": r.epochs_run,
            "val_acc": r.val_acc, "val_loss": r.val_loss, "test_acc": r.test_acc,
            "seconds": r.seconds, "checkpoint": outputs.checkpoint(r.seed),
        })).collect::<Vec<_>>(),
    });
    let written = outputs.write_all(&format!("{example} on {}", data.name), summary, &all_rows);
    println!(
        "wrote {} and {} checkpoint(s) {}",
        written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        results.len(),
        outputs
            .checkpoint(0)
            .with_file_name("seed-<N>.bpk")
            .display()
    );
}

/// After `--eval-only`: when the checkpoint's run left a `summary.json` beside it, compares the
/// reloaded model's accuracies with the ones recorded at training time (exits with 1 on a
/// mismatch on the same backend: the checkpoint did not round-trip).
pub fn check_against_summary(checkpoint: &Path, backend: &str, (val_acc, test_acc): (f64, f64)) {
    let summary = checkpoint.with_file_name("summary.json");
    let Ok(text) = std::fs::read_to_string(&summary) else {
        return;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    let name = checkpoint
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let Some(entry) = json["seeds"].as_array().and_then(|seeds| {
        seeds
            .iter()
            .find(|s| s["checkpoint"].as_str().is_some_and(|c| c.ends_with(name)))
    }) else {
        return;
    };
    let recorded = (entry["val_acc"].as_f64(), entry["test_acc"].as_f64());
    if recorded == (Some(val_acc), Some(test_acc)) {
        println!(
            "matches the accuracies recorded when it was trained ({})",
            summary.display()
        );
    } else if json["backend"].as_str() == Some(backend) {
        exit_with(
            1,
            format!(
                "the reloaded model differs from the training run: {} recorded {recorded:?}",
                summary.display()
            ),
        );
    } else {
        println!("trained on another backend; recorded accuracies {recorded:?}");
    }
}
