//! Link prediction data: negative sampling, train / validation / test edge splits, and
//! neighbour-sampled mini-batches of edges.

mod hetero_split;
mod loader;
mod negative;
mod pair_space;
mod split;

pub use loader::{LinkNeighborLoader, LinkSampledBatch};
pub use negative::{
    NegativeMethod, NegativeSampler, NegativeSampling, Structured, negative_sampling,
    structured_negative_sampling,
};
pub use split::{LinkSet, LinkSplit, RandomLinkSplit};
