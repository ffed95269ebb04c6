//! The pairwise layer on every backend against the dense f64 reference: every consumer under
//! every metric and a set of masks (one tile, and several tiles of rows and columns), ties,
//! NaN, empty rows, the transposed axis, typed errors, and gradients against central
//! differences of the reference.

use burn::tensor::{Device, Int, Tensor};
use burn_segment::pairwise::reference::PairwiseReference;
use burn_segment::pairwise::{PairMask, PairMetric, Pairwise, PairwiseError};

use crate::common::*;

const METRICS: [PairMetric; 4] = [
    PairMetric::SqEuclidean,
    PairMetric::Euclidean,
    PairMetric::Dot,
    PairMetric::Cosine,
];

/// Seeded uniform values in `[-1, 1)`, rounded to f32.
fn uniform(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 as f64
        })
        .collect()
}

fn masks() -> Vec<(&'static str, Option<PairMask>)> {
    vec![
        ("none", None),
        ("same_group", Some(PairMask::same_group())),
        ("different_group", Some(PairMask::different_group())),
        ("not diagonal", Some(!PairMask::diagonal())),
        ("causal(0)", Some(PairMask::causal(0))),
        ("band(1, 2)", Some(PairMask::band(1, 2))),
        ("within(0.8)", Some(PairMask::within(0.8))),
        (
            "same_group & !diagonal | causal(-3)",
            Some(PairMask::same_group() & !PairMask::diagonal() | PairMask::causal(-3)),
        ),
    ]
}

/// A case: `x: [n, d]`, `y: [m, d]`, labels in `0..3`.
struct Case {
    n: usize,
    m: usize,
    d: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    lx: Vec<i64>,
    ly: Vec<i64>,
}

impl Case {
    fn new(n: usize, m: usize, d: usize, seed: u64) -> Self {
        let labels = |len: usize, s: u64| -> Vec<i64> {
            uniform(len, s)
                .iter()
                .map(|v| ((v + 1.0) * 1.5) as i64)
                .collect()
        };
        Self {
            n,
            m,
            d,
            x: uniform(n * d, seed),
            y: uniform(m * d, seed + 1),
            lx: labels(n, seed + 2),
            ly: labels(m, seed + 3),
        }
    }

    fn pairwise(&self, device: &Device, metric: PairMetric, mask: &Option<PairMask>) -> Pairwise {
        let x = f32s(&self.x, [self.n, self.d], device);
        let y = f32s(&self.y, [self.m, self.d], device);
        let lx = ints(&self.lx, [self.n], device, burn::tensor::DType::I64);
        let ly = ints(&self.ly, [self.m], device, burn::tensor::DType::I32);
        let p = Pairwise::new(x, y, metric).unwrap().groups(lx, ly).unwrap();
        match mask {
            Some(mask) => p.mask(mask.clone()).unwrap(),
            None => p,
        }
    }

    /// For sorted labels: the span of `y`'s rows with each row of `x`'s label.
    fn spans(&self) -> Vec<[usize; 2]> {
        let ly = &self.ly;
        let bounds = |l: i64| {
            [
                ly.partition_point(|&t| t < l),
                ly.partition_point(|&t| t <= l),
            ]
        };
        self.lx.iter().map(|&l| bounds(l)).collect()
    }

    fn reference(&self, metric: PairMetric, mask: &Option<PairMask>) -> PairwiseReference {
        let labels = Some((&self.lx[..], &self.ly[..]));
        PairwiseReference::new(&self.x, &self.y, self.d, metric, labels, mask.as_ref())
    }
}

