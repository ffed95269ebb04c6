//! Hand-written backward passes of the segment ops on `Autodiff`.
//!
//! Every backward keeps what it needs (ids, inputs or outputs) in its state, so it is also
//! correct under gradient checkpointing (nothing is recomputed). Integer ops carry no gradient
//! and forward to the inner backend.

use burn::backend::{
    Scalar, TensorMetadata,
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind, binary, unary},
    },
    get_device_settings,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{IntDType, Shape};

use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};

/// `grad_out[ids]`: the gradient of a segment sum.
#[derive(Debug)]
struct SumBackward;

impl<B: SegmentBackend> Backward<B, 1> for SumBackward {
    type State = IntTensor<B>;
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let ids = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| B::segment_gather(g, ids));
    }
}

/// `grad_out[ids] * prod_{j != i} x_j`, exact when the segment holds zeros (no division by 0).
#[derive(Debug)]
struct ProdBackward;

impl<B: SegmentBackend> Backward<B, 1> for ProdBackward {
    type State = (FloatTensor<B>, IntTensor<B>, usize);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, ids, n) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let bd = get_device_settings::<B>(&x.device()).bool_dtype;
            let fd = x.dtype().into();
            let is_zero = B::float_equal_elem(x.clone(), Scalar::Float(0.0), bd);
            let zeros = B::bool_into_float(is_zero.clone(), fd);
            let zeros_per_segment = B::segment_reduce(zeros, ids.clone(), n, SegmentReduction::Sum);
            let nonzero = B::float_mask_fill(x.clone(), is_zero.clone(), Scalar::Float(1.0));
            let prod_nonzero = B::segment_reduce(nonzero, ids.clone(), n, SegmentReduction::Prod);
            let z = B::segment_gather(zeros_per_segment, ids.clone());
            let p = B::segment_gather(prod_nonzero, ids.clone());
            // x_i != 0: prod of the others is p / x_i if the segment has no zero, else 0.
            let others_nonzero = B::float_mask_fill(
                B::float_div(p.clone(), x),
                B::float_not_equal_elem(z.clone(), Scalar::Float(0.0), bd),
                Scalar::Float(0.0),
            );
            // x_i == 0: prod of the others is p if x_i is the only zero, else 0.
            let only_zero = B::float_mask_fill(
                p,
                B::float_not_equal_elem(z, Scalar::Float(1.0), bd),
                Scalar::Float(0.0),
            );
            let others = B::float_mask_where(others_nonzero, is_zero, only_zero);
            B::float_mul(B::segment_gather(g, ids), others)
        });
    }
}

/// The gradient flows to the single argmax/argmin row of each column; empty segments pass none.
#[derive(Debug)]
struct ExtremeBackward;

impl<B: SegmentBackend> Backward<B, 1> for ExtremeBackward {
    type State = (IntTensor<B>, IntTensor<B>, Shape);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (arg, ids, shape) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let device = arg.device();
            let bd = get_device_settings::<B>(&device).bool_dtype;
            let idt: IntDType = arg.dtype().into();
            let e = shape[0];
            let mut dims = vec![1; shape.num_dims()];
            dims[0] = e;
            let rows = B::int_reshape(B::int_arange(0..e as i64, &device, idt), Shape::from(dims));
            let rows = B::int_expand(rows, shape.clone());
            let winner = B::int_equal(B::int_segment_gather(arg, ids.clone()), rows, bd);
            let g = B::segment_gather(g, ids);
            let zeros = B::float_zeros(shape, &device, g.dtype().into());
            B::float_mask_where(zeros, winner, g)
        });
    }
}

/// `y * (grad_out - segment_sum(grad_out * y)[ids])`.
#[derive(Debug)]
// ANCHOR: autodiff_softmax_backward
struct SoftmaxBackward;

impl<B: SegmentBackend> Backward<B, 1> for SoftmaxBackward {
    type State = (FloatTensor<B>, IntTensor<B>, usize);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (y, ids, n) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let gy = B::float_mul(g, y.clone());
            let s = B::segment_reduce(gy.clone(), ids.clone(), n, SegmentReduction::Sum);
            B::float_sub(gy, B::float_mul(y, B::segment_gather(s, ids)))
        });
    }
}
// ANCHOR_END: autodiff_softmax_backward

/// `segment_sum(grad_out, ids, N)`: the gradient of a gather.
#[derive(Debug)]
struct GatherBackward;

