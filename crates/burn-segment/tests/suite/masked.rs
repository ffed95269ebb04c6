//! Masked reductions on every backend and through plans: against the masked references (the
//! unmasked ones over the eligible entries), with random full and per-row masks, fully masked
//! segments, NaN and ±inf both eligible and masked out; gradients in `gradients.rs`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{Bool, Tensor};
use burn_segment::reference::MaskedReference;
use burn_segment::{
    Masked, SegmentExtreme, SegmentIds, SegmentReduction, SegmentStatistics, SegmentWeights,
    Segments,
};
use proptest::prelude::*;

use crate::common::*;
use crate::properties::{Case, cases};

/// Eligible about two entries in three, never in segment 1 (fully masked), by a seeded LCG.
fn flags(c: &Case, width: usize, seed: u64) -> Vec<bool> {
    let mut state = seed | 1;
    (0..c.e * width)
        .map(|k| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            c.ids[k / width] != 1 && !(state >> 33).is_multiple_of(3)
        })
        .collect()
}

/// Every masked op of `m` on `c`'s data against `want`.
fn check<S: Segments, const M: usize>(
    t: &Target,
    c: &Case,
    m: &Masked<'_, S, M>,
    want: &MaskedReference,
    form: &str,
) {
    const TOL: f64 = 1e-5;
    let x = || f32s(&c.data, [c.e, c.d], &t.device);
    let name = |op: &str| format!("{} {form} {op} {c:?}", t.name);
    for r in [SegmentReduction::Sum, SegmentReduction::Prod] {
        let got = read(match r {
            SegmentReduction::Sum => m.sum(x()),
            _ => m.prod(x()),
        });
        assert_close(&name(&format!("{r:?}")), &got, &want.reduce(r), TOL, TOL);
    }
    for e in [SegmentExtreme::Max, SegmentExtreme::Min] {
        let (v, a) = match e {
            SegmentExtreme::Max => m.max_with_indices(x()),
            SegmentExtreme::Min => m.min_with_indices(x()),
        };
        let (want_v, want_a) = want.extreme(e);
        assert_close(&name(&format!("{e:?}")), &read(v), &want_v, 0.0, 0.0);
        assert_eq!(read_int(a), want_a, "{}", name(&format!("arg {e:?}")));
    }
    assert_close(&name("mean"), &read(m.mean(x())), &want.mean(), TOL, TOL);
    assert_close(
        &name("logsumexp"),
        &read(m.logsumexp(x())),
        &want.logsumexp(),
        TOL,
        TOL,
    );
    assert_close(
        &name("softmax"),
        &read(m.softmax(x())),
        &want.softmax(),
        TOL,
        TOL,
    );
    // Row weights in {0, 0.5, 1, 2.5}: masked-out entries weigh nothing.
    let w: Vec<f64> = (0..c.e).map(|e| [0.0, 0.5, 1.0, 2.5][e * 7 % 4]).collect();
    let weights = SegmentWeights::new(f32s(&w, [c.e], &t.device)).expect("good weights");
    let got = read(m.weighted_mean(x(), &weights));
    assert_close(
        &name("weighted_mean"),
        &got,
        &want.weighted(&w, None),
        1e-4,
        1e-4,
    );
    let got = read(m.weighted_variance(x(), &weights, 1));
    assert_close(
        &name("weighted_variance(1)"),
        &got,
        &want.weighted(&w, Some(1)),
        1e-4,
        1e-4,
    );
    for correction in [0, 1] {
        let got = read(m.variance_corrected(x(), correction));
        let what = name(&format!("variance({correction})"));
        assert_close(
            &what,
            &got,
            &want.variance_corrected(correction),
            1e-4,
            1e-4,
        );
    }
}

