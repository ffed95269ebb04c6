//! Composite ELU and its gradient, from Burn primitives.

use burn::backend::{Backend, Scalar, TensorMetadata, tensor::FloatTensor};

use super::bool_dtype;

/// Composite default of [`DenseBackend::float_elu`](crate::DenseBackend::float_elu):
/// Burn's own `elu`, `alpha · (e^x − 1)` where `x ≤ 0` (NaN stays NaN).
pub fn elu<B: Backend>(x: FloatTensor<B>, alpha: f64) -> FloatTensor<B> {
    let bd = bool_dtype::<B>(&x.device());
    let negative = B::float_lower_equal_elem(x.clone(), Scalar::Float(0.0), bd);
    let em1 = B::float_sub_scalar(B::float_exp(x.clone()), Scalar::Float(1.0));
    let scaled = B::float_mul_scalar(em1, Scalar::Float(alpha));
    B::float_mask_where(x, negative, scaled)
}

/// Composite default of
/// [`DenseBackend::float_elu_backward`](crate::DenseBackend::float_elu_backward): `grad`
/// where `x > 0`, `grad · alpha · e^x` elsewhere.
pub fn elu_backward<B: Backend>(
    x: FloatTensor<B>,
    grad: FloatTensor<B>,
    alpha: f64,
) -> FloatTensor<B> {
    let bd = bool_dtype::<B>(&x.device());
    let positive = B::float_greater_elem(x.clone(), Scalar::Float(0.0), bd);
    let slope = B::float_mul_scalar(B::float_exp(x), Scalar::Float(alpha));
    let slope = B::float_mask_fill(slope, positive, Scalar::Float(1.0));
    B::float_mul(grad, slope)
}
