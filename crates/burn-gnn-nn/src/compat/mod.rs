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
