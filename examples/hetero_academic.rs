//! Node classification on a heterogeneous graph: the topic of each paper in a generated
//! academic graph (papers, authors, venues; writes / published_in / cites and their reverses),
//! where a paper's own features carry a weak signal and its venue and authors a strong one.
//! Compares heterogeneous GraphSAGE, RGCN, HGT, HAN and a graph-blind MLP.
//!
//! ```sh
//! cargo run --release --example hetero_academic                  # heterogeneous GraphSAGE
//! cargo run --release --example hetero_academic -- --model hgt --seeds 3
//! cargo run --release --example hetero_academic -- --model mlp   # features only: the floor
//! cargo run --release --example hetero_academic -- --eval-only --checkpoint runs/hetero_academic-sage/seed-0.bpk
//! ```
//!
//! Setup: 2 layers of 64 hidden features (HAN: one layer, 8 heads), ReLU, dropout 0.5, Adam
//! (lr 0.01, weight decay 5e-4), full-batch, keeping the epoch with the best validation
//! accuracy. Papers are split 20 / 20 / 60 % into train / validation / test. Metrics
//! (`metrics.csv`, `summary.json`), curves (`curves.svg`) and a checkpoint per seed go to
//! `--out` (default `runs/hetero_academic-<model>`).

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
    pub mod output;
    pub mod plot;
    pub mod progress;
    pub mod record;
}

use std::path::PathBuf;
use std::time::Instant;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::optim::decay::WeightDecayConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Int, Tensor};
use burn_gnn::train::{EarlyStopping, StoppingRule, accuracy};
use burn_gnn_data::{Academic, AcademicConfig, Planetoid};
use burn_gnn_graph::{EDGE_TYPE, FeatureSetKind, GraphsTuple, HeteroGraph};
use burn_gnn_nn::{
    HanConvConfig, HeteroLayer, HeteroSageConfig, HgtConvConfig, NodeFeatures, RgcnConv,
    RgcnConvConfig,
};
use clap::{Parser, ValueEnum};
use common::cli::{Backend, RunArgs, at_least, exit_with};
use common::output::{Outputs, load_checkpoint};
use common::progress::Progress;
use common::record::{EpochRow, SeedResult, Setup, Summary, verify_checkpoint};

const HIDDEN: usize = 64;

/// The graph on one device, with its homogeneous form for RGCN.
struct Data {
    graph: HeteroGraph,
    x: NodeFeatures,
    homogeneous: GraphsTuple,
    edge_type: Tensor<1, Int>,
    labels: Tensor<1, Int>,
    train: Tensor<1, Int>,
    val: Tensor<1, Int>,
    test: Tensor<1, Int>,
}

impl Data {
    fn new(a: &Academic, device: &Device) -> Data {
        let graph = a.graph(device).expect("a generated graph is valid");
        let homogeneous = graph.to_homogeneous().expect("homogeneous form");
        let edge_type = homogeneous
            .feature(FeatureSetKind::Edges, EDGE_TYPE)
            .and_then(|f| f.int::<1>())
            .expect("edge types");
        Data {
            x: graph.x_dict(),
            graph,
            homogeneous,
            edge_type,
            labels: a.labels(device),
            train: Planetoid::mask_indices(&a.train_mask, device),
            val: Planetoid::mask_indices(&a.val_mask, device),
            test: Planetoid::mask_indices(&a.test_mask, device),
        }
    }
}

/// A model that gives paper logits `[papers, topics]`.
trait PaperClassifier: Module + Clone {
    fn logits(&self, d: &Data) -> Tensor<2>;
}

// ANCHOR: models
/// Heterogeneous layers (`HeteroSage`, `HgtConv` or `HanConv`) with ReLU and dropout, then a
/// linear head on the papers.
#[derive(Module, Debug)]
struct Stack<L: Module> {
    layers: Vec<L>,
    head: Linear,
    dropout: Dropout,
}

impl<L: Module + burn::module::ModuleDisplay + HeteroLayer> PaperClassifier for Stack<L> {
    fn logits(&self, d: &Data) -> Tensor<2> {
        let mut h = d.x.clone();
        for layer in &self.layers {
            let out = layer
                .forward_hetero(&h, &d.graph)
                .expect("every type has features");
            h = out
                .into_iter()
                .map(|(t, v)| (t, self.dropout.forward(relu(v))))
                .collect();
        }
        self.head.forward(h.remove("paper").expect("papers"))
    }
}

/// Two RGCN layers (basis decomposition, 4 bases) on the homogeneous form of the graph.
#[derive(Module, Debug)]
struct Rgcn {
    layers: Vec<RgcnConv>,
    head: Linear,
    dropout: Dropout,
}

