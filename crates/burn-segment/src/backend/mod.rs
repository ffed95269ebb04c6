//! The backend-extension trait: the primitive segment ops every backend provides.

pub mod composite;

use burn::backend::{
    Backend, backend_extension,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};

#[cfg(feature = "cube")]
use burn::tensor::Shape;

use crate::plan::SegmentIndex;
#[cfg(feature = "cube")]
use crate::shape::rows_shape;

/// What `Fusion` records for `segment_extreme`: values like the data, arguments like the ids.
#[cfg(feature = "cube")]
fn extreme_specs(
    data: &burn::backend::fusion::custom::TensorSpec,
    index: &crate::plan::SegmentIndexMetadata,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    use burn::backend::fusion::custom::TensorSpec;
    let shape = rows_shape(&data.shape, index.num_segments());
    (
        TensorSpec::new(shape.clone(), data.dtype),
        TensorSpec::new(shape, index.segment_ids().dtype),
    )
}

/// What `Fusion` records for `segment_count`: `[N]` in the ids' dtype.
#[cfg(feature = "cube")]
fn count_spec(
    index: &crate::plan::SegmentIndexMetadata,
) -> burn::backend::fusion::custom::TensorSpec {
    let ids = index.segment_ids();
    burn::backend::fusion::custom::TensorSpec::new(Shape::new([index.num_segments()]), ids.dtype)
}

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

impl SegmentExtreme {
    /// The reduction that computes this extreme's values alone.
    pub(crate) fn reduction(self) -> SegmentReduction {
        match self {
            SegmentExtreme::Max => SegmentReduction::Max,
            SegmentExtreme::Min => SegmentReduction::Min,
        }
    }
}

/// Segment reductions as a Burn backend extension.
///
/// Every method reduces along dim 0: `data` is `[E, ...]`, the [`SegmentIndex`] holds `[E]` ids
/// (i32 or i64) with the number of segments, given for the call or a plan's, and the result is
/// `[num_segments, ...]` (softmax: `[E, ...]`). Each method has a composite default built from
/// Burn primitives, so every backend works (the defaults read a plan's ids and forget its
/// grouping); the CPU backends (NdArray, Flex) override them with deterministic rayon kernels,
/// the CubeCL backends with their kernels, and `Autodiff` with hand-written backward passes.
///
/// Call the free functions of this crate ([`segment_sum`](crate::segment_sum), ...) or the
/// [`Segments`](crate::Segments) methods rather than these.
#[backend_extension(
    Autodiff,
    NdArray,
    Flex,
    Cube: cfg(feature = "cube"),
    Fusion: cfg(feature = "cube")
)]
pub trait SegmentBackend: Backend {
    /// Sum, product, max or min of each segment's float rows (values only).
    #[fusion(dtype = data, shape = rows_shape(data, index.num_segments()))]
    fn segment_reduce(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        let (ids, n) = index.into_ids();
        composite::float_reduce::<Self>(data, ids, n, reduction)
    }

    /// Max or min of each segment's float rows, with the row index attaining it (in the ids'
    /// dtype; -1 for empty segments, the smallest index on ties, the first NaN if any).
    #[fusion(meta = |data, index, _extreme| extreme_specs(data, index))]
    fn segment_extreme(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (ids, n) = index.into_ids();
        composite::float_extreme::<Self>(data, ids, n, extreme)
    }

