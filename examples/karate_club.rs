//! Semi-supervised node classification on Zachary's karate club (embedded; runs in seconds):
//! a 3-layer GCN (34 → 4 → 4 → 2, tanh) and a linear classifier learn the four communities of
//! the GCN paper from one labelled member each, as PyG's introductory example.
//!
//! ```sh
//! cargo run --release --example karate_club                 # 10 seeds, 400 epochs each
//! cargo run --release --example karate_club -- --epochs 50 --seeds 2
//! ```
//!
//! Prints each seed's accuracy on the 30 unlabelled members, and, for the first seed, the 2-D
//! embedding the GCN learned for each member (the communities separate in it).

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::tanh;
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::KarateClub;
use burn_gnn_graph::GraphsTuple;
use burn_gnn_nn::{GcnConv, GcnConvConfig};
use clap::Parser;

// ANCHOR: model
/// GCN layers 34 → 4 → 4 → 2 with tanh, then a linear map to the 4 communities.
#[derive(Module, Debug)]
struct KarateGcn {
    convs: Vec<GcnConv>,
    classifier: Linear,
}

impl KarateGcn {
    fn new(device: &Device) -> KarateGcn {
        let widths = [(34, 4), (4, 4), (4, 2)];
        KarateGcn {
            convs: widths
                .iter()
                .map(|&(i, o)| GcnConvConfig::new(i, o).init(device))
                .collect(),
            classifier: LinearConfig::new(2, KarateClub::NUM_CLASSES).init(device),
        }
    }

    /// `(logits [34, 4], embedding [34, 2])`.
    fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> (Tensor<2>, Tensor<2>) {
        let h = self
            .convs
            .iter()
            .fold(x, |h, conv| tanh(conv.forward(h, graph)));
        (self.classifier.forward(h.clone()), h)
    }
}
// ANCHOR_END: model

/// Semi-supervised node classification on Zachary's karate club: a 3-layer GCN learns the four
/// communities from one labelled member each.
#[derive(Parser)]
#[command(name = "karate_club")]
struct Args {
    /// Epochs per seed.
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    /// Seeds to train, 0..N.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
}

fn main() {
    let Args { epochs, seeds } = Args::parse();
    let karate = KarateClub::load();
    let base = Device::flex();
    let device = base.clone().autodiff();
    let graph = karate.graph(&device).expect("the embedded graph is valid");
    let x = graph.node_tensor::<2>().expect("identity features");
    let labels = karate.labels(&device);
    let train: Vec<i64> = (0..34).filter(|&i| karate.train_mask[i as usize]).collect();
    let test: Vec<i64> = (0..34)
        .filter(|&i| !karate.train_mask[i as usize])
        .collect();
    let ids =
        |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &device);
    let (train_idx, test_idx) = (ids(&train), ids(&test));
    let train_labels = labels.clone().select(0, train_idx.clone());
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    println!(
        "karate club: 34 members, {} directed edges, {} communities, trained on members {train:?}",
        karate.senders.len(),
        KarateClub::NUM_CLASSES
    );
    let mut accs = Vec::new();
    for seed in 0..seeds {
        device.seed(seed);
        let mut model = KarateGcn::new(&device);
        let mut optim = AdamConfig::new().init();
        let mut last_loss = f64::NAN;
        for _ in 0..epochs {
            let (logits, _) = model.forward(x.clone(), &graph);
            let loss = loss_fn.forward(logits.select(0, train_idx.clone()), train_labels.clone());
            last_loss = loss.clone().into_scalar::<f64>();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(0.01, model, grads);
        }
        let (logits, embedding) = model.valid().forward(x.clone(), &graph);
        let pred = logits.argmax(1).squeeze_dim::<1>(1);
        let right = pred
            .clone()
            .select(0, test_idx.clone())
            .equal(labels.clone().select(0, test_idx.clone()))
            .int()
            .sum()
            .into_scalar::<i64>();
        let acc = right as f64 / test.len() as f64;
        println!(
            "seed {seed}: training loss {last_loss:.4}, accuracy on the 30 unlabelled members {:.1} %",
            100.0 * acc
        );
        accs.push(acc);
        if seed == 0 {
            let emb: Vec<f32> = embedding.into_data().iter::<f32>().collect();
            let pred: Vec<i64> = pred.into_data().iter::<i64>().collect();
            println!("  member  community  predicted  embedding");
            for i in 0..34 {
                println!(
                    "  {i:>6}  {:>9}  {:>9}  ({:+.3}, {:+.3}){}",
                    karate.labels[i],
                    pred[i],
                    emb[2 * i],
                    emb[2 * i + 1],
                    if karate.train_mask[i] {
                        "  (labelled)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    let (mean, std) = burn_gnn::train::mean_std(&accs);
    // The majority community among the unlabelled members is the chance baseline.
    let majority = (0..KarateClub::NUM_CLASSES as i64)
        .map(|c| {
            test.iter()
                .filter(|&&i| karate.labels[i as usize] == c)
                .count()
        })
        .max()
        .unwrap_or(0) as f64
        / test.len() as f64;
    println!(
        "accuracy over {} seed(s): {:.1} ± {:.1} %  (always predicting the largest community: {:.1} %)",
        accs.len(),
        100.0 * mean,
        100.0 * std,
        100.0 * majority
    );
}
