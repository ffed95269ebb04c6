//! Sums and extremes over unsorted ids without a CSR plan, for narrow rows: each of a few
//! owners (one per thread) holds a contiguous range of segments and streams every id in row
//! order, narrowing each block of ids to its own rows ([`Owned`]) and folding those into its
//! slice of the output.
//!
//! Every owner reads all the ids, yet this beats the CSR plan's gather as long as the owners are
//! few (`benches/RESULTS.md`). Every segment still folds its rows in row order, so the results
//! are the CSR kernels' bits for any number of threads; the sums of segments longer than
//! [`CHUNK_ROWS`] are computed again through a plan of them, to get the CSR kernel's chunk trees
//! (an extreme is the same for any grouping). This file has the sums and what the owners share;
//! the extremes are in [`scatter_extreme`](mod@super::scatter_extreme).

use super::memory::{Alloc, Out, assume_written, output_unwritten};
use super::owned::{Owner, each_owned, local};
use super::{CHUNK_ROWS, Rows, assume_init_mut, for_each_chunk, reduce_sum};
use crate::host::csr::CsrPlan;
use crate::host::elem::{Elem, IdElem};
use crate::host::simd::{Simd, simd_dispatch};

/// The most owners, and so the most threads this path serves: every owner reads all the ids,
/// so with more threads the CSR plan's gather, which reads each id once, scales better.
const MAX_OWNERS: usize = 4;

/// The widest row, in bytes of output per segment, that takes this path. With wider rows the
/// CSR gather was as fast as the scatter, plan included (`benches/RESULTS.md`).
const MAX_ROW_BYTES: usize = 64;

/// The fewest rows that take this path (at 10⁴ rows the owners were already 1.2–2.3× faster
/// than building and using a plan; below, a call's fixed costs dominate either way).
const MIN_ROWS: usize = 1 << 12;

/// The widest row, in bytes of output per segment, whose values-only max or min splits the
/// rows ([`splits_rows`]): at 256 bytes that was still 1.5x faster than the CSR gather.
const MAX_SPLIT_ROW_BYTES: usize = 256;

/// An unplanned reduction over unsorted ids that may take a kernel without a CSR plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScatterOp {
    /// A sum (the owners).
    Sum,
    /// A max or min with the rows that attain it (the owners).
    Extreme,
    /// A max or min, values only (the rows split between the threads, else the owners).
    ExtremeValues,
}

/// Whether `num_rows` rows into `num_segments` segments of `row_bytes` bytes of output each
/// take a scatter kernel for `op` rather than a CSR plan: from [`MIN_ROWS`] rows, on at most
/// [`MAX_OWNERS`] threads, rows narrow enough for the owners or (values-only extremes) for
/// [`splits_rows`].
pub(crate) fn scatters(
    op: ScatterOp,
    num_rows: usize,
    num_segments: usize,
    row_bytes: usize,
) -> bool {
    // Below u32::MAX rows, row indices and "none" fit the owners' u32 arguments.
    let owners = (MIN_ROWS..u32::MAX as usize).contains(&num_rows)
        && (1..=MAX_ROW_BYTES).contains(&row_bytes)
        && rayon::current_num_threads() <= MAX_OWNERS;
    owners || op == ScatterOp::ExtremeValues && splits_rows(num_rows, num_segments, row_bytes)
}

/// Whether a values-only max or min splits the rows between the threads, each folding its part
/// into a partial output of its own ([`scatter_extreme_values`](super::scatter_extreme_values)):
/// from [`MIN_ROWS`] rows of up to [`MAX_SPLIT_ROW_BYTES`], on at most [`MAX_OWNERS`] threads,
/// and no more segments than rows (each partial is filled and merged whole).
pub(super) fn splits_rows(num_rows: usize, num_segments: usize, row_bytes: usize) -> bool {
    num_rows >= MIN_ROWS
        && num_segments <= num_rows
        && (1..=MAX_SPLIT_ROW_BYTES).contains(&row_bytes)
        && rayon::current_num_threads() <= MAX_OWNERS
}

