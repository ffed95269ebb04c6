//! The generic test suite of burn-segment, run once per backend (see `common::targets`).

mod activation;
mod cases;
mod common;
mod fused;
mod gradients;
mod large;
mod linear;
mod masked;
mod pairwise;
mod planned;
mod properties;
mod strategies;
mod strided;
mod thread_pool;
mod topk;
