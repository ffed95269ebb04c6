//! [`MessagePassing`]: write a layer as message → aggregate → update, as in PyG.

use burn::tensor::{Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::{SegmentIds, SegmentPlan, Segments};

use crate::Aggregation;

/// What a message function can read about the edges, gathered only when asked for. Messages
/// flow from the source nodes (`x_src`, indexed by `senders`) to the target nodes (`x_dst`,
/// indexed by `receivers`); on a homogeneous graph both are the same `x`.
#[derive(Debug)]
pub struct EdgeInputs<'a> {
    x_src: &'a Tensor<2>,
    x_dst: &'a Tensor<2>,
    senders: &'a Tensor<1, Int>,
    receivers: &'a Tensor<1, Int>,
    edge_attr: Option<&'a Tensor<2>>,
    /// The senders' plan, when the edges are planned on both sides.
    sender_plan: Option<&'a SegmentPlan>,
    /// The receivers' plan, when the receivers are planned.
    receiver_plan: Option<&'a SegmentPlan>,
    /// `x_src` and `x_dst` are one node set (a [`NodePair`] made from one tensor).
    same_nodes: bool,
}

impl EdgeInputs<'_> {
    /// Sender features `x_j`, `[E, D]`.
    pub fn x_j(&self) -> Tensor<2> {
        gather_rows(self.x_src.clone(), self.senders.clone())
    }
    /// Receiver features `x_i`, `[E, D]`.
    pub fn x_i(&self) -> Tensor<2> {
        gather_rows(self.x_dst.clone(), self.receivers.clone())
    }
    /// Features of the source nodes, `[N_src, D]`.
    pub fn x_src(&self) -> Tensor<2> {
        self.x_src.clone()
    }
    /// Features of the target nodes, `[N_dst, D]`.
    pub fn x_dst(&self) -> Tensor<2> {
        self.x_dst.clone()
    }
    /// Whether sources and targets are one node set (features given as one tensor): a layer
    /// can then compute a per-node quantity once for both ends.
    pub fn same_nodes(&self) -> bool {
        self.same_nodes
    }
    /// Edge values: those given to [`MessagePassing::propagate`] in
    /// [`edge_update`](MessagePassing::edge_update), then what `edge_update` returned.
    pub fn edge_attr(&self) -> Option<Tensor<2>> {
        self.edge_attr.cloned()
    }
    /// Sender of each edge (a row of `x_src`).
    pub fn senders(&self) -> Tensor<1, Int> {
        self.senders.clone()
    }
    /// Receiver of each edge (a row of `x_dst`).
    pub fn receivers(&self) -> Tensor<1, Int> {
        self.receivers.clone()
    }
    /// Number of edges `E`.
    pub fn num_edges(&self) -> usize {
        self.senders.dims()[0]
    }
    /// Incoming edges per target node, `[N_dst]`.
    pub fn in_degree(&self) -> Tensor<1, Int> {
        match self.receiver_plan {
            Some(receivers) => receivers.count(),
            None => self.receiver_ids().count(),
        }
    }
    /// Number of target nodes `N_dst`: the rows of the aggregated messages.
    pub fn num_receivers(&self) -> usize {
        self.x_dst.dims()[0]
    }
    /// `aggregation` of `messages` (`[E, D]`) into the receivers, through the receivers' plan
    /// when they have one.
    pub fn aggregate(&self, aggregation: &Aggregation, messages: Tensor<2>) -> Tensor<2> {
        match self.receiver_plan {
            Some(receivers) => aggregation.aggregate_with(messages, receivers),
            None => aggregation.aggregate_with(messages, &self.receiver_ids()),
        }
    }
    /// `aggregation` of the messages `x[senders]` into the receivers, fused where it allows
    /// (see [`Aggregation::aggregate_gathered`]), through the plans when both sides are planned
    /// (else over the ids).
    ///
    /// # Shapes
    /// `x: [N_src, D]` -> `[N_dst, D * width]`.
    pub fn aggregate_gathered(&self, aggregation: &Aggregation, x: Tensor<2>) -> Tensor<2> {
        match self.plans() {
            Some((s, r)) => aggregation.aggregate_gathered_with(x, s, r),
            None => {
                let (s, r) = self.ids(x.dims()[0]);
                aggregation.aggregate_gathered_with(x, &s, &r)
            }
        }
    }
    /// `Σ w · x[senders]` into the receivers (one fused [`spmm`](burn_segment::spmm)), with
    /// per-edge, per-head `weights: [E, H]`.
    ///
    /// # Shapes
    /// `x: [N_src, D]`, `weights: [E, H]` -> `[N_dst, D]`.
    pub fn spmm(&self, x: Tensor<2>, weights: Tensor<2>) -> Tensor<2> {
        match self.plans() {
            Some((s, r)) => SegmentPlan::spmm(x, s, r, Some(weights)),
            None => {
                let (s, r) = self.ids(x.dims()[0]);
                SegmentIds::spmm(x, &s, &r, Some(weights))
            }
        }
    }
    /// Softmax of `logits` (`[E, H]`) over each receiver's incoming edges, through the
    /// receivers' plan when they have one.
    ///
    /// # Shapes
    /// `logits: [E, H]` -> `[E, H]`.
    pub fn softmax(&self, logits: Tensor<2>) -> Tensor<2> {
        match self.receiver_plan {
            Some(receivers) => receivers.softmax(logits),
            None => self.receiver_ids().softmax(logits),
        }
    }
    /// GAT's fused attention: `softmax_j(LeakyReLU(src[senders] + dst[receivers] + bias))` per
    /// receiver in one pass (see [`burn_segment::attention_softmax`]); a bias of `-inf` masks
    /// an edge. Through the plans when both sides are planned (else over the ids).
    ///
    /// # Shapes
    /// `src: [N_src, H]`, `dst: [N_dst, H]`, `bias: [E, H]` or `[E, 1]` -> `[E, H]`.
    pub fn attention_softmax(
        &self,
        src: Tensor<2>,
        dst: Tensor<2>,
        bias: Option<Tensor<2>>,
        negative_slope: f64,
    ) -> Tensor<2> {
        match self.plans() {
            Some((s, r)) => SegmentPlan::attention_softmax(src, dst, s, r, bias, negative_slope),
            None => {
                let (s, r) = self.ids(src.dims()[0]);
                SegmentIds::attention_softmax(src, dst, &s, &r, bias, negative_slope)
            }
        }
    }
    fn plans(&self) -> Option<(&SegmentPlan, &SegmentPlan)> {
        self.sender_plan.zip(self.receiver_plan)
    }
    fn receiver_ids(&self) -> SegmentIds {
        SegmentIds::new(self.receivers.clone(), self.num_receivers())
    }
    /// The senders over `n_src` rows and the receivers, as given.
    fn ids(&self, n_src: usize) -> (SegmentIds, SegmentIds) {
        let senders = SegmentIds::new(self.senders.clone(), n_src);
        (senders, self.receiver_ids())
    }
}

