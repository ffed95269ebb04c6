//! [`GraphLayerNorm`]: layer normalisation over each graph's nodes and features.

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use super::ones;
use crate::conv::zeros;

/// Configuration of a [`GraphLayerNorm`].
#[derive(Config, Debug)]
pub struct GraphLayerNormConfig {
    /// Features per node.
    pub d_input: usize,
    /// Added to the variance before the square root.
    #[config(default = 1e-5)]
    pub eps: f64,
    /// Learn an elementwise scale and shift.
    #[config(default = true)]
    pub affine: bool,
}

/// Layer normalisation per graph, [Ba et al., 2016](https://arxiv.org/abs/1607.06450) as PyG's
/// `LayerNorm(mode="graph")`: one mean and one variance over all the nodes and features of a
/// graph (not per node, as Burn's `LayerNorm`, nor per feature, as [`GraphNorm`](crate::GraphNorm)):
///
/// `μ_G = mean_{i ∈ G, c} x_ic`, `σ²_G = mean_{i ∈ G, c} (x_ic − μ_G)²`,
/// `x' = γ ⊙ (x − μ_G) / sqrt(σ²_G + eps) + β`.
///
/// # Shapes
/// `x: [sum_n_node, d_input]` -> `[sum_n_node, d_input]`.
#[derive(Module, Debug)]
pub struct GraphLayerNorm {
    /// `γ`, `[d_input]` (ones), with `affine`.
    pub weight: Option<Param<Tensor<1>>>,
    /// `β`, `[d_input]` (zeros), with `affine`.
    pub bias: Option<Param<Tensor<1>>>,
    /// See [`GraphLayerNormConfig::eps`].
    pub eps: f64,
}

impl GraphLayerNormConfig {
    /// A [`GraphLayerNorm`] with `γ = 1` and `β = 0` when affine.
    pub fn init(&self, device: &Device) -> GraphLayerNorm {
        GraphLayerNorm {
            weight: self.affine.then(|| ones(self.d_input, device)),
            bias: self.affine.then(|| zeros([self.d_input], device)),
            eps: self.eps,
        }
    }
}

impl GraphLayerNorm {
    /// Normalises each graph's nodes and features together.
    ///
    /// # Panics
    /// If `x` does not have one row per node of `graph`, or its width is not `d_input`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return x;
        }
        let plan = graph.node_graph_plan();
        // Per-node means of the features, averaged over the graph's nodes: the mean over both.
        let mean = plan.mean(x.clone().mean_dim(1)); // [G, 1]
        let centred = x - plan.gather(mean);
        let var = plan.mean(centred.clone().powi_scalar(2).mean_dim(1));
        let mut out = centred / plan.gather((var + self.eps).sqrt());
        if let (Some(w), Some(b)) = (&self.weight, &self.bias) {
            out = out * w.val().unsqueeze_dim::<2>(0) + b.val().unsqueeze_dim::<2>(0);
        }
        out
    }
}
