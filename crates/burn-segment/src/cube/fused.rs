//! The fused ops on wgpu: `spmm` (gather, weight, sum into receivers) and `sddmm` (per-edge,
//! per-head dot products), without an `[E, D]` tensor in between.
//!
//! `spmm` follows the segment sum's two strategies: with receiver-sorted edges one unit per
//! output element sums its receiver's edges in edge order (no atomics, bitwise repeatable);
//! otherwise one float atomic add per edge and column, or, on devices without float atomics,
//! one unit per column walking every edge in order. `sddmm` needs neither: one unit per edge and
//! head sums its head's columns. Edges whose sender or receiver is out of range are dropped
//! (`spmm`) or give 0 (`sddmm`); nothing is written out of bounds.

use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::FloatTensorOps;
use burn::tensor::{DType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;

use super::csr::in_range;
use super::{adds_atomically, called, full, grid, plan};

/// Sorted receivers: one unit per output element sums its receiver's edges in edge order.
#[cube(launch)]
pub fn csr_spmm<I: Int>(
    x: &Tensor<f32>,
    w: &Tensor<f32>,
    senders: &Tensor<I>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<f32>,
    n_src: usize,
    d: usize,
    heads: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= out.len() || flag[0] != 0u32 {
        terminate!();
    }
    let (r, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let h = c / (d / heads);
    let (start, end) = (
        usize::cast_from(offsets[r]),
        usize::cast_from(offsets[r + 1]),
    );
    let mut acc = 0.0f32;
    for e in start..end {
        let s = senders[e];
        if in_range::<I>(s, n_src) {
            acc += w[e * heads + h] * x[usize::cast_from(s) * d + c];
        }
    }
    out[ABSOLUTE_POS] = acc;
}

/// Unsorted receivers: one atomic add per edge and column (`out` starts at 0).
#[cube(launch)]
pub fn atomic_spmm<I: Int>(
    x: &Tensor<f32>,
    w: &Tensor<f32>,
    senders: &Tensor<I>,
    receivers: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<Atomic<f32>>,
    n_src: usize,
    n: usize,
    d: usize,
    heads: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= senders.shape(0) * d || flag[0] == 0u32 {
        terminate!();
    }
    let (e, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (s, r) = (senders[e], receivers[e]);
    if in_range::<I>(s, n_src) && in_range::<I>(r, n) {
        let v = w[e * heads + c / (d / heads)] * x[usize::cast_from(s) * d + c];
        out[usize::cast_from(r) * d + c].fetch_add(v);
    }
}

/// Unsorted receivers without float atomics: one unit per column walks every edge in order
/// (deterministic; `out` starts at 0).
#[cube(launch)]
pub fn column_spmm<I: Int>(
    x: &Tensor<f32>,
    w: &Tensor<f32>,
    senders: &Tensor<I>,
    receivers: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<f32>,
    n_src: usize,
    n: usize,
    d: usize,
    heads: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= d || flag[0] == 0u32 {
        terminate!();
    }
    let c = ABSOLUTE_POS;
    let h = c / (d / heads);
    for e in 0..senders.shape(0) {
        let (s, r) = (senders[e], receivers[e]);
        if in_range::<I>(s, n_src) && in_range::<I>(r, n) {
            out[usize::cast_from(r) * d + c] += w[e * heads + h] * x[usize::cast_from(s) * d + c];
        }
    }
}

/// One unit per edge and head: the dot product of the head's columns of the two rows.
#[cube(launch)]
pub fn sddmm_dot<I: Int>(
    a: &Tensor<f32>,
    b: &Tensor<f32>,
    a_index: &Tensor<I>,
    b_index: &Tensor<I>,
    out: &mut Tensor<f32>,
    n_a: usize,
    n_b: usize,
    d: usize,
    heads: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= out.len() {
        terminate!();
    }
    let (e, h) = (ABSOLUTE_POS / heads, ABSOLUTE_POS % heads);
    let width = d / heads;
    let (i, j) = (a_index[e], b_index[e]);
    let mut acc = 0.0f32;
    if in_range::<I>(i, n_a) && in_range::<I>(j, n_b) {
        let oa = usize::cast_from(i) * d + h * width;
        let ob = usize::cast_from(j) * d + h * width;
        for c in 0..width {
            acc += a[oa + c] * b[ob + c];
        }
    }
    out[ABSOLUTE_POS] = acc;
}

/// `out[r] = Σ_{e: receivers[e] = r} w[e, h] · x[senders[e]]` per head, for f32 data.
pub(super) fn spmm(
    x: CubeTensor,
    w: CubeTensor,
    senders: CubeTensor,
    receivers: CubeTensor,
    n: usize,
) -> CubeTensor {
    called();
    let ([n_src, d], [e, heads]) = (dims2(&x), dims2(&w));
    let out = full(Shape::new([n, d]), 0.0, DType::F32, &x);
    if e == 0 || n == 0 || d == 0 {
        return out;
    }
    let (x, w) = (into_contiguous(x), into_contiguous(w));
    let (senders, receivers) = (into_contiguous(senders), into_contiguous(receivers));
    let p = plan(&receivers, n);
    let it = dtype_to_storage_type(senders.dtype);
    let client = x.client.clone();
    let (count, dim) = grid(&x, n * d);
    csr_spmm::launch(
        &client,
        count,
        dim,
        x.clone().into_tensor_arg(),
        w.clone().into_tensor_arg(),
        senders.clone().into_tensor_arg(),
        p.offsets.clone().into_tensor_arg(),
        p.flag.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        n_src,
        d,
        heads,
        it,
    );
    let args = || {
        (
            x.clone().into_tensor_arg(),
            w.clone().into_tensor_arg(),
            senders.clone().into_tensor_arg(),
            receivers.clone().into_tensor_arg(),
            p.flag.clone().into_tensor_arg(),
        )
    };
    if adds_atomically(&x) {
        let (count, dim) = grid(&x, e * d);
        let (a, b, s, r, f) = args();
        let o = out.clone().into_tensor_arg();
        atomic_spmm::launch(
            &client, count, dim, a, b, s, r, f, o, n_src, n, d, heads, it,
        );
    } else {
        let (count, dim) = grid(&x, d);
        let (a, b, s, r, f) = args();
        let o = out.clone().into_tensor_arg();
        column_spmm::launch(
            &client, count, dim, a, b, s, r, f, o, n_src, n, d, heads, it,
        );
    }
    out
}

/// `out[e, h] = Σ_c a[a_index[e], h·C + c] · b[b_index[e], h·C + c]`, for f32 data.
pub(super) fn sddmm(
    a: CubeTensor,
    b: CubeTensor,
    a_index: CubeTensor,
    b_index: CubeTensor,
    heads: usize,
) -> CubeTensor {
    called();
    let ([n_a, d], [n_b, _]) = (dims2(&a), dims2(&b));
    let e = a_index.meta.shape()[0];
    let out = full(Shape::new([e, heads]), 0.0, DType::F32, &a);
    if e == 0 {
        return out;
    }
    let (a, b) = (into_contiguous(a), into_contiguous(b));
    let (a_index, b_index) = (into_contiguous(a_index), into_contiguous(b_index));
    let it = dtype_to_storage_type(a_index.dtype);
    let (count, dim) = grid(&a, e * heads);
    sddmm_dot::launch(
        &a.client,
        count,
        dim,
        a.clone().into_tensor_arg(),
        b.into_tensor_arg(),
        a_index.into_tensor_arg(),
        b_index.into_tensor_arg(),
        out.clone().into_tensor_arg(),
        n_a,
        n_b,
        d,
        heads,
        it,
    );
    out
}

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

fn dims2(t: &CubeTensor) -> [usize; 2] {
    let shape = t.shape();
    [shape[0], shape[1]]
}
