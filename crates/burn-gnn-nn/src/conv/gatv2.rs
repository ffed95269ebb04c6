//! [`GatV2Conv`]: dynamic graph attention (Brody et al., 2022).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig};
use burn::tensor::activation::leaky_relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use super::{mask_existing_loops, with_self_loops};

/// Configuration of a [`GatV2Conv`]; defaults are PyG's `GATv2Conv`.
#[derive(Config, Debug)]
pub struct GatV2ConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per head.
    pub d_output: usize,
    /// Attention heads.
    #[config(default = 1)]
    pub heads: usize,
    /// Concatenate the heads; otherwise average them.
    #[config(default = true)]
    pub concat: bool,
    /// Slope of the LeakyReLU inside the attention.
    #[config(default = 0.2)]
    pub negative_slope: f64,
    /// Dropout on the attention coefficients (training only).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Remove existing self loops and add one per node.
    #[config(default = true)]
    pub add_self_loops: bool,
    /// Use one weight matrix for sources and targets.
    #[config(default = false)]
    pub share_weights: bool,
    /// Add a learnable bias.
    #[config(default = true)]
    pub bias: bool,
}

/// GATv2, [Brody et al., ICLR 2022](https://arxiv.org/abs/2105.14491): attention computed after
/// the nonlinearity, so the ranking of neighbours can depend on the query node:
///
/// `α_ji = softmax_j(aᵀ LeakyReLU(W_s x_j + W_t x_i))`, `x'_i = ‖_h Σ_j α^h_ji W^h_s x_j + b`.
///
/// Self loops as in [`GatConv`](crate::GatConv).
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GatV2Conv {
    /// `W_s` (with bias, as PyG), `[d_input, heads · d_output]`.
    pub weight_src: Param<Tensor<2>>,
    /// Bias of `W_s`.
    pub bias_src: Param<Tensor<1>>,
    /// `W_t`; `None` with `share_weights`.
    pub weight_dst: Option<Param<Tensor<2>>>,
    /// Bias of `W_t`; `None` with `share_weights`.
    pub bias_dst: Option<Param<Tensor<1>>>,
    /// `a`, `[heads, d_output]`.
    pub att: Param<Tensor<2>>,
    /// Output bias.
    pub bias: Option<Param<Tensor<1>>>,
    /// Dropout on attention coefficients.
    pub dropout: Dropout,
    /// Attention heads.
    pub heads: usize,
    /// Output features per head.
    pub d_output: usize,
    /// See [`GatV2ConvConfig::concat`].
    pub concat: bool,
    /// See [`GatV2ConvConfig::negative_slope`].
    pub negative_slope: f64,
    /// See [`GatV2ConvConfig::add_self_loops`].
    pub add_self_loops: bool,
}

impl GatV2ConvConfig {
    /// A [`GatV2Conv`] with Glorot weights and zero biases.
    pub fn init(&self, device: &Device) -> GatV2Conv {
        let (h, c, d) = (self.heads, self.d_output, self.d_input);
        GatV2Conv {
            weight_src: super::glorot([d, h * c], d, h * c, device),
            bias_src: super::zeros([h * c], device),
            weight_dst: (!self.share_weights).then(|| super::glorot([d, h * c], d, h * c, device)),
            bias_dst: (!self.share_weights).then(|| super::zeros([h * c], device)),
            att: super::glorot([h, c], h, c, device),
            bias: self
                .bias
                .then(|| super::zeros([if self.concat { h * c } else { c }], device)),
            dropout: DropoutConfig::new(self.dropout).init(),
            heads: h,
            d_output: c,
            concat: self.concat,
            negative_slope: self.negative_slope,
            add_self_loops: self.add_self_loops,
        }
    }
}

impl GatV2Conv {
    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let n = x.dims()[0];
        let (h, c) = (self.heads, self.d_output);
        let width = if self.concat { h * c } else { c };
        if n == 0 {
            return crate::compat::no_rows(width, &x);
        }
        let x_src = x.clone().matmul(self.weight_src.val()) + self.bias_src.val().unsqueeze_dim(0);
        let x_dst = match (&self.weight_dst, &self.bias_dst) {
            (Some(w), Some(b)) => x.matmul(w.val()) + b.val().unsqueeze_dim(0),
            _ => x_src.clone(),
        };
        let (senders, receivers, existing) = with_self_loops(graph, self.add_self_loops);
        let e = senders.num_rows();
        let out = if e == 0 {
            Tensor::<3>::zeros([n, h, c], (&x_src.device(), x_src.dtype()))
        } else {
            let src = senders.gather(x_src.clone().reshape([n, h, c]));
            let dst = receivers.gather(x_dst.reshape([n, h, c]));
            let z = leaky_relu((src.clone() + dst).reshape([e, h * c]), self.negative_slope)
                .reshape([e, h, c]);
            let logits = (z * self.att.val().unsqueeze_dim::<3>(0))
                .sum_dim(2)
                .reshape([e, h]);
            let logits = mask_existing_loops(logits, existing);
            let alpha = crate::compat::dropout::dropout(&self.dropout, receivers.softmax(logits));
            receivers.sum(src * alpha.unsqueeze_dim::<3>(2))
        };
        super::combine_heads(out, self.concat, self.bias.as_ref())
    }
}
