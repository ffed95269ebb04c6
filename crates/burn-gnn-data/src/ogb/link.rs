//! OGB's link property prediction datasets (`ogbl-*`, homogeneous): the graph in the raw
//! layout of node datasets, and the split as `split/<scheme>/{train,valid,test}.pt`, each a
//! dictionary of tensors written by `torch.save` (read with `pytorch-reader`, Burn's reader of
//! PyTorch files), as OGB's `LinkPropPredDataset.get_edge_split` loads them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_graph::{FeatureData, FeatureValues, GraphData, GraphsTuple};
use pytorch_reader::{DType, PytorchReader};

use crate::DataError;

use super::evaluate::Evaluator;
use super::info::{OgbInfo, OgbLevel};
use super::read::{RawGraphs, locate, missing, values_f64};

/// One part of a link split (`train.pt`, `valid.pt` or `test.pt`): its tensors by name, as the
/// dataset writes them. OGB's link datasets use:
///
/// | dataset | keys |
/// |---|---|
/// | collab, ddi, ppa, vessel | `edge` `[E, 2]`; `edge_neg` `[E', 2]` (valid, test); collab's `weight`, `year` |
/// | citation2 | `source_node`, `target_node` `[E]`; `target_node_neg` `[E, 1000]` (valid, test) |
/// | wikikg2, biokg | `head`, `relation`, `tail` `[E]`; `head_neg`, `tail_neg` `[E, k]` |
///
/// Integer tensors are `i64`, float tensors `f32` or `f64`, as saved (`bool` and narrower
/// integers become `i64`, `f16`/`bf16` `f32`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OgbLinkPart {
    /// The tensors by name.
    pub tensors: BTreeMap<String, FeatureData>,
}

/// A link split scheme: its three parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OgbLinkSplit {
    /// The scheme's name, e.g. `time`.
    pub scheme: String,
    /// Training edges.
    pub train: OgbLinkPart,
    /// Validation edges (and their negatives).
    pub valid: OgbLinkPart,
    /// Test edges (and their negatives).
    pub test: OgbLinkPart,
}

