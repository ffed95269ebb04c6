//! Masked reductions: a Bool mask removes entries from a reduction, as if they were not there.
//!
//! A masked reduction equals the unmasked one applied to `where(mask, data, fill)`, with fill 0
//! for sums, 1 for products, `+inf` for minima, `-inf` for maxima and logsumexp; means and
//! variances divide by the number of eligible entries. A segment (column) with nothing eligible
//! returns the identity: 0 for a sum, 1 for a product, `∓inf` for max / min, -1 for their
//! arguments, `-inf` for logsumexp, NaN for a mean or a variance, 0 for every softmax row.
//! Masked-out entries receive exactly zero gradient (whatever their value, NaN included); the
//! mask receives none. Composed from the core ops, so every backend runs them, planned or not;
//! the sum is one backend op (`SegmentBackend::segment_sum_masked`), whose CPU kernel reads the
//! flags beside the rows instead of filling a copy first.

use burn::tensor::{Bool, Int, Tensor};

use crate::statistics::{moment, row_weights};
use crate::{SegmentWeights, Segments};

/// Segment ids with a mask: the ops of [`Segments`] over the eligible entries only. Built by
/// [`Segments::masked`]; the mask is `[E]` (one flag per row, broadcast over the trailing
/// dimensions) or the data's shape. Float data.
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

    /// The mask in `like`'s shape.
    /// The mask in `like`'s shape, which has entries (see [`is_empty`]).
    fn eligible<const D: usize>(&self, like: &Tensor<D>) -> Tensor<D, Bool> {
        let dims = like.dims();
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
    fn filled<const D: usize>(&self, data: Tensor<D>, fill: f64) -> Tensor<D> {
        if is_empty(&data) {
            return data;
        }
        let out = self.eligible(&data).bool_not();
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
            false => self.eligible(data).int(),
        };
        let counts = self.index.sum(eligible).float();
        counts.cast(data.dtype())
    }

    /// Sum of the eligible entries; 0 where there are none. `[E, ...] -> [N, ...]`. One op
    /// (a kernel on the CPU backends that skips the left-out entries as it reads them).
    pub fn sum<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.check_shape(data.dims());
        self.index.sum_masked(data, self.mask.clone())
    }

    /// Product of the eligible entries; 1 where there are none.
    pub fn prod<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.index.prod(self.filled(data, 1.0))
    }

    /// Mean of the eligible entries; NaN where there are none (0 rows to divide by).
    pub fn mean<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        let counts = self.counts(&data);
        moment(self.index, self.filled(data, 0.0), (None, counts), None)
    }

    /// Maximum of the eligible entries (NaN wins); `-inf` where there are none.
    pub fn max<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.index.max(self.filled(data, f64::NEG_INFINITY))
    }

    /// Minimum of the eligible entries (NaN wins); `+inf` where there are none.
    pub fn min<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.index.min(self.filled(data, f64::INFINITY))
    }

    /// [`max`](Self::max) and the first eligible row attaining it (the first NaN where a
    /// column holds one), -1 where there is none; arguments in the ids' dtype.
    pub fn max_with_indices<const D: usize>(&self, data: Tensor<D>) -> (Tensor<D>, Tensor<D, Int>) {
        let values = self.max(data.clone());
        let args = self.first_attaining(data, &values);
        (values, args)
    }

    /// [`min`](Self::min) and the first eligible row attaining it, as
    /// [`max_with_indices`](Self::max_with_indices).
    pub fn min_with_indices<const D: usize>(&self, data: Tensor<D>) -> (Tensor<D>, Tensor<D, Int>) {
        let values = self.min(data.clone());
        let args = self.first_attaining(data, &values);
        (values, args)
    }

    /// The row of [`max_with_indices`](Self::max_with_indices).
    pub fn argmax<const D: usize>(&self, data: Tensor<D>) -> Tensor<D, Int> {
        self.max_with_indices(data).1
    }

    /// The row of [`min_with_indices`](Self::min_with_indices).
    pub fn argmin<const D: usize>(&self, data: Tensor<D>) -> Tensor<D, Int> {
        self.min_with_indices(data).1
    }

    /// Per segment and column, the smallest eligible row whose value is the segment's `best`
    /// (NaN matching NaN), -1 where none is: the masked-out rows cannot win a tie, which the
    /// unmasked argument of the filled data would let them do at `±inf`.
    fn first_attaining<const D: usize>(&self, data: Tensor<D>, best: &Tensor<D>) -> Tensor<D, Int> {
        let (e, ids) = (self.index.num_rows(), self.index.segment_ids());
        if is_empty(&data) {
            return Tensor::full(best.dims(), -1, (&best.device(), ids.dtype()));
        }
        let (data, best) = (data.detach(), self.index.gather(best.clone().detach()));
        let ties = data
            .clone()
            .equal(best.clone())
            .bool_or(data.clone().is_nan().bool_and(best.is_nan()));
        let candidates = ties.bool_and(self.eligible(&data));
        let mut rows = [1; D];
        rows[0] = e;
        let row_ids = Tensor::<1, Int>::arange(0..e as i64, (&ids.device(), ids.dtype()))
            .reshape(rows)
            .expand(data.dims());
        let first = self
            .index
            .min(row_ids.mask_fill(candidates.bool_not(), e as i64));
        // An empty segment's minimum is the dtype's largest value, also at least `e`.
        first
            .clone()
            .mask_fill(first.greater_equal_elem(e as i64), -1)
    }

    /// `log Σ exp` of the eligible entries; `-inf` where there are none.
    pub fn logsumexp<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.index.logsumexp(self.filled(data, f64::NEG_INFINITY))
    }

    /// Softmax over the eligible entries of each segment, `[E, ...] -> [E, ...]`: 0 at the
    /// masked-out entries, and in every row of a segment with nothing eligible.
    pub fn softmax<const D: usize>(&self, logits: Tensor<D>) -> Tensor<D> {
        if is_empty(&logits) {
            return self.index.softmax(logits);
        }
        let out = self.eligible(&logits).bool_not();
        let y = self
            .index
            .softmax(logits.mask_fill(out.clone(), f64::NEG_INFINITY));
        y.mask_fill(out, 0.0)
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
            return self.index.variance_corrected(data, correction);
        }
        // The eligible entries weigh 1, the others 0 (their values filled, so a NaN there
        // stays out).
        let w = self.eligible(&data).float().cast(data.dtype());
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
    /// [`Segments::weighted_mean`](crate::Segments::weighted_mean)): a masked-out entry weighs
    /// 0; NaN where the eligible weights total 0.
    pub fn weighted_mean<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &SegmentWeights,
    ) -> Tensor<D> {
        self.weighted(data, weights, None)
    }

    /// Weighted variance of the eligible entries with `correction` (see
    /// [`Segments::weighted_variance`](crate::Segments::weighted_variance)); NaN where the
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
                None => self.index.weighted_mean(data, weights),
                Some(c) => self.index.weighted_variance(data, weights, c),
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

/// Whether `data` has no entries: nothing to mask, and no elementwise op is launched on it
/// (Burn 0.22's `expand` rejects a size of 0, and its wgpu kernels fail on empty tensors).
fn is_empty<const D: usize>(data: &Tensor<D>) -> bool {
    data.dims().contains(&0)
}
