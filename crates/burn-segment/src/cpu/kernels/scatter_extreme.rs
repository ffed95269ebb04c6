//! Max and min over unsorted ids without a CSR plan: the owners of [`scatter`](super::scatter)
//! folding each row into its segment's running extreme (and the row that attains it) by
//! [`fold_row`](super::extreme::fold_row)'s rule, or, for the values alone, the rows split
//! between the threads, each folding its part into a partial output that is then merged by the
//! same rule. An extreme is the same for any grouping of a segment's rows, so no segment is
//! folded again, and the bits do not depend on the number of threads.

use core::mem::MaybeUninit;

use rayon::prelude::*;

use super::extreme::{ArgIndex, NoArg, wins};
use super::memory::{Alloc, Out, assume_written, output_unwritten};
use super::owned::{Owner, each_owned};
use super::scatter::{block, each_owner, parts, per_owner, splits_rows};
use super::{Rows, assume_init_mut};
use crate::SegmentExtreme as Extreme;
use crate::host::elem::{Elem, IdElem};
use crate::host::simd::{Simd, simd_dispatch};

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
    let (d, per) = (rows.width(), per_owner(num_segments, ids.len()));
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    let mut args = output_unwritten::<I>(alloc, num_segments * d);
    let whole = per >= num_segments;
    let owner = |k: usize, (val, arg): (&mut [MaybeUninit<T>], &mut [MaybeUninit<I>])| {
        // Row indices as u32 (fewer than u32::MAX rows take this path), widened here.
        let local = fold_owner::<T, I, u32, MAX>(simd, rows, ids, (k * per, whole), val);
        for (a, l) in arg.iter_mut().zip(local) {
            a.write(I::from_i64(if l.is_none() { -1 } else { l as i64 }));
        }
    };
    if whole {
        // One owner, on the calling thread (as `each_owner`).
        owner(0, (&mut values, &mut args));
    } else {
        let chunks = values
            .par_chunks_mut(per * d)
            .zip(args.par_chunks_mut(per * d));
        chunks.enumerate().for_each(|(k, pair)| owner(k, pair));
    }
    // SAFETY: each owner wrote every value (the identity, then its rows) and every argument.
    unsafe { (assume_written(values), assume_written(args)) }
}

/// Max or min of each segment, values only: [`scatter_extreme`]'s values, without the arguments.
///
/// Where [`splits_rows`] allows, each thread folds a part of the rows (the parts in row order)
/// into a partial output of its own, and the partials are then folded in part order by the
/// same rule: the first of equal values (or NaNs) comes from the first part that holds one,
/// and is that part's first, so the bits are the row-order fold's for any number of parts.
/// Each thread reads only its part of the rows, where an owner reads them all.
pub(crate) fn scatter_extreme_values<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    extreme: Extreme,
) -> Out<T> {
    // One part is the owners' single owner, which runs on the calling thread.
    let split = splits_rows(ids.len(), num_segments, rows.width() * size_of::<T>());
    if split && parts(ids.len()) > 1 {
        return match extreme {
            Extreme::Max => split_values::<T, I, true>(simd, alloc, rows, ids, num_segments),
            Extreme::Min => split_values::<T, I, false>(simd, alloc, rows, ids, num_segments),
        };
    }
    // The owners.
    let (d, per) = (rows.width(), per_owner(num_segments, ids.len()));
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    let whole = per >= num_segments;
    each_owner(&mut values, per * d, |k, val| match extreme {
        Extreme::Max => _ = fold_owner::<T, I, NoArg, true>(simd, rows, ids, (k * per, whole), val),
        Extreme::Min => {
            _ = fold_owner::<T, I, NoArg, false>(simd, rows, ids, (k * per, whole), val)
        }
    });
    // SAFETY: each owner wrote every value (the identity, then its rows).
    unsafe { assume_written(values) }
}

/// Values to merge per task.
const MERGE_CHUNK: usize = 1 << 14;

