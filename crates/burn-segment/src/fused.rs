//! Fused message passing: gather-weight-sum (SpMM) and per-edge dot products (SDDMM), the two
//! kernels graph layers spend their time in, without an `[E, D]` tensor in between.

use burn::backend::{Dispatch, TensorMetadata};
use burn::tensor::{Int, Tensor};

use crate::{SegmentBackend, SegmentIndex};

/// Gathers the sender rows of `x`, scales them by per-edge weights and sums them into the
/// receivers, in one pass (a generalised sparse-dense matrix product):
///
/// `out[r, h·C + c] = Σ_{e : receivers[e] = r} w[e, h] · x[senders[e], h·C + c]`
///
/// `weights` holds one weight per edge and head (`[E, H]`, `H` dividing `D`; `[E, 1]` for one
/// weight per edge) or `None` for a plain sum. The result equals `segment_sum(x[senders] · w,
/// receivers, num_segments)`, but the CPU kernels never form the `[E, D]` messages: each
/// receiver's row is accumulated by one task in edge order (deterministic), and the backward
/// pass is two more fused calls (an SpMM along the reversed edges for `x`, an [`sddmm`] for
/// the weights). Receivers with no edges get 0.
///
/// # Shapes
/// `x: [N_src, D]`, `senders`, `receivers: [E]`, `weights: [E, H]` -> `[num_segments, D]`.
///
/// # Panics
/// If the index lengths differ, `weights` is not `[E, H]` with `H ≥ 1` dividing `D`, or the
/// dtypes of `x` and `weights` differ; on CPU backends if a sender lies outside `0..N_src` or
/// a receiver outside `0..num_segments` (other backends drop such edges).
pub fn spmm(
    x: Tensor<2>,
    senders: Tensor<1, Int>,
    receivers: Tensor<1, Int>,
    weights: Option<Tensor<2>>,
    num_segments: usize,
) -> Tensor<2> {
    let rows = x.dims()[0];
    let senders = SegmentIndex::ids(senders.into_dispatch(), rows);
    spmm_over(
        x,
        senders,
        SegmentIndex::ids(receivers.into_dispatch(), num_segments),
        weights,
    )
}

/// Per-edge, per-head dot products of rows gathered from two matrices (a sampled dense-dense
/// product, e.g. attention scores or link-prediction logits):
///
/// `out[e, h] = Σ_c a[a_index[e], h·C + c] · b[b_index[e], h·C + c]`
///
/// Its backward is two fused [`spmm`] calls; no `[E, D]` tensor is formed on the CPU
/// backends.
///
/// # Shapes
/// `a: [N_a, D]`, `b: [N_b, D]`, `a_index`, `b_index: [E]` -> `[E, heads]` (`heads` dividing
/// `D`).
///
/// # Panics
/// If the widths or index lengths differ, `heads` is 0 or does not divide `D`, or the dtypes
/// differ; on CPU backends if an index is out of range (other backends give 0).
pub fn sddmm(
    a: Tensor<2>,
    b: Tensor<2>,
    a_index: Tensor<1, Int>,
    b_index: Tensor<1, Int>,
    heads: usize,
) -> Tensor<2> {
    let (na, nb) = (a.dims()[0], b.dims()[0]);
    let (ai, bi) = (a_index.into_dispatch(), b_index.into_dispatch());
    sddmm_over(
        a,
        b,
        SegmentIndex::ids(ai, na),
        SegmentIndex::ids(bi, nb),
        heads,
    )
}

