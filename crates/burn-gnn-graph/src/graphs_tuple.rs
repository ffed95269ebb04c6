//! [`GraphsTuple`]: jraph's batched-graph container, with validation on construction.

use std::sync::Arc;

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use burn_segment::{SegmentPlan, partition_ids, segment_count};

use crate::feature::MAIN;
use crate::plans::GraphPlans;
use crate::{Feature, FeatureSet, FeatureSetKind, GraphError};

/// One graph or a batch of graphs, stored as jraph stores them: the node, edge and graph
/// features of every graph concatenated along dim 0, edges as `senders`/`receivers` (absolute
/// indices into the batched node array), and per-graph counts `n_node`, `n_edge`.
///
/// Sizes come from shapes, never from data: [`sum_n_node`](Self::sum_n_node) is the leading
/// dimension of the node features (or the node count given at construction),
/// [`sum_n_edge`](Self::sum_n_edge) the length of `senders`, [`n_graph`](Self::n_graph) the
/// length of `n_node`. Reading them never waits on the device.
///
/// Built with [`GraphsTuple::builder`], which checks everything and returns a typed
/// [`GraphError`]; every operation of this crate keeps the graph valid. Padding graphs (from
/// [`pad_with_graphs`](Self::pad_with_graphs)) are tracked, so the masks are exact: an
/// unpadded graph's [`graph_mask`](Self::graph_mask) is all `true`.
///
/// # Shapes
/// - `nodes` and named node features: `[sum_n_node, ...]`
/// - `edges` and named edge features: `[sum_n_edge, ...]`
/// - `globals` and named global features: `[n_graph, ...]`
/// - `senders`, `receivers`: `[sum_n_edge]` Int; `n_node`, `n_edge`: `[n_graph]` Int
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// use burn_gnn_graph::GraphsTuple;
/// let device = Device::flex();
/// // Two graphs: a 2-node edge and a 3-node path, batched.
/// let g = GraphsTuple::builder(
///     Tensor::<1, Int>::from_ints([0, 2, 3], &device), // senders
///     Tensor::<1, Int>::from_ints([1, 3, 4], &device), // receivers
/// )
/// .nodes(Tensor::<2>::ones([5, 4], &device))
/// .n_node(Tensor::<1, Int>::from_ints([2, 3], &device))
/// .n_edge(Tensor::<1, Int>::from_ints([1, 2], &device))
/// .build()
/// .unwrap();
/// assert_eq!((g.sum_n_node(), g.sum_n_edge(), g.n_graph()), (5, 3, 2));
/// ```
#[derive(Clone, Debug)]
pub struct GraphsTuple {
    pub(crate) nodes: FeatureSet,
    pub(crate) edges: FeatureSet,
    pub(crate) globals: FeatureSet,
    pub(crate) senders: Tensor<1, Int>,
    pub(crate) receivers: Tensor<1, Int>,
    pub(crate) n_node: Tensor<1, Int>,
    pub(crate) n_edge: Tensor<1, Int>,
    pub(crate) num_nodes: usize,
    /// Per graph: whether it is a padding graph. `None`: no padding graphs.
    pub(crate) padding: Option<Vec<bool>>,
    /// What is known and built about the index lists; set only in this module.
    pub(crate) cache: Cache,
}

/// What a graph caches about its index lists: whether its edges are sorted by receiver, and
/// the plans built so far. Other modules can only start a fresh one (for a graph whose edges or
/// nodes they changed) or keep the one they have; what it holds is set here.
#[derive(Clone, Debug)]
pub(crate) struct Cache {
    sorted_by_receiver: bool,
    plans: Arc<GraphPlans>,
}

impl Cache {
    /// Nothing known, nothing built.
    pub(crate) fn fresh() -> Cache {
        Cache {
            sorted_by_receiver: false,
            plans: GraphPlans::fresh(),
        }
    }
}

/// A tensor's values on the host, as i64 (one device read).
pub(crate) fn host_ints(t: &Tensor<1, Int>) -> Vec<i64> {
    t.to_data().iter::<i64>().collect()
}

