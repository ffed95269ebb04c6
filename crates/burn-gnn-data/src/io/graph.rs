//! [`EdgeTable`] and [`NodeTable`]: a graph from an edge list and an optional node table, read
//! into a [`TableGraph`] (the graph on the host and its [`NodeIndex`]).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use burn::tensor::Device;
use burn_gnn_graph::{FeatureData, FeatureSetData, FeatureValues, GraphData, GraphsTuple};
use csv::ByteRecord;

use super::node_index::NodeIndex;
use super::table::{Column, Features, IdKind, Records, Table, parse_f32, parse_i64, shown};
use crate::DataError;

/// The name of the node feature holding the labels (PyG's `y`).
pub const LABELS: &str = "y";
/// The name of the edge feature holding the edge weights (`[E]`).
pub const EDGE_WEIGHT: &str = "weight";

/// What a label column holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LabelKind {
    /// Class numbers `0, 1, …`; an empty field or `-1` marks an unlabelled node.
    #[default]
    Integer,
    /// Class names, numbered in ascending byte order ([`TableGraph::classes`] gives the names
    /// back); an empty field marks an unlabelled node.
    Text,
}

/// A node table: one line per node with its id, and optionally its features and label.
///
/// Defaults: the id in the first column, no features, no label.
#[derive(Clone, Debug)]
pub struct NodeTable {
    table: Table,
    id: Column,
    features: Features,
    label: Option<(Column, LabelKind)>,
}

impl NodeTable {
    /// The node table in `table`.
    pub fn new(table: Table) -> NodeTable {
        NodeTable {
            table,
            id: Column::Position(0),
            features: Features::None,
            label: None,
        }
    }

    /// A comma-separated file with a header.
    pub fn csv(path: impl AsRef<Path>) -> NodeTable {
        NodeTable::new(Table::csv(path))
    }

    /// A tab-separated file with a header.
    pub fn tsv(path: impl AsRef<Path>) -> NodeTable {
        NodeTable::new(Table::tsv(path))
    }

    /// Changes how the table is written (delimiter, header, comments).
    pub fn format(mut self, f: impl FnOnce(Table) -> Table) -> NodeTable {
        self.table = f(self.table);
        self
    }

    /// The id column.
    pub fn id(mut self, column: impl Into<Column>) -> NodeTable {
        self.id = column.into();
        self
    }

    /// The feature columns: the graph's node features `[N, F]` (`f32`).
    pub fn features(mut self, features: Features) -> NodeTable {
        self.features = features;
        self
    }

    /// The label column: the node feature [`LABELS`] (`[N]`, `i64`, `-1` where unlabelled).
    pub fn label(mut self, column: impl Into<Column>, kind: LabelKind) -> NodeTable {
        self.label = Some((column.into(), kind));
        self
    }
}

/// An edge list: one line per edge `source -> target`, and optionally its weight and features.
/// With a [`NodeTable`] (see [`EdgeTable::nodes`]) every endpoint must be one of its ids;
/// without one, the nodes are the ids the edges name.
///
/// Defaults: source in the first column, target in the second, integer ids
/// ([`IdKind::Integer`]), no weight, no features. Edges are kept as written: direction,
/// self loops and repeats included.
///
/// ```
/// use burn_gnn_data::io::{EdgeTable, IdKind, NodeTable, Features, LabelKind, Table};
///
/// let edges = Table::from_bytes("edges.csv", "src,dst,w\nalice,bob,0.5\nbob,carol,2\n");
/// let nodes = Table::from_bytes("nodes.csv", "name,age,height,team\ncarol,41,1.7,b\nbob,29,1.8,a\nalice,35,1.6,a\n");
/// let graph = EdgeTable::new(edges)
///     .source("src")
///     .target("dst")
///     .weight("w")
///     .ids(IdKind::Text)
///     .nodes(
///         NodeTable::new(nodes)
///             .id("name")
///             .features(Features::columns(["age", "height"]))
///             .label("team", LabelKind::Text),
///     )
///     .read()?;
/// // Rows follow the node table: carol 0, bob 1, alice 2.
/// assert_eq!(graph.data.senders, [2, 1]);
/// assert_eq!(graph.data.receivers, [1, 0]);
/// assert_eq!(graph.index.row("alice"), Some(2));
/// assert_eq!(graph.labels(), Some(&[1, 0, 0][..]));
/// assert_eq!(graph.classes.as_deref(), Some(&["a".to_string(), "b".to_string()][..]));
/// # Ok::<(), burn_gnn_data::DataError>(())
/// ```
#[derive(Clone, Debug)]
pub struct EdgeTable {
    table: Table,
    source: Column,
    target: Column,
    weight: Option<Column>,
    features: Features,
    ids: IdKind,
    nodes: Option<NodeTable>,
}

