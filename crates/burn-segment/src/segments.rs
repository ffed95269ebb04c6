//! [`Segments`]: the segment ops written once over either form of ids — [`SegmentIds`], given
//! per call (the free functions), or a [`SegmentPlan`].

use burn::backend::Dispatch;
use burn::tensor::{Bool, Int, Tensor};

use crate::kind::SegmentKind;
use crate::plan::SegmentIndex;
use crate::{SegmentBackend, SegmentExtreme, SegmentPlan, SegmentReduction};

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::SegmentIds {}
    impl Sealed for crate::SegmentPlan {}
}

/// Segment ids as the ops see them: [`SegmentIds`] (ids and a number of segments, planned by
/// the backend on every call) or a [`SegmentPlan`] (checked and grouped once). Code generic over
/// `impl Segments` runs either way; the provided methods are the crate's free functions
/// (`plan.sum(x)` is [`segment_sum`](crate::segment_sum) over the plan's ids).
///
/// Every method that takes `data` panics if it does not have one row (dim 0) per id.
pub trait Segments: sealed::Sealed {
    /// The number of segments `N`.
    fn num_segments(&self) -> usize;
    /// The number of ids `E`.
    fn num_rows(&self) -> usize;
    /// The ids, `[E]`.
    fn segment_ids(&self) -> Tensor<1, Int>;
    /// The ids as the backend ops take them.
    #[doc(hidden)]
    fn index(&self) -> SegmentIndex<Dispatch>;
    /// [`segment_reduce`](crate::segment_reduce): `[E, ...] -> [N, ...]`.
    fn reduce<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        reduction: SegmentReduction,
    ) -> Tensor<D, K> {
        self.check_rows(data.dims()[0]);
        Tensor::from_dispatch(K::reduce(data.into_dispatch(), self.index(), reduction))
    }
    /// Max or min with the arguments: `[E, ...] -> ([N, ...], [N, ...] Int)`.
    fn extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.check_rows(data.dims()[0]);
        let (v, a) = K::extreme(data.into_dispatch(), self.index(), which);
        (Tensor::from_dispatch(v), Tensor::from_dispatch(a))
    }
    /// [`segment_softmax`](crate::segment_softmax): `[E, ...] -> [E, ...]`.
    fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        self.check_rows(logits.dims()[0]);
        Tensor::from_dispatch(Dispatch::segment_softmax(
            logits.into_dispatch(),
            self.index(),
        ))
    }
    /// [`segment_count`](crate::segment_count): rows per segment, `[N]` Int.
    fn count(&self) -> Tensor<1, Int>;
    /// [`spmm`](crate::spmm) of `x`'s rows, indexed by `senders`, into the segments of
    /// `receivers`: `[N_src, D] -> [receivers.num_segments(), D]`.
    fn spmm(
        x: Tensor<2>,
        senders: &Self,
        receivers: &Self,
        weights: Option<Tensor<2>>,
    ) -> Tensor<2>;
    /// [`sddmm`](crate::sddmm) of `a`'s and `b`'s rows: `[E, heads]`.
    fn sddmm(a: Tensor<2>, b: Tensor<2>, a_index: &Self, b_index: &Self, heads: usize)
    -> Tensor<2>;
    /// [`attention_softmax`](crate::attention_softmax) over `senders` (rows of `src`) and
    /// `receivers` (rows of `dst`): `[E, H]`.
    fn attention_softmax(
        src: Tensor<2>,
        dst: Tensor<2>,
        senders: &Self,
        receivers: &Self,
        bias: Option<Tensor<2>>,
        negative_slope: f64,
    ) -> Tensor<2>;

    /// The sum of the entries `mask` keeps, `mask` `[E]` or the data's shape (checked by
    /// [`Masked`](crate::Masked), which calls this).
    #[doc(hidden)]
    fn sum_masked<const D: usize, const M: usize>(
        &self,
        data: Tensor<D>,
        mask: Tensor<M, Bool>,
    ) -> Tensor<D> {
        self.check_rows(data.dims()[0]);
        let (data, mask) = (data.into_dispatch(), mask.into_dispatch());
        Tensor::from_dispatch(Dispatch::segment_sum_masked(data, mask, self.index()))
    }

    /// Max / min over the entries `mask` keeps with the first kept row attaining it (checked
    /// by [`Masked`](crate::Masked)).
    #[doc(hidden)]
    fn extreme_masked<const D: usize, const M: usize>(
        &self,
        data: Tensor<D>,
        mask: Tensor<M, Bool>,
        which: SegmentExtreme,
    ) -> (Tensor<D>, Tensor<D, Int>) {
        self.check_rows(data.dims()[0]);
        let (data, mask) = (data.into_dispatch(), mask.into_dispatch());
        let (v, a) = Dispatch::segment_extreme_masked(data, mask, self.index(), which);
        (Tensor::from_dispatch(v), Tensor::from_dispatch(a))
    }

    /// The softmax over the entries `mask` keeps (checked by [`Masked`](crate::Masked)).
    #[doc(hidden)]
    fn softmax_masked<const D: usize, const M: usize>(
        &self,
        data: Tensor<D>,
        mask: Tensor<M, Bool>,
    ) -> Tensor<D> {
        self.check_rows(data.dims()[0]);
        let (data, mask) = (data.into_dispatch(), mask.into_dispatch());
        Tensor::from_dispatch(Dispatch::segment_softmax_masked(data, mask, self.index()))
    }

    /// How a message names the ids.
    #[doc(hidden)]
    fn ids_name(&self) -> &'static str {
        "segment_ids"
    }
    /// Panics unless `rows` (dim 0 of an op's data) is the number of ids.
    #[doc(hidden)]
    fn check_rows(&self, rows: usize) {
        let (ids, name) = (self.num_rows(), self.ids_name());
        assert_eq!(
            rows, ids,
            "burn-segment: data has {rows} rows (dim 0) but {name} has {ids} entries"
        );
    }
    /// [`segment_sum`](crate::segment_sum): `[E, ...] -> [N, ...]`, empty segments 0.
    fn sum<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.reduce(data, SegmentReduction::Sum)
    }
    /// [`segment_prod`](crate::segment_prod): `[E, ...] -> [N, ...]`, empty segments 1.
    fn prod<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.reduce(data, SegmentReduction::Prod)
    }
    /// [`segment_max`](crate::segment_max): `[E, ...] -> [N, ...]`, empty segments `-inf`.
    fn max<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.reduce(data, SegmentReduction::Max)
    }
    /// [`segment_min`](crate::segment_min): `[E, ...] -> [N, ...]`, empty segments `+inf`.
    fn min<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.reduce(data, SegmentReduction::Min)
    }
    /// [`segment_max_with_indices`](crate::segment_max_with_indices): values and arguments.
    fn max_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.extreme(data, SegmentExtreme::Max)
    }
    /// [`segment_min_with_indices`](crate::segment_min_with_indices): values and arguments.
    fn min_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.extreme(data, SegmentExtreme::Min)
    }
    /// [`segment_argmax`](crate::segment_argmax): `[E, ...] -> [N, ...]` Int, -1 when empty.
    fn argmax<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        self.extreme(data, SegmentExtreme::Max).1
    }
    /// [`segment_argmin`](crate::segment_argmin): `[E, ...] -> [N, ...]` Int, -1 when empty.
    fn argmin<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        self.extreme(data, SegmentExtreme::Min).1
    }
    /// [`segment_mean`](crate::segment_mean): `[E, ...] -> [N, ...]`, empty segments 0.
    fn mean<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let sum = self.sum(data);
        let counts = per_segment(self.count().float().clamp_min(1.0), &sum);
        sum / counts
    }
    /// [`segment_max_or_constant`](crate::segment_max_or_constant).
    fn max_or_constant<const D: usize>(&self, data: Tensor<D>, constant: f64) -> Tensor<D> {
        let values = self.max(data);
        let empty = empty_mask(self.count(), &values);
        values.mask_fill(empty, constant)
    }
    /// [`segment_min_or_constant`](crate::segment_min_or_constant).
    fn min_or_constant<const D: usize>(&self, data: Tensor<D>, constant: f64) -> Tensor<D> {
        let values = self.min(data);
        let empty = empty_mask(self.count(), &values);
        values.mask_fill(empty, constant)
    }
    /// [`segment_logsumexp`](crate::segment_logsumexp): `[E, ...] -> [N, ...]`, empty `-inf`.
    fn logsumexp<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let max = self.max(data.clone().detach());
        let shift = max.clone().mask_fill(max.is_inf(), 0.0);
        let shifted = data - self.gather(shift.clone());
        let sum = self.sum(shifted.exp());
        // Σ exp = 0 only for empty or all `-inf` columns (the maximum row adds 1 otherwise):
        // take the log of 1 there and put `-inf` back, so no 1/0 reaches the backward pass.
        let dead = sum.clone().equal_elem(0.0);
        (sum.mask_fill(dead.clone(), 1.0).log() + shift).mask_fill(dead, f64::NEG_INFINITY)
    }
    /// Row `e` of the result is row `ids[e]` of `data` (each segment's row brought back to its
    /// ids), `[N, ...] -> [E, ...]`; differentiable.
    ///
    /// # Panics
    /// If `data` does not have one row per segment.
    fn gather<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let (rows, n) = (data.dims()[0], self.num_segments());
        assert_eq!(
            rows, n,
            "burn-segment: gather data has {rows} rows but there are {n} segments"
        );
        if self.num_rows() == 0 {
            // No ids: an empty result without launching a gather (Burn 0.22's wgpu `select`
            // with empty indices corrupts later ops; see burn-gnn-graph's `gather_rows`).
            return data.slice(0..0);
        }
        data.select(0, self.segment_ids())
    }
}

