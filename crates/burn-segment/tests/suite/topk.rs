//! Top-k, quantiles and medians on every backend and through plans against the reference (a full stable sort per
//! segment and column), with ties, NaN, ±inf and segments shorter than `k`; gradients reach the
//! selected rows only.

use burn::tensor::DType;
use burn_segment::reference::{segment_quantile_reference, segment_topk_reference};
use burn_segment::{
    QuantileInterpolation as Interp, SegmentError, SegmentIds, SegmentStatistics, Segments,
};
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

/// Long segments (longer than `k` and than the kernel's 32 slots) full of ties, NaN, ±inf and
/// `±0`, sorted, unsorted and planned, with `k` on both sides of the wgpu kernel's limit: every
/// backend selects the reference's rows, and on wgpu the sorted and planned calls with
/// `k ≤ 32` run the kernel (unsorted ids without a plan take the host default).
#[test]
fn topk_of_long_segments_with_ties_matches_the_reference() {
    let (n, d) = (4, 3);
    let mut ids_sorted: Vec<i64> = Vec::new();
    for (s, len) in [200, 0, 57, 33].into_iter().enumerate() {
        ids_sorted.extend(std::iter::repeat_n(s as i64, len));
    }
    let e = ids_sorted.len();
    let mut state = 0x2545_f491_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) as usize
    };
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    let data: Vec<f64> = (0..e * d)
        .map(|_| match next() % 10 {
            0 => specials[next() % specials.len()],
            _ => (next() % 7) as f64 - 3.0,
        })
        .collect();
    // A shuffled copy of the same rows for the unsorted cases.
    let mut order: Vec<usize> = (0..e).collect();
    for i in (1..e).rev() {
        order.swap(i, next() % (i + 1));
    }
    let ids_shuffled: Vec<i64> = order.iter().map(|&r| ids_sorted[r]).collect();
    let data_shuffled: Vec<f64> = order
        .iter()
        .flat_map(|&r| data[r * d..(r + 1) * d].iter().copied())
        .collect();
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for (case, (x, segment)) in [
            ("sorted", (&data, &ids_sorted)),
            ("unsorted", (&data_shuffled, &ids_shuffled)),
        ] {
            for planned in [false, true] {
                for k in [1, 8, 32, 33] {
                    for largest in [true, false] {
                        let what =
                            format!("{} {case} planned = {planned} k = {k} {largest}", t.name);
                        let (want_v, want_rows) =
                            segment_topk_reference(x, d, segment, n, k, largest);
                        let seg = ids(segment, &t.device, k % 2 == 0);
                        let data = f32s(x, [e, d], &t.device);
                        let before = cube_calls();
                        let (values, rows) = match planned {
                            true => plan(seg, n).topk(data, k, largest),
                            false => SegmentIds::new(seg, n).topk(data, k, largest),
                        };
                        let rows = read_int(rows.reshape([n * k * d]));
                        let calls = cube_calls() - before;
                        assert_eq!(rows, want_rows, "{what}");
                        let got = read(values.reshape([n * k, d]));
                        assert_close(&what, &got, &want_v, 0.0, 0.0);
                        // (Other tests running at the same time may add calls too, so only
                        // the kernel's own call is asserted.)
                        if t.is_cube() && k <= 32 && (planned || case == "sorted") {
                            assert!(calls > 0, "{what}: the host default ran");
                        }
                    }
                }
            }
        }
    }
}
