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
//! | function | output | empty segment | gradient |
//! |---|---|---|---|
//! | [`segment_sum`] | `[N, ...]` | 0 | `g[ids]` |
//! | [`segment_mean`] | `[N, ...]` | 0 | `g[ids] / count` |
//! | [`segment_prod`] | `[N, ...]` | 1 | product of the others (exact with zeros) |
//! | [`segment_max`] / [`segment_min`] | `[N, ...]` | `-inf` / `+inf` (Int: type min / max) | to the arg row only |
//! | [`segment_argmax`] / [`segment_argmin`] | `[N, ...]` Int | -1 | — |
//! | [`segment_max_or_constant`] / [`segment_min_or_constant`] | `[N, ...]` | `constant` | as max / min |
//! | [`segment_softmax`] | `[E, ...]` | — | `y (g - Σ g y)` |
//! | [`segment_logsumexp`] | `[N, ...]` | `-inf` | softmax; 0 for a column of only `-inf` rows |
//! | [`segment_variance`] / [`segment_std`] / [`segment_normalize`] | as in jraph | 0 | composite |
//! | [`segment_count`] | `[N]` Int | 0 | — |
//! | [`segment_variance_corrected`] / [`segment_std_corrected`] | `[N, ...]` | NaN (also below `correction + 1` rows) | composite; 0 where NaN for lack of rows |
//! | [`SegmentStatistics::weighted_mean`] / `weighted_variance` / `weighted_std` | `[N, ...]` | NaN (weights total 0) | composite, to data and weights |
//! | [`segment_topk`] | `[N, k, C]` values and rows | `∓inf`, -1 | to the selected rows |
//! | [`segment_quantile`] / [`segment_median`] | `[N, ...]` | NaN | to the witness rows |
//! | [`segment_count_nonzero`], [`segment_any`] / [`segment_all`] | `[N, ...]` Int / Bool | 0, false / true | — |
//! | [`SegmentStatistics::masked`] (every op over the eligible entries) | as the op | the identity; NaN for a mean | 0 at masked-out entries |
//! | [`partition_ids`], [`partition_sum`], [`partition_mean`], [`partition_max`], [`partition_min`], [`partition_softmax`] | ids `[E]`; `[P, ...]` | as above | as above |
//! | [`spmm`] (fused `Σ w · x[senders]` into receivers, per head) | `[N, D]` | 0 | `spmm` along reversed edges; `sddmm` for `w` |
//! | [`sddmm`] (per-edge, per-head dot products) | `[E, H]` | — | `spmm` into each side |
//! | [`attention_softmax`] (GAT's LeakyReLU logits from node scores, softmax per receiver) | `[E, H]` | — | one fused softmax + LeakyReLU backward, then segment sums into each side |
//! | [`SegmentPlan`] methods | as the free function | as the free function | as the free function, through the same plan |
//! | [`elu`] (element-wise, GAT's activation; not a segment op) | `x`'s shape | — | `1` where `x > 0`, `alpha · e^x` elsewhere |
//! | [`linear`] (a linear layer's `x · W + b`; not a segment op) | `[..., d_output]` | — | `grad · Wᵀ`, `xᵀ · grad`, `Σ grad` |
//!
//! - **Sizes are explicit.** `num_segments` is always given, never inferred from the ids;
//!   partition helpers read the number of partitions and the length from shapes, and
//!   [`attention_softmax`] its receivers from the rows of `dst`.
//! - **Real reductions.** Occupied segments always reduce their rows, including `±inf`; NaN in
//!   gives NaN out for sum, mean, max, min and softmax. Empty segments get the identity.
//! - **Ties.** `segment_argmax/argmin` return the smallest row index (the first NaN when a column
//!   holds NaN); the gradient of max/min flows to that single row. Empty segments receive and
//!   pass no gradient and never create NaN gradients.
//! - **Softmax** is shifted by the segment maximum (stable for logits of ±1e4); one row gives 1;
//!   a column holding NaN or `+inf`, or only `-inf`, gives NaN (as torch and jax).
//! - **Dtypes.** Float data (f32, f64; other float dtypes take the composite path) for every op;
//!   Int data for sum, prod, max, min, argmax, argmin (wrapping arithmetic); ids i32 or i64.
//!   Arguments and counts come back in the ids' dtype.
//! - **Bad ids.** Never undefined behaviour nor an access out of bounds, forward or backward.
//!   The CPU kernels panic with a message naming the bad id and `num_segments`; the wgpu kernels
//!   and the composite default drop rows with out-of-range ids (their softmax output is 0 on
//!   wgpu, unspecified on the composite path, and their gradient is 0).
//!   [`validate_segment_ids`] and [`SegmentPlan::new`] return a typed [`SegmentError`] for
//!   callers who want a `Result`; a plan's ops never see a bad id, on any backend.
//! - **Determinism.** CPU results are bitwise identical whatever the number of threads: each
//!   segment of up to 4,096 rows is reduced by one task in the original row order, a longer one
//!   in chunks of 4,096 rows in parallel whose partials combine in a binary tree fixed by the
//!   segment's length (so one huge segment uses every core), with no atomics. Sorted ids are
//!   detected in the same O(E) pass that checks the ranges and skip the counting sort;
//!   unplanned sums and extremes over unsorted ids with narrow rows skip it too (on up to
//!   four threads): each thread streams every row in row order and folds those of its own
//!   range of segments (the same bits). On wgpu,
//!   sorted ids take CSR kernels that reduce in row order (sums bitwise equal to the CPU
//!   kernels' for segments of up to 4,096 rows), and so do unsorted ids through a
//!   [`SegmentPlan`] (its permutation puts the rows in grouped order first: planned sums,
//!   extremes, softmax, `spmm` and attention are repeatable, and sums, extremes and `spmm`
//!   equal the CPU's bits). Unsorted ids without
//!   a plan take atomics, where max, min, their arguments and counts are still exact, but the
//!   last bits of a float sum (and of mean, softmax, logsumexp) may change from run to run.
//! - **Masks and statistics.** [`SegmentStatistics::masked`] takes a Bool mask (`[E]` or the data's
//!   shape) and gives every op over the eligible entries only ([`Masked`]): fills 0 / 1 / `∓inf`,
//!   means and variances over the eligible count, NaN for a mean of nothing, -1 for its
//!   argument, 0 for a fully masked softmax; masked-out entries get exactly zero gradient.
//!   [`segment_variance_corrected`] / [`segment_std_corrected`] take an explicit correction
//!   (NaN below `correction + 1` rows); weighted mean / variance / std over
//!   [`SegmentWeights`] (checked once); [`segment_topk`], [`segment_quantile`] (numpy's
//!   interpolations) and [`segment_median`]; [`segment_count_nonzero`], [`segment_any`],
//!   [`segment_all`]. Composed from the core ops, on every backend, except the masked sum: one
//!   backend op (`segment_sum_masked`) with a CPU kernel that skips the left-out entries as it
//!   reads them (the bits of the filled data's sum).
//! - **Strided inputs.** On Flex, the reductions and softmax read a row or column slice (any
//!   layout whose rows are each contiguous) in place at its row stride, with the bits of a
//!   contiguous copy; other layouts, NdArray views and the fused ops' inputs are copied first.
//! - **Execution context.** The CPU kernels run on the rayon pool of their caller: inside
//!   `ThreadPool::install`, on that pool's threads (the global pool otherwise), with the same
//!   bits for any pool size.
//!
//! # Backends
//! `NdArray` and `Flex` use the kernels in [`cpu`] for f32, f64, i32 and i64 (other dtypes take
//! the composite path); `Autodiff<B>` wraps any backend with the backward passes. With the `wgpu`
//! feature, `Cube` (wgpu, through `Fusion`, which records each op and runs the kernel lazily)
//! uses CubeCL kernels for f32 and i32 data with i32 or i64 ids; other dtypes (f64, f16, i64
//! data) take the composite defaults in [`composite`]. The CPU kernels group rows through a CSR
//! plan of the ids: the one a [`SegmentPlan`] holds, or one built for the call. On Linux, Flex's kernel
//! outputs of [`cpu::POOLED_OUTPUT_BYTES`] or more come from a pool of huge-page blocks that a
//! tensor gives back when dropped, so a training loop stops faulting in and clearing fresh pages
//! at every step; see [`cpu::set_output_pool_capacity`] and [`cpu::output_pool_stats`]. Burn's
//! own ops allocate through the global allocator; [`cpu::retain_freed_memory`] (opt-in, glibc)
//! has it reuse freed memory for large blocks too. Each wgpu call runs a small kernel that
//! flags unsorted ids and one that finds the segment offsets of sorted ids, then launches both
//! strategies; the flag, read on the device, lets one of them work and the other return at once,
//! so the host never waits:
//!
//! | | sorted ids | unsorted ids |
//! |---|---|---|
//! | sum, mean | one unit per output element, row order | float atomic add (or, without float atomics, one unit per column in row order) |
//! | prod | as above | one unit per column, row order |
//! | max, min, argmax, argmin | as above | integer atomic max/min on order-preserving keys of the f32 bits, then an atomic min over the rows attaining them |
//! | softmax | three passes per (segment, column) | keys max, `exp(x - max)`, atomic sum, divide |
//! | count | integer atomics | integer atomics |
//!
//! Backend-local behaviour: rows with out-of-range ids panic on the CPU backends and are dropped
//! on wgpu and by the composite path; float sums over unsorted ids are not bitwise repeatable on
//! wgpu; max / min of `-0.0` and `0.0` give `0.0` on wgpu (one key for both; the argument is still
//! the first of them); on wgpu use f32 (Burn 0.22's f64 `exp` on Mesa's lavapipe returns wrong
//! values, which breaks f64 softmax there).
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
