//! [`SageConv`]: GraphSAGE (Hamilton et al., 2017).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::{Aggregation, EdgeInputs, MessagePassing, compat};

/// Configuration of a [`SageConv`]; defaults are PyG's `SAGEConv`.
#[derive(Config, Debug)]
pub struct SageConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// The neighbour aggregation ([`Aggregation::Multi`] concatenates several).
    #[config(default = "Aggregation::Mean")]
    pub aggr: Aggregation,
    /// Add the transformed root features `W_2 x_i`.
    #[config(default = true)]
    pub root_weight: bool,
    /// L2-normalise each output row.
    #[config(default = false)]
    pub normalize: bool,
    /// A bias in the neighbour transform.
    #[config(default = true)]
    pub bias: bool,
}

/// GraphSAGE, [Hamilton et al., NeurIPS 2017](https://arxiv.org/abs/1706.02216):
///
/// `x'_i = W_1 · aggr_{j ∈ N(i)} x_j + W_2 x_i` (+ bias in `W_1`), then optionally
/// `x'_i / max(‖x'_i‖₂, 1e-12)`. Nodes without incoming edges aggregate to 0.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct SageConv {
    /// `W_1`, on the aggregated neighbours (`[d_input · width, d_output]`, with bias).
    pub lin_neighbors: Linear,
    /// `W_2`, on the node itself (no bias); `None` without `root_weight`.
    pub lin_root: Option<Linear>,
    /// The aggregation.
    #[module(skip)]
    pub aggr: Aggregation,
    /// See [`SageConvConfig::normalize`].
    pub normalize: bool,
}

impl SageConvConfig {
    /// A [`SageConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> SageConv {
        let aggr = self.aggr.clone();
        let width = aggr.width();
        SageConv {
            lin_neighbors: LinearConfig::new(self.d_input * width, self.d_output)
                .with_bias(self.bias)
                .init(device),
            lin_root: self.root_weight.then(|| {
                LinearConfig::new(self.d_input, self.d_output)
                    .with_bias(false)
                    .init(device)
            }),
            aggr,
            normalize: self.normalize,
        }
    }
}

impl SageConv {
    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.propagate(x, graph, None)
    }
}

impl MessagePassing for SageConv {
    /// `x_j`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        edges.x_j()
    }

    fn aggregation(&self) -> Aggregation {
        self.aggr.clone()
    }

    /// The aggregation's fused form (a sum or mean never forms the `[E, D]` messages).
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        Some(edges.aggregate_gathered(&self.aggr, edges.x_src()))
    }

    /// `W_1 · aggregated + W_2 x_i`, L2-normalised with `normalize`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let mut out = compat::linear(&self.lin_neighbors, aggregated);
        if let Some(root) = &self.lin_root {
            out = out + compat::linear(root, x_dst);
        }
        if self.normalize {
            let norm = out
                .clone()
                .powi_scalar(2)
                .sum_dim(1)
                .sqrt()
                .clamp_min(1e-12);
            out = out / norm;
        }
        out
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.lin_neighbors.weight.dims()[1])
    }
}
