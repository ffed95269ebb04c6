//! Datasets for burn-gnn.
//!
//! [`Planetoid`] (Cora, CiteSeer, PubMed) is read from the canonical raw files every GCN/GAT
//! paper and PyG use (`ind.<name>.{x, tx, allx, y, ty, ally, graph, test.index}`). They are
//! Python pickles; a small strict pickle reader handles exactly what they contain (numpy arrays,
//! scipy CSR matrices, a dict of lists), with no Python at run time. Every file is checked
//! against the SHA-256 sums committed in `datasets/planetoid.sha256`.
//!
//! The split is PyG's `Planetoid(split="public")`; the graph is made undirected, without self
//! loops or duplicate edges, as PyG.
#![warn(missing_docs)]

mod error;
mod pickle;
mod planetoid;

pub use error::DataError;
pub use planetoid::{DATA_DIR_ENV, Planetoid, data_dir};

/// Parses a pickle and reports whether this reader accepts it (for fuzzing the reader).
#[doc(hidden)]
pub fn check_pickle(bytes: &[u8]) -> Result<(), DataError> {
    pickle::parse(bytes).map(|_| ())
}
