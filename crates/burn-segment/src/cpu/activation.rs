//! The CPU backends' ELU: one pass forward and one backward (Burn 0.22 composes ELU from a
//! masked select, which Flex runs with a branch per element).

use burn::tensor::DType;

use super::kernels::{self, EluElem};
use super::tensor::{CpuElem, CpuTensor};

/// The ELU of `x`, in place where its buffer is this call's alone; `fallback` (the composite)
/// for dtypes other than f32 and f64.
pub(crate) fn elu_op<T: CpuTensor>(x: T, alpha: f64, fallback: impl FnOnce(T, f64) -> T) -> T {
    fn go<E: CpuElem + EluElem, T: CpuTensor>(mut x: T, alpha: f64) -> T {
        if let Some(values) = x.values_mut::<E>() {
            kernels::elu_in_place(values, alpha);
            return x;
        }
        let out = kernels::elu(T::ALLOC, &x.values::<E>(), alpha);
        T::from_out(out, x.shape())
    }
    match x.dtype() {
        DType::F32 => go::<f32, T>(x, alpha),
        DType::F64 => go::<f64, T>(x, alpha),
        _ => fallback(x, alpha),
    }
}

/// The gradient of the ELU's input `x` from the output's gradient `grad`, written over `grad`
/// where its buffer is this call's alone.
pub(crate) fn elu_backward_op<T: CpuTensor>(
    x: T,
    grad: T,
    alpha: f64,
    fallback: impl FnOnce(T, T, f64) -> T,
) -> T {
    fn go<E: CpuElem + EluElem, T: CpuTensor>(x: T, mut grad: T, alpha: f64) -> T {
        let values = x.values::<E>();
        if let Some(g) = grad.values_mut::<E>() {
            kernels::elu_backward_in_place(&values, g, alpha);
            return grad;
        }
        let out = kernels::elu_backward(T::ALLOC, &values, &grad.values::<E>(), alpha);
        T::from_out(out, grad.shape())
    }
    match (x.dtype(), grad.dtype()) {
        (DType::F32, DType::F32) => go::<f32, T>(x, grad, alpha),
        (DType::F64, DType::F64) => go::<f64, T>(x, grad, alpha),
        _ => fallback(x, grad, alpha),
    }
}
