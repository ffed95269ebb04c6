//! [`GraphData`]: a host-side mirror of a [`GraphsTuple`] for saving and loading, with serde,
//! as JSON or a compact binary form (a magic header, a format version, then `postcard`).

use std::collections::BTreeMap;
#[cfg(all(feature = "json", feature = "binary"))]
use std::path::Path;

use burn::tensor::{DType, Device, TensorData};
use serde::{Deserialize, Serialize};

#[cfg(any(feature = "json", feature = "binary"))]
use crate::codec;
use crate::graphs_tuple::index_tensor;
use crate::{Feature, FeatureSet, GraphError, GraphsTuple};

/// The binary form; its version is bumped on any incompatible change.
#[cfg(feature = "binary")]
const BINARY: codec::Binary = codec::Binary {
    magic: b"BGNNGRF\0",
    version: 1,
    what: "graph",
};

/// A feature's values, by element type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[allow(missing_docs)] // one variant per element type
pub enum FeatureValues {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// A feature on the host: shape and row-major values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureData {
    /// The shape; its product is the number of values.
    pub shape: Vec<usize>,
    /// The values, row-major.
    pub values: FeatureValues,
}

/// A [`FeatureSet`] on the host.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FeatureSetData {
    /// The unnamed feature.
    pub main: Option<FeatureData>,
    /// Named features.
    #[serde(default)]
    pub named: BTreeMap<String, FeatureData>,
}

/// A [`GraphsTuple`] on the host, for serde. [`GraphsTuple::from_graph_data`] validates it like
/// any other construction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphData {
    /// Node features.
    pub nodes: FeatureSetData,
    /// Edge features.
    pub edges: FeatureSetData,
    /// Graph features.
    pub globals: FeatureSetData,
    /// Sender of each edge.
    pub senders: Vec<i64>,
    /// Receiver of each edge.
    pub receivers: Vec<i64>,
    /// Nodes per graph.
    pub n_node: Vec<i64>,
    /// Edges per graph.
    pub n_edge: Vec<i64>,
    /// The number of nodes (also for graphs without node features).
    pub num_nodes: usize,
    /// Per graph: whether it is a padding graph (empty: none is).
    #[serde(default)]
    pub padding: Vec<bool>,
}

impl FeatureData {
    fn from_feature(f: &Feature) -> Result<FeatureData, GraphError> {
        let data = f.to_data();
        let shape = data.shape().to_vec();
        let values = match data.dtype() {
            DType::F32 => FeatureValues::F32(data.iter::<f32>().collect()),
            DType::F64 => FeatureValues::F64(data.iter::<f64>().collect()),
            DType::I32 => FeatureValues::I32(data.iter::<i32>().collect()),
            DType::I64 => FeatureValues::I64(data.iter::<i64>().collect()),
            other => {
                return Err(GraphError::UnsupportedFeature(format!(
                    "GraphData stores f32, f64, i32 and i64 features, not {other:?}; cast first"
                )));
            }
        };
        Ok(FeatureData { shape, values })
    }

    fn to_feature(&self, device: &Device) -> Result<Feature, GraphError> {
        let expected = self
            .shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .ok_or_else(|| GraphError::Decode(format!("shape {:?} overflows", self.shape)))?;
        let len = match &self.values {
            FeatureValues::F32(v) => v.len(),
            FeatureValues::F64(v) => v.len(),
            FeatureValues::I32(v) => v.len(),
            FeatureValues::I64(v) => v.len(),
        };
        if len != expected || self.shape.is_empty() {
            return Err(GraphError::Decode(format!(
                "a feature of shape {:?} holds {len} values (needs rank >= 1 and {expected} values)",
                self.shape
            )));
        }
        let shape = self.shape.clone();
        let data = match &self.values {
            FeatureValues::F32(v) => TensorData::new(v.clone(), shape),
            FeatureValues::F64(v) => TensorData::new(v.clone(), shape),
            FeatureValues::I32(v) => TensorData::new(v.clone(), shape),
            FeatureValues::I64(v) => TensorData::new(v.clone(), shape),
        };
        Feature::from_data(data, device)
    }

    #[cfg(feature = "json")] // used by to_json alone
    pub(crate) fn all_finite(&self) -> bool {
        match &self.values {
            FeatureValues::F32(v) => v.iter().all(|x| x.is_finite()),
            FeatureValues::F64(v) => v.iter().all(|x| x.is_finite()),
            _ => true,
        }
    }
}

impl FeatureSetData {
    pub(crate) fn from_set(set: &FeatureSet) -> Result<FeatureSetData, GraphError> {
        Ok(FeatureSetData {
            main: set
                .main
                .as_ref()
                .map(FeatureData::from_feature)
                .transpose()?,
            named: set
                .named
                .iter()
                .map(|(k, f)| Ok((k.clone(), FeatureData::from_feature(f)?)))
                .collect::<Result<_, GraphError>>()?,
        })
    }

    pub(crate) fn to_set(&self, device: &Device) -> Result<FeatureSet, GraphError> {
        Ok(FeatureSet {
            main: self
                .main
                .as_ref()
                .map(|f| f.to_feature(device))
                .transpose()?,
            named: self
                .named
                .iter()
                .map(|(k, f)| Ok((k.clone(), f.to_feature(device)?)))
                .collect::<Result<_, GraphError>>()?,
        })
    }

    #[cfg(feature = "json")] // used by first_non_finite alone
    fn iter(&self) -> impl Iterator<Item = (&str, &FeatureData)> {
        self.main
            .iter()
            .map(|f| ("main", f))
            .chain(self.named.iter().map(|(k, f)| (k.as_str(), f)))
    }

