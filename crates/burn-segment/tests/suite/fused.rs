//! The fused ops (`spmm`, `sddmm`) against the f64 reference on every backend, their gradients
//! against central finite differences, and their errors.

use burn::tensor::{DType, Int, Tensor};
use burn_segment::reference::{attention_softmax_reference, sddmm_reference, spmm_reference};
use burn_segment::{SegmentPlan, Segments};

use crate::common::*;

const N_SRC: usize = 7;
const N: usize = 5;
const D: usize = 6;

/// A small multigraph: 23 edges, receiver 3 without edges, repeated (sender, receiver) pairs,
/// in receiver-sorted or shuffled order.
fn edges(sorted: bool) -> (Vec<i64>, Vec<i64>) {
    let mut pairs: Vec<(i64, i64)> = (0..23)
        .map(|k| (((k * 5 + 3) % N_SRC) as i64, [0, 1, 2, 4][(k * 7 + 1) % 4]))
        .collect();
    if sorted {
        pairs.sort_by_key(|p| p.1);
    }
    pairs.into_iter().unzip()
}

fn values(n: usize, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|k| ((k * 37 + salt * 11 + 5) % 101) as f64 / 25.0 - 2.0)
        .collect()
}

fn precision(t: &Target) -> (DType, f64) {
    if t.f64() {
        (DType::F64, 1e-12)
    } else {
        (DType::F32, 1e-5)
    }
}

#[test]
fn spmm_matches_the_reference() {
    for t in targets() {
        let (dtype, tol) = precision(&t);
        let dev = &t.device;
        for (sorted, heads, weighted, i32_ids) in [
            (true, 1, false, false),
            (false, 1, true, true),
            (true, 3, true, false),
            (false, 2, true, false),
        ] {
            let (s, r) = edges(sorted);
            let e = s.len();
            let x0 = values(N_SRC * D, 1);
            let w0 = if weighted {
                values(e * heads, 2)
            } else {
                vec![1.0; e]
            };
            let x = floats(&x0, [N_SRC, D], dev, dtype);
            let w = weighted.then(|| floats(&w0, [e, heads], dev, dtype));
            let got = read(spmm(
                &t,
                x,
                ids(&s, dev, i32_ids),
                ids(&r, dev, i32_ids),
                w,
                N,
            ));
            let want = spmm_reference(&x0, D, &w0, heads, &s, &r, N);
            let what = format!(
                "{} spmm (sorted {sorted}, heads {heads}, weighted {weighted})",
                t.name
            );
            assert_close(&what, &got, &want, tol, tol);
            // Receiver 3 has no edges: exactly 0.
            assert!(
                got[3 * D..4 * D].iter().all(|&v| v == 0.0),
                "{what}: empty receiver"
            );
        }
    }
}

#[test]
fn sddmm_matches_the_reference() {
    for t in targets() {
        let (dtype, tol) = precision(&t);
        let dev = &t.device;
        for heads in [1, 2, 3] {
            let (s, r) = edges(false);
            let (a0, b0) = (values(N_SRC * D, 3), values(N * D, 4));
            let got = read(sddmm(
                &t,
                floats(&a0, [N_SRC, D], dev, dtype),
                floats(&b0, [N, D], dev, dtype),
                ids(&s, dev, false),
                ids(&r, dev, true),
                heads,
            ));
            let want = sddmm_reference(&a0, &b0, D, heads, &s, &r);
            assert_close(
                &format!("{} sddmm heads {heads}", t.name),
                &got,
                &want,
                tol,
                tol,
            );
        }
    }
}

/// `Σ out · c` with fixed coefficients `c`: a scalar whose gradient reaches every output.
fn loss(out: Tensor<2>) -> Tensor<1> {
    let n = out.shape().num_elements();
    let c: Vec<f64> = (0..n)
        .map(|k| ((k * 13 + 5) % 17) as f64 / 8.0 - 1.0)
        .collect();
    let c = Tensor::<1>::from_data(
        burn::tensor::TensorData::new(c, [n]),
        (&out.device(), out.dtype()),
    );
    (out.reshape([n]) * c).sum()
}