impl EdgeTable {
    /// The edge list in `table`.
    pub fn new(table: Table) -> EdgeTable {
        EdgeTable {
            table,
            source: Column::Position(0),
            target: Column::Position(1),
            weight: None,
            features: Features::None,
            ids: IdKind::Integer,
            nodes: None,
        }
    }

    /// A comma-separated file with a header.
    pub fn csv(path: impl AsRef<Path>) -> EdgeTable {
        EdgeTable::new(Table::csv(path))
    }

    /// A tab-separated file with a header.
    pub fn tsv(path: impl AsRef<Path>) -> EdgeTable {
        EdgeTable::new(Table::tsv(path))
    }

    /// Changes how the table is written (delimiter, header, comments).
    pub fn format(mut self, f: impl FnOnce(Table) -> Table) -> EdgeTable {
        self.table = f(self.table);
        self
    }

    /// The source (sender) column.
    pub fn source(mut self, column: impl Into<Column>) -> EdgeTable {
        self.source = column.into();
        self
    }

    /// The target (receiver) column.
    pub fn target(mut self, column: impl Into<Column>) -> EdgeTable {
        self.target = column.into();
        self
    }

    /// The weight column: the edge feature [`EDGE_WEIGHT`] (`[E]`, `f32`).
    pub fn weight(mut self, column: impl Into<Column>) -> EdgeTable {
        self.weight = Some(column.into());
        self
    }

    /// The feature columns: the graph's edge features `[E, F]` (`f32`).
    pub fn features(mut self, features: Features) -> EdgeTable {
        self.features = features;
        self
    }

    /// What the ids are, in this table and the node table.
    pub fn ids(mut self, ids: IdKind) -> EdgeTable {
        self.ids = ids;
        self
    }

    /// The node table: it fixes the nodes, their rows (its order) and their features.
    pub fn nodes(mut self, nodes: NodeTable) -> EdgeTable {
        self.nodes = Some(nodes);
        self
    }

    /// Opens the table and resolves its columns.
    fn open(&self) -> Result<(Records, EdgeColumns), DataError> {
        let records = self.table.open()?;
        let source = records.resolve(&self.source)?;
        let target = records.resolve(&self.target)?;
        let weight = match &self.weight {
            Some(c) => Some(records.resolve(c)?),
            None => None,
        };
        let taken: Vec<usize> = [Some(source), Some(target), weight]
            .into_iter()
            .flatten()
            .collect();
        let features = FeatureReader::new(&records, &self.features, &taken)?;
        Ok((
            records,
            EdgeColumns {
                source,
                target,
                weight,
                features,
            },
        ))
    }

    /// Whether a node table was given ([`EdgeTable::nodes`]), which a relation of
    /// [`HeteroTables`](super::HeteroTables) must not have.
    pub(super) fn has_node_table(&self) -> bool {
        self.nodes.is_some()
    }

