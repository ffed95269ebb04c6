//! Full-batch GraphSAGE or GCN on an OGB node property prediction dataset read from OGB's raw
//! files, scored by OGB's evaluator (see the book's "Your own data").
//!
//! ```sh
//! # An unpacked OGB zip under DIR (DIR/ogbn_arxiv/raw/..., or DIR/arxiv/raw/...); when it is
//! # not there, OGB's zip is downloaded into DIR (default datasets/cache/ogb) unless --offline:
//! cargo run --release --example ogb_node -- --name ogbn-arxiv --data-dir DIR --model sage
//! # No --name: the embedded Cora written in OGB's layout (as a dataset of its own,
//! # `ogbn-cora`, with Planetoid's public split as the scheme `public`), read back, checked
//! # against the embedded graph, then trained:
//! cargo run --release --example ogb_node
//! ```
//!
//! The graph is made undirected first (`ToUndirected`, as OGB's arxiv examples do with
//! `to_symmetric`). Trains on the split's training nodes; every `--log-every` epochs prints the
//! loss and the evaluator's metric on the training, validation and test nodes, and at the end
//! the test metric at the best validation epoch. Single-task classification datasets only
//! (`acc`: arxiv, products, papers100M); others are refused with a message.

// The parts of examples/common this example uses.
mod common {
    pub mod download;
    #[allow(dead_code)] // the download bar only: Progress::new is for the training examples
    pub mod progress;
}

use std::io::Write;
use std::path::{Path, PathBuf};

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::io::LABELS;
use burn_gnn_data::ogb::{OgbInfo, OgbMetric, OgbNodeDataset};
use burn_gnn_data::{DataError, Planetoid, download_ogb};
use burn_gnn_graph::transforms::ToUndirected;
use burn_gnn_graph::{Compose, FeatureValues, GraphsTuple, Transform};
use burn_gnn_nn::{GcnConfig, GraphSageConfig};
use clap::{Parser, ValueEnum};