/// Gradients of `op(p, q)` for both inputs against central differences on every autodiff target.
fn check_two(
    name: &str,
    (p0, p_shape): (&[f64], [usize; 2]),
    (q0, q_shape): (&[f64], [usize; 2]),
    op: impl Fn(Tensor<2>, Tensor<2>) -> Tensor<2>,
) {
    for t in autodiff_targets() {
        let dev = &t.device;
        let (dtype, h, tol) = if t.f64() {
            (DType::F64, 1e-6, 1e-6)
        } else {
            (DType::F32, 1e-2, 2e-2)
        };
        let p = floats(p0, p_shape, dev, dtype).require_grad();
        let q = floats(q0, q_shape, dev, dtype).require_grad();
        let grads = loss(op(p.clone(), q.clone())).backward();
        let analytic = [
            read(p.grad(&grads).expect("a gradient for p")),
            read(q.grad(&grads).expect("a gradient for q")),
        ];
        let eval = |ps: &[f64], qs: &[f64]| {
            read(loss(op(
                floats(ps, p_shape, dev, dtype),
                floats(qs, q_shape, dev, dtype),
            )))[0]
        };
        for (which, base) in [p0, q0].into_iter().enumerate() {
            let numeric: Vec<f64> = (0..base.len())
                .map(|i| {
                    let (mut plus, mut minus) = (base.to_vec(), base.to_vec());
                    plus[i] += h;
                    minus[i] -= h;
                    let (fp, fm) = if which == 0 {
                        (eval(&plus, q0), eval(&minus, q0))
                    } else {
                        (eval(p0, &plus), eval(p0, &minus))
                    };
                    (fp - fm) / (2.0 * h)
                })
                .collect();
            assert_close(
                &format!("{} {name} gradient {}", t.name, ["p", "q"][which]),
                &analytic[which],
                &numeric,
                tol,
                tol / 10.0,
            );
        }
    }
}

#[test]
fn spmm_gradients_match_finite_differences() {
    for (sorted, heads, planned) in [(true, 1, false), (false, 3, false), (false, 3, true)] {
        let (s, r) = edges(sorted);
        let e = s.len();
        let (x0, w0) = (values(N_SRC * D, 5), values(e * heads, 6));
        check_two(
            &format!("spmm sorted {sorted} heads {heads} planned {planned}"),
            (&x0, [N_SRC, D]),
            (&w0, [e, heads]),
            |x, w| {
                let dev = x.device();
                let (s, r) = (ids(&s, &dev, false), ids(&r, &dev, false));
                match planned {
                    true => SegmentPlan::spmm(x, &plan(s, N_SRC), &plan(r, N), Some(w)),
                    false => burn_segment::spmm(x, s, r, Some(w), N),
                }
            },
        );
    }
}

#[test]
fn sddmm_gradients_match_finite_differences() {
    let (s, r) = edges(false);
    let (a0, b0) = (values(N_SRC * D, 7), values(N * D, 8));
    for planned in [false, true] {
        let name = format!("sddmm heads 2 planned {planned}");
        check_two(&name, (&a0, [N_SRC, D]), (&b0, [N, D]), |a, b| {
            let dev = a.device();
            let (ai, bi) = (ids(&s, &dev, true), ids(&r, &dev, false));
            match planned {
                true => SegmentPlan::sddmm(a, b, &plan(ai, N_SRC), &plan(bi, N), 2),
                false => burn_segment::sddmm(a, b, ai, bi, 2),
            }
        });
    }
}

#[test]
fn spmm_equals_gather_then_segment_sum() {
    // The unfused path the layers used before, on the CPU kernels: bitwise equal for sorted
    // receivers (same per-receiver order of additions).
    let dev = &burn::tensor::Device::flex();
    let (s, r) = edges(true);
    let x = floats(&values(N_SRC * D, 9), [N_SRC, D], dev, DType::F32);
    let w = floats(&values(s.len(), 10), [s.len(), 1], dev, DType::F32);
    let (si, ri): (Tensor<1, Int>, Tensor<1, Int>) = (ids(&s, dev, false), ids(&r, dev, false));
    let fused = read(burn_segment::spmm(
        x.clone(),
        si.clone(),
        ri.clone(),
        Some(w.clone()),
        N,
    ));
    let unfused = read(burn_segment::segment_sum(x.select(0, si) * w, ri, N));
    assert_eq!(fused, unfused);
}

