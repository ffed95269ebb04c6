//! [`GraphNetwork`]: jraph's full graph-network block (Battaglia et al., 2018).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::Segments;

use crate::{Aggregation, NnError};

/// Computes new edge features from the old ones, the features of both end nodes, and the
/// features of the edge's graph.
pub trait EdgeUpdate {
    /// `edges: [E, De]` (if any), `sent`/`received`: sender/receiver node features `[E, Dn]`,
    /// `globals: [E, Dg]` (the edge's graph, if any) -> `[E, De']`.
    fn update_edges(
        &self,
        edges: Option<Tensor<2>>,
        sent: Tensor<2>,
        received: Tensor<2>,
        globals: Option<Tensor<2>>,
    ) -> Tensor<2>;
}

/// Computes new node features from the old ones, the aggregated features of outgoing and
/// incoming edges, and the features of the node's graph.
pub trait NodeUpdate {
    /// `nodes: [N, Dn]`, `sent`/`received`: aggregated outgoing/incoming edge features `[N, De']`
    /// (if the graph has edge features), `globals: [N, Dg]` (if any) -> `[N, Dn']`.
    fn update_nodes(
        &self,
        nodes: Tensor<2>,
        sent: Option<Tensor<2>>,
        received: Option<Tensor<2>>,
        globals: Option<Tensor<2>>,
    ) -> Tensor<2>;
}

/// Computes new graph features from the aggregated node and edge features and the old ones.
pub trait GlobalUpdate {
    /// `nodes: [G, Dn']`, `edges: [G, De']` (if any), `globals: [G, Dg]` (if any) -> `[G, Dg']`.
    fn update_globals(
        &self,
        nodes: Tensor<2>,
        edges: Option<Tensor<2>>,
        globals: Option<Tensor<2>>,
    ) -> Tensor<2>;
}

/// A reweighting of updated edges: `(edges', sent, received, globals per edge) -> edges''`.
pub(crate) type Attend<'a> =
    dyn Fn(Tensor<2>, Tensor<2>, Tensor<2>, Option<Tensor<2>>) -> Tensor<2> + 'a;

/// Configuration of a [`ConcatMlp`].
#[derive(Config, Debug)]
pub struct ConcatMlpConfig {
    /// Total width of the concatenated inputs.
    pub d_input: usize,
    /// Hidden width.
    pub d_hidden: usize,
    /// Output width.
    pub d_output: usize,
}

/// The usual update function: concatenate the inputs that are present (in argument order),
/// then `Linear → ReLU → Linear`. Implements [`EdgeUpdate`], [`NodeUpdate`] and [`GlobalUpdate`].
#[derive(Module, Debug)]
pub struct ConcatMlp {
    /// `d_input -> d_hidden`.
    pub hidden: Linear,
    /// `d_hidden -> d_output`.
    pub output: Linear,
}

impl ConcatMlpConfig {
    /// A [`ConcatMlp`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> ConcatMlp {
        ConcatMlp {
            hidden: LinearConfig::new(self.d_input, self.d_hidden).init(device),
            output: LinearConfig::new(self.d_hidden, self.d_output).init(device),
        }
    }
}

impl ConcatMlp {
    /// Concatenates `parts` along dim 1 and applies the MLP.
    ///
    /// # Shapes
    /// `parts[k]: [R, d_k]` with `Σ d_k = d_input` -> `[R, d_output]`.
    pub fn forward(&self, parts: Vec<Tensor<2>>) -> Tensor<2> {
        self.apply(parts.into_iter().map(Some).collect())
    }

    fn apply(&self, parts: Vec<Option<Tensor<2>>>) -> Tensor<2> {
        let x = Tensor::cat(parts.into_iter().flatten().collect(), 1);
        if x.dims()[0] == 0 {
            // NdArray's matmul divides by zero on empty inputs.
            return crate::compat::no_rows(self.output.weight.dims()[1], &x);
        }
        crate::compat::linear(&self.output, relu(crate::compat::linear(&self.hidden, x)))
    }
}