/// The edges of one relation, from a source node set to a target node set: senders indexing
/// the rows of `x_src` and receivers the rows of `x_dst`, given as ids (checked by the ops that
/// read them) or as plans (a graph's [`sender_plan`](GraphsTuple::sender_plan) and
/// [`receiver_plan`](GraphsTuple::receiver_plan), or a relation's
/// [`HeteroGraph::edge_plans`](burn_gnn_graph::HeteroGraph::edge_plans)), which every op then
/// reuses, or as sender ids beside the receivers' plan. One argument for all three, so a layer
/// has one relation form.
#[derive(Clone, Copy, Debug)]
pub enum RelationEdges<'a> {
    /// Senders and receivers as given, `[E]` each.
    Ids(&'a Tensor<1, Int>, &'a Tensor<1, Int>),
    /// The senders' plan (one segment per row of `x_src`) and the receivers' (one per row of
    /// `x_dst`).
    Plans(&'a SegmentPlan, &'a SegmentPlan),
    /// Sender ids, `[E]`, and the receivers' plan: for senders that index rows no plan is kept
    /// for (RGCN's `R · N` rows of `x W_r`, HGT's stacked relations), whose receivers are still
    /// a graph's. The receiver-side ops (aggregation, softmax, degrees) reuse the plan; the ops
    /// over both sides (fused gather-aggregate, `spmm`, attention softmax) read the ids.
    Received(&'a Tensor<1, Int>, &'a SegmentPlan),
}

impl<'a> From<(&'a Tensor<1, Int>, &'a Tensor<1, Int>)> for RelationEdges<'a> {
    fn from((senders, receivers): (&'a Tensor<1, Int>, &'a Tensor<1, Int>)) -> Self {
        RelationEdges::Ids(senders, receivers)
    }
}

impl<'a> From<(&'a SegmentPlan, &'a SegmentPlan)> for RelationEdges<'a> {
    fn from((senders, receivers): (&'a SegmentPlan, &'a SegmentPlan)) -> Self {
        RelationEdges::Plans(senders, receivers)
    }
}

impl<'a> From<&'a GraphsTuple> for RelationEdges<'a> {
    /// The graph's edges through its cached plans.
    fn from(graph: &'a GraphsTuple) -> Self {
        RelationEdges::Plans(graph.sender_plan(), graph.receiver_plan())
    }
}