/// [`scatter_extreme_values`] with the rows split into [`parts`] (at least two), one per thread.
fn split_values<T: Elem, I: IdElem, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
) -> Out<T> {
    let len = num_segments * rows.width();
    let (e, parts) = (ids.len(), parts(ids.len()));
    let mut values = output_unwritten::<T>(alloc, len);
    if len == 0 {
        // SAFETY: there is no value to write.
        return unsafe { assume_written(values) };
    }
    // The partials of the later parts; a pooled block goes back to the pool when dropped.
    let mut later = output_unwritten::<T>(alloc, (parts - 1) * len);
    let step = e.div_ceil(parts);
    let mut partials: Vec<&mut [MaybeUninit<T>]> = core::iter::once(&mut values[..])
        .chain(later.chunks_mut(len))
        .collect();
    partials.par_iter_mut().enumerate().for_each(|(k, part)| {
        let range = (k * step).min(e)..((k + 1) * step).min(e);
        _ = fold_owner::<T, I, NoArg, MAX>(
            simd,
            rows.slice(range.clone()),
            &ids[range],
            (0, true),
            part,
        );
    });
    // SAFETY: `fold_owner` wrote every value of every partial (the identity, then its rows).
    let (mut values, later) = unsafe { (assume_written(values), assume_written(later)) };
    let merge_chunk = |c: usize, held: &mut [T]| {
        for part in later.chunks_exact(len) {
            let part = &part[c * MERGE_CHUNK..][..held.len()];
            merge_simd::<T, MAX>(simd, held, part);
        }
    };
    if len <= MERGE_CHUNK {
        // On this thread: waking another would cost more than the merge.
        merge_chunk(0, &mut values);
    } else {
        let chunks = values.par_chunks_mut(MERGE_CHUNK).enumerate();
        chunks.for_each(|(c, held)| merge_chunk(c, held));
    }
    values
}

/// Folds a later part's extremes into `held`, by the rows' rule.
#[inline(always)]
fn merge<T: Elem, const MAX: bool>(held: &mut [T], part: &[T]) {
    for (h, &x) in held.iter_mut().zip(part) {
        *h = T::pick(wins::<T, MAX>(*h, x), x, *h);
    }
}

simd_dispatch!(
    /// [`merge`] compiled for `simd`.
    fn merge_simd = merge [T: Elem, const MAX: bool] [T, MAX] (
        held: &mut [T],
        part: &[T],
    )
);

/// Writes the extremes of the owner of segments `lo..` over `val`, its slice of the values (the
/// identity where a segment has no rows), and returns the row of each (as `A`, `A::NONE` where
/// a segment has no rows); `owner` is `(lo, whole)`, `whole` when `val` holds every segment.
fn fold_owner<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    simd: Simd,
    rows: Rows<T>,
    ids: &[I],
    (lo, whole): (usize, bool),
    val: &mut [MaybeUninit<T>],
) -> Vec<A> {
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    val.iter_mut().for_each(|x| _ = x.write(init));
    // SAFETY: every element was written just above.
    let val = unsafe { assume_init_mut(val) };
    let mut arg = vec![A::NONE; val.len()];
    let owner = Owner { lo, whole, simd };
    fold_owned_simd::<T, I, A, MAX>(simd, rows, ids, owner, val, &mut arg);
    arg
}

/// Folds every row whose segment lies in `owner.lo..owner.lo + val.len() / d` into its
/// segment's running extreme in `val` / `arg`, in row order: a segment's first row (its argument
/// still `A::NONE`) is taken as it is, as the CSR kernel does, the others by `fold_row`'s rule.
#[inline(always)]
fn fold_owned<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    rows: Rows<T>,
    ids: &[I],
    owner: Owner,
    val: &mut [T],
    arg: &mut [A],
) {
    match rows.width() {
        1 => fold_owned_width::<T, I, A, MAX, 1>(rows, ids, owner, val, arg),
        16 => fold_owned_width::<T, I, A, MAX, 16>(rows, ids, owner, val, arg),
        _ => fold_owned_width::<T, I, A, MAX, 0>(rows, ids, owner, val, arg),
    }
}

/// [`fold_owned`] for rows of `W` values (0: any width), as `scatter::add_owned_width`.
#[inline(always)]
fn fold_owned_width<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool, const W: usize>(
    rows: Rows<T>,
    ids: &[I],
    owner: Owner,
    val: &mut [T],
    arg: &mut [A],
) {
    let d = if W == 0 { rows.width() } else { W };
    each_owned!(
        ids,
        owner,
        val.len() / d,
        |l, r| fold_row_at::<T, A, MAX, W>(rows, r, l, val, arg)
    );
}

