//! Graph containers for burn-gnn: [`GraphsTuple`] (jraph's batched-graph layout) and
//! [`HeteroGraph`] (several node and edge types), batching and padding, graph utilities (self
//! loops, coalescing, subgraphs, node reordering for locality, ...), and conversions (edge
//! lists, COO/CSR, dense adjacency, `petgraph`, and serde mirrors [`GraphData`] /
//! [`HeteroGraphData`] saved as JSON or a compact binary form).
//!
//! Sizes always come from tensor shapes: nothing here sums `n_node` on the device to learn how
//! many nodes there are. Operations that change the number of edges or nodes (self loops,
//! coalescing, subgraphs, unbatching, conversions) compute the new index lists on the host,
//! reading `senders`/`receivers`/`n_node`/`n_edge` once; feature tensors stay on the device.
//!
//! Every constructor validates and returns a typed [`GraphError`]; no user data makes these
//! functions panic.
//!
//! ```
//! use burn::tensor::{Device, Tensor};
//! use burn_gnn_graph::{GraphsTuple, batch};
//! let device = Device::flex();
//! let a = GraphsTuple::from_edge_list(&[(0, 1), (1, 2)], 3, &device).unwrap();
//! let b = GraphsTuple::from_edge_list(&[(1, 0)], 2, &device).unwrap();
//! let g = batch(&[a, b]).unwrap();
//! // The second graph's indices are offset by the first graph's 3 nodes.
//! assert_eq!(g.to_coo(), (vec![0, 1, 4], vec![1, 2, 3]));
//! let padded = g.pad_with_graphs(8, 4, 3).unwrap();
//! assert_eq!(padded.graph_mask().into_data().to_vec::<bool>().unwrap(), [true, true, false]);
//! assert_eq!(padded.unpad_with_graphs().to_coo(), g.to_coo());
//! ```
#![warn(missing_docs)]

mod batch;
mod builder;
mod codec;
mod compat;
mod convert;
mod data;
mod edge_subset;
mod error;
mod feature;
mod graphs_tuple;
mod hetero;
mod padding;
#[cfg(feature = "petgraph")]
mod petgraph_conv;
mod plans;
mod reorder;
mod sparse;
mod spatial;
mod transform;
pub mod transforms;

pub use batch::batch;
pub use builder::GraphsTupleBuilder;
pub use compat::gather_rows;
pub use convert::Csr;
pub use data::{FeatureData, FeatureSetData, FeatureValues, GraphData};
pub use error::{FeatureSetKind, GraphError};
pub use feature::{EdgeReduce, Feature, FeatureSet};
pub use graphs_tuple::GraphsTuple;
pub use hetero::{
    EDGE_TYPE, EdgeSet, EdgeSetData, EdgeType, HeteroGraph, HeteroGraphBuilder, HeteroGraphData,
    NODE_TYPE, NodeSet, NodeSetData,
};
#[cfg(feature = "petgraph")]
pub use petgraph_conv::FeatureRow;
pub use reorder::Permuted;
pub use sparse::SparseMatrix;
pub use spatial::{knn, knn_graph, radius, radius_graph};
pub use transform::{Flow, SelfLoopFill, SelfLoops, Subgraph, fully_connected_graph};
pub use transforms::{Compose, Transform};

/// The `petgraph` version the conversions use.
#[cfg(feature = "petgraph")]
pub use petgraph;
