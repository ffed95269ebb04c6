//! [`GinConv`]: the graph isomorphism network layer (Xu et al., 2019).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::{Aggregation, EdgeInputs, MessagePassing};

/// Configuration of a [`GinConv`]; `eps` and `train_eps` default as PyG's `GINConv`.
#[derive(Config, Debug)]
pub struct GinConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Hidden width of the two-layer MLP.
    pub d_hidden: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Initial `ε`.
    #[config(default = 0.0)]
    pub eps: f64,
    /// Learn `ε` (GIN-ε) instead of keeping it fixed (GIN-0).
    #[config(default = false)]
    pub train_eps: bool,
    /// Batch-normalise the MLP's hidden layer (`Linear → BatchNorm → ReLU → Linear`), as in Xu
    /// et al.'s experiments and PyG's `GIN` model.
    #[config(default = false)]
    pub batch_norm: bool,
}

/// GIN, [Xu et al., ICLR 2019](https://arxiv.org/abs/1810.00826):
///
/// `x'_i = MLP((1 + ε) · x_i + Σ_{j ∈ N(i)} x_j)`, with `MLP = Linear → ReLU → Linear` (the
/// paper's two-layer perceptron; PyG takes the MLP as an argument), or with `batch_norm`
/// `Linear → BatchNorm → ReLU → Linear`; the batch norm uses the batch's statistics on an
/// autodiff device and its running ones elsewhere (Burn's `BatchNorm`).
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GinConv {
    /// First MLP layer, `d_input -> d_hidden`.
    pub mlp_in: Linear,
    /// Second MLP layer, `d_hidden -> d_output`.
    pub mlp_out: Linear,
    /// The batch norm of the hidden layer, when configured.
    pub norm: Option<BatchNorm>,
    /// The learned `ε`, `[1]` (GIN-ε); `None` when `ε` is fixed.
    pub eps: Option<Param<Tensor<1>>>,
    /// The fixed `ε` (GIN-0 for 0), used when `eps` is `None`.
    pub eps_fixed: f64,
}

impl GinConvConfig {
    /// A [`GinConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> GinConv {
        GinConv {
            mlp_in: LinearConfig::new(self.d_input, self.d_hidden).init(device),
            mlp_out: LinearConfig::new(self.d_hidden, self.d_output).init(device),
            norm: self
                .batch_norm
                .then(|| BatchNormConfig::new(self.d_hidden).init(device)),
            eps: trainable_eps(self.train_eps, self.eps, device),
            eps_fixed: self.eps,
        }
    }
}

/// GIN's `ε` as a parameter starting at `eps` when `train` (else the layer keeps it fixed).
pub(crate) fn trainable_eps(train: bool, eps: f64, device: &Device) -> Option<Param<Tensor<1>>> {
    train.then(|| Param::from_tensor(Tensor::from_floats([eps as f32], device)))
}

impl GinConv {
    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.propagate(x, graph, None)
    }
}

/// GIN's root term `(1 + ε) · x`, `ε` learned (`eps`) or fixed (`eps_fixed`).
pub(crate) fn gin_root(eps: &Option<Param<Tensor<1>>>, eps_fixed: f64, x: Tensor<2>) -> Tensor<2> {
    match eps {
        Some(eps) => x * eps.val().add_scalar(1.0).unsqueeze_dim(0),
        None => x.mul_scalar(1.0 + eps_fixed),
    }
}

impl MessagePassing for GinConv {
    /// `x_j`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        edges.x_j()
    }

    /// The sum as one fused gather-sum.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        Some(edges.aggregate_gathered(&Aggregation::Sum, edges.x_src()))
    }

    /// `MLP((1 + ε) x_i + aggregated)`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let h = crate::compat::linear(
            &self.mlp_in,
            gin_root(&self.eps, self.eps_fixed, x_dst) + aggregated,
        );
        let h = match &self.norm {
            Some(norm) => norm.forward(h),
            None => h,
        };
        crate::compat::linear(&self.mlp_out, relu(h))
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.mlp_out.weight.dims()[1])
    }
}
