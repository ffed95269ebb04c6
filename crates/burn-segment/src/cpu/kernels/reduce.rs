//! Sums, products and counts of each segment's rows.

use core::ops::Range;

use super::memory::{Alloc, Out};
use super::{Rows, chunk_tree, for_block, is_long, per_segment, per_segment_run};
use crate::host::csr::{CsrPlan, TO_L2, prefetch_bytes};
use crate::host::elem::{Elem, IdElem};
use crate::host::simd::{Simd, simd_dispatch};

/// Sum of each segment's rows, 0 for empty ones, with the per-segment body compiled for `simd`
/// and the output from `alloc`: in row order, or for a segment of more than [`CHUNK_ROWS`](super::CHUNK_ROWS)
/// rows, chunk by chunk in parallel and combined in [`chunk_tree`]'s fixed tree.
pub fn reduce_sum<T: Elem>(simd: Simd, alloc: Alloc, rows: Rows<T>, plan: &CsrPlan) -> Out<T> {
    let d = rows.width();
    per_segment_run(alloc, plan, d, T::ZERO, |segments, out| {
        add_run_simd(simd, rows, plan, segments.clone(), out);
        for (s, acc) in segments.zip(out.chunks_exact_mut(d)) {
            if !is_long(plan, s) {
                continue;
            }
            let sum = |slots| {
                let mut part = vec![T::ZERO; d];
                add_slots_simd(simd, rows, plan, slots, &mut part);
                part
            };
            acc.copy_from_slice(&chunk_tree(plan, s, sum, |mut l, r| {
                l.iter_mut().zip(r).for_each(|(a, b)| *a = a.add(b));
                l
            }));
        }
    })
}

/// Adds the rows of each short segment of `segments` into its row of `out`, in row order
/// (the long ones are left for [`chunk_tree`]).
#[inline(always)]
fn add_run<T: Elem>(rows: Rows<T>, plan: &CsrPlan, segments: Range<usize>, out: &mut [T]) {
    for (s, acc) in segments.zip(out.chunks_exact_mut(rows.width())) {
        if !is_long(plan, s) {
            add_slots(rows, plan, plan.slots(s), acc);
        }
    }
}

simd_dispatch!(
    /// [`add_run`] compiled for `simd`.
    fn add_run_simd = add_run [T: Elem] [T] (
        rows: Rows<T>,
        plan: &CsrPlan,
        segments: Range<usize>,
        out: &mut [T],
    )
);

/// Folds the rows at CSR positions `slots` into `acc` by addition, in row order.
///
/// The columns go in blocks of 256 bytes (then 32, 16, 8, 4, 2, 1 values) held in registers
/// for all the rows: adding each row into `acc` in memory made every row wait for the previous
/// row's store of the same values. Each column still adds its rows in row order, so the bits
/// are those of one pass.
#[inline(always)]
fn add_slots<T: Elem>(rows: Rows<T>, plan: &CsrPlan, slots: Range<usize>, acc: &mut [T]) {
    let (d, mut j0) = (rows.width(), 0);
    let block = if core::mem::size_of::<T>() <= 4 {
        64
    } else {
        32
    };
    while j0 + block <= d {
        match block {
            64 => add_cols::<T, 64>(rows, plan, slots.clone(), acc, j0),
            _ => add_cols::<T, 32>(rows, plan, slots.clone(), acc, j0),
        }
        j0 += block;
    }
    for w in [32, 16, 8, 4, 2, 1] {
        if j0 + w <= d {
            match w {
                32 => add_cols::<T, 32>(rows, plan, slots.clone(), acc, j0),
                16 => add_cols::<T, 16>(rows, plan, slots.clone(), acc, j0),
                8 => add_cols::<T, 8>(rows, plan, slots.clone(), acc, j0),
                4 => add_cols::<T, 4>(rows, plan, slots.clone(), acc, j0),
                2 => add_cols::<T, 2>(rows, plan, slots.clone(), acc, j0),
                _ => add_cols::<T, 1>(rows, plan, slots.clone(), acc, j0),
            }
            j0 += w;
        }
    }
}

/// Adds columns `j0..j0 + W` of the rows at CSR positions `slots` into `acc`, in row order.
#[inline(always)]
fn add_cols<T: Elem, const W: usize>(
    rows: Rows<T>,
    plan: &CsrPlan,
    slots: Range<usize>,
    acc: &mut [T],
    j0: usize,
) {
    let mut a: [T; W] = acc[j0..j0 + W].try_into().expect("a full block");
    // The block rebuilt whole, not updated one `&mut` value at a time: whether that loop was
    // vectorised at `W = 16` changed with unrelated code (1.3x on sorted sums).
    for_block(rows, plan, slots, j0, |x: &[T; W]| {
        a = core::array::from_fn(|j| a[j].add(x[j]))
    });
    acc[j0..j0 + W].copy_from_slice(&a);
}

