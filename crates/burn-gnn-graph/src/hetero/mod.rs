//! [`HeteroGraph`]: graphs with several node and edge types, batched like [`GraphsTuple`].
//!
//! [`GraphsTuple`]: crate::GraphsTuple

mod batch;
mod builder;
mod convert;
mod data;
mod subset;

pub use builder::HeteroGraphBuilder;
pub use convert::{EDGE_TYPE, NODE_TYPE};
pub use data::{EdgeSetData, HeteroGraphData, NodeSetData};

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use burn::tensor::{Device, Int, Tensor};
use burn_segment::SegmentPlan;
use serde::{Deserialize, Serialize};

use crate::graphs_tuple::{check_counts, host_ints};
use crate::{Feature, FeatureSet, GraphError};

/// The type of an edge set: `(source node type, relation, target node type)`, as in PyG's
/// `HeteroData` and DGL's canonical edge types. Edges point from `src` nodes to `dst` nodes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EdgeType {
    /// The node type of the senders.
    pub src: String,
    /// The relation's name.
    pub rel: String,
    /// The node type of the receivers.
    pub dst: String,
}

impl EdgeType {
    /// `(src, rel, dst)`.
    pub fn new(src: impl Into<String>, rel: impl Into<String>, dst: impl Into<String>) -> Self {
        EdgeType {
            src: src.into(),
            rel: rel.into(),
            dst: dst.into(),
        }
    }
}

impl fmt::Display for EdgeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.src, self.rel, self.dst)
    }
}

impl<A: Into<String>, B: Into<String>, C: Into<String>> From<(A, B, C)> for EdgeType {
    fn from((src, rel, dst): (A, B, C)) -> Self {
        EdgeType::new(src, rel, dst)
    }
}

/// The nodes of one type: features and a count per graph.
#[derive(Clone, Debug)]
pub struct NodeSet {
    pub(crate) features: FeatureSet,
    pub(crate) n_node: Tensor<1, Int>,
    pub(crate) num_nodes: usize,
}

impl NodeSet {
    /// Number of nodes of this type over all graphs (from shapes).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }
    /// Nodes of this type per graph, `[n_graph]`.
    pub fn n_node(&self) -> &Tensor<1, Int> {
        &self.n_node
    }
    /// The features (main and named), `[num_nodes, ...]` each.
    pub fn features(&self) -> &FeatureSet {
        &self.features
    }
}

/// The edges of one [`EdgeType`]: senders index the source type's nodes, receivers the target
/// type's, with features and a count per graph.
#[derive(Clone, Debug)]
pub struct EdgeSet {
    pub(crate) features: FeatureSet,
    pub(crate) senders: Tensor<1, Int>,
    pub(crate) receivers: Tensor<1, Int>,
    pub(crate) n_edge: Tensor<1, Int>,
    /// The sender and receiver plans, built on first use (see `HeteroGraph::edge_plans`) and
    /// shared by clones; an edge set with other edges starts without.
    pub(crate) plans: Arc<OnceLock<(SegmentPlan, SegmentPlan)>>,
}

impl EdgeSet {
    /// Number of edges of this type over all graphs (the length of `senders`).
    pub fn num_edges(&self) -> usize {
        self.senders.dims()[0]
    }
    /// Source-type node of each edge, `[num_edges]`.
    pub fn senders(&self) -> &Tensor<1, Int> {
        &self.senders
    }
    /// Target-type node of each edge, `[num_edges]`.
    pub fn receivers(&self) -> &Tensor<1, Int> {
        &self.receivers
    }
    /// Edges of this type per graph, `[n_graph]`.
    pub fn n_edge(&self) -> &Tensor<1, Int> {
        &self.n_edge
    }
    /// The features (main and named), `[num_edges, ...]` each.
    pub fn features(&self) -> &FeatureSet {
        &self.features
    }
}

