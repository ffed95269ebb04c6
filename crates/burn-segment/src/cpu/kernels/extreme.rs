//! Max and min of each segment's rows, with the row that attains them.

use core::mem::MaybeUninit;
use core::ops::Range;

use rayon::prelude::*;

use super::memory::{Alloc, Out, assume_written, output_unwritten};
use super::{Rows, chunk_tree, is_long, parallel};
use crate::SegmentExtreme as Extreme;
use crate::host::csr::CsrPlan;
use crate::host::elem::{Elem, IdElem, pick_bits};
use crate::host::simd::{Level, Simd, simd_dispatch};

/// Row indices as the extreme kernels track them: the same width as the data where possible,
/// so that the value and index updates vectorise together.
pub(super) trait ArgIndex: Copy + Send + Sync + Default {
    /// The index before any row: a running extreme holding it takes the next row as it is.
    const NONE: Self;
    fn from_row(row: usize) -> Self;
    fn is_none(self) -> bool;
    fn to_i64(self) -> i64;
    fn pick(take: bool, a: Self, b: Self) -> Self;
}
macro_rules! arg_index {
    ($t:ty) => {
        impl ArgIndex for $t {
            const NONE: Self = <$t>::MAX;
            #[inline(always)]
            fn from_row(row: usize) -> Self {
                row as $t
            }
            #[inline(always)]
            fn is_none(self) -> bool {
                self == Self::NONE
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            pick_bits!($t);
        }
    };
}
arg_index!(u32);
arg_index!(u64);

/// No argument at all: the values-only extremes fold with this zero-sized index.
#[derive(Clone, Copy, Default)]
pub(super) struct NoArg;

impl ArgIndex for NoArg {
    // Never "none": the values alone, from the identity, already take a segment's first row.
    const NONE: Self = NoArg;
    #[inline(always)]
    fn from_row(_: usize) -> Self {
        NoArg
    }
    #[inline(always)]
    fn is_none(self) -> bool {
        false
    }
    fn to_i64(self) -> i64 {
        -1
    }
    #[inline(always)]
    fn pick(_: bool, _: Self, _: Self) -> Self {
        NoArg
    }
}

/// Whether `v`, coming after `held`, replaces it: strictly better, or the first NaN.
#[inline(always)]
pub(super) fn wins<T: Elem, const MAX: bool>(held: T, v: T) -> bool {
    let better = if MAX { v > held } else { v < held };
    #[allow(clippy::eq_op)]
    let first_nan = v != v && held == held;
    better | first_nan
}

/// Folds row `x` (index `row`) into the running extreme: take `v` if it is strictly better, or
/// the first NaN; a NaN already held is never replaced. Branch-free so that it vectorises.
#[inline(always)]
pub(super) fn fold_row<T: Elem, A: ArgIndex, const MAX: bool>(
    val: &mut [T],
    arg: &mut [A],
    x: &[T],
    row: A,
) {
    for ((c, a), &v) in val.iter_mut().zip(arg.iter_mut()).zip(x) {
        let take = wins::<T, MAX>(*c, v);
        *c = T::pick(take, v, *c);
        *a = A::pick(take, row, *a);
    }
}

/// The instruction set of the extreme kernels: AVX2, as 16-lane blends ran slower than 8-lane
/// ones in the segment bench; the AVX-512 copy is tested all the same.
pub fn extreme_simd() -> Simd {
    Simd::detect().at_most(Level::Avx2)
}

/// Max or min of each segment with the row index that attains it, with the per-segment body
/// compiled for `simd` and the outputs from `alloc`.
///
/// Ties keep the smallest row index; NaN wins over any number and the first NaN is the argument.
/// Empty segments get the identity (`LOWEST` / `HIGHEST`) and argument -1.
pub fn reduce_extreme<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    plan: &CsrPlan,
    extreme: Extreme,
) -> (Out<T>, Out<I>) {
    match (
        extreme,
        plan.num_rows() <= u32::MAX as usize && core::mem::size_of::<T>() <= 4,
    ) {
        (Extreme::Max, true) => extreme_with::<T, I, u32, true>(simd, alloc, rows, plan),
        (Extreme::Min, true) => extreme_with::<T, I, u32, false>(simd, alloc, rows, plan),
        (Extreme::Max, false) => extreme_with::<T, I, u64, true>(simd, alloc, rows, plan),
        (Extreme::Min, false) => extreme_with::<T, I, u64, false>(simd, alloc, rows, plan),
    }
}

