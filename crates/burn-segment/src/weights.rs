//! [`SegmentWeights`]: nonnegative row weights, checked once, for the weighted statistics.

use burn::tensor::Tensor;

use crate::SegmentError;

/// Row weights `[E]` of the weighted statistics ([`SegmentStatistics::weighted_mean`](crate::SegmentStatistics::weighted_mean),
/// `weighted_variance`, `weighted_std`), checked once to be finite and nonnegative, as a
/// [`SegmentPlan`](crate::SegmentPlan) checks its ids once: build it where the weights are fixed
/// (a graph's edge weights) and reuse it. Gradients flow to the weights if they require them.
#[derive(Clone, Debug)]
pub struct SegmentWeights {
    weights: Tensor<1>,
}

impl SegmentWeights {
    /// Checks `weights` (reading them to the host: one device sync).
    ///
    /// # Errors
    /// [`SegmentError::BadWeight`] naming the first weight that is negative, NaN or infinite.
    pub fn new(weights: Tensor<1>) -> Result<Self, SegmentError> {
        let values = weights.clone().into_data();
        for (position, weight) in values.iter::<f64>().enumerate() {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(SegmentError::BadWeight { position, weight });
            }
        }
        Ok(Self { weights })
    }

    /// `weights` without a check (no device sync), for weights that change at every step
    /// (learnt ones) and are nonnegative by construction (a softplus, an exponential). With a
    /// negative or non-finite weight the statistics are unspecified.
    pub fn new_unchecked(weights: Tensor<1>) -> Self {
        Self { weights }
    }

    /// The weights, `[E]`.
    pub fn weights(&self) -> &Tensor<1> {
        &self.weights
    }
}