/// One heterogeneous graph or a batch of them: named node sets, edge sets keyed by
/// [`EdgeType`], and a context (per-graph features, jraph's globals).
///
/// Every set stores its rows of all graphs concatenated, with a count per graph (`n_node`
/// per node type, `n_edge` per edge type), and indices are absolute within their node type,
/// as in [`GraphsTuple`](crate::GraphsTuple). Sizes come from shapes. Built with
/// [`HeteroGraph::builder`], which validates everything and returns a typed [`GraphError`].
/// Types are kept in name order.
///
/// # Shapes
/// - node set `t`: features `[num_nodes(t), ...]`, `n_node` `[n_graph]`
/// - edge set `r`: `senders`, `receivers` and features `[num_edges(r), ...]`, `n_edge` `[n_graph]`
/// - context features: `[n_graph, ...]`
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// use burn_gnn_graph::{EdgeType, HeteroGraph};
/// let device = Device::flex();
/// let writes = EdgeType::new("author", "writes", "paper");
/// let g = HeteroGraph::builder(&device)
///     .node_set("author", 2)
///     .node_set("paper", 3)
///     .node_features("paper", Tensor::<2>::ones([3, 4], &device))
///     .edge_set(writes.clone(), Tensor::<1, Int>::from_ints([0, 0, 1], &device), Tensor::<1, Int>::from_ints([0, 1, 2], &device))
///     .build()
///     .unwrap();
/// assert_eq!((g.num_nodes("paper"), g.num_edges(&writes), g.n_graph()), (3, 3, 1));
/// assert_eq!(g.metadata().0, ["author", "paper"]);
/// ```
#[derive(Clone, Debug)]
pub struct HeteroGraph {
    pub(crate) node_sets: BTreeMap<String, NodeSet>,
    pub(crate) edge_sets: BTreeMap<EdgeType, EdgeSet>,
    pub(crate) context: FeatureSet,
    pub(crate) n_graph: usize,
    pub(crate) padding: Option<Vec<bool>>,
    pub(crate) device: Device,
    /// `[order, inverse]` between the per-type and the homogeneous node layouts, built on first
    /// use (see `nodes_to_homogeneous`).
    pub(crate) homogeneous: OnceLock<[Tensor<1, Int>; 2]>,
}

impl HeteroGraph {
    /// A builder for a graph on `device`.
    pub fn builder(device: &Device) -> HeteroGraphBuilder {
        HeteroGraphBuilder::new(device)
    }