/// Folds row `r` into segment `l`'s running extreme ([`fold_owned_width`]).
#[inline(always)]
fn fold_row_at<T: Elem, A: ArgIndex, const MAX: bool, const W: usize>(
    rows: Rows<T>,
    r: usize,
    l: usize,
    val: &mut [T],
    arg: &mut [A],
) {
    let d = if W == 0 { rows.width() } else { W };
    let (v, a) = (&mut val[l * d..(l + 1) * d], &mut arg[l * d..(l + 1) * d]);
    let (row, x) = (A::from_row(r), rows.row(r));
    // Values only: whole blocks of columns (the known width, else 16 at a time).
    let mut j0 = 0;
    if size_of::<A>() == 0 && W != 0 {
        fold_block::<T, MAX, W>(v, x);
        return;
    }
    while size_of::<A>() == 0 && j0 + 16 <= d {
        fold_block::<T, MAX, 16>(&mut v[j0..j0 + 16], &x[j0..j0 + 16]);
        j0 += 16;
    }
    let (v, a) = (&mut v[j0..], &mut a[j0..]);
    for ((c, a), &x) in v.iter_mut().zip(a.iter_mut()).zip(&x[j0..]) {
        let take = wins::<T, MAX>(*c, x) | a.is_none();
        *c = T::pick(take, x, *c);
        *a = A::pick(take, row, *a);
    }
}

/// Folds the `W` values of `x` into `held` (values only), all loads before all stores: the
/// compiler cannot tell that the two do not overlap, and would otherwise fold one value at a time.
#[inline(always)]
fn fold_block<T: Elem, const MAX: bool, const W: usize>(held: &mut [T], x: &[T]) {
    let (x, h) = (block::<T, W>(x), block::<T, W>(held));
    held[..W].copy_from_slice(&core::array::from_fn::<T, W, _>(|j| {
        T::pick(wins::<T, MAX>(h[j], x[j]), x[j], h[j])
    }));
}

simd_dispatch!(
    /// [`fold_owned`] compiled for `simd`.
    fn fold_owned_simd = fold_owned [T: Elem, I: IdElem, A: ArgIndex, const MAX: bool] [T, I, A, MAX] (
        rows: Rows<T>,
        ids: &[I],
        owner: Owner,
        val: &mut [T],
        arg: &mut [A],
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::testing::{bits, lcg};

    #[test]
    fn split_values_only_extremes_keep_the_row_order_bits_for_any_number_of_parts() {
        // Signed zeros tie: a merge that took a later part's equal value, or merged the parts
        // out of order, keeps the wrong sign. NaN must win from the first part that has one.
        let e = 40_000;
        let mut next = lcg(3);
        for (n, d) in [
            (500, 1),
            (500, 3),
            (500, 16),
            (500, 37),
            (300, 64),
            (2 * e, 16),
        ] {
            // The last three segments have no rows (the identity).
            let ids: Vec<i64> = (0..e).map(|_| (next() % (n - 3)) as i64).collect();
            let codes: Vec<usize> = (0..e * d).map(|_| next() % 41).collect();
            for (extreme, sign) in [(Extreme::Max, 1.0f32), (Extreme::Min, -1.0)] {
                let data: Vec<f32> = codes
                    .iter()
                    .map(|&c| match c {
                        0 => f32::NAN,
                        c if c < 20 => -0.0 * sign,
                        c if c < 39 => 0.0 * sign,
                        _ => -sign,
                    })
                    .collect();
                let wins = |held: f32, v: f32| match extreme {
                    Extreme::Max => v > held || v.is_nan() && !held.is_nan(),
                    Extreme::Min => v < held || v.is_nan() && !held.is_nan(),
                };
                let mut want = vec![sign * f32::NEG_INFINITY; n * d];
                for (r, &id) in ids.iter().enumerate() {
                    for c in 0..d {
                        let (held, v) = (&mut want[id as usize * d + c], data[r * d + c]);
                        if wins(*held, v) {
                            *held = v;
                        }
                    }
                }
                for threads in 1..=4 {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| {
                        assert_eq!(splits_rows(e, n, d * 4), n <= e);
                        assert_eq!(parts(e), threads);
                        let rows = Rows::new(&data, d);
                        let got = scatter_extreme_values(
                            Simd::detect(),
                            Alloc::Vec,
                            rows,
                            &ids,
                            n,
                            extreme,
                        );
                        assert_eq!(
                            bits(&got),
                            bits(&want),
                            "{extreme:?} d {d} {threads} threads"
                        );
                    });
                }
            }
        }
    }
}
