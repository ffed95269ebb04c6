//! jraph's model zoo as thin modules: [`DeepSets`], [`InteractionNetwork`],
//! [`RelationNetwork`], [`GraphMapFeatures`], [`GraphConvolution`] and [`JraphGat`].
//!
//! Each reads and returns a [`GraphsTuple`]; update functions are [`ConcatMlp`]s (jraph takes
//! arbitrary functions; use [`GraphNetwork`](crate::GraphNetwork) with your own modules for that).

use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::Tensor;
use burn::tensor::activation::leaky_relu;
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::{SegmentPlan, Segments};

use crate::{Aggregation, ConcatMlp, NnError};

fn optional(
    has: bool,
    get: impl FnOnce() -> Result<Tensor<2>, burn_gnn_graph::GraphError>,
) -> Result<Option<Tensor<2>>, NnError> {
    Ok(if has { Some(get()?) } else { None })
}

/// jraph's `DeepSets` ([Zaheer et al., 2017](https://arxiv.org/abs/1703.06114)): nodes are a
/// set per graph, edges are ignored.
///
/// `v'_i = φ([v_i, u_{g(i)}])`, `u' = ρ([Σ_{i ∈ g} v'_i, u_g])` (globals used when present; no
/// global update without `rho`).
#[derive(Module, Debug)]
pub struct DeepSets {
    /// `φ`.
    pub phi: ConcatMlp,
    /// `ρ`.
    pub rho: Option<ConcatMlp>,
    /// The set aggregation (default sum).
    #[module(skip)]
    pub aggregation: Aggregation,
}

impl DeepSets {
    /// A DeepSets block with sum aggregation.
    pub fn new(phi: ConcatMlp, rho: Option<ConcatMlp>) -> Self {
        DeepSets {
            phi,
            rho,
            aggregation: Aggregation::Sum,
        }
    }

    /// Applies the block.
    ///
    /// # Errors
    /// Missing or non-2-D node features.
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        let nodes = graph.node_tensor::<2>()?;
        let globals = optional(graph.globals().is_some(), || graph.global_tensor::<2>())?;
        let per_node = globals.clone().map(|u| graph.node_graph_plan().gather(u));
        let nodes = self
            .phi
            .forward([Some(nodes), per_node].into_iter().flatten().collect());
        let mut out = graph.clone().with_nodes(nodes.clone())?;
        if let Some(rho) = &self.rho {
            let pooled = self
                .aggregation
                .aggregate_with(nodes, graph.node_graph_plan());
            out = out.with_globals(
                rho.forward([Some(pooled), globals].into_iter().flatten().collect()),
            )?;
        }
        Ok(out)
    }
}

/// jraph's `InteractionNetwork` ([Battaglia et al., 2016](https://arxiv.org/abs/1612.00222)):
/// `e'_k = φ_e([e_k, v_{s_k}, v_{r_k}])`, `v'_i = φ_v([v_i, Σ_{r_k = i} e'_k])` (edge features
/// used when present; globals untouched).
#[derive(Module, Debug)]
pub struct InteractionNetwork {
    /// `φ_e`.
    pub edge_fn: ConcatMlp,
    /// `φ_v`.
    pub node_fn: ConcatMlp,
}

impl InteractionNetwork {
    /// Applies the block.
    ///
    /// # Errors
    /// Missing or non-2-D node features; non-2-D edge features.
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        let nodes = graph.node_tensor::<2>()?;
        let edges = optional(graph.edges().is_some(), || graph.edge_tensor::<2>())?;
        let sent = gather_rows(nodes.clone(), graph.senders().clone());
        let received = gather_rows(nodes.clone(), graph.receivers().clone());
        let edges = self.edge_fn.forward(
            [edges, Some(sent), Some(received)]
                .into_iter()
                .flatten()
                .collect(),
        );
        let incoming = Aggregation::Sum.aggregate_with(edges.clone(), graph.receiver_plan());
        let nodes = self.node_fn.forward(vec![nodes, incoming]);
        Ok(graph.clone().with_nodes(nodes)?.with_edges(edges)?)
    }
}

/// jraph's `RelationNetwork` ([Santoro et al., 2017](https://arxiv.org/abs/1706.01427)):
/// `e'_k = φ_e([v_{s_k}, v_{r_k}])`, `u' = φ_u(Σ_{k ∈ g} e'_k)`; nodes untouched.
#[derive(Module, Debug)]
pub struct RelationNetwork {
    /// `φ_e`.
    pub edge_fn: ConcatMlp,
    /// `φ_u`.
    pub global_fn: ConcatMlp,
}

