//! The backend-extension trait: the primitive segment ops every backend provides.

use burn::backend::{
    Backend, backend_extension,
    tensor::{FloatTensor, IntTensor},
};

use crate::composite;

/// A reduction that combines a segment's rows into one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentReduction {
    /// Sum; empty segments give 0.
    Sum,
    /// Product; empty segments give 1.
    Prod,
    /// Maximum; empty segments give `-inf` (integers: the type's minimum).
    Max,
    /// Minimum; empty segments give `+inf` (integers: the type's maximum).
    Min,
}

/// Which extreme [`SegmentBackend::segment_extreme`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegmentExtreme {
    /// Maximum and argmax.
    Max,
    /// Minimum and argmin.
    Min,
}

/// Segment reductions as a Burn backend extension.
///
/// Every method reduces along dim 0: `data` is `[E, ...]`, `segment_ids` is `[E]` (i32 or i64) and
/// the result is `[num_segments, ...]` (softmax: `[E, ...]`). Each method has a composite default
/// built from Burn primitives, so every backend works; the CPU backends (NdArray, Flex) override
/// them with deterministic rayon kernels and `Autodiff` with hand-written backward passes.
///
/// Call the free functions of this crate ([`segment_sum`](crate::segment_sum), ...) rather than
/// these methods.
#[backend_extension(
    Autodiff,
    NdArray,
    Flex,
    Cube: cfg(feature = "wgpu"),
    Fusion: cfg(feature = "wgpu")
)]
pub trait SegmentBackend: Backend {
    /// Sum, product, max or min of each segment's float rows (values only).
    #[fusion(default)]
    fn segment_reduce(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        composite::float_reduce::<Self>(data, segment_ids, num_segments, reduction)
    }

    /// Max or min of each segment's float rows, with the row index attaining it (in the ids'
    /// dtype; -1 for empty segments, the smallest index on ties, the first NaN if any).
    #[fusion(default)]
    fn segment_extreme(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        composite::float_extreme::<Self>(data, segment_ids, num_segments, extreme)
    }

    // ANCHOR: trait_softmax
    /// Softmax over the rows of each segment, `[E, ...] -> [E, ...]`.
    #[fusion(default)]
    fn segment_softmax(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        composite::softmax::<Self>(data, segment_ids, num_segments)
    }
    // ANCHOR_END: trait_softmax

    /// Sum, product, max or min of each segment's integer rows (wrapping arithmetic).
    #[fusion(default)]
    fn int_segment_reduce(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        composite::int_reduce::<Self>(data, segment_ids, num_segments, reduction)
    }

    /// Max or min of each segment's integer rows with the row index attaining it.
    #[fusion(default)]
    fn int_segment_extreme(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        composite::int_extreme::<Self>(data, segment_ids, num_segments, extreme)
    }

    /// Number of rows in each segment, `[N]` in the ids' dtype.
    #[fusion(default)]
    fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
        composite::count::<Self>(segment_ids, num_segments)
    }
}