simd_dispatch!(
    /// [`add_slots`] compiled for `simd`.
    fn add_slots_simd = add_slots [T: Elem] [T] (
        rows: Rows<T>,
        plan: &CsrPlan,
        slots: Range<usize>,
        acc: &mut [T],
    )
);

/// Which entries a masked sum keeps: one flag per row, or one per entry (`[E, d]`,
/// contiguous); non-zero keeps.
#[derive(Clone, Copy, Debug)]
pub enum MaskOf<'a> {
    /// `[E]`: a row is kept whole or left out whole.
    Rows(&'a [u8]),
    /// `[E, d]`, row-major.
    Entries(&'a [u8]),
}

/// [`reduce_sum`] of `where(mask, rows, 0)` without forming it: the same rows in the same
/// order, a left-out entry adding `+0` (which changes no sum, the running sum never being
/// `-0`), so the bits are those of the filled data's sum, for any thread count.
pub fn reduce_sum_masked<T: Elem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    mask: MaskOf<'_>,
    plan: &CsrPlan,
) -> Out<T> {
    let d = rows.width();
    per_segment(alloc, plan, d, T::ZERO, |s, acc| {
        if !is_long(plan, s) {
            return add_masked_simd(simd, rows, mask, plan, plan.slots(s), acc);
        }
        let sum = |slots| {
            let mut part = vec![T::ZERO; d];
            add_masked_simd(simd, rows, mask, plan, slots, &mut part);
            part
        };
        acc.copy_from_slice(&chunk_tree(plan, s, sum, |mut l, r| {
            l.iter_mut().zip(r).for_each(|(a, b)| *a = a.add(b));
            l
        }));
    })
}

/// [`add_slots`] of the entries `mask` keeps.
#[inline(always)]
fn add_masked<'m, T: Elem>(
    rows: Rows<T>,
    mask: MaskOf<'m>,
    plan: &CsrPlan,
    slots: Range<usize>,
    acc: &mut [T],
) {
    let d = rows.width();
    // Sorted ids over contiguous rows: the rows and their flags as two spans, no index checks.
    if let Some(span) = rows.span(slots.clone()).filter(|_| plan.is_sorted()) {
        match mask {
            MaskOf::Rows(keep) => span
                .chunks_exact(d)
                .zip(&keep[slots])
                .filter(|(_, k)| **k != 0)
                .for_each(|(x, _)| add_row(acc, x)),
            MaskOf::Entries(keep) => span
                .chunks_exact(d)
                .zip(keep[slots.start * d..slots.end * d].chunks_exact(d))
                .for_each(|(x, k)| add_kept(acc, x, k)),
        }
        return;
    }
    // The flags are gathered like the rows: prefetch both. One loop per form of the mask, not
    // a match per row.
    let ahead = |flags: &'m [u8], width: usize| {
        move |r: usize| {
            rows.prefetch::<TO_L2>(r);
            prefetch_bytes::<TO_L2>(flags.as_ptr().wrapping_add(r * width), width);
        }
    };
    match mask {
        MaskOf::Rows(keep) => plan.for_slots_ahead(slots, ahead(keep, 1), |r| {
            if keep[r] != 0 {
                add_row(acc, rows.row(r));
            }
        }),
        MaskOf::Entries(keep) => plan.for_slots_ahead(slots, ahead(keep, d), |r| {
            add_kept(acc, rows.row(r), &keep[r * d..(r + 1) * d])
        }),
    }
}

#[inline(always)]
fn add_row<T: Elem>(acc: &mut [T], x: &[T]) {
    acc.iter_mut().zip(x).for_each(|(a, &v)| *a = a.add(v));
}

/// `acc += x` where `keep` is non-zero, `+0` elsewhere: a select, not a branch, so that the
/// loop vectorises.
#[inline(always)]
fn add_kept<T: Elem>(acc: &mut [T], x: &[T], keep: &[u8]) {
    acc.iter_mut()
        .zip(x)
        .zip(keep)
        .for_each(|((a, &v), &k)| *a = a.add(if k != 0 { v } else { T::ZERO }));
}

simd_dispatch!(
    /// [`add_masked`] compiled for `simd`.
    fn add_masked_simd = add_masked [T: Elem] [T] (
        rows: Rows<T>,
        mask: MaskOf<'_>,
        plan: &CsrPlan,
        slots: Range<usize>,
        acc: &mut [T],
    )
);