fn check_all(t: &Target, c: &Case, selections: bool) {
    let v = uniform(c.m * 2, 99);
    // wgpu (lavapipe) compiles a kernel per new shape: there, each mask meets one metric
    // (all 8 masks, all 4 metrics) instead of every pair of them.
    let wgpu = t.name.contains("wgpu");
    for (mi, metric) in METRICS.into_iter().enumerate() {
        for (ki, (name, mask)) in masks().into_iter().enumerate() {
            if wgpu && ki % METRICS.len() != mi {
                continue;
            }
            let p = c.pairwise(&t.device, metric, &mask);
            let r = c.reference(metric, &mask);
            let what = |op: &str| format!("{} {metric:?} {name} {op} ({}x{})", t.name, c.n, c.m);
            assert_close(&what("sum"), &read(p.sum()), &r.sum(), 1e-4, 1e-4);
            assert_close(&what("mean"), &read(p.mean()), &r.mean(), 1e-4, 1e-5);
            assert_eq!(read_int(p.count()), r.count(), "{}", what("count"));
            assert_close(
                &what("logsumexp"),
                &read(p.logsumexp()),
                &r.logsumexp(),
                1e-5,
                1e-5,
            );
            let out = p.softmax_matmul(f32s(&v, [c.m, 2], &t.device)).unwrap();
            let want = r.softmax_matmul(&v, 2);
            assert_close(&what("softmax_matmul"), &read(out), &want, 1e-4, 1e-5);
            if !selections {
                continue;
            }
            for largest in [true, false] {
                let (values, cols) = p.topk(3, largest);
                let (want_v, want_c) = r.topk(3, largest);
                assert_eq!(read_int(cols), want_c, "{}", what("topk columns"));
                assert_close(&what("topk values"), &read(values), &want_v, 1e-5, 1e-5);
            }
            let (min, argmin) = p.min();
            let (want_v, want_c) = r.topk(1, false);
            assert_eq!(read_int(argmin), want_c, "{}", what("argmin"));
            assert_close(&what("min"), &read(min), &want_v, 1e-5, 1e-5);
            let (max, argmax) = p.max();
            let (want_v, want_c) = r.topk(1, true);
            assert_eq!(read_int(argmax), want_c, "{}", what("argmax"));
            assert_close(&what("max"), &read(max), &want_v, 1e-5, 1e-5);
            assert_close(
                &what("amin"),
                &read(p.amin()),
                &r.nan_extreme(false),
                1e-5,
                1e-5,
            );
            assert_close(
                &what("amax"),
                &read(p.amax()),
                &r.nan_extreme(true),
                1e-5,
                1e-5,
            );
        }
    }
}

fn public_targets() -> Vec<Target> {
    targets()
        .into_iter()
        .filter(|t| t.path == Path::Public)
        .collect()
}

#[test]
fn every_consumer_metric_and_mask_matches_the_reference() {
    for t in public_targets() {
        check_all(&t, &Case::new(7, 9, 3, 1), true);
        check_all(&t, &Case::new(1, 1, 2, 5), true);
    }
}

#[test]
fn several_tiles_of_columns_and_rows_match_the_reference() {
    // 1,500 columns: two column tiles; 40 rows of width 64 against them: several row tiles.
    for t in public_targets() {
        let c = Case::new(3, 2500, 2, 11);
        check_all(&t, &c, false);
        if t.name.contains("wgpu") {
            continue; // the single-tile cases and the 2,500-column case cover its kernels
        }
        let c = Case::new(150, 1500, 64, 13);
        let v = uniform(c.m * 3, 3);
        for metric in [PairMetric::SqEuclidean, PairMetric::Dot] {
            let mask = Some(PairMask::same_group() & !PairMask::diagonal());
            let (p, r) = (
                c.pairwise(&t.device, metric, &mask),
                c.reference(metric, &mask),
            );
            let what = format!("{} {metric:?} tiles", t.name);
            assert_close(&what, &read(p.sum()), &r.sum(), 1e-4, 1e-3);
            let out = p.softmax_matmul(f32s(&v, [c.m, 3], &t.device)).unwrap();
            assert_close(&what, &read(out), &r.softmax_matmul(&v, 3), 1e-3, 1e-4);
        }
    }
}