/// Ids given per call with their number of segments: what the free functions reduce over.
/// The backend checks and groups the ids on every call.
#[derive(Clone, Debug)]
pub struct SegmentIds {
    ids: Tensor<1, Int>,
    num_segments: usize,
}

impl SegmentIds {
    /// `segment_ids` (`[E]`, i32 or i64) over `num_segments` segments; nothing is checked here.
    pub fn new(segment_ids: Tensor<1, Int>, num_segments: usize) -> Self {
        Self {
            ids: segment_ids,
            num_segments,
        }
    }
}

impl Segments for SegmentIds {
    fn num_segments(&self) -> usize {
        self.num_segments
    }
    fn num_rows(&self) -> usize {
        self.ids.dims()[0]
    }
    fn segment_ids(&self) -> Tensor<1, Int> {
        self.ids.clone()
    }
    fn index(&self) -> SegmentIndex<Dispatch> {
        SegmentIndex::ids(self.ids.clone().into_dispatch(), self.num_segments)
    }
    fn count(&self) -> Tensor<1, Int> {
        Tensor::from_dispatch(Dispatch::segment_count(self.index()))
    }
    fn spmm(x: Tensor<2>, s: &Self, r: &Self, weights: Option<Tensor<2>>) -> Tensor<2> {
        crate::spmm(x, s.ids.clone(), r.ids.clone(), weights, r.num_segments)
    }
    fn sddmm(a: Tensor<2>, b: Tensor<2>, ai: &Self, bi: &Self, heads: usize) -> Tensor<2> {
        crate::sddmm(a, b, ai.ids.clone(), bi.ids.clone(), heads)
    }
    fn attention_softmax(
        src: Tensor<2>,
        dst: Tensor<2>,
        s: &Self,
        r: &Self,
        bias: Option<Tensor<2>>,
        slope: f64,
    ) -> Tensor<2> {
        crate::attention_softmax(src, dst, s.ids.clone(), r.ids.clone(), bias, slope)
    }
}

