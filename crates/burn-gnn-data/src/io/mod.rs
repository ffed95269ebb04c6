//! Your own graphs in: readers for the tables people have.
//!
//! An [`EdgeTable`] (one line per edge) and an optional [`NodeTable`] (one line per node) read
//! from CSV/TSV files (the `csv` crate) into a [`TableGraph`]: the graph on the host
//! ([`GraphData`](burn_gnn_graph::GraphData), ready for
//! [`TableGraph::graph`]) and the [`NodeIndex`] between the tables' ids and the graph's rows, so
//! that predictions can be written back under the user's ids ([`NodeIndex::write_csv`]).
//!
//! Columns are taken by header name or 0-based position ([`Column`]); ids are rows, integers or
//! text ([`IdKind`]); features come from numeric columns or one column holding a vector
//! ([`Features`]); labels from a column of class numbers or names ([`LabelKind`]). Reading is
//! strict: a field that does not parse, a missing column, a record of another length, a
//! repeated node id or an edge to an unknown node is a [`DataError::Table`](crate::DataError)
//! naming the file, line and column; nothing is dropped or padded.
//!
//! NumPy: [`NpyArray`] maps a `.npy` file (little- or big-endian, C or Fortran order, `bool`,
//! `uint8`, `int32`, `int64`, `float32`, `float64`) and hands its values out in C order, in place
//! where the layout allows; [`NpzArchive`] reads the members of an `.npz`; [`NumpyGraph`] reads a
//! graph saved under PyG's names (`edge_index`, `x`, `y`, `*_mask`, …) from either.

mod graph;
mod hetero;
mod node_index;
mod numpy;
#[cfg(feature = "parquet")]
mod parquet;
mod table;

pub use graph::{EDGE_WEIGHT, EdgeTable, LABELS, LabelKind, NodeTable, TableGraph};
pub use hetero::{HeteroTableGraph, HeteroTables};
pub use node_index::{NodeId, NodeIndex};
pub use numpy::{NpyArray, NpyDType, NpzArchive, NumpyGraph};
pub use table::{Column, Features, IdKind, Table};