/// Additive attention coefficients (GAT's), fused: per edge and head the logit
/// `LeakyReLU(src[senders[e], h] + dst[receivers[e], h] + bias[e, h])`, then a softmax over the
/// edges of each receiver:
///
/// `α[e, h] = exp(l[e, h]) / Σ_{e' : receivers[e'] = receivers[e]} exp(l[e', h])`
///
/// The same as gathering both scores, adding, `leaky_relu` and [`segment_softmax`] over the
/// receivers (the composite default on other backends, and the reference), but the CPU kernels
/// do it in two passes over `[E, H]` with no intermediate tensors, and the `Autodiff` backward
/// is one fused pass (softmax and LeakyReLU backward together) followed by two segment sums.
///
/// The receivers are the segments: there are `N_dst` of them (the rows of `dst`), and a
/// receiver without edges gets no coefficients. `bias` (`[E, H]`, or `[E, 1]` shared by the
/// heads) adds per-edge terms before the LeakyReLU, e.g. edge features; a bias of `-inf` masks
/// its edge (weight 0, zero gradient) whatever the slope. `None` adds nothing.
///
/// [`segment_softmax`]: crate::segment_softmax
///
/// # Shapes
/// `src: [N_src, H]`, `dst: [N_dst, H]`, `senders`, `receivers: [E]`, `bias: [E, H]` or
/// `[E, 1]` -> `[E, H]`.
///
/// # Panics
/// If the widths, index lengths, bias shape or dtypes disagree; on CPU backends if a sender
/// lies outside `0..N_src` or a receiver outside `0..N_dst`.
pub fn attention_softmax(
    src: Tensor<2>,
    dst: Tensor<2>,
    senders: Tensor<1, Int>,
    receivers: Tensor<1, Int>,
    bias: Option<Tensor<2>>,
    negative_slope: f64,
) -> Tensor<2> {
    let (ns, nd) = (src.dims()[0], dst.dims()[0]);
    let (s, r) = (senders.into_dispatch(), receivers.into_dispatch());
    let (s, r) = (SegmentIndex::ids(s, ns), SegmentIndex::ids(r, nd));
    attention_softmax_over(src, dst, s, r, bias, negative_slope)
}

/// The checked weights of an `spmm` with `e` senders and `er` receivers (ones for `None`).
fn spmm_weights(x: &Tensor<2>, e: usize, er: usize, weights: Option<Tensor<2>>) -> Tensor<2> {
    let [_, d] = x.dims();
    assert_eq!(
        e, er,
        "burn-segment: spmm has {e} senders but {er} receivers"
    );
    let weights = weights.unwrap_or_else(|| Tensor::ones([e, 1], (&x.device(), x.dtype())));
    let [we, heads] = weights.dims();
    assert!(
        we == e && heads >= 1 && d % heads == 0,
        "burn-segment: spmm weights must be [E = {e}, H] with H ≥ 1 dividing D = {d}, got [{we}, {heads}]"
    );
    assert_eq!(
        x.dtype(),
        weights.dtype(),
        "burn-segment: spmm x and weights dtypes differ"
    );
    weights
}

/// Panics unless an `sddmm` of `a` and `b` with `ea` and `eb` indices and `heads` is well formed.
fn check_sddmm(a: &Tensor<2>, b: &Tensor<2>, ea: usize, eb: usize, heads: usize) {
    let (d, db) = (a.dims()[1], b.dims()[1]);
    assert_eq!(
        d, db,
        "burn-segment: sddmm rows of a have {d} columns but rows of b {db}"
    );
    assert_eq!(
        ea, eb,
        "burn-segment: sddmm has {ea} indices into a but {eb} into b"
    );
    assert!(
        heads >= 1 && d % heads == 0,
        "burn-segment: sddmm heads = {heads} must be ≥ 1 and divide D = {d}"
    );
    assert_eq!(
        a.dtype(),
        b.dtype(),
        "burn-segment: sddmm a and b dtypes differ"
    );
}