impl OgbLinkPart {
    /// The `[E, 2]` node-pair tensor `key` (`edge`, `edge_neg`) as senders and receivers.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when the part has no such tensor or it is not `[E, 2]`
    /// integers.
    pub fn pairs(&self, key: &str) -> Result<(Vec<i64>, Vec<i64>), DataError> {
        match self.tensors.get(key) {
            Some(FeatureData {
                shape,
                values: FeatureValues::I64(v),
            }) if shape.len() == 2 && shape[1] == 2 => {
                Ok(v.chunks_exact(2).map(|p| (p[0], p[1])).unzip())
            }
            Some(f) => Err(DataError::InvalidArgument(format!(
                "`{key}` is {:?} of shape {:?}, not [E, 2] integers",
                kind(f),
                f.shape
            ))),
            None => Err(DataError::InvalidArgument(format!(
                "no tensor `{key}`; this part has: {}",
                self.tensors.keys().cloned().collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// The values of tensor `key` as `f64`, row-major (scores, weights, ids for an evaluator).
    pub fn values(&self, key: &str) -> Option<Vec<f64>> {
        self.tensors.get(key).map(values_f64)
    }
}

fn kind(f: &FeatureData) -> &'static str {
    match f.values {
        FeatureValues::F32(_) => "f32",
        FeatureValues::F64(_) => "f64",
        FeatureValues::I32(_) => "i32",
        FeatureValues::I64(_) => "i64",
    }
}

/// An OGB link property prediction dataset (`ogbl-*`, homogeneous) read from its raw files:
/// OGB's `LinkPropPredDataset`. The graph is read as [`OgbNodeDataset`](super::OgbNodeDataset)
/// reads one (additional files such as collab's `edge_weight`, `edge_year` as named edge
/// features); the split from the scheme's `.pt` files.
#[derive(Clone, Debug)]
pub struct OgbLinkDataset {
    /// The dataset's description.
    pub info: OgbInfo,
    /// The dataset's folder.
    pub dir: PathBuf,
    /// The graph (training edges only, as OGB ships it).
    pub graph: GraphData,
    /// The default split.
    pub split: OgbLinkSplit,
}

impl OgbLinkDataset {
    /// Reads the OGB dataset `name` (e.g. `ogbl-collab`), found as
    /// [`OgbNodeDataset::open`](super::OgbNodeDataset::open) finds one.
    ///
    /// # Errors
    /// As [`OgbNodeDataset::open`](super::OgbNodeDataset::open).
    pub fn open(name: &str, data_dir: Option<&Path>) -> Result<OgbLinkDataset, DataError> {
        let (info, dir) = locate(name, OgbLevel::Link, data_dir)?;
        OgbLinkDataset::open_dir(&dir, info)
    }

    /// Reads a link dataset in OGB's layout from its folder, described by `info`.
    ///
    /// # Errors
    /// As [`OgbNodeDataset::open_dir`](super::OgbNodeDataset::open_dir); for the split,
    /// [`DataError::Array`] naming `<part>.pt` (or `<part>.pt:<key>`) for a file PyTorch's
    /// format does not describe, a tensor type that is not read, or a node id outside the
    /// graph; [`DataError::InvalidArgument`] for a heterogeneous dataset.
    pub fn open_dir(dir: &Path, info: OgbInfo) -> Result<OgbLinkDataset, DataError> {
        if info.hetero {
            return Err(DataError::InvalidArgument(format!(
                "{}: heterogeneous link datasets are not read yet",
                info.name
            )));
        }
        let raw = RawGraphs::read(&dir.join("raw"), &info)?;
        let graph = raw.graph(0..raw.num_nodes.len(), info.add_inverse_edge);
        let split = read_link_split(dir, &info.split, graph.num_nodes)?;
        Ok(OgbLinkDataset {
            info,
            dir: dir.to_path_buf(),
            graph,
            split,
        })
    }

    /// Reads another split scheme.
    ///
    /// # Errors
    /// As [`open_dir`](Self::open_dir) for the split's files.
    pub fn read_split(&self, scheme: &str) -> Result<OgbLinkSplit, DataError> {
        read_link_split(&self.dir, scheme, self.graph.num_nodes)
    }

    /// The graph on `device`.
    ///
    /// # Errors
    /// As [`GraphsTuple::from_graph_data`].
    pub fn graph(&self, device: &Device) -> Result<GraphsTuple, DataError> {
        Ok(GraphsTuple::from_graph_data(&self.graph, device)?)
    }

    /// The dataset's evaluator.
    pub fn evaluator(&self) -> Evaluator {
        Evaluator::from_info(&self.info)
    }
}

/// The tensors whose values are node ids, checked against the number of nodes.
const NODE_KEYS: [&str; 7] = [
    "edge",
    "edge_neg",
    "source_node",
    "target_node",
    "target_node_neg",
    "head",
    "tail",
];

fn read_link_split(dir: &Path, scheme: &str, num_nodes: usize) -> Result<OgbLinkSplit, DataError> {
    let folder = dir.join("split").join(scheme);
    let part = |name: &str| read_part(&folder.join(format!("{name}.pt")), num_nodes);
    Ok(OgbLinkSplit {
        scheme: scheme.to_string(),
        train: part("train")?,
        valid: part("valid")?,
        test: part("test")?,
    })
}

fn read_part(path: &Path, num_nodes: usize) -> Result<OgbLinkPart, DataError> {
    if !path.is_file() {
        return Err(missing(path));
    }
    let shown = path.display().to_string();
    let reader = PytorchReader::new(path).map_err(|e| DataError::Array {
        file: shown.clone(),
        reason: format!("not a PyTorch file this reader reads: {e}"),
    })?;
    let mut tensors = BTreeMap::new();
    for (key, tensor) in reader.tensors() {
        let at = format!("{shown}:{key}");
        let bad = |reason: String| DataError::Array {
            file: at.clone(),
            reason,
        };
        let bytes = tensor
            .read()
            .map_err(|e| bad(format!("cannot read: {e}")))?;
        let values = decode(tensor.dtype(), &bytes);
        if NODE_KEYS.contains(&key.as_str()) {
            let FeatureValues::I64(ids) = &values else {
                return Err(bad(format!("node ids of type {:?}", tensor.dtype())));
            };
            if let Some(&id) = ids.iter().find(|&&v| v < 0 || v as usize >= num_nodes) {
                return Err(bad(format!(
                    "node {id} is not one of the graph's {num_nodes} nodes"
                )));
            }
        }
        tensors.insert(
            key.clone(),
            FeatureData {
                shape: tensor.shape().to_vec(),
                values,
            },
        );
    }
    Ok(OgbLinkPart { tensors })
}

/// Native-endian bytes of `dtype` as `i64` (integers, bool) or `f32`/`f64` (floats).
fn decode(dtype: DType, bytes: &[u8]) -> FeatureValues {
    fn chunks<const N: usize, T>(bytes: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
        bytes
            .chunks_exact(N)
            .map(|c| f(c.try_into().expect("N bytes")))
            .collect()
    }
    match dtype {
        DType::F64 => FeatureValues::F64(chunks(bytes, f64::from_ne_bytes)),
        DType::F32 => FeatureValues::F32(chunks(bytes, f32::from_ne_bytes)),
        DType::F16 => FeatureValues::F32(chunks(bytes, |b| half_to_f32(u16::from_ne_bytes(b)))),
        DType::BF16 => FeatureValues::F32(chunks(bytes, |b| {
            f32::from_bits((u16::from_ne_bytes(b) as u32) << 16)
        })),
        DType::I64 => FeatureValues::I64(chunks(bytes, i64::from_ne_bytes)),
        DType::I32 => FeatureValues::I64(chunks(bytes, |b| i32::from_ne_bytes(b) as i64)),
        DType::I16 => FeatureValues::I64(chunks(bytes, |b| i16::from_ne_bytes(b) as i64)),
        DType::I8 => FeatureValues::I64(chunks(bytes, |b: [u8; 1]| b[0] as i8 as i64)),
        DType::U64 => FeatureValues::I64(chunks(bytes, |b| u64::from_ne_bytes(b) as i64)),
        DType::U32 => FeatureValues::I64(chunks(bytes, |b| u32::from_ne_bytes(b) as i64)),
        DType::U16 => FeatureValues::I64(chunks(bytes, |b| u16::from_ne_bytes(b) as i64)),
        DType::U8 | DType::Bool => FeatureValues::I64(chunks(bytes, |b: [u8; 1]| b[0] as i64)),
    }
}

/// IEEE half precision to single.
fn half_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: normalise.
            let shift = f.leading_zeros() - 21;
            sign | ((127 - 15 + 1 - shift) << 23) | (((f << shift) & 0x3ff) << 13)
        }
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 127 - 15) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}