    /// Reads the tables (the node table first).
    ///
    /// # Errors
    /// [`DataError::Table`] naming the file, line and column of the first field that does not
    /// parse, a missing column, a record of another length, a repeated node id, or an edge
    /// endpoint absent from the node table; [`DataError::Io`] when a file cannot be read.
    pub fn read(&self) -> Result<TableGraph, DataError> {
        let nodes = match &self.nodes {
            Some(nodes) => Some(read_nodes(nodes, self.ids)?),
            None => None,
        };
        let (mut records, mut columns) = self.open()?;
        let (s, t, w) = (columns.source, columns.target, columns.weight);
        // A plain table of integer ids (no quotes, comments or anomalies) is parsed in parallel
        // parts; anything else, errors included, goes through the strict record reader.
        let plain = match (&nodes, self.ids, &self.features) {
            (None, IdKind::Index | IdKind::Integer, Features::None) => self
                .table
                .read_plain(
                    &records,
                    records.width(),
                    &[s, t],
                    &w.into_iter().collect::<Vec<_>>(),
                )
                .and_then(|(mut ids, mut floats)| {
                    let weights = floats.pop().unwrap_or_default();
                    let (receivers, senders) = (ids.pop().expect("two"), ids.pop().expect("two"));
                    if self.ids == IdKind::Integer {
                        let (mut rows, ids) = number_integers(&[&senders, &receivers]);
                        let index = NodeIndex::from_integers(ids).expect("distinct");
                        let receivers = rows.pop().expect("two");
                        return Some((rows.pop().expect("two"), receivers, Some(index), weights));
                    }
                    // A negative row goes to the record reader, which names it.
                    let n = match min_max(&[&senders, &receivers]) {
                        Some((min, _)) if min < 0 => return None,
                        bounds => bounds.map_or(0, |(_, max)| max as usize + 1),
                    };
                    Some((senders, receivers, Some(NodeIndex::rows(n)), weights))
                }),
            _ => None,
        };
        let (senders, receivers, index, weights) = match plain {
            Some(read) => read,
            None => {
                let mut endpoints = Endpoints::new(
                    self.ids,
                    nodes.as_ref().map(|n| (&n.index, n.name.as_str())),
                );
                // One numbering for both columns: a text or integer id is one node wherever
                // it appears.
                let weights = columns.read(&mut records, |r, record, line| {
                    endpoints.push(r, record, line, s)?;
                    endpoints.push(r, record, line, t)
                })?;
                let (rows, index) = endpoints.finish();
                let (senders, receivers) = rows.chunks_exact(2).map(|p| (p[0], p[1])).unzip();
                (senders, receivers, index, weights)
            }
        };
        let edges = columns.finish(senders.len(), weights);
        let (index, node_set, classes) = match nodes {
            Some(n) => (n.index, n.features, n.classes),
            None => (
                index.expect("no node table: the edges made the index"),
                FeatureSetData::default(),
                None,
            ),
        };
        Ok(TableGraph {
            data: one_graph(node_set, edges, senders, receivers, index.len()),
            index,
            classes,
            masks: BTreeMap::new(),
        })
    }
}

/// A graph read from tables: the graph on the host and the map from the tables' ids to its rows.
#[derive(Clone, Debug, PartialEq)]
pub struct TableGraph {
    /// The graph: node features as the main node feature `[N, F]`, labels as [`LABELS`],
    /// edge features as the main edge feature `[E, F]`, weights as [`EDGE_WEIGHT`].
    pub data: GraphData,
    /// The tables' node ids and their rows.
    pub index: NodeIndex,
    /// The class names of text labels ([`LabelKind::Text`]): class `c` is `classes[c]`.
    pub classes: Option<Vec<String>>,
    /// Node masks by name (`train_mask`, …), one flag per node, from readers that have them
    /// (NumPy's `*_mask` arrays); empty for tables.
    pub masks: BTreeMap<String, Vec<bool>>,
}

impl TableGraph {
    /// The graph on `device`.
    ///
    /// # Errors
    /// [`DataError::Graph`] if the parts do not fit (they do, as read).
    pub fn graph(&self, device: &Device) -> Result<GraphsTuple, DataError> {
        Ok(GraphsTuple::from_graph_data(&self.data, device)?)
    }

    /// The labels (`-1` where unlabelled), if the node table had a label column.
    pub fn labels(&self) -> Option<&[i64]> {
        match self.data.nodes.named.get(LABELS).map(|f| &f.values) {
            Some(FeatureValues::I64(labels)) => Some(labels),
            _ => None,
        }
    }

