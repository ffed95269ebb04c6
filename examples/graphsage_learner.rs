//! GraphSAGE with neighbour sampling trained by burn-train's `Learner`: the graph of
//! `graphsage_large` (a million nodes, ten million edges by default), `burn_gnn::train`'s
//! `SampledNodeLoader` and `NodeClassification` wrapper, burn-train's accuracy and loss metrics,
//! its dashboard (in a terminal; plain lines otherwise), checkpoints and a summary, on one
//! device or several.
//!
//! ```sh
//! cargo run --release --features train --example graphsage_learner
//! cargo run --release --features train --example graphsage_learner -- --nodes 100000 --epochs 3
//! # several devices: each takes a share of the seeds, gradients are summed on the first
//! cargo run --release --features train,wgpu --example graphsage_learner -- --backend wgpu --devices 2
//! ```
//!
//! `--devices N` runs burn-train's multi-device strategy over `N` devices: wgpu's discrete GPUs
//! 0..N with `--backend wgpu`, or the one CPU device listed `N` times with `flex`/`ndarray`
//! (the same cores, so no faster: it shows the mechanism). `--strategy ddp` asks for
//! distributed data parallel instead, whose all-reduce Burn 0.22 implements on CUDA only.
//! Runs go to `runs/graphsage_learner`.

mod common;

use std::sync::Arc;
use std::time::Instant;

use burn::optim::AdamConfig;
use burn::tensor::distributed::{DistributedConfig, ReduceOperation};
use burn::tensor::{Device, Tensor, TensorData};
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{
    ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy,
};
use burn_gnn::data::NeighborLoader;
use burn_gnn::nn::{GraphSage, StackConfig};
use burn_gnn::train::{NodeClassification, SampledNodeLoader};
use common::exit_with;
use common::large::{BLOCKS, FEATURES, LargeGraph, large_graph, peak_rss_mb};

struct Args {
    nodes: usize,
    epochs: usize,
    batch_size: usize,
    devices: usize,
    strategy: String,
    backend: String,
}

fn parse_args() -> Args {
    let usage = "usage: graphsage_learner [--nodes N] [--epochs N] [--batch-size N] [--devices N] \
                 [--strategy single|multi|ddp] [--backend flex|ndarray|wgpu]";
    let mut a = Args {
        nodes: 1_000_000,
        epochs: 1,
        batch_size: 1024,
        devices: 1,
        strategy: String::new(),
        backend: "flex".into(),
    };
    let mut it = std::env::args().skip(1);
    let parsed: Result<(), String> = (|| {
        while let Some(flag) = it.next() {
            let v = it.next().ok_or(format!("{flag} needs a value\n{usage}"))?;
            let num = |v: &str| {
                v.parse::<usize>()
                    .map_err(|_| format!("{flag} takes a number, got `{v}`"))
            };
            match flag.as_str() {
                "--nodes" => a.nodes = num(&v)?,
                "--epochs" => a.epochs = num(&v)?,
                "--batch-size" => a.batch_size = num(&v)?,
                "--devices" => a.devices = num(&v)?,
                "--strategy" => a.strategy = v,
                "--backend" => a.backend = v,
                other => return Err(format!("unknown flag `{other}`\n{usage}")),
            }
        }
        if a.nodes < 1000 || a.epochs == 0 || a.batch_size == 0 || a.devices == 0 {
            return Err(format!(
                "need --nodes ≥ 1000 and positive --epochs, --batch-size and --devices\n{usage}"
            ));
        }
        if a.strategy.is_empty() {
            a.strategy = if a.devices == 1 { "single" } else { "multi" }.into();
        }
        match (a.strategy.as_str(), a.devices) {
            ("ddp", _) if a.backend != "wgpu" => {
                return Err(format!(
                    "--strategy ddp all-reduces gradients with Burn's collectives, which the \
                     {} backend does not have (Burn 0.22 implements them on CUDA only); use \
                     --strategy multi",
                    a.backend
                ));
            }
            ("single", 1) | ("multi" | "ddp", _) => {}
            ("single", _) => return Err("--strategy single takes --devices 1".into()),
            (other, _) => return Err(format!("unknown strategy `{other}`\n{usage}")),
        }
        Ok(())
    })();
    if let Err(e) = parsed {
        exit_with(2, e);
    }
    a
}

