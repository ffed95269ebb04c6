//! The masked sum and softmax on `Autodiff`: the inner backend's kernels forward, and
//! backwards that give every left-out entry exactly zero gradient.

use burn::backend::{
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind, unary},
    },
    tensor::{BoolTensor, FloatTensor},
};

use crate::{SegmentBackend, SegmentIndex, SegmentReduction, composite};

/// A tracked masked sum over `g`'s ids.
pub(super) fn sum_masked<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: BoolTensor<B>,
    g: SegmentIndex<B>,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let backward = MaskedSumBackward;
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let out = B::segment_sum_masked(data, mask.clone(), g.clone());
            prep.finish((g, mask), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_sum_masked(data, mask, g)),
    }
}

/// `where(mask, grad_out[ids], 0)`: a segment sum's gradient on the kept entries only.
#[derive(Debug)]
struct MaskedSumBackward;

impl<B: SegmentBackend> Backward<B, 1> for MaskedSumBackward {
    type State = (SegmentIndex<B>, BoolTensor<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (ids, mask) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            composite::zero_masked_out::<B>(B::segment_gather(g, ids), mask)
        });
    }
}

/// A tracked masked softmax over `g`'s ids.
pub(super) fn softmax_masked<B: SegmentBackend, C: CheckpointStrategy>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: BoolTensor<B>,
    g: SegmentIndex<B>,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let backward = MaskedSoftmaxBackward;
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let y = B::segment_softmax_masked(data, mask.clone(), g.clone());
            prep.finish((y.clone(), g, mask), y)
        }
        OpsKind::UnTracked(prep) => prep.finish(B::segment_softmax_masked(data, mask, g)),
    }
}

/// The softmax backward `y ⊙ (g − Σ y ⊙ g)` with the gradient of every left-out entry (where
/// `y` is 0) set to 0 first, so that not even an infinite upstream gradient leaks there.
#[derive(Debug)]
struct MaskedSoftmaxBackward;

impl<B: SegmentBackend> Backward<B, 1> for MaskedSoftmaxBackward {
    type State = (FloatTensor<B>, SegmentIndex<B>, BoolTensor<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (y, ids, mask) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let g = composite::zero_masked_out::<B>(g, mask);
            let gy = B::float_mul(g, y.clone());
            let s = B::segment_reduce(gy.clone(), ids.clone(), SegmentReduction::Sum);
            B::float_sub(gy, B::float_mul(y, B::segment_gather(s, ids)))
        });
    }
}