/// Fewer rows than this are split into one part, folded on the calling thread: below it, waking
/// a second thread cost more than it saved (`benches/RESULTS.md`).
const ONE_THREAD_ROWS: usize = 1 << 15;

/// How many parts [`splits_rows`] splits `num_rows` rows into, or how many owners share their
/// segments: one per thread, at most [`MAX_OWNERS`], and one below [`ONE_THREAD_ROWS`].
pub(super) fn parts(num_rows: usize) -> usize {
    match num_rows {
        ..ONE_THREAD_ROWS => 1,
        _ => owners(),
    }
}

/// How many owners there are: one per thread, at most [`MAX_OWNERS`].
fn owners() -> usize {
    rayon::current_num_threads().clamp(1, MAX_OWNERS)
}

/// Segments per owner of `num_rows` rows: one owner per part ([`parts`]), each a contiguous
/// range of at least one segment.
pub(super) fn per_owner(num_segments: usize, num_rows: usize) -> usize {
    num_segments.div_ceil(parts(num_rows)).max(1)
}

/// Runs `f(k, chunk)` on each `chunk` of `out`, owner `k`'s, in parallel, or on the calling thread
/// when there is one owner.
pub(super) fn each_owner<T: Send>(out: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    for_each_chunk(out, chunk, out.len() > chunk, f)
}

/// The sum of each segment's rows, 0 for empty ones: [`reduce_sum`]'s bits.
pub(crate) fn scatter_sum<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    rows: Rows<T>,
    ids: &[I],
    num_segments: usize,
) -> Out<T> {
    let (d, per) = (rows.width(), per_owner(num_segments, ids.len()));
    let mut out = output_unwritten::<T>(alloc, num_segments * d);
    each_owner(&mut out, per * d, |k, slice| {
        slice.iter_mut().for_each(|x| _ = x.write(T::ZERO));
        // SAFETY: every element was written just above.
        let acc = unsafe { assume_init_mut(slice) };
        let (lo, owned) = (k * per, acc.len() / d);
        let mut counts = vec![0u32; owned];
        let owner = Owner {
            lo,
            whole: per >= num_segments,
            simd,
        };
        add_owned_simd(simd, rows, ids, owner, acc, &mut counts);
        let long: Vec<usize> = (0..owned)
            .filter(|&s| counts[s] as usize > CHUNK_ROWS)
            .collect();
        if !long.is_empty() {
            // The CSR kernel's chunk trees for the long segments, from one plan of them.
            let plan = long_plan(ids, lo, &long, &counts);
            let sums = reduce_sum(simd, Alloc::Vec, rows, &plan);
            for (s, sum) in long.iter().zip(sums.chunks(d)) {
                acc[s * d..(s + 1) * d].copy_from_slice(sum);
            }
        }
    });
    // SAFETY: each owner's slice was filled with zeros before its rows were added.
    unsafe { assume_written(out) }
}

/// A plan whose segment `k` holds the rows (in row order) of segment `lo + long[k]`, found in
/// one pass over the ids; `counts` holds the rows of each of the owner's segments.
fn long_plan<I: IdElem>(ids: &[I], lo: usize, long: &[usize], counts: &[u32]) -> CsrPlan<'static> {
    let mut offsets = vec![0usize; long.len() + 1];
    let mut next = vec![usize::MAX; counts.len()];
    for (k, &s) in long.iter().enumerate() {
        next[s] = offsets[k];
        offsets[k + 1] = offsets[k] + counts[s] as usize;
    }
    let mut order = vec![0usize; offsets[long.len()]];
    for (r, &id) in ids.iter().enumerate() {
        if let Some(slot) = next
            .get_mut(local(id, lo))
            .filter(|slot| **slot != usize::MAX)
        {
            order[*slot] = r;
            *slot += 1;
        }
    }
    CsrPlan {
        offsets: offsets.into(),
        order: Some(order.into()),
    }
}

