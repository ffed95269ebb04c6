//! [`GpsConv`]: a local message-passing layer plus global attention of every node to every
//! node of its own graph, streamed by the pairwise layer (never an `[N, N]` matrix).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{BatchNorm, BatchNormConfig, Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::pairwise::{PairMask, PairMetric, Pairwise};

use crate::{Activation, MessagePassing, dropout};

/// The normalisation after each residual block of a [`GpsConv`].
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum GpsNorm {
    /// Burn's `BatchNorm` over the nodes (PyG's default `batch_norm`).
    Batch,
    /// None.
    None,
}

/// Configuration of a [`GpsConv`]; defaults as PyG's `GPSConv`.
#[derive(Config, Debug)]
pub struct GpsConvConfig {
    /// Features per node, in and out.
    pub channels: usize,
    /// Attention heads (`channels` must be a multiple).
    #[config(default = 1)]
    pub heads: usize,
    /// Dropout after the local layer, the attention and in the MLP (training only).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// The MLP's nonlinearity.
    #[config(default = "Activation::Relu")]
    pub activation: Activation,
    /// The normalisation.
    #[config(default = "GpsNorm::Batch")]
    pub norm: GpsNorm,
}

/// GPS, [Rampášek et al., NeurIPS 2022](https://arxiv.org/abs/2205.12454), as PyG's `GPSConv`:
///
/// ```text
/// h_local = norm1(dropout(local(x, graph)) + x)           (when a local layer is given)
/// h_attn  = norm2(dropout(MHA(x)) + x)                     (each node attends to its graph)
/// out     = h_local + h_attn;  out = norm3(out + MLP(out)) (MLP: c -> 2c -> c)
/// ```
///
/// `MHA` is multi-head scaled dot-product attention with input and output projections
/// (`torch.nn.MultiheadAttention`): per head, `softmax(q kᵀ / sqrt(c / H)) v` over the nodes of
/// the query's own graph, computed by [`Pairwise::softmax_matmul`] with a `same_group` mask on
/// the graph ids (`O(N)` memory; padding graphs attend only to themselves).
///
/// # Shapes
/// `x: [N, channels]` -> `[N, channels]`.
#[derive(Module, Debug)]
pub struct GpsConv<L: Module> {
    /// The local message-passing layer (`channels -> channels`), if any.
    pub local: Option<L>,
    /// Query projection.
    pub query: Linear,
    /// Key projection.
    pub key: Linear,
    /// Value projection.
    pub value: Linear,
    /// Output projection of the attention.
    pub output: Linear,
    /// First MLP layer (`c -> 2c`).
    pub mlp_in: Linear,
    /// Second MLP layer (`2c -> c`).
    pub mlp_out: Linear,
    /// Norms after the local block, the attention block and the MLP.
    pub norms: Vec<BatchNorm>,
    /// Dropout (training only).
    pub dropout: Dropout,
    /// Attention heads.
    #[module(skip)]
    pub heads: usize,
    /// The MLP's nonlinearity.
    #[module(skip)]
    pub activation: Activation,
}

