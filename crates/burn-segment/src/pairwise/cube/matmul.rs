//! `pairwise_matmul` on the device: the forward pass one unit per row of `x` (its output row
//! `[C + 1]` accumulated in place, softmax online), the backward one unit per row for `x`'s
//! gradient and one per column for `y`'s and `v`'s — each streaming its pairs in order, as the
//! CPU kernels do, with no atomics.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::FloatTensorOps;
use burn::tensor::{FloatDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;

use super::{
    Job, MaskArgs, MaskArgsLaunch, Pairs, columns_of, mask_args, pair_score, static_eligible,
    within_radius,
};
use crate::cube::csr::{NAN_MAX_KEY, key_of};
use crate::pairwise::PairWeight;

/// The kernels' form of [`PairWeight`]: 0 score, 1 softmax, 2 one.
fn weight_code(w: PairWeight) -> u32 {
    match w {
        PairWeight::Score => 0,
        PairWeight::Softmax => 1,
        PairWeight::One => 2,
    }
}

/// `-inf` (WGSL has no infinite literals).
#[cube]
fn neg_inf() -> f32 {
    f32::reinterpret(0xff80_0000u32)
}

/// Whether `(i, j)` is eligible, and its score.
#[cube]
#[allow(clippy::too_many_arguments)]
fn eligible_score<I: Int>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    labels_x: &Tensor<I>,
    labels_y: &Tensor<I>,
    args: &MaskArgs,
    i: usize,
    j: usize,
    d: usize,
    #[comptime] p: Pairs,
) -> (bool, f32) {
    let mut eligible = false;
    let mut s = 0.0f32;
    if static_eligible::<I>(i, j, labels_x[i], labels_y[j], args, p) {
        s = pair_score(x, y, i, j, d, p);
        eligible = within_radius(key_of(s, NAN_MAX_KEY), args, p);
    }
    (eligible, s)
}

/// Row `i` of the output `[n, c + 1]`: `Σ_j w_ij v_j` and the weight's statistic.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn forward_rows<I: Int>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    v: &Tensor<f32>,
    labels_x: &Tensor<I>,
    labels_y: &Tensor<I>,
    spans: &Tensor<u32>,
    out: &mut Tensor<f32>,
    args: MaskArgs,
    n: usize,
    m: usize,
    d: usize,
    c: usize,
    #[comptime] p: Pairs,
    #[comptime] weight: u32,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= n {
        terminate!();
    }
    let i = ABSOLUTE_POS;
    let row = i * (c + 1);
    for t in 0..c + 1 {
        out[row + t] = 0.0;
    }
    let (start, end) = columns_of(spans, i, m, p);
    // The running maximum, tracked with a flag rather than compared with -inf (WGSL may
    // assume no infinities in float comparisons).
    let mut max = 0.0f32;
    let mut seen = false;
    for j in start..end {
        let (eligible, s) = eligible_score::<I>(x, y, labels_x, labels_y, &args, i, j, d, p);
        if eligible {
            let mut w = s;
            if weight == 2 {
                w = 1.0;
            }
            if weight == 1 {
                // Online softmax: rescale what was summed when the maximum grows.
                if !seen {
                    max = s;
                    seen = true;
                } else if s > max {
                    let scale = (max - s).exp();
                    for t in 0..c + 1 {
                        out[row + t] *= scale;
                    }
                    max = s;
                }
                w = (s - max).exp();
            }
            out[row + c] += w;
            for t in 0..c {
                out[row + t] += w * v[j * c + t];
            }
        }
    }
    if weight == 1 {
        let total = out[row + c];
        if total == 0.0 {
            for t in 0..c {
                out[row + t] = 0.0;
            }
            out[row + c] = neg_inf();
        } else {
            for t in 0..c {
                out[row + t] /= total;
            }
            out[row + c] = max + total.ln();
        }
    }
}

