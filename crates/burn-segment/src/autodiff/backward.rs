//! The backward passes, each keeping the [`SegmentIndex`] of its forward call (a plan's
//! backward reuses the plan).

use burn::backend::{
    Scalar, TensorMetadata,
    autodiff::{
        checkpoint::base::Checkpointer,
        grads::Gradients,
        ops::{Backward, Ops, binary, unary},
    },
    get_device_settings,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{IntDType, Shape};

use crate::{DenseBackend, SegmentBackend, SegmentIndex, SegmentReduction};

/// `grad_out[ids]`: the gradient of a segment sum.
#[derive(Debug)]
pub(super) struct SumBackward;

impl<B: SegmentBackend> Backward<B, 1> for SumBackward {
    type State = SegmentIndex<B>;
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let ids = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            B::segment_gather(g, ids.clone())
        });
    }
}

/// `grad_out[ids] * prod_{j != i} x_j`, exact when the segment holds zeros (no division by 0).
#[derive(Debug)]
pub(super) struct ProdBackward;

impl<B: SegmentBackend> Backward<B, 1> for ProdBackward {
    type State = (FloatTensor<B>, SegmentIndex<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, ids) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let bd = get_device_settings::<B>(&x.device()).bool_dtype;
            let fd = x.dtype().into();
            let is_zero = B::float_equal_elem(x.clone(), Scalar::Float(0.0), bd);
            let zeros = B::bool_into_float(is_zero.clone(), fd);
            let zeros_per_segment = B::segment_reduce(zeros, ids.clone(), SegmentReduction::Sum);
            let nonzero = B::float_mask_fill(x.clone(), is_zero.clone(), Scalar::Float(1.0));
            let prod_nonzero = B::segment_reduce(nonzero, ids.clone(), SegmentReduction::Prod);
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
            B::float_mul(B::segment_gather(g, ids.clone()), others)
        });
    }
}

/// The gradient flows to the single argmax/argmin row of each column; empty segments pass none.
#[derive(Debug)]
pub(super) struct ExtremeBackward;

impl<B: SegmentBackend> Backward<B, 1> for ExtremeBackward {
    type State = (IntTensor<B>, SegmentIndex<B>, Shape);
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
            let g = B::segment_gather(g, ids.clone());
            let zeros = B::float_zeros(shape, &device, g.dtype().into());
            B::float_mask_where(zeros, winner, g)
        });
    }
}

/// `y * (grad_out - segment_sum(grad_out * y)[ids])`.
#[derive(Debug)]
// ANCHOR: autodiff_softmax_backward
pub(super) struct SoftmaxBackward;

impl<B: SegmentBackend> Backward<B, 1> for SoftmaxBackward {
    type State = (FloatTensor<B>, SegmentIndex<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (y, ids) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let gy = B::float_mul(g, y.clone());
            let s = B::segment_reduce(gy.clone(), ids.clone(), SegmentReduction::Sum);
            B::float_sub(gy, B::float_mul(y, B::segment_gather(s, ids.clone())))
        });
    }
}
// ANCHOR_END: autodiff_softmax_backward

/// `segment_sum(grad_out, ids, N)`: the gradient of a gather.
#[derive(Debug)]
pub(super) struct GatherBackward;

impl<B: SegmentBackend> Backward<B, 1> for GatherBackward {
    type State = SegmentIndex<B>;
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let ids = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            B::segment_reduce(g, ids.clone(), SegmentReduction::Sum)
        });
    }
}

/// `d x = spmm(grad, weights)` along the reversed edges and `d weights = sddmm(x, grad)`.
#[derive(Debug)]
pub(super) struct SpmmBackward;