impl GpsConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`](crate::NnError::InvalidConfig) when `heads` is 0 or does not
    /// divide `channels`.
    pub fn check(&self) -> Result<(), crate::NnError> {
        let c = self.channels;
        if self.heads == 0 || !c.is_multiple_of(self.heads) {
            return Err(crate::NnError::InvalidConfig(format!(
                "GpsConv: {} heads do not divide {c} channels",
                self.heads
            )));
        }
        Ok(())
    }

    /// A [`GpsConv`] around `local` (`None`: attention only).
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init<L: Module>(&self, local: Option<L>, device: &Device) -> GpsConv<L> {
        crate::error::expect_valid(self.check());
        let c = self.channels;
        let linear = |i: usize, o: usize| LinearConfig::new(i, o).init(device);
        let norms = match self.norm {
            GpsNorm::Batch => (0..3)
                .map(|_| BatchNormConfig::new(c).init(device))
                .collect(),
            GpsNorm::None => Vec::new(),
        };
        GpsConv {
            local,
            query: linear(c, c),
            key: linear(c, c),
            value: linear(c, c),
            output: linear(c, c),
            mlp_in: linear(c, 2 * c),
            mlp_out: linear(2 * c, c),
            norms,
            dropout: DropoutConfig::new(self.dropout).init(),
            heads: self.heads,
            activation: self.activation,
        }
    }
}

impl<L: Module> GpsConv<L> {
    /// Applies the layer with `local_out`, the local layer's output (or `None` without one):
    /// for local layers that take more than `(x, graph)`.
    ///
    /// # Shapes
    /// `x`, `local_out: [N, channels]` -> `[N, channels]`.
    pub fn forward_with(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        local_out: Option<Tensor<2>>,
    ) -> Tensor<2> {
        if x.dims()[0] == 0 {
            // Burn 0.22's matmul of zero rows divides by zero on NdArray.
            return crate::compat::no_rows(x.dims()[1], &x);
        }
        let norm = |k: usize, h: Tensor<2>| match self.norms.get(k) {
            Some(n) => n.forward(h),
            None => h,
        };
        let h_attn = norm(
            1,
            dropout(&self.dropout, self.attention(x.clone(), graph)) + x.clone(),
        );
        let out = match local_out {
            Some(h) => norm(0, dropout(&self.dropout, h) + x) + h_attn,
            None => h_attn,
        };
        let hidden = dropout(
            &self.dropout,
            self.activation
                .apply(crate::compat::linear(&self.mlp_in, out.clone())),
        );
        let mlp = dropout(&self.dropout, crate::compat::linear(&self.mlp_out, hidden));
        norm(2, out + mlp)
    }

    /// Multi-head attention of every node to the nodes of its own graph, projected back.
    ///
    /// # Shapes
    /// `x: [N, channels]` -> `[N, channels]`.
    pub fn attention(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let [n, c] = x.dims();
        let dh = c / self.heads;
        let scale = 1.0 / (dh as f64).sqrt();
        let (q, k, v) = (
            crate::compat::linear(&self.query, x.clone()) * scale,
            crate::compat::linear(&self.key, x.clone()),
            crate::compat::linear(&self.value, x),
        );
        // A graph's nodes are contiguous: sorted ids, read once, let each query visit only its
        // own graph's tiles.
        let ids: Tensor<1, Int> = graph.node_graph_ids();
        let within = Pairwise::new(q.clone(), k.clone(), PairMetric::Dot)
            .and_then(|p| p.sorted_groups(ids.clone(), ids))
            .and_then(|p| p.mask(PairMask::same_group()))
            .expect("a graph's node ids are sorted, one per node");
        let heads: Vec<Tensor<2>> = (0..self.heads)
            .map(|h| {
                let cols = h * dh..(h + 1) * dh;
                let qh = q.clone().slice([0..n, cols.clone()]);
                let kh = k.clone().slice([0..n, cols.clone()]);
                let vh = v.clone().slice([0..n, cols]);
                within
                    .clone()
                    .with_rows(qh, kh)
                    .and_then(|p| p.softmax_matmul(vh))
                    .expect("shapes fixed by the projections")
            })
            .collect();
        crate::compat::linear(&self.output, Tensor::cat(heads, 1))
    }
}

impl<L: Module + MessagePassing> GpsConv<L> {
    /// Applies the layer, its local layer through `MessagePassing::propagate` (with the
    /// graph's edge features `edge_attr`, if the local layer uses them).
    ///
    /// # Shapes
    /// `x: [N, channels]`, `edge_attr: [E, d_edge]` -> `[N, channels]`.
    pub fn forward(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2> {
        let local = (x.dims()[0] > 0)
            .then(|| {
                self.local
                    .as_ref()
                    .map(|l| l.propagate(x.clone(), graph, edge_attr))
            })
            .flatten();
        self.forward_with(x, graph, local)
    }
}
