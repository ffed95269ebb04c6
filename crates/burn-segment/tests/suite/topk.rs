//! Top-k on every backend and through plans against the reference (a full stable sort per
//! segment and column), with ties, NaN, ±inf and segments shorter than `k`; gradients reach the
//! selected rows only.

use burn::tensor::DType;
use burn_segment::reference::segment_topk_reference;
use burn_segment::{SegmentIds, Segments};
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
