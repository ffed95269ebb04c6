//! [`TuDataset`]: the TU Dortmund graph-classification datasets, read from their text format.

use burn_gnn_graph::{FeatureData, FeatureSetData, FeatureValues, GraphData};

use crate::DataError;
use crate::tu_text::{Table, one_hot, read_table};

/// One graph of a [`TuDataset`], on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct TuGraph {
    /// Its class, `0..num_classes` (the raw value is [`TuDataset::class_values`]`[label]`).
    pub label: usize,
    /// Its nodes.
    pub num_nodes: usize,
    /// Sender of each distinct directed edge (local node ids), sorted by receiver then sender.
    pub senders: Vec<i64>,
    /// Receiver of each edge.
    pub receivers: Vec<i64>,
    /// One-hot node labels, row-major `[num_nodes, node_label_width]` (empty without labels).
    pub node_labels: Vec<f32>,
    /// Node attributes, `[num_nodes, node_attribute_width]`.
    pub node_attributes: Vec<f32>,
    /// Edge features, `[num_edges, edge_feature_width]`: the attributes, then the one-hot labels
    /// (PyG's `edge_attr`).
    pub edge_features: Vec<f32>,
    /// Graph attributes, `[graph_attribute_width]`.
    pub graph_attributes: Vec<f32>,
}

impl TuGraph {
    /// Its distinct directed edges.
    pub fn num_edges(&self) -> usize {
        self.senders.len()
    }
}

/// A TU Dortmund graph-classification dataset ([Morris et al., 2020](https://arxiv.org/abs/2007.08663)),
/// read as PyG's `TUDataset` reads it:
///
/// - `_graph_labels` are mapped to `0..C` in ascending order of the raw values (MUTAG's
///   `{-1, 1}` become `{0, 1}`);
/// - each column of `_node_labels` / `_edge_labels` is one-hot encoded over `min..=max` of its
///   values;
/// - duplicate lines of `_A` are one edge (IMDB-BINARY lists every edge twice); duplicates with
///   different edge labels or attributes are an error;
/// - any other file of the folder (`README.txt`, PROTEINS' `README.txt~`) is ignored.
///
/// Load one with [`TuDataset::open`], [`TuDataset::embedded`] (MUTAG) or
/// [`TuDataset::load`]; [`TuDataset::from_files`] parses any dataset of the collection.
#[derive(Clone, Debug, PartialEq)]
pub struct TuDataset {
    /// The name in its file names (`MUTAG`, `IMDB-BINARY`).
    pub name: String,
    /// The graphs, in file order.
    pub graphs: Vec<TuGraph>,
    /// The raw graph label of each class, ascending.
    pub class_values: Vec<i64>,
    /// Width of the one-hot node labels (0 without `_node_labels`).
    pub node_label_width: usize,
    /// Width of the node attributes (0 without `_node_attributes`).
    pub node_attribute_width: usize,
    /// Width of the edge features (attributes and one-hot labels; 0 without either).
    pub edge_feature_width: usize,
    /// Width of the graph attributes (0 without `_graph_attributes`).
    pub graph_attribute_width: usize,
}

/// Which node features [`TuDataset::graph_data`] builds, in PyG's column order: attributes,
/// one-hot labels, one-hot degree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TuFeatures {
    /// Put the node attributes before the one-hot labels (PyG's `use_node_attr=True`).
    pub node_attributes: bool,
    /// Append each node's out-degree one-hot over `0..=max` (PyG's `OneHotDegree(max)`), for
    /// datasets without node labels such as IMDB-BINARY.
    pub one_hot_degree: Option<usize>,
}

