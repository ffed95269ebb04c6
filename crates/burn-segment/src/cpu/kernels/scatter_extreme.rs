//! Max and min over unsorted ids without a CSR plan, for narrow rows: the owners of
//! [`scatter`](super::scatter) folding each row into its segment's running extreme (and the
//! row that attains it) by [`fold_row`](super::extreme::fold_row)'s rule. An extreme is the same
//! for any grouping of a segment's rows, so no segment is folded again.

use core::mem::MaybeUninit;

use rayon::prelude::*;

use super::elem::{Elem, IdElem};
use super::extreme::{ArgIndex, NoArg, wins};
use super::output::{Alloc, Out, assume_written, output_unwritten};
use super::scatter::{TRASH, ahead, block, local, per_owner, prefetch_target, target};
use super::{Rows, assume_init_mut};
use crate::SegmentExtreme as Extreme;
use crate::cpu::simd::{Simd, simd_dispatch};

/// Max or min of each segment with the row that attains it (ties to the smaller row, the
/// first NaN wins; identity and -1 when empty): `reduce_extreme`'s values and arguments.
pub(crate) fn scatter_extreme<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    extreme: Extreme,
) -> (Out<T>, Out<I>) {
    match extreme {
        Extreme::Max => extreme_with::<T, I, true>(simd, alloc, rows, ids, num_segments),
        Extreme::Min => extreme_with::<T, I, false>(simd, alloc, rows, ids, num_segments),
    }
}

fn extreme_with<T: Elem, I: IdElem, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
) -> (Out<T>, Out<I>) {
    let (d, per) = (rows.width(), per_owner(num_segments));
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    let mut args = output_unwritten::<I>(alloc, num_segments * d);
    values
        .par_chunks_mut(per * d)
        .zip(args.par_chunks_mut(per * d))
        .enumerate()
        .for_each(|(k, (val, arg))| {
            // Row indices as u32 (fewer than u32::MAX rows take this path), widened here.
            let local = fold_owner::<T, I, u32, MAX>(simd, rows, ids, k * per, val);
            for (a, l) in arg.iter_mut().zip(local) {
                a.write(I::from_i64(if l.is_none() { -1 } else { l as i64 }));
            }
        });
    // SAFETY: each owner wrote every value (the identity, then its rows) and every argument.
    unsafe { (assume_written(values), assume_written(args)) }
}

/// Max or min of each segment, values only: [`scatter_extreme`]'s values, without the arguments.
pub(crate) fn scatter_extreme_values<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    extreme: Extreme,
) -> Out<T> {
    let (d, per) = (rows.width(), per_owner(num_segments));
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    values
        .par_chunks_mut(per * d)
        .enumerate()
        .for_each(|(k, val)| match extreme {
            Extreme::Max => _ = fold_owner::<T, I, NoArg, true>(simd, rows, ids, k * per, val),
            Extreme::Min => _ = fold_owner::<T, I, NoArg, false>(simd, rows, ids, k * per, val),
        });
    // SAFETY: each owner wrote every value (the identity, then its rows).
    unsafe { assume_written(values) }
}

/// Writes the extremes of the owner of segments `lo..` over `val`, its slice of the values (the
/// identity where a segment has no rows), and returns the row of each (as `A`, `A::NONE` where
/// a segment has no rows).
fn fold_owner<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    simd: Simd,
    rows: Rows<T>,
    ids: &[I],
    lo: usize,
    val: &mut [MaybeUninit<T>],
) -> Vec<A> {
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    val.iter_mut().for_each(|x| _ = x.write(init));
    // SAFETY: every element was written just above.
    let val = unsafe { assume_init_mut(val) };
    let mut arg = vec![A::NONE; val.len()];
    fold_owned_simd::<T, I, A, MAX>(simd, rows, ids, lo, val, &mut arg);
    arg
}

/// Folds every row whose segment lies in `lo..lo + val.len() / d` into its segment's running
/// extreme in `val` / `arg`, in row order: a segment's first row (its argument still
/// `A::NONE`) is taken as it is, as the CSR kernel does, the others by `fold_row`'s rule.
// The loop repeats `add_owned`'s on purpose: through one closure-taking helper the extremes ran
// 1.4x slower (benches/RESULTS.md).
#[inline(always)]
fn fold_owned<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    rows: Rows<T>,
    ids: &[I],
    lo: usize,
    val: &mut [T],
    arg: &mut [A],
) {
    match rows.width() {
        1 => fold_owned_width::<T, I, A, MAX, 1>(rows, ids, lo, val, arg),
        16 => fold_owned_width::<T, I, A, MAX, 16>(rows, ids, lo, val, arg),
        _ => fold_owned_width::<T, I, A, MAX, 0>(rows, ids, lo, val, arg),
    }
}

/// [`fold_owned`] for rows of `W` values (0: any width), as `scatter::add_owned_width`.
#[inline(always)]
fn fold_owned_width<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool, const W: usize>(
    rows: Rows<T>,
    ids: &[I],
    lo: usize,
    val: &mut [T],
    arg: &mut [A],
) {
    let d = if W == 0 { rows.width() } else { W };
    let per = val.len() / d;
    let (mut trash_val, mut trash_arg) = (vec![T::ZERO; TRASH * d], vec![A::NONE; TRASH * d]);
    let (base, spare) = (val.as_mut_ptr(), trash_val.as_mut_ptr());
    let (arg_base, arg_spare) = (arg.as_mut_ptr(), trash_arg.as_mut_ptr());
    let ahead = ahead(ids.len(), per, d * (size_of::<T>() + size_of::<A>()));
    for (r, &id) in ids.iter().enumerate() {
        if let Some(&next) = ids.get(r + ahead) {
            let l = local(next, lo);
            prefetch_target(base, spare, l, per, d);
            // The arguments' row is a second random line (none for the values alone).
            prefetch_target(arg_base, arg_spare, l, per, d);
        }
        let l = local(id, lo);
        // SAFETY: each `target` is row `l < per` of `val` / `arg` or a row of the trash: `d`
        // values that no other reference here points into.
        let (v, a) = unsafe {
            (
                core::slice::from_raw_parts_mut(target(base, spare, l, per, r, d), d),
                core::slice::from_raw_parts_mut(target(arg_base, arg_spare, l, per, r, d), d),
            )
        };
        let row = A::from_row(r);
        if size_of::<A>() == 0 && W != 0 {
            // Values only, all loads before all stores: the compiler cannot tell that `v` and
            // the row do not overlap, and would otherwise fold one value at a time.
            let (x, held) = (block::<T, W>(rows.row(r)), block::<T, W>(v));
            v.copy_from_slice(&core::array::from_fn::<T, W, _>(|j| {
                T::pick(wins::<T, MAX>(held[j], x[j]), x[j], held[j])
            }));
            continue;
        }
        for ((c, a), &x) in v.iter_mut().zip(a.iter_mut()).zip(rows.row(r)) {
            let take = wins::<T, MAX>(*c, x) | a.is_none();
            *c = T::pick(take, x, *c);
            *a = A::pick(take, row, *a);
        }
    }
}

simd_dispatch!(
    /// [`fold_owned`] compiled for `simd`.
    fn fold_owned_simd = fold_owned [T: Elem, I: IdElem, A: ArgIndex, const MAX: bool] [T, I, A, MAX] (
        rows: Rows<T>,
        ids: &[I],
        lo: usize,
        val: &mut [T],
        arg: &mut [A],
    )
);