#[test]
fn sorted_groups_select_within_their_own_rows() {
    // `sorted_groups` gives the selection each query's own group to scan.
    for t in public_targets() {
        let mut c = Case::new(12, 15, 2, 51);
        c.lx.sort();
        c.ly.sort();
        let mask = Some(PairMask::same_group() & PairMask::within(1.0));
        let x = f32s(&c.x, [c.n, c.d], &t.device);
        let y = f32s(&c.y, [c.m, c.d], &t.device);
        let lx = ints(&c.lx, [c.n], &t.device, burn::tensor::DType::I64);
        let ly = ints(&c.ly, [c.m], &t.device, burn::tensor::DType::I32);
        let p = Pairwise::new(x, y, PairMetric::Euclidean).unwrap();
        let p = p
            .sorted_groups(lx, ly)
            .unwrap()
            .mask(mask.clone().unwrap())
            .unwrap();
        let r = c.reference(PairMetric::Euclidean, &mask);
        for largest in [false, true] {
            let (values, cols) = p.topk(4, largest);
            let (want_v, want_c) = r.topk(4, largest);
            assert_eq!(read_int(cols), want_c, "{} sorted groups", t.name);
            assert_close(t.name, &read(values), &want_v, 1e-5, 1e-5);
        }
    }
}

#[test]
fn sorted_groups_skip_other_groups_tiles_with_the_same_results() {
    // 1,300 rows in 3 sorted groups against 2,600 in 4: several row and column tiles, most
    // of them skipped; a group of x absent from y leaves its rows with nothing eligible.
    let mut c = Case::new(1300, 2600, 2, 61);
    c.lx = (0..c.n).map(|i| [0, 1, 3][i * 3 / c.n]).collect();
    c.ly = (0..c.m).map(|j| (j * 3 / c.m) as i64).collect();
    let v = uniform(c.m * 2, 5);
    let mask = Some(PairMask::same_group() & !PairMask::diagonal());
    for t in public_targets() {
        let x = f32s(&c.x, [c.n, c.d], &t.device);
        let y = f32s(&c.y, [c.m, c.d], &t.device);
        let lx = ints(&c.lx, [c.n], &t.device, burn::tensor::DType::I64);
        let ly = ints(&c.ly, [c.m], &t.device, burn::tensor::DType::I64);
        let p = Pairwise::new(x, y, PairMetric::Dot)
            .unwrap()
            .sorted_groups(lx, ly)
            .unwrap();
        let p = p.mask(mask.clone().unwrap()).unwrap();
        let r = c.reference(PairMetric::Dot, &mask);
        let what = format!("{} sorted groups", t.name);
        assert_close(&what, &read(p.sum()), &r.sum(), 1e-4, 1e-3);
        assert_eq!(read_int(p.count()), r.count(), "{what}");
        let out = p.softmax_matmul(f32s(&v, [c.m, 2], &t.device)).unwrap();
        assert_close(&what, &read(out), &r.softmax_matmul(&v, 2), 1e-4, 1e-5);
        let transposed = p.transpose();
        let mut col_sums = vec![0.0; c.m];
        for (k, (&s, &e)) in r.scores.iter().zip(&r.eligible).enumerate() {
            if e {
                col_sums[k % c.m] += s;
            }
        }
        assert_close(&what, &read(transposed.sum()), &col_sums, 1e-4, 1e-3);
        if t.is_autodiff() {
            // The backward skips the same tiles: gradients as with unsorted-label handling.
            let grads = |sorted: bool| {
                let x = f32s(&c.x, [c.n, c.d], &t.device).require_grad();
                let y = f32s(&c.y, [c.m, c.d], &t.device).require_grad();
                let lx = ints(&c.lx, [c.n], &t.device, burn::tensor::DType::I64);
                let ly = ints(&c.ly, [c.m], &t.device, burn::tensor::DType::I64);
                let p = Pairwise::new(x.clone(), y.clone(), PairMetric::Dot).unwrap();
                let p = if sorted {
                    p.sorted_groups(lx, ly)
                } else {
                    p.groups(lx, ly)
                };
                let p = p.unwrap().mask(mask.clone().unwrap()).unwrap();
                let v = f32s(&v, [c.m, 2], &t.device);
                let g = (p.softmax_matmul(v).unwrap().sum() + p.logsumexp().clamp_min(-1e3).sum())
                    .backward();
                (read(x.grad(&g).unwrap()), read(y.grad(&g).unwrap()))
            };
            let ((sx, sy), (ux, uy)) = (grads(true), grads(false));
            assert_close(&format!("{what} d/dx"), &sx, &ux, 1e-5, 1e-5);
            assert_close(&format!("{what} d/dy"), &sy, &uy, 1e-5, 1e-5);
        }
    }
    let device = Device::flex();
    let unsorted = ints(&[0, 1, 0], [3], &device, burn::tensor::DType::I64);
    let x = f32s(&[0.0; 3], [3, 1], &device);
    let err = Pairwise::self_pairs(x, PairMetric::Dot).sorted_groups(unsorted.clone(), unsorted);
    assert_eq!(
        err.unwrap_err(),
        PairwiseError::UnsortedGroups {
            side: "x",
            position: 2
        }
    );
}

