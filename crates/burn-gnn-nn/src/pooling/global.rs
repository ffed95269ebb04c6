//! Readout: one vector per graph from its nodes.

use burn::tensor::Tensor;
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use crate::Aggregation;
use crate::aggregation::sum_with;

/// Sum of each graph's node rows (PyG's `global_add_pool`); 0 for graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_add_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    sum_with(x, graph.node_graph_plan())
}

/// Mean of each graph's node rows (PyG's `global_mean_pool`); 0 for graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_mean_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    if x.dims()[0] == 0 {
        return sum_with(x, graph.node_graph_plan());
    }
    graph.node_graph_plan().mean(x)
}

/// Column-wise maximum of each graph's node rows (PyG's `global_max_pool`); 0 (not `-inf`) for
/// graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, D]`.
pub fn global_max_pool(x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
    if x.dims()[0] == 0 {
        return sum_with(x, graph.node_graph_plan());
    }
    graph.node_graph_plan().max_or_constant(x, 0.0)
}

/// SortPool's readout, [Zhang et al., 2018](https://www.cse.wustl.edu/~muhan/papers/AAAI_2018_DGCNN.pdf)
/// (PyG's `global_sort_pool` / `SortAggregation`): each graph's `k` nodes with the largest last
/// feature, in descending order, their rows concatenated; a graph of fewer than `k` nodes is
/// padded with zero rows.
///
/// Ties go to the smaller node index (PyG's order is torch's sort's), and NaN sorts above every
/// number, as in torch. Gradients reach the selected rows.
///
/// # Shapes
/// `x: [sum_n_node, C]` -> `[n_graph, k · C]`.
pub fn global_sort_pool(x: Tensor<2>, graph: &GraphsTuple, k: usize) -> Tensor<2> {
    // The same selection as the `sort:K` aggregation, over each graph's nodes.
    Aggregation::Sort(k).aggregate_with(x, graph.node_graph_plan())
}
