//! The node-classification runner of `gat_cora` and `gcn_cora`: a Planetoid dataset loaded
//! (embedded or downloaded), training over seeds stopped by the library's `EarlyStopping`,
//! progress bars, `--resume`, and the outputs of `record`.

use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn::train::accuracy;
use burn_gnn_data::Planetoid;
use burn_gnn_graph::{GraphsTuple, SparseMatrix};
use burn_gnn_nn::{Gat, Gcn};

use super::node_args::NodeArgs;
use super::output::{Outputs, load_checkpoint};
use super::planetoid::planetoid;
use super::progress::Progress;
use super::record::{EpochRow, SeedResult, Setup, Summary, verify_checkpoint};
use super::resume::{Resume, RunKey, RunState, SeedProgress};

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
        let train_idx = Planetoid::mask_indices(&data.train_mask, &train_dev);
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
            val_idx: Planetoid::mask_indices(&data.val_mask, base),
            test_idx: Planetoid::mask_indices(&data.test_mask, base),
        }
    }
}

// ANCHOR: classifier
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

// The library's GAT and GCN: sparse first layers, and the L2 term of their papers.
macro_rules! node_classifier {
    ($($model:ty),*) => {$(
        impl NodeClassifier for $model {
            fn logits(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
                self.forward(x, graph)
            }
            fn logits_sparse(&self, x: &SparseMatrix, graph: &GraphsTuple) -> Tensor<2> {
                self.forward_sparse(x, graph)
            }
            fn decayed(&self) -> Tensor<1> {
                self.decayed_norm_sq()
            }
        }
    )*};
}
node_classifier!(Gat, Gcn);
// ANCHOR_END: classifier

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
pub fn train_seed<M: NodeClassifier>(
    (mut model, mut optim, mut kept): (M, ModuleOptimizer, M),
    mut progress: SeedProgress,
    setup: &Setup,
    p: &Prepared,
    train_dev: &Device,
    every: usize,
    bar: &mut Progress,
    mut save: impl FnMut(&SeedProgress, (&M, &ModuleOptimizer, &M)),
) -> (M, SeedResult, Vec<EpochRow>) {
    let start = Instant::now();
    let loss_fn = CrossEntropyLossConfig::new().init(&p.x.device());
    let seed = progress.seed;
    bar.set(progress.epoch as u64, "");
    for epoch in progress.epoch + 1..=setup.epochs {
        train_dev.seed(epoch_seed(seed, epoch));
        // ANCHOR: step
        let logits = match &p.sparse {
            Some((x, _)) => model.logits_sparse(x, &p.graph),
            None => model.logits(p.x.clone(), &p.graph),
        };
        let train_logits = logits.select(0, p.train_idx.clone());
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

/// Runs a node-classification example: either `--eval-only` on a checkpoint, or training over
/// seeds with a progress bar each, a final table, metrics, plot and checkpoints. `make` builds
/// the model for a dataset on a device.
pub fn run_node_classification<M: NodeClassifier>(
    example: &str,
    paper: &str,
    args: &NodeArgs,
    setup: Setup,
    make: impl Fn(&Planetoid, &Device) -> M,
) {
    let base = args.backend.device_or_exit();
    let mut data = planetoid(args.dataset, args.data_dir.as_deref());
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
    if let Some(path) = &args.run.checkpoint {
        let model = load_checkpoint(make(&data, &base), path).valid();
        let (val_loss, val_acc, test_acc) = evaluate(&model, &p);
        println!(
            "{}: val acc {val_acc:.4}  val loss {val_loss:.4}  test acc {test_acc:.4}",
            path.display()
        );
        verify_checkpoint(path, args.backend, (val_acc, test_acc));
        return;
    }
    let outputs = Outputs::create(args.out_dir(example));
    let train_dev = base.clone().autodiff();
    let resume = Resume::new(&outputs.dir);
    let key = RunKey {
        example: example.into(),
        dataset: data.name.clone(),
        backend: args.backend,
        setup,
        seeds: args.seeds,
        dense: args.dense,
    };
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
    for seed in run.done.len() as u64..args.seeds {
        train_dev.seed(seed);
        let model = make(&data, &train_dev);
        let (tensors, progress) = match run.current.take() {
            Some(progress) => (resume.restore(model.clone(), model), progress),
            None => (
                (model.clone(), AdamConfig::new().init(), model),
                SeedProgress::new(seed, &setup),
            ),
        };
        let mut bar = Progress::new(
            setup.epochs as u64,
            format!("seed {}/{}", seed + 1, args.seeds),
        );
        let save = |progress: &SeedProgress, tensors: (&M, &ModuleOptimizer, &M)| {
            resume.save(&run, seconds(&run), progress, tensors)
        };
        let (kept, mut r, rows) = train_seed(
            tensors,
            progress,
            &setup,
            &p,
            &train_dev,
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
        if seed + 1 < args.seeds {
            // The next seed starts from its initial model: the state alone says where.
            resume.save_between_seeds(&run, seconds(&run));
        }
    }
    let seconds = seconds(&run);
    let summary = Summary::new(example, &data.name, args.backend, &setup, run.done, seconds);
    summary.print(paper, "seed");
    outputs.write_all(
        &format!("{example} on {}", data.name),
        &summary,
        &run.done_rows,
    );
    resume.clear();
}
