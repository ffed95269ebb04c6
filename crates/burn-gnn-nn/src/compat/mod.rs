//! Workarounds for Burn 0.22, in one place. Each says what upstream does, why that does not
//! serve here, and how to tell when the workaround can go.

pub(crate) mod dropout;

use burn::tensor::Tensor;
use burn::tensor::activation::relu;

/// A `[0, width]` output for an input without rows, like `like`.
///
/// Upstream: on Burn 0.22's wgpu backend (through Fusion), filling a zero-size tensor
/// (`Tensor::zeros([0, w])`, or a matmul with no rows) corrupts results still pending in the
/// same stream (seen with a node type without nodes in a heterogeneous batch). `empty` launches
/// nothing. Can go when `tests/suite/hetero.rs` passes on wgpu with `zeros` here.
pub(crate) fn no_rows(width: usize, like: &Tensor<2>) -> Tensor<2> {
    Tensor::empty([0, width], (&like.device(), like.dtype()))
}

/// ELU (`α = 1`) from branch-free element-wise ops: `(x + m) + (exp(-m) - 1)` with
/// `m = relu(-x)`.
///
/// Upstream: Burn 0.22's `elu` selects through `mask_where`, whose Flex kernel branches per
/// element (about every other activation mispredicted), once forward and twice backward; GAT's
/// epoch is measurably slower with it (gnn bench). Same values as Burn's for finite `x`, the
/// exact derivative (1 at 0), NaN for `-inf` (Burn's gives -1). Can go when `elu` on Flex is as
/// fast as this in the gnn bench.
pub(crate) fn elu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    let m = relu(x.clone().neg());
    (x + m.clone()) + (m.neg().exp() - 1.0)
}

#[cfg(test)]
mod tests {
    use burn::tensor::activation::elu;
    use burn::tensor::{Tensor, TensorData};

    #[test]
    fn branch_free_elu_equals_burns_elu_with_the_exact_derivative() {
        let device = burn::tensor::Device::flex().autodiff();
        let xs: Vec<f32> = vec![
            -90.0, -20.0, -3.5, -1.0, -1e-7, -0.0, 0.0, 1e-7, 0.5, 3.0, 1e30,
        ];
        let n = xs.len();
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), [1, n]), &device).require_grad();
        let ours = super::elu(x.clone());
        let burns = elu(x.clone(), 1.0);
        let (a, b): (Vec<f32>, Vec<f32>) = (
            ours.to_data().try_to_vec::<f32>().unwrap(),
            burns.to_data().try_to_vec::<f32>().unwrap(),
        );
        for k in 0..n {
            assert_eq!(a[k], b[k], "elu({})", xs[k]);
        }
        let grads = ours.sum().backward();
        let g: Vec<f32> = x
            .grad(&grads)
            .unwrap()
            .to_data()
            .try_to_vec::<f32>()
            .unwrap();
        for k in 0..n {
            // ELU' is 1 for x >= 0 (continuous at 0 for α = 1) and exp(x) below.
            let want = if xs[k] >= 0.0 {
                1.0
            } else {
                (xs[k] as f64).exp() as f32
            };
            assert!(
                (g[k] - want).abs() <= 1e-6 * want.max(1.0),
                "elu'({}) = {} not {want}",
                xs[k],
                g[k]
            );
        }
        let nan = super::elu(Tensor::<2>::from_data(
            TensorData::new(vec![f32::NAN], [1, 1]),
            &device,
        ));
        assert!(nan.into_scalar::<f32>().is_nan());
    }
}
