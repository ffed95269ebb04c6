//! The fused ops on wgpu: `spmm` (gather, weight, sum into receivers) and `sddmm` (per-edge,
//! per-head dot products), without an `[E, D]` tensor in between.
//!
//! `spmm` follows the segment sum's two strategies: with receiver-sorted edges one unit per
//! output element sums its receiver's edges in edge order (no atomics, bitwise repeatable);
//! otherwise one float atomic add per edge and column, or, on devices without float atomics,
//! one unit per column walking every edge in order. `sddmm` needs neither: one unit per edge and
//! head sums its head's columns. Edges whose sender or receiver is out of range are dropped
//! (`spmm`) or give 0 (`sddmm`); nothing is written out of bounds.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::tensor::{DType, Shape};
use burn_cubecl::{kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;

use super::csr::{in_range, span};
use super::{adds_atomically, called, dims2, full, grid, plan};

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
    let (start, end) = span(offsets, r);
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
