//! Top-k, quantiles and medians on every backend and through plans against the reference (a full stable sort per
//! segment and column), with ties, NaN, ±inf and segments shorter than `k`; gradients reach the
//! selected rows only.

use burn::tensor::DType;
use burn_segment::reference::{segment_quantile_reference, segment_topk_reference};
use burn_segment::{QuantileInterpolation as Interp, SegmentError, SegmentIds, Segments};
use proptest::prelude::*;

use crate::common::*;
use crate::properties::{Case, cases};

fn check_topk(t: &Target, c: &Case, g: &impl Segments) {
    for k in [1, 3, 5] {
        for largest in [true, false] {
            let (values, rows) = g.topk(f32s(&c.data, [c.e, c.d], &t.device), k, largest);
            assert_eq!(values.dims(), [c.n, k, c.d], "{}", t.name);
            let (want_v, want_rows) = segment_topk_reference(&c.data, c.d, &c.ids, c.n, k, largest);
            let what = format!("{} k = {k}, largest = {largest}, {c:?}", t.name);
            assert_eq!(read_int(rows.reshape([c.n * k * c.d])), want_rows, "{what}");
            let got = read(values.reshape([c.n * k, c.d]));
            assert_close(&what, &got, &want_v, 0.0, 0.0);
        }
    }
}

fn check_quantiles(t: &Target, c: &Case, g: &impl Segments) {
    let interps = [
        (Interp::Linear, "linear"),
        (Interp::Lower, "lower"),
        (Interp::Higher, "higher"),
        (Interp::Nearest, "nearest"),
        (Interp::Midpoint, "midpoint"),
    ];
    for q in [0.0, 0.3, 0.5, 0.75, 1.0] {
        for (interp, name) in interps {
            let x = f32s(&c.data, [c.e, c.d], &t.device);
            let got = read(g.quantile(x, q, interp).expect("q in range"));
            let want = segment_quantile_reference(&c.data, c.d, &c.ids, c.n, q, name);
            let what = format!("{} quantile({q}, {name}) {c:?}", t.name);
            assert_close(&what, &got, &want, 1e-6, 1e-6);
        }
    }
    let median = read(g.median(f32s(&c.data, [c.e, c.d], &t.device)));
    let want = segment_quantile_reference(&c.data, c.d, &c.ids, c.n, 0.5, "lower");
    assert_close(
        &format!("{} median {c:?}", t.name),
        &median,
        &want,
        0.0,
        0.0,
    );
    for q in [-0.1, 1.5, f64::NAN] {
        let err = g.quantile(f32s(&c.data, [c.e, c.d], &t.device), q, Interp::Linear);
        assert!(
            matches!(err, Err(SegmentError::QuantileOutOfRange { .. })),
            "{} q = {q}",
            t.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn topk_matches_reference(c in cases(true)) {
        for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
            let segment_ids = ids(&c.ids, &t.device, c.i32_ids);
            match t.path {
                Path::Planned => check_topk(&t, &c, &plan(segment_ids, c.n)),
                _ => check_topk(&t, &c, &SegmentIds::new(segment_ids, c.n)),
            }
        }
    }

    #[test]
    fn quantiles_match_reference(c in cases(true)) {
        for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
            let segment_ids = ids(&c.ids, &t.device, c.i32_ids);
            match t.path {
                Path::Planned => check_quantiles(&t, &c, &plan(segment_ids, c.n)),
                _ => check_quantiles(&t, &c, &SegmentIds::new(segment_ids, c.n)),
            }
        }
    }
}

/// `sum(values · w)` over the finite values: its gradient is `w` at each selected row and
/// column, and 0 elsewhere.
#[test]
fn topk_gradients_reach_the_selected_rows() {
    let data = [4.0, 1.0, 2.0, 5.0, 3.0, 0.5, 9.0];
    let segment = [0, 0, 0, 0, 1, 1, 2];
    for t in autodiff_targets() {
        let x = f32s(&data, [7, 1], &t.device).require_grad();
        let index = SegmentIds::new(ids(&segment, &t.device, false), 3);
        let (values, rows) = index.topk(x.clone(), 2, true);
        let w = floats(
            &[1.0, 10.0, 100.0, 1000.0, 0.0, 0.0],
            [3, 2, 1],
            &t.device,
            DType::F32,
        );
        let finite = values.clone().is_finite();
        let loss = (values * w).mask_fill(finite.bool_not(), 0.0).sum();
        let grad = read(x.grad(&loss.backward()).expect("a gradient"));
        assert_eq!(
            read_int(rows.reshape([6])),
            [3, 0, 4, 5, 6, -1],
            "{}",
            t.name
        );
        assert_eq!(
            grad,
            [10.0, 0.0, 0.0, 1.0, 100.0, 1000.0, 0.0],
            "{}",
            t.name
        );
    }
}

/// A linear quantile splits its gradient between its two witnesses (`1 − t` and `t`); the
/// median's goes to its one witness, the smaller row among equal values.
#[test]
fn quantile_gradients_reach_their_witnesses() {
    // Segment 0 sorted: 1 (row 0), 2 (row 2), 4 (row 1), 8 (row 3); h = 0.4 · 3 = 1.2.
    let data = [1.0, 4.0, 2.0, 8.0, 5.0, 5.0];
    for t in autodiff_targets() {
        let x = f32s(&data, [6, 1], &t.device).require_grad();
        let index = SegmentIds::new(ids(&[0, 0, 0, 0, 1, 1], &t.device, false), 2);
        let q = index.quantile(x.clone(), 0.4, Interp::Linear).unwrap();
        let grad = read(x.grad(&q.slice(0..1).sum().backward()).expect("a gradient"));
        assert_close(t.name, &grad, &[0.0, 0.2, 0.8, 0.0, 0.0, 0.0], 1e-6, 1e-6);
        let x = f32s(&data, [6, 1], &t.device).require_grad();
        let median = index.median(x.clone());
        assert_eq!(read(median.clone()), [2.0, 5.0], "{}", t.name);
        let grad = read(x.grad(&median.sum().backward()).expect("a gradient"));
        assert_eq!(grad, [0.0, 0.0, 1.0, 0.0, 1.0, 0.0], "{}", t.name);
    }
}
