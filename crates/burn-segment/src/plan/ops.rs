//! The segment ops through a plan: each equals the free function of the same name on the
//! plan's ids (bit for bit), without validating, sorting or looking anything up.

use burn::tensor::{Int, Tensor};

use super::SegmentPlan;
use crate::api::SegmentKind;
use crate::segments::{self, Segments};
use crate::{SegmentExtreme, SegmentReduction};

/// Every method panics if `data` does not have one row (dim 0) per id of the plan.
impl SegmentPlan {
    /// [`segment_reduce`](crate::segment_reduce) over the plan's ids. Float and Int data.
    ///
    /// # Shapes
    /// `data: [E, ...]` -> `[N, ...]`.
    pub fn reduce<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        reduction: SegmentReduction,
    ) -> Tensor<D, K> {
        Segments::reduce(self, data, reduction)
    }

    /// [`segment_sum`](crate::segment_sum): `[E, ...] -> [N, ...]`, empty segments 0.
    pub fn sum<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        Segments::reduce(self, data, SegmentReduction::Sum)
    }

    /// [`segment_prod`](crate::segment_prod): `[E, ...] -> [N, ...]`, empty segments 1.
    pub fn prod<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        Segments::reduce(self, data, SegmentReduction::Prod)
    }

    /// [`segment_max`](crate::segment_max): `[E, ...] -> [N, ...]`, empty segments `-inf`.
    pub fn max<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        Segments::extreme(self, data, SegmentExtreme::Max).0
    }

    /// [`segment_min`](crate::segment_min): `[E, ...] -> [N, ...]`, empty segments `+inf`.
    pub fn min<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        Segments::extreme(self, data, SegmentExtreme::Min).0
    }

    /// [`segment_max_with_indices`](crate::segment_max_with_indices): values and arguments,
    /// `[N, ...]` each.
    pub fn max_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        Segments::extreme(self, data, SegmentExtreme::Max)
    }

    /// [`segment_min_with_indices`](crate::segment_min_with_indices): values and arguments,
    /// `[N, ...]` each.
    pub fn min_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        Segments::extreme(self, data, SegmentExtreme::Min)
    }

    /// [`segment_argmax`](crate::segment_argmax): `[E, ...] -> [N, ...]` Int, -1 when empty.
    pub fn argmax<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        Segments::extreme(self, data, SegmentExtreme::Max).1
    }

    /// [`segment_argmin`](crate::segment_argmin): `[E, ...] -> [N, ...]` Int, -1 when empty.
    pub fn argmin<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        Segments::extreme(self, data, SegmentExtreme::Min).1
    }

    /// [`segment_count`](crate::segment_count): rows per segment, `[N]` Int, from the offsets
    /// (no pass over the ids).
    pub fn count(&self) -> Tensor<1, Int> {
        Segments::count(self)
    }

    /// [`segment_mean`](crate::segment_mean): `[E, ...] -> [N, ...]`, empty segments 0.
    pub fn mean<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        segments::mean(self, data)
    }

    /// [`segment_max_or_constant`](crate::segment_max_or_constant).
    pub fn max_or_constant<const D: usize>(&self, data: Tensor<D>, constant: f64) -> Tensor<D> {
        segments::extreme_or_constant(self, data, SegmentExtreme::Max, constant)
    }

    /// [`segment_min_or_constant`](crate::segment_min_or_constant).
    pub fn min_or_constant<const D: usize>(&self, data: Tensor<D>, constant: f64) -> Tensor<D> {
        segments::extreme_or_constant(self, data, SegmentExtreme::Min, constant)
    }

    /// [`segment_softmax`](crate::segment_softmax): `[E, ...] -> [E, ...]`.
    pub fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        Segments::softmax(self, logits)
    }

    /// [`segment_logsumexp`](crate::segment_logsumexp): `[E, ...] -> [N, ...]`, empty `-inf`.
    pub fn logsumexp<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        segments::logsumexp(self, data)
    }

    /// [`segment_variance`](crate::segment_variance): `[E, ...] -> [N, ...]`, empty segments 0.
    pub fn variance<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        segments::variance(self, data)
    }

    /// [`segment_std`](crate::segment_std): `[E, ...] -> [N, ...]`, empty segments 0.
    pub fn std<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        segments::variance(self, data).sqrt()
    }

    /// [`segment_normalize`](crate::segment_normalize): `[E, ...] -> [E, ...]`.
    pub fn normalize<const D: usize>(&self, data: Tensor<D>, eps: f64) -> Tensor<D> {
        segments::normalize(self, data, eps)
    }

    /// Row `e` of the result is row `segment_ids[e]` of `data` (a segment's value brought back
    /// to its rows), `[N, ...] -> [E, ...]`; differentiable.
    ///
    /// # Panics
    /// If `data` does not have one row per segment.
    pub fn gather<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let (rows, n) = (data.dims()[0], self.num_segments());
        assert_eq!(
            rows, n,
            "burn-segment: gather data has {rows} rows but the plan has {n} segments"
        );
        data.select(0, self.segment_ids().clone())
    }
}
