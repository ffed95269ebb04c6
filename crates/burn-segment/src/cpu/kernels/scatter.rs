//! Sums and extremes over unsorted ids without a CSR plan: the rows are partitioned (stably)
//! into buckets of consecutive segments whose output fits in a core's cache, then each bucket
//! adds or compares its rows in row order into its own slice of the output.
//!
//! Every segment still folds its rows in row order, so the results are the bits of the CSR
//! kernels for any number of threads; the segments longer than [`CHUNK_ROWS`] are summed again
//! through a plan of them (one per bucket), to get the CSR kernel's chunk trees.

use core::mem::MaybeUninit;

use rayon::prelude::*;

use super::elem::{Elem, IdElem};
use super::extreme::{ArgIndex, NoArg, fold_row};
use super::output::{Alloc, Out, assume_written, output_unwritten};
use super::plan::{CsrPlan, TO_L1, prefetch_bytes};
use super::{CHUNK_ROWS, Rows, RowsPtr, assume_init_mut, reduce_sum};
use crate::SegmentExtreme as Extreme;
use crate::cpu::simd::{Simd, simd_dispatch};

/// The fewest rows per task of the partition's two passes, and the most tasks (the bucket lists
/// are the same for any chunking, being stable).
const PARTITION_ROWS: usize = 1 << 16;
const PARTITION_TASKS: usize = 256;

/// Output bytes per bucket: a bucket's slice of the output stays in a core's L2 while its rows,
/// read in row order, are folded into it.
const BUCKET_BYTES: usize = 1 << 20;

/// The widest row, in bytes of output per segment, that takes the bucketed path. With wider
/// rows the CSR gather was as fast as the scatter, plan included (`benches/RESULTS.md`).
const MAX_ROW_BYTES: usize = 64;

/// The fewest rows that take the bucketed path: below, the ids and the plan's permutation stay
/// in cache and the partition's extra pass and tasks cost more than they save.
const MIN_ROWS: usize = 1 << 18;

/// How many positions ahead in a bucket's row list the scatter prefetches.
const AHEAD: usize = 16;

/// The rows of unsorted ids grouped by bucket: bucket `b` holds segments
/// `b << shift .. (b + 1) << shift`, its rows in row order at `rows[offsets[b]..offsets[b + 1]]`.
pub(crate) struct Buckets {
    shift: u32,
    offsets: Vec<usize>,
    rows: Vec<u32>,
}

impl Buckets {
    /// Whether `num_rows` rows with `row_bytes` bytes of output per segment take the bucketed
    /// path: narrow rows (where the output's random updates stay in cache and beat the plan's
    /// sort), from [`MIN_ROWS`] to `u32::MAX` rows.
    pub(crate) fn serve(num_rows: usize, row_bytes: usize) -> bool {
        (MIN_ROWS..=u32::MAX as usize).contains(&num_rows)
            && row_bytes > 0
            && row_bytes <= MAX_ROW_BYTES
    }

    /// Partitions the rows of `ids` (each in `0..num_segments`, checked by the caller) into
    /// buckets of `row_bytes` bytes of output per segment.
    pub(crate) fn new<I: IdElem>(ids: &[I], num_segments: usize, row_bytes: usize) -> Self {
        // A power of two segments per bucket, within BUCKET_BYTES, and smaller where that
        // leaves fewer than four buckets per thread (the buckets are the tasks).
        let mut per = 1usize << (BUCKET_BYTES / row_bytes.max(1)).max(1).ilog2();
        let tasks = 4 * rayon::current_num_threads();
        while per > 1 && num_segments.div_ceil(per) < tasks {
            per /= 2;
        }
        let shift = per.trailing_zeros();
        let buckets = num_segments.div_ceil(per).max(1);
        let bucket = |id: I| (id.to_i64() as usize) >> shift;
        // At most PARTITION_TASKS chunks, so that their counts stay small beside the ids.
        let chunk_rows = PARTITION_ROWS.max(ids.len().div_ceil(PARTITION_TASKS));
        let counts: Vec<Vec<usize>> = ids
            .par_chunks(chunk_rows)
            .map(|chunk| {
                let mut count = vec![0usize; buckets];
                chunk.iter().for_each(|&id| count[bucket(id)] += 1);
                count
            })
            .collect();
        // Bucket-major, chunk-minor starts: a bucket's rows in row order.
        let mut offsets = vec![0usize; buckets + 1];
        let mut starts = vec![vec![0usize; buckets]; counts.len()];
        let mut at = 0;
        for b in 0..buckets {
            offsets[b] = at;
            for (start, count) in starts.iter_mut().zip(&counts) {
                start[b] = at;
                at += count[b];
            }
        }
        offsets[buckets] = at;
        let mut rows = vec![0u32; ids.len()];
        let out = RowsPtr(rows.as_mut_ptr());
        ids.par_chunks(chunk_rows)
            .zip(starts)
            .enumerate()
            .for_each(|(c, (chunk, mut next))| {
                for (k, &id) in chunk.iter().enumerate() {
                    let slot = &mut next[bucket(id)];
                    // SAFETY: the chunks' slots of each bucket are disjoint ranges inside
                    // `rows`, and each slot is written once.
                    unsafe { out.row(*slot, 1)[0] = (c * chunk_rows + k) as u32 };
                    *slot += 1;
                }
            });
        Buckets {
            shift,
            offsets,
            rows,
        }
    }

