//! [`SegmentStatistics`]: the statistics of the segment ops — moments (variance, standard
//! deviation, corrected and weighted), counts and logic, normalisation, top-k, quantiles and
//! masks — as an extension of [`Segments`] for every implementor, so the core trait stays the
//! reductions and the modules that compute these stay below it.

use burn::tensor::{Bool, Int, Tensor};

use crate::kind::SegmentKind;
use crate::segments::{Segments, centered};

/// The statistics over either form of ids ([`SegmentIds`](crate::SegmentIds) or
/// [`SegmentPlan`](crate::SegmentPlan)), implemented for every [`Segments`]: bring it into
/// scope (`use burn_segment::SegmentStatistics;`) to call `plan.variance(x)`, `ids.topk(x, k,
/// true)`, `plan.masked(mask).mean(x)`. The free functions (`segment_variance`, ...) are the
/// same ops.
///
/// Every method that takes `data` panics if it does not have one row (dim 0) per id.
pub trait SegmentStatistics: Segments {
    /// [`segment_variance`](crate::segment_variance): `[E, ...] -> [N, ...]`, empty 0.
    fn variance<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        centered(self, data).1
    }
    /// [`segment_std`](crate::segment_std): `[E, ...] -> [N, ...]`, empty segments 0.
    fn std<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        self.variance(data).sqrt()
    }
    /// [`segment_variance_corrected`](crate::segment_variance_corrected): `[E, ...] -> [N, ...]`,
    /// NaN for segments of fewer than `correction + 1` rows.
    fn variance_corrected<const D: usize>(&self, data: Tensor<D>, correction: usize) -> Tensor<D> {
        crate::statistics::variance_corrected(self, data, correction)
    }
    /// [`segment_std_corrected`](crate::segment_std_corrected): `[E, ...] -> [N, ...]`.
    fn std_corrected<const D: usize>(&self, data: Tensor<D>, correction: usize) -> Tensor<D> {
        self.variance_corrected(data, correction).sqrt()
    }
    /// Weighted mean of each segment's rows, `Σ w_e x_e / Σ w_e` (`[E, ...] -> [N, ...]`):
    /// NaN where the weights total 0 (an empty segment included), with zero gradient there.
    ///
    /// # Panics
    /// If there is not one weight per row.
    fn weighted_mean<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &crate::SegmentWeights,
    ) -> Tensor<D> {
        crate::statistics::weighted_mean(self, data, weights)
    }
    /// Weighted variance, `Σ w_e (x_e − μ_w)² / (Σ w_e − correction)` with `μ_w` the weighted
    /// mean (frequency weights; correction 0: normalised by the total weight), NaN where the
    /// total weight is at most `correction`, with zero gradient there.
    ///
    /// # Panics
    /// If there is not one weight per row.
    fn weighted_variance<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &crate::SegmentWeights,
        correction: usize,
    ) -> Tensor<D> {
        crate::statistics::weighted_variance(self, data, weights, correction)
    }
    /// The square root of [`weighted_variance`](Self::weighted_variance).
    fn weighted_std<const D: usize>(
        &self,
        data: Tensor<D>,
        weights: &crate::SegmentWeights,
        correction: usize,
    ) -> Tensor<D> {
        self.weighted_variance(data, weights, correction).sqrt()
    }
    /// [`segment_count_nonzero`](crate::segment_count_nonzero): `[E, ...] -> [N, ...]` Int.
    fn count_nonzero<const D: usize, K: SegmentKind>(&self, data: Tensor<D, K>) -> Tensor<D, Int> {
        crate::statistics::count_nonzero(self, data)
    }
    /// [`segment_any`](crate::segment_any): `[E, ...]` Bool -> `[N, ...]` Bool, empty false.
    fn any<const D: usize>(&self, data: Tensor<D, Bool>) -> Tensor<D, Bool> {
        crate::statistics::any(self, data)
    }
    /// [`segment_all`](crate::segment_all): `[E, ...]` Bool -> `[N, ...]` Bool, empty true.
    fn all<const D: usize>(&self, data: Tensor<D, Bool>) -> Tensor<D, Bool> {
        crate::statistics::all(self, data)
    }
    /// [`segment_normalize`](crate::segment_normalize): `[E, ...] -> [E, ...]`.
    fn normalize<const D: usize>(&self, data: Tensor<D>, eps: f64) -> Tensor<D> {
        let (centered, var) = centered(self, data);
        centered / self.gather((var + eps).sqrt())
    }
    /// The `k` largest (`largest`) or smallest rows of each segment, per column, in order:
    /// values `[N, k, C]` and their rows `[N, k, C]` (the ids' dtype). Ties go to the smaller
    /// row; NaN orders above every number (first among the largest, last among the smallest);
    /// a segment of fewer than `k` rows is filled with `-inf` (largest) or `+inf` and row -1.
    /// Gradients reach the selected rows. One backend op chooses the rows: on wgpu a kernel for
    /// `k ≤ 32` over sorted ids or a plan, elsewhere a host kernel (one read of the data and
    /// the ids: a device sync on a GPU); tracked values are gathered on the data's device.
    fn topk(&self, data: Tensor<2>, k: usize, largest: bool) -> (Tensor<3>, Tensor<3, Int>) {
        crate::topk::topk(self, data, k, largest)
    }
    /// [`segment_quantile`](crate::segment_quantile): `[E, ...] -> [N, ...]`.
    ///
    /// # Errors
    /// [`SegmentError::QuantileOutOfRange`](crate::SegmentError::QuantileOutOfRange) unless
    /// `0 ≤ q ≤ 1`.
    fn quantile<const D: usize>(
        &self,
        data: Tensor<D>,
        q: f64,
        interpolation: crate::QuantileInterpolation,
    ) -> Result<Tensor<D>, crate::SegmentError> {
        crate::quantile::quantile(self, data, q, interpolation)
    }
    /// [`segment_median`](crate::segment_median): `[E, ...] -> [N, ...]`.
    fn median<const D: usize>(&self, data: Tensor<D>) -> Tensor<D> {
        crate::quantile::median(self, data)
    }
    /// The ops over the entries `mask` leaves eligible (see [`Masked`](crate::Masked)): `mask` is
    /// `[E]` (per row) or the data's shape. `plan.masked(mask).sum(x)`.
    ///
    /// # Panics
    /// If `mask` does not have one row per id.
    fn masked<const M: usize>(&self, mask: Tensor<M, Bool>) -> crate::Masked<'_, Self, M> {
        crate::Masked::new(self, mask)
    }
}

impl<S: Segments + ?Sized> SegmentStatistics for S {}
