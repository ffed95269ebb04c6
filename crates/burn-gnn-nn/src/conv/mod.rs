//! Convolution layers, one file each.

pub mod gat;
pub mod gcn;
pub mod gin;
pub mod sage;

use burn::module::Param;
use burn::tensor::{Device, Tensor};

/// Glorot (Xavier) uniform initialisation, PyG's `glorot`: `U(-a, a)`, `a = sqrt(6 / (fan_in + fan_out))`.
pub(crate) fn glorot<const D: usize>(
    shape: [usize; D],
    fan_in: usize,
    fan_out: usize,
    device: &Device,
) -> Param<Tensor<D>> {
    burn::nn::Initializer::XavierUniform { gain: 1.0 }.init_with(
        shape,
        Some(fan_in),
        Some(fan_out),
        device,
    )
}

/// A zero-initialised parameter.
pub(crate) fn zeros<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    burn::nn::Initializer::Zeros.init(shape, device)
}