/// The checked bias of an attention softmax with `e` senders and `er` receivers (zeros for
/// `None`).
fn attention_bias(
    src: &Tensor<2>,
    dst: &Tensor<2>,
    e: usize,
    er: usize,
    bias: Option<Tensor<2>>,
) -> Tensor<2> {
    let (h, hd) = (src.dims()[1], dst.dims()[1]);
    assert_eq!(
        h, hd,
        "burn-segment: attention_softmax src has {h} heads but dst {hd}"
    );
    assert_eq!(
        e, er,
        "burn-segment: attention_softmax has {e} senders but {er} receivers"
    );
    assert_eq!(
        src.dtype(),
        dst.dtype(),
        "burn-segment: attention_softmax src and dst dtypes differ"
    );
    let bias = bias.unwrap_or_else(|| Tensor::zeros([e, 1], (&src.device(), src.dtype())));
    let [be, bw] = bias.dims();
    assert!(
        be == e && (bw == 1 || bw == h),
        "burn-segment: attention_softmax bias must be [E = {e}, 1] or [E, H = {h}], got [{be}, {bw}]"
    );
    assert_eq!(
        src.dtype(),
        bias.dtype(),
        "burn-segment: attention_softmax src and bias dtypes differ"
    );
    bias
}

/// The number of ids of an index, `E`.
fn len(index: &SegmentIndex<Dispatch>) -> usize {
    index.segment_ids().shape()[0]
}

/// [`spmm`] over senders (segments: the rows of `x`) and receivers (segments: the output rows)
/// given or planned: a plan's ids are not checked or planned again, forward or backward.
///
/// # Panics
/// As [`spmm`], and if a sender plan does not have one segment per row of `x`.
pub(crate) fn spmm_over(
    x: Tensor<2>,
    senders: SegmentIndex<Dispatch>,
    receivers: SegmentIndex<Dispatch>,
    weights: Option<Tensor<2>>,
) -> Tensor<2> {
    check_index(&senders, x.dims()[0], "spmm sender");
    let weights = spmm_weights(&x, len(&senders), len(&receivers), weights);
    Tensor::from_dispatch(Dispatch::segment_spmm(
        x.into_dispatch(),
        weights.into_dispatch(),
        senders,
        receivers,
    ))
}

/// [`sddmm`] over indices (segments: the rows of `a`, of `b`) given or planned.
///
/// # Panics
/// As [`sddmm`], and if a plan does not have one segment per row of its side.
pub(crate) fn sddmm_over(
    a: Tensor<2>,
    b: Tensor<2>,
    a_index: SegmentIndex<Dispatch>,
    b_index: SegmentIndex<Dispatch>,
    heads: usize,
) -> Tensor<2> {
    check_index(&a_index, a.dims()[0], "sddmm a");
    check_index(&b_index, b.dims()[0], "sddmm b");
    check_sddmm(&a, &b, len(&a_index), len(&b_index), heads);
    Tensor::from_dispatch(Dispatch::segment_sddmm(
        a.into_dispatch(),
        b.into_dispatch(),
        a_index,
        b_index,
        heads,
    ))
}

/// [`attention_softmax`] over senders (segments: the rows of `src`) and receivers (segments:
/// the rows of `dst`) given or planned.
///
/// # Panics
/// As [`attention_softmax`], and if a plan does not have one segment per row of its side.
pub(crate) fn attention_softmax_over(
    src: Tensor<2>,
    dst: Tensor<2>,
    senders: SegmentIndex<Dispatch>,
    receivers: SegmentIndex<Dispatch>,
    bias: Option<Tensor<2>>,
    negative_slope: f64,
) -> Tensor<2> {
    check_index(&senders, src.dims()[0], "attention sender");
    check_index(&receivers, dst.dims()[0], "attention receiver");
    let bias = attention_bias(&src, &dst, len(&senders), len(&receivers), bias);
    Tensor::from_dispatch(Dispatch::segment_attention_softmax(
        src.into_dispatch(),
        dst.into_dispatch(),
        bias.into_dispatch(),
        senders,
        receivers,
        negative_slope,
    ))
}

/// Panics unless a plan has one segment per row of the `rows` it indexes (given ids are
/// checked against the rows by the backend).
fn check_index(index: &SegmentIndex<Dispatch>, rows: usize, what: &str) {
    if let SegmentIndex::Plan(_) = index {
        let n = index.num_segments();
        assert_eq!(
            n, rows,
            "burn-segment: the {what} plan has {n} segments but indexes {rows} rows"
        );
    }
}