    // ANCHOR: trait_softmax
    /// Softmax over the rows of each segment, `[E, ...] -> [E, ...]`.
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        let (segment_ids, num_segments) = index.into_ids();
        composite::softmax::<Self>(data, segment_ids, num_segments)
    }
    // ANCHOR_END: trait_softmax

    /// Sum, product, max or min of each segment's integer rows (wrapping arithmetic).
    #[fusion(dtype = data, shape = rows_shape(data, index.num_segments()))]
    fn int_segment_reduce(
        data: IntTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        let (ids, n) = index.into_ids();
        composite::int_reduce::<Self>(data, ids, n, reduction)
    }

    /// Max or min of each segment's integer rows with the row index attaining it.
    #[fusion(meta = |data, index, _extreme| extreme_specs(data, index))]
    fn int_segment_extreme(
        data: IntTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        let (ids, n) = index.into_ids();
        composite::int_extreme::<Self>(data, ids, n, extreme)
    }

    /// Row `e` of the result is row `segment_ids[e]` of `data`: `[N, ...] -> [E, ...]`, the
    /// adjoint of a segment sum, used by the backward passes to bring a segment's gradient back to
    /// its rows. Given ids out of range panic on the CPU backends and give zero rows elsewhere
    /// (never a read out of bounds); a plan's are in range by construction.
    #[fusion(dtype = data, shape = rows_shape(data, index.segment_ids().shape[0]))]
    fn segment_gather(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        composite::gather::<Self>(data, index.into_ids().0)
    }

    /// [`segment_gather`](SegmentBackend::segment_gather) of integer rows.
    #[fusion(dtype = data, shape = rows_shape(data, index.segment_ids().shape[0]))]
    fn int_segment_gather(
        data: IntTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> IntTensor<Self> {
        composite::int_gather::<Self>(data, index.into_ids().0)
    }

    /// Gather, weight and sum in one pass (a generalised sparse-dense product, DGL's
    /// `u_mul_e_sum`): `out[r, h·C + c] = Σ_{e: receivers[e] = r} weights[e, h] ·
    /// x[senders[e], h·C + c]`, with `x: [N_src, H·C]`, `weights: [E, H]`, `senders` (over the
    /// `N_src` rows of `x`) and `receivers` (over `N` segments) `[E]` -> `[N, H·C]`. No
    /// `[E, H·C]` tensor is formed by the kernels. Out-of-range indices panic on the CPU backends
    /// and are dropped elsewhere.
    #[fusion(dtype = x, shape = rows_shape(x, receivers.num_segments()))]
    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        #[extension_type] senders: SegmentIndex<Self>,
        #[extension_type] receivers: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        let ((s, _), (r, n)) = (senders.into_ids(), receivers.into_ids());
        composite::spmm::<Self>(x, weights, s, r, n)
    }

    /// Per-edge, per-head dot products of two gathered rows (a sampled dense-dense product,
    /// DGL's `u_dot_v`): `out[e, h] = Σ_c a[a_index[e], h·C + c] · b[b_index[e], h·C + c]`, with
    /// `a: [N_a, H·C]`, `b: [N_b, H·C]`, indices `[E]` over the rows of `a` and of `b` ->
    /// `[E, H]`. Out-of-range indices panic on the CPU backends and give 0 elsewhere.
    #[fusion(dtype = a, shape = Shape::new([a_index.segment_ids().shape[0], *heads]))]
    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        #[extension_type] a_index: SegmentIndex<Self>,
        #[extension_type] b_index: SegmentIndex<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        let ((ai, _), (bi, _)) = (a_index.into_ids(), b_index.into_ids());
        composite::sddmm::<Self>(a, b, ai, bi, heads)
    }

    /// Additive attention coefficients (GAT's): per edge and head the logit
    /// `LeakyReLU(src[senders[e], h] + dst[receivers[e], h] + bias[e, h])`, then a softmax over
    /// each receiver's edges, with `src: [N_src, H]`, `dst: [N_dst, H]`, `bias: [E, H]` or
    /// `[E, 1]` -> `[E, H]`. The receivers are the segments (`N_dst` of them). An edge whose bias
    /// is `-inf` is masked: its logit is `-inf` whatever the slope. Out-of-range indices panic on
    /// the CPU backends.
    #[fusion(dtype = src, shape = Shape::new([senders.segment_ids().shape[0], src[1]]))]
    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        #[extension_type] senders: SegmentIndex<Self>,
        #[extension_type] receivers: SegmentIndex<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let ((s, _), (r, _)) = (senders.into_ids(), receivers.into_ids());
        composite::attention_softmax::<Self>(src, dst, bias, s, r, negative_slope)
    }

    /// The gradient of the raw scores `src[s] + dst[r] + bias` of
    /// [`segment_attention_softmax`](Self::segment_attention_softmax), given its output `alpha`
    /// and the gradient `grad` of that output (both `[E, H]`): `alpha · (grad − Σ alpha ·
    /// grad)` over each receiver's edges, times the slope where the raw score is negative, 0 on
    /// masked edges. `[E, H]`.
    #[allow(clippy::too_many_arguments)]
    #[fusion(dtype = src, shape = alpha)]
    fn segment_attention_backward(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        #[extension_type] senders: SegmentIndex<Self>,
        #[extension_type] receivers: SegmentIndex<Self>,
        alpha: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let ((s, _), (r, _)) = (senders.into_ids(), receivers.into_ids());
        composite::attention_backward::<Self>(src, dst, bias, s, r, alpha, grad, negative_slope)
    }

    /// Number of rows in each segment, `[N]` in the ids' dtype.
    #[fusion(meta = |index| count_spec(index))]
    fn segment_count(#[extension_type] index: SegmentIndex<Self>) -> IntTensor<Self> {
        let (ids, n) = index.into_ids();
        composite::count::<Self>(ids, n)
    }

    /// Number of nonzero entries of each segment's float rows, per column (NaN counts, `±0`
    /// does not), in the ids' dtype.
    #[fusion(dtype = index.segment_ids().dtype, shape = rows_shape(data, index.num_segments()))]
    fn segment_count_nonzero(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> IntTensor<Self> {
        let (ids, n) = index.into_ids();
        composite::count_nonzero::<Self>(data, ids, n)
    }

    /// The sum of each segment's rows over the entries `mask` keeps (`[E]`, one flag per row,
    /// or the data's shape): the sum of `where(mask, data, 0)` without forming it.
    #[fusion(dtype = data, shape = rows_shape(data, index.num_segments()))]
    fn segment_sum_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        let data = composite::zero_masked_out::<Self>(data, mask);
        Self::segment_reduce(data, index, SegmentReduction::Sum)
    }

    /// Max or min of each segment's float rows over the entries `mask` keeps (`[E]` or the
    /// data's shape; `∓inf` where none is), with the first kept row attaining it (the first
    /// NaN where a column holds one, -1 where nothing is kept): a left-out row never wins.
    #[fusion(meta = |data, _mask, index, _extreme| extreme_specs(data, index))]
    fn segment_extreme_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (ids, n) = index.into_ids();
        composite::extreme_masked::<Self>(data, mask, ids, n, extreme)
    }

    /// Softmax over the rows of each segment that `mask` keeps (`[E]` or the data's shape):
    /// the softmax of `where(mask, data, -inf)` with 0 at the left-out entries, and 0 in every
    /// row of a segment (column) with nothing eligible.
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        composite::softmax_masked::<Self>(data, mask, |data| Self::segment_softmax(data, index))
    }
}
