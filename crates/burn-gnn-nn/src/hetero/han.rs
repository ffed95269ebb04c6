//! [`HanConv`]: the heterogeneous graph attention network (Wang et al., 2019).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::{leaky_relu, relu, softmax};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{EdgeType, HeteroGraph, gather_rows};
use burn_segment::{Segments, partition_ids, segment_mean};

use super::{NodeFeatures, relation_plans};
use crate::NnError;
use crate::conv::glorot;

/// Configuration of a [`HanConv`]; defaults are PyG's `HANConv`.
#[derive(Config, Debug)]
pub struct HanConvConfig {
    /// Input features per node (every node type; project first if they differ).
    pub d_input: usize,
    /// Output features per node (divisible by `heads`).
    pub d_output: usize,
    /// The node types, as [`HeteroGraph::metadata`] lists them.
    pub node_types: Vec<String>,
    /// The edge types (each one a metapath), as [`HeteroGraph::metadata`] lists them.
    pub edge_types: Vec<EdgeType>,
    /// Attention heads.
    #[config(default = 1)]
    pub heads: usize,
    /// LeakyReLU slope of the node-level attention.
    #[config(default = 0.2)]
    pub negative_slope: f64,
    /// Dropout on the node-level attention coefficients.
    #[config(default = 0.0)]
    pub dropout: f64,
}

/// Heterogeneous graph attention, [Wang et al., WWW 2019](https://arxiv.org/abs/1903.07293),
/// as PyG's `HANConv` (each edge type is one metapath-based graph):
///
/// 1. project: `h_t = W_t x` per node type, split into heads;
/// 2. node-level attention per relation `r = (s, rel, t)`: `α_ji = softmax_i(LeakyReLU(a_r^src ·
///    h_j + a_r^dst · h_i))`, `z^r_i = ReLU(Σ_j α_ji h_j)`;
/// 3. semantic attention over the relations into `t`: `w_r = mean_i q · tanh(K z^r_i)`,
///    `β = softmax_r(w)`, `x'_i = Σ_r β_r z^r_i`. The mean runs over the nodes of each graph
///    of a batch, so a batch gives each graph's own result (PyG's runs over the whole input:
///    the same for one graph).
///
/// A node type without incoming relations (PyG drops it) outputs its projection `h_t`.
///
/// # Shapes
/// `x[t]: [N_t, d_input]` -> `[N_t, d_output]` for every node type.
///
/// # Errors
/// [`NnError::Hetero`] if `x` lacks one of the layer's node types.
#[derive(Module, Debug)]
pub struct HanConv {
    /// `W_t` per node type (in `node_types` order).
    pub proj: Vec<Linear>,
    /// `a_r^src`, `[R, heads, D]`.
    pub att_src: Param<Tensor<3>>,
    /// `a_r^dst`, `[R, heads, D]`.
    pub att_dst: Param<Tensor<3>>,
    /// `K` of the semantic attention.
    pub k_lin: Linear,
    /// `q` of the semantic attention, `[d_output]`.
    pub q: Param<Tensor<1>>,
    /// Dropout on the node-level attention.
    pub dropout: Dropout,
    /// The node types.
    #[module(skip)]
    pub node_types: Vec<String>,
    /// The edge types.
    #[module(skip)]
    pub edge_types: Vec<EdgeType>,
    /// Attention heads.
    pub heads: usize,
    /// Output features per node.
    pub d_output: usize,
    /// LeakyReLU slope.
    pub negative_slope: f64,
}

impl HanConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] for `d_output` not divisible by `heads`.
    pub fn check(&self) -> Result<(), NnError> {
        super::head_dim("HanConv", self.d_output, self.heads).map(|_| ())
    }

    /// A [`HanConv`] with Burn's default `Linear`s and Glorot attention vectors.
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> HanConv {
        let (h, o) = (self.heads, self.d_output);
        let d = super::head_dim("HanConv", o, h).unwrap_or_else(|e| panic!("burn-gnn: {e}"));
        let r = self.edge_types.len();
        HanConv {
            proj: self
                .node_types
                .iter()
                .map(|_| LinearConfig::new(self.d_input, o).init(device))
                .collect(),
            att_src: glorot([r, h, d], h, d, device),
            att_dst: glorot([r, h, d], h, d, device),
            k_lin: LinearConfig::new(o, o).init(device),
            q: glorot([o], 1, o, device),
            dropout: DropoutConfig::new(self.dropout).init(),
            node_types: self.node_types.clone(),
            edge_types: self.edge_types.clone(),
            heads: h,
            d_output: o,
            negative_slope: self.negative_slope,
        }
    }
}

