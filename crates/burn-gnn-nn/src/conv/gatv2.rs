//! [`GatV2Conv`]: dynamic graph attention (Brody et al., 2022).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig};
use burn::tensor::activation::leaky_relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use super::{loop_mask_bias, with_self_loops};
use crate::{EdgeInputs, MessagePassing, RelationEdges};

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
        if x.dims()[0] == 0 {
            return crate::compat::no_rows(self.width(), &x);
        }
        let x_src = x.clone().matmul(self.weight_src.val()) + self.bias_src.val().unsqueeze_dim(0);
        let x_dst = match (&self.weight_dst, &self.bias_dst) {
            (Some(w), Some(b)) => x.matmul(w.val()) + b.val().unsqueeze_dim(0),
            _ => x_src.clone(),
        };
        let (senders, receivers, existing) = with_self_loops(graph, self.add_self_loops);
        let mask = existing.map(|m| loop_mask_bias(m, &x_src.device(), x_src.dtype()));
        let edges = RelationEdges::Plans(&senders, &receivers);
        self.propagate((x_src, x_dst), edges, mask)
    }

    /// The output width: `heads · d_output` concatenated, `d_output` averaged.
    fn width(&self) -> usize {
        super::heads_width(self.heads, self.d_output, self.concat)
    }
}

/// GATv2 over [`MessagePassing`]: the attention is the edge update, the messages `α_ji W_s
/// x_j`, aggregated by one fused gather-weight-sum. The features given to `propagate` are `(W_s
/// x, W_t x)`; the edge input is a logit bias (`-inf` masks an edge, as on the graph's own loops).
impl MessagePassing for GatV2Conv {
    /// `α_ji · W_s x_j` per head, `[E, heads · d_output]`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (e, h, c) = (edges.num_edges(), self.heads, self.d_output);
        let alpha = edges
            .edge_attr()
            .expect("GATv2's edge update gives the attention");
        let x_j = edges.x_j().reshape([e, h, c]);
        (x_j * alpha.unsqueeze_dim::<3>(2)).reshape([e, h * c])
    }

    /// `α = softmax_j(aᵀ LeakyReLU(W_s x_j + W_t x_i) + bias)` per head, with dropout.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let (e, h, c) = (edges.num_edges(), self.heads, self.d_output);
        if e == 0 {
            return Some(Tensor::empty([0, h], &edges.x_dst().device()));
        }
        let z = leaky_relu(edges.x_j() + edges.x_i(), self.negative_slope).reshape([e, h, c]);
        let logits = (z * self.att.val().unsqueeze_dim::<3>(0))
            .sum_dim(2)
            .reshape([e, h]);
        let logits = match edges.edge_attr() {
            Some(bias) => logits + bias,
            None => logits,
        };
        let alpha = crate::compat::dropout::dropout(&self.dropout, edges.softmax(logits));
        Some(alpha)
    }

    /// One fused gather-weight-sum per head: no `[E, heads, d_output]` message tensor.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        if edges.num_edges() == 0 {
            return Some(super::no_messages(edges, self.heads * self.d_output));
        }
        let alpha = edges
            .edge_attr()
            .expect("GATv2's edge update gives the attention");
        Some(edges.spmm(edges.x_src(), alpha))
    }

    /// The heads concatenated or averaged, plus the bias.
    fn update(&self, aggregated: Tensor<2>, _x_dst: Tensor<2>) -> Tensor<2> {
        super::combine_heads(aggregated, self.heads, self.concat, self.bias.as_ref())
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.width())
    }
}