impl RelationNetwork {
    /// Applies the block.
    ///
    /// # Errors
    /// Missing or non-2-D node features.
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        let nodes = graph.node_tensor::<2>()?;
        let sent = gather_rows(nodes.clone(), graph.senders().clone());
        let received = gather_rows(nodes, graph.receivers().clone());
        let edges = self.edge_fn.forward(vec![sent, received]);
        let pooled = Aggregation::Sum.aggregate_with(edges.clone(), graph.edge_graph_plan());
        Ok(graph
            .clone()
            .with_edges(edges)?
            .with_globals(self.global_fn.forward(vec![pooled]))?)
    }
}

/// jraph's `GraphMapFeatures` (graph_nets' `GraphIndependent`): each feature set mapped on its
/// own, no message passing. A missing function leaves its set as it was.
#[derive(Module, Debug)]
pub struct GraphMapFeatures {
    /// Map of edge features.
    pub edge_fn: Option<ConcatMlp>,
    /// Map of node features.
    pub node_fn: Option<ConcatMlp>,
    /// Map of graph features.
    pub global_fn: Option<ConcatMlp>,
}

impl GraphMapFeatures {
    /// Applies the maps.
    ///
    /// # Errors
    /// A mapped feature set that is missing or not 2-D.
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        let mut out = graph.clone();
        if let Some(f) = &self.edge_fn {
            out = out.with_edges(f.forward(vec![graph.edge_tensor::<2>()?]))?;
        }
        if let Some(f) = &self.node_fn {
            out = out.with_nodes(f.forward(vec![graph.node_tensor::<2>()?]))?;
        }
        if let Some(f) = &self.global_fn {
            out = out.with_globals(f.forward(vec![graph.global_tensor::<2>()?]))?;
        }
        Ok(out)
    }
}

/// jraph's `GraphConvolution` ([Kipf & Welling, 2017](https://arxiv.org/abs/1609.02907) in
/// jraph's form): `h = W v`, then `v'_i = Σ_{r_k = i} h_{s_k} / sqrt(deg_out(s_k) · deg_in(i))`
/// with degrees counted over the edges (self edges added first if asked), clamped to at least
/// 1; without `symmetric_normalization`, a plain sum.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GraphConvolution {
    /// `W` (jraph's `update_node_fn`).
    pub update: Linear,
    /// Add an edge `i -> i` for every node before aggregating.
    pub add_self_edges: bool,
    /// Normalise by degrees.
    pub symmetric_normalization: bool,
}

impl GraphConvolution {
    /// Applies the layer over `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let n = x.dims()[0];
        if n == 0 {
            return crate::compat::no_rows(self.update.weight.dims()[1], &x);
        }
        let h = crate::compat::linear(&self.update, x);
        let (senders, receivers) = match self.add_self_edges {
            true => graph.plans_with_self_loops(),
            false => (graph.sender_plan(), graph.receiver_plan()),
        };
        if senders.num_rows() == 0 {
            return h.zeros_like();
        }
        if !self.symmetric_normalization {
            return receivers.sum(senders.gather(h));
        }
        let rsqrt = |ids: &SegmentPlan| ids.count().float().clamp_min(1.0).powf_scalar(-0.5);
        let (out_deg, in_deg) = (rsqrt(senders), rsqrt(receivers));
        let messages = senders.gather(h * out_deg.unsqueeze_dim(1));
        receivers.sum(messages) * in_deg.unsqueeze_dim(1)
    }
}

/// jraph's `GAT` form: `q = W v` (the query function), `α_k = softmax_{r_k}(LeakyReLU(a([q_{s_k},
/// q_{r_k}])))` with `a` a linear map to one logit, `v'_i = Σ_{r_k = i} α_k q_{s_k}`. No self
/// edges are added (jraph's form); nodes without incoming edges get 0.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct JraphGat {
    /// `W`, `d_input -> d_output`.
    pub query: Linear,
    /// `a`, `2·d_output -> 1`.
    pub logit: Linear,
    /// Slope of the LeakyReLU on logits.
    pub negative_slope: f64,
}

impl JraphGat {
    /// Applies the layer over `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let n = x.dims()[0];
        let d = self.query.weight.dims()[1];
        if n == 0 || graph.sum_n_edge() == 0 {
            return Tensor::zeros([n, d], (&x.device(), x.dtype()));
        }
        let q = crate::compat::linear(&self.query, x);
        let (sent, received) = (
            gather_rows(q.clone(), graph.senders().clone()),
            gather_rows(q, graph.receivers().clone()),
        );
        let logits = leaky_relu(
            crate::compat::linear(&self.logit, Tensor::cat(vec![sent.clone(), received], 1)),
            self.negative_slope,
        );
        let receivers = graph.receiver_plan();
        receivers.sum(sent * receivers.softmax(logits))
    }
}
