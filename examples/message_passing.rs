//! A two-layer message-passing network built directly on the segment ops, trained on a
//! seeded two-community graph (a stochastic block model) with noisy node features.
//!
//! Each layer is GraphSAGE-like: `h'_i = relu(W_self h_i + W_neigh mean_{j -> i} h_j)`, where the
//! mean over incoming edges is `segment_mean(h[senders], receivers, num_nodes)`. Averaging over
//! neighbours denoises the features, so the GNN beats a per-node model (printed for comparison).
//!
//! Run: `cargo run --release --example message_passing` (`-- --help` lists the flags).

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
}

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;
use burn_segment::segment_mean;
use clap::Parser;
use common::cli::{Backend, at_least};

const NODES_PER_COMMUNITY: usize = 150;
const FEATURES: usize = 8;
const HIDDEN: usize = 16;

/// One GraphSAGE-like layer with mean aggregation.
#[derive(Module, Debug)]
struct SageLayer {
    self_weight: Linear,
    neighbour_weight: Linear,
}

impl SageLayer {
    fn new(d_input: usize, d_output: usize, device: &Device) -> Self {
        Self {
            self_weight: LinearConfig::new(d_input, d_output).init(device),
            neighbour_weight: LinearConfig::new(d_input, d_output)
                .with_bias(false)
                .init(device),
        }
    }

    fn forward(
        &self,
        h: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
    ) -> Tensor<2> {
        let n = h.dims()[0];
        let messages = h.clone().select(0, senders);
        let aggregated = segment_mean(messages, receivers, n);
        self.self_weight.forward(h) + self.neighbour_weight.forward(aggregated)
    }
}

/// Two SAGE layers; on a graph with no edges, the same model sees each node alone.
#[derive(Module, Debug)]
struct Gnn {
    layer1: SageLayer,
    layer2: SageLayer,
}

impl Gnn {
    fn forward(
        &self,
        x: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
    ) -> Tensor<2> {
        let h = relu(self.layer1.forward(x, senders.clone(), receivers.clone()));
        self.layer2.forward(h, senders, receivers)
    }
}

struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The graph (both edge directions), node features and labels.
struct Graph {
    senders: Vec<i64>,
    receivers: Vec<i64>,
    features: Vec<f32>,
    labels: Vec<i64>,
}

fn stochastic_block_model(seed: u64) -> Graph {
    let mut rng = Rng(seed);
    let n = 2 * NODES_PER_COMMUNITY;
    let labels: Vec<i64> = (0..n).map(|i| (i / NODES_PER_COMMUNITY) as i64).collect();
    let (mut senders, mut receivers) = (vec![], vec![]);
    for i in 0..n {
        for j in i + 1..n {
            let p = if labels[i] == labels[j] { 0.06 } else { 0.006 };
            if rng.next_f64() < p {
                senders.extend([i as i64, j as i64]);
                receivers.extend([j as i64, i as i64]);
            }
        }
    }
    let features = (0..n * FEATURES)
        .map(|k| {
            let signal = if labels[k / FEATURES] == 0 {
                0.15
            } else {
                -0.15
            };
            (signal + 2.0 * (rng.next_f64() - 0.5)) as f32
        })
        .collect();
    Graph {
        senders,
        receivers,
        features,
        labels,
    }
}

fn accuracy(logits: Tensor<2>, labels: Tensor<1, Int>, mask: Tensor<1, Bool>) -> f64 {
    let correct = logits
        .argmax(1)
        .squeeze_dim::<1>(1)
        .equal(labels)
        .int()
        .mul(mask.clone().int());
    let correct = correct.sum().into_scalar::<i64>() as f64;
    correct / mask.int().sum().into_scalar::<i64>() as f64
}

/// A two-layer message-passing network written on the segment ops, trained on a seeded
/// two-community graph with noisy node features.
#[derive(Parser)]
#[command(name = "message_passing")]
struct Args {
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    backend: Backend,
    /// Training epochs.
    #[arg(long, default_value_t = 100, value_parser = at_least::<1>)]
    epochs: usize,
    /// The seed of the graph and of the initial weights.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

fn main() {
    let Args {
        backend,
        epochs,
        seed,
    } = Args::parse();
    let device = backend.device_or_exit().autodiff();

    let g = stochastic_block_model(seed);
    let n = g.labels.len();
    println!(
        "graph: {n} nodes, {} directed edges, 2 communities, {FEATURES} noisy features",
        g.senders.len()
    );
    let x = Tensor::<2>::from_data(TensorData::new(g.features.clone(), [n, FEATURES]), &device);
    // The edge index as a validated GraphsTuple, sorted by receiver so that the mean
    // aggregation takes the segment ops' sorted fast path.
    let graph = GraphsTuple::from_coo(&g.senders, &g.receivers, n, &device)
        .expect("the generator emits valid node indices")
        .sort_by_receiver();
    let (senders, receivers) = (graph.senders().clone(), graph.receivers().clone());
    let labels = Tensor::<1, Int>::from_data(TensorData::new(g.labels.clone(), [n]), &device);
    // Every fifth node is labelled for training; the rest are the test set.
    let train: Vec<bool> = (0..n).map(|i| i % 5 == 0).collect();
    let test: Vec<bool> = train.iter().map(|t| !t).collect();
    let train_idx: Vec<i64> = (0..n as i64).filter(|&i| train[i as usize]).collect();
    let train_idx = Tensor::<1, Int>::from_data(
        TensorData::new(train_idx.clone(), [train_idx.len()]),
        &device,
    );
    let train_labels = labels.clone().select(0, train_idx.clone());
    let train = Tensor::<1, Bool>::from_data(TensorData::new(train, [n]), &device);
    let test = Tensor::<1, Bool>::from_data(TensorData::new(test, [n]), &device);
    // A graph with no edges turns the GNN into a per-node model with the same parameters.
    let no_edges = Tensor::<1, Int>::from_data(TensorData::new(Vec::<i64>::new(), [0]), &device);

    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    for (name, s, r) in [
        ("per-node (no edges)", no_edges.clone(), no_edges.clone()),
        ("GNN (mean aggregation)", senders.clone(), receivers.clone()),
    ] {
        // Seed Burn's parameter initialisation: both models start from the same draw, and every
        // run prints the same figures.
        device.seed(seed);
        let mut model = Gnn {
            layer1: SageLayer::new(FEATURES, HIDDEN, &device),
            layer2: SageLayer::new(HIDDEN, 2, &device),
        };
        let mut optim = AdamConfig::new().init();
        for epoch in 1..=epochs {
            let logits = model.forward(x.clone(), s.clone(), r.clone());
            let loss = loss_fn.forward(
                logits.clone().select(0, train_idx.clone()),
                train_labels.clone(),
            );
            if epoch % 25 == 0 || epoch == epochs {
                println!(
                    "  {name:<24} epoch {epoch:>4}  loss {:.4}  train acc {:.3}",
                    loss.clone().into_scalar::<f32>(),
                    accuracy(logits.clone(), labels.clone(), train.clone())
                );
            }
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(0.01, model, grads);
        }
        let logits = model.forward(x.clone(), s, r);
        println!(
            "{name:<26} test accuracy {:.3}",
            accuracy(logits, labels.clone(), test.clone())
        );
    }
}