    /// Number of rows the buckets hold (the length of the ids).
    pub(crate) fn num_rows(&self) -> usize {
        self.rows.len()
    }

    /// Segments per bucket.
    fn per(&self) -> usize {
        1 << self.shift
    }

    /// The rows of bucket `b`, in row order.
    fn list(&self, b: usize) -> &[u32] {
        &self.rows[self.offsets[b]..self.offsets[b + 1]]
    }
}

/// Hints the CPU to load row `r` of `rows` and its id.
#[inline(always)]
fn prefetch_row<T, I>(rows: Rows<T>, ids: &[I], r: usize) {
    rows.prefetch::<TO_L1>(r);
    prefetch_bytes::<TO_L1>(ids.as_ptr().wrapping_add(r) as *const u8, size_of::<I>());
}

/// The sum of each segment's rows, 0 for empty ones: [`reduce_sum`]'s bits.
pub(crate) fn bucket_sum<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    buckets: &Buckets,
) -> Out<T> {
    let (d, per) = (rows.width(), buckets.per());
    let mut out = output_unwritten::<T>(alloc, num_segments * d);
    out.par_chunks_mut(per * d)
        .enumerate()
        .for_each(|(b, slice)| {
            slice.iter_mut().for_each(|x| _ = x.write(T::ZERO));
            // SAFETY: every element was written just above.
            let acc = unsafe { assume_init_mut(slice) };
            let mut counts = vec![0u32; acc.len() / d];
            let (list, lo) = (buckets.list(b), b * per);
            add_rows_simd(simd, rows, ids, list, lo, acc, &mut counts);
            let long: Vec<usize> = (0..counts.len())
                .filter(|&s| counts[s] as usize > CHUNK_ROWS)
                .collect();
            if !long.is_empty() {
                // The CSR kernel's chunk trees for the long segments, from one plan of them.
                let plan = long_plan(ids, list, lo, &long, &counts);
                let sums = reduce_sum(simd, Alloc::Vec, rows, &plan);
                for (s, sum) in long.iter().zip(sums.chunks(d)) {
                    acc[s * d..(s + 1) * d].copy_from_slice(sum);
                }
            }
        });
    // SAFETY: each bucket's slice was filled with zeros before its rows were added.
    unsafe { assume_written(out) }
}

/// A plan whose segment `k` holds the rows (in row order) of segment `lo + long[k]`, found in
/// one pass over its bucket's rows `list`; `counts` holds the rows of each of the bucket's
/// segments.
fn long_plan<I: IdElem>(
    ids: &[I],
    list: &[u32],
    lo: usize,
    long: &[usize],
    counts: &[u32],
) -> CsrPlan<'static> {
    let mut offsets = vec![0usize; long.len() + 1];
    let mut next = vec![usize::MAX; counts.len()];
    for (k, &s) in long.iter().enumerate() {
        next[s] = offsets[k];
        offsets[k + 1] = offsets[k] + counts[s] as usize;
    }
    let mut order = vec![0usize; offsets[long.len()]];
    for &r in list {
        let slot = &mut next[ids[r as usize].to_i64() as usize - lo];
        if *slot != usize::MAX {
            order[*slot] = r as usize;
            *slot += 1;
        }
    }
    CsrPlan {
        offsets: offsets.into(),
        order: Some(order.into()),
    }
}

