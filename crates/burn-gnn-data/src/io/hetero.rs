//! Heterogeneous graphs from tables: one node table per node type, one edge table per relation.

use std::collections::BTreeMap;

use burn::tensor::Device;
use burn_gnn_graph::{
    EdgeSetData, EdgeType, FeatureSetData, HeteroGraph, HeteroGraphData, NodeSetData,
};

use super::graph::{EdgeTable, NodeRows, NodeTable, read_nodes, read_relation};
use super::node_index::NodeIndex;
use super::table::IdKind;
use crate::DataError;

/// A heterogeneous graph in tables: one [`NodeTable`] per node type (its ids, features and
/// labels) and one [`EdgeTable`] per relation `(source type, relation, target type)` (its source
/// and target columns, weight and features). Ids are resolved per node type: a relation's
/// sources must be ids of its source type's table, its targets of its target type's.
///
/// ```
/// use burn_gnn_data::io::{EdgeTable, Features, HeteroTables, IdKind, NodeTable, Table};
///
/// let authors = Table::from_bytes("authors.csv", "name\nada\nbob\n");
/// let papers = Table::from_bytes("papers.csv", "id,year\n7,2001\n3,1999\n");
/// let writes = Table::from_bytes("writes.csv", "author,paper\nada,3\nbob,3\nbob,7\n");
/// let read = HeteroTables::new()
///     .node_type("author", IdKind::Text, NodeTable::new(authors).id("name"))
///     .node_type(
///         "paper",
///         IdKind::Integer,
///         NodeTable::new(papers).id("id").features(Features::columns(["year"])),
///     )
///     .relation(("author", "writes", "paper"), EdgeTable::new(writes).source("author").target("paper"))
///     .read()?;
/// let writes = &read.data.edge_sets[0];
/// assert_eq!((writes.senders.clone(), writes.receivers.clone()), (vec![0, 1, 1], vec![1, 1, 0]));
/// assert_eq!(read.index["paper"].row_of_integer(3), Some(1));
/// # Ok::<(), burn_gnn_data::DataError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct HeteroTables {
    node_types: BTreeMap<String, (IdKind, NodeTable)>,
    relations: Vec<(EdgeType, EdgeTable)>,
}

/// A heterogeneous graph read from tables: the graph on the host, and per node type the map
/// from its table's ids to its rows and its class names.
#[derive(Clone, Debug, PartialEq)]
pub struct HeteroTableGraph {
    /// The graph: each node type's features as its node set's main feature, labels as
    /// [`LABELS`](super::LABELS); each relation's features and weight on its edge set.
    pub data: HeteroGraphData,
    /// Per node type: its ids and their rows.
    pub index: BTreeMap<String, NodeIndex>,
    /// Per node type with text labels: the class names.
    pub classes: BTreeMap<String, Vec<String>>,
}

impl HeteroTables {
    /// No tables yet.
    pub fn new() -> HeteroTables {
        HeteroTables::default()
    }

    /// The node type `name`: its table, whose ids are written as `ids`.
    pub fn node_type(mut self, name: impl Into<String>, ids: IdKind, table: NodeTable) -> Self {
        self.node_types.insert(name.into(), (ids, table));
        self
    }

    /// The relation `edge_type` (`(source type, relation, target type)`): its edge list.
    pub fn relation(mut self, edge_type: impl Into<EdgeType>, table: EdgeTable) -> Self {
        self.relations.push((edge_type.into(), table));
        self
    }

    /// Reads every node table, then every relation.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a relation whose node type has no table, a relation
    /// given twice, or a relation's edge table with a node table of its own
    /// ([`EdgeTable::nodes`]; node tables belong to [`node_type`](Self::node_type));
    /// [`DataError::Table`] as [`EdgeTable::read`], an endpoint that is not an id of its node
    /// type's table naming the file, line and column.
    pub fn read(&self) -> Result<HeteroTableGraph, DataError> {
        let mut seen = std::collections::BTreeSet::new();
        for (edge_type, table) in &self.relations {
            for t in [&edge_type.src, &edge_type.dst] {
                if !self.node_types.contains_key(t) {
                    return Err(DataError::InvalidArgument(format!(
                        "relation {edge_type}: the node type `{t}` has no table (HeteroTables::node_type)"
                    )));
                }
            }
            if !seen.insert(edge_type.clone()) {
                return Err(DataError::InvalidArgument(format!(
                    "relation {edge_type} is given twice"
                )));
            }
            if table.has_node_table() {
                return Err(DataError::InvalidArgument(format!(
                    "relation {edge_type}: its edge table has a node table of its own; give node \
                     tables to HeteroTables::node_type"
                )));
            }
        }
        let mut nodes: BTreeMap<String, (NodeRows, IdKind)> = BTreeMap::new();
        for (name, (ids, table)) in &self.node_types {
            nodes.insert(name.clone(), (read_nodes(table, *ids)?, *ids));
        }
        let mut edge_sets = Vec::with_capacity(self.relations.len());
        for (edge_type, table) in &self.relations {
            let (src, dst) = (&nodes[&edge_type.src], &nodes[&edge_type.dst]);
            let (senders, receivers, features) =
                read_relation(table, (&src.0, src.1), (&dst.0, dst.1))?;
            edge_sets.push(EdgeSetData {
                edge_type: edge_type.clone(),
                n_edge: vec![senders.len() as i64],
                senders,
                receivers,
                features,
            });
        }
        edge_sets.sort_by(|a, b| a.edge_type.cmp(&b.edge_type));
        let (mut node_sets, mut index, mut classes) =
            (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for (name, (rows, _)) in nodes {
            let n = rows.index.len();
            node_sets.insert(
                name.clone(),
                NodeSetData {
                    n_node: vec![n as i64],
                    num_nodes: n,
                    features: rows.features,
                },
            );
            if let Some(c) = rows.classes {
                classes.insert(name.clone(), c);
            }
            index.insert(name, rows.index);
        }
        Ok(HeteroTableGraph {
            data: HeteroGraphData {
                node_sets,
                edge_sets,
                context: FeatureSetData::default(),
                n_graph: 1,
                padding: Vec::new(),
            },
            index,
            classes,
        })
    }
}

impl HeteroTableGraph {
    /// The graph on `device`.
    ///
    /// # Errors
    /// As [`HeteroGraph::from_data`].
    pub fn graph(&self, device: &Device) -> Result<HeteroGraph, DataError> {
        Ok(HeteroGraph::from_data(&self.data, device)?)
    }
}
