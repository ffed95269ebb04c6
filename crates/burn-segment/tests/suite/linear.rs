//! `linear` on every backend: values and gradients against f64 references, within the rounding
//! bound of a sum of products in any order; shapes that take every CPU path (one call, parts
//! of rows, gemm's own split, the weight gradient's partial sums), empty ones and a 3-d input.

#![allow(deprecated)] // NdArray: deprecated in Burn 0.22, still supported (the composite path).

use burn::backend::NdArray;
use burn::tensor::{DType, Tensor};
use burn_segment::composite;

use crate::common::*;

/// `[rows, d_input] → d_output` cases: one call; split rows (and a weight gradient in parts);
/// a weight gradient whose partials are summed in parallel chunks; a weight past the split's
/// size (gemm's own split); no rows; no input features.
const SHAPES: [(usize, usize, usize); 6] = [
    (7, 5, 3),
    (3000, 64, 64),
    (300, 128, 256),
    (40, 300, 256),
    (0, 4, 3),
    (6, 0, 2),
];

/// Values in [-1, 1), exact in f32, from a seed.
pub fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f64 / (1u64 << 24) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// `a · b` for row-major `a: [m, k]`, `b: [k, n]` in f64, and `|a| · |b|` (the rounding bound's
/// scale).
fn matmul_ref(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize)) -> (Vec<f64>, Vec<f64>) {
    let (mut out, mut scale) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                out[i * n + j] += a[i * k + p] * b[p * n + j];
                scale[i * n + j] += (a[i * k + p] * b[p * n + j]).abs();
            }
        }
    }
    (out, scale)
}

fn transpose(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    (0..cols * rows)
        .map(|i| a[(i % rows) * cols + i / rows])
        .collect()
}

/// Asserts `got` within `(k + 2) · ε · scale` of `want`: the error bound of a sum of `k` products
/// in any order, plus the bias's addition.
#[track_caller]
fn assert_within(what: &str, got: &[f64], want: &[f64], scale: &[f64], k: usize, dtype: DType) {
    let eps = match dtype {
        DType::F64 => f64::EPSILON,
        _ => f32::EPSILON as f64,
    };
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, ((&g, &w), &s)) in got.iter().zip(want).zip(scale).enumerate() {
        let bound = (k + 2) as f64 * eps * s + 1e-300;
        assert!(
            (g - w).abs() <= bound,
            "{what}: element {i}: got {g}, want {w} (bound {bound})"
        );
    }
}

/// `linear` through `target`'s path.
fn linear(target: &Target, x: Tensor<2>, w: Tensor<2>, b: Option<Tensor<1>>) -> Tensor<2> {
    match target.path {
        Path::Composite => {
            let y = Tensor::from_primitive::<NdArray>(composite::linear::<NdArray>(nd(x), nd(w)));
            match b {
                Some(b) => y + b.unsqueeze(),
                None => y,
            }
        }
        _ => burn_segment::linear(x, w, b),
    }
}

fn dtypes(target: &Target) -> Vec<DType> {
    match target.f64() {
        true => vec![DType::F32, DType::F64],
        false => vec![DType::F32],
    }
}

/// Whether `target` runs a shape: not one with no rows or no input features on wgpu and
/// NdArray's composite (Burn's matmul divides by zero there), and on wgpu (Burn's own matmul,
/// slow on lavapipe) only the small one, since the larger ones exist for the CPU kernels' paths.
fn runs(target: &Target, (rows, d_in, d_out): (usize, usize, usize)) -> bool {
    match (target.is_cube(), target.path == Path::Composite) {
        (true, _) => rows > 0 && d_in > 0 && rows * d_in * d_out < 1 << 12,
        (false, true) => rows > 0 && d_in > 0,
        (false, false) => true,
    }
}