#[test]
#[should_panic(expected = "sender index 7 at position 0 is out of range for 7 rows")]
fn spmm_names_an_out_of_range_sender_on_the_cpu() {
    let dev = &burn::tensor::Device::flex();
    let x = floats(&values(N_SRC * D, 1), [N_SRC, D], dev, DType::F32);
    let _ = burn_segment::spmm(
        x,
        ids(&[7, 0], dev, false),
        ids(&[0, 1], dev, false),
        None,
        N,
    );
}

#[test]
#[should_panic(expected = "weights must be [E = 2, H] with H ≥ 1 dividing D = 6")]
fn spmm_rejects_weights_of_the_wrong_shape() {
    let dev = &burn::tensor::Device::flex();
    let x = floats(&values(N_SRC * D, 1), [N_SRC, D], dev, DType::F32);
    let w = floats(&[1.0; 8], [2, 4], dev, DType::F32);
    let _ = burn_segment::spmm(
        x,
        ids(&[1, 0], dev, false),
        ids(&[0, 1], dev, false),
        Some(w),
        N,
    );
}

/// Edge biases for the attention tests: `[E, width]`, with edge 4 masked (`-inf`) when asked.
fn attention_bias(e: usize, width: usize, masked: bool) -> Vec<f64> {
    let mut b = values(e * width, 12);
    if masked {
        b[4 * width..5 * width]
            .iter_mut()
            .for_each(|v| *v = f64::NEG_INFINITY);
    }
    b
}

#[test]
fn attention_softmax_matches_the_reference() {
    const H: usize = 3;
    for t in targets() {
        let (dtype, tol) = precision(&t);
        let dev = &t.device;
        for (sorted, bias_width, masked, slope, i32_ids) in [
            (true, 0, false, 0.2, false),
            (false, 1, true, 0.2, true),
            (true, H, true, 0.0, false),
            (false, H, false, -0.5, false),
        ] {
            let (s, r) = edges(sorted);
            let e = s.len();
            let (src0, dst0) = (values(N_SRC * H, 13), values(N * H, 14));
            let b0 = if bias_width == 0 {
                vec![0.0; e]
            } else {
                attention_bias(e, bias_width, masked)
            };
            let bias = (bias_width > 0).then(|| floats(&b0, [e, bias_width], dev, dtype));
            let got = read(attention(
                &t,
                floats(&src0, [N_SRC, H], dev, dtype),
                floats(&dst0, [N, H], dev, dtype),
                ids(&s, dev, i32_ids),
                ids(&r, dev, i32_ids),
                bias,
                slope,
            ));
            let want =
                attention_softmax_reference(&src0, &dst0, H, &s, &r, &b0, bias_width.max(1), slope);
            let what = format!(
                "{} attention (sorted {sorted}, bias {bias_width}, masked {masked}, slope {slope})",
                t.name
            );
            assert_close(&what, &got, &want, tol, tol);
            if masked {
                assert!(
                    got[4 * H..5 * H].iter().all(|&v| v == 0.0),
                    "{what}: masked edge"
                );
            }
        }
    }
}