impl TuDataset {
    /// Parses a dataset of the TU collection named `name`, whose files `<name>_<suffix>.txt`
    /// are read through `file(suffix)` (`None`: the dataset has no such file). The suffixes
    /// asked for are `A`, `graph_indicator` and `graph_labels` (required) and `node_labels`,
    /// `node_attributes`, `edge_labels`, `edge_attributes`, `graph_attributes`.
    ///
    /// Nothing is checked against a checksum here; [`TuDataset::open`] does that.
    ///
    /// # Errors
    /// [`DataError::Parse`] naming the file and line for malformed text (a wrong column count,
    /// text that is not a number, a node id 0 or past the end, an edge across graphs, graph ids
    /// that are not `1, 2, 3, …` in order, too few or too many lines); the errors of `file`.
    pub fn from_files<'a>(
        name: &str,
        mut file: impl FnMut(&str) -> Result<Option<std::borrow::Cow<'a, [u8]>>, DataError>,
    ) -> Result<TuDataset, DataError> {
        let mut table = |suffix: &str, required: bool| -> Result<Option<Table>, DataError> {
            let file_name = format!("{name}_{suffix}.txt");
            match file(suffix)? {
                Some(bytes) => read_table(&file_name, &bytes).map(Some),
                None if required => Err(DataError::MissingFile {
                    path: file_name.into(),
                    hint: "every TU dataset has _A, _graph_indicator and _graph_labels".into(),
                }),
                None => Ok(None),
            }
        };
        let indicator = table("graph_indicator", true)?.expect("required");
        let labels = table("graph_labels", true)?.expect("required");
        let adjacency = table("A", true)?.expect("required");
        let node_labels = table("node_labels", false)?;
        let node_attributes = table("node_attributes", false)?;
        let edge_labels = table("edge_labels", false)?;
        let edge_attributes = table("edge_attributes", false)?;
        let graph_attributes = table("graph_attributes", false)?;

        let graph_of = graph_ids(&indicator)?;
        let num_nodes = graph_of.len();
        let num_graphs = graph_of.last().map_or(0, |g| g + 1);
        labels.expect_shape(num_graphs, Some(1), "one per graph of _graph_indicator")?;
        let mut class_values: Vec<i64> = labels.ints()?;
        let raw_labels = class_values.clone();
        class_values.sort_unstable();
        class_values.dedup();

        adjacency.expect_shape(adjacency.rows(), Some(2), "sender, receiver")?;
        let pairs = adjacency.ints()?;
        let num_raw_edges = adjacency.rows();
        let mut first = vec![usize::MAX; num_graphs];
        for (node, &g) in graph_of.iter().enumerate() {
            first[g] = first[g].min(node);
        }
        let mut edges: Vec<Vec<(i64, i64, usize)>> = vec![Vec::new(); num_graphs];
        for (k, pair) in pairs.chunks_exact(2).enumerate() {
            let [s, r] = [pair[0], pair[1]]
                .map(|v| (1..=num_nodes as i64).contains(&v).then(|| v as usize - 1));
            let (Some(s), Some(r)) = (s, r) else {
                return Err(adjacency.error(
                    k,
                    format!("node ids must be in 1..={num_nodes} (the lines of _graph_indicator)"),
                ));
            };
            let g = graph_of[s];
            if graph_of[r] != g {
                return Err(adjacency.error(
                    k,
                    format!(
                        "the edge joins graph {} and graph {}: edges stay in their graph",
                        g + 1,
                        graph_of[r] + 1
                    ),
                ));
            }
            edges[g].push(((r - first[g]) as i64, (s - first[g]) as i64, k));
        }

        let (node_label_width, node_one_hot) = match &node_labels {
            Some(t) => {
                t.expect_shape(num_nodes, None, "one per node")?;
                one_hot(t)?
            }
            None => (0, Vec::new()),
        };
        let node_attribute_width = match &node_attributes {
            Some(t) => t.expect_shape(num_nodes, None, "one per node")?,
            None => 0,
        };
        let node_attribute_values = node_attributes.as_ref().map(Table::floats).transpose()?;
        let mut edge_parts = Vec::new();
        if let Some(t) = &edge_attributes {
            let width = t.expect_shape(num_raw_edges, None, "one per line of _A")?;
            edge_parts.push((width, t.floats()?));
        }
        if let Some(t) = &edge_labels {
            t.expect_shape(num_raw_edges, None, "one per line of _A")?;
            edge_parts.push(one_hot(t)?);
        }
        let edge_feature_width: usize = edge_parts.iter().map(|(w, _)| w).sum();
        let edge_row = |k: usize| -> Vec<f32> {
            let mut row = Vec::with_capacity(edge_feature_width);
            for (w, values) in &edge_parts {
                row.extend_from_slice(&values[k * w..(k + 1) * w]);
            }
            row
        };
        let graph_attribute_width = match &graph_attributes {
            Some(t) => t.expect_shape(num_graphs, None, "one per graph")?,
            None => 0,
        };
        let graph_attribute_values = graph_attributes.as_ref().map(Table::floats).transpose()?;

        let mut graphs = Vec::with_capacity(num_graphs);
        for (g, mut list) in edges.into_iter().enumerate() {
            let start = first[g];
            let end = graph_of.partition_point(|&h| h <= g);
            list.sort_unstable();
            let (mut senders, mut receivers, mut edge_features) = (vec![], vec![], vec![]);
            let mut kept: Option<(i64, i64, usize)> = None;
            for (r, s, k) in list {
                if let Some((kr, ks, kk)) = kept
                    && (kr, ks) == (r, s)
                {
                    if edge_row(k) != edge_row(kk) {
                        return Err(adjacency.error(
                            k,
                            format!(
                                "repeats the edge of line {} with other edge labels or attributes",
                                adjacency.line_of(kk)
                            ),
                        ));
                    }
                    continue;
                }
                kept = Some((r, s, k));
                senders.push(s);
                receivers.push(r);
                edge_features.extend(edge_row(k));
            }
            let rows = |values: &[f32], width: usize| values[start * width..end * width].to_vec();
            graphs.push(TuGraph {
                label: class_values
                    .binary_search(&raw_labels[g])
                    .expect("a label of the list"),
                num_nodes: end - start,
                senders,
                receivers,
                node_labels: rows(&node_one_hot, node_label_width),
                node_attributes: node_attribute_values
                    .as_deref()
                    .map_or_else(Vec::new, |v| rows(v, node_attribute_width)),
                edge_features,
                graph_attributes: graph_attribute_values
                    .as_deref()
                    .map_or_else(Vec::new, |v| {
                        v[g * graph_attribute_width..(g + 1) * graph_attribute_width].to_vec()
                    }),
            });
        }
        Ok(TuDataset {
            name: name.to_string(),
            graphs,
            class_values,
            node_label_width,
            node_attribute_width,
            edge_feature_width,
            graph_attribute_width,
        })
    }

    /// The number of classes.
    pub fn num_classes(&self) -> usize {
        self.class_values.len()
    }

    /// The class of each graph.
    pub fn labels(&self) -> Vec<usize> {
        self.graphs.iter().map(|g| g.label).collect()
    }

    /// Nodes over all graphs.
    pub fn num_nodes(&self) -> usize {
        self.graphs.iter().map(|g| g.num_nodes).sum()
    }

    /// Distinct directed edges over all graphs.
    pub fn num_edges(&self) -> usize {
        self.graphs.iter().map(TuGraph::num_edges).sum()
    }

    /// The largest out-degree of any node (the `max` to give [`TuFeatures::one_hot_degree`]).
    pub fn max_degree(&self) -> usize {
        self.graphs.iter().flat_map(out_degrees).max().unwrap_or(0)
    }

    /// The width of the node features `features` builds.
    pub fn num_node_features(&self, features: TuFeatures) -> usize {
        let attributes = if features.node_attributes {
            self.node_attribute_width
        } else {
            0
        };
        attributes + self.node_label_width + features.one_hot_degree.map_or(0, |max| max + 1)
    }

    /// Graph `index` as [`GraphData`] (one graph; `GraphsTuple::from_graph_data` puts it on a
    /// device): node features as `features` says, the edge features and graph attributes when
    /// the dataset has them.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for an index past the end, features of width 0 (a dataset
    /// without node labels needs [`TuFeatures::one_hot_degree`]), or a node whose degree exceeds
    /// the `one_hot_degree` maximum.
    pub fn graph_data(&self, index: usize, features: TuFeatures) -> Result<GraphData, DataError> {
        let g = self.graphs.get(index).ok_or_else(|| {
            DataError::InvalidArgument(format!(
                "graph {index} of {} ({} graphs)",
                self.name,
                self.graphs.len()
            ))
        })?;
        let width = self.num_node_features(features);
        if width == 0 {
            return Err(DataError::InvalidArgument(format!(
                "{} has no node labels{}: ask for TuFeatures::one_hot_degree (its largest degree \
                 is {})",
                self.name,
                if self.node_attribute_width > 0 {
                    "; ask for its node attributes or"
                } else {
                    " or attributes"
                },
                self.max_degree()
            )));
        }
        let degrees = out_degrees(g);
        let mut x = Vec::with_capacity(g.num_nodes * width);
        for (node, &d) in degrees.iter().enumerate() {
            if features.node_attributes {
                let w = self.node_attribute_width;
                x.extend_from_slice(&g.node_attributes[node * w..(node + 1) * w]);
            }
            let w = self.node_label_width;
            x.extend_from_slice(&g.node_labels[node * w..(node + 1) * w]);
            if let Some(max) = features.one_hot_degree {
                if d > max {
                    return Err(DataError::InvalidArgument(format!(
                        "node {node} of graph {index} of {} has degree {d}, more than the \
                         one-hot maximum {max} (the dataset's largest is {})",
                        self.name,
                        self.max_degree()
                    )));
                }
                x.extend((0..=max).map(|k| if k == d { 1.0 } else { 0.0 }));
            }
        }
        let feature = |rows: usize, width: usize, values: &[f32]| {
            (width > 0).then(|| FeatureData {
                shape: vec![rows, width],
                values: FeatureValues::F32(values.to_vec()),
            })
        };
        let set = |main| FeatureSetData {
            main,
            ..Default::default()
        };
        Ok(GraphData {
            nodes: set(feature(g.num_nodes, width, &x)),
            edges: set(feature(
                g.num_edges(),
                self.edge_feature_width,
                &g.edge_features,
            )),
            globals: set(feature(1, self.graph_attribute_width, &g.graph_attributes)),
            senders: g.senders.clone(),
            receivers: g.receivers.clone(),
            n_node: vec![g.num_nodes as i64],
            n_edge: vec![g.num_edges() as i64],
            num_nodes: g.num_nodes,
            padding: Vec::new(),
        })
    }
}

/// The out-degree of each node of `g` (PyG's `OneHotDegree` counts `edge_index[0]`).
fn out_degrees(g: &TuGraph) -> Vec<usize> {
    let mut degrees = vec![0; g.num_nodes];
    for &s in &g.senders {
        degrees[s as usize] += 1;
    }
    degrees
}

/// The 0-based graph of each node from `_graph_indicator`, whose ids must run `1, 2, 3, …`.
fn graph_ids(indicator: &Table) -> Result<Vec<usize>, DataError> {
    indicator.expect_shape(indicator.rows(), Some(1), "one graph id per node")?;
    if indicator.rows() == 0 {
        return Err(indicator.error(0, "no nodes".into()));
    }
    let ids = indicator.ints()?;
    let mut out = Vec::with_capacity(ids.len());
    let mut previous = 0;
    for (row, &id) in ids.iter().enumerate() {
        if id != previous + 1 && (row == 0 || id != previous) {
            return Err(indicator.error(
                row,
                format!(
                    "graph id {id} after {previous}: the ids must be 1, 2, 3, ... in order, \
                     each graph's nodes together"
                ),
            ));
        }
        previous = id;
        out.push(id as usize - 1);
    }
    Ok(out)
}
