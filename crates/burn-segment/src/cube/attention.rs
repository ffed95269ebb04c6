//! GAT's additive attention on wgpu: one unit per edge and head computes the LeakyReLU logit
//! (the segment softmax kernels then normalise per receiver) and, backward, the gradient of the
//! raw score. Edges with an out-of-range index get logit 0 (dropped by the softmax) and
//! gradient 0.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::FloatTensorOps;
use burn::tensor::{DType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;

use super::csr::in_range;
use super::{called, dims2, full, grid};

/// The bits of `-inf`: a bias that masks its edge.
const NEG_INF_BITS: u32 = 0xff80_0000;

/// Edge `e`'s bias for head `h`: `bias` is `[E, 1]` (shared by the heads) or `[E, H]`.
#[cube]
fn edge_bias(bias: &Tensor<f32>, e: usize, h: usize, bias_width: usize) -> f32 {
    let mut col = h;
    if bias_width == 1 {
        col = 0;
    }
    bias[e * bias_width + col]
}

/// The raw score `src[s, h] + dst[r, h] + b` that both the logits and their gradient read.
#[cube]
fn raw_score(
    src: &Tensor<f32>,
    dst: &Tensor<f32>,
    s: usize,
    r: usize,
    h: usize,
    heads: usize,
    b: f32,
) -> f32 {
    src[s * heads + h] + dst[r * heads + h] + b
}

/// Whether bias `b` masks its edge (it is `-inf`; compared by bits, as NaN compares false).
#[cube]
fn masks(b: f32) -> bool {
    u32::reinterpret(b) == NEG_INF_BITS
}

/// One unit per edge and head: `LeakyReLU(src[s, h] + dst[r, h] + bias)`, `-inf` where the
/// bias is `-inf` (a masked edge), 0 for an edge with an out-of-range index (the softmax then
/// drops it).
#[cube(launch)]
pub fn attention_logits<I: Int>(
    src: &Tensor<f32>,
    dst: &Tensor<f32>,
    bias: &Tensor<f32>,
    senders: &Tensor<I>,
    receivers: &Tensor<I>,
    out: &mut Tensor<f32>,
    n_src: usize,
    n_dst: usize,
    heads: usize,
    bias_width: usize,
    slope: f32,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= out.len() {
        terminate!();
    }
    let (e, h) = (ABSOLUTE_POS / heads, ABSOLUTE_POS % heads);
    let b = edge_bias(bias, e, h, bias_width);
    let (s, r) = (senders[e], receivers[e]);
    let mut logit = 0.0f32;
    if in_range::<I>(s, n_src) && in_range::<I>(r, n_dst) {
        let x = raw_score(
            src,
            dst,
            usize::cast_from(s),
            usize::cast_from(r),
            h,
            heads,
            b,
        );
        logit = x;
        if x < 0.0f32 {
            logit = x * slope;
        }
        if masks(b) {
            logit = f32::reinterpret(NEG_INF_BITS);
        }
    }
    out[ABSOLUTE_POS] = logit;
}

/// GAT's attention coefficients `[E, H]`: the logits kernel, then the segment softmax kernels
/// over the receivers (the rows of `dst`).
pub(super) fn attention_softmax(
    src: CubeTensor,
    dst: CubeTensor,
    bias: CubeTensor,
    senders: CubeTensor,
    receivers: CubeTensor,
    slope: f64,
) -> CubeTensor {
    called();
    let ([n_src, heads], [n_dst, _], [_, bias_width]) = (dims2(&src), dims2(&dst), dims2(&bias));
    let e = senders.meta.shape()[0];
    if e == 0 || heads == 0 {
        return full(Shape::new([e, heads]), 0.0, DType::F32, &src);
    }
    let logits = burn_cubecl::CubeBackend::float_empty(
        Shape::new([e, heads]),
        &src.device,
        burn::tensor::FloatDType::F32,
    );
    let (src, dst, bias) = (
        into_contiguous(src),
        into_contiguous(dst),
        into_contiguous(bias),
    );
    let (senders, receivers) = (into_contiguous(senders), into_contiguous(receivers));
    let it = dtype_to_storage_type(senders.dtype);
    let (count, dim) = grid(&src, e * heads);
    attention_logits::launch(
        &src.client,
        count,
        dim,
        src.clone().into_tensor_arg(),
        dst.into_tensor_arg(),
        bias.into_tensor_arg(),
        senders.into_tensor_arg(),
        receivers.clone().into_tensor_arg(),
        logits.clone().into_tensor_arg(),
        n_src,
        n_dst,
        heads,
        bias_width,
        slope as f32,
        it,
    );
    super::ops::softmax(logits, receivers, n_dst)
}

/// One unit per edge and head: the gradient of the raw score, `alpha · grad − alpha ·
/// total[receiver]` (the softmax backward, `total` the per-receiver sums of `alpha · grad`),
/// times the slope where the raw score is negative, 0 on masked edges and edges with an
/// out-of-range index.
#[cube(launch)]
pub fn attention_grad<I: Int>(
    src: &Tensor<f32>,
    dst: &Tensor<f32>,
    bias: &Tensor<f32>,
    senders: &Tensor<I>,
    receivers: &Tensor<I>,
    alpha_grad: &Tensor<f32>,
    alpha: &Tensor<f32>,
    total: &Tensor<f32>,
    out: &mut Tensor<f32>,
    n_src: usize,
    n_dst: usize,
    heads: usize,
    bias_width: usize,
    slope: f32,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= out.len() {
        terminate!();
    }
    let (e, h) = (ABSOLUTE_POS / heads, ABSOLUTE_POS % heads);
    let b = edge_bias(bias, e, h, bias_width);
    let (s, r) = (senders[e], receivers[e]);
    let mut d = 0.0f32;
    if in_range::<I>(s, n_src) && in_range::<I>(r, n_dst) {
        let (si, ri) = (usize::cast_from(s), usize::cast_from(r));
        d = alpha_grad[ABSOLUTE_POS] - alpha[ABSOLUTE_POS] * total[ri * heads + h];
        if raw_score(src, dst, si, ri, h, heads, b) < 0.0f32 {
            d *= slope;
        }
        if masks(b) {
            d = 0.0f32;
        }
    }
    out[ABSOLUTE_POS] = d;
}

/// The raw-score gradient of [`attention_softmax`]: the products `alpha · grad`, their sums
/// per receiver (the segment-sum kernels), then [`attention_grad`].
#[allow(clippy::too_many_arguments)]
pub(super) fn attention_backward(
    src: CubeTensor,
    dst: CubeTensor,
    bias: CubeTensor,
    senders: CubeTensor,
    receivers: CubeTensor,
    alpha: CubeTensor,
    grad: CubeTensor,
    slope: f64,
) -> CubeTensor {
    called();
    let ([n_src, heads], [n_dst, _], [_, bias_width]) = (dims2(&src), dims2(&dst), dims2(&bias));
    let e = senders.meta.shape()[0];
    if e == 0 || heads == 0 || n_dst == 0 {
        return full(Shape::new([e, heads]), 0.0, DType::F32, &src);
    }
    let alpha = into_contiguous(alpha);
    let alpha_grad = into_contiguous(burn_cubecl::CubeBackend::float_mul(grad, alpha.clone()));
    let total = super::ops::sum_prod(alpha_grad.clone(), receivers.clone(), n_dst, false);
    let out = burn_cubecl::CubeBackend::float_empty(
        Shape::new([e, heads]),
        &src.device,
        burn::tensor::FloatDType::F32,
    );
    let (src, dst, bias) = (
        into_contiguous(src),
        into_contiguous(dst),
        into_contiguous(bias),
    );
    let (senders, receivers) = (into_contiguous(senders), into_contiguous(receivers));
    let it = dtype_to_storage_type(senders.dtype);
    let (count, dim) = grid(&src, e * heads);
    attention_grad::launch(
        &src.client,
        count,
        dim,
        src.clone().into_tensor_arg(),
        dst.into_tensor_arg(),
        bias.into_tensor_arg(),
        senders.into_tensor_arg(),
        receivers.into_tensor_arg(),
        alpha_grad.into_tensor_arg(),
        alpha.into_tensor_arg(),
        into_contiguous(total).into_tensor_arg(),
        out.clone().into_tensor_arg(),
        n_src,
        n_dst,
        heads,
        bias_width,
        slope as f32,
        it,
    );
    out
}
