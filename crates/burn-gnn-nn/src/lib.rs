//! Message-passing layers for burn-gnn: jraph's [`GraphNetwork`] block with pluggable update
//! functions, [`Aggregation`]s as values, the convolutions people use — [`GcnConv`],
//! [`GatConv`], [`SageConv`], [`GinConv`] — each a Burn `Module` that drops into any model, and
//! readouts ([`global_add_pool`], [`global_mean_pool`], [`global_max_pool`]), and layers for
//! heterogeneous graphs ([`HeteroConv`], [`RgcnConv`], [`HgtConv`], [`HanConv`], [`HeteroSage`]).
//! For link prediction: graph autoencoders ([`Gae`], [`Vgae`]) over any [`NodeModel`], the
//! [`InnerProductDecoder`], and exact [`roc_auc`] / [`average_precision`].
//!
//! Every layer takes node features `x: [N, d_input]` and a [`GraphsTuple`](burn_gnn_graph::GraphsTuple)
//! (messages flow `senders -> receivers`), follows the PyG layer of the same name and its
//! defaults, and gives finite outputs and gradients on isolated nodes, graphs without edges and
//! empty graphs. Aggregation happens on the device through `burn-segment`; no layer reads
//! anything back to the host.
//!
//! ```
//! use burn::tensor::{Device, Tensor};
//! use burn_gnn_graph::GraphsTuple;
//! use burn_gnn_nn::GcnConvConfig;
//! let device = Device::flex();
//! let graph = GraphsTuple::from_edge_list(&[(0, 1), (1, 2), (2, 0)], 3, &device).unwrap();
//! let conv = GcnConvConfig::new(4, 8).init(&device);
//! let out = conv.forward(Tensor::<2>::ones([3, 4], &device), &graph);
//! assert_eq!(out.dims(), [3, 8]);
//! ```
#![warn(missing_docs)]

mod aggregation;
mod compat;
mod conv;
mod error;
mod gps_model;
mod graph_network;
mod hetero;
mod interpolate;
mod jraph;
mod link;
mod message_passing;
mod models;
mod node_model;
mod norm;
mod pooling;

pub use aggregation::Aggregation;
pub use compat::dropout::dropout;
pub use conv::*;
pub use error::NnError;
pub use gps_model::{GraphGps, GraphGpsConfig};
pub use graph_network::{
    ConcatMlp, ConcatMlpConfig, EdgeUpdate, GlobalUpdate, GraphNetGat, GraphNetwork, NodeUpdate,
};
pub use hetero::han::{HanConv, HanConvConfig};
pub use hetero::hgt::{HgtConv, HgtConvConfig};
pub use hetero::rgcn::{RgcnConv, RgcnConvConfig};
pub use hetero::sage::{HeteroSage, HeteroSageConfig};
pub use hetero::{HeteroConv, HeteroLayer, HeteroMerge, NodeFeatures};
pub use interpolate::knn_interpolate;
pub use jraph::{
    DeepSets, GraphConvolution, GraphMapFeatures, InteractionNetwork, JraphGat, RelationNetwork,
};
pub use link::{
    Gae, InnerProductDecoder, MAX_LOGSTD, Pairs, Vgae, VgaeEmbedding, average_precision,
    bce_with_logits, kl_loss, recon_loss, roc_auc,
};
pub use message_passing::{BipartiteConv, EdgeInputs, MessagePassing, NodePair, RelationEdges};
pub use models::{
    Activation, Gat, GatConfig, Gcn, GcnConfig, Gin, GinConfig, GraphSage, GraphSageConfig,
    JumpingKnowledge, StackHead,
};
pub use node_model::NodeModel;
pub use norm::{
    GraphLayerNorm, GraphLayerNormConfig, GraphNorm, GraphNormConfig, PairNorm, PairNormConfig,
};
pub use pooling::{
    AttentionPool, AttentionPoolConfig, PoolSelection, PoolSize, Pooled, SagPooling,
    SagPoolingConfig, Set2Set, Set2SetConfig, SoftmaxAggregation, TopKPooling, TopKPoolingConfig,
    global_add_pool, global_max_pool, global_mean_pool, global_sort_pool,
};