    /// The number of classes: one more than the largest label (the number of names for text
    /// labels), if there are labels.
    pub fn num_classes(&self) -> Option<usize> {
        if let Some(classes) = &self.classes {
            return Some(classes.len());
        }
        self.labels()
            .map(|l| l.iter().map(|&c| c + 1).max().unwrap_or(0).max(0) as usize)
    }
}

/// One graph of `num_nodes` nodes with these features and edges.
pub(super) fn one_graph(
    nodes: FeatureSetData,
    edges: FeatureSetData,
    senders: Vec<i64>,
    receivers: Vec<i64>,
    num_nodes: usize,
) -> GraphData {
    GraphData {
        n_node: vec![num_nodes as i64],
        n_edge: vec![senders.len() as i64],
        nodes,
        edges,
        globals: FeatureSetData::default(),
        senders,
        receivers,
        num_nodes,
        padding: Vec::new(),
    }
}

fn f32s(shape: Vec<usize>, values: Vec<f32>) -> FeatureData {
    FeatureData {
        shape,
        values: FeatureValues::F32(values),
    }
}

fn float(r: &Records, record: &ByteRecord, line: u64, pos: usize) -> Result<f32, DataError> {
    let field = &record[pos];
    parse_f32(field).ok_or_else(|| r.error(line, pos, format!("{} is not a number", shown(field))))
}

/// A node table as read: its index, its node features (features, labels) and class names.
pub(super) struct NodeRows {
    pub(super) name: String,
    pub(super) index: NodeIndex,
    pub(super) features: FeatureSetData,
    pub(super) classes: Option<Vec<String>>,
}

/// The endpoints of a relation's edges: the node table they are resolved against and how
/// its ids are written.
pub(super) type Side<'a> = (&'a NodeRows, IdKind);

/// A relation's edge list, its sources resolved against one node table and its targets against
/// another (heterogeneous graphs): senders, receivers and the edge features (weight included).
///
/// # Errors
/// As [`EdgeTable::read`].
pub(super) fn read_relation(
    edges: &EdgeTable,
    src: Side<'_>,
    dst: Side<'_>,
) -> Result<(Vec<i64>, Vec<i64>, FeatureSetData), DataError> {
    let (mut records, mut columns) = edges.open()?;
    let (s, t) = (columns.source, columns.target);
    let mut sources = Endpoints::new(src.1, Some((&src.0.index, src.0.name.as_str())));
    let mut targets = Endpoints::new(dst.1, Some((&dst.0.index, dst.0.name.as_str())));
    let weights = columns.read(&mut records, |r, record, line| {
        sources.push(r, record, line, s)?;
        targets.push(r, record, line, t)
    })?;
    let (senders, receivers) = (sources.finish().0, targets.finish().0);
    let set = columns.finish(senders.len(), weights);
    Ok((senders, receivers, set))
}

/// An open edge table's columns: source, target, weight, and the feature reader.
struct EdgeColumns {
    source: usize,
    target: usize,
    weight: Option<usize>,
    features: FeatureReader,
}

impl EdgeColumns {
    /// Reads every record: `endpoints` takes its source and target, then the weight and the
    /// features are read. Returns the weights (empty without a weight column).
    fn read(
        &mut self,
        records: &mut Records,
        mut endpoints: impl FnMut(&Records, &ByteRecord, u64) -> Result<(), DataError>,
    ) -> Result<Vec<f32>, DataError> {
        let mut weights = Vec::new();
        let features = &mut self.features;
        let weight = self.weight;
        records.for_each(|r, record, line| {
            endpoints(r, record, line)?;
            if let Some(w) = weight {
                weights.push(float(r, record, line, w)?);
            }
            features.push(r, record, line)
        })?;
        Ok(weights)
    }

    /// The edge features of `num_edges` edges: the feature columns as the main feature, the
    /// weights as [`EDGE_WEIGHT`] when there is a weight column.
    fn finish(self, num_edges: usize, weights: Vec<f32>) -> FeatureSetData {
        let mut set = FeatureSetData {
            main: self.features.finish(num_edges),
            ..Default::default()
        };
        if self.weight.is_some() {
            set.named
                .insert(EDGE_WEIGHT.into(), f32s(vec![num_edges], weights));
        }
        set
    }
}