    /// The node types and edge types, in order (PyG's `metadata()`).
    pub fn metadata(&self) -> (Vec<String>, Vec<EdgeType>) {
        (self.node_types(), self.edge_types())
    }
    /// The node types, in name order.
    pub fn node_types(&self) -> Vec<String> {
        self.node_sets.keys().cloned().collect()
    }
    /// The edge types, in order.
    pub fn edge_types(&self) -> Vec<EdgeType> {
        self.edge_sets.keys().cloned().collect()
    }
    /// The node set of `node_type`.
    pub fn node_set(&self, node_type: &str) -> Option<&NodeSet> {
        self.node_sets.get(node_type)
    }
    /// The edge set of `edge_type`.
    pub fn edge_set(&self, edge_type: &EdgeType) -> Option<&EdgeSet> {
        self.edge_sets.get(edge_type)
    }
    /// Nodes of `node_type` over all graphs (0 for an unknown type).
    pub fn num_nodes(&self, node_type: &str) -> usize {
        self.node_sets.get(node_type).map_or(0, |s| s.num_nodes)
    }
    /// The plans of `edge_type`'s senders (over the source type's nodes) and receivers (over
    /// the target type's): what a relation's convolution aggregates through. Built on first use
    /// and kept by this graph and its clones, as
    /// [`GraphsTuple::receiver_plan`](crate::GraphsTuple::receiver_plan); `None` for a type the
    /// graph does not have.
    pub fn edge_plans(&self, edge_type: &EdgeType) -> Option<(&SegmentPlan, &SegmentPlan)> {
        let set = self.edge_sets.get(edge_type)?;
        let (s, r) = set.plans.get_or_init(|| {
            let what = |end: &str| format!("{end} of {edge_type}");
            (
                crate::plans::plan(
                    set.senders.clone(),
                    self.num_nodes(&edge_type.src),
                    &what("senders"),
                ),
                crate::plans::plan(
                    set.receivers.clone(),
                    self.num_nodes(&edge_type.dst),
                    &what("receivers"),
                ),
            )
        });
        Some((s, r))
    }
    /// Edges of `edge_type` over all graphs (0 for an unknown type).
    pub fn num_edges(&self, edge_type: &EdgeType) -> usize {
        self.edge_sets.get(edge_type).map_or(0, EdgeSet::num_edges)
    }
    /// Number of graphs.
    pub fn n_graph(&self) -> usize {
        self.n_graph
    }
    /// The device of every tensor.
    pub fn device(&self) -> Device {
        self.device.clone()
    }
    /// The context (per-graph) features.
    pub fn context(&self) -> &FeatureSet {
        &self.context
    }
    /// The main float features of every node type that has 2-D ones, by type: the input of a
    /// heterogeneous layer.
    pub fn x_dict(&self) -> BTreeMap<String, Tensor<2>> {
        self.node_sets
            .iter()
            .filter_map(|(t, s)| {
                s.features
                    .main
                    .as_ref()
                    .and_then(Feature::float::<2>)
                    .map(|x| (t.clone(), x))
            })
            .collect()
    }
    /// The edge types whose target is `node_type`.
    pub fn incoming(&self, node_type: &str) -> Vec<EdgeType> {
        self.edge_sets
            .keys()
            .filter(|e| e.dst == node_type)
            .cloned()
            .collect()
    }
    /// Whether the graph has nodes of type `node_type` (possibly zero of them).
    pub fn has_node_type(&self, node_type: &str) -> bool {
        self.node_sets.contains_key(node_type)
    }