impl<B: SegmentBackend> Backward<B, 1> for GatherBackward {
    type State = (IntTensor<B>, usize);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (ids, n) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            B::segment_reduce(g, ids, n, SegmentReduction::Sum)
        });
    }
}

/// `d x = spmm(grad, weights)` along the reversed edges and `d weights = sddmm(x, grad)`.
#[derive(Debug)]
struct SpmmBackward;

impl<B: SegmentBackend> Backward<B, 2> for SpmmBackward {
    /// `x`, `weights`, senders, receivers, rows of `x`, heads.
    type State = (
        FloatTensor<B>,
        FloatTensor<B>,
        IntTensor<B>,
        IntTensor<B>,
        usize,
        usize,
    );
    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, w, senders, receivers, rows, heads) = ops.state;
        let (s, r) = (senders.clone(), receivers.clone());
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |g| B::segment_spmm(g, w, r, s, rows),
            |g| B::segment_sddmm(x, g, senders, receivers, heads),
        );
    }
}

/// `d a = spmm(b, grad)` into `a`'s rows and `d b = spmm(a, grad)` into `b`'s rows.
#[derive(Debug)]
struct SddmmBackward;

impl<B: SegmentBackend> Backward<B, 2> for SddmmBackward {
    /// `a`, `b`, their indices.
    type State = (FloatTensor<B>, FloatTensor<B>, IntTensor<B>, IntTensor<B>);
    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (a, b, ai, bi) = ops.state;
        let (na, nb) = (a.shape()[0], b.shape()[0]);
        let (ai2, bi2) = (ai.clone(), bi.clone());
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |g| B::segment_spmm(b, g, bi, ai, na),
            |g| B::segment_spmm(a, g, ai2, bi2, nb),
        );
    }
}

/// The raw-score gradient `d` of the attention softmax (one fused call), summed into the
/// senders for `src` and the receivers for `dst`; `d` itself for a per-head bias, its sum over
/// the heads for a shared `[E, 1]` bias.
#[derive(Debug)]
struct AttentionBackward;

/// What [`AttentionBackward`] keeps: the three float inputs, the indices, the output and the slope.
type AttentionState<B> = (
    FloatTensor<B>,
    FloatTensor<B>,
    FloatTensor<B>,
    IntTensor<B>,
    IntTensor<B>,
    FloatTensor<B>,
    f64,
);

impl<B: SegmentBackend> Backward<B, 3> for AttentionBackward {
    type State = AttentionState<B>;
    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (src, dst, bias, senders, receivers, alpha, slope) = ops.state;
        let grad = grads.consume::<B>(&ops.node);
        let [src_node, dst_node, bias_node] = ops.parents;
        let (n_src, n_dst, bias_width) = (src.shape()[0], dst.shape()[0], bias.shape()[1]);
        let d = B::segment_attention_backward(
            src,
            dst,
            bias,
            senders.clone(),
            receivers.clone(),
            alpha,
            grad,
            slope,
        );
        if let Some(node) = src_node {
            grads.register::<B>(
                node.id,
                B::segment_reduce(d.clone(), senders, n_src, SegmentReduction::Sum),
            );
        }
        if let Some(node) = dst_node {
            grads.register::<B>(
                node.id,
                B::segment_reduce(d.clone(), receivers, n_dst, SegmentReduction::Sum),
            );
        }
        if let Some(node) = bias_node {
            let heads = d.shape()[1];
            let db = if bias_width == 1 && heads != 1 {
                B::float_sum_dim(d, 1)
            } else {
                d
            };
            grads.register::<B>(node.id, db);
        }
    }
}

