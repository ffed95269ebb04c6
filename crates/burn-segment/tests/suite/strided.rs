//! Strided inputs: a row-sliced, column-sliced or transposed tensor reduces to the bits of its
//! contiguous copy on every path (the CPU kernels read the first two in place; see the
//! allocation test in `cpu::tensor`).

use burn::tensor::{Int, Tensor, TensorData};
use burn_segment::{SegmentExtreme, SegmentReduction};

use crate::common::*;

/// Values with ties, NaN and ±inf, `[rows, cols]`.
fn values(rows: usize, cols: usize) -> Vec<f64> {
    (0..rows * cols)
        .map(|i| match i * 7919 % 997 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            k => (k % 13) as f64 / 4.0 - 1.5,
        })
        .collect()
}

/// A contiguous tensor with the values of `x`.
fn copy(x: &Tensor<2>) -> Tensor<2> {
    Tensor::from_data(x.to_data(), (&x.device(), x.dtype()))
}

/// Every float op of `target` on `x`: values and arguments.
fn every_op(t: &Target, x: Tensor<2>, ids: &Tensor<1, Int>, n: usize) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    for r in [SegmentReduction::Sum, SegmentReduction::Prod] {
        out.push(read(reduce(t, x.clone(), ids.clone(), n, r)));
    }
    for e in [SegmentExtreme::Max, SegmentExtreme::Min] {
        let (v, a) = extreme(t, x.clone(), ids.clone(), n, e);
        out.push(read(v));
        out.push(read_int(a).into_iter().map(|a| a as f64).collect());
    }
    out.push(read(softmax(t, x.clone(), ids.clone(), n)));
    for op in [Derived::Mean, Derived::Logsumexp] {
        out.push(read(derived(t, op, x.clone(), ids.clone(), n)));
    }
    out
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
        .collect()
}

#[test]
fn strided_inputs_reduce_to_the_bits_of_their_contiguous_copies() {
    let (rows, cols, n) = (300, 24, 7);
    for t in targets() {
        let x = f32s(&values(rows, cols), [rows, cols], &t.device);
        let views: [(&str, Tensor<2>); 4] = [
            ("column slice", x.clone().slice([0..rows, 5..21])),
            ("one column", x.clone().slice([0..rows, 3..4])),
            ("row slice", x.clone().slice([11..rows - 9, 0..cols])),
            (
                "transposed",
                x.clone().slice([0..cols, 0..cols]).swap_dims(0, 1),
            ),
        ];
        for (what, view) in views {
            let len = view.dims()[0];
            // Unsorted ids, with segment 3 empty.
            let ids_v: Vec<i64> = (0..len as i64)
                .map(|i| [0, 2, 6, 1, 4, 5][i as usize * 5 % 6])
                .collect();
            let ids = Tensor::<1, Int>::from_data(
                TensorData::new(ids_v, [len]),
                (&t.device, burn::tensor::DType::I64),
            );
            let want = every_op(&t, copy(&view), &ids, n);
            let got = every_op(&t, view, &ids, n);
            assert!(want[0].iter().any(|v| v.is_finite() && v.fract() != 0.0));
            for (k, (got, want)) in got.iter().zip(&want).enumerate() {
                let what = format!("{}: {what}, op {k}", t.name);
                if t.is_cube() && t.path == Path::Public {
                    // wgpu's unplanned sums over unsorted ids add in the order of their atomics.
                    assert_close(&what, got, want, 1e-5, 1e-6);
                } else {
                    assert_eq!(bits(got), bits(want), "{what}");
                }
            }
        }
    }
}
