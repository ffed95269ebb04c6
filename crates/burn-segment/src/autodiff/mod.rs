//! Hand-written backward passes of the segment ops on `Autodiff`.
//!
//! Every backward keeps what it needs (ids or plan, inputs or outputs) in its state, so it is
//! also correct under gradient checkpointing (nothing is recomputed). A planned op's backward
//! reuses the forward call's plan. Integer ops carry no gradient and forward to the inner
//! backend.

mod backward;
mod grouping;
mod masked;

use core::marker::PhantomData;

use burn::backend::{
    AutodiffBackend, TensorMetadata,
    autodiff::{
        Autodiff,
        checkpoint::strategy::CheckpointStrategy,
        ops::{Backward, OpsKind},
    },
    tensor::{BoolTensor, FloatTensor, IntTensor},
};

use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};
use backward::*;
use grouping::{Grouping, Ids};

/// The inner backend's form of a plan given to `Autodiff` (the same int tensors).
fn inner<B: SegmentBackend, C: CheckpointStrategy>(
    p: SegmentPlanPrimitive<Autodiff<B, C>>,
) -> SegmentPlanPrimitive<B> {
    SegmentPlanPrimitive {
        segment_ids: p.segment_ids,
        offsets: p.offsets,
        order: p.order,
        num_segments: p.num_segments,
        sorted: p.sorted,
    }
}

/// The unplanned ids of an op given `segment_ids` and `n` segments.
fn ids<B: SegmentBackend>(ids: IntTensor<B>, n: usize) -> Ids<B> {
    Ids { ids, n }
}

/// A tracked reduction over `g`'s ids.
fn reduce<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    g: G,
    reduction: SegmentReduction,
) -> FloatTensor<Autodiff<B, C>> {
    match reduction {
        SegmentReduction::Max => return extreme_values::<B, C, G>(data, g, SegmentExtreme::Max),
        SegmentReduction::Min => return extreme_values::<B, C, G>(data, g, SegmentExtreme::Min),
        _ => {}
    }
    let (data, node) = data.into_parts();
    match reduction {
        SegmentReduction::Sum => {
            let backward = SumBackward::<G>(PhantomData);
            match backward.prepare::<C>([node]).compute_bound().stateful() {
                OpsKind::Tracked(prep) => {
                    let out = g.reduce(data, reduction);
                    prep.finish(g, out)
                }
                OpsKind::UnTracked(prep) => prep.finish(g.reduce(data, reduction)),
            }
        }
        _ => {
            let backward = ProdBackward::<G>(PhantomData);
            match backward.prepare::<C>([node]).compute_bound().stateful() {
                OpsKind::Tracked(prep) => {
                    let out = g.reduce(data.clone(), reduction);
                    prep.finish((data, g), out)
                }
                OpsKind::UnTracked(prep) => prep.finish(g.reduce(data, reduction)),
            }
        }
    }
}

/// A tracked max / min with arguments over `g`'s ids (over the entries `mask` keeps, if any):
/// the gradient goes to the argument rows.
fn extreme<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: Option<BoolTensor<B>>,
    g: G,
    which: SegmentExtreme,
) -> (FloatTensor<Autodiff<B, C>>, IntTensor<B>) {
    let (data, node) = data.into_parts();
    let shape = data.shape();
    let run = |g: &G, data| match mask {
        Some(mask) => g.extreme_masked(data, mask, which),
        None => g.extreme(data, which),
    };
    let backward = ExtremeBackward::<G>(PhantomData);
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let (out, arg) = run(&g, data);
            (prep.finish((arg.clone(), g, shape), out), arg)
        }
        OpsKind::UnTracked(prep) => {
            let (out, arg) = run(&g, data);
            (prep.finish(out), arg)
        }
    }
}

/// A tracked max or min, values only: the arguments are computed when backward needs them, and
/// an untracked call (inference) runs the values-only kernel.
fn extreme_values<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    g: G,
    which: SegmentExtreme,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let shape = data.shape();
    let backward = ExtremeBackward::<G>(PhantomData);
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let (out, arg) = g.extreme(data, which);
            prep.finish((arg, g, shape), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(g.reduce(data, which.reduction())),
    }
}

// ANCHOR: autodiff_softmax
/// A tracked softmax over `g`'s ids.
fn softmax<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    g: G,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let backward = SoftmaxBackward::<G>(PhantomData);
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let y = g.softmax(data);
            prep.finish((y.clone(), g), y)
        }
        OpsKind::UnTracked(prep) => prep.finish(g.softmax(data)),
    }
}
// ANCHOR_END: autodiff_softmax

