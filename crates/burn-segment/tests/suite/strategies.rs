//! Sizes and id orders that reach every strategy of every backend: sorted ids (CSR kernels),
//! unsorted ids (atomics on wgpu), many workgroups, empty segments, and out-of-range ids on the
//! backends that drop them.

use burn_segment::reference::*;
use burn_segment::{SegmentExtreme, SegmentReduction};

use crate::common::*;

/// `e` ids in `0..n` (a few segments left empty) and `e * d` values with many ties.
fn case(e: usize, d: usize, n: usize, seed: u64) -> (Vec<i64>, Vec<f64>) {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    let ids = (0..e)
        .map(|_| (next() % n as u64) as i64)
        .filter(|&s| s % 7 != 3)
        .collect::<Vec<_>>();
    let rows = ids.len();
    let data = (0..rows * d)
        .map(|_| (next() % 64) as f64 / 8.0 - 4.0)
        .collect();
    (ids, data)
}

#[test]
fn many_rows_sorted_and_unsorted_match_the_reference() {
    let (d, n) = (3, 41);
    let (unsorted, data) = case(1500, d, n, 7);
    let mut sorted = unsorted.clone();
    sorted.sort();
    for t in targets() {
        for (order, seg) in [("sorted", &sorted), ("unsorted", &unsorted)] {
            for i32_ids in [true, false] {
                let what = |op: &str| format!("{} {order} i32_ids={i32_ids}: {op}", t.name);
                let e = seg.len();
                let x = || f32s(&data, [e, d], &t.device);
                let ids = || ids(seg, &t.device, i32_ids);
                let sum = read(reduce(&t, x(), ids(), n, SegmentReduction::Sum));
                let want = segment_reduce_reference(&data, d, seg, n, SegmentReduction::Sum);
                assert_close(&what("sum"), &sum, &want, 1e-5, 1e-4);
                for which in [SegmentExtreme::Max, SegmentExtreme::Min] {
                    let (v, a) = extreme(&t, x(), ids(), n, which);
                    let (want_v, want_a) = segment_extreme_reference(&data, d, seg, n, which);
                    assert_eq!(
                        (read(v), read_int(a)),
                        (want_v, want_a),
                        "{}",
                        what("max/min")
                    );
                }
                let y = read(softmax(&t, x(), ids(), n));
                let want = segment_softmax_reference(&data, d, seg, n);
                assert_close(&what("softmax"), &y, &want, 1e-5, 1e-6);
                let c = read_int(count(&t, ids(), n));
                assert_eq!(c, segment_count_reference(seg, n), "{}", what("count"));
                let ints: Vec<i64> = data.iter().map(|v| (v * 8.0) as i64).collect();
                let xi = || ints_2d(&ints, [e, d], &t.device);
                let ints_f: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
                let got = read_int(reduce(&t, xi(), ids(), n, SegmentReduction::Sum));
                let want = segment_reduce_reference(&ints_f, d, seg, n, SegmentReduction::Sum);
                assert_eq!(
                    got,
                    want.iter().map(|&v| v as i64).collect::<Vec<_>>(),
                    "{}",
                    what("int sum")
                );
                let (v, a) = extreme(&t, xi(), ids(), n, SegmentExtreme::Max);
                let (want_v, want_a) =
                    segment_extreme_reference(&ints_f, d, seg, n, SegmentExtreme::Max);
                let want_v: Vec<i64> = want_v
                    .iter()
                    .map(|&v| {
                        if v.is_infinite() {
                            i32::MIN as i64
                        } else {
                            v as i64
                        }
                    })
                    .collect();
                let got_v: Vec<i64> = read_int(v)
                    .into_iter()
                    .map(|v| v.max(i32::MIN as i64))
                    .collect();
                assert_eq!(
                    (got_v, read_int(a)),
                    (want_v, want_a),
                    "{}",
                    what("int max")
                );
            }
        }
    }
}

#[test]
fn results_are_bitwise_repeatable_where_the_contract_says_so() {
    let (d, n) = (4, 29);
    let (unsorted, data) = case(900, d, n, 11);
    let mut sorted = unsorted.clone();
    sorted.sort();
    let flex = targets().into_iter().find(|t| t.name == "flex").unwrap();
    let bits = |v: Vec<f64>| {
        v.into_iter()
            .map(|x| (x as f32).to_bits())
            .collect::<Vec<_>>()
    };
    let e = sorted.len();
    // Sorted ids: every backend sums each segment in row order, so all agree with the Flex
    // kernels to the bit, and so do two runs of softmax.
    let flex_sum = bits(read(reduce(
        &flex,
        f32s(&data, [e, d], &flex.device),
        ids(&sorted, &flex.device, true),
        n,
        SegmentReduction::Sum,
    )));
    for t in targets() {
        let x = || f32s(&data, [e, d], &t.device);
        let sum = bits(read(reduce(
            &t,
            x(),
            ids(&sorted, &t.device, true),
            n,
            SegmentReduction::Sum,
        )));
        assert_eq!(
            sum, flex_sum,
            "{}: sorted sum differs from the Flex kernel's",
            t.name
        );
        let a = bits(read(softmax(&t, x(), ids(&sorted, &t.device, true), n)));
        let b = bits(read(softmax(&t, x(), ids(&sorted, &t.device, true), n)));
        assert_eq!(a, b, "{}: sorted softmax not repeatable", t.name);
        // Unsorted ids: max, argmax and count are exact whatever the order of the atomics.
        let run = || {
            let (v, a) = extreme(
                &t,
                x(),
                ids(&unsorted, &t.device, false),
                n,
                SegmentExtreme::Max,
            );
            (
                bits(read(v)),
                read_int(a),
                read_int(count(&t, ids(&unsorted, &t.device, false), n)),
            )
        };
        assert_eq!(
            run(),
            run(),
            "{}: unsorted max/argmax/count not repeatable",
            t.name
        );
        // The fused sum over sorted receivers folds each receiver's edges in edge order.
        let senders = ids(&unsorted, &t.device, true);
        let spmm = || {
            bits(read(burn_segment::spmm(
                f32s(&data[..n * d], [n, d], &t.device),
                senders.clone(),
                ids(&sorted, &t.device, true),
                None,
                n,
            )))
        };
        assert_eq!(spmm(), spmm(), "{}: sorted spmm not repeatable", t.name);
    }
}

