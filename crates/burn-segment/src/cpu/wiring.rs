//! What the CPU backends' trait methods share: each op written once over a [`SegmentIndex`],
//! whose given ids are planned for the call and whose plan is read in place.

use burn::backend::Backend;
use burn::tensor::DType;

use super::fused::{
    AttentionIndex, attention_backward, attention_dtypes, attention_softmax, sddmm, spmm,
    supports_fused,
};
use super::kernels::{CsrPlan, ScatterOp};
use super::ops::{
    Given, IndexList, extreme, extreme_scattered, given, held_plan, index_list, plan, reduce,
    reduce_scattered, scatter_op, softmax, sum_masked, supports, with_index,
};
use super::tensor::CpuTensor;
use crate::plan::SegmentIndex;
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction, composite};

/// What the CPU kernels read of a [`SegmentIndex`]: given ids are checked and planned for the
/// call, a `SegmentPlan`'s are read in place (trusted).
pub(crate) trait CpuIndex<T> {
    /// The CSR plan of the ids.
    fn csr(&self) -> CsrPlan<'_>;
    /// The ids' dtype.
    fn dtype(&self) -> DType;
    /// The ids as indices into `rows` rows of `what`: each checked when given; a plan's are in
    /// range by construction once its number of segments is `rows`.
    ///
    /// # Panics
    /// Naming the first index out of range, or a plan over another number of rows.
    fn index_list(&self, rows: usize, what: &str) -> IndexList<'_>;
}

impl<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>> CpuIndex<T> for SegmentIndex<B> {
    fn csr(&self) -> CsrPlan<'_> {
        match self {
            SegmentIndex::Ids {
                segment_ids,
                num_segments,
            } => plan(segment_ids, *num_segments),
            SegmentIndex::Plan(p) => held_plan(p),
        }
    }

    fn dtype(&self) -> DType {
        self.segment_ids().dtype()
    }

    fn index_list(&self, rows: usize, what: &str) -> IndexList<'_> {
        match self {
            SegmentIndex::Ids { segment_ids, .. } => index_list(segment_ids, rows, what),
            SegmentIndex::Plan(p) => {
                assert_eq!(
                    p.num_segments, rows,
                    "burn-segment: the {what} plan has {} segments but indexes {rows} rows",
                    p.num_segments
                );
                IndexList::of(&p.segment_ids)
            }
        }
    }
}

/// Sum, product, max or min of `data`'s rows per segment (`fallback`: the composite path).
pub(crate) fn reduce_op<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>>(
    data: T,
    ids: SegmentIndex<B>,
    r: SegmentReduction,
    fallback: impl FnOnce(T, T, usize, SegmentReduction) -> T,
) -> T {
    if !supports(data.dtype()) {
        let (ids, n) = ids.into_ids();
        return fallback(data, ids, n, r);
    }
    match (&ids, r) {
        (
            SegmentIndex::Ids {
                segment_ids,
                num_segments: n,
            },
            SegmentReduction::Sum | SegmentReduction::Max | SegmentReduction::Min,
        ) => match given(segment_ids, &data, *n, scatter_op(r)) {
            Given::Csr(plan) => reduce(data, &plan, r),
            Given::Scattered(values) => reduce_scattered(data, &values, *n, r),
        },
        _ => reduce(data, &ids.csr(), r),
    }
}

/// The sum of the entries `mask` keeps (`[E]` or the data's shape), read in place: no filled
/// copy of the data. Non-float data goes through the composite.
pub(crate) fn sum_masked_op<
    T: CpuTensor + 'static,
    B: SegmentBackend<FloatTensorPrimitive = T, IntTensorPrimitive = T, BoolTensorPrimitive = T>,
>(
    data: T,
    mask: T,
    ids: SegmentIndex<B>,
) -> T {
    if !matches!(data.dtype(), DType::F32 | DType::F64) {
        let data = composite::zero_masked_out::<B>(data, mask);
        return B::segment_reduce(data, ids, SegmentReduction::Sum);
    }
    let plan = ids.csr();
    let per_row = mask.shape().num_dims() < data.shape().num_dims();
    let (_, d, _) = crate::shape::flat_rows(&data.shape(), plan.num_segments());
    // Rows read out of order with a flag per entry cost a second random read a row (their
    // flags); under two cache lines of data a row, filling a copy in one sequential pass and
    // summing that is faster (see the book's performance chapter).
    let fill_first = !per_row && !plan.is_sorted() && d * data.dtype().size() < 128;
    if !fill_first && let Some(flags) = mask.mask_bytes() {
        return sum_masked(data, &flags, per_row, &plan);
    }
    // Also where the kernels cannot read the bool storage (Flex's u32 flags): mask_bytes is
    // asked once, as it copies NdArray's flags.
    let filled = composite::zero_masked_out::<B>(data, mask);
    reduce(filled, &plan, SegmentReduction::Sum)
}

