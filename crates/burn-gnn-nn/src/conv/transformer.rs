//! [`TransformerConv`]: graph transformer attention (Shi et al., 2021).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

/// Configuration of a [`TransformerConv`]; defaults are PyG's `TransformerConv`.
#[derive(Config, Debug)]
pub struct TransformerConvConfig {
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
    /// Dropout on the attention coefficients (training only).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Add the skip connection `W_s x_i`.
    #[config(default = true)]
    pub root_weight: bool,
    /// Biases in the query, key, value and skip maps.
    #[config(default = true)]
    pub bias: bool,
}

/// Graph transformer convolution, [Shi et al., IJCAI 2021](https://arxiv.org/abs/2009.03509):
///
/// `α_ji = softmax_j((W_q x_i)ᵀ (W_k x_j) / sqrt(d_output))` per head,
/// `x'_i = W_s x_i + ‖_h Σ_j α^h_ji W^h_v x_j`. No self loops are added. Nodes without incoming
/// edges get only the skip term.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
#[derive(Module, Debug)]
pub struct TransformerConv {
    /// `W_q`.
    pub query: Linear,
    /// `W_k`.
    pub key: Linear,
    /// `W_v`.
    pub value: Linear,
    /// `W_s`; `None` without `root_weight`.
    pub skip: Option<Linear>,
    /// Dropout on attention coefficients.
    pub dropout: Dropout,
    /// Attention heads.
    pub heads: usize,
    /// Output features per head.
    pub d_output: usize,
    /// See [`TransformerConvConfig::concat`].
    pub concat: bool,
}

impl TransformerConvConfig {
    /// A [`TransformerConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> TransformerConv {
        let (h, c) = (self.heads, self.d_output);
        let lin = |d_out: usize| {
            LinearConfig::new(self.d_input, d_out)
                .with_bias(self.bias)
                .init(device)
        };
        TransformerConv {
            query: lin(h * c),
            key: lin(h * c),
            value: lin(h * c),
            skip: self
                .root_weight
                .then(|| lin(if self.concat { h * c } else { c })),
            dropout: DropoutConfig::new(self.dropout).init(),
            heads: h,
            d_output: c,
            concat: self.concat,
        }
    }
}

impl TransformerConv {
    /// Applies the layer over `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let n = x.dims()[0];
        let (h, c) = (self.heads, self.d_output);
        let width = if self.concat { h * c } else { c };
        if n == 0 {
            return crate::compat::no_rows(width, &x);
        }
        let e = graph.sum_n_edge();
        let out = if e == 0 {
            Tensor::<3>::zeros([n, h, c], (&x.device(), x.dtype()))
        } else {
            let (senders, receivers) = (graph.sender_plan(), graph.receiver_plan());
            let q =
                receivers.gather(crate::compat::linear(&self.query, x.clone()).reshape([n, h, c]));
            let k = senders.gather(crate::compat::linear(&self.key, x.clone()).reshape([n, h, c]));
            let v =
                senders.gather(crate::compat::linear(&self.value, x.clone()).reshape([n, h, c]));
            let logits = (q * k)
                .sum_dim(2)
                .reshape([e, h])
                .div_scalar((c as f64).sqrt());
            let alpha = crate::compat::dropout::dropout(&self.dropout, receivers.softmax(logits));
            receivers.sum(v * alpha.unsqueeze_dim::<3>(2))
        };
        let out = super::combine_heads(out, self.concat, None);
        match &self.skip {
            Some(s) => out + crate::compat::linear(s, x),
            None => out,
        }
    }
}
