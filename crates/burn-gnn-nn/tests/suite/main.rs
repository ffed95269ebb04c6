//! The burn-gnn-nn suite: every layer through one conformance harness, and against plain-Rust
//! f64 references on small graphs, on every backend this build enables.

mod aggregations;
mod common;
mod fused;
mod graph_network;
mod harness;
mod hetero;
mod hetero_reference;
mod link;
mod norms;
mod paper_layers;
mod pna;
mod point_cloud;
mod pooling;
mod zoo_layers;