/// The node features a propagation reads: one set, where messages flow within a graph's nodes
/// (from a tensor `x`), or a source set and a target set, one relation of a heterogeneous graph
/// (from a pair `(x_src, x_dst)`, PyG's `PairTensor`).
#[derive(Clone, Debug)]
pub struct NodePair {
    /// Source features, indexed by the senders, `[N_src, D]`.
    pub x_src: Tensor<2>,
    /// Target features, indexed by the receivers, `[N_dst, D]`.
    pub x_dst: Tensor<2>,
    same: bool,
}

impl From<Tensor<2>> for NodePair {
    fn from(x: Tensor<2>) -> Self {
        NodePair {
            x_src: x.clone(),
            x_dst: x,
            same: true,
        }
    }
}

impl From<(Tensor<2>, Tensor<2>)> for NodePair {
    fn from((x_src, x_dst): (Tensor<2>, Tensor<2>)) -> Self {
        NodePair {
            x_src,
            x_dst,
            same: false,
        }
    }
}

impl<'a> RelationEdges<'a> {
    /// The senders' and receivers' ids.
    pub fn ids(&self) -> (&'a Tensor<1, Int>, &'a Tensor<1, Int>) {
        match *self {
            RelationEdges::Ids(s, r) => (s, r),
            RelationEdges::Plans(s, r) => (s.segment_ids(), r.segment_ids()),
            RelationEdges::Received(s, r) => (s, r.segment_ids()),
        }
    }

    /// The plans, when both sides are planned.
    pub fn plans(&self) -> Option<(&'a SegmentPlan, &'a SegmentPlan)> {
        match *self {
            RelationEdges::Plans(s, r) => Some((s, r)),
            RelationEdges::Ids(..) | RelationEdges::Received(..) => None,
        }
    }

    /// The receivers' plan, when they have one.
    pub fn receiver_plan(&self) -> Option<&'a SegmentPlan> {
        match *self {
            RelationEdges::Plans(_, r) | RelationEdges::Received(_, r) => Some(r),
            RelationEdges::Ids(..) => None,
        }
    }
}

/// A message-passing layer in PyG's shape: `x'_i = update(aggregate_{j → i} message(x_j, x_i,
/// e_ji), x_i)`. Implement [`message`](Self::message) (and optionally the rest); call
/// [`propagate`](Self::propagate) from your `forward`. Messages flow `senders -> receivers`.
///
/// Per-edge values that the messages need but that are not features of one edge (GAT's
/// attention coefficients) come from [`edge_update`](Self::edge_update), PyG's `edge_updater`.
/// A layer that can compute the aggregated messages without materialising `[E, D]` edge
/// tensors overrides [`message_and_aggregate`](Self::message_and_aggregate), which
/// `propagate` prefers: the fused kernels are that override, not a second path.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_gnn_graph::GraphsTuple;
/// use burn_gnn_nn::{Aggregation, EdgeInputs, MessagePassing};
///
/// /// `x'_i = mean_j (x_j − x_i)`: how a node differs from its neighbours.
/// struct MeanDifference;
/// impl MessagePassing for MeanDifference {
///     fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
///         edges.x_j() - edges.x_i()
///     }
///     fn aggregation(&self) -> Aggregation {
///         Aggregation::Mean
///     }
/// }
///
/// let device = Device::flex();
/// let g = GraphsTuple::from_edge_list(&[(0, 1), (2, 1)], 3, &device).unwrap();
/// let x = Tensor::<2>::from_floats([[1.0], [2.0], [5.0]], &device);
/// let out = MeanDifference.propagate(x, &g, None);
/// assert_eq!(out.into_data().to_vec::<f32>().unwrap(), [0.0, 1.0, 0.0]);
/// ```
pub trait MessagePassing {
    /// The message of every edge, `[E, D_msg]`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2>;

    /// How messages are combined at their receiver (default sum).
    fn aggregation(&self) -> Aggregation {
        Aggregation::Sum
    }