/// Adds the rows `list` (in row order) to their segments' rows of `acc`, which holds segments
/// `lo..`, counting the rows of each.
#[inline(always)]
fn add_rows<T: Elem, I: IdElem>(
    rows: Rows<T>,
    ids: &[I],
    list: &[u32],
    lo: usize,
    acc: &mut [T],
    counts: &mut [u32],
) {
    let d = rows.width();
    for (k, &r) in list.iter().enumerate() {
        if let Some(&ahead) = list.get(k + AHEAD) {
            prefetch_row(rows, ids, ahead as usize);
        }
        let r = r as usize;
        let s = ids[r].to_i64() as usize - lo;
        counts[s] += 1;
        let x = rows.row(r);
        acc[s * d..(s + 1) * d]
            .iter_mut()
            .zip(x)
            .for_each(|(a, &v)| *a = a.add(v));
    }
}

simd_dispatch!(
    /// [`add_rows`] compiled for `simd`.
    fn add_rows_simd = add_rows [T: Elem, I: IdElem] [T, I] (
        rows: Rows<T>,
        ids: &[I],
        list: &[u32],
        lo: usize,
        acc: &mut [T],
        counts: &mut [u32],
    )
);

/// Max or min of each segment with the row that attains it (ties to the smaller row, the
/// first NaN wins; identity and -1 when empty): `reduce_extreme`'s values and arguments.
pub(crate) fn bucket_extreme<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    buckets: &Buckets,
    extreme: Extreme,
) -> (Out<T>, Out<I>) {
    match extreme {
        Extreme::Max => extreme_with::<T, I, true>(simd, alloc, rows, ids, num_segments, buckets),
        Extreme::Min => extreme_with::<T, I, false>(simd, alloc, rows, ids, num_segments, buckets),
    }
}

fn extreme_with<T: Elem, I: IdElem, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    buckets: &Buckets,
) -> (Out<T>, Out<I>) {
    let (d, per) = (rows.width(), buckets.per());
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    let mut args = output_unwritten::<I>(alloc, num_segments * d);
    values
        .par_chunks_mut(per * d)
        .zip(args.par_chunks_mut(per * d))
        .enumerate()
        .for_each(|(b, (val, arg))| {
            // Row indices as u32 (at most u32::MAX rows take this path), widened here.
            let (local, seen) = fold_bucket::<T, I, u32, MAX>(simd, rows, ids, buckets, b, val);
            for (s, (a, l)) in arg.chunks_mut(d).zip(local.chunks(d)).enumerate() {
                for (a, &l) in a.iter_mut().zip(l) {
                    a.write(I::from_i64(if seen[s] { l as i64 } else { -1 }));
                }
            }
        });
    // SAFETY: each bucket wrote every value (the identity, then its rows) and every argument.
    unsafe { (assume_written(values), assume_written(args)) }
}

/// Max or min of each segment, values only: [`bucket_extreme`]'s values, without the arguments.
pub(crate) fn bucket_extreme_values<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
    buckets: &Buckets,
    extreme: Extreme,
) -> Out<T> {
    let (d, per) = (rows.width(), buckets.per());
    let mut values = output_unwritten::<T>(alloc, num_segments * d);
    values
        .par_chunks_mut(per * d)
        .enumerate()
        .for_each(|(b, val)| match extreme {
            Extreme::Max => _ = fold_bucket::<T, I, NoArg, true>(simd, rows, ids, buckets, b, val),
            Extreme::Min => _ = fold_bucket::<T, I, NoArg, false>(simd, rows, ids, buckets, b, val),
        });
    // SAFETY: each bucket wrote every value (the identity, then its rows).
    unsafe { assume_written(values) }
}

/// Writes bucket `b`'s extremes over `val`, its slice of the values (the identity where a
/// segment has no rows), and returns the row of each (as `A`) and whether each segment has rows.
fn fold_bucket<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    simd: Simd,
    rows: Rows<T>,
    ids: &[I],
    buckets: &Buckets,
    b: usize,
    val: &mut [MaybeUninit<T>],
) -> (Vec<A>, Vec<bool>) {
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    val.iter_mut().for_each(|x| _ = x.write(init));
    // SAFETY: every element was written just above.
    let val = unsafe { assume_init_mut(val) };
    let mut arg = vec![A::default(); val.len()];
    let mut seen = vec![false; val.len() / rows.width()];
    let (list, lo) = (buckets.list(b), b * buckets.per());
    fold_rows_simd::<T, I, A, MAX>(simd, rows, ids, list, lo, val, &mut arg, &mut seen);
    (arg, seen)
}

