//! The generic test suite of burn-segment, run once per backend (see `common::targets`).

mod common;
mod cases;
mod gradients;
mod properties;
mod strategies;
