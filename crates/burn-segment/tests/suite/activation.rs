//! `elu` on every backend: values against an f64 reference (special values, a transposed view),
//! the gradient against the f64 derivative.

#![allow(deprecated)] // NdArray: deprecated in Burn 0.22, still supported (the composite path).

use burn::backend::NdArray;
use burn::tensor::{DType, Tensor};
use burn_segment::composite;

use crate::common::*;

/// Inputs with every branch and special value, 4 × 5.
const XS: [f64; 20] = [
    -90.0,
    -20.0,
    -3.5,
    -1.0,
    -0.3,
    -1e-3,
    -1e-7,
    -0.0,
    0.0,
    1e-7,
    0.5,
    3.0,
    1e30,
    f64::NEG_INFINITY,
    f64::INFINITY,
    f64::NAN,
    -0.75,
    2.5e-3,
    -6.0,
    7.0,
];

fn elu_ref(x: f64, alpha: f64) -> f64 {
    if x > 0.0 { x } else { alpha * x.exp_m1() }
}

fn slope_ref(x: f64, alpha: f64) -> f64 {
    if x > 0.0 { 1.0 } else { alpha * x.exp() }
}

/// `elu` through `target`'s path (a plan changes nothing for an element-wise op).
fn elu(target: &Target, x: Tensor<2>, alpha: f64) -> Tensor<2> {
    match target.path {
        Path::Composite => {
            Tensor::from_primitive::<NdArray>(composite::elu::<NdArray>(nd(x), alpha))
        }
        _ => burn_segment::elu(x, alpha),
    }
}

/// Tolerances for `dtype` on `target`: the CPU kernels' `e^x − 1` is within 1 ulp in f32;
/// Burn's `exp(x) − 1` (the composite, wgpu) is off by up to an ulp of 1 near 0.
fn tolerances(target: &Target, dtype: DType) -> (f64, f64) {
    let composed = target.path == Path::Composite || target.is_cube();
    match (dtype, composed) {
        (DType::F64, false) => (1e-15, 0.0),
        (DType::F64, true) => (1e-15, 2.3e-16),
        (_, false) => (1.2e-7, 0.0),
        (_, true) => (1e-6, 1.2e-7),
    }
}

/// [`XS`] as a tensor of `dtype` holds them.
fn inputs(dtype: DType) -> Vec<f64> {
    match dtype {
        DType::F32 => as_f32(&XS),
        _ => XS.to_vec(),
    }
}

fn dtypes(target: &Target) -> Vec<DType> {
    match target.f64() {
        true => vec![DType::F32, DType::F64],
        false => vec![DType::F32],
    }
}

#[test]
fn elu_matches_the_f64_reference_on_every_backend() {
    for t in targets() {
        for dtype in dtypes(&t) {
            let xs = inputs(dtype);
            let (rtol, atol) = tolerances(&t, dtype);
            for alpha in [1.0, 1.5] {
                let want: Vec<f64> = xs.iter().map(|&x| elu_ref(x, alpha)).collect();
                let x = floats(&xs, [4, 5], &t.device, dtype);
                let what = format!("{} {dtype:?} alpha {alpha}", t.name);
                assert_close(&what, &read(elu(&t, x.clone(), alpha)), &want, rtol, atol);
                // A transposed view: read in its logical order, whatever the layout.
                let got = read(elu(&t, x.transpose(), alpha).transpose());
                assert_close(&format!("{what}, transposed"), &got, &want, rtol, atol);
            }
        }
    }
}

#[test]
fn elu_gradient_is_the_f64_derivative_on_every_autodiff_backend() {
    for t in autodiff_targets() {
        for dtype in dtypes(&t) {
            let xs = inputs(dtype);
            let (rtol, atol) = tolerances(&t, dtype);
            let ws: Vec<f64> = (0..XS.len()).map(|i| i as f64 * 0.25 - 2.0).collect();
            for alpha in [1.0, 1.5] {
                let x = floats(&xs, [4, 5], &t.device, dtype).require_grad();
                let w = floats(&ws, [4, 5], &t.device, dtype);
                let grads = (elu(&t, x.clone(), alpha) * w).sum().backward();
                let got = read(x.grad(&grads).expect("x is tracked"));
                let want: Vec<f64> = xs
                    .iter()
                    .zip(&ws)
                    .map(|(&x, &w)| w * slope_ref(x, alpha))
                    .collect();
                // Three roundings (e^x within 2 ulp, times alpha, times the weight), and
                // subnormal products in f32.
                let (rtol, atol) = match dtype {
                    DType::F32 => (rtol.max(5e-7), atol.max(1e-38)),
                    _ => (rtol * 4.0, atol),
                };
                let what = format!("{} {dtype:?} alpha {alpha}: d elu", t.name);
                assert_close(&what, &got, &want, rtol, atol);
            }
        }
    }
}

#[test]
#[should_panic(expected = "positive, finite alpha")]
fn elu_rejects_a_non_positive_alpha() {
    let device = burn::tensor::Device::flex();
    let _ = burn_segment::elu(f32s(&[1.0], [1, 1], &device), 0.0);
}