/// Folds the rows `list` (in row order) into their segments' running extremes in `val` /
/// `arg` (segments `lo..`): a segment's first row is taken as it is, as the CSR kernel does.
// The loop repeats `add_rows`' on purpose: through one closure-taking helper the extremes ran
// 1.4x slower (benches/RESULTS.md).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fold_rows<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    rows: Rows<T>,
    ids: &[I],
    list: &[u32],
    lo: usize,
    val: &mut [T],
    arg: &mut [A],
    seen: &mut [bool],
) {
    let d = rows.width();
    for (k, &r) in list.iter().enumerate() {
        if let Some(&ahead) = list.get(k + AHEAD) {
            prefetch_row(rows, ids, ahead as usize);
        }
        let s = ids[r as usize].to_i64() as usize - lo;
        let (v, a, x) = (
            &mut val[s * d..(s + 1) * d],
            &mut arg[s * d..(s + 1) * d],
            rows.row(r as usize),
        );
        let row = A::from_row(r as usize);
        if seen[s] {
            fold_row::<T, A, MAX>(v, a, x, row);
        } else {
            v.copy_from_slice(x);
            a.fill(row);
            seen[s] = true;
        }
    }
}

simd_dispatch!(
    /// [`fold_rows`] compiled for `simd`.
    fn fold_rows_simd = fold_rows [T: Elem, I: IdElem, A: ArgIndex, const MAX: bool] [T, I, A, MAX] (
        rows: Rows<T>,
        ids: &[I],
        list: &[u32],
        lo: usize,
        val: &mut [T],
        arg: &mut [A],
        seen: &mut [bool],
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::kernels::testing::bits;
    use crate::cpu::kernels::{reduce_extreme, reduce_extreme_values};
    use crate::cpu::simd::Level;

    /// Ids with two long segments (more than CHUNK_ROWS rows) in one bucket, empty segments
    /// and a shuffle.
    fn ids(e: usize, n: usize) -> Vec<i64> {
        let mut state = 7u64;
        (0..e)
            .map(|r| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if r % 3 == 0 {
                    (n / 2) as i64
                } else if r % 5 == 0 {
                    (n / 2 + 1) as i64
                } else {
                    ((state >> 33) % (n as u64 - 3)) as i64
                }
            })
            .collect()
    }

    #[test]
    fn bucketed_sums_and_extremes_give_the_csr_kernels_bits() {
        let (e, n) = (40_000, 1_000);
        let ids = ids(e, n);
        for d in [1usize, 3, 16] {
            // Sums that round (the long segment's chunk tree differs from its row-order
            // sum), and for the extremes ties, NaN and -inf as well.
            let finite: Vec<f32> = (0..e * d).map(|k| (k % 97) as f32 / 7.0 - 6.9).collect();
            let data: Vec<f32> = (0..e * d)
                .map(|k| match k % 97 {
                    0 => f32::NAN,
                    1 => f32::NEG_INFINITY,
                    k => (k % 13) as f32,
                })
                .collect();
            let plan = CsrPlan::new(&ids, n);
            let buckets = Buckets::new(&ids, n, d * 4);
            assert!(buckets.offsets.len() > 2, "several buckets");
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let simd = Simd::detect().at_most(level);
                let rows = Rows::new(&finite, d);
                let want = reduce_sum(simd, Alloc::Vec, rows, &plan);
                let got = bucket_sum(simd, Alloc::Vec, rows, &ids, n, &buckets);
                assert_eq!(bits(&got), bits(&want), "sum d = {d}, {level:?}");
                let rows = Rows::new(&data, d);
                for which in [Extreme::Max, Extreme::Min] {
                    let (wv, wa) = reduce_extreme::<f32, i64>(simd, Alloc::Vec, rows, &plan, which);
                    let (v, a) = bucket_extreme(simd, Alloc::Vec, rows, &ids, n, &buckets, which);
                    assert!(wa.contains(&-1));
                    let only =
                        bucket_extreme_values(simd, Alloc::Vec, rows, &ids, n, &buckets, which);
                    assert_eq!(bits(&only), bits(&wv), "{which:?} values only, d = {d}");
                    let only = reduce_extreme_values(simd, Alloc::Vec, rows, &plan, which);
                    assert_eq!(bits(&only), bits(&wv), "{which:?} CSR values only, d = {d}");
                    assert_eq!(
                        (bits(&v), &a[..]),
                        (bits(&wv), &wa[..]),
                        "{which:?} d = {d}"
                    );
                }
            }
        }
    }
}
