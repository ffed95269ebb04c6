//! Point-cloud classification with DGCNN's `DynamicEdgeConv` (Wang et al., ACM TOG 2019) on
//! seeded synthetic clouds: points on the surfaces of a sphere, a cube, a cylinder, a cone and
//! a torus, each randomly rotated, with Gaussian noise.
//!
//! ```sh
//! cargo run --release --example point_cloud                        # 500 training clouds, 3 seeds
//! cargo run --release --example point_cloud -- --points 256 --epochs 5 --seeds 1
//! cargo run --release --example point_cloud -- --eval-only --checkpoint runs/point_cloud/seed-0.bpk
//! ```
//!
//! The model (DGCNN's classifier, narrower): three `DynamicEdgeConv` layers (k nearest
//! neighbours in the current feature space, found exactly at every forward, max aggregation)
//! of widths 32, 32 and 64, their outputs concatenated and mapped to 256, max-pooled per
//! cloud, then `Linear → ReLU → dropout 0.5 → Linear` to the 5 classes. Adam, lr 0.001, batches
//! of 16 clouds. Training, validation and test clouds come from disjoint seeds (the test set is
//! the same for every `--seed`); the model of the best validation accuracy is kept. Outputs as
//! `gat_cora`'s: `metrics.csv`, `summary.json`, `curves.svg` and `seed-<N>.bpk` in `--out`
//! (default `runs/point_cloud`).

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
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};
use burn_gnn::train::{EarlyStopping, StoppingRule};
use burn_gnn_data::synthetic::SplitMix64;
use burn_gnn_data::{PointCloud, SOLID_SHAPES, point_cloud_batch, point_clouds};
use burn_gnn_graph::GraphsTuple;
use burn_gnn_nn::{DynamicEdgeConv, DynamicEdgeConvConfig, dropout, global_max_pool};
use clap::Parser;
use common::cli::{Backend, RunArgs, at_least, exit_with};
use common::output::{Outputs, load_checkpoint};
use common::progress::Progress;
use common::record::{EpochRow, SeedResult, Setup, Summary, verify_checkpoint};

/// DGCNN on synthetic point clouds.
#[derive(Parser)]
#[command(name = "point_cloud")]
struct Args {
    /// Training clouds (the shapes take turns); validation and test get a fifth as many each.
    #[arg(long, default_value_t = 500, value_parser = at_least::<5>)]
    clouds: usize,
    /// Points per cloud.
    #[arg(long, default_value_t = 1024, value_parser = at_least::<2>)]
    points: usize,
    /// Gaussian noise (std) on every coordinate.
    #[arg(long, default_value_t = 0.02)]
    noise: f64,
    /// Neighbours per point in every `DynamicEdgeConv` (the point itself included).
    #[arg(long, default_value_t = 20, value_parser = at_least::<1>)]
    k: usize,
    /// Epochs per seed.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    /// Clouds per batch.
    #[arg(long, default_value_t = 16, value_parser = at_least::<1>)]
    batch_size: usize,
    /// Seeds (initialisation, batch order and training clouds), 0..seeds.
    #[arg(long, default_value_t = 3, value_parser = at_least::<1>)]
    seeds: usize,
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    backend: Backend,
    /// Where the run writes (default runs/point_cloud); a checkpoint to evaluate.
    #[command(flatten)]
    run: RunArgs,
}

/// DGCNN's classifier: stacked `DynamicEdgeConv`, a per-cloud max pool, an MLP head.
#[derive(Module, Debug)]
struct Dgcnn {
    convs: Vec<DynamicEdgeConv>,
    embed: Linear,
    hidden: Linear,
    classify: Linear,
    dropout: Dropout,
}

impl Dgcnn {
    fn new(k: usize, device: &Device) -> Dgcnn {
        let widths = [3, 32, 32, 64];
        let convs = widths
            .windows(2)
            .map(|w| {
                let config = DynamicEdgeConvConfig::new(w[0], w[1], w[1], k);
                config.check().unwrap_or_else(|e| exit_with(2, e));
                config.init(device)
            })
            .collect();
        Dgcnn {
            convs,
            embed: LinearConfig::new(32 + 32 + 64, 256).init(device),
            hidden: LinearConfig::new(256, 128).init(device),
            classify: LinearConfig::new(128, SOLID_SHAPES.len()).init(device),
            dropout: DropoutConfig::new(0.5).init(),
        }
    }

    /// Class scores, `[clouds, 5]`.
    fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let mut h = x;
        let mut layers = Vec::new();
        for conv in &self.convs {
            h = conv.forward(h, graph);
            layers.push(h.clone());
        }
        let pooled = global_max_pool(self.embed.forward(Tensor::cat(layers, 1)), graph);
        let hidden = dropout(&self.dropout, relu(self.hidden.forward(pooled)));
        self.classify.forward(hidden)
    }
}

