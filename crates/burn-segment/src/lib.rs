//! Segment and partition reductions as custom [Burn](https://burn.dev) backend ops.
//!
//! A segment reduction combines the rows of `data: [E, ...]` that share an id in
//! `segment_ids: [E]` into `[num_segments, ...]`: the aggregation step of every message-passing
//! GNN (jraph's `segment_sum`, PyG's `scatter`). The ops are a backend extension
//! ([`SegmentBackend`]) with a composite default built from Burn primitives, so every backend
//! works; the CPU backends (NdArray, Flex) run hand-written deterministic rayon kernels, wgpu
//! (and every CubeCL runtime) runs hand-written CubeCL kernels, and `Autodiff` has a
//! hand-written backward for every op. Each op is one method, whose ids are one
//! [`SegmentIndex`]: given for the call or a [`SegmentPlan`]'s.
//!
//! ```
//! use burn::tensor::{Device, Int, Tensor};
//! use burn_segment::{segment_max, segment_softmax, segment_sum};
//!
//! let device = Device::flex();
//! // Three edges into nodes 0, 0 and 2 of a 3-node graph.
//! let messages = Tensor::<2>::from_floats([[1.0], [3.0], [5.0]], &device);
//! let receivers = Tensor::<1, Int>::from_ints([0, 0, 2], &device);
//! let summed = segment_sum(messages.clone(), receivers.clone(), 3);
//! assert_eq!(summed.into_data().to_vec::<f32>().unwrap(), [4.0, 0.0, 5.0]);
//! let max = segment_max(messages.clone(), receivers.clone(), 3);
//! assert_eq!(max.into_data().to_vec::<f32>().unwrap(), [3.0, f32::NEG_INFINITY, 5.0]);
//! let attention = segment_softmax(messages, receivers, 3);
//! let a = attention.into_data().to_vec::<f32>().unwrap();
//! assert!((a[0] + a[1] - 1.0).abs() < 1e-6 && a[2] == 1.0);
//! ```
//!
//! # Plans
//!
//! Ids reduced over more than once (a graph's receivers, a batch's graph ids) are best planned
//! once: [`SegmentPlan::new`] checks them (a [`SegmentError`] instead of a panic later), groups
//! them (CSR offsets and, for unsorted ids, a stable permutation) and keeps the result on the
//! ids' device. Its methods ([`SegmentPlan::sum`], [`SegmentPlan::softmax`], ..., and the fused
//! [`Segments::spmm`], [`Segments::sddmm`], [`Segments::attention_softmax`] over plans) give
//! the free functions' results (bit for bit on the CPU backends) without validating, sorting or
//! looking anything up, and their backward passes reuse the same plan. A free function plans its
//! ids on every call; nothing is cached behind the caller's back.
//!
//! # The contract
//!
//! Each op's output shape, its value for an empty segment, its gradient and the rules behind
//! them — explicit sizes, identities, NaN, ties, dtypes, bad ids, determinism, strided inputs,
//! the rayon pool — are one table and one list in the book's
//! [Segment operations](https://github.com/burn-gnn/burn-gnn/blob/main/book/src/segment-ops.md)
//! chapter, and each function's documentation states its own part. In short: `num_segments` is
//! always given, never inferred; an empty segment gets the op's identity; NaN in gives NaN out;
//! ties go to the smallest row; CPU results are bitwise identical for any number of threads; a
//! bad id never reads or writes out of bounds (the CPU kernels panic naming it, wgpu and the
//! composite path drop its row), and [`validate_segment_ids`] and [`SegmentPlan::new`] return a
//! typed [`SegmentError`] for callers who want a `Result`.
//!
//! # Backends
//! `NdArray` and `Flex` use the kernels in [`cpu`] for f32, f64, i32 and i64; `Autodiff<B>`
//! wraps any backend with the backward passes. With the `wgpu` feature, `Cube` (through
//! `Fusion`) uses CubeCL kernels for f32 and i32 data with i32 or i64 ids. Other dtypes take the
//! composite defaults in [`composite`]. Flex's large kernel outputs come from a pool of
//! huge-page blocks on Linux ([`cpu::set_output_pool_capacity`]). The kernels each backend
//! runs, sorted ids and not, and what stays backend-local are in the book's
//! [Backends and performance](https://github.com/burn-gnn/burn-gnn/blob/main/book/src/backends.md)
//! chapter; how an op is written, in
//! [How a segment op is built](https://github.com/burn-gnn/burn-gnn/blob/main/book/src/custom-kernel.md).
#![warn(missing_docs)]
#![allow(deprecated)] // burn::backend::NdArray is deprecated in favour of Flex; we support both.

mod activation;
mod api;
mod autodiff;
mod backend;
pub mod cpu;
#[cfg(feature = "cube")]
mod cube;
mod dense;
mod fused;
mod host;
mod kind;
mod linear;
mod masked;
pub mod pairwise;
mod partition;
mod plan;
mod quantile;
pub mod reference;
mod segment_statistics;
mod segments;
mod shape;
mod statistics;
mod topk;
mod validate;
mod weights;
#[cfg(feature = "wgpu")]
mod wgpu_probe;

pub use activation::elu;
pub use api::*;
pub use backend::{SegmentBackend, SegmentExtreme, SegmentReduction, composite};
#[cfg(feature = "cube")]
#[doc(hidden)]
pub use cube::wgpu_kernel_calls;
pub use dense::DenseBackend;
pub use fused::{attention_softmax, sddmm, spmm};
pub use kind::SegmentKind;
pub use linear::linear;
pub use masked::Masked;
pub use partition::*;
pub use plan::{SegmentIndex, SegmentPlan, SegmentPlanPrimitive};
pub use quantile::{QuantileInterpolation, segment_median, segment_quantile};
pub use segment_statistics::SegmentStatistics;
pub use segments::{SegmentIds, Segments};
pub use statistics::*;
pub use topk::{TopkBackend, segment_topk};
pub use validate::*;
pub use weights::SegmentWeights;
#[cfg(feature = "wgpu")]
pub use wgpu_probe::{REQUIRE_WGPU_ENV, WgpuUnavailable, check_wgpu, wgpu_test_targets};
