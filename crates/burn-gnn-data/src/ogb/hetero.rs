//! OGB's heterogeneous node datasets (`ogbn-mag`) in their CSV.gz layout, read as `ogb` 1.3.6's
//! `read_csv_heterograph_raw`, `read_node_label_hetero` and `read_nodesplitidx_split_hetero`:
//!
//! ```text
//! raw/num-node-dict.csv.gz                       header: node types; one row of counts
//! raw/triplet-type-list.csv.gz                   rows: source type, relation, target type
//! raw/relations/<src>___<rel>___<dst>/edge.csv.gz, num-edge-list.csv.gz,
//!                                     edge-feat.csv.gz and additional files (edge_reltype)
//! raw/node-feat/<type>/node-feat.csv.gz and additional files (node_year)
//! raw/nodetype-has-label.csv.gz                  header: node types; one row of True/False
//! raw/node-label/<type>/node-label.csv.gz
//! split/<scheme>/nodetype-has-split.csv.gz, split/<scheme>/<type>/{train,valid,test}.csv.gz
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_graph::{
    EdgeSetData, EdgeType, FeatureData, FeatureSetData, HeteroGraph, HeteroGraphData, NodeSetData,
};

use crate::DataError;
use crate::io::{LABELS, Table};

use super::evaluate::Evaluator;
use super::info::{OgbInfo, OgbLevel};
use super::read::{
    OgbSplit, check_rows, doubled_rows, integers, label_feature, label_rows, locate, missing,
    read_optional, read_split, read_table, table_error,
};

/// An OGB heterogeneous node property prediction dataset (`ogbn-mag`) read from its raw CSV.gz
/// files: OGB's `NodePropPredDataset` for `is hetero`.
///
/// Each node type's `node-feat` is its node set's main feature and each additional file a named
/// one (`node_year`); each relation's `edge-feat` is its edge set's main feature and each
/// additional file a named one (`edge_reltype`). Labels are the node feature [`LABELS`] of the
/// labelled types, as for [`OgbNodeDataset`](super::OgbNodeDataset). The split has one
/// [`OgbSplit`] per labelled type.
///
/// Unlike OGB 1.3.6, whose reader slices a relation's `edge-feat` from row `E` instead of row 0
/// (`edge_feat_dict[triplet][num_edge:num_edge + num_edge]`, an empty slice for a one-graph
/// dataset), the rows read here are the relation's own. ogbn-mag has no `edge-feat`, so its
/// graph is the same.
#[derive(Clone, Debug)]
pub struct OgbHeteroNodeDataset {
    /// The dataset's description.
    pub info: OgbInfo,
    /// The dataset's folder.
    pub dir: PathBuf,
    /// The graph, with labels and additional files as named features.
    pub graph: HeteroGraphData,
    /// The default split, per labelled node type.
    pub split: BTreeMap<String, OgbSplit>,
}

impl OgbHeteroNodeDataset {
    /// Reads the OGB dataset `name` (`ogbn-mag`), found as [`OgbNodeDataset::open`] finds one.
    ///
    /// [`OgbNodeDataset::open`]: super::OgbNodeDataset::open
    ///
    /// # Errors
    /// As [`OgbNodeDataset::open`](super::OgbNodeDataset::open).
    pub fn open(name: &str, data_dir: Option<&Path>) -> Result<OgbHeteroNodeDataset, DataError> {
        let (info, dir) = locate(name, OgbLevel::Node, data_dir)?;
        OgbHeteroNodeDataset::open_dir(&dir, info)
    }

