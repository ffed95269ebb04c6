//! [`PairNorm`] (Zhao & Akoglu, 2020).

use burn::config::Config;
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

/// Configuration of a [`PairNorm`].
#[derive(Config, Debug)]
pub struct PairNormConfig {
    /// The scale `s` of every output row's (mean) norm.
    #[config(default = 1.0)]
    pub scale: f64,
    /// Scale each node to norm `s` (PairNorm-SI) instead of the graph's mean squared norm.
    #[config(default = false)]
    pub scale_individually: bool,
    /// Added under the square root (PairNorm) or to the norm (PairNorm-SI), as PyG.
    #[config(default = 1e-5)]
    pub eps: f64,
}

/// PairNorm, [Zhao & Akoglu, 2020](https://arxiv.org/abs/1909.12223) (PyG's `PairNorm`), against
/// over-smoothing: each graph's nodes centred, then scaled so that their mean squared norm is
/// `s²`:
///
/// `x^c_i = x_i − mean_{j ∈ G} x_j`, `x'_i = s · x^c_i / sqrt(eps + mean_{j ∈ G} ‖x^c_j‖²)`,
/// or with `scale_individually`, `x'_i = s · x^c_i / (eps + ‖x^c_i‖)`. No parameters.
///
/// # Shapes
/// `x: [sum_n_node, d]` -> `[sum_n_node, d]`.
#[derive(Module, Debug)]
pub struct PairNorm {
    /// See [`PairNormConfig::scale`].
    pub scale: f64,
    /// See [`PairNormConfig::scale_individually`].
    pub scale_individually: bool,
    /// See [`PairNormConfig::eps`].
    pub eps: f64,
}

impl PairNormConfig {
    /// A [`PairNorm`] (it has no parameters to put on `_device`).
    pub fn init(&self, _device: &Device) -> PairNorm {
        PairNorm {
            scale: self.scale,
            scale_individually: self.scale_individually,
            eps: self.eps,
        }
    }
}

impl PairNorm {
    /// Centres and rescales each graph's nodes.
    ///
    /// # Panics
    /// If `x` does not have one row per node of `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return x;
        }
        let plan = graph.node_graph_plan();
        let centred = x.clone() - plan.gather(plan.mean(x));
        let squared_norms = centred.clone().powi_scalar(2).sum_dim(1); // [N, 1]
        let divisor = if self.scale_individually {
            // Clamped so that a node at its graph's mean (a one-node graph) gets a zero
            // gradient, not the NaN of sqrt at 0; the value moves by less than 1e-18.
            squared_norms.clamp_min(f32::MIN_POSITIVE as f64).sqrt() + self.eps
        } else {
            plan.gather((plan.mean(squared_norms) + self.eps).sqrt())
        };
        centred / divisor * self.scale
    }
}
