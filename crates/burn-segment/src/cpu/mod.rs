//! CPU kernels: written once over slices (`kernels`), adapted to NdArray and Flex through the
//! small `CpuTensor` trait (`tensor`); `ops` and `fused` run them on tensors, and this module
//! wires them into [`SegmentBackend`](crate::SegmentBackend).

mod activation;
mod fused;
mod heap;
pub(crate) mod kernels;
mod linear;
mod ops;
mod output;
pub(crate) mod simd;
pub(crate) mod tensor;

pub use heap::retain_freed_memory;
pub use ops::unplanned_calls_on_this_thread;
pub use output::{
    DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES, clear_output_pool,
    output_pool_stats, set_output_pool_capacity,
};

mod wiring;

use burn::backend::{Flex, NdArray};

use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentExtreme, SegmentReduction, composite};
use activation::{elu_backward_op, elu_op};
use linear::{linear_op, linear_weight_backward_op};
use wiring::{Ids, attention_backward_op, attention_op, extreme_op, reduce_op, sddmm_op};
use wiring::{softmax_op, spmm_op, sum_masked_op, topk_op};

/// Implements [`SegmentBackend`](crate::SegmentBackend) for a CPU backend with the kernels above,
/// falling back to the composite default for dtypes the kernels do not cover (f16, bf16, ...).
/// Each op's unplanned and planned forms differ only in their [`Ids`]: given (planned for the
/// call) or a `SegmentPlan`'s (read in place).
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl crate::SegmentBackend for $backend {
            fn segment_reduce(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                r: SegmentReduction,
            ) -> FloatTensor<Self> {
                reduce_op(
                    data,
                    Ids::<Self>::Given(ids, n),
                    r,
                    composite::float_reduce::<Self>,
                )
            }
            fn segment_reduce_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                r: SegmentReduction,
            ) -> FloatTensor<Self> {
                reduce_op(
                    data,
                    Ids::<Self>::Planned(p),
                    r,
                    composite::float_reduce::<Self>,
                )
            }
            fn segment_extreme(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                which: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                extreme_op(
                    data,
                    Ids::<Self>::Given(ids, n),
                    which,
                    composite::float_extreme::<Self>,
                )
            }
            fn segment_extreme_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                which: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                extreme_op(
                    data,
                    Ids::<Self>::Planned(p),
                    which,
                    composite::float_extreme::<Self>,
                )
            }
            fn segment_sum_masked(
                data: FloatTensor<Self>,
                mask: BoolTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
            ) -> FloatTensor<Self> {
                sum_masked_op(data, mask, Ids::<Self>::Given(ids, n))
            }
            fn segment_topk(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                k: usize,
                largest: bool,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                topk_op(data, Ids::<Self>::Given(ids, n), k, largest)
            }
            fn segment_topk_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                k: usize,
                largest: bool,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                topk_op(data, Ids::<Self>::Planned(p), k, largest)
            }
            fn segment_sum_masked_planned(
                data: FloatTensor<Self>,
                mask: BoolTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
            ) -> FloatTensor<Self> {
                sum_masked_op(data, mask, Ids::<Self>::Planned(p))
            }
            // ANCHOR: cpu_softmax
            fn segment_softmax(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
            ) -> FloatTensor<Self> {
                softmax_op(data, Ids::<Self>::Given(ids, n), composite::softmax::<Self>)
            }
            // ANCHOR_END: cpu_softmax
            fn segment_softmax_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
            ) -> FloatTensor<Self> {
                softmax_op(data, Ids::<Self>::Planned(p), composite::softmax::<Self>)
            }
            fn int_segment_reduce(
                data: IntTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                r: SegmentReduction,
            ) -> IntTensor<Self> {
                reduce_op(
                    data,
                    Ids::<Self>::Given(ids, n),
                    r,
                    composite::int_reduce::<Self>,
                )
            }
            fn int_segment_reduce_planned(
                data: IntTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                r: SegmentReduction,
            ) -> IntTensor<Self> {
                reduce_op(
                    data,
                    Ids::<Self>::Planned(p),
                    r,
                    composite::int_reduce::<Self>,
                )
            }
            fn int_segment_extreme(
                data: IntTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                which: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                extreme_op(
                    data,
                    Ids::<Self>::Given(ids, n),
                    which,
                    composite::int_extreme::<Self>,
                )
            }
            fn int_segment_extreme_planned(
                data: IntTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                which: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                extreme_op(
                    data,
                    Ids::<Self>::Planned(p),
                    which,
                    composite::int_extreme::<Self>,
                )
            }
            fn segment_gather(data: FloatTensor<Self>, ids: IntTensor<Self>) -> FloatTensor<Self> {
                ops::check_gather_ids(&ids, data.shape()[0]);
                Self::float_select(data, 0, ids)
            }
            fn int_segment_gather(data: IntTensor<Self>, ids: IntTensor<Self>) -> IntTensor<Self> {
                ops::check_gather_ids(&ids, data.shape()[0]);
                Self::int_select(data, 0, ids)
            }
            fn segment_count(ids: IntTensor<Self>, n: usize) -> IntTensor<Self> {
                ops::count(ids, n)
            }
            fn segment_spmm(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                n: usize,
            ) -> FloatTensor<Self> {
                let rows = x.shape()[0];
                let (s, r) = (
                    Ids::<Self>::Given(senders, rows),
                    Ids::<Self>::Given(receivers, n),
                );
                spmm_op(x, weights, s, r, composite::spmm::<Self>)
            }
            fn segment_spmm_planned(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: SegmentPlanPrimitive<Self>,
                receivers: SegmentPlanPrimitive<Self>,
            ) -> FloatTensor<Self> {
                let (s, r) = (
                    Ids::<Self>::Planned(senders),
                    Ids::<Self>::Planned(receivers),
                );
                spmm_op(x, weights, s, r, composite::spmm::<Self>)
            }
            fn segment_sddmm(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: IntTensor<Self>,
                b_index: IntTensor<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                let (na, nb) = (a.shape()[0], b.shape()[0]);
                let (ai, bi) = (
                    Ids::<Self>::Given(a_index, na),
                    Ids::<Self>::Given(b_index, nb),
                );
                sddmm_op(a, b, ai, bi, heads, composite::sddmm::<Self>)
            }
            fn segment_sddmm_planned(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: SegmentPlanPrimitive<Self>,
                b_index: SegmentPlanPrimitive<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                let (ai, bi) = (Ids::<Self>::Planned(a_index), Ids::<Self>::Planned(b_index));
                sddmm_op(a, b, ai, bi, heads, composite::sddmm::<Self>)
            }
            fn segment_attention_softmax(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                let (ns, nd) = (src.shape()[0], dst.shape()[0]);
                let (s, r) = (
                    Ids::<Self>::Given(senders, ns),
                    Ids::<Self>::Given(receivers, nd),
                );
                attention_op([src, dst, bias], s, r, slope)
            }
            fn segment_attention_softmax_planned(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: SegmentPlanPrimitive<Self>,
                receivers: SegmentPlanPrimitive<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                let (s, r) = (
                    Ids::<Self>::Planned(senders),
                    Ids::<Self>::Planned(receivers),
                );
                attention_op([src, dst, bias], s, r, slope)
            }
            fn segment_attention_backward(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                alpha: FloatTensor<Self>,
                grad: FloatTensor<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                let (ns, nd) = (src.shape()[0], dst.shape()[0]);
                let (s, r) = (
                    Ids::<Self>::Given(senders, ns),
                    Ids::<Self>::Given(receivers, nd),
                );
                attention_backward_op([src, dst, bias, alpha, grad], s, r, slope)
            }
            fn segment_attention_backward_planned(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: SegmentPlanPrimitive<Self>,
                receivers: SegmentPlanPrimitive<Self>,
                alpha: FloatTensor<Self>,
                grad: FloatTensor<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                let (s, r) = (
                    Ids::<Self>::Planned(senders),
                    Ids::<Self>::Planned(receivers),
                );
                attention_backward_op([src, dst, bias, alpha, grad], s, r, slope)
            }
            fn float_elu(x: FloatTensor<Self>, alpha: f64) -> FloatTensor<Self> {
                elu_op(x, alpha, composite::elu::<Self>)
            }
            fn float_elu_backward(
                x: FloatTensor<Self>,
                grad: FloatTensor<Self>,
                alpha: f64,
            ) -> FloatTensor<Self> {
                elu_backward_op(x, grad, alpha, composite::elu_backward::<Self>)
            }
            fn float_linear(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
                linear_op(x, weight, composite::linear::<Self>)
            }
            fn float_linear_weight_backward(
                x: FloatTensor<Self>,
                grad: FloatTensor<Self>,
            ) -> FloatTensor<Self> {
                linear_weight_backward_op(x, grad, composite::linear_weight_backward::<Self>)
            }
        }
    };
}

use burn::backend::TensorMetadata;
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};

#[allow(deprecated)]
mod ndarray_impl {
    use super::*;
    impl_cpu_backend!(NdArray);
}
mod flex_impl {
    use super::*;
    impl_cpu_backend!(Flex);
}