impl PaperClassifier for Rgcn {
    fn logits(&self, d: &Data) -> Tensor<2> {
        let mut h = d.graph.nodes_to_homogeneous(&d.x).expect("same widths");
        for layer in &self.layers {
            h = self
                .dropout
                .forward(relu(layer.forward(h, &d.homogeneous, d.edge_type.clone())));
        }
        let mut by_type = d.graph.nodes_from_homogeneous(h).expect("one row per node");
        self.head.forward(by_type.remove("paper").expect("papers"))
    }
}

/// A graph-blind baseline: two linear layers on the paper features.
#[derive(Module, Debug)]
struct Mlp {
    hidden: Linear,
    head: Linear,
    dropout: Dropout,
}

impl PaperClassifier for Mlp {
    fn logits(&self, d: &Data) -> Tensor<2> {
        self.head.forward(
            self.dropout
                .forward(relu(self.hidden.forward(d.x["paper"].clone()))),
        )
    }
}
// ANCHOR_END: models

/// A model to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Model {
    /// Heterogeneous GraphSAGE (one SAGE convolution per relation, summed).
    Sage,
    /// RGCN with 4 bases, on the homogeneous form with edge types.
    Rgcn,
    /// HGT, 4 heads.
    Hgt,
    /// HAN, one layer of 8 heads.
    Han,
    /// An MLP on the paper features alone: what the graph adds to.
    Mlp,
}

/// Paper topics on a generated heterogeneous academic graph: heterogeneous GraphSAGE, RGCN,
/// HGT, HAN and a graph-blind MLP.
#[derive(Debug, Parser)]
#[command(name = "hetero_academic")]
struct Args {
    /// The model to train.
    #[arg(long, value_enum, default_value_t = Model::Sage)]
    model: Model,
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    backend: Backend,
    /// Epochs per seed.
    #[arg(long, default_value_t = 100, value_parser = at_least::<1>)]
    epochs: usize,
    /// Seeds to train, 0..N.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// Papers in the generated graph (authors: 40 % of that).
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(100..))]
    papers: u64,
    /// Where the run writes (default runs/hetero_academic-<model>); a checkpoint to evaluate.
    #[command(flatten)]
    run: RunArgs,
}

impl Args {
    fn model_name(&self) -> String {
        format!("{:?}", self.model).to_lowercase()
    }
}

/// Validation loss, validation accuracy and test accuracy.
fn evaluate<M: PaperClassifier>(model: &M, d: &Data) -> (f64, f64, f64) {
    let logits = model.logits(d);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(
            logits.clone().select(0, d.val.clone()),
            d.labels.clone().select(0, d.val.clone()),
        );
    (
        loss.into_scalar::<f64>(),
        split_accuracy(&logits, d, &d.val),
        split_accuracy(&logits, d, &d.test),
    )
}

/// Accuracy on the papers `rows`.
fn split_accuracy(logits: &Tensor<2>, d: &Data, rows: &Tensor<1, Int>) -> f64 {
    let labels = d.labels.clone().select(0, rows.clone());
    accuracy(logits.clone().select(0, rows.clone()), labels)
}

