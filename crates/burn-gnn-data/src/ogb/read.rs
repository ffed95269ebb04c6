//! OGB's raw on-disk layouts for homogeneous node and graph datasets, read as `ogb` 1.3.6's
//! `read_csv_graph_raw` / `read_binary_graph_raw` and the datasets' `get_idx_split` read them.
//!
//! ```text
//! <data dir>/ogbn_arxiv/            (or the download's folder name, e.g. arxiv/)
//!   raw/edge.csv.gz                 [E, 2] node ids, local to each graph
//!   raw/num-node-list.csv.gz        [G, 1]
//!   raw/num-edge-list.csv.gz        [G, 1]
//!   raw/node-feat.csv.gz            [N, F] (optional)
//!   raw/edge-feat.csv.gz            [E, F] (optional)
//!   raw/<additional>.csv.gz         e.g. node_year [N, 1]
//!   raw/node-label.csv.gz           [N, T] (node datasets)
//!   raw/graph-label.csv.gz          [G, T] (graph datasets)
//!   raw/data.npz, node-label.npz / graph-label.npz   (binary datasets instead of the tables)
//!   split/<scheme>/{train,valid,test}.csv.gz        [n, 1] node or graph ids
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_graph::{FeatureData, FeatureSetData, FeatureValues, GraphData, GraphsTuple};

use crate::io::{LABELS, NpyArray, NpyDType, NpzArchive, Table};
use crate::{DATA_DIR_ENV, DataError};

use super::evaluate::Evaluator;
use super::info::{OgbInfo, OgbLevel};

/// The node or graph ids of one split scheme (`split/<scheme>/{train,valid,test}.csv.gz`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OgbSplit {
    /// The scheme's name, e.g. `time`.
    pub scheme: String,
    /// Training ids.
    pub train: Vec<i64>,
    /// Validation ids.
    pub valid: Vec<i64>,
    /// Test ids.
    pub test: Vec<i64>,
}

/// An OGB node property prediction dataset (`ogbn-*`, homogeneous) read from its raw files:
/// OGB's `NodePropPredDataset`.
///
/// The graph's main node feature is `node-feat` (`[N, F]`, `f32`, or `i64` when every entry is
/// an integer, as pandas types it), its main edge feature `edge-feat`, and each additional file
/// a named feature of its own name (`node_year`, `[N, 1]`). Labels are the node feature
/// [`LABELS`]: `[N]` `i64` for a single-task classification (`-1` where OGB has NaN), otherwise
/// `[N, T]` as read (`f32` with NaN for a missing label). With `add_inverse_edge` (products,
/// proteins), each edge is followed by its reverse, with the same features.
#[derive(Clone, Debug)]
pub struct OgbNodeDataset {
    /// The dataset's description.
    pub info: OgbInfo,
    /// The dataset's folder (holding `raw/` and `split/`).
    pub dir: PathBuf,
    /// The graph, with labels and additional files as named node/edge features.
    pub graph: GraphData,
    /// The default split ([`OgbInfo::split`]).
    pub split: OgbSplit,
}

/// An OGB graph property prediction dataset (`ogbg-*`) read from its raw files: OGB's
/// `GraphPropPredDataset`.
///
/// Each graph is a [`GraphData`] of its own (node ids from 0), with node and edge features as
/// for [`OgbNodeDataset`] and its label as the global feature [`LABELS`]: `[1]` `i64` for a
/// single-task classification, otherwise `[1, T]` as read (`f32`, NaN for a missing label).
/// `ogbg-code2`'s sub-token labels are not read.
#[derive(Clone, Debug)]
pub struct OgbGraphDataset {
    /// The dataset's description.
    pub info: OgbInfo,
    /// The dataset's folder.
    pub dir: PathBuf,
    /// The graphs.
    pub graphs: Vec<GraphData>,
    /// The labels, `[G, T]` row-major, NaN for a missing label (the evaluator's `y_true`).
    pub labels: Vec<f64>,
    /// The default split (graph ids).
    pub split: OgbSplit,
}

