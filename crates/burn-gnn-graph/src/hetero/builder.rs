//! [`HeteroGraphBuilder`]: assembles and validates a [`HeteroGraph`].

use std::collections::BTreeMap;
use std::sync::OnceLock;

use burn::tensor::{Device, Int, Tensor};

use super::{EdgeSet, EdgeType, HeteroGraph, NodeSet};
use crate::graphs_tuple::{default_int, index_tensor};
use crate::{Feature, FeatureSet, GraphError};

/// Senders, receivers, counts per graph (if given) and features of an edge set being built.
type EdgeEntry = (
    Tensor<1, Int>,
    Tensor<1, Int>,
    Option<Tensor<1, Int>>,
    FeatureSet,
);

/// Builds a [`HeteroGraph`]; see [`HeteroGraph::builder`].
#[derive(Default)]
pub struct HeteroGraphBuilder {
    pub(super) device: Device,
    node_sets: BTreeMap<String, (usize, Option<Tensor<1, Int>>, FeatureSet)>,
    edge_sets: BTreeMap<EdgeType, EdgeEntry>,
    context: FeatureSet,
    n_graph: Option<usize>,
    errors: Vec<GraphError>,
}

impl HeteroGraphBuilder {
    pub(super) fn new(device: &Device) -> Self {
        HeteroGraphBuilder {
            device: device.clone(),
            ..Default::default()
        }
    }