fn run<M: PaperClassifier>(args: &Args, academic: &Academic, make: impl Fn(&Device) -> M) {
    let base = args.backend.device_or_exit();
    let train_dev = base.clone().autodiff();
    let (train, eval) = (Data::new(academic, &train_dev), Data::new(academic, &base));
    if let Some(path) = &args.run.checkpoint {
        let model = load_checkpoint(make(&base), path).valid();
        let (val_loss, val_acc, test_acc) = evaluate(&model, &eval);
        println!(
            "{}: val acc {val_acc:.4}  val loss {val_loss:.4}  test acc {test_acc:.4}",
            path.display()
        );
        verify_checkpoint(path, args.backend, (val_acc, test_acc));
        return;
    }
    let model_name = args.model_name();
    let out = args.run.out.clone();
    let outputs = Outputs::create(
        out.unwrap_or_else(|| PathBuf::from(format!("runs/hetero_academic-{model_name}"))),
    );
    let setup = Setup {
        lr: 0.01,
        weight_decay: 5e-4,
        epochs: args.epochs,
        stopping: StoppingRule::BestValAcc,
    };
    let (mut results, mut rows) = (vec![], vec![]);
    let start = Instant::now();
    let loss_fn = CrossEntropyLossConfig::new().init(&train_dev);
    let train_labels = train.labels.clone().select(0, train.train.clone());
    for seed in 0..args.seeds {
        train_dev.seed(seed);
        let seed_start = Instant::now();
        let mut model = make(&train_dev);
        let mut optim = AdamConfig::new()
            .with_weight_decay(Some(WeightDecayConfig::new(setup.weight_decay as f32)))
            .init();
        let mut bar = Progress::new(
            args.epochs as u64,
            format!("{model_name} seed {}/{}", seed + 1, args.seeds),
        );
        let mut stopping = EarlyStopping::new(setup.stopping);
        let mut best: Option<(M, usize, f64, f64, f64)> = None;
        for epoch in 1..=setup.epochs {
            let logits = model.logits(&train).select(0, train.train.clone());
            let train_acc = accuracy(logits.clone(), train_labels.clone());
            let loss = loss_fn.forward(logits, train_labels.clone());
            let train_loss = loss.clone().into_scalar::<f64>();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(setup.lr, model, grads);
            let valid = model.valid();
            let (val_loss, val_acc, test_acc) = evaluate(&valid, &eval);
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
                format!("loss {train_loss:.3}  val acc {val_acc:.3}"),
            );
            if stopping.observe(val_acc, val_loss).keep {
                best = Some((valid, epoch, val_acc, val_loss, test_acc));
            }
        }
        let (kept, epoch, val_acc, val_loss, test_acc) = best.expect("at least one epoch");
        bar.finish(format!(
            "kept epoch {epoch}: val acc {val_acc:.3}, test acc {test_acc:.3}"
        ));
        results.push(SeedResult {
            seed,
            kept_epoch: epoch,
            epochs_run: setup.epochs,
            val_acc,
            val_loss,
            test_acc,
            seconds: seed_start.elapsed().as_secs_f64(),
            checkpoint: Some(outputs.save_model(kept, seed)),
        });
    }
    let run = format!("{model_name} on {} papers", academic.config.papers);
    let seconds = start.elapsed().as_secs_f64();
    let summary = Summary::new(
        "hetero_academic",
        &run,
        args.backend,
        &setup,
        results,
        seconds,
    );
    summary.print("MLP on the paper features: the floor", "seed");
    outputs.write_all(&format!("hetero_academic, {run}"), &summary, &rows);
}

fn main() {
    let args = Args::parse();
    let academic = Academic::generate(AcademicConfig {
        papers: args.papers as usize,
        authors: args.papers as usize * 2 / 5,
        ..AcademicConfig::default()
    })
    .unwrap_or_else(|e| exit_with(2, e));
    let (types, edge_types) = {
        let g = academic.graph(&Device::flex()).expect("valid");
        g.metadata()
    };
    let d_in = academic.config.features;
    let classes = academic.config.topics;
    println!(
        "academic graph: {} papers, {} authors, {} venues, {} edge types, {} edges; {} topics",
        academic.config.papers,
        academic.config.authors,
        academic.config.venues,
        edge_types.len(),
        academic.edges.iter().map(|e| e.1.len()).sum::<usize>(),
        classes
    );
    let dropout = || DropoutConfig::new(0.5).init();
    let head = |d: &Device| LinearConfig::new(HIDDEN, classes).init(d);
    match args.model {
        Model::Sage => run(&args, &academic, |d| Stack {
            layers: [d_in, HIDDEN]
                .iter()
                .map(|&i| HeteroSageConfig::new(i, HIDDEN, edge_types.clone()).init(d))
                .collect(),
            head: head(d),
            dropout: dropout(),
        }),
        Model::Rgcn => run(&args, &academic, |d| Rgcn {
            layers: [d_in, HIDDEN]
                .iter()
                .map(|&i| {
                    RgcnConvConfig::new(i, HIDDEN, edge_types.len())
                        .with_num_bases(Some(4))
                        .init(d)
                })
                .collect(),
            head: head(d),
            dropout: dropout(),
        }),
        Model::Hgt => run(&args, &academic, |d| Stack {
            layers: [d_in, HIDDEN]
                .iter()
                .map(|&i| {
                    HgtConvConfig::new(i, HIDDEN, types.clone(), edge_types.clone())
                        .with_heads(4)
                        .init(d)
                })
                .collect(),
            head: head(d),
            dropout: dropout(),
        }),
        Model::Han => run(&args, &academic, |d| Stack {
            layers: vec![
                HanConvConfig::new(d_in, HIDDEN, types.clone(), edge_types.clone())
                    .with_heads(8)
                    .init(d),
            ],
            head: head(d),
            dropout: dropout(),
        }),
        Model::Mlp => run(&args, &academic, |d| Mlp {
            hidden: LinearConfig::new(d_in, HIDDEN).init(d),
            head: head(d),
            dropout: dropout(),
        }),
    }
}
