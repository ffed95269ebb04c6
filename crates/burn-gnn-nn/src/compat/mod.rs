//! Workarounds for Burn 0.22, in one place. Each says what upstream does, why that does not
//! serve here, and how to tell when the workaround can go.

pub(crate) mod dropout;

use burn::tensor::Tensor;

/// A `[0, width]` output for an input without rows, like `like`.
///
/// Upstream: on Burn 0.22's wgpu backend (through Fusion), filling a zero-size tensor
/// (`Tensor::zeros([0, w])`, or a matmul with no rows) corrupts results still pending in the
/// same stream (seen with a node type without nodes in a heterogeneous batch). `empty` launches
/// nothing. Can go when `tests/suite/hetero.rs` passes on wgpu with `zeros` here.
pub(crate) fn no_rows(width: usize, like: &Tensor<2>) -> Tensor<2> {
    Tensor::empty([0, width], (&like.device(), like.dtype()))
}

/// `lin.forward(x)` through [`burn_segment::linear`].
///
/// Upstream: Burn 0.22's Flex hands a layer's products to the gemm crate whole, which splits a
/// product with a narrow output (`[N, 64] · [64, 64]`, a `64 × 64` weight gradient over `N`
/// rows) poorly across threads. Can go when `nn::Linear` on Flex is as fast as this in the
/// `layer_parts` bench (`product/*` against `sage/step`).
pub(crate) fn linear<const D: usize>(lin: &burn::nn::Linear, x: Tensor<D>) -> Tensor<D> {
    burn_segment::linear(x, lin.weight.val(), lin.bias.as_ref().map(|b| b.val()))
}
