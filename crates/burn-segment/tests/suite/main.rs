//! The generic test suite of burn-segment, run once per backend (see `common::targets`).

mod common;
mod cases;
mod fused;
mod gradients;
mod large;
mod properties;
mod strategies;
