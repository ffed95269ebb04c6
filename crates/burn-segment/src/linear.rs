//! A linear layer's product as one op, so that the CPU backends can split it across threads.

use burn::backend::Dispatch;
use burn::tensor::Tensor;

use crate::DenseBackend;

/// A linear layer, `y = x · weight + bias`, as Burn's `nn::Linear` computes it (the weight is
/// `[d_input, d_output]`, not transposed as in PyTorch).
///
/// The same values as Burn's `linear` up to the products' rounding. On the CPU backends both
/// products of a training step (`x · weight` forward, `xᵀ · grad` for the weight's gradient)
/// run through the gemm crate in parts chosen from the shapes alone (rows for the forward
/// product, the summed rows for the weight gradient), so their bits do not depend on the
/// number of threads; elsewhere Burn's own `linear`.
///
/// # Shapes
/// - `x`: `[..., d_input]`
/// - `weight`: `[d_input, d_output]`
/// - `bias`: `[d_output]`
/// - output: `[..., d_output]`
///
/// # Panics
/// If `x`'s last dimension is not `weight`'s first, or `bias` is not `[d_output]`.
pub fn linear<const D: usize>(
    x: Tensor<D>,
    weight: Tensor<2>,
    bias: Option<Tensor<1>>,
) -> Tensor<D> {
    let dims = x.dims();
    let [d_input, d_output] = weight.dims();
    assert!(
        D > 0 && dims[D - 1] == d_input,
        "burn-segment: linear needs x of shape [..., {d_input}] for a [{d_input}, {d_output}] \
         weight, got {dims:?}"
    );
    if let Some(b) = &bias {
        assert_eq!(
            b.dims(),
            [d_output],
            "burn-segment: linear needs a bias of shape [{d_output}]"
        );
    }
    let rows = dims[..D - 1].iter().product();
    let x = x.reshape([rows, d_input]).into_dispatch();
    let mut y = Tensor::<2>::from_dispatch(Dispatch::float_linear(x, weight.into_dispatch()));
    if let Some(b) = bias {
        y = y + b.unsqueeze::<2>();
    }
    let mut out_dims = dims;
    out_dims[D - 1] = d_output;
    y.reshape(out_dims)
}