    /// Per-edge values computed before the messages, which [`EdgeInputs::edge_attr`] then
    /// holds (PyG's `edge_update`): attention coefficients, edge weights. Default: the
    /// `edge_attr` given to [`propagate`](Self::propagate), unchanged.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        edges.edge_attr()
    }

    /// The new node features from the aggregated messages `[N_dst, D_msg · width]` and the
    /// target nodes' features `x_dst` (default: the aggregated messages).
    fn update(&self, aggregated: Tensor<2>, _x_dst: Tensor<2>) -> Tensor<2> {
        aggregated
    }

    /// A fused message + aggregation, or `None` to use [`message`](Self::message) then
    /// [`aggregation`](Self::aggregation).
    fn message_and_aggregate(&self, _edges: &EdgeInputs) -> Option<Tensor<2>> {
        None
    }

    /// The width of [`update`](Self::update)'s output when the layer knows it (default
    /// `None`). With it, `propagate` answers an input without target nodes with an empty
    /// `[0, d_output]` tensor and runs nothing: some Burn 0.22 backends mishandle ops on
    /// zero-row tensors (see `compat` in this crate).
    fn d_output(&self) -> Option<usize> {
        None
    }

    /// Runs edge update → message → aggregate → update: over a graph (`x` one tensor, the
    /// edges `&GraphsTuple`, through its plans), or from a source node set to a target set
    /// (`x` a pair `(x_src, x_dst)`, the edges one relation's [`RelationEdges`], ids or plans).
    ///
    /// # Shapes
    /// `x: [N, D]` or `([N_src, D], [N_dst, D])`, `E` edges, `edge_attr: [E, D_e]` -> whatever
    /// `update` returns, `[N_dst, ...]`.
    fn propagate<'e>(
        &self,
        x: impl Into<NodePair>,
        edges: impl Into<RelationEdges<'e>>,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2>
    where
        Self: Sized,
    {
        run(self, x.into(), edges.into(), edge_attr)
    }
}

/// The edge update alone of `layer` over the edges of `relation`: what a layer shows of its
/// per-edge values (GAT's attention coefficients).
pub(crate) fn edge_values<M: MessagePassing>(
    layer: &M,
    x: impl Into<NodePair>,
    relation: RelationEdges,
    edge_attr: Option<Tensor<2>>,
) -> Option<Tensor<2>> {
    let NodePair { x_src, x_dst, same } = x.into();
    let (senders, receivers) = relation.ids();
    layer.edge_update(&EdgeInputs {
        x_src: &x_src,
        x_dst: &x_dst,
        senders,
        receivers,
        edge_attr: edge_attr.as_ref(),
        sender_plan: relation.plans().map(|(s, _)| s),
        receiver_plan: relation.receiver_plan(),
        same_nodes: same,
    })
}

/// edge update → message → aggregate → update of `layer` over the edges of `relation`.
fn run<M: MessagePassing>(
    layer: &M,
    x: NodePair,
    relation: RelationEdges,
    edge_attr: Option<Tensor<2>>,
) -> Tensor<2> {
    let NodePair { x_src, x_dst, same } = x;
    let (senders, receivers) = relation.ids();
    if let (0, Some(width)) = (x_dst.dims()[0], layer.d_output()) {
        return crate::compat::no_rows(width, &x_dst);
    }
    let mut edges = EdgeInputs {
        x_src: &x_src,
        x_dst: &x_dst,
        senders,
        receivers,
        edge_attr: edge_attr.as_ref(),
        sender_plan: relation.plans().map(|(s, _)| s),
        receiver_plan: relation.receiver_plan(),
        same_nodes: same,
    };
    let updated = layer.edge_update(&edges);
    edges.edge_attr = updated.as_ref();
    let aggregated = match layer.message_and_aggregate(&edges) {
        Some(aggregated) => aggregated,
        None => edges.aggregate(&layer.aggregation(), layer.message(&edges)),
    };
    layer.update(aggregated, x_dst)
}

/// A convolution from a source node set to a target node set: one relation of a
/// heterogeneous graph, as [`HeteroConv`](crate::HeteroConv) runs it.
pub trait BipartiteConv {
    /// Messages from `x_src` rows to `x_dst` rows along the relation's edges (ids or plans).
    ///
    /// # Shapes
    /// `x_src: [N_src, d_input]`, `x_dst: [N_dst, d_input]`, `E` edges -> `[N_dst, d_output]`.
    fn forward_bipartite(
        &self,
        x_src: Tensor<2>,
        x_dst: Tensor<2>,
        edges: RelationEdges<'_>,
    ) -> Tensor<2>;
}

/// `BipartiteConv` for `MessagePassing` layers whose relation form is their propagation from
/// `x_src` to `x_dst` (SAGE: `W_1 · aggr_{j → i} x_src_j + W_2 x_dst_i`; GraphConv alike).
macro_rules! bipartite_by_propagation {
    ($($layer:ty),*) => {$(
        impl $crate::BipartiteConv for $layer {
            /// The layer's `propagate` from `x_src` to `x_dst`; targets without incoming edges
            /// aggregate to 0.
            fn forward_bipartite(
                &self,
                x_src: burn::tensor::Tensor<2>,
                x_dst: burn::tensor::Tensor<2>,
                edges: $crate::RelationEdges<'_>,
            ) -> burn::tensor::Tensor<2> {
                $crate::MessagePassing::propagate(self, (x_src, x_dst), edges, None)
            }
        }
    )*};
}
pub(crate) use bipartite_by_propagation;
