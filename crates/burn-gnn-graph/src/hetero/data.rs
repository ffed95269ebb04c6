//! [`HeteroGraphData`]: a host-side, serde mirror of a [`HeteroGraph`].

use std::collections::BTreeMap;
use std::sync::OnceLock;

use burn::tensor::Device;
use serde::{Deserialize, Serialize};

use super::{EdgeSet, EdgeType, HeteroGraph, NodeSet};
use crate::FeatureSetData;
use crate::GraphError;
use crate::graphs_tuple::{host_ints, index_tensor};

/// The binary form; its version is bumped on any incompatible change.
#[cfg(feature = "binary")]
const BINARY: crate::codec::Binary = crate::codec::Binary {
    magic: b"BGNNHET\0",
    version: 1,
    what: "heterogeneous graph",
};

/// A node set on the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeSetData {
    /// Nodes per graph.
    pub n_node: Vec<i64>,
    /// Nodes over all graphs.
    pub num_nodes: usize,
    /// Features.
    pub features: FeatureSetData,
}

/// An edge set on the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EdgeSetData {
    /// Its type.
    pub edge_type: EdgeType,
    /// Source-type node of each edge.
    pub senders: Vec<i64>,
    /// Target-type node of each edge.
    pub receivers: Vec<i64>,
    /// Edges per graph.
    pub n_edge: Vec<i64>,
    /// Features.
    pub features: FeatureSetData,
}

/// A [`HeteroGraph`] on the host: serde-serialisable (JSON through
/// [`to_json`](Self::to_json), a compact binary form through [`to_bytes`](Self::to_bytes)),
/// rebuilt and validated by [`HeteroGraph::from_data`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeteroGraphData {
    /// Node sets by type.
    pub node_sets: BTreeMap<String, NodeSetData>,
    /// Edge sets, in edge-type order.
    pub edge_sets: Vec<EdgeSetData>,
    /// Context (per-graph) features.
    pub context: FeatureSetData,
    /// Number of graphs.
    pub n_graph: usize,
    /// Per graph, whether it is a padding graph (empty: none is).
    pub padding: Vec<bool>,
}

impl HeteroGraphData {
    #[cfg(feature = "json")]
    /// As JSON.
    ///
    /// # Errors
    /// [`GraphError::NonFiniteJson`] if a float feature holds NaN or ±inf; use
    /// [`to_bytes`](Self::to_bytes) then.
    pub fn to_json(&self) -> Result<String, GraphError> {
        let sets = self
            .node_sets
            .iter()
            .map(|(t, s)| (format!("node set `{t}`"), &s.features))
            .chain(
                self.edge_sets
                    .iter()
                    .map(|s| (format!("edge set {}", s.edge_type), &s.features)),
            )
            .chain([("context".to_string(), &self.context)]);
        crate::codec::to_json(self, FeatureSetData::first_non_finite(sets))
    }

    #[cfg(feature = "json")]
    /// Parses JSON written by [`to_json`](Self::to_json).
    ///
    /// # Errors
    /// [`GraphError::Decode`] for malformed JSON.
    pub fn from_json(json: &str) -> Result<HeteroGraphData, GraphError> {
        crate::codec::from_json(json)
    }

    #[cfg(feature = "binary")]
    /// The compact binary form: `BGNNHET\0`, a version byte, then `postcard`.
    ///
    /// # Errors
    /// Only if serialisation fails.
    pub fn to_bytes(&self) -> Result<Vec<u8>, GraphError> {
        BINARY.write(self)
    }

    #[cfg(feature = "binary")]
    /// Parses the binary form.
    ///
    /// # Errors
    /// [`GraphError::Decode`] for a wrong header or version, truncated or malformed bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<HeteroGraphData, GraphError> {
        BINARY.read(bytes)
    }
}

impl HeteroGraph {
    /// Copies the graph to the host.
    ///
    /// # Errors
    /// A feature of a dtype [`FeatureSetData`] does not store (f16, bf16, ...).
    pub fn to_data(&self) -> Result<HeteroGraphData, GraphError> {
        let node_sets = self
            .node_sets
            .iter()
            .map(|(t, s)| {
                let data = NodeSetData {
                    n_node: host_ints(&s.n_node),
                    num_nodes: s.num_nodes,
                    features: FeatureSetData::from_set(&s.features)?,
                };
                Ok((t.clone(), data))
            })
            .collect::<Result<_, GraphError>>()?;
        let edge_sets = self
            .edge_sets
            .iter()
            .map(|(et, s)| {
                Ok(EdgeSetData {
                    edge_type: et.clone(),
                    senders: host_ints(&s.senders),
                    receivers: host_ints(&s.receivers),
                    n_edge: host_ints(&s.n_edge),
                    features: FeatureSetData::from_set(&s.features)?,
                })
            })
            .collect::<Result<_, GraphError>>()?;
        Ok(HeteroGraphData {
            node_sets,
            edge_sets,
            context: FeatureSetData::from_set(&self.context)?,
            n_graph: self.n_graph,
            padding: if self.has_padding() {
                self.padding_flags()
            } else {
                vec![]
            },
        })
    }

    /// Rebuilds a graph on `device`, validating it fully.
    ///
    /// # Errors
    /// Whatever [`validate`](Self::validate) rejects, duplicate edge types, values that do not
    /// match their shapes, a padding list of the wrong length.
    pub fn from_data(data: &HeteroGraphData, device: &Device) -> Result<HeteroGraph, GraphError> {
        let mut node_sets = BTreeMap::new();
        for (t, s) in &data.node_sets {
            let set = NodeSet {
                features: s.features.to_set(device)?,
                n_node: index_tensor(s.n_node.clone(), device),
                num_nodes: s.num_nodes,
            };
            node_sets.insert(t.clone(), set);
        }
        let mut edge_sets = BTreeMap::new();
        for s in &data.edge_sets {
            let set = EdgeSet {
                features: s.features.to_set(device)?,
                senders: index_tensor(s.senders.clone(), device),
                receivers: index_tensor(s.receivers.clone(), device),
                n_edge: index_tensor(s.n_edge.clone(), device),
                plans: Default::default(),
            };
            if edge_sets.insert(s.edge_type.clone(), set).is_some() {
                return Err(GraphError::Decode(format!(
                    "edge type {} appears twice",
                    s.edge_type
                )));
            }
        }
        if !data.padding.is_empty() && data.padding.len() != data.n_graph {
            return Err(GraphError::Decode(format!(
                "{} padding flags for {} graphs",
                data.padding.len(),
                data.n_graph
            )));
        }
        let g = HeteroGraph {
            node_sets,
            edge_sets,
            context: data.context.to_set(device)?,
            n_graph: data.n_graph,
            padding: (!data.padding.is_empty()).then(|| data.padding.clone()),
            device: device.clone(),
            homogeneous: OnceLock::new(),
        };
        g.validate()?;
        Ok(g)
    }
}
