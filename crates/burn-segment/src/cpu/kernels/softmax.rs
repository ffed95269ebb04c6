//! Softmax over each segment's rows, out of place or over its input.

use core::mem::MaybeUninit;
use core::ops::Range;

use rayon::prelude::*;

use super::memory::{Alloc, Out, assume_written, output_unwritten};
use super::{Rows, RowsPtr, chunk_tree, chunks, is_long};
use crate::host::csr::{CsrPlan, TO_L1};
use crate::host::elem::FloatElem;
use crate::host::simd::{Simd, simd_dispatch};

// ANCHOR: kernel_softmax
/// Softmax of each segment's rows, column-wise, shifted by the segment maximum.
///
/// A column holding NaN or `+inf`, or only `-inf`, gives NaN in all its rows (as `softmax` does
/// in torch and jax).
/// The output comes from `alloc`.
pub fn softmax<T: FloatElem>(alloc: Alloc, rows: Rows<T>, plan: &CsrPlan) -> Out<T> {
    // Each row's segment task copies it in before working on it: no fill pass over the output
    // first, once the plan is checked to hold every row.
    let (d, len) = (rows.width(), rows.len() * rows.width());
    plan.assert_holds_rows(len, d, "softmax data");
    let mut out = output_unwritten::<T>(alloc, len);
    // SAFETY: `src` is given, so `out` needs no values.
    unsafe { softmax_into(Simd::detect(), Some(rows), &mut out, d, plan) };
    // SAFETY: `softmax_into` copied every row of `src` into `out` before normalising it, and
    // the plan's segments hold every row (checked above).
    unsafe { assume_written(out) }
}

/// [`softmax`] written over its input: no output to allocate, and so no fresh pages for the
/// system to clear (a fifth to a quarter of a large out-of-place softmax's time in profiles).
/// The same results.
pub fn softmax_in_place<T: FloatElem>(data: &mut [T], d: usize, plan: &CsrPlan) {
    // SAFETY: `data` holds values, and `softmax_into` writes only values over them.
    unsafe { softmax_into(Simd::detect(), None, as_uninit_mut(data), d, plan) }
}

