//! GraphSAGE with neighbour sampling on a generated graph of a million nodes and ten million
//! edges: `NeighborLoader` mini-batches (fan-outs 15 and 10, 1024 seeds per batch), showing
//! progress, sampling and training throughput, and peak memory.
//!
//! ```sh
//! cargo run --release --example graphsage_large                       # 1e6 nodes, 1e7 edges
//! cargo run --release --example graphsage_large -- --nodes 100000 --epochs 3
//! ```
//!
//! The graph (`common::large`) is a directed stochastic block model with 8 equal blocks (the
//! classes): on average `--degree` incoming edges per node, 60 % from the node's own block.
//! Node features are 32 Gaussian values plus a weak pull towards the block's mean, so a node's
//! neighbourhood tells its class better than its own features. 5 % of the nodes train, 1 %
//! validate, 1 % test.

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
    pub mod large;
    pub mod progress;
}

use std::time::Instant;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn::train::accuracy;
use burn_gnn_data::{NeighborLoader, SampledBatch};
use burn_gnn_nn::{GraphSage, GraphSageConfig};
use clap::Parser;
use common::cli::at_least;
use common::large::{self as large, BLOCKS, FEATURES, LargeArgs, LargeGraph, peak_rss_mb};
use common::progress::Progress;

/// GraphSAGE with neighbour sampling (fan-outs 15 and 10) on a generated graph of a million
/// nodes and ten million edges.
#[derive(Debug, Parser)]
#[command(name = "graphsage_large")]
struct Args {
    #[command(flatten)]
    large: LargeArgs,
    /// Mean number of incoming edges per node.
    #[arg(long, default_value_t = 10.0, value_parser = positive_f64)]
    degree: f64,
    /// Stop each epoch after this many batches [default: all].
    #[arg(long, value_parser = at_least::<1>)]
    max_batches: Option<usize>,
}

/// A clap value parser: a finite number above zero.
pub fn positive_f64(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) => Err(format!("{v} is not a positive number")),
        Err(e) => Err(e.to_string()),
    }
}

/// The labels of a batch's seeds.
fn seed_labels(b: &SampledBatch, labels: &[i64], device: &Device) -> Tensor<1, Int> {
    let y: Vec<i64> = b.nodes[..b.num_seeds]
        .iter()
        .map(|&v| labels[v as usize])
        .collect();
    Tensor::from_data(TensorData::new(y, [b.num_seeds]), device)
}

/// Accuracy over the seeds of `loader`'s epoch 0 (evaluation mode).
fn evaluate(
    model: &GraphSage,
    loader: &NeighborLoader,
    x: &Tensor<2>,
    labels: &[i64],
    device: &Device,
) -> f64 {
    let (mut right, mut total) = (0.0, 0usize);
    for b in loader.epoch(0) {
        let g = b
            .graph(x, device)
            .expect("a sampled batch is a valid graph");
        let logits = model
            .forward(g.node_tensor::<2>().expect("features"), &g)
            .slice(0..b.num_seeds);
        right += accuracy(logits, seed_labels(&b, labels, device)) * b.num_seeds as f64;
        total += b.num_seeds;
    }
    right / total.max(1) as f64
}

fn main() {
    let args = Args::parse();
    let base = args.large.backend.device_or_exit();
    let train_dev = base.clone().autodiff();
    let start = Instant::now();
    let n = args.large.nodes;
    let LargeGraph {
        lists,
        x,
        labels,
        train,
        val,
        test,
        ..
    } = large::build(n, args.degree);
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, FEATURES]), &base);

    // ANCHOR: loader
    let fanouts = vec![15, 10];
    let loader = |seeds: &[i64]| {
        NeighborLoader::new(
            lists.clone(),
            seeds.to_vec(),
            fanouts.clone(),
            args.large.batch_size,
        )
        .expect("valid loader")
    };
    let (train_loader, val_loader, test_loader) = (
        loader(&train).with_seed(1),
        loader(&val).with_shuffle(false),
        loader(&test).with_shuffle(false),
    );
    // ANCHOR_END: loader
    let config = GraphSageConfig::new(FEATURES, 64, BLOCKS).with_num_layers(2);
    let mut model = config.init(&train_dev);
    let mut optim = AdamConfig::new().init();
    let loss_fn = CrossEntropyLossConfig::new().init(&train_dev);
    let x_train = x.clone().to_device(&train_dev);
    for epoch in 0..args.large.epochs as u64 {
        let batches = args.max_batches.map_or(train_loader.num_batches(), |m| {
            m.min(train_loader.num_batches())
        });
        let mut bar = Progress::new(
            batches as u64,
            format!("epoch {}/{}", epoch + 1, args.large.epochs),
        );
        let (epoch_start, mut sampling, mut edges, mut seen) =
            (Instant::now(), 0.0, 0usize, 0usize);
        let mut batches_iter = train_loader.epoch(epoch);
        for i in 0..batches {
            let t = Instant::now();
            let b = batches_iter.next().expect("a batch");
            sampling += t.elapsed().as_secs_f64();
            edges += b.num_edges();
            seen += b.num_seeds;
            // ANCHOR: step
            let graph = b
                .graph(&x_train, &train_dev)
                .expect("a sampled batch is a valid graph");
            let logits = model
                .forward(graph.node_tensor::<2>().expect("features"), &graph)
                .slice(0..b.num_seeds);
            let y = seed_labels(&b, &labels, &train_dev);
            let loss = loss_fn.forward(logits.clone(), y.clone());
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(0.01, model, grads);
            // ANCHOR_END: step
            if i % 10 == 0 || i + 1 == batches {
                let secs = epoch_start.elapsed().as_secs_f64();
                bar.set(
                    i as u64 + 1,
                    format!(
                        "acc {:.3}  {:.0} seeds/s  {:.2} M sampled edges/s (sampling {:.0} % of the time)",
                        accuracy(logits.clone(), y.clone()),
                        seen as f64 / secs,
                        edges as f64 / sampling.max(1e-9) / 1e6,
                        100.0 * sampling / secs
                    ),
                );
            }
        }
        let secs = epoch_start.elapsed().as_secs_f64();
        bar.finish(format!(
            "{batches} batches in {secs:.1} s: {:.0} seeds/s; sampling {:.2} M edges/s ({edges} edges, {:.0} % of the time)",
            seen as f64 / secs,
            edges as f64 / sampling.max(1e-9) / 1e6,
            100.0 * sampling / secs
        ));
    }
    let eval = burn::module::Module::valid(&model);
    let val_acc = evaluate(&eval, &val_loader, &x, &labels, &base);
    let test_acc = evaluate(&eval, &test_loader, &x, &labels, &base);
    println!(
        "val acc {val_acc:.3}  test acc {test_acc:.3} (8 classes: chance 0.125); {:.0} s in all; peak memory {:.0} MB",
        start.elapsed().as_secs_f64(),
        peak_rss_mb().unwrap_or(f64::NAN)
    );
}