impl OgbNodeDataset {
    /// Reads the OGB dataset `name` (e.g. `ogbn-arxiv`) from `data_dir` (else the directory in
    /// [`DATA_DIR_ENV`]): from its folder there, named as OGB names it (`ogbn_arxiv`) or as its
    /// download unpacks (`arxiv`), or `data_dir` itself when it holds `raw/`.
    ///
    /// # Errors
    /// [`DataError::UnknownDataset`] for a name OGB does not list (or not `ogbn-*`);
    /// [`DataError::MissingFile`] when no folder holds the raw files; as
    /// [`open_dir`](Self::open_dir).
    pub fn open(name: &str, data_dir: Option<&Path>) -> Result<OgbNodeDataset, DataError> {
        let (info, dir) = locate(name, OgbLevel::Node, data_dir)?;
        OgbNodeDataset::open_dir(&dir, info)
    }

    /// Reads a dataset in OGB's layout from its folder, described by `info` (a dataset of the
    /// user's own, as OGB's `meta_dict`).
    ///
    /// # Errors
    /// [`DataError::MissingFile`] for a required file that is absent; [`DataError::Table`] /
    /// [`DataError::Array`] for a file that does not parse or does not fit the others (an edge
    /// to a node the graph does not have, counts that do not add up, a label table of another
    /// length), naming the file and line; [`DataError::InvalidArgument`] for a heterogeneous
    /// dataset ([`OgbHeteroNodeDataset`](super::OgbHeteroNodeDataset) reads those).
    pub fn open_dir(dir: &Path, info: OgbInfo) -> Result<OgbNodeDataset, DataError> {
        if info.hetero {
            return Err(DataError::InvalidArgument(format!(
                "{}: a heterogeneous dataset; read it with OgbHeteroNodeDataset",
                info.name
            )));
        }
        let raw_dir = dir.join("raw");
        let raw = RawGraphs::read(&raw_dir, &info)?;
        let n = raw.total_nodes();
        let labels = match info.binary {
            true => npz_matrix(&raw_dir.join("node-label.npz"), "node_label")?,
            false => read_table(&raw_dir.join("node-label.csv.gz"))?,
        };
        let label_file = raw_dir.join(if info.binary {
            "node-label.npz"
        } else {
            "node-label.csv.gz"
        });
        check_rows(&label_file, &labels, n, "nodes")?;
        let mut graph = raw.graph(0..raw.num_nodes.len(), info.add_inverse_edge);
        graph
            .nodes
            .named
            .insert(LABELS.to_string(), label_feature(labels, &info, n));
        let split = read_split(dir, &info.split, n)?;
        Ok(OgbNodeDataset {
            info,
            dir: dir.to_path_buf(),
            graph,
            split,
        })
    }

    /// Reads another split scheme of the dataset (`split/<scheme>/`).
    ///
    /// # Errors
    /// As [`open_dir`](Self::open_dir) for the split's files; an id that is not a node.
    pub fn read_split(&self, scheme: &str) -> Result<OgbSplit, DataError> {
        read_split(&self.dir, scheme, self.graph.num_nodes)
    }

    /// The graph on `device`.
    ///
    /// # Errors
    /// As [`GraphsTuple::from_graph_data`].
    pub fn graph(&self, device: &Device) -> Result<GraphsTuple, DataError> {
        Ok(GraphsTuple::from_graph_data(&self.graph, device)?)
    }

    /// The number of classes of a classification task.
    pub fn num_classes(&self) -> Option<usize> {
        self.info.num_classes
    }

    /// The labels of `nodes`, `[nodes.len(), T]` row-major with NaN for a missing label: the
    /// evaluator's `y_true` for those nodes.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for an id that is not a node.
    pub fn y_true(&self, nodes: &[i64]) -> Result<Vec<f64>, DataError> {
        let n = self.graph.num_nodes;
        label_rows(&self.graph.nodes.named[LABELS], nodes, |v| {
            DataError::InvalidArgument(format!(
                "{}: node {v} is not one of the {n} nodes",
                self.info.name
            ))
        })
    }

    /// The dataset's evaluator.
    pub fn evaluator(&self) -> Evaluator {
        Evaluator::from_info(&self.info)
    }
}