#[test]
fn ties_go_to_the_smaller_column_and_nan_orders_high() {
    for t in public_targets() {
        // Query 0 at the origin: rows 1 and 3 at distance 1, rows 0 and 2 at distance 2; row 4 NaN.
        let x = f32s(&[0.0, 0.0], [1, 2], &t.device);
        let pts = [2.0, 0.0, 0.0, 1.0, 0.0, -2.0, 1.0, 0.0, f64::NAN, 0.0];
        let y = f32s(&pts, [5, 2], &t.device);
        let p = Pairwise::new(x, y, PairMetric::SqEuclidean).unwrap();
        let (values, cols) = p.topk(5, false);
        assert_eq!(read_int(cols), [1, 3, 0, 2, 4], "{}", t.name);
        let values = read(values);
        assert_eq!(&values[..4], [1.0, 1.0, 4.0, 4.0], "{}", t.name);
        assert!(values[4].is_nan(), "{}", t.name);
        let (_, cols) = p.topk(2, true);
        assert_eq!(
            read_int(cols),
            [4, 0],
            "{}: NaN first, then the first of the 4s",
            t.name
        );
        assert!(
            read(p.amin())[0].is_nan() && read(p.amax())[0].is_nan(),
            "{}",
            t.name
        );
        assert_eq!(read(p.min().0), [1.0], "{}", t.name);
    }
}

#[test]
fn rows_with_nothing_eligible_get_the_identity() {
    for t in public_targets() {
        let x = f32s(&[0.0, 1.0, 2.0], [3, 1], &t.device);
        let p = Pairwise::self_pairs(x, PairMetric::Euclidean)
            .mask(PairMask::within(0.5))
            .unwrap()
            .exclude_self();
        assert_eq!(read(p.sum()), [0.0; 3], "{}", t.name);
        assert!(read(p.mean()).iter().all(|v| v.is_nan()), "{}", t.name);
        assert_eq!(read_int(p.count()), [0; 3], "{}", t.name);
        assert_eq!(read(p.logsumexp()), [f64::NEG_INFINITY; 3], "{}", t.name);
        let v = f32s(&[1.0, 2.0, 3.0], [3, 1], &t.device);
        assert_eq!(read(p.softmax_matmul(v).unwrap()), [0.0; 3], "{}", t.name);
        let (values, cols) = p.topk(2, true);
        assert_eq!(read_int(cols), [-1; 6], "{}", t.name);
        assert_eq!(read(values), [f64::NEG_INFINITY; 6], "{}", t.name);
    }
}

#[test]
fn the_transposed_expression_reduces_along_the_other_axis() {
    let c = Case::new(6, 8, 3, 21);
    for t in public_targets() {
        for (name, mask) in masks() {
            let p = c
                .pairwise(&t.device, PairMetric::Euclidean, &mask)
                .transpose();
            let r = c.reference(PairMetric::Euclidean, &mask);
            // Column sums and arg-minima of the reference matrix.
            let (mut sums, mut argmin) = (vec![0.0; c.m], vec![-1i64; c.m]);
            for j in 0..c.m {
                let mut best = f64::INFINITY;
                for i in 0..c.n {
                    if r.eligible[i * c.m + j] {
                        let s = r.scores[i * c.m + j];
                        sums[j] += s;
                        if s < best {
                            (best, argmin[j]) = (s, i as i64);
                        }
                    }
                }
            }
            let what = format!("{} transposed {name}", t.name);
            assert_close(&what, &read(p.sum()), &sums, 1e-5, 1e-5);
            assert_eq!(read_int(p.min().1), argmin, "{what}");
        }
    }
}

