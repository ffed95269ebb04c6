//! Composite products of a linear layer: Burn's own (`ModuleOps::linear` and its weight
//! gradient).

use burn::backend::{Backend, tensor::FloatTensor};

/// Composite default of [`DenseBackend::float_linear`](crate::DenseBackend::float_linear):
/// Burn's `linear` without a bias, `x · weight`.
pub fn linear<B: Backend>(x: FloatTensor<B>, weight: FloatTensor<B>) -> FloatTensor<B> {
    B::linear(x, weight, None)
}

/// Composite default of
/// [`DenseBackend::float_linear_weight_backward`](crate::DenseBackend::float_linear_weight_backward):
/// Burn's weight gradient of `linear`, `xᵀ · grad`.
pub fn linear_weight_backward<B: Backend>(
    x: FloatTensor<B>,
    grad: FloatTensor<B>,
) -> FloatTensor<B> {
    B::linear_weight_backward(x, grad)
}