impl OgbGraphDataset {
    /// Reads the OGB dataset `name` (e.g. `ogbg-molhiv`), found as for
    /// [`OgbNodeDataset::open`].
    ///
    /// # Errors
    /// As [`OgbNodeDataset::open`].
    pub fn open(name: &str, data_dir: Option<&Path>) -> Result<OgbGraphDataset, DataError> {
        let (info, dir) = locate(name, OgbLevel::Graph, data_dir)?;
        OgbGraphDataset::open_dir(&dir, info)
    }

    /// Reads a dataset in OGB's layout from its folder, described by `info`.
    ///
    /// # Errors
    /// As [`OgbNodeDataset::open_dir`].
    pub fn open_dir(dir: &Path, info: OgbInfo) -> Result<OgbGraphDataset, DataError> {
        let raw_dir = dir.join("raw");
        let raw = RawGraphs::read(&raw_dir, &info)?;
        let g = raw.num_nodes.len();
        let (label_file, labels) = match info.binary {
            true => {
                let file = raw_dir.join("graph-label.npz");
                let labels = npz_matrix(&file, "graph_label")?;
                (file, labels)
            }
            false => {
                let file = raw_dir.join("graph-label.csv.gz");
                let labels = match info.metric {
                    // Sub-token sequences, not numbers: the graphs only.
                    super::OgbMetric::F1 => None,
                    _ => Some(read_table(&file)?),
                };
                (
                    file,
                    labels.unwrap_or(FeatureData {
                        shape: vec![g, 0],
                        values: FeatureValues::F32(Vec::new()),
                    }),
                )
            }
        };
        check_rows(&label_file, &labels, g, "graphs")?;
        let width = labels.shape.get(1).copied().unwrap_or(1);
        let label_values = values_f64(&labels);
        // One label row per graph: `[1]` classes (-1 where OGB has NaN) or `[1, T]` floats.
        let per_graph = match width == 1 && is_single_class(&info) {
            true => label_feature(labels, &info, g),
            false => FeatureData {
                shape: vec![g, width],
                values: FeatureValues::F32(label_values.iter().map(|&v| v as f32).collect()),
            },
        };
        let mut graphs = Vec::with_capacity(g);
        for i in 0..g {
            let mut graph = raw.graph(i..i + 1, info.add_inverse_edge);
            if width > 0 {
                let label = slice_rows(&per_graph, i..i + 1);
                graph.globals.named.insert(LABELS.to_string(), label);
            }
            graphs.push(graph);
        }
        let split = read_split(dir, &info.split, g)?;
        Ok(OgbGraphDataset {
            info,
            dir: dir.to_path_buf(),
            graphs,
            labels: label_values,
            split,
        })
    }

    /// Reads another split scheme of the dataset.
    ///
    /// # Errors
    /// As [`OgbNodeDataset::read_split`].
    pub fn read_split(&self, scheme: &str) -> Result<OgbSplit, DataError> {
        read_split(&self.dir, scheme, self.graphs.len())
    }

    /// The labels of `graphs`, `[graphs.len(), T]` row-major: the evaluator's `y_true`.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for an id that is not a graph.
    pub fn y_true(&self, graphs: &[i64]) -> Result<Vec<f64>, DataError> {
        let g = self.graphs.len();
        let width = self.labels.len() / g.max(1);
        select_rows(
            g,
            width,
            graphs,
            |i| self.labels[i],
            |i| {
                DataError::InvalidArgument(format!(
                    "{}: graph {i} is not one of the {g} graphs",
                    self.info.name
                ))
            },
        )
    }

    /// The dataset's evaluator.
    pub fn evaluator(&self) -> Evaluator {
        Evaluator::from_info(&self.info)
    }
}

/// The dataset `name`'s description, checked to be of `level`, and its folder under `data_dir`.
pub(super) fn locate(
    name: &str,
    level: OgbLevel,
    data_dir: Option<&Path>,
) -> Result<(OgbInfo, PathBuf), DataError> {
    let info = OgbInfo::get(name)?;
    expect_level(&info, level)?;
    let dir = dataset_dir(&info, data_dir)?;
    Ok((info, dir))
}