pub(super) fn read_nodes(nodes: &NodeTable, ids: IdKind) -> Result<NodeRows, DataError> {
    let mut records = nodes.table.open()?;
    let id = records.resolve(&nodes.id)?;
    let label = match &nodes.label {
        Some((c, kind)) => Some((records.resolve(c)?, *kind)),
        None => None,
    };
    let taken: Vec<usize> = [Some(id), label.map(|l| l.0)]
        .into_iter()
        .flatten()
        .collect();
    let mut features = FeatureReader::new(&records, &nodes.features, &taken)?;
    let mut int_ids: Vec<i64> = Vec::new();
    let mut text_ids: Vec<String> = Vec::new();
    let mut lines: Vec<u64> = Vec::new();
    let mut labels = Labels::default();
    records.for_each(|r, record, line| {
        let field = &record[id];
        match ids {
            IdKind::Index | IdKind::Integer => int_ids.push(integer_id(r, field, line, id, ids)?),
            IdKind::Text => text_ids.push(text(r, field, line, id)?),
        }
        lines.push(line);
        if let Some((pos, kind)) = label {
            labels.push(r, &record[pos], line, pos, kind)?;
        }
        features.push(r, record, line)
    })?;
    let rows = lines.len();
    let name = records.name().to_string();
    let repeated = |row_of: &dyn Fn(usize) -> bool, shown: String| {
        let second = (0..rows)
            .filter(|&r| row_of(r))
            .nth(1)
            .expect("an id that repeats");
        records.error(lines[second], id, format!("node id {shown} repeats"))
    };
    // With `Index`, the ids are the rows: each of 0..rows once, the features put at their id.
    let mut order = None;
    let index = match ids {
        IdKind::Index => {
            let mut perm = vec![usize::MAX; rows];
            for (row, &node) in int_ids.iter().enumerate() {
                let slot = usize::try_from(node).ok().filter(|&n| n < rows);
                let Some(slot) = slot else {
                    return Err(records.error(
                        lines[row],
                        id,
                        format!(
                            "node id {node} is not a row: with IdKind::Index the ids are 0..{rows}"
                        ),
                    ));
                };
                if perm[slot] != usize::MAX {
                    return Err(repeated(&|r| int_ids[r] == node, node.to_string()));
                }
                perm[slot] = row;
            }
            order = Some(perm);
            NodeIndex::rows(rows)
        }
        IdKind::Integer => NodeIndex::from_integers(int_ids.clone())
            .map_err(|node| repeated(&|r| int_ids[r] == node, node.to_string()))?,
        IdKind::Text => NodeIndex::from_texts(text_ids.clone())
            .map_err(|node| repeated(&|r| text_ids[r] == node, format!("`{node}`")))?,
    };
    let (labels, classes) = labels.finish();
    let mut set = FeatureSetData {
        main: features.finish(rows),
        ..Default::default()
    };
    if label.is_some() {
        set.named.insert(
            LABELS.into(),
            FeatureData {
                shape: vec![rows],
                values: FeatureValues::I64(labels),
            },
        );
    }
    if let Some(perm) = order {
        set = permute_rows(set, &perm);
    }
    Ok(NodeRows {
        name,
        index,
        features: set,
        classes,
    })
}

/// Row `r` of the result is row `perm[r]` of `set`.
fn permute_rows(set: FeatureSetData, perm: &[usize]) -> FeatureSetData {
    fn rows<T: Copy>(v: &[T], width: usize, perm: &[usize]) -> Vec<T> {
        perm.iter()
            .flat_map(|&r| v[r * width..(r + 1) * width].iter().copied())
            .collect()
    }
    let permute = |f: FeatureData| {
        let width = f.shape[1..].iter().product::<usize>();
        let values = match &f.values {
            FeatureValues::F32(v) => FeatureValues::F32(rows(v, width, perm)),
            FeatureValues::F64(v) => FeatureValues::F64(rows(v, width, perm)),
            FeatureValues::I32(v) => FeatureValues::I32(rows(v, width, perm)),
            FeatureValues::I64(v) => FeatureValues::I64(rows(v, width, perm)),
        };
        FeatureData { values, ..f }
    };
    FeatureSetData {
        main: set.main.map(permute),
        named: set
            .named
            .into_iter()
            .map(|(k, f)| (k, permute(f)))
            .collect(),
    }
}

