//! The masked sum and softmax on `Autodiff`: the inner backend's kernels forward, and
//! backwards that give every left-out entry exactly zero gradient.

use core::marker::PhantomData;

use burn::backend::{
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind, unary},
    },
    tensor::{BoolTensor, FloatTensor},
};

use super::grouping::Grouping;
use crate::{SegmentBackend, SegmentReduction, composite};

/// A tracked masked sum over `g`'s ids.
pub(super) fn sum_masked<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: BoolTensor<B>,
    g: G,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let backward = MaskedSumBackward::<G>(PhantomData);
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let out = g.sum_masked(data, mask.clone());
            prep.finish((g, mask), out)
        }
        OpsKind::UnTracked(prep) => prep.finish(g.sum_masked(data, mask)),
    }
}

/// `where(mask, grad_out[ids], 0)`: a segment sum's gradient on the kept entries only.
#[derive(Debug)]
struct MaskedSumBackward<G>(PhantomData<G>);

impl<B: SegmentBackend, G: Grouping<B>> Backward<B, 1> for MaskedSumBackward<G> {
    type State = (G, BoolTensor<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (ids, mask) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            composite::zero_masked_out::<B>(ids.gather(g), mask)
        });
    }
}

/// A tracked masked softmax over `g`'s ids.
pub(super) fn softmax_masked<B: SegmentBackend, C: CheckpointStrategy, G: Grouping<B>>(
    data: FloatTensor<Autodiff<B, C>>,
    mask: BoolTensor<B>,
    g: G,
) -> FloatTensor<Autodiff<B, C>> {
    let (data, node) = data.into_parts();
    let backward = MaskedSoftmaxBackward::<G>(PhantomData);
    match backward.prepare::<C>([node]).compute_bound().stateful() {
        OpsKind::Tracked(prep) => {
            let y = g.softmax_masked(data, mask.clone());
            prep.finish((y.clone(), g, mask), y)
        }
        OpsKind::UnTracked(prep) => prep.finish(g.softmax_masked(data, mask)),
    }
}

/// The softmax backward `y ⊙ (g − Σ y ⊙ g)` with the gradient of every left-out entry (where
/// `y` is 0) set to 0 first, so that not even an infinite upstream gradient leaks there.
#[derive(Debug)]
struct MaskedSoftmaxBackward<G>(PhantomData<G>);

impl<B: SegmentBackend, G: Grouping<B>> Backward<B, 1> for MaskedSoftmaxBackward<G> {
    type State = (FloatTensor<B>, G, BoolTensor<B>);
    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let (y, ids, mask) = ops.state;
        unary::<B, _>(ops.parents, ops.node, grads, |g| {
            let g = composite::zero_masked_out::<B>(g, mask);
            let gy = B::float_mul(g, y.clone());
            let s = ids.reduce(gy.clone(), SegmentReduction::Sum);
            B::float_sub(gy, B::float_mul(y, ids.gather(s)))
        });
    }
}