fn expect_level(info: &OgbInfo, level: OgbLevel) -> Result<(), DataError> {
    if info.level == level {
        return Ok(());
    }
    Err(DataError::InvalidArgument(format!(
        "{} is a {:?}-level dataset, not {level:?}-level",
        info.name, info.level
    )))
}

fn is_single_class(info: &OgbInfo) -> bool {
    info.num_tasks == 1 && info.task_type == "multiclass classification"
}

/// The dataset's folder under `data_dir` (else [`DATA_DIR_ENV`]).
fn dataset_dir(info: &OgbInfo, data_dir: Option<&Path>) -> Result<PathBuf, DataError> {
    let root = data_dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(DATA_DIR_ENV).map(PathBuf::from));
    let Some(root) = root else {
        return Err(DataError::MissingFile {
            path: PathBuf::from(info.dir_name()),
            hint: format!(
                "no data directory: pass one (--data-dir in the examples) or set {DATA_DIR_ENV}; \
                 OGB's zip for {} is {}",
                info.name, info.url
            ),
        });
    };
    let candidates = [
        root.join(info.dir_name()),
        root.join(&info.download_name),
        root.clone(),
    ];
    candidates
        .iter()
        .find(|d| d.join("raw").is_dir())
        .cloned()
        .ok_or_else(|| DataError::MissingFile {
            path: root.join(info.dir_name()).join("raw"),
            hint: format!(
                "no raw/ folder in {}, {} or {}; unpack OGB's {} there",
                candidates[0].display(),
                candidates[1].display(),
                candidates[2].display(),
                info.url
            ),
        })
}

pub(super) fn missing(path: &Path) -> DataError {
    DataError::MissingFile {
        path: path.to_path_buf(),
        hint: "OGB's raw layout has this file; is the dataset unpacked completely?".into(),
    }
}

pub(super) fn read_table(path: &Path) -> Result<FeatureData, DataError> {
    read_optional(path)?.ok_or_else(|| missing(path))
}

pub(super) fn read_optional(path: &Path) -> Result<Option<FeatureData>, DataError> {
    match path.is_file() {
        true => Table::csv(path).header(false).read_matrix().map(Some),
        false => Ok(None),
    }
}

pub(super) fn table_error(
    path: &Path,
    line: u64,
    column: Option<usize>,
    reason: String,
) -> DataError {
    DataError::Table {
        file: path.display().to_string(),
        line,
        column: column.map(|c| format!("#{c}")),
        reason,
    }
}

pub(super) fn rows(f: &FeatureData) -> usize {
    f.shape.first().copied().unwrap_or(0)
}

pub(super) fn check_rows(
    path: &Path,
    f: &FeatureData,
    want: usize,
    what: &str,
) -> Result<(), DataError> {
    if rows(f) == want {
        return Ok(());
    }
    Err(table_error(
        path,
        rows(f).min(want) as u64 + 1,
        None,
        format!("{} rows where the graph has {want} {what}", rows(f)),
    ))
}

/// A table's integer values, or an error naming the file.
pub(super) fn integers(path: &Path, f: FeatureData, width: usize) -> Result<Vec<i64>, DataError> {
    if rows(&f) > 0 && f.shape.get(1) != Some(&width) {
        return Err(table_error(
            path,
            1,
            None,
            format!(
                "{} columns where {width} are expected",
                f.shape.get(1).unwrap_or(&0)
            ),
        ));
    }
    match f.values {
        FeatureValues::I64(v) => Ok(v),
        other => {
            // The first value that made the table floats.
            let at = values_f64(&FeatureData {
                shape: f.shape,
                values: other,
            })
            .iter()
            .position(|v| v.fract() != 0.0 || !v.is_finite())
            .unwrap_or(0);
            Err(table_error(
                path,
                (at / width) as u64 + 1,
                Some(at % width),
                "expected integers only (node ids, counts)".into(),
            ))
        }
    }
}

