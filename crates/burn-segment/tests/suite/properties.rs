//! Property tests: every op on every backend against the f64 reference, on random shapes, sorted
//! and unsorted ids, empty segments, ties, NaN and ±inf.

use burn::tensor::DType;
use burn_segment::reference::*;
use burn_segment::{
    SegmentExtreme, SegmentIds, SegmentReduction, SegmentStatistics, SegmentWeights, Segments,
};
use proptest::prelude::*;

use crate::common::*;

/// A random segment problem: `data: [e, d]`, `ids: [e]` in `[0, n)`.
#[derive(Clone, Debug)]
pub struct Case {
    pub e: usize,
    pub d: usize,
    pub n: usize,
    pub ids: Vec<i64>,
    pub data: Vec<f64>,
    pub i32_ids: bool,
}

/// Small integers (ties), plain floats, and now and then NaN or ±inf.
fn value(specials: bool) -> BoxedStrategy<f64> {
    let special_weight = if specials { 1 } else { 0 };
    prop_oneof![
        6 => (-3i32..=3).prop_map(f64::from),
        6 => -3.0f64..3.0,
        special_weight => Just(f64::NAN),
        special_weight => Just(f64::INFINITY),
        special_weight => Just(f64::NEG_INFINITY),
    ]
    .boxed()
}