fn masked_on<S: Segments>(t: &Target, c: &Case, index: &S, seed: u64) {
    // A full mask, then one flag per row (the reference sees it broadcast).
    let full = flags(c, c.d, seed);
    let mask = Tensor::<2, Bool>::from_data(
        burn::tensor::TensorData::new(full.clone(), [c.e, c.d]),
        &t.device,
    );
    let m = index.masked(mask);
    let want = MaskedReference::new(&c.data, &full, c.d, &c.ids, c.n);
    check(t, c, &m, &want, "full mask");
    assert_eq!(read_int(m.count()), want.count(), "{} count", t.name);
    let rows = flags(c, 1, seed);
    let broadcast: Vec<bool> = rows
        .iter()
        .flat_map(|&f| std::iter::repeat_n(f, c.d))
        .collect();
    let mask = Tensor::<1, Bool>::from_data(burn::tensor::TensorData::new(rows, [c.e]), &t.device);
    let m = index.masked(mask);
    let want = MaskedReference::new(&c.data, &broadcast, c.d, &c.ids, c.n);
    check(t, c, &m, &want, "row mask");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn masked_ops_match_reference(c in cases(true), seed in any::<u64>()) {
        for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
            let segment_ids = ids(&c.ids, &t.device, c.i32_ids);
            match t.path {
                Path::Planned => masked_on(&t, &c, &plan(segment_ids, c.n), seed),
                _ => masked_on(&t, &c, &SegmentIds::new(segment_ids, c.n), seed),
            }
        }
    }
}

/// Hand-worked: NaN and inf in masked-out entries change nothing and get exactly zero gradient;
/// a fully masked softmax segment is 0 with zero gradient.
#[test]
fn masked_out_entries_neither_leak_nor_receive_gradient() {
    // Rows 0..3 in segment 0, rows 3..5 in segment 1; row 1 (NaN) and row 4 (inf) masked out;
    // segment 1's other row is masked out too.
    let data = [1.0, f64::NAN, 3.0, -2.0, f64::INFINITY];
    let keep = [true, false, true, false, false];
    for t in autodiff_targets() {
        let x = f32s(&data, [5, 1], &t.device).require_grad();
        let index = SegmentIds::new(ids(&[0, 0, 0, 1, 1], &t.device, false), 2);
        let mask = Tensor::<1, Bool>::from_data(
            burn::tensor::TensorData::new(keep.to_vec(), [5]),
            &t.device,
        );
        let m = index.masked(mask);
        let (sum, mean, max) = (m.sum(x.clone()), m.mean(x.clone()), m.max(x.clone()));
        assert_eq!(read(sum.clone()), [4.0, 0.0], "{}", t.name);
        let mean_v = read(mean.clone());
        assert!(
            mean_v[0] == 2.0 && mean_v[1].is_nan(),
            "{}: {mean_v:?}",
            t.name
        );
        assert_eq!(read(max.clone()), [3.0, f64::NEG_INFINITY], "{}", t.name);
        assert_eq!(read_int(m.argmax(x.clone())), [2, -1], "{}", t.name);
        let soft = m.softmax(x.clone());
        let soft_v = read(soft.clone());
        let e = (1.0f64 - 3.0).exp();
        assert_close(
            t.name,
            &soft_v,
            &[e / (1.0 + e), 0.0, 1.0 / (1.0 + e), 0.0, 0.0],
            1e-6,
            1e-6,
        );
        let loss =
            sum.slice(0..1).sum() + mean.slice(0..1).sum() + max.slice(0..1).sum() + soft.sum();
        let grad = read(x.grad(&loss.backward()).expect("a gradient"));
        assert_eq!(
            (grad[1], grad[3], grad[4]),
            (0.0, 0.0, 0.0),
            "{}: {grad:?}",
            t.name
        );
        assert!(grad.iter().all(|g| g.is_finite()), "{}: {grad:?}", t.name);
        // d/dx0 of sum + mean = 1 + 1/2; the softmax's rows sum to 1, so they pass nothing.
        assert_close(t.name, &[grad[0]], &[1.5], 1e-5, 1e-5);
    }
}

#[test]
fn a_mask_of_the_wrong_shape_is_named() {
    let t = &targets()[0];
    let index = SegmentIds::new(ids(&[0, 0, 1], &t.device, false), 2);
    let short =
        Tensor::<1, Bool>::from_data(burn::tensor::TensorData::new(vec![true; 2], [2]), &t.device);
    let err = catch_unwind(AssertUnwindSafe(|| index.masked(short))).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("the mask has 2 rows"), "{msg}");
    let wide = Tensor::<2, Bool>::from_data(
        burn::tensor::TensorData::new(vec![true; 9], [3, 3]),
        &t.device,
    );
    let x = f32s(&[0.0; 6], [3, 2], &t.device);
    let err = catch_unwind(AssertUnwindSafe(|| index.masked(wide).sum(x))).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("neither [E] nor the data's"), "{msg}");
}

