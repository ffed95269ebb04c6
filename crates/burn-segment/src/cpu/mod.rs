//! CPU kernels: written once over slices (`kernels`), adapted to NdArray and Flex through the
//! small `CpuTensor` trait (`tensor`); `ops` and `fused` run them on tensors, and this module
//! wires them into [`SegmentBackend`](crate::SegmentBackend).

mod fused;
mod heap;
pub(crate) mod kernels;
mod ops;
mod output;
pub(crate) mod simd;
mod tensor;

pub use heap::retain_freed_memory;
pub use ops::unplanned_calls_on_this_thread;
pub use output::{
    DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES, clear_output_pool,
    output_pool_stats, set_output_pool_capacity,
};

use burn::backend::{Flex, NdArray, TensorMetadata};

use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentExtreme, SegmentReduction};
use fused::{
    AttentionIndex, attention_backward, attention_dtypes, attention_softmax, sddmm, spmm,
    supports_fused,
};
use ops::usize_list;
use ops::{
    check_gather_ids, count, extreme, held_plan, index_list, plan, reduce, softmax, supports,
};

/// Panics unless a plan of `what` indices has `rows` segments (the rows they index).
fn check_index_plan<B: burn::backend::Backend>(
    p: &SegmentPlanPrimitive<B>,
    rows: usize,
    what: &str,
) {
    assert_eq!(
        p.num_segments, rows,
        "burn-segment: the {what} plan has {} segments but indexes {rows} rows",
        p.num_segments
    );
}

