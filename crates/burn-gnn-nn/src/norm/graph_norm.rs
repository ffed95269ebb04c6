//! [`GraphNorm`] (Cai et al., 2021).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use super::ones;
use crate::conv::zeros;

/// Configuration of a [`GraphNorm`].
#[derive(Config, Debug)]
pub struct GraphNormConfig {
    /// Features per node.
    pub d_input: usize,
    /// Added to the variance before the square root.
    #[config(default = 1e-5)]
    pub eps: f64,
}

/// GraphNorm, [Cai et al., 2021](https://arxiv.org/abs/2009.03294) (PyG's `GraphNorm`): each
/// graph's node features shifted by a learnt fraction `α` of their mean and scaled to unit
/// variance, per feature:
///
/// `x' = γ ⊙ (x − α ⊙ μ_G) / sqrt(σ²_G + eps) + β`, `μ_G = mean_{i ∈ G} x_i`,
/// `σ²_G = mean_{i ∈ G} (x_i − α ⊙ μ_G)²`.
///
/// # Shapes
/// `x: [sum_n_node, d_input]` -> `[sum_n_node, d_input]`.
#[derive(Module, Debug)]
pub struct GraphNorm {
    /// `γ`, `[d_input]`, initialised to ones.
    pub weight: Param<Tensor<1>>,
    /// `β`, `[d_input]`, initialised to zeros.
    pub bias: Param<Tensor<1>>,
    /// `α`, `[d_input]`, initialised to ones (the mean subtracted in full).
    pub mean_scale: Param<Tensor<1>>,
    /// See [`GraphNormConfig::eps`].
    pub eps: f64,
}

impl GraphNormConfig {
    /// A [`GraphNorm`] with `γ = α = 1` and `β = 0`.
    pub fn init(&self, device: &Device) -> GraphNorm {
        GraphNorm {
            weight: ones(self.d_input, device),
            bias: zeros([self.d_input], device),
            mean_scale: ones(self.d_input, device),
            eps: self.eps,
        }
    }
}

impl GraphNorm {
    /// Normalises each graph's nodes.
    ///
    /// # Panics
    /// If `x` does not have one row per node of `graph`, or its width is not `d_input`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return x;
        }
        let plan = graph.node_graph_plan();
        let row = |p: &Param<Tensor<1>>| p.val().unsqueeze_dim::<2>(0);
        let shifted = x.clone() - plan.gather(plan.mean(x)) * row(&self.mean_scale);
        let var = plan.mean(shifted.clone().powi_scalar(2));
        let std = plan.gather((var + self.eps).sqrt());
        shifted / std * row(&self.weight) + row(&self.bias)
    }
}