impl HanConv {
    /// Applies the layer.
    ///
    /// # Errors
    /// [`NnError::Hetero`] if `x` lacks one of the layer's node types.
    pub fn forward(&self, x: &NodeFeatures, graph: &HeteroGraph) -> Result<NodeFeatures, NnError> {
        let (h, o) = (self.heads, self.d_output);
        let d = o / h;
        let mut proj = Vec::with_capacity(self.node_types.len());
        for (i, t) in self.node_types.iter().enumerate() {
            let xt = x.get(t).ok_or_else(|| {
                NnError::Hetero(format!("HanConv needs features of node type `{t}`"))
            })?;
            let n = xt.dims()[0];
            proj.push(match n {
                0 => Tensor::empty([0, h, d], (&xt.device(), xt.dtype())),
                _ => crate::compat::linear(&self.proj[i], xt.clone()).reshape([n, h, d]),
            });
        }
        let index = |t: &str| self.node_types.iter().position(|x| x == t);
        let mut out = NodeFeatures::new();
        for (ti, t) in self.node_types.iter().enumerate() {
            let n = proj[ti].dims()[0];
            let mut zs = vec![];
            for (ri, et) in self
                .edge_types
                .iter()
                .enumerate()
                .filter(|(_, et)| et.dst == *t)
            {
                let si = index(&et.src).ok_or_else(|| {
                    NnError::Hetero(format!("relation {et}: unknown source type"))
                })?;
                if n == 0 {
                    continue;
                }
                let (s, r) = relation_plans(graph, et);
                let e = s.num_rows();
                if e == 0 || proj[si].dims()[0] == 0 {
                    zs.push(Tensor::zeros(
                        [n, o],
                        (&proj[ti].device(), proj[ti].dtype()),
                    ));
                    continue;
                }
                let score = |p: &Param<Tensor<3>>, m: &Tensor<3>| {
                    let rows = m.dims()[0];
                    (m.clone() * p.val().slice(ri..ri + 1))
                        .sum_dim(2)
                        .reshape([rows, h])
                };
                let (a_src, a_dst) = (
                    score(&self.att_src, &proj[si]),
                    score(&self.att_dst, &proj[ti]),
                );
                let logits = leaky_relu(s.gather(a_src) + r.gather(a_dst), self.negative_slope);
                let alpha = crate::compat::dropout::dropout(&self.dropout, r.softmax(logits));
                let z = r.sum(s.gather(proj[si].clone()) * alpha.unsqueeze_dim::<3>(2));
                zs.push(relu(z.reshape([n, o])));
            }
            let y = match zs.len() {
                0 => proj[ti].clone().reshape([n, o]),
                1 => zs.pop().expect("one relation"),
                k => {
                    let stacked = Tensor::stack::<3>(zs, 0); // [k, n, o]
                    let keys =
                        crate::compat::linear(&self.k_lin, stacked.clone().reshape([k * n, o]))
                            .tanh();
                    let w = (keys * self.q.val().unsqueeze_dim(0))
                        .sum_dim(1)
                        .reshape([k, n]);
                    // Semantic weights per graph of a batch: the mean score of its nodes.
                    let (graph_ids, n_graph) = match graph.node_set(t) {
                        Some(set) => (partition_ids(set.n_node().clone(), n), graph.n_graph()),
                        None => (Tensor::zeros([n], &w.device()), 1),
                    };
                    let per_graph = segment_mean(w.transpose(), graph_ids.clone(), n_graph); // [G, k]
                    let beta = gather_rows(softmax(per_graph, 1), graph_ids).transpose(); // [k, n]
                    (stacked * beta.unsqueeze_dim::<3>(2))
                        .sum_dim(0)
                        .reshape([n, o])
                }
            };
            out.insert(t.clone(), y);
        }
        Ok(out)
    }
}