#[test]
fn bad_input_gets_a_typed_error() {
    let device = Device::flex();
    let x = Tensor::<2>::zeros([3, 2], &device);
    let y = Tensor::<2>::zeros([4, 3], &device);
    let err = Pairwise::new(x.clone(), y, PairMetric::Dot).unwrap_err();
    assert_eq!(err, PairwiseError::WidthMismatch { x: 2, y: 3 });
    let p = Pairwise::self_pairs(x, PairMetric::Dot);
    let err = p.clone().mask(PairMask::same_group()).unwrap_err();
    assert_eq!(err, PairwiseError::MissingGroups);
    let labels = Tensor::<1, Int>::zeros([2], &device);
    let err = p.clone().groups(labels.clone(), labels).unwrap_err();
    assert!(matches!(
        err,
        PairwiseError::LabelLength {
            side: "x",
            expected: 3,
            got: 2
        }
    ));
    let err = p
        .softmax_matmul(Tensor::zeros([2, 1], &device))
        .unwrap_err();
    assert_eq!(
        err,
        PairwiseError::ValueRows {
            expected: 3,
            got: 2
        }
    );
}

/// `Σ w ⊙ f(x, y, v)` of the reference, for central differences.
fn reference_loss(
    c: &Case,
    metric: PairMetric,
    mask: &Option<PairMask>,
    op: &str,
    v: &[f64],
) -> f64 {
    let r = c.reference(metric, mask);
    let out = match op {
        "sum" => r.sum(),
        "mean" => r.mean(),
        "logsumexp" => r.logsumexp(),
        "softmax_matmul" => r.softmax_matmul(v, 2),
        "topk" => r.topk(2, false).0,
        _ => unreachable!(),
    };
    let w = uniform(out.len(), 77);
    out.iter()
        .zip(&w)
        .filter(|(o, _)| o.is_finite())
        .map(|(o, w)| o * w)
        .sum()
}

#[test]
fn gradients_match_central_differences_of_the_reference() {
    let ops = ["sum", "mean", "logsumexp", "softmax_matmul", "topk"];
    let mask = Some(PairMask::same_group() & !PairMask::diagonal());
    for t in autodiff_targets() {
        for metric in METRICS {
            for op in ops {
                let c = Case::new(5, 6, 3, 31);
                let v = uniform(c.m * 2, 41);
                let x = f32s(&c.x, [c.n, c.d], &t.device).require_grad();
                let y = f32s(&c.y, [c.m, c.d], &t.device).require_grad();
                let vt = f32s(&v, [c.m, 2], &t.device).require_grad();
                let lx = ints(&c.lx, [c.n], &t.device, burn::tensor::DType::I64);
                let ly = ints(&c.ly, [c.m], &t.device, burn::tensor::DType::I64);
                let p = Pairwise::new(x.clone(), y.clone(), metric)
                    .unwrap()
                    .groups(lx, ly)
                    .unwrap();
                let p = p.mask(mask.clone().unwrap()).unwrap();
                let out: Tensor<2> = match op {
                    "sum" => p.sum().unsqueeze_dim(1),
                    "mean" => p.mean().unsqueeze_dim(1),
                    "logsumexp" => p.logsumexp().unsqueeze_dim(1),
                    "softmax_matmul" => p.softmax_matmul(vt.clone()).unwrap(),
                    _ => p.topk(2, false).0,
                };
                let dims = out.dims();
                let w = f32s(&uniform(dims[0] * dims[1], 77), dims, &t.device);
                let finite = out.clone().is_finite();
                let loss = (out.mask_fill(finite.bool_not(), 0.0) * w).sum();
                let grads = loss.backward();
                let h = 1e-6;
                let what = format!("{} {metric:?} {op}", t.name);
                let numeric = |which: usize, len: usize| -> Vec<f64> {
                    (0..len)
                        .map(|k| {
                            let mut lo = Case {
                                x: c.x.clone(),
                                y: c.y.clone(),
                                lx: c.lx.clone(),
                                ly: c.ly.clone(),
                                ..c
                            };
                            let mut hi = Case {
                                x: c.x.clone(),
                                y: c.y.clone(),
                                lx: c.lx.clone(),
                                ly: c.ly.clone(),
                                ..c
                            };
                            let (mut vlo, mut vhi) = (v.clone(), v.clone());
                            match which {
                                0 => (lo.x[k] -= h, hi.x[k] += h),
                                1 => (lo.y[k] -= h, hi.y[k] += h),
                                _ => (vlo[k] -= h, vhi[k] += h),
                            };
                            let f = |c: &Case, v: &[f64]| reference_loss(c, metric, &mask, op, v);
                            (f(&hi, &vhi) - f(&lo, &vlo)) / (2.0 * h)
                        })
                        .collect()
                };
                let gx = read(x.grad(&grads).expect("x is tracked"));
                assert_close(
                    &format!("{what} d/dx"),
                    &gx,
                    &numeric(0, c.n * c.d),
                    2e-3,
                    2e-3,
                );
                let gy = read(y.grad(&grads).expect("y is tracked"));
                assert_close(
                    &format!("{what} d/dy"),
                    &gy,
                    &numeric(1, c.m * c.d),
                    2e-3,
                    2e-3,
                );
                if op == "softmax_matmul" {
                    let gv = read(vt.grad(&grads).expect("v is tracked"));
                    assert_close(
                        &format!("{what} d/dv"),
                        &gv,
                        &numeric(2, c.m * 2),
                        2e-3,
                        2e-3,
                    );
                }
            }
        }
    }
}

