//! `SegmentPlan`: what it holds, the errors it returns, and planned ops equal to the free
//! functions on every backend (the references and gradients run through `Path::Planned` in the
//! other files).

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{DType, Tensor};
use burn::tensor::{Device, Int, TensorData};
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
fn a_plan_of_partitions_groups_consecutive_rows_and_rejects_bad_sizes() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let plan = SegmentPlan::from_partitions(ids(&[2, 0, 3], &t.device, false), 5).unwrap();
        assert!(plan.is_sorted(), "{}", t.name);
        assert_eq!(
            read_int(plan.segment_ids().clone()),
            [0, 0, 2, 2, 2],
            "{}",
            t.name
        );
        let x = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0], [5, 1], &t.device);
        let want = read(burn_segment::partition_sum(
            x.clone(),
            ids(&[2, 0, 3], &t.device, false),
        ));
        assert_eq!(read(plan.sum(x)), want, "{}", t.name);
        let short = SegmentPlan::from_partitions(ids(&[2, 2], &t.device, false), 5);
        let want = SegmentError::PartitionSumMismatch { sum: 4, rows: 5 };
        assert_eq!(short.unwrap_err(), want, "{}", t.name);
        let negative = SegmentPlan::from_partitions(ids(&[6, -1], &t.device, false), 5);
        let want = SegmentError::NegativePartition { index: 1, size: -1 };
        assert_eq!(negative.unwrap_err(), want, "{}", t.name);
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
        let gathered = plan.gather(f32s(&[1.0, 2.0, 3.0], [3, 1], &t.device));
        assert_eq!(gathered.dims(), [0, 1], "{}", t.name);
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
            let tol = if t.is_cube() { 1e-6 } else { 0.0 };
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

/// Free functions over many unsorted rows of few columns (the CPU backends stream the rows
/// through a few owners of segment ranges instead of planning them) give the planned ops' bits: sums with a segment long
/// enough to be summed in chunks, extremes with ties, NaN and -inf, and their arguments, with
/// i32 and i64 ids.
#[test]
fn unplanned_reductions_over_many_unsorted_rows_give_the_planned_bits() {
    let (e, n) = (300_000usize, 20_000usize);
    let mut state = 11u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    // Every fourth row in segment 7 (75,000 rows); the last segments empty.
    let seg: Vec<i64> = (0..e)
        .map(|r| {
            if r % 4 == 0 {
                7
            } else {
                (next() % (n as u64 - 5)) as i64
            }
        })
        .collect();
    for d in [1usize, 16] {
        let data: Vec<f64> = (0..e * d)
            .map(|_| match next() % 1000 {
                0 => f64::NAN,
                1 => f64::NEG_INFINITY,
                v => (v % 50) as f64 / 8.0 - 3.0,
            })
            .collect();
        let sums: Vec<f64> = (0..e * d).map(|k| ((k * 37) % 1001) as f64 / 7.0).collect();
        let sums: Vec<f64> = as_f32(&sums);
        for t in targets()
            .into_iter()
            .filter(|t| t.path == Path::Public && !t.is_cube())
        {
            for i32_ids in [false, true] {
                let dev = &t.device;
                let plan = SegmentPlan::new(ids(&seg, dev, i32_ids), n).unwrap();
                let i = || ids(&seg, dev, i32_ids);
                let (x, y) = (f32s(&data, [e, d], dev), f32s(&sums, [e, d], dev));
                let name = format!("{} d = {d} i32 ids: {i32_ids}", t.name);
                let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
                assert_eq!(
                    bits(read(burn_segment::segment_sum(y.clone(), i(), n))),
                    bits(read(plan.sum(y))),
                    "{name}: sum"
                );
                for (free, planned) in [
                    (
                        burn_segment::segment_max_with_indices(x.clone(), i(), n),
                        plan.max_with_indices(x.clone()),
                    ),
                    (
                        burn_segment::segment_min_with_indices(x.clone(), i(), n),
                        plan.min_with_indices(x.clone()),
                    ),
                ] {
                    assert_eq!(bits(read(free.0)), bits(read(planned.0)), "{name}: extreme");
                    assert_eq!(read_int(free.1), read_int(planned.1), "{name}: argument");
                }
            }
        }
    }
}

