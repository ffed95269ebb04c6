//! GAT's additive attention on wgpu: one unit per edge and head computes the LeakyReLU logit
//! (the segment softmax kernels then normalise per receiver) and, backward, the gradient of the
//! raw score. Edges with an out-of-range index get logit 0 (dropped by the softmax) and
//! gradient 0.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::FloatTensorOps;
use burn::tensor::{DType, FloatDType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;
use cubecl::{CubeCount, CubeDim};

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

/// What both attention kernels read: the node scores, the bias and the edges, contiguous, with
/// their sizes.
struct Scores {
    src: CubeTensor,
    dst: CubeTensor,
    bias: CubeTensor,
    senders: CubeTensor,
    receivers: CubeTensor,
    n_src: usize,
    n_dst: usize,
    heads: usize,
    bias_width: usize,
    edges: usize,
}

impl Scores {
    fn new(
        src: CubeTensor,
        dst: CubeTensor,
        bias: CubeTensor,
        senders: CubeTensor,
        receivers: CubeTensor,
    ) -> Scores {
        let ([n_src, heads], [n_dst, _], [_, bias_width]) =
            (dims2(&src), dims2(&dst), dims2(&bias));
        let edges = senders.meta.shape()[0];
        Scores {
            src: into_contiguous(src),
            dst: into_contiguous(dst),
            bias: into_contiguous(bias),
            senders: into_contiguous(senders),
            receivers: into_contiguous(receivers),
            n_src,
            n_dst,
            heads,
            bias_width,
            edges,
        }
    }

    /// An unwritten `[E, H]` f32 output.
    fn output(&self) -> CubeTensor {
        let shape = Shape::new([self.edges, self.heads]);
        burn_cubecl::CubeBackend::float_empty(shape, &self.src.device, FloatDType::F32)
    }

    /// The launch geometry (one unit per edge and head) and the id type.
    fn launch(&self) -> (CubeCount, CubeDim, ElemType) {
        let (count, dim) = grid(&self.src, self.edges * self.heads);
        (count, dim, dtype_to_storage_type(self.senders.dtype))
    }
}

/// Zeros `[E, H]` when there are no edges or heads (or, `or_receivers`, no receivers): nothing
/// is launched, not even a copy.
fn nothing_to_do(
    src: &CubeTensor,
    dst: &CubeTensor,
    senders: &CubeTensor,
    or_receivers: bool,
) -> Option<CubeTensor> {
    let ([_, heads], [n_dst, _], edges) = (dims2(src), dims2(dst), senders.meta.shape()[0]);
    let nothing = edges == 0 || heads == 0 || (or_receivers && n_dst == 0);
    nothing.then(|| full(Shape::new([edges, heads]), 0.0, DType::F32, src))
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
    if let Some(zeros) = nothing_to_do(&src, &dst, &senders, false) {
        return zeros;
    }
    let sc = Scores::new(src, dst, bias, senders, receivers);
    let logits = sc.output();
    let (count, dim, it) = sc.launch();
    attention_logits::launch(
        &sc.src.client,
        count,
        dim,
        sc.src.clone().into_tensor_arg(),
        sc.dst.into_tensor_arg(),
        sc.bias.into_tensor_arg(),
        sc.senders.into_tensor_arg(),
        sc.receivers.clone().into_tensor_arg(),
        logits.clone().into_tensor_arg(),
        sc.n_src,
        sc.n_dst,
        sc.heads,
        sc.bias_width,
        slope as f32,
        it,
    );
    super::ops::softmax(logits, None, sc.receivers, sc.n_dst)
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
    if let Some(zeros) = nothing_to_do(&src, &dst, &senders, true) {
        return zeros;
    }
    let sc = Scores::new(src, dst, bias, senders, receivers);
    let out = sc.output();
    let alpha = into_contiguous(alpha);
    let alpha_grad = into_contiguous(burn_cubecl::CubeBackend::float_mul(grad, alpha.clone()));
    let total = super::ops::sum_prod(
        alpha_grad.clone(),
        None,
        sc.receivers.clone(),
        sc.n_dst,
        false,
    );
    let (count, dim, it) = sc.launch();
    attention_grad::launch(
        &sc.src.client,
        count,
        dim,
        sc.src.clone().into_tensor_arg(),
        sc.dst.into_tensor_arg(),
        sc.bias.into_tensor_arg(),
        sc.senders.into_tensor_arg(),
        sc.receivers.into_tensor_arg(),
        alpha_grad.into_tensor_arg(),
        alpha.into_tensor_arg(),
        into_contiguous(total).into_tensor_arg(),
        out.clone().into_tensor_arg(),
        sc.n_src,
        sc.n_dst,
        sc.heads,
        sc.bias_width,
        slope as f32,
        it,
    );
    out
}
