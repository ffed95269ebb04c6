//! Masked reductions: a Bool mask removes entries from a reduction, as if they were not there.
//!
//! A masked reduction equals the unmasked one applied to `where(mask, data, fill)`, with fill 0
//! for sums, 1 for products, `+inf` for minima, `-inf` for maxima and logsumexp; means and
//! variances divide by the number of eligible entries. A segment (column) with nothing eligible
//! returns the identity: 0 for a sum, 1 for a product, `∓inf` for max / min, -1 for their
//! arguments, `-inf` for logsumexp, NaN for a mean or a variance, 0 for every softmax row.
//! Masked-out entries receive exactly zero gradient (whatever their value, NaN included); the
//! mask receives none. Composed from the core ops, so every backend runs them, planned or not;
//! the sum is one backend op (`SegmentBackend::segment_sum_masked`), whose CPU and CubeCL
//! kernels read the flags beside the rows instead of filling a copy first, and the mean is that
//! sum over the eligible count; the softmax and max / min with their arguments are ops too
//! (`segment_softmax_masked`, `segment_extreme_masked`: CubeCL kernels on wgpu, composites
//! elsewhere) with their own backwards.

use burn::backend::Dispatch;
use burn::tensor::{Bool, Int, Tensor};

use crate::kind::SegmentKind;
use crate::statistics::{mean_or_nan, moment, row_weights};
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction, SegmentWeights, Segments};

/// Segment ids with a mask: the ops of [`Segments`] over the eligible entries only. Built by
/// [`SegmentStatistics::masked`](crate::SegmentStatistics::masked); the mask is `[E]` (one flag per row, broadcast over the trailing
/// dimensions) or the data's shape. Float data; the sum, product, max, min and their
/// arguments take Int data too.
///
/// # Panics
/// Every op panics if the mask's first dimension is not the number of ids, or if a full mask's
/// shape differs from the data's.
#[derive(Clone, Debug)]
pub struct Masked<'a, S: Segments + ?Sized, const M: usize> {
    index: &'a S,
    mask: Tensor<M, Bool>,
}

impl<'a, S: Segments + ?Sized, const M: usize> Masked<'a, S, M> {
    pub(crate) fn new(index: &'a S, mask: Tensor<M, Bool>) -> Self {
        let (rows, ids) = (mask.dims()[0], index.num_rows());
        assert_eq!(
            rows, ids,
            "burn-segment: the mask has {rows} rows (dim 0) but there are {ids} ids"
        );
        Self { index, mask }
    }

    /// The mask in `dims` (the data's shape, which has entries: see [`is_empty`]).
    fn eligible<const D: usize>(&self, dims: [usize; D]) -> Tensor<D, Bool> {
        self.check_shape(dims);
        if M == 1 {
            let mut rows = [1; D];
            rows[0] = dims[0];
            return self.mask.clone().reshape(rows).expand(dims);
        }
        self.mask.clone().reshape(dims)
    }

    /// Panics unless the mask is `[E]` or has the data's shape `dims`.
    fn check_shape<const D: usize>(&self, dims: [usize; D]) {
        let mask = self.mask.dims();
        assert!(
            M == 1 || M == D && mask[..] == dims[..],
            "burn-segment: the mask's shape {mask:?} is neither [E] nor the data's {dims:?}"
        );
    }