/// Planned reductions over unsorted ids take the sorted, atomic-free kernels on every backend:
/// the same bits on every call, and the CPU kernels' bits for sums, extremes and `spmm`
/// (segments under 4,096 rows); softmax and attention (whose `exp` differs between devices)
/// repeat their bits and stay close to the CPU's.
#[test]
fn planned_reductions_over_unsorted_ids_are_repeatable_and_equal_the_cpu_bits() {
    let (e, n, d) = (5000usize, 50usize, 4usize);
    let mut state = 7u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let seg: Vec<i64> = (0..e).map(|_| (next() % n as u64) as i64).collect();
    let data: Vec<f64> = (0..e * d)
        .map(|_| (next() % 20001) as f64 / 1000.0 - 10.0)
        .map(|v| v as f32 as f64)
        .collect();
    let run = |device: &burn::tensor::Device| {
        let plan = SegmentPlan::new(ids(&seg, device, true), n).unwrap();
        let x = || f32s(&data, [e, d], device);
        let (max, arg) = plan.max_with_indices(x());
        (
            read(plan.sum(x())),
            read(max),
            read_int(arg),
            read(plan.softmax(x())),
            read(SegmentPlan::spmm(
                f32s(&data[..n * d], [n, d], device),
                &plan,
                &plan,
                None,
            )),
        )
    };
    let cpu = run(&Device::flex());
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        let (first, again) = (run(&t.device), run(&t.device));
        assert_eq!(
            first.0, again.0,
            "{}: planned sums differ between calls",
            t.name
        );
        assert_eq!(
            first.4, again.4,
            "{}: planned spmm differs between calls",
            t.name
        );
        assert_eq!(first.0, cpu.0, "{}: planned sum vs the CPU's bits", t.name);
        assert_eq!(first.1, cpu.1, "{}: planned max", t.name);
        assert_eq!(first.2, cpu.2, "{}: planned argmax", t.name);
        assert_eq!(first.4, cpu.4, "{}: planned spmm vs the CPU's bits", t.name);
        assert_close(t.name, &first.3, &cpu.3, 1e-6, 1e-7);
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
        SegmentPlan::spmm(x.clone(), &plan, &plan, None)
    }));
    let msg = *err.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("the spmm sender plan has 2 segments but indexes 3 rows"),
        "{msg}"
    );
}

/// Forward and backward, the CPU kernels read the plan they are given and plan nothing per call
/// (counted per thread, so parallel tests do not interfere).
#[test]
fn planned_forward_and_backward_passes_plan_nothing_per_call() {
    let device = Device::flex().autodiff();
    let ids =
        |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &device);
    let (senders, receivers) = (ids(&[0, 2, 1, 2, 0]), ids(&[1, 0, 1, 2, 1]));
    let senders = SegmentPlan::new(senders, 3).unwrap();
    let receivers = SegmentPlan::new(receivers, 3).unwrap();
    let x = Tensor::<2>::from_floats([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], &device).require_grad();
    let scores = Tensor::<2>::from_floats([[0.1], [0.7], [-0.3]], &device).require_grad();

    let before = burn_segment::cpu::unplanned_calls_on_this_thread();
    let messages = receivers.gather(x.clone()) * 2.0;
    let alpha = SegmentPlan::attention_softmax(
        scores.clone(),
        scores.clone(),
        &senders,
        &receivers,
        None,
        0.2,
    );
    let h = SegmentPlan::spmm(x.clone(), &senders, &receivers, Some(alpha));
    let pooled = receivers.sum(messages.clone())
        + receivers.max(messages.clone())
        + receivers.mean(messages.clone())
        + receivers.logsumexp(messages.clone())
        + receivers.prod(messages.clone());
    let loss = (h + pooled).sum() + receivers.softmax(messages).sum();
    let grads = loss.backward();
    let (gx, gs) = (x.grad(&grads).unwrap(), scores.grad(&grads).unwrap());
    assert!(gx.into_data().iter::<f32>().all(f32::is_finite));
    assert!(gs.into_data().iter::<f32>().all(f32::is_finite));
    assert_eq!(
        burn_segment::cpu::unplanned_calls_on_this_thread(),
        before,
        "a planned op planned its ids per call"
    );

    // The check can fail: the same op unplanned plans per call.
    let before = burn_segment::cpu::unplanned_calls_on_this_thread();
    let rows = receivers.gather(x);
    let _ = burn_segment::segment_sum(rows, receivers.segment_ids().clone(), 3);
    assert!(burn_segment::cpu::unplanned_calls_on_this_thread() > before);
}

#[test]
fn weights_are_checked_once_with_a_typed_error() {
    for t in targets().into_iter().filter(|t| t.path == Path::Public) {
        for (bad, position) in [(f64::NAN, 2), (-0.5, 2), (f64::INFINITY, 2)] {
            let w = f32s(&[1.0, 0.0, bad, -1.0], [4], &t.device);
            match burn_segment::SegmentWeights::new(w).unwrap_err() {
                SegmentError::BadWeight {
                    position: p,
                    weight,
                } => {
                    assert_eq!(p, position, "{}", t.name);
                    assert!(weight.is_nan() == bad.is_nan() && (bad.is_nan() || weight == bad));
                }
                other => panic!("{}: {other:?}", t.name),
            }
        }
        let good = f32s(&[1.0, 0.0, 2.5], [3], &t.device);
        assert!(
            burn_segment::SegmentWeights::new(good).is_ok(),
            "{}",
            t.name
        );
    }
}
