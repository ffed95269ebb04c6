//! [`HanConv`]: the heterogeneous graph attention network (Wang et al., 2019).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::{leaky_relu, relu, softmax};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{EdgeType, HeteroGraph, gather_rows};
use burn_segment::{partition_ids, segment_mean};

use super::{NodeFeatures, relation_plans};
use crate::conv::glorot;
use crate::{EdgeInputs, MessagePassing, NnError};

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
        let o = self.d_output;
        let mut proj = Vec::with_capacity(self.node_types.len());
        for (i, t) in self.node_types.iter().enumerate() {
            let xt = x.get(t).ok_or_else(|| {
                NnError::Hetero(format!("HanConv needs features of node type `{t}`"))
            })?;
            proj.push(match xt.dims()[0] {
                0 => Tensor::empty([0, o], (&xt.device(), xt.dtype())),
                _ => crate::compat::linear(&self.proj[i], xt.clone()),
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
                if s.num_rows() == 0 || proj[si].dims()[0] == 0 {
                    zs.push(Tensor::zeros(
                        [n, o],
                        (&proj[ti].device(), proj[ti].dtype()),
                    ));
                    continue;
                }
                let relation = HanRelation {
                    conv: self,
                    relation: ri,
                };
                zs.push(relation.propagate((proj[si].clone(), proj[ti].clone()), (&s, &r), None));
            }
            let y = match zs.len() {
                0 => proj[ti].clone(),
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

/// HAN's node-level attention along one relation over [`MessagePassing`]: GAT's attention of
/// the type-projected features (the projections come before, per node type), the relation's
/// output through ReLU.
struct HanRelation<'a> {
    conv: &'a HanConv,
    relation: usize,
}

impl HanRelation<'_> {
    /// `⟨a_r, x⟩` per head of `x: [rows, o]`, `[rows, heads]`.
    fn score(&self, att: &Param<Tensor<3>>, x: Tensor<2>) -> Tensor<2> {
        let (h, rows) = (self.conv.heads, x.dims()[0]);
        let ri = self.relation;
        (x.reshape([rows, h, self.conv.d_output / h]) * att.val().slice(ri..ri + 1))
            .sum_dim(2)
            .reshape([rows, h])
    }
}

impl MessagePassing for HanRelation<'_> {
    /// `α_ji = dropout(softmax_i(LeakyReLU(⟨a_src, x_j⟩ + ⟨a_dst, x_i⟩)))`, `[E, heads]`.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let a_src = self.score(&self.conv.att_src, edges.x_src());
        let a_dst = self.score(&self.conv.att_dst, edges.x_dst());
        let logits = leaky_relu(
            gather_rows(a_src, edges.senders()) + gather_rows(a_dst, edges.receivers()),
            self.conv.negative_slope,
        );
        let alpha = crate::compat::dropout::dropout(&self.conv.dropout, edges.softmax(logits));
        Some(alpha)
    }

    /// `α_ji x_j` per head.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (e, h, o) = (edges.num_edges(), self.conv.heads, self.conv.d_output);
        let alpha = edges.edge_attr().expect("HAN's attention");
        (edges.x_j().reshape([e, h, o / h]) * alpha.unsqueeze_dim::<3>(2)).reshape([e, o])
    }

    /// `ReLU(Σ_j α_ji x_j)`.
    fn update(&self, aggregated: Tensor<2>, _x_dst: Tensor<2>) -> Tensor<2> {
        relu(aggregated)
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.conv.d_output)
    }
}
