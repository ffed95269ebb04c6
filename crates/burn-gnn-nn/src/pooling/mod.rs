//! Pooling, in one module: global readouts, one vector per graph ([`global_add_pool`],
//! [`global_mean_pool`], [`global_max_pool`], [`global_sort_pool`]; `global.rs`), learned
//! readouts ([`AttentionPool`], [`Set2Set`], [`SoftmaxAggregation`]; `readout.rs`), and layers
//! that keep a subset of each graph's nodes, scored per node: [`TopKPooling`] (a learnt
//! projection) and [`SagPooling`] (a graph convolution), with PyG's semantics. Their scores are
//! computed on the device; choosing the nodes and cutting the edges is a change of structure,
//! done on the host (one read of the scores and the graph, as PyG's `nonzero`).

mod global;
mod readout;
mod sag;
mod topk;

pub use global::{global_add_pool, global_max_pool, global_mean_pool, global_sort_pool};
pub use readout::{AttentionPool, AttentionPoolConfig, Set2Set, Set2SetConfig, SoftmaxAggregation};
pub use sag::{SagPooling, SagPoolingConfig};
pub use topk::{TopKPooling, TopKPoolingConfig};

use burn::tensor::{Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::Segments;

use crate::NnError;

/// How many nodes of each graph a pooling layer keeps.
#[derive(burn::config::Config, Debug, PartialEq)]
pub enum PoolSize {
    /// `⌈ratio · n_g⌉` of a graph's `n_g` nodes, `0 < ratio ≤ 1`.
    Ratio(f64),
    /// `min(k, n_g)` nodes.
    Count(usize),
}

/// How a pooling layer chooses and gates its nodes (PyG's `ratio`, `min_score`, `multiplier`).
#[derive(burn::config::Config, Debug, PartialEq)]
pub struct PoolSelection {
    /// How many nodes each graph keeps (PyG's `ratio`: a fraction, or a count).
    #[config(default = "PoolSize::Ratio(0.5)")]
    pub size: PoolSize,
    /// Keep the nodes whose softmax score exceeds this instead (PyG's `min_score`; `size` is
    /// then unused).
    #[config(default = "None")]
    pub min_score: Option<f64>,
    /// Scales the pooled features.
    #[config(default = 1.0)]
    pub multiplier: f64,
}

/// A pooled batch: the kept nodes' gated features and the graph they induce.
#[derive(Clone, Debug)]
pub struct Pooled {
    /// The kept nodes' features times their scores (times the multiplier), `[kept, d]`.
    pub x: Tensor<2>,
    /// The subgraph the kept nodes induce: the edges between them (with their features), the
    /// nodes relabelled in their original order, the same graphs (a graph may keep none).
    pub graph: GraphsTuple,
    /// Original index of each kept node, ascending, `[kept]`.
    pub node_ids: Tensor<1, Int>,
    /// Original index of each kept edge, ascending.
    pub edge_ids: Tensor<1, Int>,
    /// The kept nodes' scores, `[kept]`.
    pub score: Tensor<1>,
}

/// The nodes to keep, per graph: with `min_score`, every node whose score exceeds
/// `min(min_score, max_g − 1e-7)` (so each graph keeps its best node); otherwise the `size`
/// best of each graph, ties to the smaller node index.
fn keep_mask(
    scores: &[f64],
    n_node: &[i64],
    size: &PoolSize,
    min_score: Option<f64>,
) -> Result<Vec<bool>, NnError> {
    if let Some(i) = scores.iter().position(|s| s.is_nan()) {
        return Err(NnError::InvalidInput(format!(
            "pooling: node {i} has a NaN score"
        )));
    }
    let mut keep = vec![false; scores.len()];
    let mut start = 0;
    for &count in n_node {
        let nodes = start..start + count as usize;
        start = nodes.end;
        if nodes.is_empty() {
            continue;
        }
        if let Some(min) = min_score {
            let best = nodes
                .clone()
                .map(|i| scores[i])
                .fold(f64::NEG_INFINITY, f64::max);
            let threshold = min.min(best - 1e-7);
            nodes
                .filter(|&i| scores[i] > threshold)
                .for_each(|i| keep[i] = true);
            continue;
        }
        let k = match *size {
            PoolSize::Ratio(r) => ((r * nodes.len() as f64).ceil() as usize).min(nodes.len()),
            PoolSize::Count(k) => k.min(nodes.len()),
        };
        let mut order: Vec<usize> = nodes.collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        order.into_iter().take(k).for_each(|i| keep[i] = true);
    }
    Ok(keep)
}

/// Checks a [`PoolSize`].
fn check_size(size: &PoolSize) -> Result<(), NnError> {
    match *size {
        PoolSize::Ratio(r) if !(r > 0.0 && r <= 1.0) => Err(NnError::InvalidConfig(format!(
            "pooling ratio {r} is not in (0, 1]"
        ))),
        PoolSize::Count(0) => Err(NnError::InvalidConfig("pooling count 0".into())),
        _ => Ok(()),
    }
}

/// The per-node score gated as PyG does: `tanh(raw)` without `min_score`, the softmax of `raw`
/// over each graph's nodes with it.
fn gate(raw: Tensor<1>, graph: &GraphsTuple, min_score: Option<f64>) -> Tensor<1> {
    let n = raw.dims()[0];
    match min_score {
        None => raw.tanh(),
        Some(_) if n == 0 => raw,
        Some(_) => graph
            .node_graph_plan()
            .softmax(raw.reshape([n, 1]))
            .reshape([n]),
    }
}

/// Keeps the nodes `score` selects and gates their features: `x_i · score_i · multiplier`.
fn select(
    x: Tensor<2>,
    score: Tensor<1>,
    graph: &GraphsTuple,
    selection: &PoolSelection,
) -> Result<Pooled, NnError> {
    let (size, min_score, multiplier) =
        (&selection.size, selection.min_score, selection.multiplier);
    check_size(size)?;
    let scores: Vec<f64> = score.clone().detach().into_data().iter::<f64>().collect();
    let n_node: Vec<i64> = graph.n_node().clone().into_data().iter::<i64>().collect();
    let keep = keep_mask(&scores, &n_node, size, min_score)?;
    let sub = graph.subgraph(&keep)?;
    let kept_score = gather_rows(score, sub.node_ids.clone());
    let gated = gather_rows(x, sub.node_ids.clone()) * kept_score.clone().unsqueeze_dim::<2>(1);
    Ok(Pooled {
        x: if multiplier == 1.0 {
            gated
        } else {
            gated * multiplier
        },
        graph: sub.graph,
        node_ids: sub.node_ids,
        edge_ids: sub.edge_ids,
        score: kept_score,
    })
}
