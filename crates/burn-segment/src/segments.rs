//! The segment ops written once over a [`Segments`]: the ids of a free-function call, planned
//! per call, or a [`SegmentPlan`]. The composites (mean, logsumexp, variance, ...) live here.

use burn::backend::Dispatch;
use burn::tensor::{Bool, Int, Tensor};

use crate::api::SegmentKind;
use crate::{SegmentBackend, SegmentExtreme, SegmentPlan, SegmentReduction};

/// Where an op finds its segments.
pub(crate) trait Segments {
    /// The number of ids, and how a message names them.
    fn ids_len(&self) -> (usize, &'static str);
    /// Panics unless `rows` (dim 0 of the data) matches the ids.
    fn check_rows(&self, rows: usize) {
        let (ids, name) = self.ids_len();
        assert_eq!(
            rows, ids,
            "burn-segment: data has {rows} rows (dim 0) but {name} has {ids} entries"
        );
    }
    fn reduce<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        reduction: SegmentReduction,
    ) -> Tensor<D, K>;
    fn extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>);
    fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D>;
    fn count(&self) -> Tensor<1, Int>;
    fn ids(&self) -> Tensor<1, Int>;
}

/// The ids of a free-function call.
pub(crate) struct Unplanned {
    pub(crate) ids: Tensor<1, Int>,
    pub(crate) n: usize,
}

impl Segments for Unplanned {
    fn ids_len(&self) -> (usize, &'static str) {
        (self.ids.dims()[0], "segment_ids")
    }
    fn reduce<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        r: SegmentReduction,
    ) -> Tensor<D, K> {
        self.check_rows(data.dims()[0]);
        let ids = self.ids.clone().into_dispatch();
        Tensor::from_dispatch(K::reduce(data.into_dispatch(), ids, self.n, r))
    }
    fn extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.check_rows(data.dims()[0]);
        let ids = self.ids.clone().into_dispatch();
        let (v, a) = K::extreme(data.into_dispatch(), ids, self.n, which);
        (Tensor::from_dispatch(v), Tensor::from_dispatch(a))
    }
    fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        self.check_rows(logits.dims()[0]);
        let ids = self.ids.clone().into_dispatch();
        let out = Dispatch::segment_softmax(logits.into_dispatch(), ids, self.n);
        Tensor::from_dispatch(out)
    }
    fn count(&self) -> Tensor<1, Int> {
        let ids = self.ids.clone().into_dispatch();
        Tensor::from_dispatch(Dispatch::segment_count(ids, self.n))
    }
    fn ids(&self) -> Tensor<1, Int> {
        self.ids.clone()
    }
}

impl Segments for SegmentPlan {
    fn ids_len(&self) -> (usize, &'static str) {
        (self.num_rows(), "the plan's segment_ids")
    }
    fn reduce<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        r: SegmentReduction,
    ) -> Tensor<D, K> {
        self.check_rows(data.dims()[0]);
        let out = K::reduce_planned(data.into_dispatch(), self.primitive(), r);
        Tensor::from_dispatch(out)
    }
    fn extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.check_rows(data.dims()[0]);
        let (v, a) = K::extreme_planned(data.into_dispatch(), self.primitive(), which);
        (Tensor::from_dispatch(v), Tensor::from_dispatch(a))
    }
    fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        self.check_rows(logits.dims()[0]);
        let out = Dispatch::segment_softmax_planned(logits.into_dispatch(), self.primitive());
        Tensor::from_dispatch(out)
    }
    fn count(&self) -> Tensor<1, Int> {
        let n = SegmentPlan::num_segments(self);
        let offsets = self.offsets();
        offsets.clone().slice(1..n + 1) - offsets.clone().slice(0..n)
    }
    fn ids(&self) -> Tensor<1, Int> {
        self.segment_ids().clone()
    }
}

/// `[num_segments]` -> `[num_segments, 1, ..]`, broadcastable against `[num_segments, ...]`.
fn per_segment<const D: usize>(t: Tensor<1>, like: &Tensor<D>) -> Tensor<D> {
    let mut dims = [1; D];
    dims[0] = t.dims()[0];
    t.cast(like.dtype()).reshape(dims).expand(like.dims())
}

/// Whether each segment is empty, broadcast to `like`'s shape.
fn empty_mask<const D: usize>(g: &impl Segments, like: &Tensor<D>) -> Tensor<D, Bool> {
    per_segment(g.count().float(), like).equal_elem(0.0)
}

pub(crate) fn mean<const D: usize>(g: &impl Segments, data: Tensor<D>) -> Tensor<D> {
    let sum = g.reduce(data, SegmentReduction::Sum);
    let counts = per_segment(g.count().float().clamp_min(1.0), &sum);
    sum / counts
}

/// The extreme's values, with `constant` in empty segments.
pub(crate) fn extreme_or_constant<const D: usize>(
    g: &impl Segments,
    data: Tensor<D>,
    which: SegmentExtreme,
    constant: f64,
) -> Tensor<D> {
    let values = g.extreme(data, which).0;
    let empty = empty_mask(g, &values);
    values.mask_fill(empty, constant)
}

pub(crate) fn logsumexp<const D: usize>(g: &impl Segments, data: Tensor<D>) -> Tensor<D> {
    let max = g.extreme(data.clone().detach(), SegmentExtreme::Max).0;
    let shift = max.clone().mask_fill(max.is_inf(), 0.0);
    let shifted = data - shift.clone().select(0, g.ids());
    let sum = g.reduce(shifted.exp(), SegmentReduction::Sum);
    // Σ exp = 0 only for empty or all `-inf` columns (the maximum row adds 1 otherwise): take
    // the log of 1 there and put `-inf` back, so that no 1/0 reaches the backward pass.
    let dead = sum.clone().equal_elem(0.0);
    (sum.mask_fill(dead.clone(), 1.0).log() + shift).mask_fill(dead, f64::NEG_INFINITY)
}

/// Rows minus their segment's mean, and the population variance.
fn centered<const D: usize>(g: &impl Segments, data: Tensor<D>) -> (Tensor<D>, Tensor<D>) {
    let centered = data.clone() - mean(g, data).select(0, g.ids());
    let var = mean(g, centered.clone().powi_scalar(2));
    (centered, var)
}

pub(crate) fn variance<const D: usize>(g: &impl Segments, data: Tensor<D>) -> Tensor<D> {
    centered(g, data).1
}

pub(crate) fn normalize<const D: usize>(g: &impl Segments, data: Tensor<D>, eps: f64) -> Tensor<D> {
    let (centered, var) = centered(g, data);
    centered / (var + eps).sqrt().select(0, g.ids())
}