/// Rows `ids` of an `[n, width]` row-major table whose entry `i` is `value(i)`: an evaluator's
/// `y_true`; an id outside `0..n` is `outside(id)`.
fn select_rows(
    n: usize,
    width: usize,
    ids: &[i64],
    value: impl Fn(usize) -> f64,
    outside: impl Fn(i64) -> DataError,
) -> Result<Vec<f64>, DataError> {
    let mut out = Vec::with_capacity(ids.len() * width);
    for &id in ids {
        let row = usize::try_from(id)
            .ok()
            .filter(|&r| r < n)
            .ok_or_else(|| outside(id))?;
        out.extend((row * width..(row + 1) * width).map(&value));
    }
    Ok(out)
}

/// Rows `ids` of a label feature as [`label_feature`] stores it (`[n]` single-task classes
/// with -1 where OGB has NaN, or `[n, T]`), NaN for a missing label; read in place, not
/// converted whole (papers100M has 1e8 labels).
pub(super) fn label_rows(
    labels: &FeatureData,
    ids: &[i64],
    outside: impl Fn(i64) -> DataError,
) -> Result<Vec<f64>, DataError> {
    let width = labels.shape.get(1).copied().unwrap_or(1);
    let value = |i: usize| match &labels.values {
        // -1 marks a missing single-task label.
        FeatureValues::I64(y) if width == 1 && y[i] < 0 => f64::NAN,
        FeatureValues::I64(y) => y[i] as f64,
        FeatureValues::F32(y) => y[i] as f64,
        FeatureValues::F64(y) => y[i],
        FeatureValues::I32(y) => y[i] as f64,
    };
    select_rows(rows(labels), width, ids, value, outside)
}

