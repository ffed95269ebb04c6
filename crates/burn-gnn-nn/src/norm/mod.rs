//! Normalisation per graph of a batch: each graph's nodes normalised by their own statistics
//! (through the graph's node-to-graph plan), so a batch gives the per-graph results.
//!
//! Every norm returns a graph without nodes unchanged, and is finite on a graph of one node
//! (its variance is 0; `eps` keeps the division finite).

mod graph_norm;
mod layer_norm;
mod pair_norm;

pub use graph_norm::{GraphNorm, GraphNormConfig};
pub use layer_norm::{GraphLayerNorm, GraphLayerNormConfig};
pub use pair_norm::{PairNorm, PairNormConfig};

use burn::module::Param;
use burn::tensor::{Device, Tensor};

/// A `[d]` parameter of ones (a scale's identity).
fn ones(d: usize, device: &Device) -> Param<Tensor<1>> {
    burn::nn::Initializer::Ones.init([d], device)
}
