//! [`GraphConv`]: the higher-order GNN layer of Morris et al. (2019).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::{Aggregation, EdgeInputs, MessagePassing, compat};

/// Configuration of a [`GraphConv`]; defaults are PyG's `GraphConv`.
#[derive(Config, Debug)]
pub struct GraphConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// The neighbour aggregation (see [`Aggregation`]).
    #[config(default = "Aggregation::Sum")]
    pub aggr: Aggregation,
    /// A bias in the neighbour transform.
    #[config(default = true)]
    pub bias: bool,
}

/// GraphConv, [Morris et al., AAAI 2019](https://arxiv.org/abs/1810.02244):
///
/// `x'_i = W_1 x_i + W_2 · aggr_{j ∈ N(i)} e_ji · x_j` (+ bias in `W_2`), `e_ji` the edge
/// weight (1 by default).
///
/// # Shapes
/// `x: [N, d_input]`, `edge_weight: [E]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GraphConv {
    /// `W_2`, on the aggregated neighbours (with bias).
    pub lin_rel: Linear,
    /// `W_1`, on the node itself (no bias).
    pub lin_root: Linear,
    /// The aggregation.
    #[module(skip)]
    pub aggr: Aggregation,
}

impl GraphConvConfig {
    /// A [`GraphConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> GraphConv {
        let aggr = self.aggr.clone();
        GraphConv {
            lin_rel: LinearConfig::new(self.d_input * aggr.width(), self.d_output)
                .with_bias(self.bias)
                .init(device),
            lin_root: LinearConfig::new(self.d_input, self.d_output)
                .with_bias(false)
                .init(device),
            aggr,
        }
    }
}

impl GraphConv {
    /// Applies the layer over `graph`, unweighted.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.propagate(x, graph, None)
    }

    /// Applies the layer with edge weights `e_ji` (PyG's `forward(x, edge_index,
    /// edge_weight)`).
    ///
    /// # Shapes
    /// `x: [N, d_input]`, `edge_weight: [E]` -> `[N, d_output]`.
    pub fn forward_with(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_weight: Tensor<1>,
    ) -> Tensor<2> {
        self.propagate(x, graph, Some(edge_weight.unsqueeze_dim(1)))
    }
}

impl MessagePassing for GraphConv {
    /// `e_ji · x_j`, the weight `[E, 1]` in `edge_attr` (1 without).
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        match edges.edge_attr() {
            Some(w) => edges.x_j() * w,
            None => edges.x_j(),
        }
    }

    fn aggregation(&self) -> Aggregation {
        self.aggr.clone()
    }

    /// Unweighted, the aggregation's fused form; a weighted sum is one gather-weight-sum.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let x = edges.x_src();
        match edges.edge_attr() {
            Some(w) if edges.num_edges() > 0 && self.aggr == Aggregation::Sum => {
                Some(edges.spmm(x, w))
            }
            Some(_) if edges.num_edges() > 0 => None,
            _ => Some(edges.aggregate_gathered(&self.aggr, x)),
        }
    }

    /// `W_1 x_i + W_2 · aggregated`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        compat::linear(&self.lin_rel, aggregated) + compat::linear(&self.lin_root, x_dst)
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.lin_root.weight.dims()[1])
    }
}