/// `(w, ds)` of a pair with score `s`: its weight and the gradient reaching its score, from
/// row `i`'s output gradient `g = grad[i]`, `Σ g·out[i]` (`dot`) and its statistic.
#[cube]
#[allow(clippy::too_many_arguments)]
fn pair_grad(
    v: &Tensor<f32>,
    out: &Tensor<f32>,
    grad: &Tensor<f32>,
    dot: f32,
    i: usize,
    j: usize,
    s: f32,
    c: usize,
    #[comptime] weight: u32,
) -> (f32, f32) {
    let row = i * (c + 1);
    let mut gv = 0.0f32;
    for t in 0..c {
        gv += grad[row + t] * v[j * c + t];
    }
    let g_stat = grad[row + c];
    let mut w = s;
    let mut ds = gv + g_stat;
    if weight == 2 {
        w = 1.0f32;
        ds = 0.0f32;
    }
    if weight == 1 {
        let lse = out[row + c];
        w = 0.0f32;
        // By bits: WGSL may assume no infinities in float comparisons.
        if u32::reinterpret(lse) != 0xff80_0000u32 {
            w = (s - lse).exp();
        }
        ds = w * (gv - dot + g_stat);
    }
    (w, ds)
}

/// `acc[at..at + d] += ds · ∂s/∂a` for the pair `(a, b)` (rows `ia` of `a`, `ib` of `b`) with
/// score `s`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn chain(
    acc: &mut Tensor<f32>,
    at: usize,
    a: &Tensor<f32>,
    b: &Tensor<f32>,
    ia: usize,
    ib: usize,
    d: usize,
    s: f32,
    ds: f32,
    #[comptime] p: Pairs,
) {
    let mut k = 2.0 * ds;
    if p.sqrt {
        k = 0.0;
        if s > 0.0 && ds != 0.0 {
            k = ds / s;
        }
    }
    for t in 0..d {
        if p.dot {
            acc[at + t] += ds * b[ib * d + t];
        } else {
            acc[at + t] += k * (a[ia * d + t] - b[ib * d + t]);
        }
    }
}

/// Row `i`: `Σ_c grad · out` into `dots[i]` (what the column kernel needs), and `x`'s gradient.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn backward_rows<I: Int>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    v: &Tensor<f32>,
    labels_x: &Tensor<I>,
    labels_y: &Tensor<I>,
    spans: &Tensor<u32>,
    out: &Tensor<f32>,
    grad: &Tensor<f32>,
    dots: &mut Tensor<f32>,
    gx: &mut Tensor<f32>,
    args: MaskArgs,
    n: usize,
    m: usize,
    d: usize,
    c: usize,
    #[comptime] p: Pairs,
    #[comptime] weight: u32,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= n {
        terminate!();
    }
    let i = ABSOLUTE_POS;
    let row = i * (c + 1);
    let mut dot = 0.0f32;
    for t in 0..c {
        dot += grad[row + t] * out[row + t];
    }
    dots[i] = dot;
    for t in 0..d {
        gx[i * d + t] = 0.0;
    }
    if weight != 2 {
        let (start, end) = columns_of(spans, i, m, p);
        for j in start..end {
            let (eligible, s) = eligible_score::<I>(x, y, labels_x, labels_y, &args, i, j, d, p);
            if eligible {
                let (_, ds) = pair_grad(v, out, grad, dot, i, j, s, c, weight);
                chain(gx, i * d, x, y, i, j, d, s, ds, p);
            }
        }
    }
}

