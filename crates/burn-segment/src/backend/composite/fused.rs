//! Composite defaults of the fused ops (`spmm`, `sddmm`, GAT's attention), built from the
//! segment ops (gather, reduce, softmax): how a backend without fused kernels runs them.

use burn::backend::{
    Backend, Scalar, TensorMetadata,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::Shape;

use crate::{SegmentIndex, SegmentReduction};

use super::{bool_dtype, gather_rows};

/// `[E, D]` -> `[E, heads, D / heads]`.
fn by_heads<B: Backend>(t: FloatTensor<B>, heads: usize) -> FloatTensor<B> {
    let [e, d] = [t.shape()[0], t.shape()[1]];
    B::float_reshape(t, Shape::new([e, heads, d / heads]))
}

/// Composite default of [`SegmentBackend::segment_spmm`](crate::SegmentBackend::segment_spmm):
/// gather the sender rows, scale each head by its weight, segment-sum into the receivers (an
/// `[E, D]` message tensor in between).
pub fn spmm<B: crate::SegmentBackend>(
    x: FloatTensor<B>,
    weights: FloatTensor<B>,
    senders: IntTensor<B>,
    receivers: IntTensor<B>,
    n: usize,
) -> FloatTensor<B> {
    let d = x.shape()[1];
    let (e, heads) = (weights.shape()[0], weights.shape()[1]);
    let rows = by_heads::<B>(gather_rows::<B>(x, senders), heads);
    let w = B::float_expand(
        B::float_reshape(weights, Shape::new([e, heads, 1])),
        Shape::new([e, heads, d / heads]),
    );
    let messages = B::float_reshape(B::float_mul(rows, w), Shape::new([e, d]));
    B::segment_reduce(
        messages,
        SegmentIndex::ids(receivers, n),
        SegmentReduction::Sum,
    )
}

/// Composite default of [`SegmentBackend::segment_sddmm`](crate::SegmentBackend::segment_sddmm):
/// gather both sides' rows, multiply, sum each head's columns.
pub fn sddmm<B: crate::SegmentBackend>(
    a: FloatTensor<B>,
    b: FloatTensor<B>,
    a_index: IntTensor<B>,
    b_index: IntTensor<B>,
    heads: usize,
) -> FloatTensor<B> {
    let e = a_index.shape()[0];
    let products = B::float_mul(gather_rows::<B>(a, a_index), gather_rows::<B>(b, b_index));
    let summed = B::float_sum_dim(by_heads::<B>(products, heads), 2);
    B::float_reshape(summed, Shape::new([e, heads]))
}

/// `src[senders] + dst[receivers] + bias` (`[E, heads]`, the bias broadcast over the heads) and
/// the mask of the edges whose bias is `-inf`.
fn attention_raw<B: crate::SegmentBackend>(
    src: FloatTensor<B>,
    dst: FloatTensor<B>,
    bias: FloatTensor<B>,
    senders: IntTensor<B>,
    receivers: IntTensor<B>,
) -> (FloatTensor<B>, BoolTensor<B>) {
    let (e, h) = (senders.shape()[0], src.shape()[1]);
    let bd = bool_dtype::<B>(&src.device());
    let bias = B::float_expand(bias, Shape::new([e, h]));
    let masked = B::float_equal_elem(bias.clone(), Scalar::Float(f64::NEG_INFINITY), bd);
    let nodes = B::float_add(
        gather_rows::<B>(src, senders),
        gather_rows::<B>(dst, receivers),
    );
    (B::float_add(nodes, bias), masked)
}

/// Composite default of
/// [`SegmentBackend::segment_attention_softmax`](crate::SegmentBackend::segment_attention_softmax):
/// gather both sides' scores, add the bias, LeakyReLU, mask, segment softmax.
pub fn attention_softmax<B: crate::SegmentBackend>(
    src: FloatTensor<B>,
    dst: FloatTensor<B>,
    bias: FloatTensor<B>,
    senders: IntTensor<B>,
    receivers: IntTensor<B>,
    negative_slope: f64,
) -> FloatTensor<B> {
    let n = dst.shape()[0];
    let (raw, masked) = attention_raw::<B>(src, dst, bias, senders, receivers.clone());
    let logits = B::leaky_relu(raw, Scalar::Float(negative_slope));
    let logits = B::float_mask_fill(logits, masked, Scalar::Float(f64::NEG_INFINITY));
    B::segment_softmax(logits, SegmentIndex::ids(receivers, n))
}

/// Composite default of
/// [`SegmentBackend::segment_attention_backward`](crate::SegmentBackend::segment_attention_backward):
/// the segment-softmax backward, times the LeakyReLU's slope where the raw score is negative,
/// 0 on masked edges.
#[allow(clippy::too_many_arguments)]
pub fn attention_backward<B: crate::SegmentBackend>(
    src: FloatTensor<B>,
    dst: FloatTensor<B>,
    bias: FloatTensor<B>,
    senders: IntTensor<B>,
    receivers: IntTensor<B>,
    alpha: FloatTensor<B>,
    grad: FloatTensor<B>,
    negative_slope: f64,
) -> FloatTensor<B> {
    let n = dst.shape()[0];
    let bd = bool_dtype::<B>(&src.device());
    let (raw, masked) = attention_raw::<B>(src, dst, bias, senders, receivers.clone());
    let gy = B::float_mul(grad, alpha.clone());
    let total = B::segment_reduce(
        gy.clone(),
        SegmentIndex::ids(receivers.clone(), n),
        SegmentReduction::Sum,
    );
    let d = B::float_sub(gy, B::float_mul(alpha, gather_rows::<B>(total, receivers)));
    let negative = B::float_lower_elem(raw, Scalar::Float(0.0), bd);
    let scaled = B::float_mul_scalar(d.clone(), Scalar::Float(negative_slope));
    let d = B::float_mask_where(d, negative, scaled);
    B::float_mask_fill(d, masked, Scalar::Float(0.0))
}
