//! Max and min of each segment's rows, values only: [`super::reduce_extreme`]'s values without
//! tracking or writing the rows that attain them.

use core::ops::Range;

use super::extreme::{NoArg, combine, fold_row};
use super::memory::{Alloc, Out};
use super::{Rows, chunk_tree, for_block, is_long, per_segment_run};
use crate::SegmentExtreme as Extreme;
use crate::host::csr::CsrPlan;
use crate::host::elem::Elem;
use crate::host::simd::{Simd, simd_dispatch};

/// Max or min of each segment, values only: [`super::reduce_extreme`]'s values, without
/// tracking or writing the arguments.
pub fn reduce_extreme_values<T: Elem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    plan: &CsrPlan,
    extreme: Extreme,
) -> Out<T> {
    match extreme {
        Extreme::Max => extreme_values_with::<T, true>(simd, alloc, rows, plan),
        Extreme::Min => extreme_values_with::<T, false>(simd, alloc, rows, plan),
    }
}

fn extreme_values_with<T: Elem, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    plan: &CsrPlan,
) -> Out<T> {
    let d = rows.width();
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    per_segment_run(alloc, plan, d, init, |segments, out| {
        values_run_simd::<T, MAX>(simd, rows, plan, segments.clone(), out);
        for (s, val) in segments.zip(out.chunks_exact_mut(d)) {
            if !is_long(plan, s) {
                continue;
            }
            let part = |slots| {
                let mut v = vec![init; d];
                values_simd::<T, MAX>(simd, rows, plan, slots, &mut v);
                (v, vec![NoArg; d])
            };
            val.copy_from_slice(&chunk_tree(plan, s, part, combine::<T, NoArg, MAX>).0);
        }
    })
}

/// The extreme of each short, non-empty segment of `segments` into its row of `out` (empty
/// ones keep the identity; long ones are left for [`chunk_tree`]).
#[inline(always)]
fn values_run<T: Elem, const MAX: bool>(
    rows: Rows<T>,
    plan: &CsrPlan,
    segments: Range<usize>,
    out: &mut [T],
) {
    for (s, val) in segments.zip(out.chunks_exact_mut(rows.width())) {
        let slots = plan.slots(s);
        if !slots.is_empty() && !is_long(plan, s) {
            values::<T, MAX>(rows, plan, slots, val);
        }
    }
}

/// The extreme of the rows at CSR positions `slots` (at least one) into `val`: the first row,
/// then the others folded in by [`fold_row`]'s rule, 128 bytes of columns at a time (then 16,
/// 8, 4, 2, 1 values).
#[inline(always)]
fn values<T: Elem, const MAX: bool>(
    rows: Rows<T>,
    plan: &CsrPlan,
    slots: Range<usize>,
    val: &mut [T],
) {
    val.copy_from_slice(rows.row(plan.row_at(slots.start)));
    let rest = slots.start + 1..slots.end;
    let (d, mut j0) = (rows.width(), 0);
    let block = if core::mem::size_of::<T>() <= 4 {
        32
    } else {
        16
    };
    while j0 + block <= d {
        match block {
            32 => values_cols::<T, MAX, 32>(rows, plan, rest.clone(), val, j0),
            _ => values_cols::<T, MAX, 16>(rows, plan, rest.clone(), val, j0),
        }
        j0 += block;
    }
    for w in [16, 8, 4, 2, 1] {
        if j0 + w <= d {
            match w {
                16 => values_cols::<T, MAX, 16>(rows, plan, rest.clone(), val, j0),
                8 => values_cols::<T, MAX, 8>(rows, plan, rest.clone(), val, j0),
                4 => values_cols::<T, MAX, 4>(rows, plan, rest.clone(), val, j0),
                2 => values_cols::<T, MAX, 2>(rows, plan, rest.clone(), val, j0),
                _ => values_cols::<T, MAX, 1>(rows, plan, rest.clone(), val, j0),
            }
            j0 += w;
        }
    }
}

