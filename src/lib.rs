//! Graph neural networks in pure Rust on [Burn](https://burn.dev).
//!
//! `burn-gnn` is the facade of the workspace; each part is also usable on its own:
//!
//! - [`segment`] (`burn-segment`): segment and partition reductions (`segment_sum`,
//!   `segment_max`, `segment_softmax`, ...) as custom Burn ops with CPU kernels and
//!   hand-written backward passes.
//! - [`graph`] (`burn-gnn-graph`): `GraphsTuple`, batching, padding, graph utilities and
//!   conversions.
//! - [`nn`] (`burn-gnn-nn`): message-passing layers (GCN, GAT, GraphSAGE, GIN, ...), jraph's
//!   `GraphNetwork`, aggregations and readouts.
//! - [`data`] (`burn-gnn-data`): datasets (in progress).
#![warn(missing_docs)]

pub use burn_gnn_data as data;
pub use burn_gnn_graph as graph;
pub use burn_gnn_nn as nn;
pub use burn_segment as segment;