    /// Checks every invariant, reading counts and indices to the host: one count per graph in
    /// every set, counts non-negative and adding up to the shapes, feature rows, edge types
    /// naming existing node types, every index in range for its node type, and every edge
    /// inside its own graph.
    ///
    /// # Errors
    /// The first violation found, as a [`GraphError`] (wrapped in [`GraphError::InSet`] with the
    /// set it was found in).
    pub fn validate(&self) -> Result<(), GraphError> {
        let in_set = |set: String| {
            move |error: GraphError| GraphError::InSet {
                set: set.clone(),
                error: Box::new(error),
            }
        };
        let rows_ok = |features: &FeatureSet, expected: usize, kind: crate::FeatureSetKind| {
            for (name, f) in features.iter() {
                if f.rows() != expected {
                    return Err(GraphError::FeatureRows {
                        set: kind,
                        name: name.into(),
                        rows: f.rows(),
                        expected,
                    });
                }
            }
            Ok(())
        };
        rows_ok(&self.context, self.n_graph, crate::FeatureSetKind::Globals)
            .map_err(in_set("context".into()))?;
        let mut firsts: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (t, s) in &self.node_sets {
            let counts = read_counts(&s.n_node, self.n_graph, s.num_nodes, "n_node", "nodes")
                .map_err(in_set(format!("node set `{t}`")))?;
            rows_ok(&s.features, s.num_nodes, crate::FeatureSetKind::Nodes)
                .map_err(in_set(format!("node set `{t}`")))?;
            firsts.insert(t, prefix(&counts));
        }
        for (et, s) in &self.edge_sets {
            let wrap = in_set(format!("edge set {et}"));
            let (src, dst) = match (firsts.get(et.src.as_str()), firsts.get(et.dst.as_str())) {
                (Some(a), Some(b)) => (a, b),
                _ => {
                    let missing = if firsts.contains_key(et.src.as_str()) {
                        &et.dst
                    } else {
                        &et.src
                    };
                    return Err(wrap(GraphError::UnknownNodeType(missing.clone())));
                }
            };
            let (ns, nr) = (s.senders.dims()[0], s.receivers.dims()[0]);
            if ns != nr {
                return Err(wrap(GraphError::EdgeIndexLength {
                    senders: ns,
                    receivers: nr,
                }));
            }
            let counts =
                read_counts(&s.n_edge, self.n_graph, ns, "n_edge", "edges").map_err(&wrap)?;
            rows_ok(&s.features, ns, crate::FeatureSetKind::Edges).map_err(&wrap)?;
            let edge_first = prefix(&counts);
            for (field, idx, firsts) in [
                ("senders", host_ints(&s.senders), src),
                ("receivers", host_ints(&s.receivers), dst),
            ] {
                let total = *firsts.last().unwrap_or(&0);
                for g in 0..self.n_graph {
                    let (lo, hi) = (firsts[g], firsts[g + 1]);
                    for (e, &value) in idx
                        .iter()
                        .enumerate()
                        .take(edge_first[g + 1])
                        .skip(edge_first[g])
                    {
                        if value < 0 || value >= total as i64 {
                            return Err(wrap(GraphError::NodeIndexOutOfRange {
                                field,
                                edge: e,
                                value,
                                num_nodes: total,
                            }));
                        }
                        if (value as usize) < lo || value as usize >= hi {
                            return Err(wrap(GraphError::EdgeCrossesGraphs {
                                edge: e,
                                graph: g,
                                field,
                                value,
                                first_node: lo,
                                end_node: hi,
                            }));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The same graph on `device`.
    pub fn to_device(&self, device: &Device) -> HeteroGraph {
        let node_sets = self
            .node_sets
            .iter()
            .map(|(t, s)| {
                let set = NodeSet {
                    features: s.features.clone().map(|f| f.to_device(device)),
                    n_node: s.n_node.clone().to_device(device),
                    num_nodes: s.num_nodes,
                };
                (t.clone(), set)
            })
            .collect();
        let edge_sets = self
            .edge_sets
            .iter()
            .map(|(t, s)| {
                let set = EdgeSet {
                    features: s.features.clone().map(|f| f.to_device(device)),
                    senders: s.senders.clone().to_device(device),
                    receivers: s.receivers.clone().to_device(device),
                    n_edge: s.n_edge.clone().to_device(device),
                    plans: Arc::new(crate::plans::moved(&s.plans, |(ps, pr)| {
                        (ps.to_device(device), pr.to_device(device))
                    })),
                };
                (t.clone(), set)
            })
            .collect();
        HeteroGraph {
            node_sets,
            edge_sets,
            context: self.context.clone().map(|f| f.to_device(device)),
            n_graph: self.n_graph,
            padding: self.padding.clone(),
            device: device.clone(),
            homogeneous: OnceLock::new(),
        }
    }
}

/// Reads `counts` and checks: one per graph, non-negative, summing to `expected`.
fn read_counts(
    counts: &Tensor<1, Int>,
    n_graph: usize,
    expected: usize,
    field: &'static str,
    what: &'static str,
) -> Result<Vec<usize>, GraphError> {
    let len = counts.dims()[0];
    if len != n_graph {
        return Err(GraphError::InvalidArgument(format!(
            "{field} has {len} entries for {n_graph} graphs"
        )));
    }
    let values = host_ints(counts);
    check_counts(&values, expected, field, what)?;
    Ok(values.into_iter().map(|c| c as usize).collect())
}

/// `[0, c0, c0 + c1, ...]`.
pub(crate) fn prefix(counts: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(counts.len() + 1);
    out.push(0);
    for &c in counts {
        out.push(out.last().unwrap() + c);
    }
    out
}