pub(super) fn values_f64(f: &FeatureData) -> Vec<f64> {
    match &f.values {
        FeatureValues::F32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::F64(v) => v.clone(),
        FeatureValues::I32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::I64(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// Node labels as [`OgbNodeDataset`] documents them.
pub(super) fn label_feature(labels: FeatureData, info: &OgbInfo, n: usize) -> FeatureData {
    let width = labels.shape.get(1).copied().unwrap_or(1);
    if width == 1 && is_single_class(info) {
        let values = values_f64(&labels)
            .into_iter()
            .map(|v| if v.is_nan() { -1 } else { v as i64 })
            .collect();
        return FeatureData {
            shape: vec![n],
            values: FeatureValues::I64(values),
        };
    }
    labels
}

/// An array of an `.npz` as a matrix (`[rows, columns]`; a vector becomes one column).
fn npz_matrix(path: &Path, name: &str) -> Result<FeatureData, DataError> {
    if !path.is_file() {
        return Err(missing(path));
    }
    let mut archive = NpzArchive::open(path)?;
    let array = archive.array(name)?.ok_or_else(|| DataError::Array {
        file: path.display().to_string(),
        reason: format!("no array `{name}`"),
    })?;
    array_feature(&array)
}

fn array_feature(array: &NpyArray) -> Result<FeatureData, DataError> {
    let mut shape = array.shape().to_vec();
    if shape.len() == 1 {
        shape.push(1);
    }
    let values = match array.dtype() {
        NpyDType::F32 | NpyDType::F64 => FeatureValues::F32(array.to_f32()?.into_owned()),
        _ => FeatureValues::I64(array.to_i64()?.into_owned()),
    };
    Ok(FeatureData { shape, values })
}

/// The rows `range` of a row-major feature.
fn slice_rows(f: &FeatureData, range: std::ops::Range<usize>) -> FeatureData {
    let width: usize = f.shape[1..].iter().product();
    let (a, b) = (range.start * width, range.end * width);
    let mut shape = f.shape.clone();
    shape[0] = range.len();
    let values = match &f.values {
        FeatureValues::F32(v) => FeatureValues::F32(v[a..b].to_vec()),
        FeatureValues::F64(v) => FeatureValues::F64(v[a..b].to_vec()),
        FeatureValues::I32(v) => FeatureValues::I32(v[a..b].to_vec()),
        FeatureValues::I64(v) => FeatureValues::I64(v[a..b].to_vec()),
    };
    FeatureData { shape, values }
}

/// Every row twice in a row (the features of an edge and of its added reverse).
pub(super) fn doubled_rows(f: FeatureData) -> FeatureData {
    fn double<T: Clone>(v: &[T], width: usize) -> Vec<T> {
        v.chunks(width.max(1))
            .flat_map(|row| row.iter().chain(row).cloned())
            .collect()
    }
    let width: usize = f.shape[1..].iter().product();
    let mut shape = f.shape.clone();
    shape[0] *= 2;
    let values = match &f.values {
        FeatureValues::F32(v) => FeatureValues::F32(double(v, width)),
        FeatureValues::F64(v) => FeatureValues::F64(double(v, width)),
        FeatureValues::I32(v) => FeatureValues::I32(double(v, width)),
        FeatureValues::I64(v) => FeatureValues::I64(double(v, width)),
    };
    FeatureData { shape, values }
}

/// The raw graphs of a dataset, checked: ids local to each graph, features of all graphs.
pub(super) struct RawGraphs {
    senders: Vec<i64>,
    receivers: Vec<i64>,
    pub(super) num_nodes: Vec<usize>,
    num_edges: Vec<usize>,
    node_offsets: Vec<usize>,
    edge_offsets: Vec<usize>,
    node_features: BTreeMap<String, FeatureData>,
    edge_features: BTreeMap<String, FeatureData>,
}

/// The key of the main node and edge feature among the named ones while reading.
const MAIN_NODE: &str = "node_feat";
const MAIN_EDGE: &str = "edge_feat";

impl RawGraphs {
    pub(super) fn read(raw_dir: &Path, info: &OgbInfo) -> Result<RawGraphs, DataError> {
        match info.binary {
            true => RawGraphs::read_npz(raw_dir),
            false => RawGraphs::read_csv(raw_dir, info),
        }
    }

    fn read_csv(raw_dir: &Path, info: &OgbInfo) -> Result<RawGraphs, DataError> {
        let edge_file = raw_dir.join("edge.csv.gz");
        let edges = integers(&edge_file, read_table(&edge_file)?, 2)?;
        let (senders, receivers) = edges.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
        let counts = |name: &str| -> Result<Vec<usize>, DataError> {
            let path = raw_dir.join(name);
            let v = integers(&path, read_table(&path)?, 1)?;
            v.iter()
                .enumerate()
                .map(|(i, &c)| {
                    usize::try_from(c).map_err(|_| {
                        table_error(&path, i as u64 + 1, Some(0), format!("a count of {c}"))
                    })
                })
                .collect()
        };
        let num_nodes = counts("num-node-list.csv.gz")?;
        let num_edges = counts("num-edge-list.csv.gz")?;
        // Each feature with the file it came from, for the length checks' errors.
        let mut paths = BTreeMap::new();
        let (mut node_features, mut edge_features) = (BTreeMap::new(), BTreeMap::new());
        for (key, file) in [(MAIN_NODE, "node-feat"), (MAIN_EDGE, "edge-feat")] {
            let path = raw_dir.join(format!("{file}.csv.gz"));
            if let Some(f) = read_optional(&path)? {
                let set = if key == MAIN_NODE {
                    &mut node_features
                } else {
                    &mut edge_features
                };
                set.insert(key.to_string(), f);
                paths.insert(key.to_string(), path);
            }
        }
        let extra = (info.additional_node_files.iter().map(|n| (n, true)))
            .chain(info.additional_edge_files.iter().map(|n| (n, false)));
        for (name, is_node) in extra {
            let mut path = raw_dir.join(format!("{name}.csv.gz"));
            // OGB's own exception: ogbn-proteins ships node_species as species.csv.gz.
            if name == "node_species" && !path.is_file() {
                path = raw_dir.join("species.csv.gz");
            }
            let set = if is_node {
                &mut node_features
            } else {
                &mut edge_features
            };
            set.insert(name.clone(), read_table(&path)?);
            paths.insert(name.clone(), path);
        }
        let raw = RawGraphs::new(
            senders,
            receivers,
            num_nodes,
            num_edges,
            node_features,
            edge_features,
        );
        raw.check(&edge_file, &raw_dir.join("num-edge-list.csv.gz"), |key| {
            paths[key].clone()
        })?;
        Ok(raw)
    }

    fn read_npz(raw_dir: &Path) -> Result<RawGraphs, DataError> {
        let path = raw_dir.join("data.npz");
        if !path.is_file() {
            return Err(missing(&path));
        }
        let mut archive = NpzArchive::open(&path)?;
        let name = |n: &str| format!("{}:{n}", path.display());
        let mut required = |n: &str| -> Result<NpyArray, DataError> {
            archive.array(n)?.ok_or_else(|| DataError::Array {
                file: path.display().to_string(),
                reason: format!("no array `{n}`"),
            })
        };
        let edge_index = required("edge_index")?;
        if edge_index.shape().len() != 2 || edge_index.shape()[0] != 2 {
            return Err(DataError::Array {
                file: name("edge_index"),
                reason: format!("shape {:?}, expected [2, E]", edge_index.shape()),
            });
        }
        let ids = edge_index.to_i64()?;
        let e = edge_index.shape()[1];
        let (senders, receivers) = (ids[..e].to_vec(), ids[e..].to_vec());
        let counts = |array: NpyArray, n: &str| -> Result<Vec<usize>, DataError> {
            array
                .to_i64()?
                .iter()
                .map(|&c| {
                    usize::try_from(c).map_err(|_| DataError::Array {
                        file: name(n),
                        reason: format!("a count of {c}"),
                    })
                })
                .collect()
        };
        let num_nodes = counts(required("num_nodes_list")?, "num_nodes_list")?;
        let num_edges = counts(required("num_edges_list")?, "num_edges_list")?;
        let (mut node_features, mut edge_features) = (BTreeMap::new(), BTreeMap::new());
        for key in archive.names() {
            if matches!(
                key.as_str(),
                "edge_index" | "num_nodes_list" | "num_edges_list"
            ) {
                continue;
            }
            let array = archive.array(&key)?.expect("listed");
            let feature = array_feature(&array)?;
            if key.starts_with("node_") {
                node_features.insert(key, feature);
            } else if key.starts_with("edge_") {
                edge_features.insert(key, feature);
            } else {
                return Err(DataError::Array {
                    file: name(&key),
                    reason: "keys start with `node_` or `edge_` (OGB's rule)".into(),
                });
            }
        }
        let raw = RawGraphs::new(
            senders,
            receivers,
            num_nodes,
            num_edges,
            node_features,
            edge_features,
        );
        raw.check(&path, &path, |key| PathBuf::from(name(key)))?;
        Ok(raw)
    }

    fn new(
        senders: Vec<i64>,
        receivers: Vec<i64>,
        num_nodes: Vec<usize>,
        num_edges: Vec<usize>,
        node_features: BTreeMap<String, FeatureData>,
        edge_features: BTreeMap<String, FeatureData>,
    ) -> RawGraphs {
        let offsets = |c: &[usize]| {
            let mut o = vec![0usize];
            for &x in c {
                o.push(o.last().unwrap().saturating_add(x));
            }
            o
        };
        RawGraphs {
            node_offsets: offsets(&num_nodes),
            edge_offsets: offsets(&num_edges),
            senders,
            receivers,
            num_nodes,
            num_edges,
            node_features,
            edge_features,
        }
    }

    fn total_nodes(&self) -> usize {
        *self.node_offsets.last().unwrap()
    }

    /// Counts that add up, every id a node of its own graph, feature tables of the right length.
    fn check(
        &self,
        edge_file: &Path,
        count_file: &Path,
        file_of: impl Fn(&str) -> PathBuf,
    ) -> Result<(), DataError> {
        if self.num_nodes.len() != self.num_edges.len() {
            return Err(table_error(
                count_file,
                1,
                None,
                format!(
                    "{} graphs by their edge counts, {} by their node counts",
                    self.num_edges.len(),
                    self.num_nodes.len()
                ),
            ));
        }
        let edges = *self.edge_offsets.last().unwrap();
        if edges != self.senders.len() {
            return Err(table_error(
                count_file,
                1,
                None,
                format!(
                    "the edge counts add up to {edges}, the edge table has {} edges",
                    self.senders.len()
                ),
            ));
        }
        for g in 0..self.num_nodes.len() {
            let n = self.num_nodes[g] as i64;
            for e in self.edge_offsets[g]..self.edge_offsets[g + 1] {
                for (column, id) in [(0, self.senders[e]), (1, self.receivers[e])] {
                    if id < 0 || id >= n {
                        return Err(table_error(
                            edge_file,
                            e as u64 + 1,
                            Some(column),
                            format!(
                                "node {id} is not one of graph {g}'s {n} nodes (ids are local to each graph)"
                            ),
                        ));
                    }
                }
            }
        }
        let total = self.total_nodes();
        for (key, f) in &self.node_features {
            check_rows(&file_of(key), f, total, "nodes")?;
        }
        for (key, f) in &self.edge_features {
            check_rows(&file_of(key), f, edges, "edges")?;
        }
        Ok(())
    }

    /// The graphs `range` as one graph of their own (node ids made global to it).
    pub(super) fn graph(&self, range: std::ops::Range<usize>, add_inverse_edge: bool) -> GraphData {
        let (n0, n1) = (self.node_offsets[range.start], self.node_offsets[range.end]);
        let (e0, e1) = (self.edge_offsets[range.start], self.edge_offsets[range.end]);
        let factor = if add_inverse_edge { 2 } else { 1 };
        let (mut senders, mut receivers) = (Vec::with_capacity((e1 - e0) * factor), Vec::new());
        receivers.reserve((e1 - e0) * factor);
        for g in range.clone() {
            let base = (self.node_offsets[g] - n0) as i64;
            for e in self.edge_offsets[g]..self.edge_offsets[g + 1] {
                let (s, r) = (self.senders[e] + base, self.receivers[e] + base);
                senders.push(s);
                receivers.push(r);
                if add_inverse_edge {
                    senders.push(r);
                    receivers.push(s);
                }
            }
        }
        let features =
            |map: &BTreeMap<String, FeatureData>, main: &str, a: usize, b: usize, edges: bool| {
                let mut set = FeatureSetData::default();
                for (key, f) in map {
                    let mut part = slice_rows(f, a..b);
                    if edges && add_inverse_edge {
                        part = doubled_rows(part);
                    }
                    match key == main {
                        true => set.main = Some(part),
                        false => {
                            set.named.insert(key.clone(), part);
                        }
                    }
                }
                set
            };
        GraphData {
            nodes: features(&self.node_features, MAIN_NODE, n0, n1, false),
            edges: features(&self.edge_features, MAIN_EDGE, e0, e1, true),
            globals: FeatureSetData::default(),
            senders,
            receivers,
            n_node: range.clone().map(|g| self.num_nodes[g] as i64).collect(),
            n_edge: range.map(|g| (self.num_edges[g] * factor) as i64).collect(),
            num_nodes: n1 - n0,
            padding: Vec::new(),
        }
    }
}

/// `split/<scheme>/{train,valid,test}.csv.gz`, each id below `count`.
pub(super) fn read_split(dir: &Path, scheme: &str, count: usize) -> Result<OgbSplit, DataError> {
    let folder = dir.join("split").join(scheme);
    let part = |name: &str| -> Result<Vec<i64>, DataError> {
        let path = folder.join(format!("{name}.csv.gz"));
        let ids = integers(&path, read_table(&path)?, 1)?;
        if let Some((line, &id)) = ids
            .iter()
            .enumerate()
            .find(|&(_, &id)| id < 0 || id as usize >= count)
        {
            return Err(table_error(
                &path,
                line as u64 + 1,
                Some(0),
                format!("id {id} is out of range (there are {count})"),
            ));
        }
        Ok(ids)
    };
    Ok(OgbSplit {
        scheme: scheme.to_string(),
        train: part("train")?,
        valid: part("valid")?,
        test: part("test")?,
    })
}
