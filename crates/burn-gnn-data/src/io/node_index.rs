//! [`NodeIndex`]: the map between a table's node ids and the graph's contiguous rows.

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::Path;

use crate::DataError;

/// A node's id as the user's table wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeId<'a> {
    /// An integer id ([`IdKind::Index`](super::IdKind::Index) or
    /// [`IdKind::Integer`](super::IdKind::Integer)).
    Integer(i64),
    /// A text id ([`IdKind::Text`](super::IdKind::Text)).
    Text(&'a str),
}

impl fmt::Display for NodeId<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeId::Integer(id) => write!(f, "{id}"),
            NodeId::Text(id) => f.write_str(id),
        }
    }
}

/// The map between the node ids of a user's tables and the graph's rows `0..len`, both ways, so
/// that results can be written back under the user's ids.
///
/// Rows follow the node table's order when there is one; without one, ascending id order
/// (numeric for integer ids, byte order for text ids). With [`IdKind::Index`](super::IdKind::Index)
/// an id is its row.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeIndex {
    ids: Ids,
}

#[derive(Clone, Debug, PartialEq)]
enum Ids {
    Rows(usize),
    Integer {
        ids: Vec<i64>,
        rows: HashMap<i64, usize>,
    },
    Text {
        ids: Vec<Box<str>>,
        rows: HashMap<Box<str>, usize>,
    },
}

impl NodeIndex {
    /// Ids that are their rows: `0..num_nodes`.
    pub fn rows(num_nodes: usize) -> NodeIndex {
        NodeIndex {
            ids: Ids::Rows(num_nodes),
        }
    }

    /// Integer ids, row `r` holding `ids[r]`.
    ///
    /// # Errors
    /// The first id that repeats.
    pub fn from_integers(ids: Vec<i64>) -> Result<NodeIndex, i64> {
        let mut rows = HashMap::with_capacity(ids.len());
        for (row, &id) in ids.iter().enumerate() {
            if rows.insert(id, row).is_some() {
                return Err(id);
            }
        }
        Ok(NodeIndex {
            ids: Ids::Integer { ids, rows },
        })
    }

    /// Text ids, row `r` holding `ids[r]`.
    ///
    /// # Errors
    /// The first id that repeats.
    pub fn from_texts(ids: Vec<String>) -> Result<NodeIndex, String> {
        let ids: Vec<Box<str>> = ids.into_iter().map(String::into_boxed_str).collect();
        let mut rows = HashMap::with_capacity(ids.len());
        for (row, id) in ids.iter().enumerate() {
            if rows.insert(id.clone(), row).is_some() {
                return Err(id.to_string());
            }
        }
        Ok(NodeIndex {
            ids: Ids::Text { ids, rows },
        })
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        match &self.ids {
            Ids::Rows(n) => *n,
            Ids::Integer { ids, .. } => ids.len(),
            Ids::Text { ids, .. } => ids.len(),
        }
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of `row`, or `None` past the last row.
    pub fn id(&self, row: usize) -> Option<NodeId<'_>> {
        match &self.ids {
            Ids::Rows(n) => (row < *n).then_some(NodeId::Integer(row as i64)),
            Ids::Integer { ids, .. } => ids.get(row).map(|&id| NodeId::Integer(id)),
            Ids::Text { ids, .. } => ids.get(row).map(|id| NodeId::Text(id)),
        }
    }

    /// The row of an integer id, or `None` when the graph has no such node (or its ids are text).
    pub fn row_of_integer(&self, id: i64) -> Option<usize> {
        match &self.ids {
            Ids::Rows(n) => usize::try_from(id).ok().filter(|r| r < n),
            Ids::Integer { rows, .. } => rows.get(&id).copied(),
            Ids::Text { .. } => None,
        }
    }

    /// The row of an id as written in a table: parsed as an integer for integer ids, compared
    /// byte for byte for text ids. `None` when the graph has no such node.
    pub fn row(&self, id: &str) -> Option<usize> {
        match &self.ids {
            Ids::Text { rows, .. } => rows.get(id).copied(),
            _ => id
                .trim()
                .parse()
                .ok()
                .and_then(|id| self.row_of_integer(id)),
        }
    }

    /// The ids in row order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId<'_>> + '_ {
        (0..self.len()).map(|row| self.id(row).expect("row < len"))
    }

    /// Writes one value per node as a CSV file with a header, `id_header,value_header`, a line
    /// per node in row order under the user's ids: predictions written back for the tables they
    /// came from.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when `values` has not one value per node;
    /// [`DataError::Io`] when the file cannot be written.
    pub fn write_csv<T: fmt::Display>(
        &self,
        path: impl AsRef<Path>,
        id_header: &str,
        value_header: &str,
        values: &[T],
    ) -> Result<(), DataError> {
        let path = path.as_ref();
        if values.len() != self.len() {
            return Err(DataError::InvalidArgument(format!(
                "{} values for {} nodes",
                values.len(),
                self.len()
            )));
        }
        let io = |source| DataError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut w = csv::Writer::from_writer(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(io)?,
        ));
        let csv_io = |e: csv::Error| io(std::io::Error::other(e));
        w.write_record([id_header, value_header]).map_err(csv_io)?;
        for (id, value) in self.iter().zip(values) {
            w.write_record([id.to_string(), value.to_string()])
                .map_err(csv_io)?;
        }
        let mut inner = w.into_inner().map_err(|e| io(e.into_error()))?;
        inner.flush().map_err(io)
    }
}
