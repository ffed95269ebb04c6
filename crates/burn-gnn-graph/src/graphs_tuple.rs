//! [`GraphsTuple`]: jraph's batched-graph container, with validation on construction.

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use burn_segment::{partition_ids, segment_count};

use crate::feature::MAIN;
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
    /// CSR row pointers over receivers (`[sum_n_node + 1]`), set when edges are sorted by receiver.
    pub(crate) receiver_offsets: Option<Tensor<1, Int>>,
}

/// Collects the parts of a [`GraphsTuple`]; see [`GraphsTuple::builder`].
#[derive(Clone, Debug)]
pub struct GraphsTupleBuilder {
    graph: GraphsTuple,
    n_node: Option<Tensor<1, Int>>,
    n_edge: Option<Tensor<1, Int>>,
    num_nodes: Option<usize>,
}

impl GraphsTupleBuilder {
    /// The unnamed node features (`[sum_n_node, ...]`).
    pub fn nodes(mut self, nodes: impl Into<Feature>) -> Self {
        self.graph.nodes.main = Some(nodes.into());
        self
    }
    /// The unnamed edge features (`[sum_n_edge, ...]`).
    pub fn edges(mut self, edges: impl Into<Feature>) -> Self {
        self.graph.edges.main = Some(edges.into());
        self
    }
    /// The unnamed graph features (`[n_graph, ...]`).
    pub fn globals(mut self, globals: impl Into<Feature>) -> Self {
        self.graph.globals.main = Some(globals.into());
        self
    }
    /// A named node feature.
    pub fn node_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.nodes.named.insert(name.into(), feature.into());
        self
    }
    /// A named edge feature.
    pub fn edge_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.edges.named.insert(name.into(), feature.into());
        self
    }
    /// A named graph feature.
    pub fn global_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.globals.named.insert(name.into(), feature.into());
        self
    }
    /// Nodes per graph. Default: one graph holding every node.
    pub fn n_node(mut self, n_node: Tensor<1, Int>) -> Self {
        self.n_node = Some(n_node);
        self
    }
    /// Edges per graph. Default: one graph holding every edge.
    pub fn n_edge(mut self, n_edge: Tensor<1, Int>) -> Self {
        self.n_edge = Some(n_edge);
        self
    }
    /// The number of nodes, for graphs without node features (otherwise their leading
    /// dimension gives it, and this must agree).
    pub fn num_nodes(mut self, num_nodes: usize) -> Self {
        self.num_nodes = Some(num_nodes);
        self
    }

    /// Checks shapes and values (a host read of `senders`, `receivers`, `n_node`, `n_edge`) and
    /// builds the graph.
    ///
    /// # Errors
    /// Any inconsistency, as a [`GraphError`] naming the field, position and value.
    pub fn build(self) -> Result<GraphsTuple, GraphError> {
        let graph = self.build_unchecked()?;
        graph.validate()?;
        Ok(graph)
    }

    /// Checks only what shapes tell (lengths, feature rows), without reading any tensor: for
    /// hot loops over data that was validated once. Out-of-range indices then reach the
    /// kernels (CPU kernels panic; the composite path drops them).
    ///
    /// # Errors
    /// Shape inconsistencies; a graph with no node feature, no `num_nodes` and no `n_node`.
    pub fn build_unchecked(self) -> Result<GraphsTuple, GraphError> {
        let mut graph = self.graph;
        let device = graph.senders.device();
        let num_nodes = match (self.num_nodes, graph.nodes.iter().next()) {
            (Some(n), _) => n,
            (None, Some((_, f))) => f.rows(),
            (None, None) => match &self.n_node {
                // No shape tells it: the sum of n_node is the only source (one host read).
                Some(n_node) => n_node.to_data().iter::<i64>().sum::<i64>().max(0) as usize,
                None => {
                    return Err(GraphError::InvalidArgument(
                        "the number of nodes is unknown: give node features, num_nodes or n_node"
                            .into(),
                    ));
                }
            },
        };
        graph.num_nodes = num_nodes;
        let n_edge_total = graph.senders.dims()[0];
        graph.n_node = default_int(
            self.n_node
                .unwrap_or_else(|| index_tensor(vec![num_nodes as i64], &device)),
            &device,
        );
        graph.n_edge = default_int(
            self.n_edge
                .unwrap_or_else(|| index_tensor(vec![n_edge_total as i64], &device)),
            &device,
        );
        graph.senders = default_int(graph.senders, &device);
        graph.receivers = default_int(graph.receivers, &device);
        graph.check_shapes()?;
        Ok(graph)
    }
}

/// A tensor's values on the host, as i64 (one device read).
pub(crate) fn host_ints(t: &Tensor<1, Int>) -> Vec<i64> {
    t.to_data().iter::<i64>().collect()
}

/// An index tensor in the device's default int dtype.
pub(crate) fn index_tensor(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// `t` in the device's default int dtype, so that index arithmetic never mixes dtypes.
fn default_int(t: Tensor<1, Int>, device: &Device) -> Tensor<1, Int> {
    let want = Tensor::<1, Int>::empty([0], device).dtype();
    if t.dtype() == want {
        t
    } else {
        Tensor::from_data(t.into_data(), device)
    }
}

impl GraphsTuple {
    /// Starts a graph from its edges: `senders[e] -> receivers[e]`.
    pub fn builder(senders: Tensor<1, Int>, receivers: Tensor<1, Int>) -> GraphsTupleBuilder {
        let device = senders.device();
        let empty = Tensor::<1, Int>::zeros([0], &device);
        GraphsTupleBuilder {
            graph: GraphsTuple {
                nodes: FeatureSet::default(),
                edges: FeatureSet::default(),
                globals: FeatureSet::default(),
                senders,
                receivers,
                n_node: empty.clone(),
                n_edge: empty,
                num_nodes: 0,
                padding: None,
                receiver_offsets: None,
            },
            n_node: None,
            n_edge: None,
            num_nodes: None,
        }
    }

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
            receiver_offsets: None,
            ..self.clone()
        }
    }

    fn check_shapes(&self) -> Result<(), GraphError> {
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
        for (field, counts, expected, what) in [
            ("n_node", &n_node, self.num_nodes, "nodes"),
            ("n_edge", &n_edge, self.sum_n_edge(), "edges"),
        ] {
            if let Some((graph, &value)) = counts.iter().enumerate().find(|(_, c)| **c < 0) {
                return Err(GraphError::NegativeCount {
                    field,
                    graph,
                    value,
                });
            }
            let sum: i64 = counts.iter().sum();
            if sum != expected as i64 {
                return Err(GraphError::CountSum {
                    field,
                    sum,
                    expected,
                    what,
                });
            }
        }
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
        segment_count(self.receivers.clone(), self.sum_n_node())
    }
    /// Outgoing edges per node, `[sum_n_node]` Int.
    pub fn out_degree(&self) -> Tensor<1, Int> {
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