/// Implements [`SegmentBackend`](crate::SegmentBackend) for a CPU backend with the kernels above,
/// falling back to the composite default for dtypes the kernels do not cover (f16, bf16, ...).
/// An unplanned op plans its ids for the call; a planned one reads the plan it is
/// given.
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl crate::SegmentBackend for $backend {
            fn segment_reduce(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                reduction: SegmentReduction,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::float_reduce::<Self>(data, ids, n, reduction);
                }
                reduce(data, &plan(&ids, n), reduction)
            }
            fn segment_reduce_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                reduction: SegmentReduction,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    let (ids, n) = (p.segment_ids, p.num_segments);
                    return composite::float_reduce::<Self>(data, ids, n, reduction);
                }
                reduce(data, &held_plan(&p), reduction)
            }
            fn segment_extreme(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                which: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::float_extreme::<Self>(data, ids, n, which);
                }
                extreme(data, &plan(&ids, n), ids.dtype(), which)
            }
            fn segment_extreme_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                which: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    let (ids, n) = (p.segment_ids, p.num_segments);
                    return composite::float_extreme::<Self>(data, ids, n, which);
                }
                extreme(data, &held_plan(&p), p.segment_ids.dtype(), which)
            }
            // ANCHOR: cpu_softmax
            fn segment_softmax(
                data: FloatTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::softmax::<Self>(data, ids, n);
                }
                softmax(data, &plan(&ids, n))
            }
            // ANCHOR_END: cpu_softmax
            fn segment_softmax_planned(
                data: FloatTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::softmax::<Self>(data, p.segment_ids, p.num_segments);
                }
                softmax(data, &held_plan(&p))
            }
            fn int_segment_reduce(
                data: IntTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                reduction: SegmentReduction,
            ) -> IntTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::int_reduce::<Self>(data, ids, n, reduction);
                }
                reduce(data, &plan(&ids, n), reduction)
            }
            fn int_segment_reduce_planned(
                data: IntTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                reduction: SegmentReduction,
            ) -> IntTensor<Self> {
                if !supports(data.dtype()) {
                    let (ids, n) = (p.segment_ids, p.num_segments);
                    return composite::int_reduce::<Self>(data, ids, n, reduction);
                }
                reduce(data, &held_plan(&p), reduction)
            }
            fn int_segment_extreme(
                data: IntTensor<Self>,
                ids: IntTensor<Self>,
                n: usize,
                which: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::int_extreme::<Self>(data, ids, n, which);
                }
                extreme(data, &plan(&ids, n), ids.dtype(), which)
            }
            fn int_segment_extreme_planned(
                data: IntTensor<Self>,
                p: SegmentPlanPrimitive<Self>,
                which: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    let (ids, n) = (p.segment_ids, p.num_segments);
                    return composite::int_extreme::<Self>(data, ids, n, which);
                }
                extreme(data, &held_plan(&p), p.segment_ids.dtype(), which)
            }
            fn segment_gather(data: FloatTensor<Self>, ids: IntTensor<Self>) -> FloatTensor<Self> {
                check_gather_ids(&ids, data.shape()[0]);
                Self::float_select(data, 0, ids)
            }
            fn int_segment_gather(data: IntTensor<Self>, ids: IntTensor<Self>) -> IntTensor<Self> {
                check_gather_ids(&ids, data.shape()[0]);
                Self::int_select(data, 0, ids)
            }
            fn segment_count(ids: IntTensor<Self>, n: usize) -> IntTensor<Self> {
                count(ids, n)
            }
            fn segment_spmm(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                n: usize,
            ) -> FloatTensor<Self> {
                if !supports_fused(x.dtype()) || x.dtype() != weights.dtype() {
                    return composite::spmm::<Self>(x, weights, senders, receivers, n);
                }
                let senders = index_list(&senders, x.shape()[0], "sender");
                spmm(x, weights, &senders, &plan(&receivers, n))
            }
            fn segment_spmm_planned(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: SegmentPlanPrimitive<Self>,
                receivers: SegmentPlanPrimitive<Self>,
            ) -> FloatTensor<Self> {
                check_index_plan(&senders, x.shape()[0], "sender");
                if !supports_fused(x.dtype()) || x.dtype() != weights.dtype() {
                    let (s, r, n) = (
                        senders.segment_ids,
                        receivers.segment_ids,
                        receivers.num_segments,
                    );
                    return composite::spmm::<Self>(x, weights, s, r, n);
                }
                spmm(
                    x,
                    weights,
                    &usize_list(&senders.segment_ids),
                    &held_plan(&receivers),
                )
            }
            fn segment_sddmm(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: IntTensor<Self>,
                b_index: IntTensor<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                if !supports_fused(a.dtype()) || a.dtype() != b.dtype() {
                    return composite::sddmm::<Self>(a, b, a_index, b_index, heads);
                }
                let ai = index_list(&a_index, a.shape()[0], "a");
                let bi = index_list(&b_index, b.shape()[0], "b");
                sddmm(a, b, &ai, &bi, heads)
            }
            fn segment_sddmm_planned(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: SegmentPlanPrimitive<Self>,
                b_index: SegmentPlanPrimitive<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                check_index_plan(&a_index, a.shape()[0], "a");
                check_index_plan(&b_index, b.shape()[0], "b");
                let (ai, bi) = (a_index.segment_ids, b_index.segment_ids);
                if !supports_fused(a.dtype()) || a.dtype() != b.dtype() {
                    return composite::sddmm::<Self>(a, b, ai, bi, heads);
                }
                sddmm(a, b, &usize_list(&ai), &usize_list(&bi), heads)
            }
            fn segment_attention_softmax(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                if !attention_dtypes(&[src.dtype(), dst.dtype(), bias.dtype()]) {
                    let (s, r) = (senders, receivers);
                    return composite::attention_softmax::<Self>(src, dst, bias, s, r, slope);
                }
                let n = dst.shape()[0];
                let index = AttentionIndex {
                    senders: &index_list(&senders, src.shape()[0], "sender"),
                    receivers: &index_list(&receivers, n, "receiver"),
                    plan: &plan(&receivers, n),
                };
                attention_softmax(src, dst, bias, &index, slope)
            }
            fn segment_attention_softmax_planned(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: SegmentPlanPrimitive<Self>,
                receivers: SegmentPlanPrimitive<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                check_index_plan(&senders, src.shape()[0], "sender");
                check_index_plan(&receivers, dst.shape()[0], "receiver");
                if !attention_dtypes(&[src.dtype(), dst.dtype(), bias.dtype()]) {
                    let (s, r) = (senders.segment_ids, receivers.segment_ids);
                    return composite::attention_softmax::<Self>(src, dst, bias, s, r, slope);
                }
                let index = AttentionIndex {
                    senders: &usize_list(&senders.segment_ids),
                    receivers: &usize_list(&receivers.segment_ids),
                    plan: &held_plan(&receivers),
                };
                attention_softmax(src, dst, bias, &index, slope)
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
                let dtypes = [
                    src.dtype(),
                    dst.dtype(),
                    bias.dtype(),
                    alpha.dtype(),
                    grad.dtype(),
                ];
                if !attention_dtypes(&dtypes) {
                    let (s, r) = (senders, receivers);
                    return composite::attention_backward::<Self>(
                        src, dst, bias, s, r, alpha, grad, slope,
                    );
                }
                let n = dst.shape()[0];
                let index = AttentionIndex {
                    senders: &index_list(&senders, src.shape()[0], "sender"),
                    receivers: &index_list(&receivers, n, "receiver"),
                    plan: &plan(&receivers, n),
                };
                attention_backward((src, dst, bias, alpha, grad), &index, slope)
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
                check_index_plan(&senders, src.shape()[0], "sender");
                check_index_plan(&receivers, dst.shape()[0], "receiver");
                let dtypes = [
                    src.dtype(),
                    dst.dtype(),
                    bias.dtype(),
                    alpha.dtype(),
                    grad.dtype(),
                ];
                if !attention_dtypes(&dtypes) {
                    let (s, r) = (senders.segment_ids, receivers.segment_ids);
                    return composite::attention_backward::<Self>(
                        src, dst, bias, s, r, alpha, grad, slope,
                    );
                }
                let index = AttentionIndex {
                    senders: &usize_list(&senders.segment_ids),
                    receivers: &usize_list(&receivers.segment_ids),
                    plan: &held_plan(&receivers),
                };
                attention_backward((src, dst, bias, alpha, grad), &index, slope)
            }
        }
    };
}

use crate::composite;
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::tensor::{FloatTensor, IntTensor};

#[allow(deprecated)]
mod ndarray_impl {
    use super::*;
    impl_cpu_backend!(NdArray);
}
mod flex_impl {
    use super::*;
    impl_cpu_backend!(Flex);
}