/// Checks per-graph counts read from the host: none negative, and summing to `expected` (the
/// size the shapes give).
pub(crate) fn check_counts(
    counts: &[i64],
    expected: usize,
    field: &'static str,
    what: &'static str,
) -> Result<(), GraphError> {
    if let Some((graph, &value)) = counts.iter().enumerate().find(|(_, c)| **c < 0) {
        return Err(GraphError::NegativeCount {
            field,
            graph,
            value,
        });
    }
    // i128: counts read from a file may be anything; the sum must not overflow.
    let sum: i128 = counts.iter().map(|&c| c as i128).sum();
    if sum != expected as i128 {
        let sum = sum.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        return Err(GraphError::CountSum {
            field,
            sum,
            expected,
            what,
        });
    }
    Ok(())
}

/// An index tensor in the device's default int dtype.
pub(crate) fn index_tensor(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// `t` in the device's default int dtype, so that index arithmetic never mixes dtypes.
pub(crate) fn default_int(t: Tensor<1, Int>, device: &Device) -> Tensor<1, Int> {
    let want = Tensor::<1, Int>::empty([0], device).dtype();
    if t.dtype() == want {
        t
    } else {
        Tensor::from_data(t.into_data(), device)
    }
}

impl GraphsTuple {
    /// Reassembles a graph whose parts are known to be consistent (crate-internal).
    pub(crate) fn with_structure(
        &self,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
        n_node: Tensor<1, Int>,
        n_edge: Tensor<1, Int>,
        num_nodes: usize,
    ) -> GraphsTuple {
        GraphsTuple {
            senders,
            receivers,
            n_node,
            n_edge,
            num_nodes,
            cache: Cache::fresh(),
            ..self.clone()
        }
    }

    pub(crate) fn check_shapes(&self) -> Result<(), GraphError> {
        let (s, r) = (self.senders.dims()[0], self.receivers.dims()[0]);
        if s != r {
            return Err(GraphError::EdgeIndexLength {
                senders: s,
                receivers: r,
            });
        }
        let (gn, ge) = (self.n_node.dims()[0], self.n_edge.dims()[0]);
        if gn != ge {
            return Err(GraphError::GraphCountMismatch {
                n_node: gn,
                n_edge: ge,
            });
        }
        for (set, features, expected) in [
            (FeatureSetKind::Nodes, &self.nodes, self.num_nodes),
            (FeatureSetKind::Edges, &self.edges, s),
            (FeatureSetKind::Globals, &self.globals, gn),
        ] {
            for (name, f) in features.iter() {
                if f.rows() != expected {
                    return Err(GraphError::FeatureRows {
                        set,
                        name: name.into(),
                        rows: f.rows(),
                        expected,
                    });
                }
            }
        }
        if let Some(p) = &self.padding {
            debug_assert_eq!(p.len(), gn, "padding flags out of step with n_node");
        }
        Ok(())
    }

    /// Checks every invariant, reading `senders`, `receivers`, `n_node` and `n_edge` to the host:
    /// lengths and feature rows agree, counts are non-negative and add up to the shapes, every
    /// index lies in `[0, sum_n_node)`, and every edge stays inside its own graph.
    ///
    /// # Errors
    /// The first violation found, as a [`GraphError`].
    pub fn validate(&self) -> Result<(), GraphError> {
        self.check_shapes()?;
        let n_node = host_ints(&self.n_node);
        let n_edge = host_ints(&self.n_edge);
        check_counts(&n_node, self.num_nodes, "n_node", "nodes")?;
        check_counts(&n_edge, self.sum_n_edge(), "n_edge", "edges")?;
        let (senders, receivers) = (host_ints(&self.senders), host_ints(&self.receivers));
        let mut edge = 0usize;
        let mut first_node = 0usize;
        for (graph, (&nn, &ne)) in n_node.iter().zip(&n_edge).enumerate() {
            let end_node = first_node + nn as usize;
            for e in edge..edge + ne as usize {
                for (field, value) in [("senders", senders[e]), ("receivers", receivers[e])] {
                    if value < 0 || value >= self.num_nodes as i64 {
                        return Err(GraphError::NodeIndexOutOfRange {
                            field,
                            edge: e,
                            value,
                            num_nodes: self.num_nodes,
                        });
                    }
                    if (value as usize) < first_node || value as usize >= end_node {
                        return Err(GraphError::EdgeCrossesGraphs {
                            edge: e,
                            graph,
                            field,
                            value,
                            first_node,
                            end_node,
                        });
                    }
                }
            }
            edge += ne as usize;
            first_node = end_node;
        }
        Ok(())
    }

    /// The same graph on `device` (every tensor moved; host metadata kept).
    pub fn to_device(&self, device: &Device) -> GraphsTuple {
        let move_set = |s: &FeatureSet| s.clone().map(|f| f.to_device(device));
        let move_ints = |t: &Tensor<1, Int>| default_int(t.clone().to_device(device), device);
        GraphsTuple {
            nodes: move_set(&self.nodes),
            edges: move_set(&self.edges),
            globals: move_set(&self.globals),
            senders: move_ints(&self.senders),
            receivers: move_ints(&self.receivers),
            n_node: move_ints(&self.n_node),
            n_edge: move_ints(&self.n_edge),
            num_nodes: self.num_nodes,
            padding: self.padding.clone(),
            cache: Cache {
                sorted_by_receiver: self.cache.sorted_by_receiver,
                plans: self.cache.plans.to_device(device),
            },
        }
    }

    /// This graph, known to have (`true`) or not to have its edges sorted by receiver: for the
    /// operations that order them (`sort_by_receiver`, `coalesce`, `knn_graph`, ...). Its plans
    /// are kept.
    pub(crate) fn with_sorted_receivers(mut self, sorted: bool) -> GraphsTuple {
        self.cache.sorted_by_receiver = sorted;
        self
    }

    /// Whether edges are known to be sorted by receiver (after
    /// [`sort_by_receiver`](Self::sort_by_receiver), [`coalesce`](Self::coalesce) or
    /// [`fully_connected_graph`](crate::fully_connected_graph)).
    pub fn is_sorted_by_receiver(&self) -> bool {
        self.cache.sorted_by_receiver
    }

    /// The plan of the receivers over the nodes (`sum_n_node` segments): what every layer
    /// aggregates its messages through. Built on first use (one read of the receivers to the
    /// host and a counting sort), then kept by this graph and its clones, so a training loop on
    /// a fixed graph plans once; an operation that changes the edges gives a graph without one.
    ///
    /// # Panics
    /// If a receiver lies outside `[0, sum_n_node)`, which only a graph from
    /// [`build_unchecked`](crate::GraphsTupleBuilder::build_unchecked) can hold.
    pub fn receiver_plan(&self) -> &SegmentPlan {
        let ids = || self.receivers.clone();
        self.cache.plans.receivers(ids, self.num_nodes)
    }

    /// The plan of the senders over the nodes, for aggregations along the reversed edges (and
    /// the backward pass of a fused gather). As [`receiver_plan`](Self::receiver_plan).
    ///
    /// # Panics
    /// If a sender lies outside `[0, sum_n_node)` (a graph from `build_unchecked`).
    pub fn sender_plan(&self) -> &SegmentPlan {
        let ids = || self.senders.clone();
        self.cache.plans.senders(ids, self.num_nodes)
    }

    /// The plan of each node's graph over the graphs (`n_graph` segments, sorted): what graph
    /// pooling reduces through. As [`receiver_plan`](Self::receiver_plan).
    pub fn node_graph_plan(&self) -> &SegmentPlan {
        let ids = || self.node_graph_ids();
        self.cache.plans.node_graph(ids, self.n_graph())
    }

    /// The sender and receiver plans of the graph's edges followed by one self loop per node
    /// (`E + N` edges, the loops last, in node order): the edge list of the attention layers
    /// that add self loops (they mask the graph's own loops rather than removing them). As
    /// [`receiver_plan`](Self::receiver_plan).
    pub fn plans_with_self_loops(&self) -> (&SegmentPlan, &SegmentPlan) {
        let device = self.device();
        let ids = || {
            (
                default_int(self.senders.clone(), &device),
                default_int(self.receivers.clone(), &device),
            )
        };
        self.cache.plans.looped(ids, self.num_nodes)
    }

    /// The plan of each edge's graph over the graphs (`n_graph` segments, sorted). As
    /// [`receiver_plan`](Self::receiver_plan).
    pub fn edge_graph_plan(&self) -> &SegmentPlan {
        let ids = || self.edge_graph_ids();
        self.cache.plans.edge_graph(ids, self.n_graph())
    }

    /// The total number of nodes, from shapes.
    pub fn sum_n_node(&self) -> usize {
        self.num_nodes
    }
    /// The total number of edges: the length of `senders`.
    pub fn sum_n_edge(&self) -> usize {
        self.senders.dims()[0]
    }
    /// The number of graphs: the length of `n_node`.
    pub fn n_graph(&self) -> usize {
        self.n_node.dims()[0]
    }
    /// The device the graph lives on.
    pub fn device(&self) -> Device {
        self.senders.device()
    }
    /// Sender (source) node of each edge, `[sum_n_edge]`.
    pub fn senders(&self) -> &Tensor<1, Int> {
        &self.senders
    }
    /// Receiver (target) node of each edge, `[sum_n_edge]`.
    pub fn receivers(&self) -> &Tensor<1, Int> {
        &self.receivers
    }
    /// Nodes per graph, `[n_graph]`.
    pub fn n_node(&self) -> &Tensor<1, Int> {
        &self.n_node
    }
    /// Edges per graph, `[n_graph]`.
    pub fn n_edge(&self) -> &Tensor<1, Int> {
        &self.n_edge
    }
    /// The unnamed node feature.
    pub fn nodes(&self) -> Option<&Feature> {
        self.nodes.main.as_ref()
    }
    /// The unnamed edge feature.
    pub fn edges(&self) -> Option<&Feature> {
        self.edges.main.as_ref()
    }
    /// The unnamed graph feature.
    pub fn globals(&self) -> Option<&Feature> {
        self.globals.main.as_ref()
    }
    /// All features of one set.
    pub fn feature_set(&self, set: FeatureSetKind) -> &FeatureSet {
        match set {
            FeatureSetKind::Nodes => &self.nodes,
            FeatureSetKind::Edges => &self.edges,
            FeatureSetKind::Globals => &self.globals,
        }
    }
    /// A named feature of one set.
    pub fn feature(&self, set: FeatureSetKind, name: &str) -> Option<&Feature> {
        self.feature_set(set).named.get(name)
    }

    /// The unnamed node feature as a float tensor of rank `D`.
    ///
    /// # Errors
    /// If there is none, or it is an int feature or of another rank.
    pub fn node_tensor<const D: usize>(&self) -> Result<Tensor<D>, GraphError> {
        float_of(FeatureSetKind::Nodes, MAIN, self.nodes())
    }
    /// The unnamed edge feature as a float tensor of rank `D`; errors as [`Self::node_tensor`].
    pub fn edge_tensor<const D: usize>(&self) -> Result<Tensor<D>, GraphError> {
        float_of(FeatureSetKind::Edges, MAIN, self.edges())
    }
    /// The unnamed graph feature as a float tensor of rank `D`; errors as [`Self::node_tensor`].
    pub fn global_tensor<const D: usize>(&self) -> Result<Tensor<D>, GraphError> {
        float_of(FeatureSetKind::Globals, MAIN, self.globals())
    }

    /// Replaces (`Some`) or removes (`None`) a feature: `name = None` is the unnamed one.
    ///
    /// # Errors
    /// If its leading dimension is not the set's size.
    pub fn with_feature(
        mut self,
        set: FeatureSetKind,
        name: Option<&str>,
        feature: Option<Feature>,
    ) -> Result<Self, GraphError> {
        let expected = match set {
            FeatureSetKind::Nodes => self.sum_n_node(),
            FeatureSetKind::Edges => self.sum_n_edge(),
            FeatureSetKind::Globals => self.n_graph(),
        };
        if let Some(f) = &feature
            && f.rows() != expected
        {
            let name = name.unwrap_or(MAIN).to_string();
            return Err(GraphError::FeatureRows {
                set,
                name,
                rows: f.rows(),
                expected,
            });
        }
        let target = match set {
            FeatureSetKind::Nodes => &mut self.nodes,
            FeatureSetKind::Edges => &mut self.edges,
            FeatureSetKind::Globals => &mut self.globals,
        };
        match (name, feature) {
            (None, f) => target.main = f,
            (Some(n), Some(f)) => {
                target.named.insert(n.to_string(), f);
            }
            (Some(n), None) => {
                target.named.remove(n);
            }
        }
        Ok(self)
    }
    /// Replaces the unnamed node feature; errors as [`Self::with_feature`].
    pub fn with_nodes(self, nodes: impl Into<Feature>) -> Result<Self, GraphError> {
        self.with_feature(FeatureSetKind::Nodes, None, Some(nodes.into()))
    }
    /// Replaces the unnamed edge feature; errors as [`Self::with_feature`].
    pub fn with_edges(self, edges: impl Into<Feature>) -> Result<Self, GraphError> {
        self.with_feature(FeatureSetKind::Edges, None, Some(edges.into()))
    }
    /// Replaces the unnamed graph feature; errors as [`Self::with_feature`].
    pub fn with_globals(self, globals: impl Into<Feature>) -> Result<Self, GraphError> {
        self.with_feature(FeatureSetKind::Globals, None, Some(globals.into()))
    }

    /// The graph each node belongs to, `[sum_n_node]` Int (device-side, no host read).
    pub fn node_graph_ids(&self) -> Tensor<1, Int> {
        partition_ids(self.n_node.clone(), self.sum_n_node())
    }
    /// The graph each edge belongs to, `[sum_n_edge]` Int (device-side, no host read).
    pub fn edge_graph_ids(&self) -> Tensor<1, Int> {
        partition_ids(self.n_edge.clone(), self.sum_n_edge())
    }
    /// Incoming edges per node, `[sum_n_node]` Int.
    pub fn in_degree(&self) -> Tensor<1, Int> {
        if self.sum_n_edge() == 0 {
            // No scatter on an empty index (see `compat`).
            return Tensor::zeros([self.sum_n_node()], &self.device());
        }
        segment_count(self.receivers.clone(), self.sum_n_node())
    }
    /// Outgoing edges per node, `[sum_n_node]` Int.
    pub fn out_degree(&self) -> Tensor<1, Int> {
        if self.sum_n_edge() == 0 {
            // No scatter on an empty index (see `compat`).
            return Tensor::zeros([self.sum_n_node()], &self.device());
        }
        segment_count(self.senders.clone(), self.sum_n_node())
    }

    /// Per graph: `true` for real graphs, `false` for padding graphs, `[n_graph]`.
    pub fn graph_mask(&self) -> Tensor<1, Bool> {
        let flags: Vec<bool> = match &self.padding {
            Some(p) => p.iter().map(|is_pad| !is_pad).collect(),
            None => vec![true; self.n_graph()],
        };
        Tensor::from_data(TensorData::new(flags, [self.n_graph()]), &self.device())
    }
    /// Whether any graph is a padding graph.
    pub fn has_padding(&self) -> bool {
        self.padding.as_ref().is_some_and(|p| p.iter().any(|&x| x))
    }
    /// Per graph, on the host: whether it is a padding graph.
    pub fn padding_flags(&self) -> Vec<bool> {
        self.padding
            .clone()
            .unwrap_or_else(|| vec![false; self.n_graph()])
    }
}

fn float_of<const D: usize>(
    set: FeatureSetKind,
    name: &str,
    f: Option<&Feature>,
) -> Result<Tensor<D>, GraphError> {
    let err = |message: String| GraphError::FeatureType {
        set,
        name: name.into(),
        message,
    };
    let f = f.ok_or_else(|| err("the graph has none".into()))?;
    f.float::<D>().ok_or_else(|| {
        err(format!(
            "asked for a rank-{D} float tensor, holds {:?} of shape {:?}",
            f.dtype(),
            f.dims()
        ))
    })
}
