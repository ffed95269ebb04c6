//! The generated graph of the large-scale examples (`graphsage_large`, `graphsage_learner`):
//! a directed stochastic block model with 8 equal blocks (the classes), on average `degree`
//! incoming edges per node, 60 % from the node's own block. Node features are 32 Gaussian
//! values plus a weak pull towards the block's mean, so a node's neighbourhood tells its class
//! better than its own features. 5 % of the nodes train, 1 % validate, 1 % test.

use std::sync::Arc;
use std::time::Instant;

use burn_gnn_data::synthetic::{SplitMix64, stochastic_block_model};
use burn_gnn_data::{DataError, InNeighbors};

use super::cli::{Backend, at_least, exit_with};

/// The command-line options the large-graph examples share.
#[derive(Debug, clap::Args)]
pub struct LargeArgs {
    /// Nodes of the generated graph.
    #[arg(long, default_value_t = 1_000_000, value_parser = at_least::<1000>)]
    pub nodes: usize,
    /// Epochs.
    #[arg(long, default_value_t = 1, value_parser = at_least::<1>)]
    pub epochs: usize,
    /// Seeds per mini-batch: nodes, or edges for link prediction.
    #[arg(long, default_value_t = 1024, value_parser = at_least::<1>)]
    pub batch_size: usize,
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    pub backend: Backend,
}

/// Classes (blocks).
pub const BLOCKS: usize = 8;
/// Node features.
pub const FEATURES: usize = 32;

/// The graph, features, labels and splits.
pub struct LargeGraph {
    /// Incoming neighbour lists.
    pub lists: Arc<InNeighbors>,
    /// Node features, `[nodes, FEATURES]` row-major.
    pub x: Vec<f32>,
    /// The block of each node.
    pub labels: Vec<i64>,
    /// Number of edges.
    pub num_edges: usize,
    /// Training, validation and test nodes.
    pub train: Vec<i64>,
    /// See `train`.
    pub val: Vec<i64>,
    /// See `train`.
    pub test: Vec<i64>,
}

/// The graph of `n` nodes with mean in-degree `degree`, after a line saying what it holds and
/// how long it took (exits with status 2 when it cannot be built).
pub fn build(n: usize, degree: f64) -> LargeGraph {
    let start = Instant::now();
    let g = large_graph(n, degree).unwrap_or_else(|e| exit_with(2, e));
    println!(
        "graph: {n} nodes, {} edges, {BLOCKS} classes, {FEATURES} features; train/val/test {}/{}/{}; built in {:.1} s; peak memory {:.0} MB",
        g.num_edges,
        g.train.len(),
        g.val.len(),
        g.test.len(),
        start.elapsed().as_secs_f64(),
        peak_rss_mb().unwrap_or(f64::NAN)
    );
    g
}

/// The graph of `n` nodes with mean in-degree `degree`.
fn large_graph(n: usize, degree: f64) -> Result<LargeGraph, DataError> {
    let block = n / BLOCKS;
    let (inside, outside) = (
        0.6 * degree / block as f64,
        0.4 * degree / (n - block) as f64,
    );
    let probs: Vec<Vec<f64>> = (0..BLOCKS)
        .map(|a| {
            (0..BLOCKS)
                .map(|b| if a == b { inside } else { outside })
                .collect()
        })
        .collect();
    let mut sizes = vec![block; BLOCKS];
    sizes[BLOCKS - 1] += n - block * BLOCKS;
    let g = stochastic_block_model(&sizes, &probs, true, 42)?;
    let labels: Vec<i64> = g.blocks.clone().expect("a block model has blocks");
    let lists = Arc::new(InNeighbors::new(&g.senders, &g.receivers, n)?);
    let num_edges = g.senders.len();
    drop(g);
    let mut rng = SplitMix64::new(7);
    let means: Vec<f32> = (0..BLOCKS * FEATURES)
        .map(|_| (rng.normal() * 0.25) as f32)
        .collect();
    let x: Vec<f32> = (0..n * FEATURES)
        .map(|i| {
            rng.normal() as f32 + means[labels[i / FEATURES] as usize * FEATURES + i % FEATURES]
        })
        .collect();
    let mut order: Vec<i64> = (0..n as i64).collect();
    rng.shuffle(&mut order);
    let (train, rest) = order.split_at(n / 20);
    let (val, test) = (&rest[..n / 100], &rest[n / 100..n / 50]);
    Ok(LargeGraph {
        lists,
        x,
        labels,
        num_edges,
        train: train.to_vec(),
        val: val.to_vec(),
        test: test.to_vec(),
    })
}

/// Peak resident memory of this process in MB, from `/proc/self/status` (Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
