//! Link prediction data: negative sampling, train / validation / test edge splits, and
//! neighbour-sampled mini-batches of edges.

mod hetero_split;
mod loader;
mod negative;
mod pair_space;
mod split;

pub use loader::{LinkNeighborLoader, LinkSampledBatch};
pub use negative::{
    NegativeSampler, NegativeSampling, Structured, negative_sampling, structured_negative_sampling,
};
pub use pair_space::NegativeMethod;
pub use split::{LinkSet, LinkSplit, RandomLinkSplit};

/// An index tensor's values on the host, as `i64` whatever the backend's int type.
fn host_ints(t: &burn::tensor::Tensor<1, burn::tensor::Int>) -> Vec<i64> {
    t.clone()
        .into_data()
        .convert::<i64>()
        .iter::<i64>()
        .collect()
}
