//! CPU kernels: written once over slices (`kernels`), adapted to NdArray and Flex through the
//! small `CpuTensor` trait (`tensor`); `ops` and `fused` run them on tensors, and this module
//! wires them into [`SegmentBackend`](crate::SegmentBackend).

mod activation;
mod fused;
pub(crate) mod kernels;
mod linear;
mod memory;
mod ops;
pub(crate) mod tensor;

pub use memory::{
    DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES, clear_output_pool,
    output_pool_stats, retain_freed_memory, set_output_pool_capacity,
};
pub use ops::unplanned_calls_on_this_thread;

mod wiring;

use burn::backend::{Flex, NdArray};

use crate::plan::SegmentIndex;
use crate::{SegmentExtreme, SegmentReduction, composite};
use activation::{elu_backward_op, elu_op};
use linear::{linear_op, linear_weight_backward_op};
pub(crate) use wiring::CpuIndex;
use wiring::{attention_backward_op, attention_op, extreme_op, reduce_op, sddmm_op};
use wiring::{softmax_op, spmm_op, sum_masked_op};

/// Implements [`SegmentBackend`](crate::SegmentBackend) and [`DenseBackend`](crate::DenseBackend)
/// for a CPU backend with the kernels above,
/// falling back to the composite default for dtypes the kernels do not cover (f16, bf16, ...).
/// A macro only because NdArray and Flex are two types: every body is the one shared function.
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl crate::SegmentBackend for $backend {
            fn segment_reduce(
                data: FloatTensor<Self>,
                index: SegmentIndex<Self>,
                r: SegmentReduction,
            ) -> FloatTensor<Self> {
                reduce_op(data, index, r, composite::float_reduce::<Self>)
            }
            fn segment_extreme(
                data: FloatTensor<Self>,
                index: SegmentIndex<Self>,
                which: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                extreme_op(data, index, which, composite::float_extreme::<Self>)
            }
            fn segment_sum_masked(
                data: FloatTensor<Self>,
                mask: BoolTensor<Self>,
                index: SegmentIndex<Self>,
            ) -> FloatTensor<Self> {
                sum_masked_op(data, mask, index)
            }
            // ANCHOR: cpu_softmax
            fn segment_softmax(
                data: FloatTensor<Self>,
                index: SegmentIndex<Self>,
            ) -> FloatTensor<Self> {
                softmax_op(data, index, composite::softmax::<Self>)
            }
            // ANCHOR_END: cpu_softmax
            fn int_segment_reduce(
                data: IntTensor<Self>,
                index: SegmentIndex<Self>,
                r: SegmentReduction,
            ) -> IntTensor<Self> {
                reduce_op(data, index, r, composite::int_reduce::<Self>)
            }
            fn int_segment_extreme(
                data: IntTensor<Self>,
                index: SegmentIndex<Self>,
                which: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                extreme_op(data, index, which, composite::int_extreme::<Self>)
            }
            fn segment_gather(
                data: FloatTensor<Self>,
                index: SegmentIndex<Self>,
            ) -> FloatTensor<Self> {
                let ids = ops::gather_ids(index, data.shape()[0]);
                Self::float_select(data, 0, ids)
            }
            fn int_segment_gather(
                data: IntTensor<Self>,
                index: SegmentIndex<Self>,
            ) -> IntTensor<Self> {
                let ids = ops::gather_ids(index, data.shape()[0]);
                Self::int_select(data, 0, ids)
            }
            fn segment_count(index: SegmentIndex<Self>) -> IntTensor<Self> {
                let (ids, n) = index.into_ids();
                ops::count(ids, n)
            }
            fn segment_spmm(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: SegmentIndex<Self>,
                receivers: SegmentIndex<Self>,
            ) -> FloatTensor<Self> {
                spmm_op(x, weights, senders, receivers, composite::spmm::<Self>)
            }
            fn segment_sddmm(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: SegmentIndex<Self>,
                b_index: SegmentIndex<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                sddmm_op(a, b, a_index, b_index, heads, composite::sddmm::<Self>)
            }
            fn segment_attention_softmax(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: SegmentIndex<Self>,
                receivers: SegmentIndex<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                attention_op([src, dst, bias], senders, receivers, slope)
            }
            fn segment_attention_backward(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: SegmentIndex<Self>,
                receivers: SegmentIndex<Self>,
                alpha: FloatTensor<Self>,
                grad: FloatTensor<Self>,
                slope: f64,
            ) -> FloatTensor<Self> {
                attention_backward_op([src, dst, bias, alpha, grad], senders, receivers, slope)
            }
        }

        impl crate::DenseBackend for $backend {
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
