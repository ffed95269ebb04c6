//! Gradient checks: every differentiable op's backward against central finite differences in
//! f64, on every autodiff backend (with and without gradient checkpointing).

use burn::tensor::{DType, Int, Tensor};
use burn_segment as seg;
use burn_segment::{SegmentStatistics, Segments};

use crate::common::*;

const E: usize = 9;
const D: usize = 2;
/// Segment 2 is empty on purpose.
const IDS: [i64; E] = [0, 3, 1, 0, 3, 1, 1, 0, 3];
const N: usize = 4;

/// Distinct values in [-2, 2], at least 1/24 apart (no ties: max/min are differentiable).
fn values() -> Vec<f64> {
    (0..E * D)
        .map(|k| ((k * 37 + 11) % 97) as f64 / 24.0 - 2.0)
        .collect()
}

/// `sum(op(x) * w)` over the finite outputs, with fixed weights `w`.
fn loss<const O: usize>(out: Tensor<O>) -> Tensor<1> {
    let n = out.shape().num_elements();
    let w: Vec<f64> = (0..n)
        .map(|k| ((k * 13 + 5) % 17) as f64 / 8.0 - 1.0)
        .collect();
    let w = Tensor::<1>::from_data(
        burn::tensor::TensorData::new(w, [n]),
        (&out.device(), out.dtype()),
    );
    let out = out.clone().mask_fill(out.is_inf(), 0.0).reshape([n]);
    (out * w).sum()
}

/// Checks the autodiff gradient of `op` at `x0` against central differences, on every autodiff
/// target; returns the gradient of the last target for extra assertions.
fn check<const O: usize>(
    name: &str,
    x0: &[f64],
    op: impl Fn(Tensor<2>, Tensor<1, Int>) -> Tensor<O>,
) -> Vec<f64> {
    let mut last = vec![];
    for t in autodiff_targets() {
        let dev = &t.device;
        // f64 where it is trustworthy; elsewhere (wgpu) f32 with a coarser step and tolerance.
        let (dtype, h, tol) = match t.f64() {
            true => (DType::F64, 1e-6, 1e-5),
            false => (DType::F32, 1e-2, 2e-2),
        };
        let seg_ids = || ids(&IDS[..x0.len() / D], dev, false);
        let rows = x0.len() / D;
        let x = floats(x0, [rows, D], dev, dtype).require_grad();
        let grads = loss(op(x.clone(), seg_ids())).backward();
        let analytic = read(x.grad(&grads).expect("a gradient"));
        assert!(
            analytic.iter().all(|g| g.is_finite()),
            "{} {name}: non-finite gradient {analytic:?}",
            t.name
        );
        let eval = |xs: &[f64]| read(loss(op(floats(xs, [rows, D], dev, dtype), seg_ids())))[0];
        let numeric: Vec<f64> = (0..x0.len())
            .map(|i| {
                let (mut plus, mut minus) = (x0.to_vec(), x0.to_vec());
                plus[i] += h;
                minus[i] -= h;
                (eval(&plus) - eval(&minus)) / (2.0 * h)
            })
            .collect();
        assert_close(
            &format!("{} {name} gradient", t.name),
            &analytic,
            &numeric,
            tol,
            tol / 10.0,
        );
        last = analytic;
    }
    last
}

#[test]
fn sum_mean_prod() {
    check("sum", &values(), |x, i| seg::segment_sum(x, i, N));
    check("mean", &values(), |x, i| seg::segment_mean(x, i, N));
    check("prod", &values(), |x, i| seg::segment_prod(x, i, N));
}

#[test]
fn prod_gradient_is_exact_with_zeros() {
    let mut x = values();
    x[0] = 0.0; // segment 0, column 0: one zero
    x[2 * D + 1] = 0.0; // segment 1, column 1: two zeros
    x[5 * D + 1] = 0.0;
    let g = check("prod with zeros", &x, |x, i| seg::segment_prod(x, i, N));
    // Segment 1 column 1 holds two zeros: every row's product of the others is 0.
    for row in [2, 5, 6] {
        assert_eq!(g[row * D + 1], 0.0);
    }
}

#[test]
fn max_min_and_constant_variants() {
    check("max", &values(), |x, i| seg::segment_max(x, i, N));
    check("min", &values(), |x, i| seg::segment_min(x, i, N));
    check("max_or_constant", &values(), |x, i| {
        seg::segment_max_or_constant(x, i, N, 0.0)
    });
    check("min_or_constant", &values(), |x, i| {
        seg::segment_min_or_constant(x, i, N, 0.0)
    });
}