impl<B: SegmentBackend> Backward<B, 2> for SpmmBackward {
    /// `x`, `weights`, senders, receivers, heads.
    type State = (
        FloatTensor<B>,
        FloatTensor<B>,
        SegmentIndex<B>,
        SegmentIndex<B>,
        usize,
    );
    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, w, senders, receivers, heads) = ops.state;
        let (s, r) = (senders.clone(), receivers.clone());
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |g| B::segment_spmm(g, w, r, s),
            |g| B::segment_sddmm(x, g, senders, receivers, heads),
        );
    }
}

/// `d a = spmm(b, grad)` into `a`'s rows and `d b = spmm(a, grad)` into `b`'s rows.
#[derive(Debug)]
pub(super) struct SddmmBackward;

impl<B: SegmentBackend> Backward<B, 2> for SddmmBackward {
    /// `a`, `b`, their indices.
    type State = (
        FloatTensor<B>,
        FloatTensor<B>,
        SegmentIndex<B>,
        SegmentIndex<B>,
    );
    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (a, b, ai, bi) = ops.state;
        let (ai2, bi2) = (ai.clone(), bi.clone());
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |g| B::segment_spmm(b, g, bi, ai),
            |g| B::segment_spmm(a, g, ai2, bi2),
        );
    }
}

/// The raw-score gradient `d` of the attention softmax (one fused call), summed into the
/// senders for `src` and the receivers for `dst`; `d` itself for a per-head bias, its sum over
/// the heads for a shared `[E, 1]` bias.
#[derive(Debug)]
pub(super) struct AttentionBackward;

/// What [`AttentionBackward`] keeps: the three float inputs, the output, the senders and
/// receivers, and the slope.
pub(super) type AttentionState<B> = ([FloatTensor<B>; 4], SegmentIndex<B>, SegmentIndex<B>, f64);

impl<B: SegmentBackend> Backward<B, 3> for AttentionBackward {
    type State = AttentionState<B>;
    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let ([src, dst, bias, alpha], senders, receivers, slope) = ops.state;
        let grad = grads.consume::<B>(&ops.node);
        let [src_node, dst_node, bias_node] = ops.parents;
        let bias_width = bias.shape()[1];
        let (s, r) = (senders.clone(), receivers.clone());
        let d = B::segment_attention_backward(src, dst, bias, s, r, alpha, grad, slope);
        if let Some(node) = src_node {
            let sum = B::segment_reduce(d.clone(), senders, SegmentReduction::Sum);
            grads.register::<B>(node.id, sum);
        }
        if let Some(node) = dst_node {
            let sum = B::segment_reduce(d.clone(), receivers, SegmentReduction::Sum);
            grads.register::<B>(node.id, sum);
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

/// `grad · dELU/dx`, from the input the forward kept (from the output, `y + alpha` would lose
/// the relative accuracy of `alpha · e^x` where `e^x` is below an ulp of `alpha`).
#[derive(Debug)]
pub(super) struct EluBackward;

impl<B: DenseBackend> Backward<B, 1> for EluBackward {
    /// The input `x` and `alpha`.
    type State = (FloatTensor<B>, f64);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, alpha) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            B::float_elu_backward(x, g, alpha)
        });
    }
}

/// `d x = grad · weightᵀ` and `d weight = xᵀ · grad`, both through the backend's linear
/// kernels (the weight gradient is the one Burn's matmul split poorly).
#[derive(Debug)]
pub(super) struct LinearBackward;

impl<B: DenseBackend> Backward<B, 2> for LinearBackward {
    /// `x` (for the weight's gradient) and `weight` (for `x`'s), each kept only when the other
    /// is tracked.
    type State = (Option<FloatTensor<B>>, Option<FloatTensor<B>>);
    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (x, w) = ops.state;
        binary::<B, _, _>(
            ops.parents,
            ops.node,
            grads,
            |g| {
                let w = w.expect("the weight is kept when x is tracked");
                B::float_linear(g, B::float_swap_dims(w, 0, 1))
            },
            |g| {
                B::float_linear_weight_backward(x.expect("x is kept when the weight is tracked"), g)
            },
        );
    }
}
