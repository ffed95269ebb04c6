//! The public segment functions, on Burn's high-level `Tensor`.

use burn::tensor::{Int, Tensor};

use crate::kind::SegmentKind;
use crate::segment_statistics::SegmentStatistics;
use crate::segments::{SegmentIds, Segments};
use crate::{SegmentExtreme, SegmentReduction};

/// The ids of a free-function call, planned per call by the backend.
fn ids(segment_ids: Tensor<1, Int>, num_segments: usize) -> SegmentIds {
    SegmentIds::new(segment_ids, num_segments)
}

/// Reduces the rows of `data` that share a segment id with `reduction`.
///
/// The general form of [`segment_sum`], [`segment_prod`], [`segment_max`] and [`segment_min`].
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// If `segment_ids` does not have one entry per row of `data`; on CPU backends if an id lies
/// outside `[0, num_segments)` (see [`validate_segment_ids`](crate::validate_segment_ids)).
pub fn segment_reduce<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    reduction: SegmentReduction,
) -> Tensor<D, K> {
    ids(segment_ids, num_segments).reduce(data, reduction)
}

/// Sum of the rows in each segment; empty segments give 0.
///
/// `out[s] = Σ_{e : segment_ids[e] = s} data[e]`. Float and Int data.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::flex();
/// let data = Tensor::<2>::from_floats([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], &device);
/// let ids = Tensor::<1, Int>::from_ints([0, 2, 0], &device);
/// let out = burn_segment::segment_sum(data, ids, 3);
/// assert_eq!(out.into_data().to_vec::<f32>().unwrap(), [6.0, 8.0, 0.0, 0.0, 3.0, 4.0]);
/// ```
pub fn segment_sum<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, K> {
    segment_reduce(data, segment_ids, num_segments, SegmentReduction::Sum)
}

/// Product of the rows in each segment; empty segments give 1.
///
/// On the CPU backends a float product keeps its partial as a mantissa and an integer exponent
/// and rounds once at the end: no intermediate overflows to inf or underflows to 0 where the
/// product itself is finite and normal (`[2^600, 2^600, 2^-600, 2^-600]` gives 1, not inf), and
/// where the plain row-order product stays in the normal range the bits are the same. A column
/// with a zero, subnormal, infinite or NaN factor is multiplied in row order, so IEEE rules
/// decide. wgpu and the composite path multiply in row order (or atomically, for unsorted ids
/// on wgpu). Integers wrap.
///
/// The gradient is exact when a segment holds zeros (no division by zero). Float and Int data.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_prod<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, K> {
    segment_reduce(data, segment_ids, num_segments, SegmentReduction::Prod)
}

/// Maximum of the rows in each segment, column-wise; empty segments give `-inf` (Int: the
/// type's minimum). NaN propagates; the gradient flows to the single argmax row.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_max<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, K> {
    // Values only: no arguments are computed (a tracked call still keeps them for backward).
    segment_reduce(data, segment_ids, num_segments, SegmentReduction::Max)
}

/// Minimum of the rows in each segment; empty segments give `+inf` (Int: the type's maximum).
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_min<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, K> {
    // Values only: no arguments are computed (a tracked call still keeps them for backward).
    segment_reduce(data, segment_ids, num_segments, SegmentReduction::Min)
}

/// [`segment_max`] and [`segment_argmax`] in one pass.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> (`[num_segments, ...]`, `[num_segments, ...]` Int).
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_max_with_indices<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    ids(segment_ids, num_segments).extreme(data, SegmentExtreme::Max)
}

/// [`segment_min`] and [`segment_argmin`] in one pass.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> (`[num_segments, ...]`, `[num_segments, ...]` Int).
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_min_with_indices<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    ids(segment_ids, num_segments).extreme(data, SegmentExtreme::Min)
}

/// Row index (into `data`) of each segment's maximum, column-wise: the smallest index on ties,
/// the first NaN if the column holds one, -1 for empty segments.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]` Int.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_argmax<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, Int> {
    segment_max_with_indices(data, segment_ids, num_segments).1
}

/// Row index of each segment's minimum; as [`segment_argmax`].
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]` Int.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_argmin<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, Int> {
    segment_min_with_indices(data, segment_ids, num_segments).1
}

/// Number of ids equal to each segment.
///
/// # Shapes
/// `segment_ids: [E]` -> `[num_segments]` Int.
///
/// # Panics
/// On CPU backends if an id lies outside `[0, num_segments)`.
pub fn segment_count(segment_ids: Tensor<1, Int>, num_segments: usize) -> Tensor<1, Int> {
    ids(segment_ids, num_segments).count()
}

/// Mean of the rows in each segment; empty segments give 0.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_mean<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    ids(segment_ids, num_segments).mean(data)
}

/// [`segment_max`], with `constant` in empty segments instead of `-inf`.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_max_or_constant<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    constant: f64,
) -> Tensor<D> {
    ids(segment_ids, num_segments).max_or_constant(data, constant)
}

/// [`segment_min`], with `constant` in empty segments instead of `+inf`.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_min_or_constant<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    constant: f64,
) -> Tensor<D> {
    ids(segment_ids, num_segments).min_or_constant(data, constant)
}

/// Softmax of `logits` within each segment, column-wise (max-shifted, stable for ±1e4).
///
/// `out[e] = exp(x[e] - m[s]) / Σ_{e' ∈ s} exp(x[e'] - m[s])` with `s = segment_ids[e]`.
/// A segment of one row gives 1. A column holding NaN or `+inf`, or only `-inf`, gives NaN in
/// every row of that segment (as torch and jax do).
///
/// On the Flex backend, `logits` that nothing else references (passed without a `clone()`
/// kept elsewhere) are overwritten with the result, which saves allocating the output; a
/// tensor still held elsewhere is never changed.
///
/// # Shapes
/// `logits: [E, ...]`, `segment_ids: [E]` -> `[E, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_softmax<const D: usize>(
    logits: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    ids(segment_ids, num_segments).softmax(logits)
}

/// `log Σ exp(x)` over each segment's rows; empty segments give `-inf`.
///
/// Computed as `m + log Σ exp(x - m)` with the segment maximum `m` (0 where it is not
/// finite), so it is stable and `+inf` in a segment gives `+inf`. Its gradient is the
/// [`segment_softmax`] of the rows, except in a column whose rows are all `-inf`: there the
/// output is `-inf` whatever finite change the rows see, and their gradient is 0 (not the NaN
/// of `0 / 0`), as for an empty segment.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_logsumexp<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    ids(segment_ids, num_segments).logsumexp(data)
}

/// Population variance of each segment's rows (two-pass, as jraph); empty segments give 0.
///
/// `var[s] = mean_{e ∈ s} (x[e] - mean[s])²`.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_variance<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    ids(segment_ids, num_segments).variance(data)
}

/// Standard deviation `sqrt(segment_variance)`; empty segments give 0.
///
/// As for `sqrt` at 0, the gradient of a segment whose rows are all equal is not finite.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_std<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    segment_variance(data, segment_ids, num_segments).sqrt()
}

/// Normalises each row by its segment's mean and variance (as jraph's `segment_normalize`).
///
/// `out[e] = (x[e] - mean[s]) / sqrt(var[s] + eps)` with `s = segment_ids[e]`.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[E, ...]`.
///
/// # Panics
/// As [`segment_reduce`].
pub fn segment_normalize<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    eps: f64,
) -> Tensor<D> {
    ids(segment_ids, num_segments).normalize(data, eps)
}
