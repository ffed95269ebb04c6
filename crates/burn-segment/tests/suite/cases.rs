//! Hand-picked cases: higher ranks, f64, stability, degenerate sizes and bad input.

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{DType, Tensor};
use burn_segment::reference::*;
use burn_segment::{
    SegmentError, SegmentExtreme, SegmentReduction, SegmentStatistics, validate_partitions,
    validate_segment_ids,
};

use crate::common::*;

#[test]
fn rank_three_data_reduces_the_leading_dim() {
    let data: Vec<f64> = (0..5 * 2 * 3)
        .map(|v| ((v * 7) % 11) as f64 - 5.0)
        .collect();
    let seg = [1i64, 0, 1, 3, 1];
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let x = Tensor::<3>::from_data(
            burn::tensor::TensorData::new(data.clone(), [5, 2, 3]),
            &t.device,
        );
        let out = burn_segment::segment_sum(x.clone(), ids(&seg, &t.device, false), 4);
        assert_eq!(out.dims(), [4, 2, 3]);
        let want = segment_reduce_reference(&data, 6, &seg, 4, SegmentReduction::Sum);
        assert_close(t.name, &read(out), &want, 0.0, 1e-6);
        let (max, arg) =
            burn_segment::segment_max_with_indices(x.clone(), ids(&seg, &t.device, false), 4);
        let (want_v, want_a) = segment_extreme_reference(&data, 6, &seg, 4, SegmentExtreme::Max);
        assert_close(t.name, &read(max), &want_v, 0.0, 0.0);
        assert_eq!(read_int(arg), want_a, "{}", t.name);
        let y = burn_segment::segment_softmax(x, ids(&seg, &t.device, false), 4);
        assert_eq!(y.dims(), [5, 2, 3]);
        assert_close(
            t.name,
            &read(y),
            &segment_softmax_reference(&data, 6, &seg, 4),
            1e-6,
            1e-6,
        );
    }
}

#[test]
fn f64_data_keeps_f64_precision() {
    let data = [1.0 + 1e-12, 2.0, -3.0 + 1e-13, 4.0];
    let seg = [0i64, 1, 0, 1];
    for t in targets().into_iter().filter(Target::f64) {
        let x = floats(&data, [4, 1], &t.device, DType::F64);
        let out = reduce(
            &t,
            x.clone(),
            ids(&seg, &t.device, false),
            2,
            SegmentReduction::Sum,
        );
        assert_eq!(out.dtype(), DType::F64, "{}", t.name);
        let want = segment_reduce_reference(&data, 1, &seg, 2, SegmentReduction::Sum);
        assert_close(t.name, &read(out), &want, 1e-15, 0.0);
        let y = softmax(&t, x, ids(&seg, &t.device, false), 2);
        assert_close(
            t.name,
            &read(y),
            &segment_softmax_reference(&data, 1, &seg, 2),
            1e-14,
            0.0,
        );
    }
}

#[test]
fn softmax_is_stable_for_huge_logits_and_one_row_gives_one() {
    let data = [1e4, -1e4, 1e4 - 1.0, 5.0, -1e4, -1e4 + 2.0];
    let seg = [0i64, 0, 0, 1, 2, 2];
    for t in targets() {
        let y = read(softmax(
            &t,
            f32s(&data, [6, 1], &t.device),
            ids(&seg, &t.device, true),
            3,
        ));
        assert!(y.iter().all(|v| v.is_finite()), "{}: {y:?}", t.name);
        assert_close(
            t.name,
            &y,
            &segment_softmax_reference(&as_f32(&data), 1, &seg, 3),
            1e-5,
            1e-6,
        );
        assert_eq!(y[3], 1.0, "{}", t.name);
    }
}

/// A softmax input that its caller alone owns is overwritten with the result (no output to
/// allocate); one the caller still holds must keep its values. Both give the same result, NaN
/// and infinities included, for sorted and unsorted ids.
#[test]
fn softmax_over_an_owned_input_matches_a_shared_one_which_stays_intact() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    #[rustfmt::skip]
    let data = [
        0.5, -1.0, nan, 3.0,
        2.0, -inf, 1.0, -inf,
        -3.0, 4.0, 0.0, 1.5,
        inf, -inf, 7.0, -2.5,
        1.0, -inf, -4.0, 0.25,
        6.0, 2.0, 5.0, -inf,
    ];
    for seg in [[0i64, 0, 1, 1, 3, 3], [3, 0, 1, 0, 3, 1]] {
        let want = segment_softmax_reference(&data, 4, &seg, 4);
        for t in targets().into_iter().filter(|t| t.path == Path::Public) {
            let x = f32s(&data, [6, 4], &t.device);
            let shared = read(burn_segment::segment_softmax(
                x.clone(),
                ids(&seg, &t.device, false),
                4,
            ));
            let kept = read(x.clone());
            let owned = read(burn_segment::segment_softmax(
                x,
                ids(&seg, &t.device, false),
                4,
            ));
            assert_close(
                &format!("{} shared {seg:?}", t.name),
                &shared,
                &want,
                1e-6,
                1e-6,
            );
            assert_close(
                &format!("{} owned {seg:?}", t.name),
                &owned,
                &shared,
                0.0,
                0.0,
            );
            assert_close(
                &format!("{} input kept {seg:?}", t.name),
                &kept,
                &as_f32(&data),
                0.0,
                0.0,
            );
        }
    }
}

