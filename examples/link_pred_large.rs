//! Link prediction at scale: a GraphSAGE encoder trained on `LinkNeighborLoader` mini-batches
//! of a generated graph of a million nodes and ten million edges, reporting test ROC AUC,
//! time per epoch and peak memory.
//!
//! ```sh
//! cargo run --release --example link_pred_large                       # 1e6 nodes, 1e7 edges
//! cargo run --release --example link_pred_large -- --nodes 100000 --max-batches 50
//! ```
//!
//! The graph (`common::large`) is a directed stochastic block model with 8 blocks, 60 % of
//! each node's incoming edges from its own block, and node features pulled weakly towards their
//! block's mean: the planted signal is that two nodes of one block are far likelier to be
//! linked. `RandomLinkSplit` holds out 5 % / 10 % of the edges with as many fixed negatives;
//! training draws one fresh negative per seed edge and samples two layers (fan-outs 10 and 5)
//! around every endpoint; the test pairs are scored the same way, messages passing along the
//! training and validation edges.

// The parts of examples/common this example uses.
mod common {
    pub mod cli;
    pub mod large;
    pub mod progress;
}

use std::sync::Arc;
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::{
    InNeighbors, LinkNeighborLoader, LinkSampledBatch, LinkSet, NegativeSampling, RandomLinkSplit,
};
use burn_gnn_nn::{GraphSage, GraphSageConfig, InnerProductDecoder, bce_with_logits, roc_auc};
use clap::Parser;
use common::cli::{at_least, exit_with};
use common::large::{self as large, FEATURES, LargeArgs, peak_rss_mb};
use common::progress::Progress;

/// GraphSAGE link prediction on LinkNeighborLoader mini-batches of a generated graph of a
/// million nodes and ten million edges.
#[derive(Debug, Parser)]
#[command(name = "link_pred_large")]
struct Args {
    #[command(flatten)]
    large: LargeArgs,
    /// Stop each epoch after this many batches [default: 400].
    #[arg(long, default_value_t = 400, value_parser = at_least::<1>)]
    max_batches: usize,
    /// Test pairs scored (positives and as many negatives) [default: 20000].
    #[arg(long, default_value_t = 20_000, value_parser = at_least::<2>)]
    test_pairs: usize,
}