/// The devices training runs on.
fn devices(args: &Args) -> Result<Vec<Device>, String> {
    let base = common::device(&args.backend)?;
    Ok(match args.backend.as_str() {
        #[cfg(feature = "wgpu")]
        "wgpu" if args.devices > 1 => (0..args.devices)
            .map(|i| Device::wgpu(burn::tensor::DeviceKind::DiscreteGpu(i)))
            .collect(),
        _ => vec![base; args.devices],
    })
}

fn main() {
    let args = parse_args();
    let devices = devices(&args).unwrap_or_else(|e| exit_with(2, e));
    let base = devices[0].clone();
    let start = Instant::now();
    let n = args.nodes;
    let LargeGraph {
        lists,
        x,
        labels,
        num_edges,
        train,
        val,
        ..
    } = large_graph(n, 10.0).unwrap_or_else(|e| exit_with(2, e));
    // Features stay on the first device; each batch's rows are gathered there and moved.
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, FEATURES]), &base);
    println!(
        "graph: {n} nodes, {num_edges} edges; {} training and {} validation seeds; built in {:.1} s",
        train.len(),
        val.len(),
        start.elapsed().as_secs_f64()
    );

    // ANCHOR: learner
    let train_dev = base.clone().autodiff();
    let loader = |seeds: Vec<i64>| {
        NeighborLoader::new(lists.clone(), seeds, vec![15, 10], args.batch_size)
            .unwrap_or_else(|e| exit_with(2, e))
    };
    let dl_train = SampledNodeLoader::new(
        loader(train).with_seed(1),
        x.clone(),
        labels.clone(),
        &train_dev,
    );
    // Validation runs on the model without autodiff, on the plain device.
    let dl_valid = SampledNodeLoader::new(loader(val).with_shuffle(false), x, labels, &base);
    let (dl_train, dl_valid) = match (dl_train, dl_valid) {
        (Ok(t), Ok(v)) => (Arc::new(t), Arc::new(v)),
        (Err(e), _) | (_, Err(e)) => exit_with(2, e),
    };
    let config = StackConfig::new(FEATURES, 64, BLOCKS).with_num_layers(2);
    let model = GraphSage::new(&config, &train_dev).unwrap_or_else(|e| exit_with(2, e));
    // ANCHOR: strategy
    let autodiff: Vec<Device> = devices.iter().map(|d| d.clone().autodiff()).collect();
    let strategy = match args.strategy.as_str() {
        "single" => ExecutionStrategy::single(train_dev),
        // Gradients moved to the first device and summed there: any backend.
        "multi" => ExecutionStrategy::multi(autodiff, MultiDeviceOptim::OptimMainDevice),
        // All-reduce between replicas: Burn 0.22 implements the collectives on CUDA only.
        _ => ExecutionStrategy::ddp(
            autodiff,
            DistributedConfig {
                all_reduce_op: ReduceOperation::Mean,
            },
        ),
    };
    // ANCHOR_END: strategy
    let learner = Learner::new(
        NodeClassification::new(model),
        AdamConfig::new().init(),
        0.01,
    );
    let result = SupervisedTraining::new("runs/graphsage_learner", dl_train, dl_valid)
        .metrics((AccuracyMetric::new(), LossMetric::new()))
        .num_epochs(args.epochs)
        .with_training_strategy(TrainingStrategy::Default(strategy))
        .with_default_checkpointers()
        .summary()
        .launch(learner);
    // ANCHOR_END: learner
    if let Some(e) = result.error {
        exit_with(1, format!("training failed: {e}"));
    }
    println!(
        "{} epoch(s) on {} device(s) in {:.0} s; peak memory {:.0} MB; logs and checkpoints in runs/graphsage_learner",
        args.epochs,
        devices.len(),
        start.elapsed().as_secs_f64(),
        peak_rss_mb().unwrap_or(f64::NAN)
    );
}