impl EdgeUpdate for ConcatMlp {
    fn update_edges(
        &self,
        e: Option<Tensor<2>>,
        s: Tensor<2>,
        r: Tensor<2>,
        g: Option<Tensor<2>>,
    ) -> Tensor<2> {
        self.apply(vec![e, Some(s), Some(r), g])
    }
}
impl NodeUpdate for ConcatMlp {
    fn update_nodes(
        &self,
        n: Tensor<2>,
        s: Option<Tensor<2>>,
        r: Option<Tensor<2>>,
        g: Option<Tensor<2>>,
    ) -> Tensor<2> {
        self.apply(vec![Some(n), s, r, g])
    }
}
impl GlobalUpdate for ConcatMlp {
    fn update_globals(
        &self,
        n: Tensor<2>,
        e: Option<Tensor<2>>,
        g: Option<Tensor<2>>,
    ) -> Tensor<2> {
        self.apply(vec![Some(n), e, g])
    }
}

/// jraph's `GraphNetwork`, [Battaglia et al., 2018](https://arxiv.org/abs/1806.01261): an edge
/// update, then a node update on aggregated edges, then a global update on aggregated nodes and
/// edges; each optional (a missing one leaves its features as they were).
///
/// ```text
/// e'_k = φ_e(e_k, v_{s_k}, v_{r_k}, u_{g(k)})
/// v'_i = φ_v(v_i, ρ_{e→v}({e'_k : s_k = i}), ρ_{e→v}({e'_k : r_k = i}), u_{g(i)})
/// u'   = φ_u(ρ_{v→u}(v'), ρ_{e→u}(e'), u)
/// ```
///
/// Node features are required (`[N, Dn]` float); edge and graph features are used when the
/// graph has them (`[E, De]`, `[G, Dg]`). Aggregations give finite values for nodes without
/// edges and graphs without nodes (see [`Aggregation`]).
///
/// # Shapes
/// A graph with `nodes: [N, Dn]` -> the same graph with the updated features.
#[derive(Module, Debug)]
pub struct GraphNetwork<E: Module, N: Module, G: Module> {
    /// `φ_e`.
    pub edge_fn: Option<E>,
    /// `φ_v`.
    pub node_fn: Option<N>,
    /// `φ_u`.
    pub global_fn: Option<G>,
    /// `ρ_{e→v}` (default sum).
    #[module(skip)]
    pub edges_for_nodes: Aggregation,
    /// `ρ_{v→u}` (default sum).
    #[module(skip)]
    pub nodes_for_globals: Aggregation,
    /// `ρ_{e→u}` (default sum).
    #[module(skip)]
    pub edges_for_globals: Aggregation,
}