/// The masked sum (one op, a kernel on the CPU backends) gives the bits of the unmasked sum of
/// the filled data: unsorted ids with a segment long enough to be summed in chunks, NaN and
/// ±inf in left-out entries, full and per-row masks, planned and not, i32 and i64 ids.
#[test]
fn the_masked_sum_is_the_sum_of_the_filled_data() {
    let (e, d, n) = (20_000usize, 3usize, 50usize);
    let mut state = 11u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    // Half the rows in segment 7 (past the 4096-row chunks), the rest spread.
    let ids_v: Vec<i64> = (0..e)
        .map(|_| match next() % 2 {
            0 => 7,
            _ => (next() % n) as i64,
        })
        .collect();
    let row_keep: Vec<bool> = (0..e).map(|_| next() % 3 != 0).collect();
    let entry_keep: Vec<bool> = (0..e * d).map(|_| next() % 3 != 0).collect();
    let data = |keep: &dyn Fn(usize) -> bool| -> Vec<f64> {
        (0..e * d)
            .map(|k| match (keep(k), k % 5) {
                (false, 0) => f64::NAN,
                (false, 1) => f64::INFINITY,
                (false, 2) => f64::NEG_INFINITY,
                _ => ((k * 7919 % 1009) as f64 - 504.0) / 8.0,
            })
            .collect()
    };
    let row_data = data(&|k| row_keep[k / d]);
    let entry_data = data(&|k| entry_keep[k]);
    for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
        for i32_ids in [false, true] {
            let segment_ids = ids(&ids_v, &t.device, i32_ids);
            let planned = plan(segment_ids.clone(), n);
            let given = SegmentIds::new(segment_ids, n);
            let filled = |values: &[f64], keep: Tensor<2, Bool>| {
                f32s(values, [e, d], &t.device).mask_fill(keep.bool_not(), 0.0)
            };
            let rows = || bools(&row_keep, [e], &t.device);
            let entries = || bools(&entry_keep, [e, d], &t.device);
            let row_keep2 = || rows().reshape([e, 1]).expand([e, d]);
            // wgpu sums unplanned ids with float atomics: the same values, in another order.
            let tol = if t.is_cube() { 1e-5 } else { 0.0 };
            let check = |what: &str, got: Tensor<2>, want: Tensor<2>| {
                let name = format!("{} {what} i32 {i32_ids}", t.name);
                let (got, want) = (read(got), read(want));
                match tol > 0.0 {
                    true => assert_close(&name, &got, &want, tol, tol),
                    false => assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(g, w)| g.to_bits() == w.to_bits()),
                        "{name}: not the same bits"
                    ),
                }
            };
            let x_rows = || f32s(&row_data, [e, d], &t.device);
            let x_entries = || f32s(&entry_data, [e, d], &t.device);
            check(
                "row mask",
                given.masked(rows()).sum(x_rows()),
                given.sum(filled(&row_data, row_keep2())),
            );
            check(
                "full mask",
                given.masked(entries()).sum(x_entries()),
                given.sum(filled(&entry_data, entries())),
            );
            check(
                "planned, row mask",
                planned.masked(rows()).sum(x_rows()),
                planned.sum(filled(&row_data, row_keep2())),
            );
            check(
                "planned, full mask",
                planned.masked(entries()).sum(x_entries()),
                planned.sum(filled(&entry_data, entries())),
            );
        }
    }
}