#[test]
fn linear_matches_the_f64_reference_on_every_backend() {
    for t in targets() {
        for dtype in dtypes(&t) {
            for (rows, d_in, d_out) in SHAPES.into_iter().filter(|&s| runs(&t, s)) {
                let xs = values(rows * d_in, 1);
                let ws = values(d_in * d_out, 2);
                let bs = values(d_out, 3);
                let (want, scale) = matmul_ref(&xs, &ws, (rows, d_in, d_out));
                let x = floats(&xs, [rows, d_in], &t.device, dtype);
                let w = floats(&ws, [d_in, d_out], &t.device, dtype);
                let what = format!("{} {dtype:?} [{rows}, {d_in}] → {d_out}", t.name);
                let got = read(linear(&t, x.clone(), w.clone(), None));
                assert_within(&what, &got, &want, &scale, d_in, dtype);
                let b = floats(&bs, [d_out], &t.device, dtype);
                let with_bias: Vec<f64> = want
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v + bs[i % d_out])
                    .collect();
                let scale_b: Vec<f64> = scale
                    .iter()
                    .enumerate()
                    .map(|(i, s)| s + bs[i % d_out].abs())
                    .collect();
                let got = read(linear(&t, x, w, Some(b)));
                let what = format!("{what}, bias");
                assert_within(&what, &got, &with_bias, &scale_b, d_in, dtype);
            }
        }
    }
}

#[test]
fn linear_keeps_leading_dimensions() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let (xs, ws) = (values(2 * 3 * 5, 4), values(5 * 4, 5));
        let x: Tensor<3> = f32s(&xs, [2, 3, 5], &t.device);
        let w = f32s(&ws, [5, 4], &t.device);
        let y = burn_segment::linear(x, w, None);
        assert_eq!(y.dims(), [2, 3, 4], "{}", t.name);
        let (want, scale) = matmul_ref(&as_f32(&xs), &as_f32(&ws), (6, 5, 4));
        assert_within(t.name, &read(y), &want, &scale, 5, DType::F32);
    }
}

#[test]
fn linear_gradients_match_the_f64_reference_on_every_autodiff_backend() {
    for t in autodiff_targets() {
        for dtype in dtypes(&t) {
            for (rows, d_in, d_out) in SHAPES.into_iter().filter(|&s| runs(&t, s)) {
                let (xs, ws) = (values(rows * d_in, 6), values(d_in * d_out, 7));
                let (bs, cs) = (values(d_out, 8), values(rows * d_out, 9));
                // d/dx of Σ c ⊙ (x·W + b) is c·Wᵀ, d/dW is xᵀ·c, d/db the column sums of c.
                let (dx, dx_scale) =
                    matmul_ref(&cs, &transpose(&ws, d_in, d_out), (rows, d_out, d_in));
                let (dw, dw_scale) =
                    matmul_ref(&transpose(&xs, rows, d_in), &cs, (d_in, rows, d_out));
                let db: Vec<f64> = (0..d_out)
                    .map(|j| (0..rows).map(|i| cs[i * d_out + j]).sum())
                    .collect();
                let db_scale: Vec<f64> = (0..d_out)
                    .map(|j| (0..rows).map(|i| cs[i * d_out + j].abs()).sum())
                    .collect();
                // Each of x and W tracked alone, then both (the backward keeps only what the
                // tracked side's gradient needs).
                for (track_x, track_w) in [(true, false), (false, true), (true, true)] {
                    let mut x = floats(&xs, [rows, d_in], &t.device, dtype);
                    let mut w = floats(&ws, [d_in, d_out], &t.device, dtype);
                    if track_x {
                        x = x.require_grad();
                    }
                    if track_w {
                        w = w.require_grad();
                    }
                    let b = floats(&bs, [d_out], &t.device, dtype).require_grad();
                    let c = floats(&cs, [rows, d_out], &t.device, dtype);
                    let y = linear(&t, x.clone(), w.clone(), Some(b.clone()));
                    let grads = (y * c).sum().backward();
                    let what = format!("{} {dtype:?} [{rows}, {d_in}] → {d_out}", t.name);
                    if track_x {
                        let got = read(x.grad(&grads).expect("x is tracked"));
                        assert_within(&format!("{what}: dx"), &got, &dx, &dx_scale, d_out, dtype);
                    }
                    if track_w {
                        let got = read(w.grad(&grads).expect("w is tracked"));
                        assert_within(&format!("{what}: dW"), &got, &dw, &dw_scale, rows, dtype);
                    }
                    let got = read(b.grad(&grads).expect("b is tracked"));
                    assert_within(&format!("{what}: db"), &got, &db, &db_scale, rows, dtype);
                }
            }
        }
    }
}

#[test]
#[should_panic(expected = "linear needs x of shape [..., 4]")]
fn linear_rejects_mismatched_shapes() {
    let device = burn::tensor::Device::flex();
    let x = f32s(&values(6, 1), [2, 3], &device);
    let _ = burn_segment::linear(x, f32s(&values(8, 2), [4, 2], &device), None);
}
