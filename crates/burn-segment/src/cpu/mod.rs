//! CPU kernels: written once over slices (`kernels`), adapted to NdArray and Flex through the
//! small `CpuTensor` trait (`tensor`); `ops` and `fused` run them on tensors, and this module
//! wires them into [`SegmentBackend`](crate::SegmentBackend).

mod fused;
mod heap;
mod kernels;
mod ops;
mod output;
mod plan_cache;
pub(crate) mod simd;
mod tensor;

pub use heap::retain_freed_memory;
pub use output::{
    DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES, clear_output_pool,
    output_pool_stats, set_output_pool_capacity,
};
pub use plan_cache::{
    DEFAULT_PLAN_CACHE_BYTES, MAX_PLAN_CACHE_ENTRIES, PlanCacheStats, clear_plan_cache,
    plan_cache_stats, set_plan_cache_capacity,
};

use burn::backend::{Flex, NdArray, TensorMetadata};

use crate::{SegmentExtreme, SegmentReduction};
use fused::{attention_backward, attention_dtypes, attention_softmax, sddmm, spmm, supports_fused};
use ops::{check_gather_ids, count, extreme, reduce, softmax, supports};

/// Implements [`SegmentBackend`](crate::SegmentBackend) for a CPU backend with the kernels above,
/// falling back to the composite default for dtypes the kernels do not cover (f16, bf16, ...).
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl crate::SegmentBackend for $backend {
            fn segment_reduce(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                reduction: SegmentReduction,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::float_reduce::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    );
                }
                reduce(data, segment_ids, num_segments, reduction)
            }
            fn segment_extreme(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                extreme: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::float_extreme::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        extreme,
                    );
                }
                self::extreme(data, segment_ids, num_segments, extreme)
            }
            // ANCHOR: cpu_softmax
            fn segment_softmax(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::softmax::<Self>(data, segment_ids, num_segments);
                }
                softmax(data, segment_ids, num_segments)
            }
            // ANCHOR_END: cpu_softmax
            fn int_segment_reduce(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                reduction: SegmentReduction,
            ) -> IntTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::int_reduce::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    );
                }
                reduce(data, segment_ids, num_segments, reduction)
            }
            fn int_segment_extreme(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                extreme: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::int_extreme::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        extreme,
                    );
                }
                self::extreme(data, segment_ids, num_segments, extreme)
            }
            fn segment_gather(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
            ) -> FloatTensor<Self> {
                check_gather_ids(&segment_ids, data.shape()[0]);
                Self::float_select(data, 0, segment_ids)
            }
            fn int_segment_gather(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
            ) -> IntTensor<Self> {
                check_gather_ids(&segment_ids, data.shape()[0]);
                Self::int_select(data, 0, segment_ids)
            }
            fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
                count(segment_ids, num_segments)
            }
            fn segment_spmm(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                num_segments: usize,
            ) -> FloatTensor<Self> {
                if !supports_fused(x.dtype()) || x.dtype() != weights.dtype() {
                    return composite::spmm::<Self>(x, weights, senders, receivers, num_segments);
                }
                spmm(x, weights, senders, receivers, num_segments)
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
                sddmm(a, b, a_index, b_index, heads)
            }
            fn segment_attention_softmax(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                negative_slope: f64,
            ) -> FloatTensor<Self> {
                if !attention_dtypes(&[src.dtype(), dst.dtype(), bias.dtype()]) {
                    return composite::attention_softmax::<Self>(
                        src,
                        dst,
                        bias,
                        senders,
                        receivers,
                        negative_slope,
                    );
                }
                attention_softmax(src, dst, bias, senders, receivers, negative_slope)
            }
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
                let dtypes = [
                    src.dtype(),
                    dst.dtype(),
                    bias.dtype(),
                    alpha.dtype(),
                    grad.dtype(),
                ];
                if !attention_dtypes(&dtypes) {
                    return composite::attention_backward::<Self>(
                        src,
                        dst,
                        bias,
                        senders,
                        receivers,
                        alpha,
                        grad,
                        negative_slope,
                    );
                }
                attention_backward(
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
