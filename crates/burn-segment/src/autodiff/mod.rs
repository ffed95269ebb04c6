//! Hand-written backward passes of the segment ops on `Autodiff`.
//!
//! Every backward keeps what it needs (the [`SegmentIndex`], inputs or outputs) in its state, so
//! it is also correct under gradient checkpointing (nothing is recomputed). A planned op's
//! backward reuses the forward call's plan. Integer ops carry no gradient and forward to the inner
//! backend.

mod backward;
mod masked;

use burn::backend::{
    TensorMetadata,
    autodiff::{
        Autodiff,
        checkpoint::strategy::CheckpointStrategy,
        ops::{Backward, OpsKind},
    },
    tensor::{BoolTensor, FloatTensor, IntTensor},
};

use crate::{DenseBackend, SegmentBackend, SegmentExtreme, SegmentIndex, SegmentReduction};
use backward::*;

/// The inner backend's form of an index given to `Autodiff` (the same int tensors).
fn inner<B: SegmentBackend, C: CheckpointStrategy>(
    index: SegmentIndex<Autodiff<B, C>>,
) -> SegmentIndex<B> {
    index.map::<B>()
}

/// A tracked reduction over `g`'s ids.
fn reduce<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    g: SegmentIndex<B>,
    reduction: SegmentReduction,
) -> FloatTensor<Autodiff<B, C>> {
    match reduction {
        SegmentReduction::Max => return extreme_values::<B, C>(data, g, SegmentExtreme::Max),
        SegmentReduction::Min => return extreme_values::<B, C>(data, g, SegmentExtreme::Min),
        _ => {}
    }
    let (data, node) = data.into_parts();
    match reduction {
        SegmentReduction::Sum => {
            match SumBackward.prepare::<C>([node]).compute_bound().stateful() {
                OpsKind::Tracked(prep) => {
                    let out = B::segment_reduce(data, g.clone(), reduction);
                    prep.finish(g, out)
                }
                OpsKind::UnTracked(prep) => prep.finish(B::segment_reduce(data, g, reduction)),
            }
        }
        _ => match ProdBackward.prepare::<C>([node]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let out = B::segment_reduce(data.clone(), g.clone(), reduction);
                prep.finish((data, g), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::segment_reduce(data, g, reduction)),
        },
    }
}

/// A tracked max / min with arguments over `g`'s ids (over the entries `mask` keeps, if any):
/// the gradient goes to the argument rows.
fn extreme<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: Option<BoolTensor<B>>,
    g: SegmentIndex<B>,
    which: SegmentExtreme,
) -> (FloatTensor<Autodiff<B, C>>, IntTensor<B>) {
    let (data, node) = data.into_parts();
    let shape = data.shape();
    let run = |g: &SegmentIndex<B>, data| match mask {
        Some(mask) => B::segment_extreme_masked(data, mask, g.clone(), which),
        None => B::segment_extreme(data, g.clone(), which),
    };
    match ExtremeBackward
        .prepare::<C>([node])
        .compute_bound()
        .stateful()
    {
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
fn extreme_values<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    g: SegmentIndex<B>,
    which: SegmentExtreme,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let shape = data.shape();
    match ExtremeBackward
        .prepare::<C>([node])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let (out, arg) = B::segment_extreme(data, g.clone(), which);
            prep.finish((arg, g, shape), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_reduce(data, g, which.reduction())),
    }
}

// ANCHOR: autodiff_softmax
/// A tracked softmax over `g`'s ids.
fn softmax<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    g: SegmentIndex<B>,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    match SoftmaxBackward
        .prepare::<C>([node])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let y = B::segment_softmax(data, g.clone());
            prep.finish((y.clone(), g), y)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_softmax(data, g)),
    }
}
// ANCHOR_END: autodiff_softmax

/// A tracked `spmm` of `x`'s rows (indexed by `senders`) into the receivers' segments.
fn spmm<B: SegmentBackend, C: CheckpointStrategy>(
    x: FloatTensor<Autodiff<B, C>>,
    weights: FloatTensor<Autodiff<B, C>>,
    senders: SegmentIndex<B>,
    receivers: SegmentIndex<B>,
) -> FloatTensor<Autodiff<B, C>> {
    let (x, xn) = x.into_parts();
    let (w, wn) = weights.into_parts();
    match SpmmBackward
        .prepare::<C>([xn, wn])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let heads = w.shape()[1];
            let (s, r) = (senders.clone(), receivers.clone());
            let out = B::segment_spmm(x.clone(), w.clone(), s, r);
            prep.finish((x, w, senders, receivers, heads), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_spmm(x, w, senders, receivers)),
    }
}