pub fn cases(specials: bool) -> impl Strategy<Value = Case> {
    // d ≥ 16 reaches the CPU kernels' 16-column blocks (and their tail).
    (
        0usize..24,
        prop_oneof![3 => 1usize..4, 1 => 15usize..36],
        1usize..7,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_flat_map(move |(e, d, n, sorted, i32_ids)| {
            (
                proptest::collection::vec(0..n as i64, e),
                proptest::collection::vec(value(specials), e * d),
                Just((e, d, n, sorted, i32_ids)),
            )
        })
        .prop_map(|(mut ids, data, (e, d, n, sorted, i32_ids))| {
            if sorted {
                ids.sort();
            }
            Case {
                e,
                d,
                n,
                ids,
                data: as_f32(&data),
                i32_ids,
            }
        })
}

const RTOL: f64 = 1e-5;
const ATOL: f64 = 1e-5;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sum_prod_max_min_match_reference(c in cases(true)) {
        for t in targets() {
            for r in [SegmentReduction::Sum, SegmentReduction::Prod, SegmentReduction::Max, SegmentReduction::Min] {
                let x = f32s(&c.data, [c.e, c.d], &t.device);
                let got = read(reduce(&t, x, ids(&c.ids, &t.device, c.i32_ids), c.n, r));
                let want = segment_reduce_reference(&c.data, c.d, &c.ids, c.n, r);
                assert_close(&format!("{} {r:?} {c:?}", t.name), &got, &want, RTOL, ATOL);
            }
        }
    }

    #[test]
    fn max_min_arguments_match_reference(c in cases(true)) {
        for t in targets() {
            for which in [SegmentExtreme::Max, SegmentExtreme::Min] {
                let x = f32s(&c.data, [c.e, c.d], &t.device);
                let (v, a) = extreme(&t, x, ids(&c.ids, &t.device, c.i32_ids), c.n, which);
                let (want_v, want_a) = segment_extreme_reference(&c.data, c.d, &c.ids, c.n, which);
                assert_close(&format!("{} {which:?} values", t.name), &read(v), &want_v, 0.0, 0.0);
                prop_assert_eq!(read_int(a), want_a, "{} {:?} args {:?}", t.name, which, c);
            }
        }
    }

    #[test]
    fn softmax_matches_reference(c in cases(true)) {
        for t in targets() {
            let x = f32s(&c.data, [c.e, c.d], &t.device);
            let got = read(softmax(&t, x, ids(&c.ids, &t.device, c.i32_ids), c.n));
            let want = segment_softmax_reference(&c.data, c.d, &c.ids, c.n);
            assert_close(&format!("{} softmax {c:?}", t.name), &got, &want, RTOL, ATOL);
        }
    }

    #[test]
    fn count_matches_reference(c in cases(false)) {
        for t in targets() {
            let got = read_int(count(&t, ids(&c.ids, &t.device, c.i32_ids), c.n));
            prop_assert_eq!(got, segment_count_reference(&c.ids, c.n), "{}", t.name);
        }
    }

    #[test]
    fn int_ops_match_reference(c in cases(false)) {
        // Values in [-2, 2] keep every product of up to 24 rows inside i32.
        let values: Vec<i64> = c.data.iter().map(|v| (v.round() as i64).clamp(-2, 2)).collect();
        let as_f64: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        for t in targets() {
            for dtype in [DType::I64, DType::I32] {
                for r in [SegmentReduction::Sum, SegmentReduction::Prod, SegmentReduction::Max, SegmentReduction::Min] {
                    let x = ints(&values, [c.e, c.d], &t.device, dtype);
                    let got = read_int(reduce(&t, x, ids(&c.ids, &t.device, c.i32_ids), c.n, r));
                    let (lo, hi) = if dtype == DType::I32 { (i32::MIN as i64, i32::MAX as i64) } else { (i64::MIN, i64::MAX) };
                    let want: Vec<i64> = segment_reduce_reference(&as_f64, c.d, &c.ids, c.n, r)
                        .into_iter()
                        .map(|v| if v == f64::NEG_INFINITY { lo } else if v == f64::INFINITY { hi } else { v as i64 })
                        .collect();
                    prop_assert_eq!(got, want, "{} {:?} {:?}", t.name, dtype, r);
                }
                for which in [SegmentExtreme::Max, SegmentExtreme::Min] {
                    let x = ints(&values, [c.e, c.d], &t.device, dtype);
                    let (_, a) = extreme(&t, x, ids(&c.ids, &t.device, c.i32_ids), c.n, which);
                    let (_, want) = segment_extreme_reference(&as_f64, c.d, &c.ids, c.n, which);
                    prop_assert_eq!(read_int(a), want, "{} {:?} arg", t.name, which);
                }
            }
        }
    }

    #[test]
    fn derived_ops_match_reference(c in cases(false)) {
        for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
            let dev = &t.device;
            let op = |op: Derived| read(derived(&t, op, f32s(&c.data, [c.e, c.d], dev), ids(&c.ids, dev, c.i32_ids), c.n));
            let name = |op: &str| format!("{} {op} {c:?}", t.name);
            let mean = segment_mean_reference(&c.data, c.d, &c.ids, c.n);
            assert_close(&name("mean"), &op(Derived::Mean), &mean, RTOL, ATOL);
            let var = segment_variance_reference(&c.data, c.d, &c.ids, c.n);
            assert_close(&name("variance"), &op(Derived::Variance), &var, 1e-4, 1e-4);
            let std: Vec<f64> = var.iter().map(|v| v.sqrt()).collect();
            assert_close(&name("std"), &op(Derived::Std), &std, 1e-3, 1e-3);
            let norm = segment_normalize_reference(&c.data, c.d, &c.ids, c.n, 1e-3);
            assert_close(&name("normalize"), &op(Derived::Normalize(1e-3)), &norm, 1e-3, 1e-3);
            let lse = segment_logsumexp_reference(&c.data, c.d, &c.ids, c.n);
            assert_close(&name("logsumexp"), &op(Derived::Logsumexp), &lse, RTOL, ATOL);
            let counts = segment_count_reference(&c.ids, c.n);
            let fill = |v: Vec<f64>| -> Vec<f64> {
                v.into_iter().enumerate().map(|(k, v)| if counts[k / c.d] == 0 { 7.5 } else { v }).collect()
            };
            let max = fill(segment_reduce_reference(&c.data, c.d, &c.ids, c.n, SegmentReduction::Max));
            assert_close(&name("max_or_constant"), &op(Derived::MaxOr(7.5)), &max, 0.0, 0.0);
            let min = fill(segment_reduce_reference(&c.data, c.d, &c.ids, c.n, SegmentReduction::Min));
            assert_close(&name("min_or_constant"), &op(Derived::MinOr(7.5)), &min, 0.0, 0.0);
        }
    }

    #[test]
    fn statistics_match_reference(c in cases(true)) {
        for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
            let segment_ids = ids(&c.ids, &t.device, c.i32_ids);
            match t.path {
                Path::Planned => check_statistics(&t, &c, &plan(segment_ids, c.n)),
                _ => check_statistics(&t, &c, &SegmentIds::new(segment_ids, c.n)),
            }
        }
    }

    #[test]
    fn partition_ops_match_reference(
        partitions in proptest::collection::vec(0i64..5, 1..7),
        d in 1usize..3,
        seed in any::<u64>(),
    ) {
        let ids_ref = partition_ids_reference(&partitions);
        let (e, p) = (ids_ref.len(), partitions.len());
        let data: Vec<f64> = (0..e * d).map(|k| as_f32(&[((k as u64 * 2654435761 + seed) % 1000) as f64 / 100.0 - 5.0])[0]).collect();
        for t in targets().into_iter().filter(|t| t.path == Path::Public) {
            let dev = &t.device;
            let parts = || ids(&partitions, dev, false);
            let x = || f32s(&data, [e, d], dev);
            prop_assert_eq!(read_int(burn_segment::partition_ids(parts(), e)), ids_ref.clone(), "{}", t.name);
            let check = |op: &str, got: Vec<f64>, want: Vec<f64>| assert_close(&format!("{} {op}", t.name), &got, &want, RTOL, ATOL);
            check("sum", read(burn_segment::partition_sum(x(), parts())), segment_reduce_reference(&data, d, &ids_ref, p, SegmentReduction::Sum));
            check("mean", read(burn_segment::partition_mean(x(), parts())), segment_mean_reference(&data, d, &ids_ref, p));
            check("max", read(burn_segment::partition_max(x(), parts())), segment_reduce_reference(&data, d, &ids_ref, p, SegmentReduction::Max));
            check("min", read(burn_segment::partition_min(x(), parts())), segment_reduce_reference(&data, d, &ids_ref, p, SegmentReduction::Min));
            check("softmax", read(burn_segment::partition_softmax(x(), parts())), segment_softmax_reference(&data, d, &ids_ref, p));
        }
    }
}

