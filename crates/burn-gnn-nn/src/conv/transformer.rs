//! [`TransformerConv`]: graph transformer attention (Shi et al., 2021).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};

use crate::{EdgeInputs, MessagePassing};

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
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.propagate(x, graph, None)
    }

    /// The output width: `heads · d_output` concatenated, `d_output` averaged.
    fn width(&self) -> usize {
        super::heads_width(self.heads, self.d_output, self.concat)
    }
}

/// Graph transformer attention over [`MessagePassing`]: the attention is the edge update, the
/// messages `α_ji W_v x_j`, aggregated by one fused gather-weight-sum; the update averages or
/// joins the heads and adds the root skip.
impl MessagePassing for TransformerConv {
    /// `α_ji · W_v x_j` per head, `[E, heads · d_output]`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (e, h, c) = (edges.num_edges(), self.heads, self.d_output);
        let alpha = edges
            .edge_attr()
            .expect("the edge update gives the attention");
        let v = crate::compat::linear(&self.value, edges.x_src());
        let v_j = gather_rows(v, edges.senders()).reshape([e, h, c]);
        (v_j * alpha.unsqueeze_dim::<3>(2)).reshape([e, h * c])
    }

    /// `α = softmax_j((W_q x_i)ᵀ (W_k x_j) / √d_output)` per head, with dropout.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let (e, h, c) = (edges.num_edges(), self.heads, self.d_output);
        if e == 0 {
            return Some(Tensor::empty([0, h], &edges.x_dst().device()));
        }
        let q = crate::compat::linear(&self.query, edges.x_dst());
        let k = crate::compat::linear(&self.key, edges.x_src());
        let q_i = gather_rows(q, edges.receivers()).reshape([e, h, c]);
        let k_j = gather_rows(k, edges.senders()).reshape([e, h, c]);
        let logits = (q_i * k_j)
            .sum_dim(2)
            .reshape([e, h])
            .div_scalar((c as f64).sqrt());
        Some(crate::compat::dropout::dropout(
            &self.dropout,
            edges.softmax(logits),
        ))
    }

    /// One fused gather-weight-sum per head: no `[E, heads, d_output]` message tensor.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        if edges.num_edges() == 0 {
            return Some(super::no_messages(edges, self.heads * self.d_output));
        }
        let alpha = edges
            .edge_attr()
            .expect("the edge update gives the attention");
        let v = crate::compat::linear(&self.value, edges.x_src());
        Some(edges.spmm(v, alpha))
    }

    /// The heads joined or averaged, plus the skip `W_r x_i`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let out = super::combine_heads(aggregated, self.heads, self.concat, None);
        match &self.skip {
            Some(s) => out + crate::compat::linear(s, x_dst),
            None => out,
        }
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.width())
    }
}
