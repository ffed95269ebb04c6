//! The CPU backends' dense products of a linear layer (`x · W` and `xᵀ · g`), split across
//! threads by the shapes alone (see `kernels::linear`).

use burn::tensor::DType;

use super::kernels::{self, Elem};
use super::tensor::{CpuElem, CpuTensor};

/// `x · w` for `x: [rows, d_in]` and `w: [d_in, d_out]`; `fallback` (the composite) for dtypes
/// other than f32 and f64.
pub(crate) fn linear_op<T: CpuTensor>(x: T, w: T, fallback: impl FnOnce(T, T) -> T) -> T {
    fn go<E: CpuElem + Elem, T: CpuTensor>(x: T, w: T) -> T {
        let (rows, d_in, d_out) = (x.shape()[0], x.shape()[1], w.shape()[1]);
        let out = kernels::linear(
            T::ALLOC,
            &x.values::<E>(),
            &w.values::<E>(),
            (rows, d_in, d_out),
        );
        T::from_out(out, [rows, d_out].into())
    }
    match (x.dtype(), w.dtype()) {
        (DType::F32, DType::F32) => go::<f32, T>(x, w),
        (DType::F64, DType::F64) => go::<f64, T>(x, w),
        _ => fallback(x, w),
    }
}

/// `xᵀ · grad` for `x: [rows, d_in]` and `grad: [rows, d_out]`; `fallback` (the composite) for
/// dtypes other than f32 and f64.
pub(crate) fn linear_weight_backward_op<T: CpuTensor>(
    x: T,
    grad: T,
    fallback: impl FnOnce(T, T) -> T,
) -> T {
    fn go<E: CpuElem + Elem, T: CpuTensor>(x: T, grad: T) -> T {
        let (rows, d_in, d_out) = (x.shape()[0], x.shape()[1], grad.shape()[1]);
        let (x, g) = (x.values::<E>(), grad.values::<E>());
        let out = kernels::linear_weight_grad(T::ALLOC, &x, &g, (rows, d_in, d_out));
        T::from_out(out, [d_in, d_out].into())
    }
    match (x.dtype(), grad.dtype()) {
        (DType::F32, DType::F32) => go::<f32, T>(x, grad),
        (DType::F64, DType::F64) => go::<f64, T>(x, grad),
        _ => fallback(x, grad),
    }
}