impl Segments for SegmentPlan {
    fn ids_name(&self) -> &'static str {
        "the plan's segment_ids"
    }
    fn num_segments(&self) -> usize {
        SegmentPlan::num_segments(self)
    }
    fn num_rows(&self) -> usize {
        SegmentPlan::num_rows(self)
    }
    fn segment_ids(&self) -> Tensor<1, Int> {
        SegmentPlan::segment_ids(self).clone()
    }
    fn index(&self) -> SegmentIndex<Dispatch> {
        SegmentPlan::index(self)
    }
    /// From the offsets: no pass over the ids.
    fn count(&self) -> Tensor<1, Int> {
        let n = SegmentPlan::num_segments(self);
        let offsets = self.offsets();
        offsets.clone().slice(1..n + 1) - offsets.clone().slice(0..n)
    }
    fn spmm(x: Tensor<2>, s: &Self, r: &Self, weights: Option<Tensor<2>>) -> Tensor<2> {
        crate::fused::spmm_over(x, s.index(), r.index(), weights)
    }
    fn sddmm(a: Tensor<2>, b: Tensor<2>, ai: &Self, bi: &Self, heads: usize) -> Tensor<2> {
        crate::fused::sddmm_over(a, b, ai.index(), bi.index(), heads)
    }
    fn attention_softmax(
        src: Tensor<2>,
        dst: Tensor<2>,
        s: &Self,
        r: &Self,
        bias: Option<Tensor<2>>,
        slope: f64,
    ) -> Tensor<2> {
        let (s, r) = (s.index(), r.index());
        crate::fused::attention_softmax_over(src, dst, s, r, bias, slope)
    }
}

/// `[num_segments]` -> `[num_segments, 1, ..]`, broadcastable against `[num_segments, ...]`.
fn per_segment<const D: usize>(t: Tensor<1>, like: &Tensor<D>) -> Tensor<D> {
    let mut dims = [1; D];
    dims[0] = t.dims()[0];
    t.cast(like.dtype()).reshape(dims).expand(like.dims())
}

/// Whether each segment is empty (from its `counts`), broadcast to `like`'s shape.
fn empty_mask<const D: usize>(counts: Tensor<1, Int>, like: &Tensor<D>) -> Tensor<D, Bool> {
    per_segment(counts.float(), like).equal_elem(0.0)
}

/// Rows minus their segment's mean, and the population variance.
pub(crate) fn centered<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
) -> (Tensor<D>, Tensor<D>) {
    let centered = data.clone() - g.gather(g.mean(data));
    let var = g.mean(centered.clone().powi_scalar(2));
    (centered, var)
}