/// `segment_attention_backward` keeps its composite default here: the backward above calls
/// the inner backend's kernel, and the composite (built from differentiable primitives) serves a
/// caller that differentiates a gradient.
impl<B: SegmentBackend, C: CheckpointStrategy> SegmentBackend for Autodiff<B, C> {
    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let (src, sn) = src.into_parts();
        let (dst, dn) = dst.into_parts();
        let (bias, bn) = bias.into_parts();
        match AttentionBackward
            .prepare::<C>([sn, dn, bn])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let alpha = B::segment_attention_softmax(
                    src.clone(),
                    dst.clone(),
                    bias.clone(),
                    senders.clone(),
                    receivers.clone(),
                    negative_slope,
                );
                prep.finish(
                    (
                        src,
                        dst,
                        bias,
                        senders,
                        receivers,
                        alpha.clone(),
                        negative_slope,
                    ),
                    alpha,
                )
            }
            OpsKind::UnTracked(prep) => prep.finish(B::segment_attention_softmax(
                src,
                dst,
                bias,
                senders,
                receivers,
                negative_slope,
            )),
        }
    }

    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: IntTensor<Self>,
        receivers: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        let (x, xn) = x.into_parts();
        let (w, wn) = weights.into_parts();
        match SpmmBackward
            .prepare::<C>([xn, wn])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let (rows, heads) = (x.shape()[0], w.shape()[1]);
                let out = B::segment_spmm(
                    x.clone(),
                    w.clone(),
                    senders.clone(),
                    receivers.clone(),
                    num_segments,
                );
                prep.finish((x, w, senders, receivers, rows, heads), out)
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::segment_spmm(x, w, senders, receivers, num_segments))
            }
        }
    }

    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: IntTensor<Self>,
        b_index: IntTensor<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        let (a, an) = a.into_parts();
        let (b, bn) = b.into_parts();
        match SddmmBackward
            .prepare::<C>([an, bn])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let out = B::segment_sddmm(
                    a.clone(),
                    b.clone(),
                    a_index.clone(),
                    b_index.clone(),
                    heads,
                );
                prep.finish((a, b, a_index, b_index), out)
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::segment_sddmm(a, b, a_index, b_index, heads))
            }
        }
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
                    (segment_ids.clone(), n),
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
        let extreme = match reduction {
            SegmentReduction::Max => SegmentExtreme::Max,
            SegmentReduction::Min => SegmentExtreme::Min,
            SegmentReduction::Sum => {
                let (data, node) = data.into_parts();
                return match SumBackward.prepare::<C>([node]).compute_bound().stateful() {
                    OpsKind::Tracked(prep) => {
                        let out =
                            B::segment_reduce(data, segment_ids.clone(), num_segments, reduction);
                        prep.finish(segment_ids, out)
                    }
                    OpsKind::UnTracked(prep) => prep.finish(B::segment_reduce(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    )),
                };
            }
            SegmentReduction::Prod => {
                let (data, node) = data.into_parts();
                return match ProdBackward.prepare::<C>([node]).compute_bound().stateful() {
                    OpsKind::Tracked(prep) => {
                        let out = B::segment_reduce(
                            data.clone(),
                            segment_ids.clone(),
                            num_segments,
                            reduction,
                        );
                        prep.finish((data, segment_ids, num_segments), out)
                    }
                    OpsKind::UnTracked(prep) => prep.finish(B::segment_reduce(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    )),
                };
            }
        };
        Self::segment_extreme(data, segment_ids, num_segments, extreme).0
    }

    fn segment_extreme(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (data, node) = data.into_parts();
        let shape = data.shape();
        match ExtremeBackward
            .prepare::<C>([node])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let (out, arg) =
                    B::segment_extreme(data, segment_ids.clone(), num_segments, extreme);
                (prep.finish((arg.clone(), segment_ids, shape), out), arg)
            }
            OpsKind::UnTracked(prep) => {
                let (out, arg) = B::segment_extreme(data, segment_ids, num_segments, extreme);
                (prep.finish(out), arg)
            }
        }
    }

    // ANCHOR: autodiff_softmax
    fn segment_softmax(
        data: FloatTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
    ) -> FloatTensor<Self> {
        let (data, node) = data.into_parts();
        match SoftmaxBackward
            .prepare::<C>([node])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let y = B::segment_softmax(data, segment_ids.clone(), num_segments);
                prep.finish((y.clone(), segment_ids, num_segments), y)
            }
            OpsKind::UnTracked(prep) => {
                prep.finish(B::segment_softmax(data, segment_ids, num_segments))
            }
        }
    }
    // ANCHOR_END: autodiff_softmax

    fn int_segment_reduce(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> IntTensor<Self> {
        B::int_segment_reduce(data, segment_ids, num_segments, reduction)
    }

    fn int_segment_extreme(
        data: IntTensor<Self>,
        segment_ids: IntTensor<Self>,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        B::int_segment_extreme(data, segment_ids, num_segments, extreme)
    }

    fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
        B::segment_count(segment_ids, num_segments)
    }
}
