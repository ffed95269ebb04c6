//! [`DenseBackend`]: the dense helpers the layers need kernels for, which are not segment ops
//! (GAT's ELU, a linear layer's product), as their own backend extension beside
//! [`SegmentBackend`](crate::SegmentBackend), the way Burn splits `Backend` into
//! `FloatTensorOps`, `ActivationOps`, ...

use burn::backend::{Backend, backend_extension, tensor::FloatTensor};
#[cfg(feature = "cube")]
use burn::tensor::Shape;

use crate::composite;

/// Dense kernels the layers call through [`elu`](crate::elu) and [`linear`](crate::linear):
/// each method has a composite default built from Burn primitives; the CPU backends override
/// them, and `Autodiff` gives them hand-written backward passes.
#[backend_extension(
    Autodiff,
    NdArray,
    Flex,
    Cube: cfg(feature = "cube"),
    Fusion: cfg(feature = "cube")
)]
pub trait DenseBackend: Backend {
    /// ELU, element-wise: `x` where `x > 0`, `alpha · (e^x − 1)` elsewhere; any shape. Not a
    /// segment op: GAT's activation, a kernel here because Burn 0.22 composes it from a masked
    /// select (a branch per element on Flex) and five more element-wise ops with their backward.
    #[fusion(dtype = x, shape = x)]
    fn float_elu(x: FloatTensor<Self>, alpha: f64) -> FloatTensor<Self> {
        composite::elu::<Self>(x, alpha)
    }

    /// The gradient of [`float_elu`](Self::float_elu)'s input `x` from the output's gradient:
    /// `grad` where `x > 0`, `grad · alpha · e^x` elsewhere.
    #[fusion(dtype = grad, shape = grad)]
    fn float_elu_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        alpha: f64,
    ) -> FloatTensor<Self> {
        composite::elu_backward::<Self>(x, grad, alpha)
    }

    /// A linear layer's product `x · weight` for `x: [rows, d_input]` and
    /// `weight: [d_input, d_output]`. Not a segment op: a kernel here because Burn 0.22's CPU
    /// matmul splits a product with a narrow output poorly across threads.
    #[fusion(dtype = x, shape = Shape::new([x[0], weight[1]]))]
    fn float_linear(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        composite::linear::<Self>(x, weight)
    }

    /// The gradient of [`float_linear`](Self::float_linear)'s weight from the output's
    /// gradient: `xᵀ · grad`, `[d_input, d_output]`.
    #[fusion(dtype = x, shape = Shape::new([x[1], grad[1]]))]
    fn float_linear_weight_backward(
        x: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        composite::linear_weight_backward::<Self>(x, grad)
    }
}