fn extreme_with<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    plan: &CsrPlan,
) -> (Out<T>, Out<I>) {
    let (n, d) = (plan.num_segments(), rows.width());
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    // Both outputs are written once, segment by segment (no fill pass first): at 1e7 rows and
    // D = 64 they are 768 MiB, and one thread filling them took a third of the kernel's time.
    let mut values = output_unwritten::<T>(alloc, n * d);
    let mut args = output_unwritten::<I>(alloc, n * d);
    if d > 0 {
        let scratch = || (vec![T::ZERO; d], vec![A::default(); d]);
        let segment = |(local_val, local_arg): &mut (Vec<T>, Vec<A>),
                       s: usize,
                       val: &mut [MaybeUninit<T>],
                       arg: &mut [MaybeUninit<I>]| {
            let Some(first) = plan.first_row(s) else {
                val.iter_mut().for_each(|v| _ = v.write(init));
                arg.iter_mut().for_each(|a| _ = a.write(I::from_i64(-1)));
                return;
            };
            if is_long(plan, s) {
                let (v, a) = chunk_tree(
                    plan,
                    s,
                    |slots| {
                        let first = plan.row_at(slots.start);
                        let mut v = rows.row(first).to_vec();
                        let mut a = vec![A::from_row(first); d];
                        fold_slots_simd::<T, A, MAX>(
                            simd, rows, plan, slots, first, &mut v, &mut a,
                        );
                        (v, a)
                    },
                    combine::<T, A, MAX>,
                );
                local_val.copy_from_slice(&v);
                local_arg.copy_from_slice(&a);
            } else {
                local_val.copy_from_slice(rows.row(first));
                local_arg.iter_mut().for_each(|a| *a = A::from_row(first));
                fold_slots_simd::<T, A, MAX>(
                    simd,
                    rows,
                    plan,
                    plan.slots(s),
                    first,
                    local_val,
                    local_arg,
                );
            }
            val.iter_mut()
                .zip(local_val.iter())
                .for_each(|(v, &l)| _ = v.write(l));
            arg.iter_mut()
                .zip(local_arg.iter())
                .for_each(|(a, l)| _ = a.write(I::from_i64(l.to_i64())));
        };
        if parallel(plan, d) {
            let rows = values
                .par_chunks_mut(d)
                .zip(args.par_chunks_mut(d))
                .enumerate();
            let rows = rows.with_min_len(plan.min_len(d));
            rows.for_each_init(scratch, |local, (s, (v, a))| segment(local, s, v, a));
        } else {
            let mut scratch = scratch();
            let rows = values.chunks_mut(d).zip(args.chunks_mut(d)).enumerate();
            rows.for_each(|(s, (v, a))| segment(&mut scratch, s, v, a));
        }
    }
    // SAFETY: the loop above wrote every row of both outputs (a segment's row when it has
    // rows, the identity and -1 when it is empty); with `d == 0` they hold no elements.
    unsafe { (assume_written(values), assume_written(args)) }
}

/// The extremes of two chunks, the left one's rows first: the rule of [`fold_row`] per column,
/// so the result is the one a single pass in row order finds.
pub(super) fn combine<T: Elem, A: ArgIndex, const MAX: bool>(
    (mut val, mut arg): (Vec<T>, Vec<A>),
    (right_val, right_arg): (Vec<T>, Vec<A>),
) -> (Vec<T>, Vec<A>) {
    for ((c, a), (v, r)) in val
        .iter_mut()
        .zip(arg.iter_mut())
        .zip(right_val.into_iter().zip(right_arg))
    {
        if wins::<T, MAX>(*c, v) {
            (*c, *a) = (v, r);
        }
    }
    (val, arg)
}

