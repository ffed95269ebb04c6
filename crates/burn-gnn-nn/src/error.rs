//! The typed error of layer construction and use.

use thiserror::Error;

/// Why a layer could not be configured or applied.
#[derive(Debug, Error)]
pub enum NnError {
    /// A configuration value outside its documented range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// An input whose shape does not fit the layer.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A heterogeneous layer and its input disagree (a relation's node type without features,
    /// ...).
    #[error("heterogeneous input: {0}")]
    Hetero(String),
    /// Input values outside a function's domain (a NaN score, a metric of one class).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A graph error (missing features, ...).
    #[error(transparent)]
    Graph(#[from] burn_gnn_graph::GraphError),
}

/// What an infallible `init` does with its configuration's `check` (Burn's convention: a
/// layer's `init` returns the layer; a configuration outside its range panics with the same
/// message that `check` returns as a typed error, for callers that want to handle it).
pub(crate) fn expect_valid(check: Result<(), NnError>) {
    if let Err(e) = check {
        panic!("burn-gnn: {e}");
    }
}