/// GraphSAGE or GCN on an OGB node dataset, scored by OGB's evaluator.
#[derive(Parser)]
#[command(name = "ogb_node")]
struct Args {
    /// The dataset, e.g. ogbn-arxiv. Without it, Cora is written in OGB's layout and read back.
    #[arg(long)]
    name: Option<String>,
    /// The folder holding the unpacked dataset (and where a download goes).
    #[arg(long, env = "BURN_GNN_DATA_DIR", default_value = "datasets/cache/ogb")]
    data_dir: PathBuf,
    /// Never download: fail when the dataset is not in --data-dir.
    #[arg(long)]
    offline: bool,
    /// The model.
    #[arg(long, value_enum, default_value_t = Model::Sage)]
    model: Model,
    /// Hidden width.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    hidden: u64,
    /// Layers.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    layers: u64,
    /// Dropout.
    #[arg(long, default_value_t = 0.5)]
    dropout: f64,
    /// Learning rate (Adam).
    #[arg(long, default_value_t = 0.01)]
    lr: f64,
    /// Epochs.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    /// Evaluate every this many epochs (and after the last).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    log_every: u64,
    /// The seed of the parameters and of dropout.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where the Cora fixture is written (without --name).
    #[arg(long, default_value = "runs/ogb_node")]
    out: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum Model {
    /// GraphSAGE, mean aggregation.
    Sage,
    /// GCN, symmetric normalisation with self loops.
    Gcn,
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// Writes `text` gzip-compressed to `path`.
fn gz(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().expect("a file in a folder"))?;
    let file = std::fs::File::create(path)?;
    let mut e = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    e.write_all(text.as_bytes())?;
    e.finish().map(|_| ())
}

fn lines<T: ToString>(values: impl IntoIterator<Item = T>) -> String {
    values.into_iter().map(|v| v.to_string() + "\n").collect()
}

/// Cora in OGB's raw layout under `dir` (one graph; float features; the public split).
fn write_cora(cora: &Planetoid, dir: &Path) -> std::io::Result<()> {
    let raw = dir.join("raw");
    let edges = cora
        .senders
        .iter()
        .zip(&cora.receivers)
        .map(|(s, r)| format!("{s},{r}"));
    gz(&raw.join("edge.csv.gz"), &lines(edges))?;
    gz(&raw.join("num-node-list.csv.gz"), &lines([cora.num_nodes]))?;
    gz(
        &raw.join("num-edge-list.csv.gz"),
        &lines([cora.senders.len()]),
    )?;
    let rows = cora.features.chunks(cora.num_features).map(|row| {
        row.iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(",")
    });
    gz(&raw.join("node-feat.csv.gz"), &lines(rows))?;
    gz(&raw.join("node-label.csv.gz"), &lines(&cora.labels))?;
    let ids = |mask: &[bool]| lines((0..mask.len()).filter(|&v| mask[v]));
    let split = dir.join("split").join("public");
    gz(&split.join("train.csv.gz"), &ids(&cora.train_mask))?;
    gz(&split.join("valid.csv.gz"), &ids(&cora.val_mask))?;
    gz(&split.join("test.csv.gz"), &ids(&cora.test_mask))?;
    std::fs::write(dir.join("RELEASE_v1.txt"), "")
}

/// Writes Cora in OGB's layout, reads it back, and checks it is the embedded graph.
fn cora_fixture(out: &Path) -> OgbNodeDataset {
    let cora = Planetoid::embedded("cora").unwrap_or_else(|e| fail(e));
    let dir = out.join("ogbn_cora");
    write_cora(&cora, &dir)
        .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", dir.display())));
    // A dataset of one's own is described by an OgbInfo (OGB's meta_dict).
    let info = OgbInfo {
        name: "ogbn-cora".into(),
        num_classes: Some(cora.num_classes),
        split: "public".into(),
        download_name: "cora".into(),
        url: String::new(),
        additional_node_files: Vec::new(),
        ..OgbInfo::get("ogbn-arxiv").expect("OGB lists ogbn-arxiv")
    };
    let ds = OgbNodeDataset::open_dir(&dir, info).unwrap_or_else(|e| fail(e));
    let g = &ds.graph;
    let features = match g.nodes.main.as_ref().map(|x| &x.values) {
        Some(FeatureValues::F32(v)) => v.clone(),
        _ => Vec::new(),
    };
    let labels = match &g.nodes.named[LABELS].values {
        FeatureValues::I64(v) => v.clone(),
        _ => Vec::new(),
    };
    let same = g.senders == cora.senders
        && g.receivers == cora.receivers
        && features == cora.features
        && labels == cora.labels
        && ds.split.train.len() == cora.train_mask.iter().filter(|&&m| m).count();
    if !same {
        fail("Cora read back from OGB's layout is not the embedded graph");
    }
    println!(
        "wrote Cora in OGB's layout to {} and read it back unchanged",
        dir.display()
    );
    ds
}

/// The node features as floats (OGB's tables may hold integers).
fn features(graph: &GraphsTuple) -> Tensor<2> {
    let x = graph
        .nodes()
        .unwrap_or_else(|| fail("the dataset has no node features"));
    x.float::<2>()
        .or_else(|| x.int::<2>().map(|t| t.float()))
        .unwrap_or_else(|| fail("the node features are not a [N, F] table"))
}

fn main() {
    let args = Args::parse();
    let ds = match &args.name {
        Some(name) => match OgbNodeDataset::open(name, Some(&args.data_dir)) {
            Err(DataError::MissingFile { .. }) if !args.offline => {
                eprintln!(
                    "{name} is not in {}: downloading it",
                    args.data_dir.display()
                );
                download_ogb(name, &args.data_dir, common::download::downloads())
                    .unwrap_or_else(|e| fail(e));
                OgbNodeDataset::open(name, Some(&args.data_dir)).unwrap_or_else(|e| fail(e))
            }
            read => read.unwrap_or_else(|e| fail(e)),
        },
        None => cora_fixture(&args.out),
    };
    let info = &ds.info;
    let num_classes = match (info.metric, info.num_tasks, info.num_classes) {
        (OgbMetric::Accuracy, 1, Some(c)) => c,
        _ => fail(format!(
            "ogb_node trains single-task classification (acc); {} is {} with {} task(s), scored by {}",
            info.name,
            info.task_type,
            info.num_tasks,
            info.metric.name()
        )),
    };
    let device = Device::flex().autodiff();
    device.seed(args.seed);
    let read = ds.graph(&device).unwrap_or_else(|e| fail(e));
    let graph = Compose::new()
        .push(ToUndirected::default())
        .apply(&read)
        .unwrap_or_else(|e| fail(e))
        .sort_by_receiver();
    let x = features(&graph);
    println!(
        "{}: {} nodes, {} edges undirected, {} features, {num_classes} classes; split `{}`: {} / {} / {}",
        info.name,
        graph.sum_n_node(),
        graph.sum_n_edge(),
        x.dims()[1],
        ds.split.scheme,
        ds.split.train.len(),
        ds.split.valid.len(),
        ds.split.test.len()
    );
    let labels: Vec<i64> = match &ds.graph.nodes.named[LABELS].values {
        FeatureValues::I64(v) => v.clone(),
        _ => fail("single-task labels are integers"),
    };
    if let Some(&bad) = ds.split.train.iter().find(|&&v| labels[v as usize] < 0) {
        fail(format!("training node {bad} has no label"));
    }
    let (hidden, layers) = (args.hidden as usize, args.layers as usize);
    let ints =
        |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &device);
    let train_idx = ints(&ds.split.train);
    let train_y = ints(&labels).select(0, train_idx.clone());
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    let evaluator = ds.evaluator();
    // The evaluator's metric on `nodes` from the predicted classes `pred`.
    let score = |pred: &[i64], nodes: &[i64]| -> f64 {
        let y_true = ds.y_true(nodes).unwrap_or_else(|e| fail(e));
        let y_pred: Vec<f64> = nodes.iter().map(|&v| pred[v as usize] as f64).collect();
        evaluator
            .eval(&y_true, &y_pred, [nodes.len(), 1])
            .unwrap_or_else(|e| fail(e))
    };
    let mut best = (f64::NEG_INFINITY, 0.0, 0);
    macro_rules! train {
        ($model:expr) => {{
            let mut model = $model;
            let mut optim = AdamConfig::new().init();
            for epoch in 0..args.epochs {
                let logits = model.forward(x.clone(), &graph).select(0, train_idx.clone());
                let loss = loss_fn.forward(logits, train_y.clone());
                let last = epoch + 1 == args.epochs;
                if epoch % args.log_every == 0 || last {
                    let pred: Vec<i64> = model
                        .forward(x.clone(), &graph)
                        .argmax(1)
                        .into_data()
                        .iter::<i64>()
                        .collect();
                    let (train, valid, test) = (
                        score(&pred, &ds.split.train),
                        score(&pred, &ds.split.valid),
                        score(&pred, &ds.split.test),
                    );
                    println!(
                        "  epoch {epoch:>4}: loss {:.4}  {} train {train:.4}  valid {valid:.4}  test {test:.4}",
                        loss.clone().into_scalar::<f64>(),
                        evaluator.metric.name()
                    );
                    if valid > best.0 {
                        best = (valid, test, epoch);
                    }
                }
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(args.lr, model, grads);
            }
        }};
    }
    match args.model {
        Model::Sage => train!({
            let config = GraphSageConfig::new(x.dims()[1], hidden, num_classes)
                .with_num_layers(layers)
                .with_dropout(args.dropout);
            (config.check()).unwrap_or_else(|e| fail(format!("invalid model configuration: {e}")));
            config.init(&device)
        }),
        Model::Gcn => train!({
            let config = GcnConfig::new(x.dims()[1], hidden, num_classes)
                .with_num_layers(layers)
                .with_dropout(args.dropout);
            (config.check()).unwrap_or_else(|e| fail(format!("invalid model configuration: {e}")));
            config.init(&device)
        }),
    }
    println!(
        "best validation {} {:.4} at epoch {}: test {:.4}",
        evaluator.metric.name(),
        best.0,
        best.2,
        best.1
    );
}
