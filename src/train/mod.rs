//! Training this project's models.
//!
//! Always available: the papers' early-stopping rules ([`StoppingRule`], [`EarlyStopping`])
//! for a training loop of one's own, and the figures a run reports ([`accuracy`],
//! [`mean_std`]). The examples `gat_cora`, `gcn_cora` and `hetero_academic` train this way.
//!
//! With feature `train`: burn-train's [`Learner`](burn::train::Learner), with its metrics,
//! terminal dashboard, checkpoints and execution strategies (one device, several devices,
//! distributed data parallel). Three pieces connect a GNN to burn-train:
//!
//! - **Batches**: [`NodeBatch`] (a graph, its node features, the rows to score and their
//!   labels) and [`GraphBatch`] (a batch of graphs and one label per graph).
//! - **Loaders** implementing burn's [`DataLoader`](burn::data::dataloader::DataLoader):
//!   [`SampledNodeLoader`] (GraphSAGE neighbour sampling through
//!   [`NeighborLoader`](burn_gnn_data::NeighborLoader)), [`FullGraphLoader`] (one whole graph
//!   per epoch, the transductive setting of Cora), and [`GraphBatcher`], a burn
//!   [`Batcher`](burn::data::dataloader::batcher::Batcher) for burn's own `DataLoaderBuilder`
//!   over a dataset of small graphs. Each can be split across devices (`slice`), which the
//!   multi-device strategy does.
//! - **Wrappers** implementing burn-train's `TrainStep` and `InferenceStep` with
//!   cross-entropy and a [`ClassificationOutput`](burn::train::ClassificationOutput) (so `AccuracyMetric` and `LossMetric`
//!   apply): [`NodeClassification`] around any [`NodeModel`], [`GraphClassification`] around
//!   any [`GraphModel`], and [`LinkPrediction`], a graph autoencoder around any [`NodeModel`]
//!   scoring node pairs ([`LinkBatch`], [`FullGraphLinkLoader`], [`SampledLinkLoader`]; burn-train's
//!   `AurocMetric::binary()` reports its ROC AUC). The thin models `Gcn`, `Gat`, `GraphSage`
//!   and `Gin` are [`NodeModel`]s.
//!
//! `examples/graphsage_learner.rs` trains GraphSAGE on sampled mini-batches of a million-node
//! graph this way, and the book's chapter "Training with burn-train, on one device or several"
//! walks through it.
//!
//! # Devices
//! `ExecutionStrategy::multi(devices, MultiDeviceOptim::OptimMainDevice)` runs one worker per
//! device; each takes its own share of the loader's items (a contiguous part of the seeds,
//! rows or graphs), and the gradients are summed on the first device before one optimizer
//! step. It moves gradients with `to_device` and needs no collective operations, so it runs on
//! any backend, also on one CPU device listed twice (how it is tested here). Distributed data
//! parallel (`ExecutionStrategy::ddp`) all-reduces gradients with Burn's collectives, which in
//! Burn 0.22 only the CUDA backend implements; the same chapter says how to launch it.

#[cfg(feature = "train")]
mod learner;
#[cfg(feature = "train")]
mod link_loader;
#[cfg(feature = "train")]
mod loaders;
mod metrics;
mod stopping;

/// The trait [`NodeClassification`] wraps (defined in `burn-gnn-nn`, so that the link
/// prediction models take the same encoders).
#[cfg(feature = "train")]
pub use burn_gnn_nn::NodeModel;
#[cfg(feature = "train")]
pub use learner::{
    GraphBatch, GraphClassification, GraphModel, LinkBatch, LinkPrediction, NodeBatch,
    NodeClassification,
};
#[cfg(feature = "train")]
pub use link_loader::{FullGraphLinkLoader, SampledLinkLoader};
#[cfg(feature = "train")]
pub use loaders::{FullGraphLoader, GraphBatcher, GraphItem, SampledNodeLoader};
pub use metrics::{accuracy, mean_std};
pub use stopping::{EarlyStopping, StoppingRule, Verdict};
