//! `SegmentPlan`: what it holds, the errors it returns, and planned ops equal to the free
//! functions on every backend (the references and gradients run through `Path::Planned` in the
//! other files).

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{DType, Tensor};
use burn_segment::reference::*;
use burn_segment::{SegmentError, SegmentPlan, SegmentReduction, Segments};

use crate::common::*;

/// Hand-worked: ids `[2, 0, 2, 1, 0]` over 4 segments group as rows `[1, 4 | 3 | 0, 2 | ]`.
#[test]
fn a_plan_holds_offsets_counts_and_sortedness() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for i32_ids in [false, true] {
            let plan = SegmentPlan::new(ids(&[2, 0, 2, 1, 0], &t.device, i32_ids), 4).unwrap();
            assert_eq!((plan.num_segments(), plan.num_rows()), (4, 5), "{}", t.name);
            assert!(!plan.is_sorted(), "{}", t.name);
            assert_eq!(
                read_int(plan.offsets().clone()),
                [0, 2, 3, 5, 5],
                "{}",
                t.name
            );
            assert_eq!(read_int(plan.count()), [2, 1, 2, 0], "{}", t.name);
            let sorted = SegmentPlan::new(ids(&[0, 0, 1, 3], &t.device, i32_ids), 4).unwrap();
            assert!(sorted.is_sorted(), "{}", t.name);
            assert_eq!(
                read_int(sorted.offsets().clone()),
                [0, 2, 3, 3, 4],
                "{}",
                t.name
            );
        }
    }
}

#[test]
fn a_plan_rejects_bad_ids_with_a_typed_error_on_every_backend() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for (bad, position, id) in [(&[0, 1, 3, 9][..], 3, 9), (&[0, -1, 5][..], 1, -1)] {
            let err = SegmentPlan::new(ids(bad, &t.device, true), 4).unwrap_err();
            let want = SegmentError::IdOutOfRange {
                id,
                position,
                num_segments: 4,
            };
            assert_eq!(err, want, "{}", t.name);
        }
    }
}

#[test]
fn an_empty_plan_and_empty_segments_reduce_to_the_identities() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let plan = SegmentPlan::new(ids(&[], &t.device, false), 3).unwrap();
        let x = Tensor::<2>::zeros([0, 2], &t.device);
        assert_eq!(read(plan.sum(x.clone())), [0.0; 6], "{}", t.name);
        assert_eq!(read(plan.max(x)), [f64::NEG_INFINITY; 6], "{}", t.name);
        assert_eq!(read_int(plan.count()), [0; 3], "{}", t.name);
    }
}

#[test]
fn planned_ops_give_the_free_functions_bits() {
    // Unsorted ids with an empty segment, and ties, so arguments and sums are exercised.
    let seg = [3i64, 0, 3, 1, 0, 3, 1, 0, 0, 4];
    let data: Vec<f64> = (0..seg.len() * 3)
        .map(|k| as_f32(&[((k * 37 + 11) % 23) as f64 / 4.0 - 2.5])[0])
        .collect();
    let n = 6;
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let dev = &t.device;
        let x = || f32s(&data, [seg.len(), 3], dev);
        let i = || ids(&seg, dev, true);
        let plan = SegmentPlan::new(i(), n).unwrap();
        // wgpu sums unsorted ids with atomics: the order of additions may differ per call.
        let exact = |what: &str, got: Tensor<2>, want: Tensor<2>| {
            let tol = if t.name.contains("wgpu") { 1e-6 } else { 0.0 };
            assert_close(
                &format!("{} {what}", t.name),
                &read(got),
                &read(want),
                tol,
                tol,
            );
        };
        exact("sum", plan.sum(x()), burn_segment::segment_sum(x(), i(), n));
        exact(
            "prod",
            plan.prod(x()),
            burn_segment::segment_prod(x(), i(), n),
        );
        exact("max", plan.max(x()), burn_segment::segment_max(x(), i(), n));
        exact("min", plan.min(x()), burn_segment::segment_min(x(), i(), n));
        exact(
            "mean",
            plan.mean(x()),
            burn_segment::segment_mean(x(), i(), n),
        );
        exact(
            "softmax",
            plan.softmax(x()),
            burn_segment::segment_softmax(x(), i(), n),
        );
        let lse = burn_segment::segment_logsumexp(x(), i(), n);
        exact("logsumexp", plan.logsumexp(x()), lse);
        let arg = burn_segment::segment_argmax(x(), i(), n);
        assert_eq!(read_int(plan.argmax(x())), read_int(arg), "{}", t.name);
        let arg = burn_segment::segment_argmin(x(), i(), n);
        assert_eq!(read_int(plan.argmin(x())), read_int(arg), "{}", t.name);
        let want = segment_reduce_reference(&data, 3, &seg, n, SegmentReduction::Sum);
        assert_close(t.name, &read(plan.sum(x())), &want, 1e-6, 1e-6);
        let gathered = plan.gather(f32s(&data[..n * 3], [n, 3], dev));
        let want: Vec<f64> = seg
            .iter()
            .flat_map(|&s| data[s as usize * 3..s as usize * 3 + 3].to_vec())
            .collect();
        assert_eq!(read(gathered), want, "{} gather", t.name);
        // Int data.
        let xi = ints(&[5, -2, 7, 1, 0, 3, 3, -8, 2, 9], [10, 1], dev, DType::I32);
        let got = plan.sum(xi.clone());
        let want = burn_segment::segment_sum(xi, i(), n);
        assert_eq!(read_int(got), read_int(want), "{} int sum", t.name);
    }
}

#[test]
fn a_plan_moved_to_another_device_gives_the_same_results() {
    let seg = [1i64, 0, 1, 2];
    let data = [1.0, 2.0, 3.0, 4.0];
    let flex = burn::tensor::Device::flex();
    let plan = SegmentPlan::new(ids(&seg, &flex, false), 3).unwrap();
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let moved = plan.to_device(&t.device);
        let got = read(moved.sum(f32s(&data, [4, 1], &t.device)));
        assert_eq!(got, [2.0, 4.0, 4.0], "{}", t.name);
    }
}

#[test]
fn planned_ops_name_a_row_count_that_does_not_match_the_plan() {
    let dev = burn::tensor::Device::flex();
    let plan = SegmentPlan::new(ids(&[0, 1, 1], &dev, false), 2).unwrap();
    let err = catch_unwind(AssertUnwindSafe(|| plan.sum(f32s(&[1.0; 4], [4, 1], &dev))));
    let msg = *err.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("data has 4 rows (dim 0) but the plan's segment_ids has 3 entries"),
        "{msg}"
    );
    let x = f32s(&[1.0; 6], [3, 2], &dev);
    let err = catch_unwind(AssertUnwindSafe(|| {
        burn_segment::spmm_planned(x.clone(), &plan, &plan, None)
    }));
    let msg = *err.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("the spmm sender plan has 2 segments but indexes 3 rows"),
        "{msg}"
    );
}