fn ints(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// Logits of a sampled batch's pairs, features gathered from `x`.
fn logits(model: &GraphSage, b: LinkSampledBatch, x: &Tensor<2>, device: &Device) -> Tensor<1> {
    let graph = b
        .batch
        .graph(x, device)
        .expect("a sampled batch is a valid graph");
    let z = model.forward(graph.node_tensor::<2>().expect("features"), &graph);
    InnerProductDecoder.forward(z, ints(b.senders, device), ints(b.receivers, device))
}

/// In-neighbour lists of a split's message edges.
fn lists(set: &LinkSet, senders: &[i64], receivers: &[i64], n: usize) -> Arc<InNeighbors> {
    let pick = |x: &[i64]| set.message_edges.iter().map(|&e| x[e]).collect::<Vec<_>>();
    Arc::new(InNeighbors::new(&pick(senders), &pick(receivers), n).expect("the graph's own edges"))
}

fn main() {
    let args = Args::parse();
    let base = args.large.backend.device_or_exit();
    let train_dev = base.clone().autodiff();
    let g = large::build(args.large.nodes, 10.0);
    let n = args.large.nodes;
    let (senders, receivers): (Vec<i64>, Vec<i64>) = g.lists.edges().unzip();
    let start = Instant::now();
    let split = RandomLinkSplit::new(0.05, 0.1)
        .with_seed(1)
        .split(&senders, &receivers, n)
        .unwrap_or_else(|e| exit_with(1, e));
    println!(
        "split: {} training, {} validation, {} test edges in {:.1} s; peak memory {:.0} MB",
        split.train.pos_edges.len(),
        split.val.pos_edges.len(),
        split.test.pos_edges.len(),
        start.elapsed().as_secs_f64(),
        peak_rss_mb().unwrap_or(f64::NAN)
    );
    let x_host = Tensor::<2>::from_data(TensorData::new(g.x.clone(), [n, FEATURES]), &base);
    let x_train = x_host.clone().to_device(&train_dev);
    let train_lists = lists(&split.train, &senders, &receivers, n);
    let loader = LinkNeighborLoader::new(
        train_lists,
        split.train.pos_senders.clone(),
        split.train.pos_receivers.clone(),
        vec![10, 5],
        args.large.batch_size,
        NegativeSampling::default(),
    )
    .unwrap_or_else(|e| exit_with(1, e))
    .with_seed(2);

    // The test pairs: the first `test_pairs / 2` positives and as many fixed negatives.
    let k = (args.test_pairs / 2).min(split.test.pos_senders.len());
    let t = &split.test;
    let test_s = [&t.pos_senders[..k], &t.neg_senders[..k]].concat();
    let test_r = [&t.pos_receivers[..k], &t.neg_receivers[..k]].concat();
    let labels: Vec<i64> = (0..2 * k).map(|i| i64::from(i < k)).collect();
    // The planted signal: how often a pair joins two nodes of one block.
    let same = |s: &[i64], r: &[i64]| {
        let hits = s
            .iter()
            .zip(r)
            .filter(|&(&a, &b)| g.labels[a as usize] == g.labels[b as usize]);
        100.0 * hits.count() as f64 / s.len().max(1) as f64
    };
    println!(
        "test pairs within one block: {:.0} % of positives, {:.0} % of negatives",
        same(&test_s[..k], &test_r[..k]),
        same(&test_s[k..], &test_r[k..])
    );
    let test_lists = lists(t, &senders, &receivers, n);
    let opts = NegativeSampling::default();
    let test_loader = LinkNeighborLoader::new(test_lists, test_s, test_r, vec![10, 5], 4096, opts)
        .and_then(|l| l.with_neg_sampling_ratio(0.0))
        .and_then(|l| l.with_labels(labels))
        .unwrap_or_else(|e| exit_with(1, e))
        .with_shuffle(false);

    train_dev.seed(0);
    let mut model = GraphSageConfig::new(FEATURES, 64, 64).init(&train_dev);
    let mut optim = AdamConfig::new().with_epsilon(1e-8).init();
    for epoch in 0..args.large.epochs {
        let batches = loader.num_batches().min(args.max_batches);
        let mut bar = Progress::new(
            batches as u64,
            format!("epoch {}/{}", epoch + 1, args.large.epochs),
        );
        let epoch_start = Instant::now();
        let mut sampled_edges = 0;
        for (i, b) in loader.epoch(epoch as u64).take(batches).enumerate() {
            sampled_edges += b.batch.num_edges();
            let y: Vec<f32> = b.labels.iter().map(|&l| l as f32).collect();
            let y = Tensor::<1>::from_data(TensorData::new(y.clone(), [y.len()]), &train_dev);
            let loss = bce_with_logits(logits(&model, b, &x_train, &train_dev), y);
            let value = loss.clone().into_scalar::<f64>();
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(0.01, model, grads);
            bar.set(i as u64 + 1, format!("loss {value:.3}"));
        }
        let seconds = epoch_start.elapsed().as_secs_f64();
        bar.finish(format!(
            "{batches} batches of {} seed edges in {seconds:.1} s ({:.1} M sampled edges/s)",
            args.large.batch_size,
            sampled_edges as f64 / seconds / 1e6
        ));

        let eval = model.valid();
        let (mut scores, mut truth) = (Vec::new(), Vec::new());
        for b in test_loader.epoch(0) {
            truth.extend(b.labels.iter().map(|&l| l == 1));
            scores.extend(logits(&eval, b, &x_host, &base).into_data().iter::<f64>());
        }
        let auc = roc_auc(&scores, &truth).expect("both classes");
        println!(
            "epoch {}: test ROC AUC {auc:.4} on {} pairs; peak memory {:.0} MB",
            epoch + 1,
            truth.len(),
            peak_rss_mb().unwrap_or(f64::NAN)
        );
    }
}