/// Masks on Int data (i32 and i64): sum, product, max and min with their arguments against
/// the masked reference over the eligible entries, a fully masked segment and an empty one
/// getting the type's identities (0, 1, the type's minimum / maximum, row -1), sorted and
/// unsorted ids, full and per-row masks, planned and not, on every backend.
#[test]
fn masks_on_int_data_match_the_reference() {
    use burn::tensor::{DType, Int};
    let (e, d, n) = (14, 2, 5);
    let sorted: Vec<i64> = vec![0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3];
    let unsorted: Vec<i64> = vec![3, 0, 2, 1, 3, 0, 2, 3, 1, 2, 0, 3, 2, 3];
    // Ties (values in -3..=3), and segment 1 fully masked by both masks; segment 4 empty.
    let data: Vec<f64> = (0..e * d).map(|k| ((k * 5) % 7) as f64 - 3.0).collect();
    for t in targets().into_iter().filter(|t| t.path != Path::Composite) {
        for (form, seg) in [("sorted", &sorted), ("unsorted", &unsorted)] {
            let full: Vec<bool> = (0..e * d).map(|k| seg[k / d] != 1 && k % 3 != 0).collect();
            let rows: Vec<bool> = (0..e).map(|r| seg[r] != 1 && r % 4 != 1).collect();
            let row_mask: Vec<bool> = (0..e * d).map(|k| rows[k / d]).collect();
            for dtype in [DType::I32, DType::I64] {
                for (mask_form, flags) in [("full", &full), ("rows", &row_mask)] {
                    let want = MaskedReference::new(&data, flags, d, seg, n);
                    let what = |op: &str| format!("{} {form} {mask_form} {dtype:?} {op}", t.name);
                    let (lo, hi) = match dtype {
                        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
                        _ => (i64::MIN, i64::MAX),
                    };
                    // The reference's ∓inf of an empty segment is the type's bound here.
                    let as_int = |v: Vec<f64>| -> Vec<i64> {
                        v.iter()
                            .map(|&x| match x {
                                f64::NEG_INFINITY => lo,
                                f64::INFINITY => hi,
                                x => x as i64,
                            })
                            .collect()
                    };
                    let values: Vec<i64> = data.iter().map(|&v| v as i64).collect();
                    let x = || ints(&values, [e, d], &t.device, dtype);
                    let index = ids(seg, &t.device, false);
                    let planned = t.path == Path::Planned;
                    let plan_index = plan(index.clone(), n);
                    let plain = SegmentIds::new(index, n);
                    let mask_data: Tensor<2, Bool> = bools(flags, [e, d], &t.device);
                    let row_flags: Tensor<1, Bool> = bools(&rows, [e], &t.device);
                    let ops =
                        |got_sum: Tensor<2, Int>,
                         got_prod: Tensor<2, Int>,
                         max: (Tensor<2, Int>, Tensor<2, Int>),
                         min: (Tensor<2, Int>, Tensor<2, Int>)| {
                            let want_sum = as_int(want.reduce(SegmentReduction::Sum));
                            assert_eq!(read_int(got_sum), want_sum, "{}", what("sum"));
                            let want_prod = as_int(want.reduce(SegmentReduction::Prod));
                            assert_eq!(read_int(got_prod), want_prod, "{}", what("prod"));
                            for (e, (v, a)) in
                                [(SegmentExtreme::Max, max), (SegmentExtreme::Min, min)]
                            {
                                let (want_v, want_a) = want.extreme(e);
                                assert_eq!(
                                    read_int(v),
                                    as_int(want_v),
                                    "{}",
                                    what(&format!("{e:?}"))
                                );
                                assert_eq!(read_int(a), want_a, "{}", what(&format!("arg {e:?}")));
                            }
                        };
                    macro_rules! check {
                        ($m:expr) => {{
                            let m = $m;
                            ops(
                                m.sum(x()),
                                m.prod(x()),
                                m.max_with_indices(x()),
                                m.min_with_indices(x()),
                            );
                            assert_eq!(
                                read_int(m.max(x())),
                                read_int(m.max_with_indices(x()).0),
                                "{}",
                                what("max values")
                            );
                        }};
                    }
                    match (mask_form, planned) {
                        ("full", true) => check!(plan_index.masked(mask_data)),
                        ("full", false) => check!(plain.masked(mask_data)),
                        (_, true) => check!(plan_index.masked(row_flags)),
                        (_, false) => check!(plain.masked(row_flags)),
                    }
                }
            }
        }
    }
}
