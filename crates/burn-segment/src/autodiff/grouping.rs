//! How a backward pass reaches its ids: as given (an unplanned op, re-checked by each inner
//! call) or through the `SegmentPlan` of the forward call (trusted, nothing recomputed).

use core::fmt::Debug;

use burn::backend::tensor::{BoolTensor, FloatTensor, IntTensor};

use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};

/// Segment ids as one backward pass sees them: every inner op it needs, over those ids.
pub(super) trait Grouping<B: SegmentBackend>: Clone + Send + Debug + 'static {
    fn reduce(&self, data: FloatTensor<B>, reduction: SegmentReduction) -> FloatTensor<B>;
    fn extreme(
        &self,
        data: FloatTensor<B>,
        extreme: SegmentExtreme,
    ) -> (FloatTensor<B>, IntTensor<B>);
    fn softmax(&self, data: FloatTensor<B>) -> FloatTensor<B>;
    /// The sum of the entries `mask` keeps.
    fn sum_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B>;
    /// The softmax over the entries `mask` keeps (0 elsewhere).
    fn softmax_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B>;
    /// Max / min over the entries `mask` keeps, with the first kept row attaining it.
    fn extreme_masked(
        &self,
        data: FloatTensor<B>,
        mask: BoolTensor<B>,
        e: SegmentExtreme,
    ) -> (FloatTensor<B>, IntTensor<B>);
    /// Row `e` of the result is row `ids[e]` of `data`.
    fn gather(&self, data: FloatTensor<B>) -> FloatTensor<B>;
    fn int_gather(&self, data: IntTensor<B>) -> IntTensor<B>;
    /// `spmm` of `x`'s rows (indexed by `senders`) into the receivers' segments.
    fn spmm(x: FloatTensor<B>, w: FloatTensor<B>, senders: Self, receivers: Self)
    -> FloatTensor<B>;
    fn sddmm(
        a: FloatTensor<B>,
        b: FloatTensor<B>,
        ai: Self,
        bi: Self,
        heads: usize,
    ) -> FloatTensor<B>;
    fn attention_softmax(
        inputs: (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>),
        senders: Self,
        receivers: Self,
        slope: f64,
    ) -> FloatTensor<B>;
    fn attention_backward(
        tensors: [FloatTensor<B>; 5],
        senders: Self,
        receivers: Self,
        slope: f64,
    ) -> FloatTensor<B>;
}

/// Ids as given, with the number of segments (or of rows they index).
#[derive(Clone, Debug)]
pub(super) struct Ids<B: SegmentBackend> {
    pub(super) ids: IntTensor<B>,
    pub(super) n: usize,
}

impl<B: SegmentBackend> Grouping<B> for Ids<B> {
    fn reduce(&self, data: FloatTensor<B>, reduction: SegmentReduction) -> FloatTensor<B> {
        B::segment_reduce(data, self.ids.clone(), self.n, reduction)
    }
    fn extreme(&self, data: FloatTensor<B>, e: SegmentExtreme) -> (FloatTensor<B>, IntTensor<B>) {
        B::segment_extreme(data, self.ids.clone(), self.n, e)
    }
    fn softmax(&self, data: FloatTensor<B>) -> FloatTensor<B> {
        B::segment_softmax(data, self.ids.clone(), self.n)
    }
    fn sum_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B> {
        B::segment_sum_masked(data, mask, self.ids.clone(), self.n)
    }
    fn softmax_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B> {
        B::segment_softmax_masked(data, mask, self.ids.clone(), self.n)
    }
    fn extreme_masked(
        &self,
        data: FloatTensor<B>,
        mask: BoolTensor<B>,
        e: SegmentExtreme,
    ) -> (FloatTensor<B>, IntTensor<B>) {
        B::segment_extreme_masked(data, mask, self.ids.clone(), self.n, e)
    }
    fn gather(&self, data: FloatTensor<B>) -> FloatTensor<B> {
        B::segment_gather(data, self.ids.clone())
    }
    fn int_gather(&self, data: IntTensor<B>) -> IntTensor<B> {
        B::int_segment_gather(data, self.ids.clone())
    }
    fn spmm(x: FloatTensor<B>, w: FloatTensor<B>, s: Self, r: Self) -> FloatTensor<B> {
        B::segment_spmm(x, w, s.ids, r.ids, r.n)
    }
    fn sddmm(a: FloatTensor<B>, b: FloatTensor<B>, ai: Self, bi: Self, h: usize) -> FloatTensor<B> {
        B::segment_sddmm(a, b, ai.ids, bi.ids, h)
    }
    fn attention_softmax(
        (src, dst, bias): (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>),
        s: Self,
        r: Self,
        slope: f64,
    ) -> FloatTensor<B> {
        B::segment_attention_softmax(src, dst, bias, s.ids, r.ids, slope)
    }
    fn attention_backward(
        [src, dst, bias, alpha, grad]: [FloatTensor<B>; 5],
        s: Self,
        r: Self,
        slope: f64,
    ) -> FloatTensor<B> {
        B::segment_attention_backward(src, dst, bias, s.ids, r.ids, alpha, grad, slope)
    }
}

/// A plan's ids: validated when the plan was built, so gathers index without a check.
impl<B: SegmentBackend> Grouping<B> for SegmentPlanPrimitive<B> {
    fn reduce(&self, data: FloatTensor<B>, reduction: SegmentReduction) -> FloatTensor<B> {
        B::segment_reduce_planned(data, self.clone(), reduction)
    }
    fn extreme(&self, data: FloatTensor<B>, e: SegmentExtreme) -> (FloatTensor<B>, IntTensor<B>) {
        B::segment_extreme_planned(data, self.clone(), e)
    }
    fn softmax(&self, data: FloatTensor<B>) -> FloatTensor<B> {
        B::segment_softmax_planned(data, self.clone())
    }
    fn sum_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B> {
        B::segment_sum_masked_planned(data, mask, self.clone())
    }
    fn softmax_masked(&self, data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B> {
        B::segment_softmax_masked_planned(data, mask, self.clone())
    }
    fn extreme_masked(
        &self,
        data: FloatTensor<B>,
        mask: BoolTensor<B>,
        e: SegmentExtreme,
    ) -> (FloatTensor<B>, IntTensor<B>) {
        B::segment_extreme_masked_planned(data, mask, self.clone(), e)
    }
    fn gather(&self, data: FloatTensor<B>) -> FloatTensor<B> {
        B::float_select(data, 0, self.segment_ids.clone())
    }
    fn int_gather(&self, data: IntTensor<B>) -> IntTensor<B> {
        B::int_select(data, 0, self.segment_ids.clone())
    }
    fn spmm(x: FloatTensor<B>, w: FloatTensor<B>, s: Self, r: Self) -> FloatTensor<B> {
        B::segment_spmm_planned(x, w, s, r)
    }
    fn sddmm(a: FloatTensor<B>, b: FloatTensor<B>, ai: Self, bi: Self, h: usize) -> FloatTensor<B> {
        B::segment_sddmm_planned(a, b, ai, bi, h)
    }
    fn attention_softmax(
        (src, dst, bias): (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>),
        s: Self,
        r: Self,
        slope: f64,
    ) -> FloatTensor<B> {
        B::segment_attention_softmax_planned(src, dst, bias, s, r, slope)
    }
    fn attention_backward(
        [src, dst, bias, alpha, grad]: [FloatTensor<B>; 5],
        s: Self,
        r: Self,
        slope: f64,
    ) -> FloatTensor<B> {
        B::segment_attention_backward_planned(src, dst, bias, s, r, alpha, grad, slope)
    }
}
