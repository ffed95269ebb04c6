//! [`GraphConv`]: the higher-order GNN layer of Morris et al. (2019).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};

use crate::Aggregation;

// ANCHOR: graphconvconfig
/// Configuration of a [`GraphConv`]; defaults are PyG's `GraphConv`.
#[derive(Config, Debug)]
pub struct GraphConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// The neighbour aggregation (see [`Aggregation`]).
    #[config(default = "Aggregation::Sum")]
    pub aggr: Aggregation,
    /// A bias in the neighbour transform.
    #[config(default = true)]
    pub bias: bool,
}
// ANCHOR_END: graphconvconfig

// ANCHOR: graphconv
/// GraphConv, [Morris et al., AAAI 2019](https://arxiv.org/abs/1810.02244):
///
/// `x'_i = W_1 x_i + W_2 · aggr_{j ∈ N(i)} e_ji · x_j` (+ bias in `W_2`), `e_ji` the edge
/// weight (1 by default).
///
/// # Shapes
/// `x: [N, d_input]`, `edge_weight: [E]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GraphConv {
    /// `W_2`, on the aggregated neighbours (with bias).
    pub lin_rel: Linear,
    /// `W_1`, on the node itself (no bias).
    pub lin_root: Linear,
    /// The aggregation.
    #[module(skip)]
    pub aggr: Aggregation,
}
// ANCHOR_END: graphconv

impl GraphConvConfig {
    /// A [`GraphConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> GraphConv {
        let aggr = self.aggr.clone();
        GraphConv {
            lin_rel: LinearConfig::new(self.d_input * aggr.width(), self.d_output)
                .with_bias(self.bias)
                .init(device),
            lin_root: LinearConfig::new(self.d_input, self.d_output)
                .with_bias(false)
                .init(device),
            aggr,
        }
    }
}

impl GraphConv {
    /// Applies the layer over `graph`, unweighted.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.forward_weighted(x, graph, None)
    }

    /// Applies the layer with optional edge weights `[E]`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward_weighted(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_weight: Option<Tensor<1>>,
    ) -> Tensor<2> {
        let (s, r) = (graph.senders().clone(), graph.receivers().clone());
        self.forward_bipartite_weighted(x.clone(), x, s, r, edge_weight)
    }

    /// Applies the layer from a source node set to a target node set (one relation of a
    /// heterogeneous graph): `x'_i = W_1 x_dst_i + W_2 · aggr_{j → i} e_ji · x_src_j`.
    ///
    /// # Shapes
    /// `x_src: [N_src, d_input]`, `x_dst: [N_dst, d_input]`, `senders`/`receivers` (and
    /// `edge_weight`): `[E]` -> `[N_dst, d_output]`.
    pub fn forward_bipartite_weighted(
        &self,
        x_src: Tensor<2>,
        x_dst: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
        edge_weight: Option<Tensor<1>>,
    ) -> Tensor<2> {
        let n = x_dst.dims()[0];
        if n == 0 {
            return crate::compat::no_rows(self.lin_root.weight.dims()[1], &x_dst);
        }
        let e = senders.dims()[0];
        let aggregated = match edge_weight {
            // A weighted sum is one fused gather-weight-sum.
            Some(w) if e > 0 && self.aggr == crate::Aggregation::Sum => {
                burn_segment::spmm(x_src, senders, receivers, Some(w.unsqueeze_dim(1)), n)
            }
            Some(w) if e > 0 => {
                let messages = gather_rows(x_src, senders) * w.unsqueeze_dim(1);
                self.aggr.aggregate(messages, receivers, n)
            }
            _ => self.aggr.aggregate_gathered(x_src, senders, receivers, n),
        };
        self.lin_rel.forward(aggregated) + self.lin_root.forward(x_dst)
    }
}