#[test]
fn max_gradient_flows_to_the_first_of_tied_rows_only() {
    for t in autodiff_targets() {
        let x = f32s(&[2.0, 5.0, 5.0, 1.0, 5.0], [5, 1], &t.device).require_grad();
        let out = seg::segment_max(x.clone(), ids(&[0, 0, 0, 1, 0], &t.device, true), 3);
        let grads = loss(out).backward();
        let g = read(x.grad(&grads).unwrap());
        assert!(g[1] != 0.0, "{}", t.name);
        assert_eq!([g[0], g[2], g[4]], [0.0; 3], "{}: {g:?}", t.name);
    }
}

#[test]
fn softmax_logsumexp() {
    check("softmax", &values(), |x, i| seg::segment_softmax(x, i, N));
    check("logsumexp", &values(), |x, i| {
        seg::segment_logsumexp(x, i, N)
    });
}

#[test]
fn logsumexp_of_only_minus_infinity_rows_is_minus_infinity_with_zero_gradient() {
    // Segment 0: column 0 only -inf, column 1 finite; segment 1: one -inf row beside a finite
    // one in each column.
    let x0 = [
        f64::NEG_INFINITY,
        0.5,
        f64::NEG_INFINITY,
        -1.0,
        f64::NEG_INFINITY,
        2.0,
        1.0,
        0.25,
    ];
    let ids_ = [0, 0, 1, 1];
    for t in autodiff_targets() {
        let dev = &t.device;
        let x = f32s(&x0, [4, D], dev).require_grad();
        let out = seg::segment_logsumexp(x.clone(), ids(&ids_, dev, false), 2);
        let got = read(out.clone());
        let l = |a: f64, b: f64| (a.exp() + b.exp()).ln();
        assert_close(
            &format!("{} logsumexp", t.name),
            &got[1..],
            &[l(0.5, -1.0), 1.0, l(2.0, 0.25)],
            1e-5,
            1e-6,
        );
        assert_eq!(got[0], f64::NEG_INFINITY, "{}", t.name);
        let grads = out.mask_fill(got_inf_mask(&got, dev), 0.0).sum().backward();
        let g = read(x.grad(&grads).expect("a gradient"));
        let soft = |a: f64, b: f64| a.exp() / (a.exp() + b.exp());
        let want = [
            0.0,
            soft(0.5, -1.0),
            0.0,
            soft(-1.0, 0.5),
            0.0,
            soft(2.0, 0.25),
            1.0,
            soft(0.25, 2.0),
        ];
        assert_close(
            &format!("{} logsumexp gradient", t.name),
            &g,
            &want,
            1e-5,
            1e-6,
        );
    }
}

/// `[2, D]` mask of the infinite outputs.
fn got_inf_mask(got: &[f64], dev: &burn::tensor::Device) -> Tensor<2, burn::tensor::Bool> {
    let m: Vec<bool> = got.iter().map(|v| v.is_infinite()).collect();
    Tensor::from_data(burn::tensor::TensorData::new(m, [2, D]), dev)
}

#[test]
fn variance_std_normalize() {
    check("variance", &values(), |x, i| seg::segment_variance(x, i, N));
    check("std", &values(), |x, i| seg::segment_std(x, i, N));
    check("normalize", &values(), |x, i| {
        seg::segment_normalize(x, i, N, 1e-3)
    });
}

/// The corrected forms, with and without a plan; their NaN outputs (segments of fewer than
/// `correction + 1` rows, the empty one) are left out of the loss, and pass no gradient.
#[test]
fn corrected_variance_and_std() {
    let no_nan = |t: Tensor<2>| t.clone().mask_fill(t.is_nan(), 0.0);
    for c in [0, 1, 2] {
        check(&format!("variance_corrected({c})"), &values(), |x, i| {
            no_nan(seg::segment_variance_corrected(x, i, N, c))
        });
        check(&format!("std_corrected({c})"), &values(), |x, i| {
            no_nan(seg::segment_std_corrected(x, i, N, c))
        });
        check(
            &format!("planned variance_corrected({c})"),
            &values(),
            |x, i| no_nan(plan(i, N).variance_corrected(x, c)),
        );
    }
    // Every segment has at most 3 rows: all NaN, and a gradient of exactly 0 (not NaN).
    let g = check("variance_corrected(3)", &values(), |x, i| {
        no_nan(seg::segment_variance_corrected(x, i, N, 3))
    });
    assert!(g.iter().all(|&v| v == 0.0), "{g:?}");
}