    /// Reads a heterogeneous dataset in OGB's layout from its folder, described by `info`.
    ///
    /// # Errors
    /// [`DataError::MissingFile`] for a required file that is absent; [`DataError::Table`] for
    /// a file that does not parse or fit (an edge to a node its type lacks, counts that do not
    /// add up, tables of the wrong length), naming the file and line;
    /// [`DataError::InvalidArgument`] for a binary (`.npz`) heterogeneous dataset or more than
    /// one graph (not read).
    pub fn open_dir(dir: &Path, info: OgbInfo) -> Result<OgbHeteroNodeDataset, DataError> {
        if info.binary {
            return Err(DataError::InvalidArgument(format!(
                "{}: the binary heterogeneous layout is not read yet",
                info.name
            )));
        }
        let raw = dir.join("raw");
        let (types, counts) = flag_or_count_table(&raw.join("num-node-dict.csv.gz"))?;
        if counts.len() != 1 {
            return Err(DataError::InvalidArgument(format!(
                "{}: {} graphs in num-node-dict.csv.gz; node datasets have one",
                info.name,
                counts.len()
            )));
        }
        let mut num_nodes = BTreeMap::new();
        for (t, c) in types.iter().zip(&counts[0]) {
            let n = c.parse::<usize>().map_err(|_| {
                table_error(
                    &raw.join("num-node-dict.csv.gz"),
                    2,
                    None,
                    format!("`{c}` is not a count"),
                )
            })?;
            num_nodes.insert(t.clone(), n);
        }
        let mut node_sets = BTreeMap::new();
        for (t, &n) in &num_nodes {
            let folder = raw.join("node-feat").join(t);
            let mut features = FeatureSetData {
                main: read_checked(&folder.join("node-feat.csv.gz"), n, "nodes")?,
                ..Default::default()
            };
            for name in &info.additional_node_files {
                if let Some(f) = read_checked(&folder.join(format!("{name}.csv.gz")), n, "nodes")? {
                    features.named.insert(name.clone(), f);
                }
            }
            node_sets.insert(
                t.clone(),
                NodeSetData {
                    n_node: vec![n as i64],
                    num_nodes: n,
                    features,
                },
            );
        }
        let mut edge_sets = Vec::new();
        for edge_type in triplets(&raw.join("triplet-type-list.csv.gz"))? {
            edge_sets.push(read_relation(&raw, &edge_type, &num_nodes, &info)?);
        }
        let (label_types, flags) = flag_or_count_table(&raw.join("nodetype-has-label.csv.gz"))?;
        for (t, flag) in label_types.iter().zip(flags.first().into_iter().flatten()) {
            if flag != "True" {
                continue;
            }
            let set = node_sets
                .get_mut(t)
                .ok_or_else(|| unknown_type(&raw, "nodetype-has-label.csv.gz", t))?;
            let path = raw.join("node-label").join(t).join("node-label.csv.gz");
            let labels = read_table(&path)?;
            check_rows(&path, &labels, set.num_nodes, "nodes")?;
            let labels = label_feature(labels, &info, set.num_nodes);
            set.features.named.insert(LABELS.to_string(), labels);
        }
        let graph = HeteroGraphData {
            node_sets,
            edge_sets,
            context: FeatureSetData::default(),
            n_graph: 1,
            padding: Vec::new(),
        };
        let split = read_hetero_split(dir, &info.split, &graph)?;
        Ok(OgbHeteroNodeDataset {
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
    pub fn read_split(&self, scheme: &str) -> Result<BTreeMap<String, OgbSplit>, DataError> {
        read_hetero_split(&self.dir, scheme, &self.graph)
    }

    /// The graph on `device`.
    ///
    /// # Errors
    /// As [`HeteroGraph::from_data`].
    pub fn graph(&self, device: &Device) -> Result<HeteroGraph, DataError> {
        Ok(HeteroGraph::from_data(&self.graph, device)?)
    }

    /// The labels of `nodes` of type `node_type`, `[nodes.len(), T]` with NaN for a missing
    /// label: the evaluator's `y_true`.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a type without labels or an id that is not a node.
    pub fn y_true(&self, node_type: &str, nodes: &[i64]) -> Result<Vec<f64>, DataError> {
        let set = self.graph.node_sets.get(node_type);
        let labels = set
            .and_then(|s| s.features.named.get(LABELS))
            .ok_or_else(|| {
                DataError::InvalidArgument(format!(
                    "{}: node type `{node_type}` has no labels",
                    self.info.name
                ))
            })?;
        let n = set.map_or(0, |s| s.num_nodes);
        label_rows(labels, nodes, |v| {
            DataError::InvalidArgument(format!(
                "{}: node {v} is not one of the {n} `{node_type}` nodes",
                self.info.name
            ))
        })
    }

    /// The dataset's evaluator.
    pub fn evaluator(&self) -> Evaluator {
        Evaluator::from_info(&self.info)
    }
}

fn unknown_type(raw: &Path, file: &str, t: &str) -> DataError {
    table_error(
        &raw.join(file),
        1,
        None,
        format!("node type `{t}` is not in num-node-dict.csv.gz"),
    )
}

/// A table with a header of node types and rows of text (counts, `True`/`False`).
fn flag_or_count_table(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>), DataError> {
    text_table(path, true)
}

fn text_table(path: &Path, header: bool) -> Result<(Vec<String>, Vec<Vec<String>>), DataError> {
    if !path.is_file() {
        return Err(missing(path));
    }
    let mut records = Table::csv(path).header(header).open()?;
    let names = match header {
        true => (0..records.width())
            .map(|i| records.column_name(i))
            .collect(),
        false => Vec::new(),
    };
    let mut rows = Vec::new();
    records.for_each(|_, record, _| {
        rows.push(
            record
                .iter()
                .map(|f| String::from_utf8_lossy(f).trim().to_string())
                .collect(),
        );
        Ok(())
    })?;
    Ok((names, rows))
}

/// The relations, sorted (OGB sorts them).
fn triplets(path: &Path) -> Result<Vec<EdgeType>, DataError> {
    let (_, rows) = text_table(path, false)?;
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        match row.as_slice() {
            [src, rel, dst] => out.push(EdgeType::new(src, rel, dst)),
            _ => {
                return Err(table_error(
                    path,
                    i as u64 + 1,
                    None,
                    format!("{} fields where a relation has 3", row.len()),
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// An optional table of `want` rows.
fn read_checked(path: &Path, want: usize, what: &str) -> Result<Option<FeatureData>, DataError> {
    let f = read_optional(path)?;
    if let Some(f) = &f {
        check_rows(path, f, want, what)?;
    }
    Ok(f)
}

fn read_relation(
    raw: &Path,
    edge_type: &EdgeType,
    num_nodes: &BTreeMap<String, usize>,
    info: &OgbInfo,
) -> Result<EdgeSetData, DataError> {
    let folder = raw.join("relations").join(format!(
        "{}___{}___{}",
        edge_type.src, edge_type.rel, edge_type.dst
    ));
    let count = |t: &str| {
        num_nodes
            .get(t)
            .copied()
            .ok_or_else(|| unknown_type(raw, "triplet-type-list.csv.gz", t))
    };
    let (n_src, n_dst) = (count(&edge_type.src)?, count(&edge_type.dst)?);
    let edge_file = folder.join("edge.csv.gz");
    let edges = integers(&edge_file, read_table(&edge_file)?, 2)?;
    let count_file = folder.join("num-edge-list.csv.gz");
    let counts = integers(&count_file, read_table(&count_file)?, 1)?;
    let e = edges.len() / 2;
    if counts.len() != 1 || counts[0] != e as i64 {
        return Err(table_error(
            &count_file,
            1,
            None,
            format!("edge counts {counts:?} for one graph of {e} edges"),
        ));
    }
    let (mut senders, mut receivers) = (Vec::with_capacity(e), Vec::with_capacity(e));
    for (i, pair) in edges.chunks_exact(2).enumerate() {
        for (column, id, n) in [(0, pair[0], n_src), (1, pair[1], n_dst)] {
            if id < 0 || id as usize >= n {
                let t = if column == 0 {
                    &edge_type.src
                } else {
                    &edge_type.dst
                };
                return Err(table_error(
                    &edge_file,
                    i as u64 + 1,
                    Some(column),
                    format!("node {id} is not one of the {n} `{t}` nodes"),
                ));
            }
        }
        senders.push(pair[0]);
        receivers.push(pair[1]);
        if info.add_inverse_edge {
            senders.push(pair[1]);
            receivers.push(pair[0]);
        }
    }
    let edge_rows = |f: FeatureData| match info.add_inverse_edge {
        true => doubled_rows(f),
        false => f,
    };
    let mut features = FeatureSetData {
        main: read_checked(&folder.join("edge-feat.csv.gz"), e, "edges")?.map(edge_rows),
        ..Default::default()
    };
    for name in &info.additional_edge_files {
        if let Some(f) = read_checked(&folder.join(format!("{name}.csv.gz")), e, "edges")? {
            features.named.insert(name.clone(), edge_rows(f));
        }
    }
    Ok(EdgeSetData {
        edge_type: edge_type.clone(),
        n_edge: vec![senders.len() as i64],
        senders,
        receivers,
        features,
    })
}

fn read_hetero_split(
    dir: &Path,
    scheme: &str,
    graph: &HeteroGraphData,
) -> Result<BTreeMap<String, OgbSplit>, DataError> {
    let folder = dir.join("split").join(scheme);
    let (types, flags) = flag_or_count_table(&folder.join("nodetype-has-split.csv.gz"))?;
    let mut out = BTreeMap::new();
    for (t, flag) in types.iter().zip(flags.first().into_iter().flatten()) {
        if flag != "True" {
            continue;
        }
        let set = graph.node_sets.get(t).ok_or_else(|| {
            table_error(
                &folder.join("nodetype-has-split.csv.gz"),
                1,
                None,
                format!("node type `{t}` is not in the graph"),
            )
        })?;
        let mut split = read_split(dir, &format!("{scheme}/{t}"), set.num_nodes)?;
        split.scheme = scheme.to_string();
        out.insert(t.clone(), split);
    }
    Ok(out)
}