/// Adds every row whose segment lies in `owner.lo..owner.lo + acc.len() / d` to its row of
/// `acc`, in row order, counting the rows of each in `counts`.
#[inline(always)]
fn add_owned<T: Elem, I: IdElem>(
    rows: Rows<T>,
    ids: &[I],
    owner: Owner,
    acc: &mut [T],
    counts: &mut [u32],
) {
    match rows.width() {
        1 => add_owned_one::<T, I>(rows, ids, owner, acc, counts),
        16 => add_owned_width::<T, I, 16>(rows, ids, owner, acc, counts),
        _ => add_owned_width::<T, I, 0>(rows, ids, owner, acc, counts),
    }
}

/// [`add_owned`] for rows of `W` values (0: any width; one value goes to [`add_owned_one`]). A
/// known width makes the row's loop straight-line code: without one, rows of one value had run
/// 3x slower.
#[inline(always)]
fn add_owned_width<T: Elem, I: IdElem, const W: usize>(
    rows: Rows<T>,
    ids: &[I],
    owner: Owner,
    acc: &mut [T],
    counts: &mut [u32],
) {
    let d = if W == 0 { rows.width() } else { W };
    each_owned!(ids, owner, acc.len() / d, |l, r| add_row::<T, W>(
        rows, r, l, acc, counts
    ));
}

/// [`add_owned`] for rows of one value: each segment's sum and count side by side, so that a
/// row updates one cache line instead of two (a standalone loop at 1e6 rows ran 1.4x faster).
#[inline(always)]
fn add_owned_one<T: Elem, I: IdElem>(
    rows: Rows<T>,
    ids: &[I],
    owner: Owner,
    acc: &mut [T],
    counts: &mut [u32],
) {
    // Each sum starts from zero, as `acc`'s do: the same bits.
    let mut pairs = vec![(T::ZERO, 0u32); acc.len()];
    each_owned!(ids, owner, acc.len(), |l, r| add_pair(
        &mut pairs[l],
        rows.row(r)[0]
    ));
    for ((a, c), &(sum, count)) in acc.iter_mut().zip(counts.iter_mut()).zip(&pairs) {
        (*a, *c) = (sum, count);
    }
}

/// Adds `x` to a segment's sum and counts it ([`add_owned_one`]).
#[inline(always)]
fn add_pair<T: Elem>(pair: &mut (T, u32), x: T) {
    *pair = (pair.0.add(x), pair.1 + 1);
}

/// Adds row `r` to row `l` of `acc` and counts it ([`add_owned_width`]).
#[inline(always)]
fn add_row<T: Elem, const W: usize>(
    rows: Rows<T>,
    r: usize,
    l: usize,
    acc: &mut [T],
    counts: &mut [u32],
) {
    let d = if W == 0 { rows.width() } else { W };
    counts[l] += 1;
    let dst = &mut acc[l * d..(l + 1) * d];
    if W == 0 {
        dst.iter_mut()
            .zip(rows.row(r))
            .for_each(|(a, &v)| *a = a.add(v));
    } else {
        // All loads before all stores: the compiler cannot tell that `dst` and the row do not
        // overlap, and would otherwise add one value at a time.
        let (x, held) = (block::<T, W>(rows.row(r)), block::<T, W>(dst));
        dst.copy_from_slice(&core::array::from_fn::<T, W, _>(|j| held[j].add(x[j])));
    }
}

/// The first `W` values of `xs` (at least `W`), copied.
#[inline(always)]
pub(super) fn block<T: Copy, const W: usize>(xs: &[T]) -> [T; W] {
    core::array::from_fn(|j| xs[j])
}

