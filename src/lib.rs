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
//! - [`data`] (`burn-gnn-data`): Planetoid (Cora and CiteSeer embedded, PubMed downloaded and
//!   verified), Zachary's karate club, seeded synthetic graphs.
//! - [`train`]: the papers' early-stopping rules and accuracy for a loop of one's own; with
//!   feature `train`, training under burn-train's `Learner` on one device or several.
//!
//! A two-layer GCN on the karate club, forward and backward:
//!
//! ```
//! use burn::tensor::Device;
//! use burn_gnn::data::KarateClub;
//! use burn_gnn::nn::GcnConfig;
//!
//! let device = Device::flex().autodiff();
//! let karate = KarateClub::load();
//! let graph = karate.graph(&device).unwrap();
//! let x = graph.node_tensor::<2>().unwrap(); // identity features, [34, 34]
//! let model = GcnConfig::new(34, 16, KarateClub::NUM_CLASSES).init(&device);
//! let logits = model.forward(x, &graph);
//! assert_eq!(logits.dims(), [34, 4]);
//! let grads = logits.sum().backward();
//! assert!(model.convs[0].weight.grad(&grads).is_some());
//! ```
//!
//! The book (`book/`, built with `mdbook build book`) explains the semantics and walks through
//! the examples.
#![warn(missing_docs)]

pub use burn_gnn_data as data;
pub use burn_gnn_graph as graph;
pub use burn_gnn_nn as nn;
pub use burn_segment as segment;

pub mod train;