    /// `data` with the masked-out entries replaced by `fill`.
    fn filled<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        fill: impl burn::tensor::ElementConversion,
    ) -> Tensor<D, K> {
        if is_empty(&data) {
            return data;
        }
        let out = self.eligible(data.dims()).bool_not();
        data.mask_fill(out, fill)
    }

    /// Number of eligible entries per segment (and column of a full mask): `[N]` for an `[E]`
    /// mask, `[N, ...]` for a full one.
    pub fn count(&self) -> Tensor<M, Int> {
        self.index.sum(self.mask.clone().int())
    }

    /// Eligible entries per segment in `data`'s reduced shape, as floats.
    fn counts<const D: usize>(&self, data: &Tensor<D>) -> Tensor<D> {
        let eligible = match is_empty(data) {
            true => Tensor::zeros(data.dims(), &data.device()),
            false => self.eligible(data.dims()).int(),
        };
        let counts = self.index.sum(eligible).float();
        counts.cast(data.dtype())
    }

    /// Sum of the eligible entries; 0 where there are none. `[E, ...] -> [N, ...]`, float or
    /// int data. Over floats one op (kernels on the CPU backends and wgpu that skip the
    /// left-out entries as they read them); over ints the sum of the filled data.
    pub fn sum<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.check_shape(data.dims());
        if !data.dtype().is_float() {
            return self.index.sum(self.filled(data, 0.0));
        }
        let float = Tensor::<D>::from_dispatch(data.into_dispatch());
        let out = self.index.sum_masked(float, self.mask.clone());
        Tensor::from_dispatch(out.into_dispatch())
    }

    /// Product of the eligible entries; 1 where there are none. Float or int data.
    pub fn prod<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.index.prod(self.filled(data, 1.0))
    }

    /// Mean of the eligible entries; NaN where there are none (0 rows to divide by). The
    /// masked [`sum`](Self::sum) over the eligible count.
    pub fn mean<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let counts = self.counts(&data);
        if is_empty(&data) {
            return moment(self.index, data, (None, counts), None);
        }
        mean_or_nan(self.sum(data), counts)
    }

    /// Maximum of the eligible entries (NaN wins); `-inf` where there are none (ints: the
    /// type's minimum). (The values alone: the maximum of the filled data, without the
    /// arguments' pass.)
    pub fn max<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.index
            .max(fill_identity(self, data, SegmentReduction::Max))
    }

    /// Minimum of the eligible entries (NaN wins); `+inf` where there are none (ints: the
    /// type's maximum).
    pub fn min<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, K> {
        self.index
            .min(fill_identity(self, data, SegmentReduction::Min))
    }

    /// [`max`](Self::max) and the first eligible row attaining it (the first NaN where a
    /// column holds one), -1 where there is none; arguments in the ids' dtype. A left-out row
    /// never wins, not even a tie at the identity. Over floats one op.
    pub fn max_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.extreme(data, SegmentExtreme::Max)
    }

    /// [`min`](Self::min) and the first eligible row attaining it, as
    /// [`max_with_indices`](Self::max_with_indices).
    pub fn min_with_indices<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.extreme(data, SegmentExtreme::Min)
    }

    /// The row of [`max_with_indices`](Self::max_with_indices).
    pub fn argmax<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        self.max_with_indices(data).1
    }

    /// The row of [`min_with_indices`](Self::min_with_indices).
    pub fn argmin<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        self.min_with_indices(data).1
    }

    fn extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        self.check_shape(data.dims());
        if is_empty(&data) {
            return self.index.extreme(data, which);
        }
        if data.dtype().is_float() {
            let float = Tensor::<D>::from_dispatch(data.into_dispatch());
            let (v, a) = self.index.extreme_masked(float, self.mask.clone(), which);
            return (Tensor::from_dispatch(v.into_dispatch()), a);
        }
        self.int_extreme(data, which)
    }

    /// Max / min of int data over the eligible entries, with the smallest eligible row
    /// attaining each result (-1 where none is): the extreme of the filled data, then the rows.
    fn int_extreme<const D: usize, K: SegmentKind>(
        &self,
        data: Tensor<D, K>,
        which: SegmentExtreme,
    ) -> (Tensor<D, K>, Tensor<D, Int>) {
        let reduction = which.reduction();
        let dims = data.dims();
        let values = self
            .index
            .reduce(fill_identity(self, data.clone(), reduction), reduction);
        let (e, idt) = (self.index.num_rows(), self.index.segment_ids().dtype());
        let best = Dispatch::int_segment_gather(values.clone().into_dispatch(), self.index.index());
        let ties = data.equal(Tensor::from_dispatch(best));
        let candidates = ties.bool_and(self.eligible(dims));
        let mut rows = [1; D];
        rows[0] = e;
        let row_ids = Tensor::<1, Int>::arange(0..e as i64, (&values.device(), idt))
            .reshape(rows)
            .expand(candidates.dims());
        let first = self
            .index
            .min(row_ids.mask_fill(candidates.bool_not(), e as i64));
        // An empty segment's minimum is the dtype's largest value, also at least `e`.
        let args = first
            .clone()
            .mask_fill(first.greater_equal_elem(e as i64), -1);
        (values, args)
    }

    /// `log Σ exp` of the eligible entries; `-inf` where there are none.
    pub fn logsumexp<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.index.logsumexp(self.filled(data, f64::NEG_INFINITY))
    }

    /// Softmax over the eligible entries of each segment, `[E, ...] -> [E, ...]`: 0 at the
    /// masked-out entries, and in every row of a segment with nothing eligible.
    pub fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        self.check_shape(logits.dims());
        if is_empty(&logits) {
            return self.index.softmax(logits);
        }
        self.index.softmax_masked(logits, self.mask.clone())
    }

    /// Variance of the eligible entries with `correction` (see
    /// [`segment_variance_corrected`](crate::segment_variance_corrected)): NaN where fewer than
    /// `correction + 1` entries are eligible, with zero gradient there.
    pub fn variance_corrected<const D: usize>(
        &self,
        data: Tensor<D>,
        correction: usize,
    ) -> Tensor<D> {
        if is_empty(&data) {
            return crate::statistics::variance_corrected(self.index, data, correction);
        }
        // The eligible entries weigh 1, the others 0 (their values filled, so a NaN there
        // stays out).
        let w = self.eligible(data.dims()).float().cast(data.dtype());
        let counts = self.counts(&data);
        let weighting = (Some(w), counts);
        moment(
            self.index,
            self.filled(data, 0.0),
            weighting,
            Some(correction),
        )
    }

    /// Weighted mean of the eligible entries (see
    /// [`SegmentStatistics::weighted_mean`](crate::SegmentStatistics::weighted_mean)): a masked-out entry weighs
    /// 0; NaN where the eligible weights total 0.
    pub fn weighted_mean<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &SegmentWeights,
    ) -> Tensor<D> {
        self.weighted(data, weights, None)
    }

    /// Weighted variance of the eligible entries with `correction` (see
    /// [`SegmentStatistics::weighted_variance`](crate::SegmentStatistics::weighted_variance)); NaN where the
    /// eligible weights total at most `correction`.
    pub fn weighted_variance<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &SegmentWeights,
        correction: usize,
    ) -> Tensor<D> {
        self.weighted(data, weights, Some(correction))
    }

    fn weighted<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &SegmentWeights,
        correction: Option<usize>,
    ) -> Tensor<D> {
        if is_empty(&data) {
            return match correction {
                None => crate::statistics::weighted_mean(self.index, data, weights),
                Some(c) => crate::statistics::weighted_variance(self.index, data, weights, c),
            };
        }
        let w = self.filled(row_weights(weights, &data).expand(data.dims()), 0.0);
        let total = self.index.sum(w.clone());
        // Masked-out values filled too: a NaN times its weight of 0 is still NaN.
        let data = self.filled(data, 0.0);
        moment(self.index, data, (Some(w), total), correction)
    }

    /// The square root of [`variance_corrected`](Self::variance_corrected).
    pub fn std_corrected<const D: usize>(&self, data: Tensor<D>, correction: usize) -> Tensor<D> {
        self.variance_corrected(data, correction).sqrt()
    }
}

/// `data` with the entries `m` leaves out replaced by the identity of `reduction` for its
/// dtype (`∓inf` for floats, the type's bound for ints, kept as an i64).
fn fill_identity<const D: usize, K: SegmentKind, S: Segments + ?Sized, const M: usize>(
    m: &Masked<'_, S, M>,
    data: Tensor<D, K>,
    reduction: SegmentReduction,
) -> Tensor<D, K> {
    let dtype = data.dtype();
    match dtype.is_float() {
        true => m.filled(data, crate::composite::float_identity(reduction)),
        false => m.filled(data, crate::composite::int_identity(reduction, dtype)),
    }
}

/// Whether `data` has no entries: nothing to mask, and no elementwise op is launched on it
/// (Burn 0.22's `expand` rejects a size of 0, and its wgpu kernels fail on empty tensors).
fn is_empty<const D: usize, K: SegmentKind>(data: &Tensor<D, K>) -> bool {
    data.dims().contains(&0)
}