#[test]
fn backends_that_drop_out_of_range_ids_drop_them_in_any_order() {
    let data = [1.0, 2.0, 4.0, 8.0, 16.0];
    for t in targets().into_iter().filter(Target::drops_bad_ids) {
        for seg in [[0i64, 7, 1, -2, 1], [-2, 0, 1, 1, 7]] {
            for i32_ids in [true, false] {
                let what = format!("{} ids={seg:?} i32_ids={i32_ids}", t.name);
                let x = || f32s(&data, [5, 1], &t.device);
                let ids = || ids(&seg, &t.device, i32_ids);
                let sum = read(reduce(&t, x(), ids(), 2, SegmentReduction::Sum));
                assert_eq!(
                    sum,
                    segment_reduce_reference(&data, 1, &seg, 2, SegmentReduction::Sum),
                    "{what}"
                );
                let (max, arg) = extreme(&t, x(), ids(), 2, SegmentExtreme::Max);
                let want = segment_extreme_reference(&data, 1, &seg, 2, SegmentExtreme::Max);
                assert_eq!((read(max), read_int(arg)), want, "{what}");
                assert_eq!(
                    read_int(count(&t, ids(), 2)),
                    segment_count_reference(&seg, 2),
                    "{what}"
                );
                let y = read(softmax(&t, x(), ids(), 2));
                let want = segment_softmax_reference(&data, 1, &seg, 2);
                for (i, &s) in seg.iter().enumerate() {
                    // The composite path leaves dropped rows unspecified; the kernels write 0.
                    if (0..2).contains(&s) || t.path == Path::Public {
                        assert!(
                            (y[i] - want[i]).abs() < 1e-6,
                            "{what}: softmax row {i}: {} vs {}",
                            y[i],
                            want[i]
                        );
                    }
                }
                if t.path == Path::Public {
                    // The fused kernels drop an edge whose sender or receiver is out of range
                    // (spmm) and give 0 for it (sddmm), with sorted and unsorted receivers.
                    let rows = || crate::common::ids(&[0, 1, 2, 3, 4], &t.device, i32_ids);
                    let by_receiver = read(burn_segment::spmm(x(), rows(), ids(), None, 2));
                    assert_eq!(
                        by_receiver,
                        segment_reduce_reference(&data, 1, &seg, 2, SegmentReduction::Sum),
                        "{what}: spmm receivers"
                    );
                    for receivers in [[0i64, 0, 1, 1, 1], [1, 0, 1, 0, 1]] {
                        let by_sender = read(burn_segment::spmm(
                            x(),
                            ids(),
                            crate::common::ids(&receivers, &t.device, i32_ids),
                            None,
                            2,
                        ));
                        let mut want = vec![0.0; 2];
                        for (&s, &r) in seg.iter().zip(&receivers) {
                            if (0..5).contains(&s) {
                                want[r as usize] += data[s as usize];
                            }
                        }
                        assert_eq!(
                            by_sender, want,
                            "{what}: spmm senders, receivers {receivers:?}"
                        );
                    }
                    let want: Vec<f64> = seg
                        .iter()
                        .enumerate()
                        .map(|(e, &s)| {
                            if (0..5).contains(&s) {
                                data[s as usize] * data[e]
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    assert_eq!(
                        read(burn_segment::sddmm(x(), x(), ids(), rows(), 1)),
                        want,
                        "{what}: sddmm, bad a_index"
                    );
                    assert_eq!(
                        read(burn_segment::sddmm(x(), x(), rows(), ids(), 1)),
                        want,
                        "{what}: sddmm, bad b_index"
                    );
                }
            }
        }
    }
}

#[cfg(feature = "cube")]
#[test]
fn wgpu_calls_reach_the_cubecl_kernels_through_fusion() {
    for t in targets().into_iter().filter(|t| t.is_cube()) {
        let before = burn_segment::wgpu_kernel_calls();
        let x = f32s(&[1.0, 2.0, 3.0], [3, 1], &t.device);
        let seg = ids(&[1, 0, 1], &t.device, true);
        let _ = read(reduce(&t, x.clone(), seg.clone(), 2, SegmentReduction::Sum));
        let _ = read(softmax(&t, x.clone(), seg.clone(), 2));
        let _ = read_int(extreme(&t, x.clone(), seg.clone(), 2, SegmentExtreme::Max).1);
        let _ = read_int(count(&t, seg.clone(), 2));
        let _ = read(burn_segment::spmm(
            x.clone(),
            seg.clone(),
            seg.clone(),
            None,
            2,
        ));
        let _ = read(burn_segment::sddmm(
            x.clone(),
            x.clone(),
            seg.clone(),
            seg.clone(),
            1,
        ));
        let scores = f32s(&[1.0, 2.0], [2, 1], &t.device);
        let _ = read(burn_segment::attention_softmax(
            x,
            scores,
            seg.clone(),
            seg,
            None,
            0.2,
        ));
        let calls = burn_segment::wgpu_kernel_calls() - before;
        assert!(
            calls >= 7,
            "{}: {calls} kernel calls for 7 ops (composite path taken?)",
            t.name
        );
    }
}