/// The masked ops (a fixed full mask that leaves segment 3's column 1 with nothing eligible),
/// per call and planned; NaN outputs (a mean of nothing) are left out of the loss.
#[test]
fn masked_ops() {
    type Op = fn(&seg::Masked<'_, seg::SegmentIds, 2>, Tensor<2>) -> Tensor<2>;
    let mask = |x: &Tensor<2>| {
        let keep: Vec<bool> = (0..E * D)
            .map(|k| k % 3 != 1 && !(IDS[k / D] == 3 && k % D == 1))
            .collect();
        Tensor::<2, burn::tensor::Bool>::from_data(
            burn::tensor::TensorData::new(keep, [E, D]),
            &x.device(),
        )
    };
    let no_nan = |t: Tensor<2>| t.clone().mask_fill(t.is_nan(), 0.0);
    let ops: [(&str, Op); 9] = [
        ("sum", |m, x| m.sum(x)),
        ("prod", |m, x| m.prod(x)),
        ("mean", |m, x| m.mean(x)),
        ("max", |m, x| m.max(x)),
        ("min", |m, x| m.min(x)),
        ("logsumexp", |m, x| m.logsumexp(x)),
        ("softmax", |m, x| m.softmax(x)),
        ("variance(1)", |m, x| m.variance_corrected(x, 1)),
        ("std(1)", |m, x| m.std_corrected(x, 1)),
    ];
    for (name, op) in ops {
        check(&format!("masked {name}"), &values(), |x, i| {
            let index = seg::SegmentIds::new(i, N);
            no_nan(op(&index.masked(mask(&x)), x))
        });
    }
    check("masked weighted variance(1)", &values(), |x, i| {
        let w = floats(&weights_of(E), [E, 1], &x.device(), x.dtype()).reshape([E]);
        let weights = seg::SegmentWeights::new(w).expect("nonnegative");
        no_nan(
            seg::SegmentIds::new(i, N)
                .masked(mask(&x))
                .weighted_variance(x, &weights, 1),
        )
    });
    check("planned masked mean", &values(), |x, i| {
        no_nan(plan(i, N).masked(mask(&x)).mean(x))
    });
}

/// Weights in {0, 0.5, 1, 1.5} (all 0 in segment 3: a total of 0, NaN out, left out of the loss).
fn weights_of(rows: usize) -> Vec<f64> {
    (0..rows)
        .map(|e| {
            if IDS[e] == 3 {
                0.0
            } else {
                (e % 4) as f64 / 2.0
            }
        })
        .collect()
}

#[test]
fn weighted_statistics_by_data() {
    let no_nan = |t: Tensor<2>| t.clone().mask_fill(t.is_nan(), 0.0);
    let w = weights_of(E);
    let weights = |x: &Tensor<2>| {
        let w = floats(&w, [E, 1], &x.device(), x.dtype()).reshape([E]);
        seg::SegmentWeights::new(w).expect("nonnegative")
    };
    check("weighted_mean", &values(), |x, i| {
        no_nan(plan(i, N).weighted_mean(x.clone(), &weights(&x)))
    });
    for c in [0, 1] {
        check(&format!("weighted_variance({c})"), &values(), |x, i| {
            no_nan(seg::SegmentIds::new(i, N).weighted_variance(x.clone(), &weights(&x), c))
        });
    }
}

/// The gradients with respect to the weights, against central differences in f64.
#[test]
fn weighted_statistics_by_weights() {
    for t in autodiff_targets().into_iter().filter(|t| t.f64()) {
        let dev = &t.device;
        let x = floats(&values(), [E, D], dev, DType::F64);
        let w0 = weights_of(E);
        let run = |w: Tensor<1>, c: Option<usize>| {
            let index = seg::SegmentIds::new(ids(&IDS, dev, false), N);
            let weights = seg::SegmentWeights::new_unchecked(w);
            let out = match c {
                None => index.weighted_mean(x.clone(), &weights),
                Some(c) => index.weighted_variance(x.clone(), &weights, c),
            };
            loss(out.clone().mask_fill(out.is_nan(), 0.0))
        };
        for c in [None, Some(0), Some(1)] {
            let w = floats(&w0, [E, 1], dev, DType::F64)
                .reshape([E])
                .require_grad();
            let grads = run(w.clone(), c).backward();
            let analytic = read(w.grad(&grads).expect("a gradient").reshape([E, 1]));
            let h = 1e-6;
            let eval = |k: usize, delta: f64| {
                let mut v = w0.clone();
                v[k] += delta;
                read(run(floats(&v, [E, 1], dev, DType::F64).reshape([E]), c))[0]
            };
            // Segment 3's weights sit at a total of 0 (NaN out, masked): no difference there.
            let numeric: Vec<f64> = (0..E)
                .map(|k| match IDS[k] {
                    3 => 0.0,
                    _ => (eval(k, h) - eval(k, -h)) / (2.0 * h),
                })
                .collect();
            assert_close(
                &format!("{} weights {c:?}", t.name),
                &analytic,
                &numeric,
                1e-5,
                1e-6,
            );
        }
    }
}

/// Every differentiable op through a plan (built inside the checked function, so each finite
/// difference plans again): its backward reuses the forward call's plan.
#[test]
fn planned_ops() {
    let planned = |op: fn(&seg::SegmentPlan, Tensor<2>) -> Tensor<2>| {
        move |x: Tensor<2>, i: Tensor<1, Int>| op(&plan(i, N), x)
    };
    check("planned sum", &values(), planned(|p, x| p.sum(x)));
    check("planned prod", &values(), planned(|p, x| p.prod(x)));
    check("planned mean", &values(), planned(|p, x| p.mean(x)));
    check("planned max", &values(), planned(|p, x| p.max(x)));
    check("planned min", &values(), planned(|p, x| p.min(x)));
    check(
        "planned max_or_constant",
        &values(),
        planned(|p, x| p.max_or_constant(x, 0.0)),
    );
    check("planned softmax", &values(), planned(|p, x| p.softmax(x)));
    check(
        "planned logsumexp",
        &values(),
        planned(|p, x| p.logsumexp(x)),
    );
    check("planned variance", &values(), planned(|p, x| p.variance(x)));
    check(
        "planned normalize",
        &values(),
        planned(|p, x| p.normalize(x, 1e-3)),
    );
    check(
        "planned gather",
        &values()[..N * D],
        planned(|p, x| p.gather(x)),
    );
}

#[test]
fn partitions() {
    let parts = |dev: &burn::tensor::Device| ids(&[3, 0, 4, 2], dev, false);
    check("partition_sum", &values(), |x, _| {
        let p = parts(&x.device());
        seg::partition_sum(x, p)
    });
    check("partition_softmax", &values(), |x, _| {
        let p = parts(&x.device());
        seg::partition_softmax(x, p)
    });
    check("partition_max", &values(), |x, _| {
        let p = parts(&x.device());
        seg::partition_max(x, p)
    });
}

#[test]
fn rows_with_out_of_range_ids_get_no_gradient_where_they_are_dropped() {
    let all_ids = [0i64, 5, 1, 0, -1, 1, 2, 3];
    let n = 3;
    let kept: Vec<usize> = (0..all_ids.len())
        .filter(|&e| (0..n as i64).contains(&all_ids[e]))
        .collect();
    let x_all = values()[..all_ids.len() * D].to_vec();
    let x_kept: Vec<f64> = kept
        .iter()
        .flat_map(|&e| x_all[e * D..(e + 1) * D].to_vec())
        .collect();
    let ids_kept: Vec<i64> = kept.iter().map(|&e| all_ids[e]).collect();
    type Op = fn(Tensor<2>, Tensor<1, Int>) -> Tensor<2>;
    let ops: [(&str, Op); 7] = [
        ("sum", |x, i| seg::segment_sum(x, i, 3)),
        ("mean", |x, i| seg::segment_mean(x, i, 3)),
        ("prod", |x, i| seg::segment_prod(x, i, 3)),
        ("max", |x, i| seg::segment_max(x, i, 3)),
        ("min", |x, i| seg::segment_min(x, i, 3)),
        ("logsumexp", |x, i| seg::segment_logsumexp(x, i, 3)),
        // Summed back per segment so that the loss does not see the dropped rows' positions.
        ("softmax", |x, i| {
            seg::segment_sum(
                seg::segment_softmax(x.clone(), i.clone(), 3) * x.detach(),
                i,
                3,
            )
        }),
    ];
    for t in autodiff_targets().into_iter().filter(Target::drops_bad_ids) {
        for (name, op) in ops {
            let grad = |x0: &[f64], seg_ids: &[i64]| {
                let x = f32s(x0, [seg_ids.len(), D], &t.device).require_grad();
                let grads = loss(op(x.clone(), ids(seg_ids, &t.device, true))).backward();
                read(x.grad(&grads).expect("a gradient"))
            };
            let (g_all, g_kept) = (grad(&x_all, &all_ids), grad(&x_kept, &ids_kept));
            for e in 0..all_ids.len() {
                let got = &g_all[e * D..(e + 1) * D];
                match kept.iter().position(|&k| k == e) {
                    Some(k) => assert_close(
                        &format!("{} {name} row {e}", t.name),
                        got,
                        &g_kept[k * D..(k + 1) * D],
                        1e-5,
                        1e-6,
                    ),
                    None => assert_eq!(
                        got, [0.0; D],
                        "{} {name}: dropped row {e} got a gradient",
                        t.name
                    ),
                }
            }
        }
    }
}