fn integer_id(
    r: &Records,
    field: &[u8],
    line: u64,
    pos: usize,
    ids: IdKind,
) -> Result<i64, DataError> {
    parse_i64(field).ok_or_else(|| {
        r.error(
            line,
            pos,
            format!(
                "{} is not an integer node id ({ids:?} ids; text ids need IdKind::Text)",
                shown(field)
            ),
        )
    })
}

fn text(r: &Records, field: &[u8], line: u64, pos: usize) -> Result<String, DataError> {
    String::from_utf8(field.to_vec()).map_err(|_| r.error(line, pos, "not UTF-8 text"))
}

/// Label values as read, numbered at the end for text labels.
#[derive(Default)]
struct Labels {
    values: Vec<i64>,
    names: HashMap<String, u32>,
}

impl Labels {
    fn push(
        &mut self,
        r: &Records,
        field: &[u8],
        line: u64,
        pos: usize,
        kind: LabelKind,
    ) -> Result<(), DataError> {
        if field.trim_ascii().is_empty() {
            self.values.push(-1);
            return Ok(());
        }
        let value = match kind {
            LabelKind::Integer => match parse_i64(field) {
                Some(c) if c >= -1 => c,
                _ => {
                    return Err(r.error(
                        line,
                        pos,
                        format!("{} is not a class number (0, 1, …; -1 or empty: unlabelled; class names need LabelKind::Text)", shown(field)),
                    ));
                }
            },
            LabelKind::Text => {
                let name = text(r, field, line, pos)?;
                let next = self.names.len() as u32;
                i64::from(*self.names.entry(name).or_insert(next))
            }
        };
        self.values.push(value);
        Ok(())
    }

    /// The class of each row, and the class names (text labels), numbered in ascending order.
    fn finish(self) -> (Vec<i64>, Option<Vec<String>>) {
        if self.names.is_empty() {
            return (self.values, None);
        }
        let (names, renumber) = in_ascending_order(self.names);
        let values = self
            .values
            .into_iter()
            .map(|c| if c < 0 { c } else { renumber[c as usize] })
            .collect();
        (values, Some(names))
    }
}

/// The feature columns of a table, read a record at a time into row-major `f32`.
struct FeatureReader {
    spec: Spec,
    values: Vec<f32>,
    width: Option<usize>,
}

enum Spec {
    None,
    Columns(Vec<usize>),
    Vector { pos: usize, separator: char },
}

impl FeatureReader {
    fn new(
        records: &Records,
        features: &Features,
        taken: &[usize],
    ) -> Result<FeatureReader, DataError> {
        let (spec, width) = match features {
            Features::None => (Spec::None, Some(0)),
            Features::Columns(columns) => {
                let positions = columns
                    .iter()
                    .map(|c| records.resolve(c))
                    .collect::<Result<Vec<_>, _>>()?;
                let width = positions.len();
                (Spec::Columns(positions), Some(width))
            }
            Features::Rest => {
                let positions: Vec<usize> = (0..records.width())
                    .filter(|p| !taken.contains(p))
                    .collect();
                let width = positions.len();
                (Spec::Columns(positions), Some(width))
            }
            Features::Vector { column, separator } => (
                Spec::Vector {
                    pos: records.resolve(column)?,
                    separator: *separator,
                },
                None,
            ),
        };
        Ok(FeatureReader {
            spec,
            values: Vec::new(),
            width,
        })
    }