/// A tracked `spmm` of `x`'s rows (indexed by `senders`) into the receivers' segments.
fn spmm<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    x: FloatTensor<Autodiff<B, C>>,
    weights: FloatTensor<Autodiff<B, C>>,
    senders: G,
    receivers: G,
) -> FloatTensor<Autodiff<B, C>> {
    let (x, xn) = x.into_parts();
    let (w, wn) = weights.into_parts();
    let backward = SpmmBackward::<G>(PhantomData);
    match backward.prepare::<C>([xn, wn]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let heads = w.shape()[1];
            let out = G::spmm(x.clone(), w.clone(), senders.clone(), receivers.clone());
            prep.finish((x, w, senders, receivers, heads), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(G::spmm(x, w, senders, receivers)),
    }
}

/// A tracked `sddmm` of `a`'s and `b`'s rows.
fn sddmm<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    a: FloatTensor<Autodiff<B, C>>,
    b: FloatTensor<Autodiff<B, C>>,
    a_index: G,
    b_index: G,
    heads: usize,
) -> FloatTensor<Autodiff<B, C>> {
    let (a, an) = a.into_parts();
    let (b, bn) = b.into_parts();
    let backward = SddmmBackward::<G>(PhantomData);
    match backward.prepare::<C>([an, bn]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let out = G::sddmm(
                a.clone(),
                b.clone(),
                a_index.clone(),
                b_index.clone(),
                heads,
            );
            prep.finish((a, b, a_index, b_index), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(G::sddmm(a, b, a_index, b_index, heads)),
    }
}

/// A tracked attention softmax.
fn attention_softmax<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    [src, dst, bias]: [FloatTensor<Autodiff<B, C>>; 3],
    senders: G,
    receivers: G,
    slope: f64,
) -> FloatTensor<Autodiff<B, C>> {
    let (src, sn) = src.into_parts();
    let (dst, dn) = dst.into_parts();
    let (bias, bn) = bias.into_parts();
    let backward = AttentionBackward::<G>(PhantomData);
    match backward
        .prepare::<C>([sn, dn, bn])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let inputs = (src.clone(), dst.clone(), bias.clone());
            let alpha = G::attention_softmax(inputs, senders.clone(), receivers.clone(), slope);
            let state = ([src, dst, bias, alpha.clone()], senders, receivers, slope);
            prep.finish(state, alpha)
        }
        OpsKind::UnTracked(prep) => prep.finish(G::attention_softmax(
            (src, dst, bias),
            senders,
            receivers,
            slope,
        )),
    }
}