/// Column `j`: the gradients of `y[j]` and `v[j]` over the rows that see it (with sorted
/// groups, the rows of its own label, found by binary search).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn backward_columns<I: Int>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    v: &Tensor<f32>,
    labels_x: &Tensor<I>,
    labels_y: &Tensor<I>,
    out: &Tensor<f32>,
    grad: &Tensor<f32>,
    dots: &Tensor<f32>,
    gy: &mut Tensor<f32>,
    gv: &mut Tensor<f32>,
    args: MaskArgs,
    n: usize,
    m: usize,
    d: usize,
    c: usize,
    #[comptime] p: Pairs,
    #[comptime] weight: u32,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= m {
        terminate!();
    }
    let j = ABSOLUTE_POS;
    for t in 0..d {
        gy[j * d + t] = 0.0;
    }
    for t in 0..c {
        gv[j * c + t] = 0.0;
    }
    let mut start = 0usize;
    let mut end = n;
    if p.spans {
        let l = labels_y[j];
        // The first row with a label >= l, then the first with a label > l.
        let mut lo = 0usize;
        let mut hi = n;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if labels_x[mid] < l {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        start = lo;
        hi = n;
        while lo < hi {
            let mid = (lo + hi) / 2;
            if labels_x[mid] <= l {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        end = lo;
    }
    for i in start..end {
        let (eligible, s) = eligible_score::<I>(x, y, labels_x, labels_y, &args, i, j, d, p);
        if eligible {
            let (w, ds) = pair_grad(v, out, grad, dots[i], i, j, s, c, weight);
            for t in 0..c {
                gv[j * c + t] += w * grad[i * (c + 1) + t];
            }
            if weight != 2 {
                chain(gy, j * d, y, x, j, i, d, s, ds, p);
            }
        }
    }
}

/// The forward `[N, C + 1]`.
pub(super) fn forward(job: &Job, v: CubeTensor, weight: PairWeight) -> CubeTensor {
    crate::cube::called();
    let (n, c) = (job.n(), v.meta.shape()[1]);
    let out = CubeBackend::float_empty(Shape::new([n, c + 1]), &job.x.device, FloatDType::F32);
    if n == 0 {
        return out;
    }
    let (count, dim) = job.grid(n);
    forward_rows::launch(
        &job.x.client,
        count,
        dim,
        job.x.clone().into_tensor_arg(),
        job.y.clone().into_tensor_arg(),
        into_contiguous(v).into_tensor_arg(),
        job.lx.clone().into_tensor_arg(),
        job.ly.clone().into_tensor_arg(),
        job.spans.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        mask_args!(job),
        n,
        job.m(),
        job.d(),
        c,
        job.pairs,
        weight_code(weight),
        dtype_to_storage_type(job.lx.dtype),
    );
    out
}

/// The gradients `(gx, gy, gv)` given the forward's output and its gradient.
pub(super) fn backward(
    job: &Job,
    [v, out, grad]: [CubeTensor; 3],
    weight: PairWeight,
) -> (CubeTensor, CubeTensor, CubeTensor) {
    crate::cube::called();
    let (n, m, d, c) = (job.n(), job.m(), job.d(), v.meta.shape()[1]);
    let device = &job.x.device;
    let empty =
        |dims: [usize; 2]| CubeBackend::float_empty(Shape::new(dims), device, FloatDType::F32);
    let (gx, gy, gv, dots) = (
        empty([n, d]),
        empty([m, d]),
        empty([m, c]),
        empty([n.max(1), 1]),
    );
    let [v, out, grad] = [v, out, grad].map(into_contiguous);
    let it = dtype_to_storage_type(job.lx.dtype);
    let client = &job.x.client;
    if n > 0 {
        let (count, dim) = job.grid(n);
        backward_rows::launch(
            client,
            count,
            dim,
            job.x.clone().into_tensor_arg(),
            job.y.clone().into_tensor_arg(),
            v.clone().into_tensor_arg(),
            job.lx.clone().into_tensor_arg(),
            job.ly.clone().into_tensor_arg(),
            job.spans.clone().into_tensor_arg(),
            out.clone().into_tensor_arg(),
            grad.clone().into_tensor_arg(),
            dots.clone().into_tensor_arg(),
            gx.clone().into_tensor_arg(),
            mask_args!(job),
            n,
            m,
            d,
            c,
            job.pairs,
            weight_code(weight),
            it,
        );
    }
    if m > 0 {
        let (count, dim) = job.grid(m);
        backward_columns::launch(
            client,
            count,
            dim,
            job.x.clone().into_tensor_arg(),
            job.y.clone().into_tensor_arg(),
            v.into_tensor_arg(),
            job.lx.clone().into_tensor_arg(),
            job.ly.clone().into_tensor_arg(),
            out.into_tensor_arg(),
            grad.into_tensor_arg(),
            dots.into_tensor_arg(),
            gy.clone().into_tensor_arg(),
            gv.clone().into_tensor_arg(),
            mask_args!(job),
            n,
            m,
            d,
            c,
            job.pairs,
            weight_code(weight),
            it,
        );
    }
    (gx, gy, gv)
}