#[test]
#[allow(deprecated)] // NdArray: the backend whose primitives the composite runs on here
fn cpu_kernels_equal_the_composite() {
    use burn::backend::NdArray;
    use burn_segment::pairwise::PairwiseBackend;
    use burn_segment::pairwise::composite;
    #[allow(deprecated)]
    let device = Device::ndarray();
    let mut c = Case::new(9, 11, 3, 71);
    c.lx.sort();
    c.ly.sort();
    let f = |v: &[f64], shape: [usize; 2]| nd(f32s(v, shape, &device));
    let l = |v: &[i64]| nd(ints(v, [v.len()], &device, burn::tensor::DType::I64));
    let (v, grad) = (uniform(c.m * 2, 1), uniform(c.n * 3, 2));
    let spans = c.spans();
    let masks = [
        (None, None),
        (Some(PairMask::within(0.9) | PairMask::causal(1)), None),
        (
            Some(PairMask::same_group() & !PairMask::diagonal()),
            Some(std::sync::Arc::new(spans)),
        ),
    ];
    let host = |t| read(Tensor::<2>::from_primitive::<NdArray>(t));
    for (spec, weight) in every_spec(&masks) {
        let what = format!("{:?} {:?} {weight:?}", spec.score, spec.mask);
        let inputs = || {
            let xyv = [f(&c.x, [c.n, c.d]), f(&c.y, [c.m, c.d]), f(&v, [c.m, 2])];
            (xyv, [l(&c.lx), l(&c.ly)])
        };
        let ([x, y, vt], [lx, ly]) = inputs();
        let kernel = NdArray::pairwise_matmul(x, y, vt, lx, ly, spec.clone(), weight);
        let (xyv, labels) = inputs();
        let reference = composite::matmul::<NdArray>(xyv, labels, &spec, weight);
        let out = host(kernel);
        assert_close(&what, &out, &host(reference), 1e-5, 1e-5);
        let ([x, y, vt], [lx, ly]) = inputs();
        let (o, g) = (f(&out, [c.n, 3]), f(&grad, [c.n, 3]));
        let k = NdArray::pairwise_matmul_backward(x, y, vt, lx, ly, spec.clone(), weight, o, g);
        let ([x, y, vt], labels) = inputs();
        let (o, g) = (f(&out, [c.n, 3]), f(&grad, [c.n, 3]));
        let r = composite::matmul_backward::<NdArray>([x, y, vt, o, g], labels, &spec, weight);
        assert_close(&format!("{what} dx"), &host(k.0), &host(r.0), 1e-4, 1e-5);
        assert_close(&format!("{what} dy"), &host(k.1), &host(r.1), 1e-4, 1e-5);
        assert_close(&format!("{what} dv"), &host(k.2), &host(r.2), 1e-4, 1e-5);
    }
}