/// `segment_attention_backward`, `float_elu_backward` and `float_linear_weight_backward` keep
/// their composite defaults here: the backward passes above call the inner backend's kernels,
/// and the composites (built from differentiable primitives) serve a caller that
/// differentiates a gradient.
impl<B: SegmentBackend, C: CheckpointStrategy> SegmentBackend for Autodiff<B, C> {
    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (n_src, n_dst) = (src.shape()[0], dst.shape()[0]);
        let (s, r) = (ids(senders, n_src), ids(receivers, n_dst));
        attention_softmax::<B, C, _>([src, dst, bias], s, r, negative_slope)
    }

    fn segment_attention_softmax_planned(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: SegmentPlanPrimitive<Self>,
        receivers: SegmentPlanPrimitive<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (s, r) = (inner(senders), inner(receivers));
        attention_softmax::<B, C, _>([src, dst, bias], s, r, negative_slope)
    }

    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        let rows = x.shape()[0];
        spmm::<B, C, _>(x, weights, ids(senders, rows), ids(receivers, num_segments))
    }

    fn segment_spmm_planned(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: SegmentPlanPrimitive<Self>,
        receivers: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        spmm::<B, C, _>(x, weights, inner(senders), inner(receivers))
    }

    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: IntTensor<Self>,
        b_index: IntTensor<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        let (na, nb) = (a.shape()[0], b.shape()[0]);
        sddmm::<B, C, _>(a, b, ids(a_index, na), ids(b_index, nb), heads)
    }

    fn segment_sddmm_planned(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: SegmentPlanPrimitive<Self>,
        b_index: SegmentPlanPrimitive<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        sddmm::<B, C, _>(a, b, inner(a_index), inner(b_index), heads)
    }

    fn segment_gather(data: FloatTensor<Self>, segment_ids: IntTensor<Self>) -> FloatTensor<Self> {
        let (data, node) = data.into_parts();
        match GatherBackward
            .prepare::<C>([node])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let n = data.shape()[0];
                prep.finish(
                    ids(segment_ids.clone(), n),
                    B::segment_gather(data, segment_ids),
                )
            }
            OpsKind::UnTracked(prep) => prep.finish(B::segment_gather(data, segment_ids)),
        }
    }

    fn int_segment_gather(data: IntTensor<Self>, segment_ids: IntTensor<Self>) -> IntTensor<Self> {
        B::int_segment_gather(data, segment_ids)
    }

    fn segment_reduce(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        reduce::<B, C, _>(data, ids(segment_ids, num_segments), reduction)
    }

    fn segment_sum_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        masked::sum_masked::<B, C, _>(data, mask, ids(segment_ids, num_segments))
    }

    fn segment_sum_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        masked::sum_masked::<B, C, _>(data, mask, inner(plan))
    }

    fn segment_extreme_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C, _>(data, Some(mask), ids(segment_ids, num_segments), which)
    }

    fn segment_extreme_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C, _>(data, Some(mask), inner(plan), which)
    }

    fn segment_softmax_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        masked::softmax_masked::<B, C, _>(data, mask, ids(segment_ids, num_segments))
    }

    fn segment_softmax_masked_planned(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        masked::softmax_masked::<B, C, _>(data, mask, inner(plan))
    }

    fn segment_reduce_planned(
        data: FloatTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        reduce::<B, C, _>(data, inner(plan), reduction)
    }

    fn segment_extreme(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C, _>(data, None, ids(segment_ids, num_segments), which)
    }

    fn segment_extreme_planned(
        data: FloatTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C, _>(data, None, inner(plan), which)
    }

    fn segment_softmax(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        softmax::<B, C, _>(data, ids(segment_ids, num_segments))
    }

    fn segment_softmax_planned(
        data: FloatTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
    ) -> FloatTensor<Self> {
        softmax::<B, C, _>(data, inner(plan))
    }

    fn int_segment_reduce(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        B::int_segment_reduce(data, segment_ids, num_segments, reduction)
    }

    fn int_segment_reduce_planned(
        data: IntTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        B::int_segment_reduce_planned(data, inner(plan), reduction)
    }

    fn int_segment_extreme(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::int_segment_extreme(data, segment_ids, num_segments, extreme)
    }

    fn int_segment_extreme_planned(
        data: IntTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::int_segment_extreme_planned(data, inner(plan), extreme)
    }

    fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
        B::segment_count(segment_ids, num_segments)
    }

    // Counts carry no gradient.
    fn segment_count_nonzero(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> IntTensor<Self> {
        B::segment_count_nonzero(data.into_primitive(), segment_ids, num_segments)
    }

    // Top-k's values carry no gradient (`SegmentStatistics::topk` gathers tracked data at the rows):
    // the inner backend's op runs on the untracked data.
    fn segment_topk(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let data = data.into_primitive();
        let (values, rows) = B::segment_topk(data, segment_ids, num_segments, k, largest);
        (Self::from_inner(values), rows)
    }

    fn segment_topk_planned(
        data: FloatTensor<Self>,
        plan: SegmentPlanPrimitive<Self>,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (values, rows) =
            B::segment_topk_planned(data.into_primitive(), inner(plan), k, largest);
        (Self::from_inner(values), rows)
    }

    fn float_elu(x: FloatTensor<Self>, alpha: f64) -> FloatTensor<Self> {
        let (x, node) = x.into_parts();
        match EluBackward.prepare::<C>([node]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => prep.finish((x.clone(), alpha), B::float_elu(x, alpha)),
            OpsKind::UnTracked(prep) => prep.finish(B::float_elu(x, alpha)),
        }
    }

    fn float_linear(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        let (x_tracked, w_tracked) = (x.is_tracked(), weight.is_tracked());
        let (x, xn) = x.into_parts();
        let (w, wn) = weight.into_parts();
        match LinearBackward
            .prepare::<C>([xn, wn])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let keep_x = w_tracked.then(|| x.clone());
                let keep_w = x_tracked.then(|| w.clone());
                prep.finish((keep_x, keep_w), B::float_linear(x, w))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::float_linear(x, w)),
        }
    }
}