/// Corrected variance and std, count_nonzero (float and int data), any and all of `c` through
/// `g` on `t`, against the references.
fn check_statistics(t: &Target, c: &Case, g: &impl Segments) {
    let dev = &t.device;
    let name = |op: &str| format!("{} {op} {c:?}", t.name);
    let x = || f32s(&c.data, [c.e, c.d], dev);
    for correction in [0, 1, 2] {
        let var = segment_variance_corrected_reference(&c.data, c.d, &c.ids, c.n, correction);
        let got = read(g.variance_corrected(x(), correction));
        assert_close(
            &name(&format!("variance({correction})")),
            &got,
            &var,
            1e-4,
            1e-4,
        );
        let std: Vec<f64> = var.iter().map(|v| v.sqrt()).collect();
        let got = read(g.std_corrected(x(), correction));
        assert_close(&name(&format!("std({correction})")), &got, &std, 1e-3, 1e-3);
    }
    let want = segment_count_nonzero_reference(&c.data, c.d, &c.ids, c.n);
    assert_eq!(
        read_int(g.count_nonzero(x())),
        want,
        "{}",
        name("count_nonzero")
    );
    // Int data: the values truncated (NaN and ±inf as 1).
    let truncated: Vec<f64> = c
        .data
        .iter()
        .map(|&v| if v.is_finite() { v.trunc() } else { 1.0 })
        .collect();
    let as_ints: Vec<i64> = truncated.iter().map(|&v| v as i64).collect();
    let xi = ints(&as_ints, [c.e, c.d], dev, DType::I64);
    let want = segment_count_nonzero_reference(&truncated, c.d, &c.ids, c.n);
    assert_eq!(
        read_int(g.count_nonzero(xi)),
        want,
        "{}",
        name("count_nonzero int")
    );
    // Weights in {0, 0.5, 1, 2.5}, all 0 in segment 0: a total of 0 there.
    let w: Vec<f64> = (0..c.e)
        .map(|e| {
            if c.ids[e] == 0 {
                0.0
            } else {
                [0.0, 0.5, 1.0, 2.5][e * 7 % 4]
            }
        })
        .collect();
    let weights = SegmentWeights::new(f32s(&w, [c.e], dev)).expect("good weights");
    let want = weighted_mean_reference(&c.data, c.d, &w, &c.ids, c.n);
    let got = read(g.weighted_mean(x(), &weights));
    assert_close(&name("weighted_mean"), &got, &want, 1e-4, 1e-4);
    for correction in [0, 1] {
        let want = weighted_variance_reference(&c.data, c.d, &w, &c.ids, c.n, Some(correction));
        let got = read(g.weighted_variance(x(), &weights, correction));
        assert_close(
            &name(&format!("weighted_variance({correction})")),
            &got,
            &want,
            1e-4,
            1e-4,
        );
    }
    let flags: Vec<bool> = c.data.iter().map(|&v| v > 0.0).collect();
    for all in [false, true] {
        let b = bools(&flags, [c.e, c.d], dev);
        let got = read_bool(if all { g.all(b) } else { g.any(b) });
        let want = segment_any_all_reference(&flags, c.d, &c.ids, c.n, all);
        assert_eq!(got, want, "{}", name(if all { "all" } else { "any" }));
    }
}
