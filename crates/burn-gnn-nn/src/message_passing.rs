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
    /// The graph's sender and receiver plans, when the edges are a graph's.
    plans: Option<(&'a SegmentPlan, &'a SegmentPlan)>,
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
    /// Edge features, if given to [`MessagePassing::propagate`].
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
    /// Number of target nodes `N_dst`: the rows of the aggregated messages.
    pub fn num_receivers(&self) -> usize {
        self.x_dst.dims()[0]
    }
    /// `aggregation` of `messages` (`[E, D]`) into the receivers, through the graph's plan
    /// when the edges are a graph's.
    pub fn aggregate(&self, aggregation: &Aggregation, messages: Tensor<2>) -> Tensor<2> {
        match self.plans {
            Some((_, receivers)) => aggregation.aggregate_with(messages, receivers),
            None => aggregation.aggregate_with(messages, &self.receiver_ids()),
        }
    }
    /// `aggregation` of the messages `x[senders]` into the receivers, fused where it allows
    /// (see [`Aggregation::aggregate_gathered`]), through the graph's plans when the edges are a
    /// graph's.
    ///
    /// # Shapes
    /// `x: [N_src, D]` -> `[N_dst, D * width]`.
    pub fn aggregate_gathered(&self, aggregation: &Aggregation, x: Tensor<2>) -> Tensor<2> {
        match self.plans {
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
        match self.plans {
            Some((s, r)) => SegmentPlan::spmm(x, s, r, Some(weights)),
            None => {
                let (s, r) = self.ids(x.dims()[0]);
                SegmentIds::spmm(x, &s, &r, Some(weights))
            }
        }
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
/// reuses. One argument for both, so a layer has one relation form.
#[derive(Clone, Copy, Debug)]
pub enum RelationEdges<'a> {
    /// Senders and receivers as given, `[E]` each.
    Ids(&'a Tensor<1, Int>, &'a Tensor<1, Int>),
    /// The senders' plan (one segment per row of `x_src`) and the receivers' (one per row of
    /// `x_dst`).
    Plans(&'a SegmentPlan, &'a SegmentPlan),
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

impl<'a> RelationEdges<'a> {
    /// The senders' and receivers' ids.
    pub fn ids(&self) -> (&'a Tensor<1, Int>, &'a Tensor<1, Int>) {
        match *self {
            RelationEdges::Ids(s, r) => (s, r),
            RelationEdges::Plans(s, r) => (s.segment_ids(), r.segment_ids()),
        }
    }

    /// The plans, when the edges are planned.
    pub fn plans(&self) -> Option<(&'a SegmentPlan, &'a SegmentPlan)> {
        match *self {
            RelationEdges::Ids(..) => None,
            RelationEdges::Plans(s, r) => Some((s, r)),
        }
    }
}

/// A message-passing layer in PyG's shape: `x'_i = update(aggregate_{j → i} message(x_j, x_i,
/// e_ji), x_i)`. Implement [`message`](Self::message) (and optionally the rest); call
/// [`propagate`](Self::propagate) from your `forward`. Messages flow `senders -> receivers`.
///
/// A layer that can compute the aggregated messages without materialising `[E, D]` edge
/// tensors overrides [`message_and_aggregate`](Self::message_and_aggregate), which
/// `propagate` prefers.
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

    /// Runs message → aggregate → update over `graph`.
    ///
    /// # Shapes
    /// `x: [N, D]`, `edge_attr: [E, D_e]` -> whatever `update` returns, `[N, ...]`.
    fn propagate(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2> {
        let edges = RelationEdges::Plans(graph.sender_plan(), graph.receiver_plan());
        self.propagate_bipartite(x.clone(), x, edges, edge_attr)
    }

    /// [`propagate`](Self::propagate) from a source node set to a target node set (one
    /// relation of a heterogeneous graph), along edges given as ids or as plans.
    ///
    /// # Shapes
    /// `x_src: [N_src, D]`, `x_dst: [N_dst, D]`, `E` edges, `edge_attr: [E, D_e]` -> whatever
    /// `update` returns, `[N_dst, ...]`.
    fn propagate_bipartite(
        &self,
        x_src: Tensor<2>,
        x_dst: Tensor<2>,
        edges: RelationEdges<'_>,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2> {
        run(self, x_src, x_dst, edges, edge_attr)
    }
}

/// message → aggregate → update of `layer` over the edges of `relation`.
fn run<M: MessagePassing + ?Sized>(
    layer: &M,
    x_src: Tensor<2>,
    x_dst: Tensor<2>,
    relation: RelationEdges,
    edge_attr: Option<Tensor<2>>,
) -> Tensor<2> {
    let ((senders, receivers), plans) = (relation.ids(), relation.plans());
    if let (0, Some(width)) = (x_dst.dims()[0], layer.d_output()) {
        return crate::compat::no_rows(width, &x_dst);
    }
    let edges = EdgeInputs {
        x_src: &x_src,
        x_dst: &x_dst,
        senders,
        receivers,
        edge_attr: edge_attr.as_ref(),
        plans,
    };
    let aggregated = match layer.message_and_aggregate(&edges) {
        Some(aggregated) => aggregated,
        None => edges.aggregate(&layer.aggregation(), layer.message(&edges)),
    };
    layer.update(aggregated, x_dst)
}