/// `values` seen as slots that may be written (only with values, which keeps them valid).
fn as_uninit_mut<T>(values: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and every `T` is a valid `MaybeUninit<T>`;
    // the slots are only ever written with values through the returned slice.
    unsafe { &mut *(values as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// Softmax of `src`'s rows into `out`, or of `out`'s own rows where `src` is `None`, with the
/// per-segment body compiled for `simd`.
///
/// # Safety
/// Where `src` is `None`, every element of `out` must hold a value (it is the input). Where
/// `src` is given, `out` may hold none: each row is written from `src` before it is read.
unsafe fn softmax_into<T: FloatElem>(
    simd: Simd,
    src: Option<Rows<T>>,
    out: &mut [MaybeUninit<T>],
    d: usize,
    plan: &CsrPlan,
) {
    let rows = out.len().checked_div(d).unwrap_or(0);
    debug_assert_eq!(plan.num_rows(), rows);
    debug_assert!(src.is_none_or(|src| src.len() == rows && src.width() == d));
    if d == 0 || rows == 0 {
        return;
    }
    let ptr = RowsPtr(out.as_mut_ptr() as *mut T);
    let min_len = plan.min_len(d);
    (0..plan.num_segments())
        .into_par_iter()
        .with_min_len(min_len)
        .for_each_init(
            || vec![T::ZERO; 2 * d],
            |scratch, s| {
                // SAFETY: `ptr` is `out`, `rows × d` long, which `src` (a shared borrow) cannot
                // overlap, and this task is the only one that handles segment `s`, so no other
                // touches its rows; without `src` they hold values (this function's contract).
                unsafe {
                    if is_long(plan, s) {
                        softmax_long(simd, src, d, plan, s, ptr)
                    } else {
                        softmax_segment_simd(simd, src, d, plan, s, scratch, ptr)
                    }
                };
            },
        );
}

/// One segment of [`softmax`]: its maximum per column into `scratch[..d]` (copying `src`'s rows
/// into `out` on the way, if given), the sums of the exponentials into `scratch[d..]`, and the
/// normalised exponentials into its rows of `out`.
///
/// # Safety
/// `ptr` must point to a buffer of `plan`'s rows × `d` elements whose rows of segment `s` no
/// other live reference touches (each task of [`softmax`] writes its own segments' rows), and
/// `src`, if given, must not overlap it. Without `src`, the rows must hold values; with it,
/// they need not (each is written from `src` before it is read).
#[inline(always)]
unsafe fn softmax_segment<T: FloatElem>(
    src: Option<Rows<T>>,
    d: usize,
    plan: &CsrPlan,
    s: usize,
    scratch: &mut [T],
    ptr: RowsPtr<T>,
) {
    let (shift, sum) = scratch.split_at_mut(d);
    let Some(first) = plan.first_row(s) else {
        return;
    };
    // SAFETY (every `ptr.row(r, d)` below): row `r` belongs to segment `s` only (the plan is a
    // permutation of the rows), so no other task reads or writes it, and it lies inside the
    // buffer because `r < rows`.
    let first_row = match src {
        Some(src) => src.row(first),
        None => unsafe { ptr.row(first, d) },
    };
    shift.copy_from_slice(first_row);
    // The maximum ignoring NaN: a NaN still reaches every row of its column, through the sum of
    // the exponentials below. (Letting NaN win took a select on the running maximum, which LLVM
    // turned into masked stores, slow on AMD CPUs.)
    let fold = |shift: &mut [T], x: &[T]| {
        for (m, &v) in shift.iter_mut().zip(x) {
            *m = m.max_num(v);
        }
    };
    match src {
        // `src`'s rows into every level (the second only ran slower in the segment bench),
        // `out`'s own rows into the second (see `TO_L2`).
        Some(src) => plan.for_rows_prefetch_to::<TO_L1, T>(s, src, |r| {
            let x = src.row(r);
            fold(shift, x);
            unsafe { ptr.write_row(r, x) };
        }),
        None => plan.for_rows_ahead(
            s,
            |ahead| ptr.prefetch(ahead, d),
            |r| fold(shift, unsafe { ptr.row(r, d) }),
        ),
    }
    // Shift by the maximum, or by 0 where every logit is -inf (0/0 = NaN then, as a
    // softmax of nothing but -inf is undefined). A +inf maximum gives NaN as in torch.
    for m in shift.iter_mut() {
        if *m == T::LOWEST {
            *m = T::ZERO;
        }
    }
    sum.iter_mut().for_each(|v| *v = T::ZERO);
    unsafe { exp_slots(d, plan, plan.slots(s), shift, sum, ptr) };
    plan.for_rows(s, |r| {
        let y = unsafe { ptr.row(r, d) };
        y.iter_mut()
            .zip(sum.iter())
            .for_each(|(v, &t)| *v = v.div(t));
    });
}
// ANCHOR_END: kernel_softmax

/// [`softmax_segment`] for a segment of more than [`CHUNK_ROWS`](super::CHUNK_ROWS) rows: each
/// of its three passes runs over the segment's chunks in parallel. The maximum is exact in any
/// order; the sums of the exponentials are combined in [`chunk_tree`]'s fixed tree, so the
/// result does not depend on the number of threads.
///
/// # Safety
/// As [`softmax_segment`].
unsafe fn softmax_long<T: FloatElem>(
    simd: Simd,
    src: Option<Rows<T>>,
    d: usize,
    plan: &CsrPlan,
    s: usize,
    ptr: RowsPtr<T>,
) {
    // SAFETY (every `ptr.row` / `ptr.write_row` below): the chunks split segment `s`'s rows,
    // which only this segment's task touches, so each row is reached by one chunk task alone.
    let row = |r: usize| match src {
        Some(src) => src.row(r),
        None => unsafe { ptr.row(r, d) },
    };
    let max = |slots: Range<usize>| {
        let mut m = row(plan.row_at(slots.start)).to_vec();
        plan.for_slots(slots, |r| {
            let x = row(r);
            m.iter_mut().zip(x).for_each(|(m, &v)| *m = m.max_num(v));
            if src.is_some() {
                unsafe { ptr.write_row(r, x) };
            }
        });
        m
    };
    let mut shift = chunk_tree(plan, s, max, |mut l, r| {
        l.iter_mut().zip(r).for_each(|(a, b)| *a = a.max_num(b));
        l
    });
    // As in `softmax_segment`: shift by 0 where every logit is -inf.
    for m in shift.iter_mut() {
        if *m == T::LOWEST {
            *m = T::ZERO;
        }
    }
    let exp_sum = |slots| {
        let mut sum = vec![T::ZERO; d];
        unsafe { exp_slots_simd(simd, d, plan, slots, &shift, &mut sum, ptr) };
        sum
    };
    let sum = chunk_tree(plan, s, exp_sum, |mut l, r| {
        l.iter_mut().zip(r).for_each(|(a, b)| *a = a.add(b));
        l
    });
    chunks(plan, s).into_par_iter().for_each(|slots| {
        plan.for_slots(slots, |r| {
            let y = unsafe { ptr.row(r, d) };
            y.iter_mut().zip(&sum).for_each(|(v, &t)| *v = v.div(t));
        })
    });
}

/// The rows at CSR positions `slots` of `ptr` replaced by `exp(row - shift)`, summed into `sum`
/// in row order.
///
/// # Safety
/// As [`softmax_segment`], for the rows at `slots`.
#[inline(always)]
unsafe fn exp_slots<T: FloatElem>(
    d: usize,
    plan: &CsrPlan,
    slots: Range<usize>,
    shift: &[T],
    sum: &mut [T],
    ptr: RowsPtr<T>,
) {
    plan.for_slots(slots, |r| {
        let y = unsafe { ptr.row(r, d) };
        // Zipped rather than indexed: no bounds checks, so the loop (and `exp`) vectorises.
        for ((y, &m), t) in y.iter_mut().zip(shift).zip(sum.iter_mut()) {
            let e = y.sub(m).exp();
            *y = e;
            *t = t.add(e);
        }
    });
}

simd_dispatch!(
    /// [`exp_slots`] compiled for `simd`.
    ///
    /// # Safety
    /// As [`exp_slots`].
    unsafe fn exp_slots_simd = exp_slots [T: FloatElem] [T] (
        d: usize,
        plan: &CsrPlan,
        slots: Range<usize>,
        shift: &[T],
        sum: &mut [T],
        ptr: RowsPtr<T>,
    )
);

simd_dispatch!(
    /// [`softmax_segment`] compiled for `simd`: its `exp` loop runs 8 (AVX2) or 16 (AVX-512)
    /// lanes wide instead of SSE2's 4.
    ///
    /// # Safety
    /// As [`softmax_segment`].
    unsafe fn softmax_segment_simd = softmax_segment [T: FloatElem] [T] (
        src: Option<Rows<T>>,
        d: usize,
        plan: &CsrPlan,
        s: usize,
        scratch: &mut [T],
        ptr: RowsPtr<T>,
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::simd::Level;
    use crate::host::testing::{bits, lcg};

    #[test]
    fn softmax_in_place_gives_the_out_of_place_result_bit_for_bit() {
        // Pseudo-random rows with NaN, ±inf and whole -inf columns mixed in, in segments of
        // every length from 0 to 40 (so prefetching rows ahead crosses segments), ids sorted
        // and shuffled.
        let (d, n) = (3usize, 40usize);
        let mut ids: Vec<i64> = (0..n as i64)
            .flat_map(|s| std::iter::repeat_n(s, s as usize))
            .collect();
        let rows = ids.len();
        let mut next = lcg(7);
        let data: Vec<f32> = (0..rows * d)
            .map(|i| match next() % 50 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2..=4 => f32::NEG_INFINITY,
                _ if i % d == 2 && i / d % 7 == 0 => f32::NEG_INFINITY,
                k => k as f32 / 3.0 - 8.0,
            })
            .collect();
        for shuffled in [false, true] {
            if shuffled {
                for i in (1..rows).rev() {
                    ids.swap(i, next() % (i + 1));
                }
            }
            let plan = CsrPlan::new(&ids, n);
            assert_eq!(plan.is_sorted(), !shuffled);
            let want = softmax(Alloc::Vec, Rows::new(&data, d), &plan);
            assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| *v > 0.0));
            let mut got = data.clone();
            softmax_in_place(&mut got, d, &plan);
            assert_eq!(bits(&got), bits(&want), "shuffled: {shuffled}");
            // Every instruction set this CPU has, in place and not: the same bits.
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let mut got = vec![0.0; data.len()];
                // SAFETY: with `src` given, `got` needs no values (it holds zeros anyway).
                unsafe {
                    softmax_into(
                        Simd::detect().at_most(level),
                        Some(Rows::new(&data, d)),
                        as_uninit_mut(&mut got),
                        d,
                        &plan,
                    )
                };
                assert_eq!(bits(&got), bits(&want), "{level:?}, shuffled: {shuffled}");
                let mut got = data.clone();
                // SAFETY: `got` holds the input's values.
                unsafe {
                    softmax_into(
                        Simd::detect().at_most(level),
                        None,
                        as_uninit_mut(&mut got),
                        d,
                        &plan,
                    )
                };
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{level:?} in place, shuffled: {shuffled}"
                );
            }
        }
    }
}
