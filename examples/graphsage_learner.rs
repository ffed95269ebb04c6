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

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
    pub mod large;
}

use std::sync::Arc;
use std::time::Instant;

use burn::data::dataloader::DataLoader;
use burn::optim::AdamConfig;
use burn::tensor::distributed::{DistributedConfig, ReduceOperation};
use burn::tensor::{Device, Tensor, TensorData};
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{
    ExecutionStrategy, Learner, MultiDeviceOptim, SupervisedTraining, TrainingStrategy,
};
use burn_gnn::data::NeighborLoader;
use burn_gnn::nn::GraphSageConfig;
use burn_gnn::train::{NodeClassification, SampledNodeLoader, accuracy};
use clap::{Parser, ValueEnum};
use common::cli::{Backend, at_least, exit_with};
use common::large::{self as large, BLOCKS, FEATURES, LargeArgs, LargeGraph, peak_rss_mb};

/// How training is spread over devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Strategy {
    /// One device.
    Single,
    /// Replicas on every device, gradients summed on the first (any backend).
    Multi,
    /// Replicas that all-reduce gradients (Burn's collectives: CUDA only in Burn 0.22).
    Ddp,
}

/// GraphSAGE over sampled mini-batches under burn-train's `Learner`.
#[derive(Debug, Parser)]
#[command(name = "graphsage_learner")]
struct Args {
    #[command(flatten)]
    large: LargeArgs,
    /// Devices to train on.
    #[arg(long, default_value_t = 1, value_parser = at_least::<1>)]
    devices: usize,
    /// The execution strategy [default: single for one device, multi for more].
    #[arg(long, value_enum)]
    strategy: Option<Strategy>,
}

impl Args {
    /// The strategy, checked against the devices and the backend (usage errors).
    fn strategy(&self) -> Result<Strategy, String> {
        let strategy = self.strategy.unwrap_or(if self.devices == 1 {
            Strategy::Single
        } else {
            Strategy::Multi
        });
        match strategy {
            Strategy::Ddp if self.large.backend != Backend::Wgpu => Err(format!(
                "--strategy ddp all-reduces gradients with Burn's collectives, which the {:?} \
                 backend does not have (Burn 0.22 implements them on CUDA only); use --strategy \
                 multi",
                self.large.backend
            )),
            Strategy::Single if self.devices != 1 => {
                Err("--strategy single takes --devices 1".into())
            }
            s => Ok(s),
        }
    }
}

/// The devices training runs on (exits with status 2 when the backend cannot run here).
fn devices(args: &Args) -> Vec<Device> {
    let base = args.large.backend.device_or_exit();
    match args.large.backend {
        #[cfg(feature = "wgpu")]
        Backend::Wgpu if args.devices > 1 => (0..args.devices)
            .map(|i| Device::wgpu(burn::tensor::DeviceKind::DiscreteGpu(i)))
            .collect(),
        _ => vec![base; args.devices],
    }
}

fn main() {
    let args = Args::parse();
    let strategy = args.strategy().unwrap_or_else(|e| exit_with(2, e));
    let devices = devices(&args);
    let base = devices[0].clone();
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
    } = large::build(n, 10.0);
    // Features stay on the first device; each batch's rows are gathered there and moved.
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, FEATURES]), &base);

    // ANCHOR: learner
    let train_dev = base.clone().autodiff();
    let loader = |seeds: Vec<i64>| {
        NeighborLoader::new(lists.clone(), seeds, vec![15, 10], args.large.batch_size)
            .unwrap_or_else(|e| exit_with(2, e))
    };
    let dl_train = SampledNodeLoader::new(
        loader(train).with_seed(1),
        x.clone(),
        labels.clone(),
        &train_dev,
    );
    // Validation runs on the model without autodiff, on the plain device.
    let eval_loader = |seeds: Vec<i64>| {
        SampledNodeLoader::new(
            loader(seeds).with_shuffle(false),
            x.clone(),
            labels.clone(),
            &base,
        )
        .unwrap_or_else(|e| exit_with(2, e))
    };
    let dl_train = Arc::new(dl_train.unwrap_or_else(|e| exit_with(2, e)));
    let dl_valid = Arc::new(eval_loader(val));
    let config = GraphSageConfig::new(FEATURES, 64, BLOCKS).with_num_layers(2);
    config.check().unwrap_or_else(|e| exit_with(2, e));
    let model = config.init(&train_dev);
    // ANCHOR: strategy
    let autodiff: Vec<Device> = devices.iter().map(|d| d.clone().autodiff()).collect();
    let strategy = match strategy {
        Strategy::Single => ExecutionStrategy::single(train_dev),
        // Gradients moved to the first device and summed there: any backend.
        Strategy::Multi => ExecutionStrategy::multi(autodiff, MultiDeviceOptim::OptimMainDevice),
        // All-reduce between replicas: Burn 0.22 implements the collectives on CUDA only.
        Strategy::Ddp => ExecutionStrategy::ddp(
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
        .num_epochs(args.large.epochs)
        .with_training_strategy(TrainingStrategy::Default(strategy))
        .with_default_checkpointers()
        .summary()
        .launch(learner);
    // ANCHOR_END: learner
    if let Some(e) = result.error {
        exit_with(1, format!("training failed: {e}"));
    }
    // The trained model (validation mode) on the test seeds, batch by batch.
    let (mut right, mut total) = (0.0, 0usize);
    for batch in eval_loader(test).iter() {
        let batch =
            batch.unwrap_or_else(|e| exit_with(1, format!("cannot load a test batch: {e}")));
        let rows = batch.rows.dims()[0];
        let out = result.model.forward_classification(batch);
        right += accuracy(out.output, out.targets) * rows as f64;
        total += rows;
    }
    println!(
        "test acc {:.3} (8 classes: chance 0.125); {} epoch(s) on {} device(s) in {:.0} s; peak memory {:.0} MB; logs and checkpoints in runs/graphsage_learner",
        right / total.max(1) as f64,
        args.large.epochs,
        devices.len(),
        start.elapsed().as_secs_f64(),
        peak_rss_mb().unwrap_or(f64::NAN)
    );
}