/// Columns folded at once: the running values and arguments of a block stay in registers for
/// all the rows of a segment, so nothing is stored per row.
const BLOCK: usize = 16;

/// Folds every row at CSR positions `slots` but `first` into `val` / `arg`, `BLOCK` columns at
/// a time.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fold_slots<T: Elem, A: ArgIndex, const MAX: bool>(
    rows: Rows<T>,
    plan: &CsrPlan,
    slots: Range<usize>,
    first: usize,
    val: &mut [T],
    arg: &mut [A],
) {
    let (d, mut j0) = (rows.width(), 0);
    while j0 + BLOCK <= d {
        let mut v: [T; BLOCK] = val[j0..j0 + BLOCK].try_into().expect("a full block");
        let mut a: [A; BLOCK] = arg[j0..j0 + BLOCK].try_into().expect("a full block");
        plan.for_slots_prefetch(slots.clone(), rows, |r| {
            if r != first {
                let x: &[T; BLOCK] = rows
                    .cols(r, j0..j0 + BLOCK)
                    .try_into()
                    .expect("a full block");
                fold_row::<T, A, MAX>(&mut v, &mut a, x, A::from_row(r));
            }
        });
        val[j0..j0 + BLOCK].copy_from_slice(&v);
        arg[j0..j0 + BLOCK].copy_from_slice(&a);
        j0 += BLOCK;
    }
    if j0 < d {
        let (val, arg) = (&mut val[j0..], &mut arg[j0..]);
        plan.for_slots_prefetch(slots.clone(), rows, |r| {
            if r != first {
                fold_row::<T, A, MAX>(val, arg, rows.cols(r, j0..d), A::from_row(r));
            }
        });
    }
}

simd_dispatch!(
    /// [`fold_slots`] compiled for `simd` (the branch-free selects become blends).
    fn fold_slots_simd = fold_slots [T: Elem, A: ArgIndex, const MAX: bool] [T, A, MAX] (
        rows: Rows<T>,
        plan: &CsrPlan,
        slots: Range<usize>,
        first: usize,
        val: &mut [T],
        arg: &mut [A],
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::kernels::reduce_extreme_values;
    use crate::host::testing::{bits, for_each_isa_case};

    #[test]
    fn extremes_give_the_same_bits_and_arguments_on_every_instruction_set() {
        // Ties, NaN and infinities mixed in.
        let value = |k: usize| match k % 40 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            k => (k % 7) as f32 - 3.0,
        };
        for_each_isa_case(11, value, |rows, plan, shuffled| {
            for extreme in [Extreme::Max, Extreme::Min] {
                let (want_v, want_a) = reduce_extreme::<f32, i64>(
                    Simd::detect().at_most(Level::Base),
                    Alloc::Vec,
                    rows,
                    plan,
                    extreme,
                );
                assert!(want_a.contains(&-1) && want_v.iter().any(|v| v.is_nan()));
                for level in [Level::Avx2, Level::Avx512] {
                    let (v, a) = reduce_extreme::<f32, i64>(
                        Simd::detect().at_most(level),
                        Alloc::Vec,
                        rows,
                        plan,
                        extreme,
                    );
                    assert_eq!(
                        (bits(&v), &a[..]),
                        (bits(&want_v), &want_a[..]),
                        "{level:?} {extreme:?} shuffled: {shuffled}"
                    );
                }
                // Values only: the same bits.
                for level in [Level::Base, Level::Avx2, Level::Avx512] {
                    let simd = Simd::detect().at_most(level);
                    let v = reduce_extreme_values::<f32>(simd, Alloc::Vec, rows, plan, extreme);
                    assert_eq!(bits(&v), bits(&want_v), "values, {level:?} {extreme:?}");
                }
            }
        });
    }
}