    fn push(&mut self, r: &Records, record: &ByteRecord, line: u64) -> Result<(), DataError> {
        match &self.spec {
            Spec::None => {}
            Spec::Columns(positions) => {
                for &pos in positions {
                    self.values.push(float(r, record, line, pos)?);
                }
            }
            &Spec::Vector { pos, separator } => {
                let field = &record[pos];
                let bad = |why: &str| r.error(line, pos, format!("{} {why}", shown(field)));
                let text = std::str::from_utf8(field).map_err(|_| bad("is not UTF-8 text"))?;
                let mut text = text.trim();
                if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                    text = inner.trim();
                }
                let before = self.values.len();
                if !text.is_empty() {
                    let parts: Box<dyn Iterator<Item = &str>> = if separator.is_whitespace() {
                        Box::new(text.split_whitespace())
                    } else {
                        Box::new(text.split(separator))
                    };
                    for part in parts {
                        let value = part.trim().parse::<f32>().map_err(|_| {
                            bad(&format!("holds `{}`, which is not a number", part.trim()))
                        })?;
                        self.values.push(value);
                    }
                }
                let got = self.values.len() - before;
                match self.width {
                    None => self.width = Some(got),
                    Some(width) if width != got => {
                        return Err(bad(&format!(
                            "holds {got} values where the first row holds {width}"
                        )));
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// The `[rows, width]` feature, or `None` when the table has no features.
    fn finish(self, rows: usize) -> Option<FeatureData> {
        if matches!(self.spec, Spec::None) {
            return None;
        }
        Some(f32s(vec![rows, self.width.unwrap_or(0)], self.values))
    }
}

/// Edge endpoints as read, resolved to rows through the node table's index, or (without one)
/// collected and numbered at the end.
enum Endpoints<'a> {
    Known {
        index: &'a NodeIndex,
        name: &'a str,
        ids: IdKind,
        rows: Vec<i64>,
    },
    Index {
        rows: Vec<i64>,
    },
    Integer {
        raw: Vec<i64>,
    },
    Text {
        codes: Vec<u32>,
        seen: HashMap<Box<str>, u32>,
    },
}

impl<'a> Endpoints<'a> {
    fn new(ids: IdKind, nodes: Option<(&'a NodeIndex, &'a str)>) -> Endpoints<'a> {
        match (nodes, ids) {
            (Some((index, name)), _) => Endpoints::Known {
                index,
                name,
                ids,
                rows: Vec::new(),
            },
            (None, IdKind::Index) => Endpoints::Index { rows: Vec::new() },
            (None, IdKind::Integer) => Endpoints::Integer { raw: Vec::new() },
            (None, IdKind::Text) => Endpoints::Text {
                codes: Vec::new(),
                seen: HashMap::new(),
            },
        }
    }

    fn push(
        &mut self,
        r: &Records,
        record: &ByteRecord,
        line: u64,
        pos: usize,
    ) -> Result<(), DataError> {
        let field = &record[pos];
        match self {
            Endpoints::Known {
                index,
                name,
                ids,
                rows,
            } => {
                let row = match ids {
                    IdKind::Text => index.row(&text(r, field, line, pos)?),
                    _ => index.row_of_integer(integer_id(r, field, line, pos, *ids)?),
                };
                let row = row.ok_or_else(|| {
                    r.error(
                        line,
                        pos,
                        format!("node id {} is not in the node table {name}", shown(field)),
                    )
                })?;
                rows.push(row as i64);
            }
            Endpoints::Index { rows } => {
                let row = integer_id(r, field, line, pos, IdKind::Index)?;
                if row < 0 {
                    return Err(r.error(
                        line,
                        pos,
                        format!("node id {row} is negative: with IdKind::Index ids are rows"),
                    ));
                }
                rows.push(row);
            }
            Endpoints::Integer { raw } => {
                raw.push(integer_id(r, field, line, pos, IdKind::Integer)?)
            }
            Endpoints::Text { codes, seen } => {
                let text =
                    std::str::from_utf8(field).map_err(|_| r.error(line, pos, "not UTF-8 text"))?;
                let next = seen.len() as u32;
                let code = match seen.get(text) {
                    Some(&code) => code,
                    None => {
                        seen.insert(text.into(), next);
                        next
                    }
                };
                codes.push(code);
            }
        }
        Ok(())
    }

    /// The endpoints' rows, interleaved `(source, target)`, and the index the edges made (none
    /// with a node table).
    fn finish(self) -> (Vec<i64>, Option<NodeIndex>) {
        match self {
            Endpoints::Known { rows, .. } => (rows, None),
            Endpoints::Index { rows } => {
                let n = min_max(&[&rows]).map_or(0, |(_, max)| max as usize + 1);
                (rows, Some(NodeIndex::rows(n)))
            }
            Endpoints::Integer { raw } => {
                let (mut rows, ids) = number_integers(&[&raw]);
                let index = NodeIndex::from_integers(ids).expect("distinct");
                (rows.pop().expect("one"), Some(index))
            }
            Endpoints::Text { codes, seen } => {
                let (names, renumber) = in_ascending_order(seen);
                let rows = codes.iter().map(|&c| renumber[c as usize]).collect();
                let names = names.into_iter().map(String::from).collect();
                (rows, Some(NodeIndex::from_texts(names).expect("distinct")))
            }
        }
    }
}

/// Distinct names numbered in order of first appearance (`codes`), renumbered in ascending
/// order: the names by their new number, and each first-appearance number's new one.
fn in_ascending_order<K: Ord>(codes: HashMap<K, u32>) -> (Vec<K>, Vec<i64>) {
    let mut names: Vec<(K, u32)> = codes.into_iter().collect();
    names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut renumber = vec![0i64; names.len()];
    for (new, (_, first_seen)) in names.iter().enumerate() {
        renumber[*first_seen as usize] = new as i64;
    }
    (names.into_iter().map(|(name, _)| name).collect(), renumber)
}

/// Numbers the distinct integer ids of `columns` in ascending order: each column's rows, and the
/// ids by row. Ids within a range of at most twice their count (or 2^16) go through a table over
/// that range; others through a sort. Both give the same numbering.
fn number_integers(columns: &[&[i64]]) -> (Vec<Vec<i64>>, Vec<i64>) {
    use rayon::prelude::*;
    let count: usize = columns.iter().map(|c| c.len()).sum();
    let all = || columns.iter().flat_map(|c| c.iter().copied());
    let Some((min, max)) = min_max(columns) else {
        return (vec![Vec::new(); columns.len()], Vec::new());
    };
    let range = i128::from(max) - i128::from(min) + 1;
    if range <= (2 * count).max(1 << 16) as i128 && count < u32::MAX as usize {
        let mut row_of = vec![u32::MAX; range as usize];
        for id in all() {
            row_of[(id - min) as usize] = 0;
        }
        let mut ids = Vec::new();
        for (offset, row) in row_of.iter_mut().enumerate() {
            if *row == 0 {
                *row = ids.len() as u32;
                ids.push(min + offset as i64);
            }
        }
        let rows = columns
            .iter()
            .map(|c| {
                c.par_iter()
                    .map(|&id| i64::from(row_of[(id - min) as usize]))
                    .collect()
            })
            .collect();
        (rows, ids)
    } else {
        let mut ids: Vec<i64> = all().collect();
        ids.par_sort_unstable();
        ids.dedup();
        let rows = columns
            .iter()
            .map(|c| {
                c.par_iter()
                    .map(|id| {
                        ids.binary_search(id)
                            .expect("every id is in the sorted set") as i64
                    })
                    .collect()
            })
            .collect();
        (rows, ids)
    }
}

/// The smallest and largest value of `columns`, in parallel chunks; `None` when all are empty.
fn min_max(columns: &[&[i64]]) -> Option<(i64, i64)> {
    use rayon::prelude::*;
    columns
        .iter()
        .flat_map(|c| {
            c.par_chunks(1 << 16)
                .map(|chunk| {
                    let min = chunk.iter().copied().min()?;
                    Some((min, chunk.iter().copied().max()?))
                })
                .collect::<Vec<_>>()
        })
        .flatten()
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
}