simd_dispatch!(
    /// [`add_owned`] compiled for `simd`.
    fn add_owned_simd = add_owned [T: Elem, I: IdElem] [T, I] (
        rows: Rows<T>,
        ids: &[I],
        owner: Owner,
        acc: &mut [T],
        counts: &mut [u32],
    )
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SegmentExtreme as Extreme;
    use crate::cpu::kernels::scatter_extreme::{scatter_extreme, scatter_extreme_values};
    use crate::cpu::kernels::{reduce_extreme, reduce_extreme_values};
    use crate::host::simd::Level;
    use crate::host::testing::bits;

    /// Ids with two long segments (more than CHUNK_ROWS rows) owned together, empty segments
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
    fn scattered_sums_and_extremes_give_the_csr_kernels_bits_for_any_number_of_owners() {
        let (e, n) = (40_000, 1_000);
        let ids = ids(e, n);
        let plan = CsrPlan::new(&ids, n);
        for d in [1usize, 3, 16] {
            // Sums that round (the long segment's chunk tree differs from its row-order
            // sum), and for the extremes ties, NaN and -inf as well.
            let finite: Vec<f32> = (0..e * d).map(|k| (k % 97) as f32 / 7.0 - 6.9).collect();
            // Segments 5 and 6 hold only the identities of the max and the min: their
            // arguments are their first rows.
            let data: Vec<f32> = (0..e * d)
                .map(|k| match (ids[k / d], k % 97) {
                    (5, _) => f32::NEG_INFINITY,
                    (6, _) => f32::INFINITY,
                    (_, 0) => f32::NAN,
                    (_, 1) => f32::NEG_INFINITY,
                    (_, k) => (k % 13) as f32,
                })
                .collect();
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let simd = Simd::detect().at_most(level);
                let rows = Rows::new(&finite, d);
                let want_sum = reduce_sum(simd, Alloc::Vec, rows, &plan);
                let rows = Rows::new(&data, d);
                let want: Vec<_> = [Extreme::Max, Extreme::Min]
                    .map(|which| reduce_extreme::<f32, i64>(simd, Alloc::Vec, rows, &plan, which))
                    .into();
                for threads in 1..=MAX_OWNERS {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| {
                        assert!(scatters(ScatterOp::Sum, 1 << 18, n, d * 4));
                        let rows = Rows::new(&finite, d);
                        let got = scatter_sum(simd, Alloc::Vec, rows, &ids, n);
                        assert_eq!(bits(&got), bits(&want_sum), "sum d = {d}, {level:?}");
                        let rows = Rows::new(&data, d);
                        for (which, (wv, wa)) in [Extreme::Max, Extreme::Min].into_iter().zip(&want)
                        {
                            let (v, a) = scatter_extreme(simd, Alloc::Vec, rows, &ids, n, which);
                            assert!(wa.contains(&-1));
                            let only =
                                scatter_extreme_values(simd, Alloc::Vec, rows, &ids, n, which);
                            assert_eq!(bits(&only), bits(wv), "{which:?} values only, d = {d}");
                            assert_eq!(
                                (bits(&v), &a[..]),
                                (bits(wv), &wa[..]),
                                "{which:?} d = {d}, {threads} threads"
                            );
                        }
                    });
                }
                let only = reduce_extreme_values(simd, Alloc::Vec, rows, &plan, Extreme::Max);
                assert_eq!(bits(&only), bits(&want[0].0), "CSR values only, d = {d}");
            }
        }
    }

    #[test]
    fn more_threads_than_owners_take_the_csr_path() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(MAX_OWNERS + 1)
            .build()
            .unwrap();
        for op in [ScatterOp::Sum, ScatterOp::Extreme, ScatterOp::ExtremeValues] {
            assert!(!pool.install(|| scatters(op, 1 << 20, 1 << 10, 64)));
            assert!(!scatters(op, MIN_ROWS - 1, 1 << 10, 64));
        }
        // Rows too wide for the owners: only a values-only extreme splits them, and only
        // while there are no more segments than rows.
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2);
        pool.build().unwrap().install(|| {
            let (wide, values) = (MAX_ROW_BYTES + 1, ScatterOp::ExtremeValues);
            assert!(!scatters(ScatterOp::Sum, MIN_ROWS, 1 << 10, wide));
            assert!(!scatters(ScatterOp::Extreme, MIN_ROWS, 1 << 10, wide));
            assert!(scatters(values, MIN_ROWS, 1 << 10, wide));
            assert!(!scatters(values, MIN_ROWS, MIN_ROWS + 1, wide));
            assert!(!scatters(values, MIN_ROWS, 1, MAX_SPLIT_ROW_BYTES + 1));
        });
    }
}