/// Product of each segment's rows, 1 for empty ones. Float partials are kept as a mantissa and
/// an exponent ([`Elem::Product`]), so no intermediate overflows or underflows where the
/// product itself is a finite, normal number, and the result is rounded once at the end; where
/// the plain product stays in the normal range the bits are the same. A column with a zero,
/// subnormal, infinite or NaN factor is multiplied plainly in row order (IEEE propagation).
/// Segments of more than [`CHUNK_ROWS`](super::CHUNK_ROWS) rows are multiplied chunk by chunk in parallel, as
/// [`reduce_sum`]'s.
pub fn reduce_product<T: Elem>(alloc: Alloc, rows: Rows<T>, plan: &CsrPlan) -> Out<T> {
    let d = rows.width();
    let part = |slots: Range<usize>| {
        let mut parts = vec![T::PRODUCT_ONE; d];
        plan.for_slots_prefetch(slots, rows, |r| {
            parts
                .iter_mut()
                .zip(rows.row(r))
                .for_each(|(p, &v)| T::product_push(p, v));
        });
        parts
    };
    per_segment(alloc, plan, d, T::ONE, |s, acc| {
        let parts = if is_long(plan, s) {
            chunk_tree(plan, s, part, |mut l, r| {
                l.iter_mut()
                    .zip(r)
                    .for_each(|(a, b)| *a = T::product_combine(*a, b));
                l
            })
        } else {
            part(plan.slots(s))
        };
        for (c, (a, p)) in acc.iter_mut().zip(parts).enumerate() {
            *a = T::product_finish(p).unwrap_or_else(|| {
                let mut x = T::ONE;
                plan.for_rows(s, |r| x = x.mul(rows.row(r)[c]));
                x
            });
        }
    })
}

