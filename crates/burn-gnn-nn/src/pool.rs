//! Readout: one vector per graph from its nodes.

use burn::tensor::Tensor;
use burn_gnn_graph::GraphsTuple;
use burn_segment::{segment_max_or_constant, segment_mean};

use crate::aggregation::sum_into;

/// Sum of each graph's node rows (PyG's `global_add_pool`); 0 for graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_add_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    sum_into(x, graph.node_graph_ids(), graph.n_graph())
}

/// Mean of each graph's node rows (PyG's `global_mean_pool`); 0 for graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_mean_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    if x.dims()[0] == 0 {
        return sum_into(x, graph.node_graph_ids(), graph.n_graph());
    }
    segment_mean(x, graph.node_graph_ids(), graph.n_graph())
}

/// Column-wise maximum of each graph's node rows (PyG's `global_max_pool`); 0 (not `-inf`) for
/// graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_max_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    if x.dims()[0] == 0 {
        return sum_into(x, graph.node_graph_ids(), graph.n_graph());
    }
    segment_max_or_constant(x, graph.node_graph_ids(), graph.n_graph(), 0.0)
}
