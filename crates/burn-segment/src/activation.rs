//! ELU as one op: GAT's activation, fused with its derivative.

use burn::backend::Dispatch;
use burn::tensor::Tensor;

use crate::DenseBackend;

/// ELU (Clevert et al., <https://arxiv.org/abs/1511.07289>), element-wise:
///
/// `elu(x) = x` where `x > 0`, `alpha · (e^x − 1)` elsewhere,
///
/// with the gradient `1` where `x > 0` and `alpha · e^x` elsewhere (`alpha` at 0). Values as
/// Burn's `activation::elu` (`-inf` gives `-alpha`, NaN stays NaN, with a NaN gradient). On the
/// CPU backends one pass each way, in place where the buffer is free, with `e^x − 1` within
/// 1 ulp of the correctly rounded value in f32 (Burn's `exp(x) − 1` loses all relative accuracy
/// as `x` nears 0, so the two differ there in the last bits); elsewhere Burn's composition.
///
/// # Shapes
/// Any; the output has `x`'s.
///
/// # Panics
/// If `alpha` is not positive and finite.
pub fn elu<const D: usize>(x: Tensor<D>, alpha: f64) -> Tensor<D> {
    assert!(
        alpha > 0.0 && alpha.is_finite(),
        "burn-segment: elu needs a positive, finite alpha, got {alpha}"
    );
    Tensor::from_dispatch(Dispatch::float_elu(x.into_dispatch(), alpha))
}