/// Number of rows in each segment.
pub fn count<I: IdElem>(plan: &CsrPlan) -> Vec<I> {
    plan.offsets
        .windows(2)
        .map(|w| I::from_i64((w[1] - w[0]) as i64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::kernels::Rows;
    use crate::host::simd::Level;
    use crate::host::testing::{bits, for_each_isa_case, for_each_width};

    #[test]
    fn sums_give_the_same_bits_on_every_instruction_set() {
        // Values whose sums round, NaN and infinities mixed in.
        let value = |k: usize| match k % 50 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            k => (k as f32 - 25.0) / 7.0,
        };
        for_each_isa_case(17, value, |rows, plan, shuffled| {
            let want = reduce_sum(Simd::detect().at_most(Level::Base), Alloc::Vec, rows, plan);
            assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| v.fract() != 0.0));
            for level in [Level::Avx2, Level::Avx512] {
                let got = reduce_sum(Simd::detect().at_most(level), Alloc::Vec, rows, plan);
                assert_eq!(bits(&got), bits(&want), "{level:?} shuffled: {shuffled}");
            }
        });
    }

    #[test]
    fn sums_add_each_column_in_row_order_at_every_width() {
        // Against a scalar sum of each column in row order: the column blocks cover every
        // column once and keep the order, so the bits are equal.
        let value = |k: usize| (k % 1000) as f32 / 7.0 - 70.0;
        for_each_width(5, value, |rows, plan, column| {
            let d = rows.width();
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let got = reduce_sum(Simd::detect().at_most(level), Alloc::Vec, rows, plan);
                for s in 0..plan.num_segments() {
                    let want: Vec<f32> = (0..d)
                        .map(|c| column(s, c).iter().fold(0.0, |a, &v| a + v))
                        .collect();
                    assert_eq!(
                        bits(&got[s * d..(s + 1) * d]),
                        bits(&want),
                        "d {d} {level:?}"
                    );
                }
            }
        });
    }

    #[test]
    fn masked_sums_are_the_sums_of_the_filled_rows_on_every_instruction_set() {
        // NaN and infinities in left-out entries must not leak; kept ones propagate.
        let value = |k: usize| match k % 40 {
            0 => f32::NAN,
            1 => f32::NEG_INFINITY,
            k => (k as f32 - 20.0) / 3.0,
        };
        let mut next = crate::host::testing::lcg(5);
        for_each_isa_case(23, value, |rows, plan, shuffled| {
            let (e, d) = (plan.num_rows(), rows.width());
            let entries: Vec<u8> = (0..e * d)
                .map(|_| u8::from(!next().is_multiple_of(3)))
                .collect();
            let per_row: Vec<u8> = (0..e)
                .map(|_| u8::from(!next().is_multiple_of(3)))
                .collect();
            for (form, mask, keep) in [
                ("entries", MaskOf::Entries(&entries), &|k: usize| {
                    entries[k] != 0
                }),
                ("rows", MaskOf::Rows(&per_row), &|k: usize| {
                    per_row[k / d] != 0
                }),
            ]
                as [(&str, MaskOf<'_>, &dyn Fn(usize) -> bool); 2]
            {
                let filled: Vec<f32> = (0..e * d)
                    .map(|k| if keep(k) { rows.row(k / d)[k % d] } else { 0.0 })
                    .collect();
                let want = reduce_sum(Simd::detect(), Alloc::Vec, Rows::new(&filled, d), plan);
                assert!(want.iter().any(|v| v.is_nan()), "a kept NaN propagates");
                for level in [Level::Base, Level::Avx2, Level::Avx512] {
                    let simd = Simd::detect().at_most(level);
                    let got = reduce_sum_masked(simd, Alloc::Vec, rows, mask, plan);
                    assert_eq!(bits(&got), bits(&want), "{level:?} {form} {shuffled}");
                }
            }
        });
    }

    /// Plain row-order products, one segment per column set.
    fn plain<T: Elem>(data: &[T], d: usize, plan: &CsrPlan) -> Vec<T> {
        let mut out = vec![T::ONE; plan.num_segments() * d];
        for s in 0..plan.num_segments() {
            plan.for_rows(s, |r| {
                for c in 0..d {
                    out[s * d + c] = out[s * d + c].mul(data[r * d + c]);
                }
            });
        }
        out
    }

    #[test]
    fn products_do_not_overflow_in_their_partials() {
        // 2^±600 (f64) and 2^±100 (f32) blocks, alternately scaled by 2.0 and 0.5: the true
        // product is exactly 1, the row-order product overflows to inf and a reassociated
        // one gives inf · 0 = NaN.
        let f64s: Vec<f64> = (0..1000)
            .map(|i| (if i < 500 { 600f64 } else { -600.0 }).exp2() * [2.0, 0.5][i % 2])
            .collect();
        let f32s: Vec<f32> = (0..1000)
            .map(|i| (if i < 500 { 100f32 } else { -100.0 }).exp2() * [2.0, 0.5][i % 2])
            .collect();
        let plan = CsrPlan::new(&[0i64; 1000], 1);
        assert_eq!(plain(&f64s, 1, &plan)[0], f64::INFINITY);
        assert_eq!(
            reduce_product(Alloc::Vec, Rows::new(&f64s, 1), &plan)[0],
            1.0
        );
        assert_eq!(
            reduce_product(Alloc::Vec, Rows::new(&f32s, 1), &plan)[0],
            1.0
        );
        // Unsorted ids: the same rows shuffled between two segments.
        let ids: Vec<i64> = (0..1000).map(|i| (i % 3 == 0) as i64).collect();
        let plan = CsrPlan::new(&ids, 2);
        let got = reduce_product(Alloc::Vec, Rows::new(&f64s, 1), &plan);
        let log2 = |seg: i64| {
            (0..1000)
                .filter(|&i| ids[i] == seg)
                .map(|i| f64s[i].log2())
                .sum::<f64>()
        };
        assert_eq!(got[0], log2(0).exp2());
        assert_eq!(got[1], log2(1).exp2());
    }

    #[test]
    fn products_round_once_and_keep_ieee_rules() {
        // Where the row-order product stays normal, the same bits.
        let data: Vec<f64> = (0..3000)
            .map(|i| 1.0 + ((i * 37 % 101) as f64 - 50.0) / 97.0)
            .collect();
        let ids: Vec<i64> = (0..1000).map(|i| (i * 7919 % 13) as i64).collect();
        let plan = CsrPlan::new(&ids, 13);
        let bits64 = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let got = reduce_product(Alloc::Vec, Rows::new(&data, 3), &plan);
        assert_eq!(bits64(&got), bits64(&plain(&data, 3, &plan)));
        // A subnormal product, an overflowing one, and columns with 0 · inf, NaN, -0 and a
        // subnormal factor, which follow the row-order product.
        let tiny = f64::from_bits(1);
        let rows = [
            [(-530f64).exp2(), 600f64.exp2(), 0.0, 1.0, -0.0, tiny],
            [
                (-530f64).exp2(),
                600f64.exp2(),
                f64::INFINITY,
                f64::NAN,
                3.0,
                4.0,
            ],
        ];
        let data: Vec<f64> = rows.concat();
        let plan = CsrPlan::new(&[0i64, 0], 1);
        let got = reduce_product(Alloc::Vec, Rows::new(&data, 6), &plan);
        assert_eq!(got[0], (-1060f64).exp2());
        assert_eq!(got[1], f64::INFINITY);
        assert!(got[2].is_nan() && got[3].is_nan());
        assert_eq!(got[4].to_bits(), (-0.0f64).to_bits());
        assert_eq!(got[5], tiny * 4.0);
        // Integers wrap, as before.
        let ints = [i32::MAX, 3, 5];
        let plan = CsrPlan::new(&[0i64, 0, 0], 1);
        assert_eq!(
            reduce_product(Alloc::Vec, Rows::new(&ints, 1), &plan)[0],
            i32::MAX.wrapping_mul(15)
        );
    }
}