/// Selections under conjunctions of group tests, bands, an excluded band and radii (what the
/// wgpu kernel evaluates), with sorted groups or not, `k` up to the kernel's 32, and two masks
/// it leaves to the host: the reference's columns and values on every backend, and on wgpu
/// the kernel's call.
#[test]
fn selections_under_conjunction_masks_match_the_reference() {
    let masks = [
        (
            "same & !diagonal",
            PairMask::same_group() & !PairMask::diagonal(),
        ),
        (
            "same & !diagonal & within(1.1)",
            PairMask::same_group() & !PairMask::diagonal() & PairMask::within(1.1),
        ),
        (
            "different & band(2, 1)",
            PairMask::different_group() & PairMask::band(2, 1),
        ),
        (
            "causal(0) & !band(1, 1) & causal(5)",
            PairMask::causal(0) & !PairMask::band(1, 1) & PairMask::causal(5),
        ),
        // Conflicting groups: nothing is eligible (the host default).
        (
            "same & different",
            PairMask::same_group() & PairMask::different_group(),
        ),
        // Two excluded bands: the host default.
        (
            "!diagonal & !band(3, 3)",
            !PairMask::diagonal() & !PairMask::band(3, 3),
        ),
    ];
    let mut c = Case::new(40, 37, 3, 21);
    c.lx.sort();
    c.ly.sort();
    for t in public_targets() {
        for (mi, metric) in METRICS.into_iter().enumerate() {
            for (ki, (name, mask)) in masks.iter().enumerate() {
                let mask = Some(mask.clone());
                let r = c.reference(metric, &mask);
                for sorted in [false, true] {
                    if (mi + ki) % 2 == usize::from(sorted) && t.name.contains("wgpu") {
                        continue; // lavapipe compiles a kernel per variant: half of them there
                    }
                    let mut p = c.pairwise(&t.device, metric, &None);
                    if sorted {
                        let lx = ints(&c.lx, [c.n], &t.device, burn::tensor::DType::I64);
                        let ly = ints(&c.ly, [c.m], &t.device, burn::tensor::DType::I64);
                        p = p.sorted_groups(lx, ly).unwrap();
                    }
                    let p = p.mask(mask.clone().unwrap()).unwrap();
                    for (k, largest) in [(1, false), (7, true), (32, false)] {
                        let what = format!("{} {metric:?} {name} sorted {sorted} k {k}", t.name);
                        let before = cube_calls();
                        let (values, cols) = p.topk(k, largest);
                        let cols = read_int(cols);
                        let calls = cube_calls() - before;
                        let (want_v, want_c) = r.topk(k, largest);
                        assert_eq!(cols, want_c, "{what}");
                        assert_close(&what, &read(values), &want_v, 1e-5, 1e-5);
                        if t.is_cube() && ki < 4 {
                            assert!(calls > 0, "{what}: the host default ran");
                        }
                    }
                }
            }
        }
    }
}