impl<E: Module + EdgeUpdate, N: Module + NodeUpdate, G: Module + GlobalUpdate>
    GraphNetwork<E, N, G>
{
    /// A block with the given update functions and sum aggregations.
    pub fn new(edge_fn: Option<E>, node_fn: Option<N>, global_fn: Option<G>) -> Self {
        GraphNetwork {
            edge_fn,
            node_fn,
            global_fn,
            edges_for_nodes: Aggregation::Sum,
            nodes_for_globals: Aggregation::Sum,
            edges_for_globals: Aggregation::Sum,
        }
    }

    /// Applies the block.
    ///
    /// # Errors
    /// Node features missing or not a 2-D float tensor; edge or graph features that are not
    /// 2-D float tensors.
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        self.forward_attending(graph, None)
    }

    /// The block, with the updated edges reweighted before they reach the nodes (jraph's
    /// `attention_logit_fn` / `attention_normalize_fn` / `attention_reduce_fn`): `attend` takes
    /// `(edges', sent, received, globals per edge)` and returns the reweighted edges.
    pub(crate) fn forward_attending(
        &self,
        graph: &GraphsTuple,
        attend: Option<&Attend<'_>>,
    ) -> Result<GraphsTuple, NnError> {
        let nodes = graph.node_tensor::<2>()?;
        let edges = graph
            .edges()
            .map(|_| graph.edge_tensor::<2>())
            .transpose()?;
        let globals = graph
            .globals()
            .map(|_| graph.global_tensor::<2>())
            .transpose()?;
        let (senders, receivers) = (graph.senders().clone(), graph.receivers().clone());
        let edges = match &self.edge_fn {
            Some(f) => {
                let per_edge = globals.clone().map(|u| graph.edge_graph_plan().gather(u));
                let sent = gather_rows(nodes.clone(), senders.clone());
                let received = gather_rows(nodes.clone(), receivers.clone());
                Some(f.update_edges(edges, sent, received, per_edge))
            }
            None => edges,
        };
        let edges = match (attend, edges) {
            (Some(f), Some(e)) => {
                let per_edge = globals.clone().map(|u| graph.edge_graph_plan().gather(u));
                let sent = gather_rows(nodes.clone(), senders.clone());
                let received = gather_rows(nodes.clone(), receivers.clone());
                Some(f(e, sent, received, per_edge))
            }
            (_, e) => e,
        };
        let nodes = match &self.node_fn {
            Some(f) => {
                let (by_sender, by_receiver) = (graph.sender_plan(), graph.receiver_plan());
                let sent = edges
                    .clone()
                    .map(|e| self.edges_for_nodes.aggregate_with(e, by_sender));
                let received = edges
                    .clone()
                    .map(|e| self.edges_for_nodes.aggregate_with(e, by_receiver));
                let per_node = globals.clone().map(|u| graph.node_graph_plan().gather(u));
                f.update_nodes(nodes, sent, received, per_node)
            }
            None => nodes,
        };
        let globals = match &self.global_fn {
            Some(f) => {
                let node_agg = self
                    .nodes_for_globals
                    .aggregate_with(nodes.clone(), graph.node_graph_plan());
                let edge_agg = edges.clone().map(|e| {
                    self.edges_for_globals
                        .aggregate_with(e, graph.edge_graph_plan())
                });
                Some(f.update_globals(node_agg, edge_agg, globals))
            }
            None => globals,
        };
        let mut out = graph.clone().with_nodes(nodes)?;
        if let Some(e) = edges {
            out = out.with_edges(e)?;
        }
        if let Some(u) = globals {
            out = out.with_globals(u)?;
        }
        Ok(out)
    }
}

/// jraph's `GraphNetGAT`: a [`GraphNetwork`] whose updated edges are weighted by attention
/// before they reach the nodes: `α_k = softmax_{r_k}(logit([e'_k, v_{s_k}, v_{r_k}, u_{g(k)}]))`
/// (one logit per edge, from a [`ConcatMlp`] with output width 1), `e''_k = α_k · e'_k`. Nodes
/// and globals are then updated from `e''`; the returned edges are `e''`.
///
/// # Shapes
/// As [`GraphNetwork`]; the graph must carry edge features after the edge update.
#[derive(Module, Debug)]
pub struct GraphNetGat<E: Module, N: Module, G: Module> {
    /// The graph network whose edges are attended.
    pub network: GraphNetwork<E, N, G>,
    /// The attention logit function (`d_output = 1`).
    pub logit_fn: ConcatMlp,
}

impl<E: Module + EdgeUpdate, N: Module + NodeUpdate, G: Module + GlobalUpdate>
    GraphNetGat<E, N, G>
{
    /// Applies the block.
    ///
    /// # Errors
    /// As [`GraphNetwork::forward`].
    pub fn forward(&self, graph: &GraphsTuple) -> Result<GraphsTuple, NnError> {
        let receivers = graph.receiver_plan();
        let attend =
            |e: Tensor<2>, s: Tensor<2>, r: Tensor<2>, u: Option<Tensor<2>>| -> Tensor<2> {
                if e.dims()[0] == 0 {
                    return e;
                }
                let logits = self.logit_fn.forward(
                    [Some(e.clone()), Some(s), Some(r), u]
                        .into_iter()
                        .flatten()
                        .collect(),
                );
                e * receivers.softmax(logits)
            };
        self.network.forward_attending(graph, Some(&attend))
    }
}