/// Mean cross-entropy and accuracy of `model` on `clouds`.
fn evaluate(model: &Dgcnn, clouds: &[PointCloud], batch: usize, device: &Device) -> (f64, f64) {
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    let (mut loss, mut correct) = (0.0, 0);
    let idx: Vec<usize> = (0..clouds.len()).collect();
    for chunk in idx.chunks(batch) {
        let (g, y) = point_cloud_batch(clouds, chunk, device).unwrap_or_else(|e| exit_with(1, e));
        let logits = model.forward(g.node_tensor::<2>().expect("positions"), &g);
        let pred = logits.clone().argmax(1).squeeze_dim::<1>(1);
        correct += pred.equal(y.clone()).int().sum().into_scalar::<i64>();
        loss += loss_fn.forward(logits, y).into_scalar::<f64>() * chunk.len() as f64;
    }
    (
        loss / clouds.len() as f64,
        correct as f64 / clouds.len() as f64,
    )
}

fn main() {
    let args = Args::parse();
    let base = args.backend.device_or_exit();
    let held = (args.clouds / 5).max(SOLID_SHAPES.len());
    let clouds = |count: usize, seed: u64| point_clouds(count, args.points, args.noise, seed);
    let (val, test) = (clouds(held, 0xA11D), clouds(held, 0x7E57));
    let setup = Setup {
        lr: 0.001,
        weight_decay: 0.0,
        epochs: args.epochs as usize,
        stopping: StoppingRule::BestValAcc,
    };
    let run = format!(
        "synthetic point clouds ({} points, k = {})",
        args.points, args.k
    );

    if let Some(path) = &args.run.checkpoint {
        let model = load_checkpoint(Dgcnn::new(args.k, &base), path).valid();
        let val_acc = evaluate(&model, &val, args.batch_size, &base).1;
        let test_acc = evaluate(&model, &test, args.batch_size, &base).1;
        println!("{run}: val acc {val_acc:.4}, test acc {test_acc:.4}");
        verify_checkpoint(path, args.backend, (val_acc, test_acc));
        return;
    }

    let outputs = Outputs::create(
        args.run
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs/point_cloud")),
    );
    let train_dev = base.clone().autodiff();
    let started = Instant::now();
    let (mut rows, mut results) = (Vec::new(), Vec::new());
    println!(
        "{run}: {} training, {held} validation, {held} test clouds, {} seeds × {} epochs",
        args.clouds, args.seeds, args.epochs
    );
    for seed in 0..args.seeds as u64 {
        let seed_started = Instant::now();
        train_dev.seed(seed);
        let train = clouds(args.clouds, 0x7EA1 + seed);
        let mut model = Dgcnn::new(args.k, &train_dev);
        let mut optim = AdamConfig::new().init();
        let loss_fn = CrossEntropyLossConfig::new().init(&train_dev);
        let mut stopping = EarlyStopping::new(setup.stopping);
        let (mut kept, mut checkpoint) = ((0, 0.0, 0.0, 0.0), None);
        let mut order: Vec<usize> = (0..train.len()).collect();
        let mut rng = SplitMix64::new(seed);
        let mut bar = Progress::new(args.epochs, format!("seed {seed}"));
        for epoch in 1..=args.epochs as usize {
            rng.shuffle(&mut order);
            let (mut loss_sum, mut correct) = (0.0, 0i64);
            for chunk in order.chunks(args.batch_size) {
                let (g, y) = point_cloud_batch(&train, chunk, &train_dev)
                    .unwrap_or_else(|e| exit_with(1, e));
                let logits = model.forward(g.node_tensor::<2>().expect("positions"), &g);
                let pred = logits.clone().argmax(1).squeeze_dim::<1>(1);
                correct += pred.equal(y.clone()).int().sum().into_scalar::<i64>();
                let loss = loss_fn.forward(logits, y);
                loss_sum += loss.clone().into_scalar::<f64>() * chunk.len() as f64;
                let grads = GradientsParams::from_grads(loss.backward(), &model);
                model = optim.step(setup.lr, model, grads);
            }
            let eval = model.valid();
            let (val_loss, val_acc) = evaluate(&eval, &val, args.batch_size, &base);
            let test_acc = evaluate(&eval, &test, args.batch_size, &base).1;
            if stopping.observe(val_acc, val_loss).keep {
                kept = (epoch, val_acc, val_loss, test_acc);
                checkpoint = Some(outputs.save_model(model.clone(), seed));
            }
            let train_loss = loss_sum / train.len() as f64;
            rows.push(EpochRow {
                seed,
                epoch,
                train_loss,
                train_acc: correct as f64 / train.len() as f64,
                val_loss,
                val_acc,
                test_acc,
            });
            let status = format!("loss {train_loss:.3}  val {val_acc:.3}  test {test_acc:.3}");
            bar.set(epoch as u64, status);
        }
        let (kept_epoch, val_acc, val_loss, test_acc) = kept;
        bar.finish(format!(
            "kept epoch {kept_epoch}: val {val_acc:.3}, test {test_acc:.3}"
        ));
        results.push(SeedResult {
            seed,
            kept_epoch,
            epochs_run: args.epochs as usize,
            val_acc,
            val_loss,
            test_acc,
            seconds: seed_started.elapsed().as_secs_f64(),
            checkpoint,
        });
    }
    let seconds = started.elapsed().as_secs_f64();
    let summary = Summary::new("point_cloud", &run, args.backend, &setup, results, seconds);
    summary.print("no published figure: a synthetic task", "seed");
    outputs.write_all(&run, &summary, &rows);
}