#[test]
fn no_rows_and_no_segments() {
    for t in targets() {
        let empty = f32s(&[], [0, 3], &t.device);
        let out = reduce(
            &t,
            empty.clone(),
            ids(&[], &t.device, false),
            2,
            SegmentReduction::Max,
        );
        assert_eq!(out.dims(), [2, 3]);
        assert!(
            read(out).iter().all(|&v| v == f64::NEG_INFINITY),
            "{}",
            t.name
        );
        let (_, arg) = extreme(
            &t,
            empty.clone(),
            ids(&[], &t.device, false),
            2,
            SegmentExtreme::Min,
        );
        assert_eq!(read_int(arg), vec![-1; 6], "{}", t.name);
        let prod = reduce(
            &t,
            empty.clone(),
            ids(&[], &t.device, false),
            2,
            SegmentReduction::Prod,
        );
        assert_eq!(read(prod), vec![1.0; 6], "{}", t.name);
        assert_eq!(
            softmax(&t, empty.clone(), ids(&[], &t.device, false), 2).dims(),
            [0, 3]
        );
        let none = reduce(
            &t,
            empty,
            ids(&[], &t.device, false),
            0,
            SegmentReduction::Sum,
        );
        assert_eq!(none.dims(), [0, 3], "{}", t.name);
        assert_eq!(
            read_int(count(&t, ids(&[], &t.device, false), 3)),
            vec![0; 3]
        );
    }
}

#[test]
fn out_of_range_ids_panic_on_cpu_naming_the_id() {
    for t in targets()
        .into_iter()
        .filter(|t| t.path == Path::Public && !t.is_cube())
    {
        for bad in [5i64, -1] {
            let device = t.device.clone();
            let result = catch_unwind(AssertUnwindSafe(|| {
                let x = f32s(&[1.0, 2.0, 3.0], [3, 1], &device);
                burn_segment::segment_sum(x, ids(&[0, bad, 1], &device, false), 3).into_data()
            }));
            let err = result.expect_err(t.name);
            let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(
                msg.contains(&format!("segment id {bad} at position 1"))
                    && msg.contains("num_segments = 3"),
                "{}: {msg}",
                t.name
            );
            // A gathered index (spmm's senders) too, negative ones included.
            let result = catch_unwind(AssertUnwindSafe(|| {
                let x = f32s(&[1.0, 2.0, 3.0], [3, 1], &device);
                let (s, r) = (
                    ids(&[0, bad, 1], &device, true),
                    ids(&[0, 1, 2], &device, true),
                );
                burn_segment::spmm(x, s, r, None, 3).into_data()
            }));
            let err = result.expect_err(t.name);
            let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(
                msg.contains(&format!(
                    "sender index {bad} at position 1 is out of range for 3 rows"
                )),
                "{}: {msg}",
                t.name
            );
        }
    }
}

#[test]
fn mismatched_lengths_panic_with_a_clear_message() {
    let device = burn::tensor::Device::flex();
    let err = catch_unwind(|| {
        burn_segment::segment_sum(
            f32s(&[1.0, 2.0], [2, 1], &device),
            ids(&[0], &device, false),
            1,
        )
    })
    .expect_err("length mismatch");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("data has 2 rows (dim 0) but segment_ids has 1 entries"),
        "{msg}"
    );
}

#[test]
fn validation_returns_typed_errors() {
    let device = burn::tensor::Device::flex();
    let seg = ids(&[0, 3, 1], &device, true);
    assert_eq!(validate_segment_ids(&seg, 4, Some(3)), Ok(()));
    assert_eq!(
        validate_segment_ids(&seg, 3, None),
        Err(SegmentError::IdOutOfRange {
            id: 3,
            position: 1,
            num_segments: 3
        })
    );
    assert_eq!(
        validate_segment_ids(&seg, 4, Some(2)),
        Err(SegmentError::LengthMismatch { ids: 3, rows: 2 })
    );
    let parts = ids(&[2, 0, 3], &device, false);
    assert_eq!(validate_partitions(&parts, 5), Ok(()));
    assert_eq!(
        validate_partitions(&parts, 6),
        Err(SegmentError::PartitionSumMismatch { sum: 5, rows: 6 })
    );
    assert_eq!(
        validate_partitions(&ids(&[2, -1], &device, false), 1),
        Err(SegmentError::NegativePartition { index: 1, size: -1 })
    );
    let msg = SegmentError::IdOutOfRange {
        id: 9,
        position: 4,
        num_segments: 3,
    }
    .to_string();
    assert_eq!(
        msg,
        "segment id 9 at position 4 is out of range for num_segments = 3"
    );
}