/// Folds columns `j0..j0 + W` of the rows at `slots` into `val`. Without a NaN the rule is a
/// plain compare-and-select (a max / min instruction where the compiler finds one), and a
/// running sum notes whether a NaN was seen (it is NaN then; `inf - inf` also makes it NaN,
/// harmlessly): a block that saw one is folded again by [`fold_row`]'s full rule. Either way
/// the bits are [`fold_row`]'s.
#[inline(always)]
fn values_cols<T: Elem, const MAX: bool, const W: usize>(
    rows: Rows<T>,
    plan: &CsrPlan,
    slots: Range<usize>,
    val: &mut [T],
    j0: usize,
) {
    let start: [T; W] = val[j0..j0 + W].try_into().expect("a full block");
    let (mut v, mut probe) = (start, start);
    // Whole blocks rebuilt, not updated one `&mut` value at a time: that loop was not
    // vectorised at `W = 16`.
    for_block(rows, plan, slots.clone(), j0, |x: &[T; W]| {
        v = core::array::from_fn(|j| {
            let better = if MAX { x[j] > v[j] } else { x[j] < v[j] };
            T::pick(better, x[j], v[j])
        });
        probe = core::array::from_fn(|j| probe[j].add(x[j]));
    });
    #[allow(clippy::eq_op)]
    if probe.iter().any(|p| p != p) {
        v = start;
        let none = &mut [NoArg; W];
        for_block(rows, plan, slots, j0, |x: &[T; W]| {
            fold_row::<T, NoArg, MAX>(&mut v, none, x, NoArg)
        });
    }
    val[j0..j0 + W].copy_from_slice(&v);
}

simd_dispatch!(
    /// [`values_run`] compiled for `simd`.
    fn values_run_simd = values_run [T: Elem, const MAX: bool] [T, MAX] (
        rows: Rows<T>,
        plan: &CsrPlan,
        segments: Range<usize>,
        out: &mut [T],
    )
);

simd_dispatch!(
    /// [`values`] compiled for `simd`.
    fn values_simd = values [T: Elem, const MAX: bool] [T, MAX] (
        rows: Rows<T>,
        plan: &CsrPlan,
        slots: Range<usize>,
        val: &mut [T],
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::simd::Level;
    use crate::host::testing::{bits, for_each_width};

    #[test]
    fn values_only_extremes_keep_the_first_attaining_value_at_every_width() {
        // Against a scalar fold in row order (strictly better, or the first NaN), with and
        // without NaN: ties of -0 and +0 show which one is kept, so a fold that took a later
        // equal value fails.
        let plain = |k: usize| match k % 12 {
            0 => -0.0,
            1 => 0.0,
            2 => f32::INFINITY,
            3 => f32::NEG_INFINITY,
            k => (k % 5) as f32 - 2.0,
        };
        let with_nan = |k: usize| {
            if k.is_multiple_of(97) {
                f32::NAN
            } else {
                plain(k)
            }
        };
        for (seed, value) in [(7, &plain as &dyn Fn(usize) -> f32), (8, &with_nan)] {
            for_each_width(seed, value, |rows, plan, column| {
                let d = rows.width();
                for extreme in [Extreme::Max, Extreme::Min] {
                    let wins = |held: f32, v: f32| match extreme {
                        Extreme::Max => v > held || v.is_nan() && !held.is_nan(),
                        Extreme::Min => v < held || v.is_nan() && !held.is_nan(),
                    };
                    let identity = match extreme {
                        Extreme::Max => f32::NEG_INFINITY,
                        Extreme::Min => f32::INFINITY,
                    };
                    for level in [Level::Base, Level::Avx2, Level::Avx512] {
                        let simd = Simd::detect().at_most(level);
                        let got =
                            reduce_extreme_values::<f32>(simd, Alloc::Vec, rows, plan, extreme);
                        for s in 0..plan.num_segments() {
                            let want: Vec<f32> = (0..d)
                                .map(|c| {
                                    let col = column(s, c);
                                    let first = col.first().copied().unwrap_or(identity);
                                    col.iter().skip(1).fold(first, |held, &v| {
                                        if wins(held, v) { v } else { held }
                                    })
                                })
                                .collect();
                            let got = &got[s * d..(s + 1) * d];
                            // Exact bits, -0 and +0 apart (every NaN alike).
                            assert_eq!(bits(got), bits(&want), "d {d} {level:?} {extreme:?}");
                        }
                    }
                }
            });
        }
    }
}
