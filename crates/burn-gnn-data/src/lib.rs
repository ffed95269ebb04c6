//! Datasets and readers for burn-gnn.
//!
//! [`io`] reads the user's own graphs: CSV/TSV edge and node tables (integer or text ids mapped
//! to rows, with the map back), NumPy `.npy` arrays (memory-mapped) and `.npz` archives, and
//! graphs saved under PyG's names; strict, with errors naming the file, line and column.
//!
//! [`Planetoid`] (Cora, CiteSeer, PubMed) is read from the canonical raw files every GCN/GAT
//! paper and PyG use (`ind.<name>.{x, tx, allx, y, ty, ally, graph, test.index}`). They are
//! Python pickles; a small strict pickle reader handles exactly what they contain (numpy arrays,
//! scipy CSR matrices, a dict of lists), with no Python at run time. Every file is checked
//! against the SHA-256 sums committed in the crate (`data/planetoid.sha256`).
//!
//! The split is PyG's `Planetoid(split="public")`; the graph is made undirected, without self
//! loops or duplicate edges, as PyG. Cora and CiteSeer are compiled into the crate (feature
//! `embedded`, on by default), so they load offline with [`Planetoid::embedded`];
//! [`Planetoid::open`] looks in a data directory first, then the embedded copy, then a cache,
//! and (feature `download`, on by default) downloads what is missing, verified before it is
//! kept.
//!
//! [`TuDataset`] reads the TU Dortmund graph-classification datasets (MUTAG, PROTEINS, ENZYMES,
//! NCI1, IMDB-BINARY and any other of the collection) from their text format as PyG's
//! `TUDataset` does, with errors naming the file and line; MUTAG is embedded, the others come
//! from a data directory, the cache or a download of the collection's zip, checked against
//! committed SHA-256 sums. [`stratified_k_fold`] gives the seeded cross-validation folds of
//! graph classification.
//!
//! Link prediction: [`NegativeSampler`] draws node pairs that are not edges, per graph of a
//! batch (seeded, exact, thread-count independent), and [`RandomLinkSplit`] splits a graph's
//! edges into training, validation and test edges with their negatives, as PyG;
//! [`LinkNeighborLoader`] batches seed edges with fresh negatives and the sampled neighbourhood
//! of their endpoints.
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
//! # #[cfg(feature = "embedded")] {
//! let cora = burn_gnn_data::Planetoid::embedded("cora").unwrap();
//! assert_eq!((cora.num_nodes, cora.num_classes), (2708, 7));
//! # }
//!
//! # #[cfg(feature = "embedded")] {
//! let mutag = burn_gnn_data::TuDataset::embedded("MUTAG").unwrap();
//! assert_eq!((mutag.graphs.len(), mutag.num_classes()), (188, 2));
//! # }
//!
//! let g = synthetic::barabasi_albert(100, 2, 7).unwrap();
//! assert_eq!(g.num_edges(), 2 * 2 * (100 - 2)); // m (n - m) edges, both directions
//! ```
#![warn(missing_docs)]

mod academic;
#[cfg(feature = "download")]
mod download;
mod error;
mod hetero_sampler;
pub mod io;
mod karate;
mod link;
pub mod ogb;
mod pickle;
mod planetoid;
mod planetoid_files;
mod point_clouds;
mod sampler;
mod source;
mod split;
pub mod synthetic;
mod tu;
mod tu_files;
mod tu_text;

pub use academic::{Academic, AcademicConfig};
#[cfg(feature = "download")]
pub use download::{download_ogb, download_ogb_from};
pub use error::DataError;
pub use hetero_sampler::{HeteroNeighborLoader, HeteroNeighbors, HeteroSampledBatch};
pub use karate::KarateClub;
pub use link::{
    LinkNeighborLoader, LinkSampledBatch, LinkSet, LinkSplit, NegativeMethod, NegativeSampler,
    NegativeSampling, RandomLinkSplit, Structured, negative_sampling, structured_negative_sampling,
};
pub use planetoid::Planetoid;
pub use planetoid_files::{CACHE_DIR, SOURCE_ENV};
#[cfg(feature = "download")]
pub use planetoid_files::{download_planetoid, download_planetoid_from};
pub use point_clouds::{PointCloud, SOLID_SHAPES, SolidShape, point_cloud_batch, point_clouds};
pub use sampler::{InNeighbors, NeighborLoader, RandomPartitionLoader, SampledBatch};
pub use source::{DATA_DIR_ENV, DataSource, DownloadEvent};
pub use split::{
    Amount, Fold, NodeMasks, NodeSplit, RandomNodeSplit, TEST_MASK, TRAIN_MASK, VAL_MASK,
    stratified_k_fold,
};
pub use tu::{TuDataset, TuFeatures, TuGraph};
pub use tu_files::{TU_CACHE_DIR, TU_DATASETS, TU_SOURCE_ENV};
#[cfg(feature = "download")]
pub use tu_files::{download_tu, download_tu_from};

/// Parses a pickle and reports whether this reader accepts it (for fuzzing the reader).
#[doc(hidden)]
pub fn check_pickle(bytes: &[u8]) -> Result<(), DataError> {
    pickle::parse(bytes).map(|_| ())
}