/// Max or min with arguments (in the ids' dtype).
pub(crate) fn extreme_op<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>>(
    data: T,
    ids: SegmentIndex<B>,
    which: SegmentExtreme,
    fallback: impl FnOnce(T, T, usize, SegmentExtreme) -> (T, T),
) -> (T, T) {
    if !supports(data.dtype()) {
        let (ids, n) = ids.into_ids();
        return fallback(data, ids, n, which);
    }
    let dtype = ids.dtype();
    match &ids {
        SegmentIndex::Ids {
            segment_ids,
            num_segments: n,
        } => match given(segment_ids, &data, *n, ScatterOp::Extreme) {
            Given::Csr(plan) => extreme(data, &plan, dtype, which),
            Given::Scattered(values) => extreme_scattered(data, &values, *n, which),
        },
        SegmentIndex::Plan(_) => extreme(data, &ids.csr(), dtype, which),
    }
}

/// Softmax over each segment's rows.
pub(crate) fn softmax_op<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>>(
    data: T,
    ids: SegmentIndex<B>,
    fallback: impl FnOnce(T, T, usize) -> T,
) -> T {
    if !supports(data.dtype()) {
        let (ids, n) = ids.into_ids();
        return fallback(data, ids, n);
    }
    softmax(data, &ids.csr())
}

/// The fused gather-weight-sum of `x`'s rows (indexed by `s`) into `r`'s segments.
pub(crate) fn spmm_op<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>>(
    x: T,
    weights: T,
    s: SegmentIndex<B>,
    r: SegmentIndex<B>,
    fallback: impl FnOnce(T, T, T, T, usize) -> T,
) -> T {
    if !supports_fused(x.dtype()) || x.dtype() != weights.dtype() {
        let ((s, _), (r, n)) = (s.into_ids(), r.into_ids());
        return fallback(x, weights, s, r, n);
    }
    let senders = s.index_list(x.shape()[0], "sender");
    with_index!(&senders, |senders| spmm(x, weights, senders, &r.csr()))
}

/// Per-edge, per-head dot products of `a`'s and `b`'s rows.
pub(crate) fn sddmm_op<T: CpuTensor + 'static, B: Backend<IntTensorPrimitive = T>>(
    a: T,
    b: T,
    ai: SegmentIndex<B>,
    bi: SegmentIndex<B>,
    heads: usize,
    fallback: impl FnOnce(T, T, T, T, usize) -> T,
) -> T {
    if !supports_fused(a.dtype()) || a.dtype() != b.dtype() {
        let ((ai, _), (bi, _)) = (ai.into_ids(), bi.into_ids());
        return fallback(a, b, ai, bi, heads);
    }
    let (ia, ib) = (
        ai.index_list(a.shape()[0], "a"),
        bi.index_list(b.shape()[0], "b"),
    );
    with_index!(&ia, |ia| with_index!(&ib, |ib| sddmm(a, b, ia, ib, heads)))
}

/// `$body` with `$index` bound to the [`AttentionIndex`] of the senders `$s` and receivers `$r`
/// (checked against `$rows`: the rows of `src` and of `dst`), in the ids' own dtypes.
macro_rules! with_attention_index {
    ($s:expr, $r:expr, $rows:expr, |$index:ident| $body:expr) => {{
        let (senders, receivers) = (
            $s.index_list($rows.0, "sender"),
            $r.index_list($rows.1, "receiver"),
        );
        let plan = $r.csr();
        with_index!(&senders, |senders| {
            with_index!(&receivers, |receivers| {
                let $index = AttentionIndex {
                    senders,
                    receivers,
                    plan: &plan,
                };
                $body
            })
        })
    }};
}

/// GAT's attention softmax over senders (rows of `src`) and receivers (rows of `dst`).
pub(crate) fn attention_op<
    T: CpuTensor + 'static,
    B: SegmentBackend<FloatTensorPrimitive = T, IntTensorPrimitive = T>,
>(
    [src, dst, bias]: [T; 3],
    s: SegmentIndex<B>,
    r: SegmentIndex<B>,
    slope: f64,
) -> T {
    if !attention_dtypes(&[src.dtype(), dst.dtype(), bias.dtype()]) {
        let ((s, _), (r, _)) = (s.into_ids(), r.into_ids());
        return composite::attention_softmax::<B>(src, dst, bias, s, r, slope);
    }
    let rows = (src.shape()[0], dst.shape()[0]);
    with_attention_index!(s, r, rows, |index| attention_softmax(
        src, dst, bias, &index, slope
    ))
}

/// The raw-score gradient of the attention softmax.
pub(crate) fn attention_backward_op<
    T: CpuTensor + 'static,
    B: SegmentBackend<FloatTensorPrimitive = T, IntTensorPrimitive = T>,
>(
    [src, dst, bias, alpha, grad]: [T; 5],
    s: SegmentIndex<B>,
    r: SegmentIndex<B>,
    slope: f64,
) -> T {
    let dtypes = [
        src.dtype(),
        dst.dtype(),
        bias.dtype(),
        alpha.dtype(),
        grad.dtype(),
    ];
    if !attention_dtypes(&dtypes) {
        let ((s, _), (r, _)) = (s.into_ids(), r.into_ids());
        return composite::attention_backward::<B>(src, dst, bias, s, r, alpha, grad, slope);
    }
    let rows = (src.shape()[0], dst.shape()[0]);
    with_attention_index!(s, r, rows, |index| attention_backward(
        (src, dst, bias, alpha, grad),
        &index,
        slope
    ))
}
