//! The typed error of dataset loading.

use std::path::PathBuf;

use thiserror::Error;

/// Why a dataset could not be loaded. Each message says what to do about it.
#[derive(Debug, Error)]
pub enum DataError {
    /// A raw file is not where it was looked for.
    #[error("{path} is missing: {hint}")]
    MissingFile {
        /// Where it was looked for.
        path: PathBuf,
        /// What to do.
        hint: String,
    },
    /// A raw file's SHA-256 is not the committed one: a truncated download or another file.
    #[error(
        "{path} has SHA-256 {actual}, expected {expected}: delete it and download it again, or point the data directory at the canonical files"
    )]
    Checksum {
        /// The file.
        path: PathBuf,
        /// The committed sum.
        expected: String,
        /// The file's sum.
        actual: String,
    },
    /// A pickle that is malformed or uses something this reader does not support.
    #[error("corrupt or unsupported pickle: {0}")]
    Pickle(String),
    /// Files that parse but do not fit together (shapes, indices).
    #[error("inconsistent dataset: {0}")]
    Inconsistent(String),
    /// A download failed (network, HTTP status, size or checksum); nothing was written.
    #[error("cannot download {url}: {reason}; {hint}")]
    Download {
        /// What was fetched.
        url: String,
        /// Why it failed.
        reason: String,
        /// What to do.
        hint: String,
    },
    /// An argument out of its domain (a probability outside `[0, 1]`, a size too small).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An unknown dataset name.
    #[error("unknown dataset `{name}` (known: {known})")]
    UnknownDataset {
        /// The name asked for.
        name: String,
        /// The names the loader knows.
        known: String,
    },
    /// Fewer free node pairs than negatives asked for (negative sampling).
    #[error(
        "graph {graph} has {available} node pairs that are not edges, fewer than the {asked} negatives asked for"
    )]
    TooDense {
        /// The graph (its index in the batch).
        graph: usize,
        /// The negatives asked for.
        asked: usize,
        /// The free pairs there are.
        available: u64,
    },
    /// A text file that does not parse (TU datasets).
    #[error("{file}, line {line}: {reason}")]
    Parse {
        /// The file's name.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong there.
        reason: String,
    },
    /// A table (CSV, TSV) that does not parse or does not fit: a malformed record, a missing
    /// column, a field of the wrong kind, a repeated node id, an edge to an unknown node.
    #[error("{file}, line {line}{}: {reason}", column.as_ref().map(|c| format!(", column `{c}`")).unwrap_or_default())]
    Table {
        /// The file's path (or the name given to a table in memory).
        file: String,
        /// The 1-based line (for a read that broke off, the line it was reading).
        line: u64,
        /// The column's header name, or `#position` without a header.
        column: Option<String>,
        /// What is wrong there.
        reason: String,
    },
    /// A NumPy array (`.npy`, an `.npz` member) that does not parse or does not fit: a bad
    /// header, a type the reader does not hold, truncated data, a shape or id out of place.
    #[error("{file}: {reason}")]
    Array {
        /// The file (`archive.npz:member` for an archive's array).
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A dataset asked of the embedded copy that is not in it (PubMed, a TU dataset other than
    /// MUTAG, or any dataset in a build without the `embedded` feature).
    #[error(
        "`{0}` is not embedded in this build (Cora, CiteSeer and MUTAG are, with the `embedded` feature); load it from a directory or let `open` download it"
    )]
    NotEmbedded(String),
    /// An I/O error.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Building the graph failed.
    #[error(transparent)]
    Graph(#[from] burn_gnn_graph::GraphError),
}
