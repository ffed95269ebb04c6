//! The burn-gnn-graph suite: hand-computed cases and property tests, on every backend this
//! build enables (flex, ndarray, autodiff<flex>; wgpu with the `wgpu` feature).

mod cases;
mod common;
mod convert;
mod hetero;
mod plans;
mod properties;
mod reorder;
mod spatial;
mod transforms;
