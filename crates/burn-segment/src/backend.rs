//! The backend-extension trait: the primitive segment ops every backend provides.

use burn::backend::{
    Backend, backend_extension,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};

#[cfg(feature = "cube")]
use burn::tensor::Shape;

use crate::composite;
use crate::plan::SegmentPlanPrimitive;
#[cfg(feature = "cube")]
use crate::shape::rows_shape;

/// What `Fusion` records for `segment_extreme`: values like the data, arguments like the ids.
#[cfg(feature = "cube")]
fn extreme_specs(
    data: &burn::backend::fusion::custom::TensorSpec,
    segment_ids: &burn::backend::fusion::custom::TensorSpec,
    num_segments: usize,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    use burn::backend::fusion::custom::TensorSpec;
    let shape = rows_shape(&data.shape, num_segments);
    (
        TensorSpec::new(shape.clone(), data.dtype),
        TensorSpec::new(shape, segment_ids.dtype),
    )
}

/// What `Fusion` records for `segment_topk`: values `[N, k, C]` like the data, rows like the
/// ids.
#[cfg(feature = "cube")]
fn topk_specs(
    data: &burn::backend::fusion::custom::TensorSpec,
    segment_ids: &burn::backend::fusion::custom::TensorSpec,
    num_segments: usize,
    k: usize,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    use burn::backend::fusion::custom::TensorSpec;
    let shape = Shape::new([num_segments, k, data.shape[1]]);
    (
        TensorSpec::new(shape.clone(), data.dtype),
        TensorSpec::new(shape, segment_ids.dtype),
    )
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
    Cube: cfg(feature = "cube"),
    Fusion: cfg(feature = "cube")
)]
pub trait SegmentBackend: Backend {
    /// Sum, product, max or min of each segment's float rows (values only).
    #[fusion(dtype = data, shape = rows_shape(data, *num_segments))]
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
    #[fusion(meta = |data, segment_ids, num_segments, _extreme| extreme_specs(data, segment_ids, *num_segments))]
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
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        composite::softmax::<Self>(data, segment_ids, num_segments)
    }
    // ANCHOR_END: trait_softmax

    /// Sum, product, max or min of each segment's integer rows (wrapping arithmetic).
    #[fusion(dtype = data, shape = rows_shape(data, *num_segments))]
    fn int_segment_reduce(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        composite::int_reduce::<Self>(data, segment_ids, num_segments, reduction)
    }

    /// Max or min of each segment's integer rows with the row index attaining it.
    #[fusion(meta = |data, segment_ids, num_segments, _extreme| extreme_specs(data, segment_ids, *num_segments))]
    fn int_segment_extreme(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        composite::int_extreme::<Self>(data, segment_ids, num_segments, extreme)
    }

    /// Row `e` of the result is row `segment_ids[e]` of `data`: `[N, ...] -> [E, ...]`, the
    /// adjoint of a segment sum, used by the backward passes to bring a segment's gradient back to
    /// its rows. Rows with an out-of-range id panic on the CPU backends and are zero elsewhere
    /// (never a read out of bounds).
    #[fusion(dtype = data, shape = rows_shape(data, segment_ids[0]))]
    fn segment_gather(data: FloatTensor<Self>, segment_ids: IntTensor<Self>) -> FloatTensor<Self> {
        composite::gather::<Self>(data, segment_ids)
    }

    /// [`segment_gather`](SegmentBackend::segment_gather) of integer rows.
    #[fusion(dtype = data, shape = rows_shape(data, segment_ids[0]))]
    fn int_segment_gather(data: IntTensor<Self>, segment_ids: IntTensor<Self>) -> IntTensor<Self> {
        composite::int_gather::<Self>(data, segment_ids)
    }

    /// Gather, weight and sum in one pass (a generalised sparse-dense product, DGL's
    /// `u_mul_e_sum`): `out[r, h·C + c] = Σ_{e: receivers[e] = r} weights[e, h] ·
    /// x[senders[e], h·C + c]`, with `x: [N_src, H·C]`, `weights: [E, H]`, `senders` and
    /// `receivers: [E]` -> `[num_segments, H·C]`. No `[E, H·C]` tensor is formed by the
    /// kernels. Out-of-range indices panic on the CPU backends and are dropped elsewhere.
    #[fusion(dtype = x, shape = rows_shape(x, *num_segments))]
    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        composite::spmm::<Self>(x, weights, senders, receivers, num_segments)
    }

    /// Per-edge, per-head dot products of two gathered rows (a sampled dense-dense product,
    /// DGL's `u_dot_v`): `out[e, h] = Σ_c a[a_index[e], h·C + c] · b[b_index[e], h·C + c]`, with
    /// `a: [N_a, H·C]`, `b: [N_b, H·C]`, indices `[E]` -> `[E, H]`. Out-of-range indices panic
    /// on the CPU backends and give 0 elsewhere.
    #[fusion(dtype = a, shape = Shape::new([a_index[0], *heads]))]
    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: IntTensor<Self>,
        b_index: IntTensor<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        composite::sddmm::<Self>(a, b, a_index, b_index, heads)
    }

    /// Additive attention coefficients (GAT's): per edge and head the logit
    /// `LeakyReLU(src[senders[e], h] + dst[receivers[e], h] + bias[e, h])`, then a softmax over
    /// each receiver's edges, with `src: [N_src, H]`, `dst: [N_dst, H]`, `bias: [E, H]` or
    /// `[E, 1]` -> `[E, H]`. The receivers are the segments (`N_dst` of them). An edge whose bias
    /// is `-inf` is masked: its logit is `-inf` whatever the slope. Out-of-range indices panic on
    /// the CPU backends.
    #[fusion(dtype = src, shape = Shape::new([senders[0], src[1]]))]
    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        composite::attention_softmax::<Self>(src, dst, bias, senders, receivers, negative_slope)
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
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        alpha: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        composite::attention_backward::<Self>(
            src,
            dst,
            bias,
            senders,
            receivers,
            alpha,
            grad,
            negative_slope,
        )
    }

    /// Number of rows in each segment, `[N]` in the ids' dtype.
    #[fusion(dtype = segment_ids, shape = Shape::new([*num_segments]))]
    fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
        composite::count::<Self>(segment_ids, num_segments)
    }

    /// Number of nonzero entries of each segment's float rows, per column (NaN counts, `±0`
    /// does not), in the ids' dtype.
    #[fusion(dtype = segment_ids, shape = rows_shape(data, *num_segments))]
    fn segment_count_nonzero(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> IntTensor<Self> {
        composite::count_nonzero::<Self>(data, segment_ids, num_segments)
    }

    /// The `k` largest (`largest`) or smallest rows of each segment of `data: [E, C]`, per
    /// column and in rank order: values `[N, k, C]` and rows `[N, k, C]` in the ids' dtype.
    /// Ties go to the smaller row, NaN orders above every number, and a segment of fewer than
    /// `k` rows fills with `∓inf` and row -1. The values carry no gradient (`SegmentStatistics::topk`
    /// gathers tracked data at the rows). The default chooses on the host (one read of the data
    /// and the ids: a sync on a GPU).
    #[fusion(meta = |data, segment_ids, num_segments, k, _largest| topk_specs(data, segment_ids, *num_segments, *k))]
    fn segment_topk(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        composite::topk::<Self>(data, segment_ids, num_segments, k, largest)
    }

    // The planned forms: the same ops over a `SegmentPlan`'s ids. The defaults forget the plan
    // and call the unplanned op on its ids; a backend that can use the grouping overrides them.

    /// [`segment_reduce`](Self::segment_reduce) over a plan's ids.
    #[fusion(dtype = data, shape = rows_shape(data, plan.num_segments))]
    fn segment_reduce_planned(
        data: FloatTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        Self::segment_reduce(data, plan.segment_ids, plan.num_segments, reduction)
    }

    /// The sum of each segment's rows over the entries `mask` keeps (`[E]`, one flag per row,
    /// or the data's shape): the sum of `where(mask, data, 0)` without forming it.
    #[fusion(dtype = data, shape = rows_shape(data, *num_segments))]
    fn segment_sum_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        let data = composite::zero_masked_out::<Self>(data, mask);
        Self::segment_reduce(data, segment_ids, num_segments, SegmentReduction::Sum)
    }

    /// Max or min of each segment's float rows over the entries `mask` keeps (`[E]` or the
    /// data's shape; `∓inf` where none is), with the first kept row attaining it (the first
    /// NaN where a column holds one, -1 where nothing is kept): a left-out row never wins.
    #[fusion(meta = |data, _mask, segment_ids, num_segments, _extreme| extreme_specs(data, segment_ids, *num_segments))]
    fn segment_extreme_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        composite::extreme_masked::<Self>(data, mask, segment_ids, num_segments, extreme)
    }

    /// [`segment_extreme_masked`](Self::segment_extreme_masked) over a plan's ids.
    #[fusion(meta = |data, _mask, plan, _extreme| extreme_specs(data, &plan.segment_ids, plan.num_segments))]
    fn segment_extreme_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        Self::segment_extreme_masked(data, mask, plan.segment_ids, plan.num_segments, extreme)
    }

    /// Softmax over the rows of each segment that `mask` keeps (`[E]` or the data's shape):
    /// the softmax of `where(mask, data, -inf)` with 0 at the left-out entries, and 0 in every
    /// row of a segment (column) with nothing eligible.
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        composite::softmax_masked::<Self>(data, mask, |data| {
            Self::segment_softmax(data, segment_ids, num_segments)
        })
    }

    /// [`segment_softmax_masked`](Self::segment_softmax_masked) over a plan's ids.
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        composite::softmax_masked::<Self>(data, mask, |data| {
            Self::segment_softmax_planned(data, plan)
        })
    }

    /// [`segment_sum_masked`](Self::segment_sum_masked) over a plan's ids.
    #[fusion(dtype = data, shape = rows_shape(data, plan.num_segments))]
    fn segment_sum_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        let data = composite::zero_masked_out::<Self>(data, mask);
        Self::segment_reduce_planned(data, plan, SegmentReduction::Sum)
    }

    /// [`segment_topk`](Self::segment_topk) over a plan's ids.
    #[fusion(meta = |data, plan, k, _largest| topk_specs(data, &plan.segment_ids, plan.num_segments, *k))]
    fn segment_topk_planned(
        data: FloatTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        Self::segment_topk(data, plan.segment_ids, plan.num_segments, k, largest)
    }

    /// [`segment_extreme`](Self::segment_extreme) over a plan's ids.
    #[fusion(meta = |data, plan, _extreme| extreme_specs(data, &plan.segment_ids, plan.num_segments))]
    fn segment_extreme_planned(
        data: FloatTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        Self::segment_extreme(data, plan.segment_ids, plan.num_segments, extreme)
    }

    /// [`segment_softmax`](Self::segment_softmax) over a plan's ids.
    #[fusion(dtype = data, shape = data)]
    fn segment_softmax_planned(
        data: FloatTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        Self::segment_softmax(data, plan.segment_ids, plan.num_segments)
    }

    /// [`int_segment_reduce`](Self::int_segment_reduce) over a plan's ids.
    #[fusion(dtype = data, shape = rows_shape(data, plan.num_segments))]
    fn int_segment_reduce_planned(
        data: IntTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        Self::int_segment_reduce(data, plan.segment_ids, plan.num_segments, reduction)
    }

    /// [`int_segment_extreme`](Self::int_segment_extreme) over a plan's ids.
    #[fusion(meta = |data, plan, _extreme| extreme_specs(data, &plan.segment_ids, plan.num_segments))]
    fn int_segment_extreme_planned(
        data: IntTensor<Self>,
        #[extension_type] plan: SegmentPlanPrimitive<Self>,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        Self::int_segment_extreme(data, plan.segment_ids, plan.num_segments, extreme)
    }

    /// [`segment_spmm`](Self::segment_spmm) with the senders and receivers planned (each
    /// sender plan's segments are the rows of `x`).
    #[fusion(dtype = x, shape = rows_shape(x, receivers.num_segments))]
    fn segment_spmm_planned(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        #[extension_type] senders: SegmentPlanPrimitive<Self>,
        #[extension_type] receivers: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        let n = receivers.num_segments;
        Self::segment_spmm(x, weights, senders.segment_ids, receivers.segment_ids, n)
    }

    /// [`segment_sddmm`](Self::segment_sddmm) with both index lists planned (over the rows of
    /// `a` and `b`).
    #[fusion(dtype = a, shape = Shape::new([a_index.segment_ids.shape[0], *heads]))]
    fn segment_sddmm_planned(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        #[extension_type] a_index: SegmentPlanPrimitive<Self>,
        #[extension_type] b_index: SegmentPlanPrimitive<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        Self::segment_sddmm(a, b, a_index.segment_ids, b_index.segment_ids, heads)
    }

    /// [`segment_attention_softmax`](Self::segment_attention_softmax) with the senders and
    /// receivers planned.
    #[fusion(dtype = src, shape = Shape::new([senders.segment_ids.shape[0], src[1]]))]
    fn segment_attention_softmax_planned(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        #[extension_type] senders: SegmentPlanPrimitive<Self>,
        #[extension_type] receivers: SegmentPlanPrimitive<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (s, r) = (senders.segment_ids, receivers.segment_ids);
        Self::segment_attention_softmax(src, dst, bias, s, r, negative_slope)
    }

    /// [`segment_attention_backward`](Self::segment_attention_backward) with the senders and
    /// receivers planned.
    #[allow(clippy::too_many_arguments)]
    #[fusion(dtype = src, shape = alpha)]
    fn segment_attention_backward_planned(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        #[extension_type] senders: SegmentPlanPrimitive<Self>,
        #[extension_type] receivers: SegmentPlanPrimitive<Self>,
        alpha: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (s, r) = (senders.segment_ids, receivers.segment_ids);
        Self::segment_attention_backward(src, dst, bias, s, r, alpha, grad, negative_slope)
    }

    /// ELU, element-wise: `x` where `x > 0`, `alpha · (e^x − 1)` elsewhere; any shape. Not a
    /// segment op: GAT's activation, a kernel here because Burn 0.22 composes it from a masked
    /// select (a branch per element on Flex) and five more element-wise ops with their backward.
    #[fusion(dtype = x, shape = x)]
    fn float_elu(x: FloatTensor<Self>, alpha: f64) -> FloatTensor<Self> {
        composite::elu::<Self>(x, alpha)
    }

    /// The gradient of [`float_elu`](Self::float_elu)'s input `x` from the output's gradient:
    /// `grad` where `x > 0`, `grad · alpha · e^x` elsewhere.
    #[fusion(dtype = grad, shape = grad)]
    fn float_elu_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        alpha: f64,
    ) -> FloatTensor<Self> {
        composite::elu_backward::<Self>(x, grad, alpha)
    }

    /// A linear layer's product `x · weight` for `x: [rows, d_input]` and
    /// `weight: [d_input, d_output]`. Not a segment op: a kernel here because Burn 0.22's CPU
    /// matmul splits a product with a narrow output poorly across threads.
    #[fusion(dtype = x, shape = Shape::new([x[0], weight[1]]))]
    fn float_linear(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        composite::linear::<Self>(x, weight)
    }

    /// The gradient of [`float_linear`](Self::float_linear)'s weight from the output's
    /// gradient: `xᵀ · grad`, `[d_input, d_output]`.
    #[fusion(dtype = x, shape = Shape::new([x[1], grad[1]]))]
    fn float_linear_weight_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        composite::linear_weight_backward::<Self>(x, grad)
    }
}