    /// Declares node type `node_type` with `num_nodes` nodes over all graphs.
    pub fn node_set(mut self, node_type: impl Into<String>, num_nodes: usize) -> Self {
        self.node_sets
            .entry(node_type.into())
            .or_insert((num_nodes, None, FeatureSet::default()))
            .0 = num_nodes;
        self
    }
    /// The main features of `node_type` (declaring it with their row count if needed).
    pub fn node_features(
        mut self,
        node_type: impl Into<String>,
        features: impl Into<Feature>,
    ) -> Self {
        let f = features.into();
        let rows = f.rows();
        self.node_sets
            .entry(node_type.into())
            .or_insert((rows, None, FeatureSet::default()))
            .2
            .main = Some(f);
        self
    }
    /// A named feature of `node_type`.
    pub fn node_feature(
        mut self,
        node_type: impl Into<String>,
        name: impl Into<String>,
        feature: impl Into<Feature>,
    ) -> Self {
        let f = feature.into();
        let rows = f.rows();
        self.node_sets
            .entry(node_type.into())
            .or_insert((rows, None, FeatureSet::default()))
            .2
            .named
            .insert(name.into(), f);
        self
    }
    /// Nodes of `node_type` per graph (default: all in one graph).
    pub fn n_node(mut self, node_type: impl Into<String>, n_node: Tensor<1, Int>) -> Self {
        let t = node_type.into();
        match self.node_sets.get_mut(&t) {
            Some(s) => s.1 = Some(n_node),
            None => self.errors.push(GraphError::UnknownNodeType(t)),
        }
        self
    }
    /// The edges of `edge_type`: `senders` index `edge_type.src` nodes, `receivers`
    /// `edge_type.dst` nodes.
    pub fn edge_set(
        mut self,
        edge_type: impl Into<EdgeType>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
    ) -> Self {
        let (s, r) = (
            default_int(senders, &self.device),
            default_int(receivers, &self.device),
        );
        self.edge_sets
            .insert(edge_type.into(), (s, r, None, FeatureSet::default()));
        self
    }
    /// The edges of `edge_type` from host index lists.
    pub fn edge_list(
        self,
        edge_type: impl Into<EdgeType>,
        senders: &[i64],
        receivers: &[i64],
    ) -> Self {
        let device = self.device.clone();
        self.edge_set(
            edge_type,
            index_tensor(senders.to_vec(), &device),
            index_tensor(receivers.to_vec(), &device),
        )
    }
    fn edge_entry(&mut self, edge_type: EdgeType) -> Option<&mut EdgeEntry> {
        if !self.edge_sets.contains_key(&edge_type) {
            self.errors.push(GraphError::InvalidArgument(format!(
                "edge type {edge_type} has no edges yet: call edge_set first"
            )));
        }
        self.edge_sets.get_mut(&edge_type)
    }
    /// The main features of an edge set added with [`edge_set`](Self::edge_set).
    pub fn edge_features(
        mut self,
        edge_type: impl Into<EdgeType>,
        features: impl Into<Feature>,
    ) -> Self {
        if let Some(e) = self.edge_entry(edge_type.into()) {
            e.3.main = Some(features.into());
        }
        self
    }
    /// A named feature of an edge set.
    pub fn edge_feature(
        mut self,
        edge_type: impl Into<EdgeType>,
        name: impl Into<String>,
        feature: impl Into<Feature>,
    ) -> Self {
        if let Some(e) = self.edge_entry(edge_type.into()) {
            e.3.named.insert(name.into(), feature.into());
        }
        self
    }
    /// Edges of `edge_type` per graph (default: all in one graph).
    pub fn n_edge(mut self, edge_type: impl Into<EdgeType>, n_edge: Tensor<1, Int>) -> Self {
        if let Some(e) = self.edge_entry(edge_type.into()) {
            e.2 = Some(n_edge);
        }
        self
    }
    /// The main context (per-graph) features.
    pub fn context(mut self, features: impl Into<Feature>) -> Self {
        self.context.main = Some(features.into());
        self
    }
    /// A named context feature.
    pub fn context_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.context.named.insert(name.into(), feature.into());
        self
    }
    /// The number of graphs, when no count tensor gives it (default 1).
    pub fn n_graph(mut self, n_graph: usize) -> Self {
        self.n_graph = Some(n_graph);
        self
    }

    /// Validates and builds the graph.
    ///
    /// # Errors
    /// The first problem found (see [`HeteroGraph::validate`]), or a builder misuse (counts for
    /// an undeclared type, features for an edge type without edges).
    pub fn build(mut self) -> Result<HeteroGraph, GraphError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        let device = self.device.clone();
        let counts = self
            .node_sets
            .values()
            .filter_map(|s| s.1.as_ref())
            .chain(self.edge_sets.values().filter_map(|e| e.2.as_ref()))
            .map(|t| t.dims()[0])
            .next();
        let n_graph = self
            .n_graph
            .or(counts)
            .or(self.context.main.as_ref().map(Feature::rows))
            .unwrap_or(1);
        let one = |n: usize| index_tensor(vec![n as i64; n_graph.min(1)], &device);
        let mut node_sets = BTreeMap::new();
        for (t, (num_nodes, n_node, features)) in self.node_sets {
            let n_node = match n_node {
                Some(c) => default_int(c, &device),
                None if n_graph == 1 => one(num_nodes),
                None => {
                    return Err(GraphError::InvalidArgument(format!(
                        "node set `{t}` needs n_node for {n_graph} graphs"
                    )));
                }
            };
            node_sets.insert(
                t,
                NodeSet {
                    features,
                    n_node,
                    num_nodes,
                },
            );
        }
        let mut edge_sets = BTreeMap::new();
        for (et, (senders, receivers, n_edge, features)) in self.edge_sets {
            let num = senders.dims()[0];
            let n_edge = match n_edge {
                Some(c) => default_int(c, &device),
                None if n_graph == 1 => one(num),
                None => {
                    return Err(GraphError::InvalidArgument(format!(
                        "edge set {et} needs n_edge for {n_graph} graphs"
                    )));
                }
            };
            edge_sets.insert(
                et,
                EdgeSet {
                    features,
                    senders,
                    receivers,
                    n_edge,
                    plans: Default::default(),
                },
            );
        }
        let g = HeteroGraph {
            node_sets,
            edge_sets,
            context: self.context,
            n_graph,
            padding: None,
            device,
            homogeneous: OnceLock::new(),
        };
        g.validate()?;
        Ok(g)
    }
}
