//! The masked sum on `Autodiff`: the inner backend's kernel forward, and a backward that gives
//! every left-out entry exactly zero gradient.

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
use crate::{SegmentBackend, composite};

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