#[test]
fn arguments_and_counts_use_the_ids_dtype() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for (i32_ids, dtype) in [(true, DType::I32), (false, DType::I64)] {
            let x = f32s(&[1.0, 5.0, 3.0], [3, 1], &t.device);
            let arg = burn_segment::segment_argmax(x, ids(&[0, 0, 1], &t.device, i32_ids), 2);
            assert_eq!(arg.dtype(), dtype, "{}", t.name);
            assert_eq!(read_int(arg), vec![1, 2]);
        }
    }
}

/// Ids edited in place (same length, same `num_segments`), or the same ids again after others,
/// give the reference results: no op ever reuses a plan built for other ids.
#[test]
fn repeated_and_edited_ids_never_reuse_a_stale_plan() {
    let data: Vec<f64> = (0..6 * 2).map(|v| ((v * 5) % 7) as f64 - 3.0).collect();
    let unsorted = [2i64, 0, 1, 0, 2, 1];
    let mut edited = unsorted;
    edited[3] = 1;
    let sorted = [0i64, 0, 1, 1, 2, 2];
    let mut sorted_edited = sorted;
    sorted_edited[2] = 0;
    let senders = [1i64, 3, 0, 2, 5, 4];
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for seg in [
            &unsorted,
            &edited,
            &unsorted,
            &sorted,
            &sorted_edited,
            &sorted,
            &edited,
        ] {
            for i32_ids in [false, true] {
                let x = f32s(&data, [6, 2], &t.device);
                let sum = burn_segment::segment_sum(x.clone(), ids(seg, &t.device, i32_ids), 3);
                let want = segment_reduce_reference(&data, 2, seg, 3, SegmentReduction::Sum);
                assert_close(t.name, &read(sum), &want, 1e-6, 1e-6);
                let max = burn_segment::segment_max(x.clone(), ids(seg, &t.device, i32_ids), 3);
                let (want, _) = segment_extreme_reference(&data, 2, seg, 3, SegmentExtreme::Max);
                assert_close(t.name, &read(max), &want, 0.0, 0.0);
                let y = burn_segment::segment_softmax(x.clone(), ids(seg, &t.device, i32_ids), 3);
                assert_close(
                    t.name,
                    &read(y),
                    &segment_softmax_reference(&data, 2, seg, 3),
                    1e-6,
                    1e-6,
                );
                let (s, r) = (
                    ids(&senders, &t.device, i32_ids),
                    ids(seg, &t.device, i32_ids),
                );
                let out = burn_segment::spmm(x, s, r, None, 3);
                let want = spmm_reference(&data, 2, &[1.0; 6], 1, &senders, seg, 3);
                assert_close(t.name, &read(out), &want, 1e-6, 1e-6);
            }
        }
    }
}

/// `count_nonzero` over the values that trip float comparisons: `-0` and `+0` do not count,
/// NaN, `±inf` and the smallest subnormal do; sorted and unsorted ids, i32 and i64, through a
/// plan and not, on every backend (on wgpu, its kernel compares bits).
#[test]
fn count_nonzero_counts_nan_and_subnormals_but_no_zero() {
    let tiny = f32::from_bits(1) as f64;
    let values = [
        -0.0,
        0.0,
        f64::NAN,
        tiny,
        f64::NEG_INFINITY,
        -0.0,
        2.0,
        f64::INFINITY,
    ];
    let data: Vec<f64> = (0..values.len() * 2)
        .map(|k| values[(k * 3) % values.len()])
        .collect();
    let sorted = [0i64, 0, 0, 1, 1, 3, 3, 3];
    let unsorted = [3i64, 0, 1, 0, 3, 1, 0, 3];
    for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
        for (form, seg) in [("sorted", sorted), ("unsorted", unsorted)] {
            let want = segment_count_nonzero_reference(&data, 2, &seg, 4);
            for i32_ids in [false, true] {
                let x = f32s(&data, [8, 2], &t.device);
                let index = ids(&seg, &t.device, i32_ids);
                let got = match t.path {
                    Path::Planned => plan(index, 4).count_nonzero(x),
                    _ => burn_segment::SegmentIds::new(index, 4).count_nonzero(x),
                };
                assert_eq!(read_int(got), want, "{} {form} i32 {i32_ids}", t.name);
            }
        }
    }
}