/// A tracked `sddmm` of `a`'s and `b`'s rows.
fn sddmm<B: SegmentBackend, C: CheckpointStrategy>(
    a: FloatTensor<Autodiff<B, C>>,
    b: FloatTensor<Autodiff<B, C>>,
    a_index: SegmentIndex<B>,
    b_index: SegmentIndex<B>,
    heads: usize,
) -> FloatTensor<Autodiff<B, C>> {
    let (a, an) = a.into_parts();
    let (b, bn) = b.into_parts();
    match SddmmBackward
        .prepare::<C>([an, bn])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let (ai, bi) = (a_index.clone(), b_index.clone());
            let out = B::segment_sddmm(a.clone(), b.clone(), ai, bi, heads);
            prep.finish((a, b, a_index, b_index), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_sddmm(a, b, a_index, b_index, heads)),
    }
}

/// A tracked attention softmax.
fn attention_softmax<B: SegmentBackend, C: CheckpointStrategy>(
    [src, dst, bias]: [FloatTensor<Autodiff<B, C>>; 3],
    senders: SegmentIndex<B>,
    receivers: SegmentIndex<B>,
    slope: f64,
) -> FloatTensor<Autodiff<B, C>> {
    let (src, sn) = src.into_parts();
    let (dst, dn) = dst.into_parts();
    let (bias, bn) = bias.into_parts();
    match AttentionBackward
        .prepare::<C>([sn, dn, bn])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => {
            let (s, r) = (senders.clone(), receivers.clone());
            let alpha =
                B::segment_attention_softmax(src.clone(), dst.clone(), bias.clone(), s, r, slope);
            let state = ([src, dst, bias, alpha.clone()], senders, receivers, slope);
            prep.finish(state, alpha)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_attention_softmax(
            src, dst, bias, senders, receivers, slope,
        )),
    }
}

/// `segment_attention_backward` keeps its composite default here: the backward passes above call the inner backend's kernels,
/// and the composites (built from differentiable primitives) serve a caller that
/// differentiates a gradient.
impl<B: SegmentBackend, C: CheckpointStrategy> SegmentBackend for Autodiff<B, C> {
    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: SegmentIndex<Self>,
        receivers: SegmentIndex<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (s, r) = (inner(senders), inner(receivers));
        attention_softmax::<B, C>([src, dst, bias], s, r, negative_slope)
    }

    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: SegmentIndex<Self>,
        receivers: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        spmm::<B, C>(x, weights, inner(senders), inner(receivers))
    }

    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: SegmentIndex<Self>,
        b_index: SegmentIndex<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        sddmm::<B, C>(a, b, inner(a_index), inner(b_index), heads)
    }

    fn segment_gather(data: FloatTensor<Self>, index: SegmentIndex<Self>) -> FloatTensor<Self> {
        let index = inner(index);
        let (data, node) = data.into_parts();
        match GatherBackward
            .prepare::<C>([node])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let out = B::segment_gather(data, index.clone());
                prep.finish(index, out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::segment_gather(data, index)),
        }
    }

    fn int_segment_gather(data: IntTensor<Self>, index: SegmentIndex<Self>) -> IntTensor<Self> {
        B::int_segment_gather(data, inner(index))
    }

    fn segment_reduce(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        reduction: SegmentReduction,
    ) -> FloatTensor<Self> {
        reduce::<B, C>(data, inner(index), reduction)
    }

    fn segment_sum_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        masked::sum_masked::<B, C>(data, mask, inner(index))
    }

    fn segment_extreme_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C>(data, Some(mask), inner(index), which)
    }

    fn segment_softmax_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        masked::softmax_masked::<B, C>(data, mask, inner(index))
    }

    fn segment_extreme(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        extreme::<B, C>(data, None, inner(index), which)
    }

    fn segment_softmax(data: FloatTensor<Self>, index: SegmentIndex<Self>) -> FloatTensor<Self> {
        softmax::<B, C>(data, inner(index))
    }

    fn int_segment_reduce(
        data: IntTensor<Self>,
        index: SegmentIndex<Self>,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        B::int_segment_reduce(data, inner(index), reduction)
    }

    fn int_segment_extreme(
        data: IntTensor<Self>,
        index: SegmentIndex<Self>,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::int_segment_extreme(data, inner(index), extreme)
    }

    fn segment_count(index: SegmentIndex<Self>) -> IntTensor<Self> {
        B::segment_count(inner(index))
    }

    // Counts carry no gradient.
    fn segment_count_nonzero(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> IntTensor<Self> {
        B::segment_count_nonzero(data.into_primitive(), inner(index))
    }
}

/// ELU and the linear product with their backward passes (`float_elu_backward` and
/// `float_linear_weight_backward` keep their composite defaults, for a caller that
/// differentiates a gradient).
impl<B: DenseBackend, C: CheckpointStrategy> DenseBackend for Autodiff<B, C> {
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
