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
//! (lr 0.01) with an L2 term `5e-4 / 2 · Σ w²` over every parameter, full-batch, keeping the
//! epoch with the best validation accuracy. It trains on the shared node runner of `gat_cora`:
//! `--resume` continues a killed run. Papers are split 20 / 20 / 60 % into train / validation / test. Metrics
//! (`metrics.csv`, `summary.json`), curves (`curves.svg`) and a checkpoint per seed go to
//! `--out` (default `runs/hetero_academic-<model>`).

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
    pub mod node;
    pub mod output;
    pub mod plot;
    pub mod progress;
    pub mod record;
    pub mod resume;
}

use std::path::PathBuf;

use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Int, Tensor};
use burn_gnn::train::StoppingRule;
use burn_gnn_data::{Academic, AcademicConfig};
use burn_gnn_graph::{EDGE_TYPE, FeatureSetKind, GraphsTuple, HeteroGraph};
use burn_gnn_nn::{
    HanConvConfig, HeteroLayer, HeteroSageConfig, HgtConvConfig, NodeFeatures, RgcnConv,
    RgcnConvConfig,
};
use clap::{Parser, ValueEnum};
use common::cli::{Backend, RunArgs, at_least, exit_with};
use common::node::{NodeClassifier, Prepared, RunSpec, evaluate_checkpoint, train_seeds};
use common::record::Setup;
use common::resume::ResumeArgs;

const HIDDEN: usize = 64;

/// The graph on one device, with its homogeneous form for RGCN.
struct Input {
    graph: HeteroGraph,
    x: NodeFeatures,
    homogeneous: GraphsTuple,
    edge_type: Tensor<1, Int>,
}

impl Input {
    fn new(a: &Academic, device: &Device) -> Input {
        let graph = a.graph(device).expect("a generated graph is valid");
        let homogeneous = graph.to_homogeneous().expect("homogeneous form");
        let edge_type = homogeneous
            .feature(FeatureSetKind::Edges, EDGE_TYPE)
            .and_then(|f| f.int::<1>())
            .expect("edge types");
        Input {
            x: graph.x_dict(),
            graph,
            homogeneous,
            edge_type,
        }
    }
}

/// `Σ w²` over every float parameter of `module`: the L2 term decays all of them, as Adam's
/// weight decay would.
fn squared_norm<M: Module>(module: &M) -> Tensor<1> {
    struct Sum(Option<Tensor<1>>);
    impl ModuleVisitor for Sum {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let s = param.val().powi_scalar(2).sum();
            self.0 = Some(match self.0.take() {
                Some(sum) => sum + s,
                None => s,
            });
        }
    }
    let mut sum = Sum(None);
    module.visit(&mut sum);
    sum.0.expect("a model with parameters")
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

impl<L: Module + burn::module::ModuleDisplay + HeteroLayer> NodeClassifier<Input> for Stack<L> {
    fn logits(&self, d: &Input) -> Tensor<2> {
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
    fn decayed(&self) -> Tensor<1> {
        squared_norm(self)
    }
}

/// Two RGCN layers (basis decomposition, 4 bases) on the homogeneous form of the graph.
#[derive(Module, Debug)]
struct Rgcn {
    layers: Vec<RgcnConv>,
    head: Linear,
    dropout: Dropout,
}

impl NodeClassifier<Input> for Rgcn {
    fn logits(&self, d: &Input) -> Tensor<2> {
        let mut h = d.graph.nodes_to_homogeneous(&d.x).expect("same widths");
        for layer in &self.layers {
            h = self
                .dropout
                .forward(relu(layer.forward(h, &d.homogeneous, d.edge_type.clone())));
        }
        let mut by_type = d.graph.nodes_from_homogeneous(h).expect("one row per node");
        self.head.forward(by_type.remove("paper").expect("papers"))
    }
    fn decayed(&self) -> Tensor<1> {
        squared_norm(self)
    }
}

/// A graph-blind baseline: two linear layers on the paper features.
#[derive(Module, Debug)]
struct Mlp {
    hidden: Linear,
    head: Linear,
    dropout: Dropout,
}

impl NodeClassifier<Input> for Mlp {
    fn logits(&self, d: &Input) -> Tensor<2> {
        self.head.forward(
            self.dropout
                .forward(relu(self.hidden.forward(d.x["paper"].clone()))),
        )
    }
    fn decayed(&self) -> Tensor<1> {
        squared_norm(self)
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
    /// `--resume` and how often it saves.
    #[command(flatten)]
    resume: ResumeArgs,
}

impl Args {
    fn model_name(&self) -> String {
        format!("{:?}", self.model).to_lowercase()
    }
}

fn run<M: NodeClassifier<Input>>(args: &Args, academic: &Academic, make: impl Fn(&Device) -> M) {
    let base = args.backend.device_or_exit();
    let masks = [
        &academic.train_mask,
        &academic.val_mask,
        &academic.test_mask,
    ];
    let p = Prepared::new(
        |d| Input::new(academic, d),
        |d| academic.labels(d),
        masks.map(|m| m.as_slice()),
        &base,
    );
    if let Some(path) = &args.run.checkpoint {
        return evaluate_checkpoint(make(&base), &p, path, args.backend);
    }
    let model_name = args.model_name();
    let spec = RunSpec {
        example: "hetero_academic",
        paper: "MLP on the paper features: the floor",
        dataset: format!("{} papers, {model_name}", academic.config.papers),
        backend: args.backend,
        seeds: args.seeds,
        dense: false,
        out: (args.run.out.clone())
            .unwrap_or_else(|| PathBuf::from(format!("runs/hetero_academic-{model_name}"))),
        resume: args.resume.clone(),
    };
    let setup = Setup {
        lr: 0.01,
        weight_decay: 5e-4,
        epochs: args.epochs,
        stopping: StoppingRule::BestValAcc,
    };
    train_seeds(&spec, setup, &p, make);
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