#[test]
fn attention_softmax_gradients_match_finite_differences() {
    const H: usize = 2;
    let (s, r) = edges(false);
    let e = s.len();
    let (src0, dst0) = (values(N_SRC * H, 15), values(N * H, 16));
    for bias_width in [1, H] {
        let b0 = values(e * bias_width, 17);
        // Node scores and the bias in turn, the third input fixed.
        check_two(
            &format!("attention (src, dst), bias width {bias_width}"),
            (&src0, [N_SRC, H]),
            (&dst0, [N, H]),
            |p, q| {
                let dev = p.device();
                let bias = floats(&b0, [e, bias_width], &dev, p.dtype());
                burn_segment::attention_softmax(
                    p,
                    q,
                    ids(&s, &dev, false),
                    ids(&r, &dev, true),
                    Some(bias),
                    0.2,
                )
            },
        );
        check_two(
            &format!("planned attention (src, dst), bias width {bias_width}"),
            (&src0, [N_SRC, H]),
            (&dst0, [N, H]),
            |p, q| {
                let dev = p.device();
                let bias = floats(&b0, [e, bias_width], &dev, p.dtype());
                let senders = plan(ids(&s, &dev, false), N_SRC);
                let receivers = plan(ids(&r, &dev, true), N);
                SegmentPlan::attention_softmax(p, q, &senders, &receivers, Some(bias), 0.2)
            },
        );
        check_two(
            &format!("attention (src, bias), bias width {bias_width}"),
            (&src0, [N_SRC, H]),
            (&b0, [e, bias_width]),
            |p, b| {
                let dev = p.device();
                let dst = floats(&dst0, [N, H], &dev, p.dtype());
                burn_segment::attention_softmax(
                    p,
                    dst,
                    ids(&s, &dev, false),
                    ids(&r, &dev, false),
                    Some(b),
                    0.2,
                )
            },
        );
    }
}

#[test]
fn attention_softmax_equals_the_unfused_ops_and_masks_without_nan() {
    // The kernels against the composition the layers used before, on Flex with gradients; a
    // masked edge gets weight 0 and zero gradient even with slope 0 (where `0 · -inf` is NaN).
    let dev = &burn::tensor::Device::flex().autodiff();
    let (s, r) = edges(false);
    let e = s.len();
    for slope in [0.2, 0.0] {
        let src = floats(&values(N_SRC * 2, 18), [N_SRC, 2], dev, DType::F32).require_grad();
        let dst = floats(&values(N * 2, 19), [N, 2], dev, DType::F32).require_grad();
        let mut b0 = vec![0.0; e];
        b0[4] = f64::NEG_INFINITY;
        let bias = floats(&b0, [e, 1], dev, DType::F32);
        let (si, ri): (Tensor<1, Int>, Tensor<1, Int>) = (ids(&s, dev, false), ids(&r, dev, false));
        let fused = burn_segment::attention_softmax(
            src.clone(),
            dst.clone(),
            si.clone(),
            ri.clone(),
            Some(bias),
            slope,
        );
        let raw = src.clone().select(0, si.clone()) + dst.clone().select(0, ri.clone());
        let mut keep = vec![0.0; e];
        keep[4] = f64::NEG_INFINITY;
        let logits = burn::tensor::activation::leaky_relu(raw, slope)
            + floats(&keep, [e, 1], dev, DType::F32);
        let unfused = burn_segment::segment_softmax(logits, ri, N);
        let what = format!("slope {slope}");
        assert_close(
            &what,
            &read(fused.clone()),
            &read(unfused.clone()),
            1e-6,
            1e-6,
        );
        let g1 = loss(fused).backward();
        let g2 = loss(unfused).backward();
        for (name, p) in [("src", &src), ("dst", &dst)] {
            let (a, b) = (read(p.grad(&g1).unwrap()), read(p.grad(&g2).unwrap()));
            assert!(
                a.iter().all(|v| v.is_finite()),
                "{what}: {name} gradient not finite: {a:?}"
            );
            assert_close(&format!("{what} d{name}"), &a, &b, 1e-5, 1e-5);
        }
    }
}

#[test]
#[should_panic(expected = "bias must be [E = 23, 1] or [E, H = 2], got [23, 3]")]
fn attention_softmax_rejects_a_bias_of_the_wrong_shape() {
    let dev = &burn::tensor::Device::flex();
    let (s, r) = edges(true);
    burn_segment::attention_softmax(
        floats(&values(N_SRC * 2, 1), [N_SRC, 2], dev, DType::F32),
        floats(&values(N * 2, 2), [N, 2], dev, DType::F32),
        ids(&s, dev, false),
        ids(&r, dev, false),
        Some(floats(&values(23 * 3, 3), [23, 3], dev, DType::F32)),
        0.2,
    );
}
