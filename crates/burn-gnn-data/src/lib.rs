//! Datasets for burn-gnn.
//!
//! [`Planetoid`] (Cora, CiteSeer, PubMed) is read from the canonical raw files every GCN/GAT
//! paper and PyG use (`ind.<name>.{x, tx, allx, y, ty, ally, graph, test.index}`). They are
//! Python pickles; a small strict pickle reader handles exactly what they contain (numpy arrays,
//! scipy CSR matrices, a dict of lists), with no Python at run time. Every file is checked
//! against the SHA-256 sums committed in `datasets/planetoid.sha256`.
//!
//! The split is PyG's `Planetoid(split="public")`; the graph is made undirected, without self
//! loops or duplicate edges, as PyG. With the `download` feature (on by default),
//! [`download_planetoid`] / [`Planetoid::fetch`] download missing files on first use into a
//! cache directory, verified before they are kept.
//!
//! [`KarateClub`] is embedded (no download), [`synthetic`] generates seeded random graphs
//! (Erdős–Rényi, stochastic block model, Barabási–Albert, Watts–Strogatz) for tests and
//! benchmarks, and [`Academic`] a heterogeneous citation graph with a planted signal.
//!
//! Mini-batches for graphs too large for one step: [`NeighborLoader`] (GraphSAGE neighbour
//! sampling, seeded and thread-count independent) and [`RandomPartitionLoader`] (Cluster-GCN
//! style induced subgraphs of a random partition), both over host [`InNeighbors`] lists and
//! yielding [`SampledBatch`]es that become `GraphsTuple`s; [`HeteroNeighborLoader`] samples per
//! relation of a heterogeneous graph into [`HeteroSampledBatch`]es that become `HeteroGraph`s.
//!
//! ```
//! use burn::tensor::Device;
//! use burn_gnn_data::{KarateClub, synthetic};
//!
//! let device = Device::flex();
//! let karate = KarateClub::load().graph(&device).unwrap();
//! assert_eq!((karate.sum_n_node(), karate.sum_n_edge()), (34, 156));
//!
//! let g = synthetic::barabasi_albert(100, 2, 7).unwrap();
//! assert_eq!(g.num_edges(), 2 * 2 * (100 - 2)); // m (n - m) edges, both directions
//! ```
#![warn(missing_docs)]

#[cfg(feature = "download")]
mod academic;
mod download;
mod error;
mod hetero_sampler;
mod karate;
mod pickle;
mod planetoid;
mod sampler;
pub mod synthetic;

#[cfg(feature = "download")]
pub use academic::{Academic, AcademicConfig};
pub use download::{DownloadEvent, SOURCE_ENV, download_planetoid, download_planetoid_from};
pub use error::DataError;
pub use karate::KarateClub;
pub use hetero_sampler::{HeteroNeighborLoader, HeteroNeighbors, HeteroSampledBatch};
pub use sampler::{InNeighbors, NeighborLoader, RandomPartitionLoader, SampledBatch};
pub use planetoid::{DATA_DIR_ENV, Planetoid, data_dir};

/// Parses a pickle and reports whether this reader accepts it (for fuzzing the reader).
#[doc(hidden)]
pub fn check_pickle(bytes: &[u8]) -> Result<(), DataError> {
    pickle::parse(bytes).map(|_| ())
}