/// The CubeCL kernels (through `Fusion`) equal the composite on NdArray, forward and backward,
/// for every score × weight under the masks they evaluate (none, a radius with a band, the
/// same group minus the diagonal through sorted spans, a different group in a band): the
/// kernel runs for each.
#[cfg(feature = "cube")]
#[test]
#[allow(deprecated)] // NdArray: the composite's host reference
fn cube_kernels_equal_the_composite() {
    use burn::backend::{Dispatch, NdArray};
    use burn_segment::pairwise::PairwiseBackend;
    use burn_segment::pairwise::composite;
    let mut c = Case::new(9, 11, 3, 73);
    c.lx.sort();
    c.ly.sort();
    let spans = c.spans();
    let masks = [
        (None, None),
        (Some(PairMask::within(0.9) & PairMask::causal(1)), None),
        (
            Some(PairMask::same_group() & !PairMask::diagonal()),
            Some(std::sync::Arc::new(spans)),
        ),
        (
            Some(PairMask::different_group() & PairMask::band(2, 1)),
            None,
        ),
    ];
    let (v, grad) = (uniform(c.m * 2, 3), uniform(c.n * 3, 4));
    let cpu = Device::ndarray();
    // (On `Autodiff` the backward op is the composite: a gradient of a gradient.)
    let plain = |t: &Target| t.is_cube() && t.path == Path::Public && !t.name.contains("autodiff");
    // No CubeCL target on this machine: `targets()` has printed the one skip line (or panicked,
    // with BURN_GNN_REQUIRE_WGPU=1), and the loop runs no case, as every other suite's does.
    for t in targets().into_iter().filter(plain) {
        let f = |v: &[f64], shape: [usize; 2]| f32s(v, shape, &t.device).into_dispatch();
        let l = |v: &[i64]| ints(v, [v.len()], &t.device, burn::tensor::DType::I32).into_dispatch();
        let fc = |v: &[f64], shape: [usize; 2]| nd(f32s(v, shape, &cpu));
        let lc = |v: &[i64]| nd(ints(v, [v.len()], &cpu, burn::tensor::DType::I64));
        let on_device = |t| read(Tensor::<2>::from_dispatch(t));
        let on_cpu = |t| read(Tensor::<2>::from_primitive::<NdArray>(t));
        for (spec, weight) in every_spec(&masks) {
            let what = format!("{} {:?} {:?} {weight:?}", t.name, spec.score, spec.mask);
            let before = cube_calls();
            let (x, y, vt) = (f(&c.x, [c.n, c.d]), f(&c.y, [c.m, c.d]), f(&v, [c.m, 2]));
            let (lx, ly) = (l(&c.lx), l(&c.ly));
            let out = on_device(Dispatch::pairwise_matmul(
                x,
                y,
                vt,
                lx,
                ly,
                spec.clone(),
                weight,
            ));
            let (x, y, vt) = (f(&c.x, [c.n, c.d]), f(&c.y, [c.m, c.d]), f(&v, [c.m, 2]));
            let (o, g) = (f(&out, [c.n, 3]), f(&grad, [c.n, 3]));
            let (lx, ly) = (l(&c.lx), l(&c.ly));
            let (gx, gy, gv) =
                Dispatch::pairwise_matmul_backward(x, y, vt, lx, ly, spec.clone(), weight, o, g);
            let [gx, gy, gv] = [gx, gy, gv].map(on_device);
            assert!(cube_calls() - before >= 2, "{what}: the composite ran");
            let xyv = [fc(&c.x, [c.n, c.d]), fc(&c.y, [c.m, c.d]), fc(&v, [c.m, 2])];
            let labels = [lc(&c.lx), lc(&c.ly)];
            let want = composite::matmul::<NdArray>(xyv, labels, &spec, weight);
            assert_close(&what, &out, &on_cpu(want), 1e-5, 1e-5);
            let xyv = [fc(&c.x, [c.n, c.d]), fc(&c.y, [c.m, c.d]), fc(&v, [c.m, 2])];
            let (o, g) = (fc(&out, [c.n, 3]), fc(&grad, [c.n, 3]));
            let labels = [lc(&c.lx), lc(&c.ly)];
            let [x, y, vt] = xyv;
            let r = composite::matmul_backward::<NdArray>([x, y, vt, o, g], labels, &spec, weight);
            assert_close(&format!("{what} dx"), &gx, &on_cpu(r.0), 1e-4, 1e-5);
            assert_close(&format!("{what} dy"), &gy, &on_cpu(r.1), 1e-4, 1e-5);
            assert_close(&format!("{what} dv"), &gv, &on_cpu(r.2), 1e-4, 1e-5);
        }
    }
}

/// The column spans of a `same_group` mask over sorted labels, if given.
type Spans = Option<std::sync::Arc<Vec<[usize; 2]>>>;

/// Every score × mask form × weight, as the kernels take them.
fn every_spec(
    masks: &[(Option<PairMask>, Spans)],
) -> Vec<(
    burn_segment::pairwise::PairSpec,
    burn_segment::pairwise::PairWeight,
)> {
    use burn_segment::pairwise::{PairScore, PairSpec, PairWeight};
    let scores = [PairScore::Dot, PairScore::SqEuclidean, PairScore::Euclidean];
    let weights = [PairWeight::Score, PairWeight::Softmax, PairWeight::One];
    let mut out = Vec::new();
    for score in scores {
        for (mask, column_spans) in masks {
            for weight in weights {
                let (mask, column_spans) = (mask.clone(), column_spans.clone());
                let spec = PairSpec {
                    score,
                    mask,
                    column_spans,
                };
                out.push((spec, weight));
            }
        }
    }
    out
}