    /// The first float feature of `sets` (each named for the message) holding NaN or ±inf,
    /// as `<set> feature `<name>``: what JSON cannot hold.
    #[cfg(feature = "json")]
    pub(crate) fn first_non_finite<'a>(
        sets: impl IntoIterator<Item = (String, &'a FeatureSetData)>,
    ) -> Option<String> {
        sets.into_iter().find_map(|(set, data)| {
            let (name, _) = data.iter().find(|(_, f)| !f.all_finite())?;
            Some(format!("{set} feature `{name}`"))
        })
    }
}

impl GraphData {
    #[cfg(feature = "json")]
    /// As JSON.
    ///
    /// # Errors
    /// [`GraphError::NonFiniteJson`] if a float feature holds NaN or ±inf (JSON has no such
    /// numbers and `serde_json` would write `null`); use [`to_bytes`](Self::to_bytes) then.
    pub fn to_json(&self) -> Result<String, GraphError> {
        let sets = [
            ("nodes", &self.nodes),
            ("edges", &self.edges),
            ("globals", &self.globals),
        ];
        let sets = sets.map(|(set, data)| (set.to_string(), data));
        codec::to_json(self, FeatureSetData::first_non_finite(sets))
    }

    #[cfg(feature = "json")]
    /// Parses JSON written by [`to_json`](Self::to_json).
    ///
    /// # Errors
    /// [`GraphError::Decode`] for malformed JSON.
    pub fn from_json(json: &str) -> Result<GraphData, GraphError> {
        codec::from_json(json)
    }

    #[cfg(feature = "binary")]
    /// The compact binary form: `BGNNGRF\0`, a version byte, then `postcard` (varint integers,
    /// 4-byte f32). Holds any float, NaN included.
    pub fn to_bytes(&self) -> Result<Vec<u8>, GraphError> {
        BINARY.write(self)
    }

    #[cfg(feature = "binary")]
    /// Parses the binary form.
    ///
    /// # Errors
    /// [`GraphError::Decode`] for a wrong header or version, truncated or malformed bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<GraphData, GraphError> {
        BINARY.read(bytes)
    }

    #[cfg(all(feature = "json", feature = "binary"))]
    /// Writes the graph to `path`: JSON if the path ends in `.json`, the binary form otherwise.
    ///
    /// # Errors
    /// As [`to_json`](Self::to_json), and I/O errors.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), GraphError> {
        let path = path.as_ref();
        let bytes = if is_json(path) {
            self.to_json()?.into_bytes()
        } else {
            self.to_bytes()?
        };
        std::fs::write(path, bytes)?;
        Ok(())
    }

    #[cfg(all(feature = "json", feature = "binary"))]
    /// Reads a graph written by [`save`](Self::save).
    ///
    /// # Errors
    /// I/O errors, and as [`from_json`](Self::from_json) / [`from_bytes`](Self::from_bytes).
    pub fn load(path: impl AsRef<Path>) -> Result<GraphData, GraphError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)?;
        if is_json(path) {
            let text = std::str::from_utf8(&bytes)
                .map_err(|e| GraphError::Decode(format!("JSON is not UTF-8: {e}")))?;
            Self::from_json(text)
        } else {
            Self::from_bytes(&bytes)
        }
    }
}

#[cfg(all(feature = "json", feature = "binary"))]
fn is_json(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

impl GraphsTuple {
    /// Copies the graph to the host.
    ///
    /// # Errors
    /// A feature of a dtype [`GraphData`] does not store (f16, bf16, ...).
    pub fn to_graph_data(&self) -> Result<GraphData, GraphError> {
        let ints = crate::graphs_tuple::host_ints;
        Ok(GraphData {
            nodes: FeatureSetData::from_set(&self.nodes)?,
            edges: FeatureSetData::from_set(&self.edges)?,
            globals: FeatureSetData::from_set(&self.globals)?,
            senders: ints(&self.senders),
            receivers: ints(&self.receivers),
            n_node: ints(&self.n_node),
            n_edge: ints(&self.n_edge),
            num_nodes: self.num_nodes,
            padding: if self.has_padding() {
                self.padding_flags()
            } else {
                Vec::new()
            },
        })
    }

    /// Rebuilds a graph on `device`, validating it fully.
    ///
    /// # Errors
    /// Anything [`GraphsTupleBuilder::build`](crate::GraphsTupleBuilder::build) rejects, values
    /// that do not match their shape, a padding list of the wrong length.
    pub fn from_graph_data(data: &GraphData, device: &Device) -> Result<GraphsTuple, GraphError> {
        let mut b = GraphsTuple::builder(
            index_tensor(data.senders.clone(), device),
            index_tensor(data.receivers.clone(), device),
        )
        .n_node(index_tensor(data.n_node.clone(), device))
        .n_edge(index_tensor(data.n_edge.clone(), device))
        .num_nodes(data.num_nodes);
        let (nodes, edges, globals) = (
            data.nodes.to_set(device)?,
            data.edges.to_set(device)?,
            data.globals.to_set(device)?,
        );
        if let Some(f) = nodes.main {
            b = b.nodes(f);
        }
        if let Some(f) = edges.main {
            b = b.edges(f);
        }
        if let Some(f) = globals.main {
            b = b.globals(f);
        }
        for (k, f) in nodes.named {
            b = b.node_feature(k, f);
        }
        for (k, f) in edges.named {
            b = b.edge_feature(k, f);
        }
        for (k, f) in globals.named {
            b = b.global_feature(k, f);
        }
        let mut g = b.build()?;
        if !data.padding.is_empty() {
            if data.padding.len() != g.n_graph() {
                return Err(GraphError::Decode(format!(
                    "{} padding flags for {} graphs",
                    data.padding.len(),
                    g.n_graph()
                )));
            }
            g.padding = Some(data.padding.clone());
        }
        Ok(g)
    }
}
