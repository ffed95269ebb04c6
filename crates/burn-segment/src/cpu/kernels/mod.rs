//! Slice kernels shared by every CPU backend (NdArray, Flex).
//!
//! All kernels view the data as a row-major `[E, d]` matrix (the trailing dimensions flattened
//! into `d`) and reduce rows into `[N, d]`. Every segment is reduced by one task, in the
//! original row order (a values-only max or min may fold parts of the rows apart and merge
//! them, which gives the same bits), so results are bitwise identical whatever the number of
//! rayon threads; no result goes through an atomic (only the id scan's speculative offsets do).

mod activation;
mod extreme;
mod extreme_values;
mod fused;
mod linear;
mod owned;
mod reduce;
mod scatter;
mod scatter_extreme;
mod softmax;

use core::mem::MaybeUninit;
use core::ops::Range;

use rayon::prelude::*;

use super::memory;
use crate::host::csr::{TO_L2, prefetch_bytes};
use memory::{Alloc, Out, assume_written, output_unwritten};

pub(crate) use crate::host::{CsrPlan, Elem, FloatElem, IdElem, Rows};
pub(crate) use activation::{EluElem, elu, elu_backward, elu_backward_in_place, elu_in_place};
pub(crate) use extreme::{extreme_simd, reduce_extreme};
pub(crate) use extreme_values::reduce_extreme_values;
pub(crate) use fused::{Attention, sddmm, spmm};
pub(crate) use linear::{linear, linear_weight_grad};
pub(crate) use reduce::{MaskOf, count, reduce_product, reduce_sum, reduce_sum_masked};
pub(crate) use scatter::{ScatterOp, scatter_sum, scatters};
pub(crate) use scatter_extreme::{scatter_extreme, scatter_extreme_values};
pub(crate) use softmax::{softmax, softmax_in_place};

/// Work below this weight ([`plan_work`]) runs on the calling thread: handing it to rayon's pool,
/// whose second thread must be woken, cost more than it saved (`benches/RESULTS.md`).
const ONE_THREAD_WORK: usize = 1 << 19;

/// Whether a kernel over `plan` with rows of `d` values runs in parallel ([`ONE_THREAD_WORK`]).
pub(super) fn parallel(plan: &CsrPlan, d: usize) -> bool {
    plan_work(plan, d) >= ONE_THREAD_WORK
}

/// The work of a kernel over `plan` with rows of `d` values: each row read and each segment
/// written, at `d` values and about 8 more for the ids, offsets and per-row steps (at 1e5 rows
/// of one value, one thread was 1.4x slower than two).
fn plan_work(plan: &CsrPlan, d: usize) -> usize {
    (plan.num_rows() + plan.num_segments()) * (d + 8)
}

/// Runs `f(k, chunk)` on each chunk of `chunk_len` values of `out` (the last may be shorter):
/// in parallel, or in order on the calling thread when not `parallel` (rayon would still hand
/// even one chunk to a thread of its pool).
pub(super) fn for_each_chunk<T: Send>(
    out: &mut [T],
    chunk_len: usize,
    parallel: bool,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    match parallel {
        true => out
            .par_chunks_mut(chunk_len)
            .enumerate()
            .for_each(|(k, c)| f(k, c)),
        false => out
            .chunks_mut(chunk_len)
            .enumerate()
            .for_each(|(k, c)| f(k, c)),
    }
}

/// An `[N, d]` output in which segment `s`'s row is `init` folded by `f(s, row)`, built in
/// parallel over the segments. Each row is set to `init` just before `f` folds into it (while
/// it is in cache), so there is no fill pass over the output first.
pub(super) fn per_segment<T: Copy + Send + Sync>(
    alloc: Alloc,
    plan: &CsrPlan,
    d: usize,
    init: T,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Out<T> {
    let mut out = output_unwritten::<T>(alloc, plan.num_segments() * d);
    if d > 0 {
        let one = |(s, row): (usize, &mut [MaybeUninit<T>])| {
            row.iter_mut().for_each(|x| _ = x.write(init));
            // SAFETY: every element of the row was written just above.
            f(s, unsafe { assume_init_mut(row) })
        };
        match parallel(plan, d) {
            true => {
                let rows = out.par_chunks_mut(d).enumerate();
                rows.with_min_len(plan.min_len(d)).for_each(one)
            }
            false => out.chunks_mut(d).enumerate().for_each(one),
        }
    }
    // SAFETY: the loop above wrote every row (with `d == 0` there are no elements).
    unsafe { assume_written(out) }
}

/// [`per_segment`] for kernels that fold a run of consecutive segments in one call:
/// `f(segments, rows)` gets the run's rows of the output (each set to `init`), so the per-call
/// costs (instruction-set dispatch, rayon's per-item step) are paid once per run of about
/// 64 KiB of rows ([`CsrPlan::min_len`]) rather than once per segment.
pub(super) fn per_segment_run<T: Copy + Send + Sync>(
    alloc: Alloc,
    plan: &CsrPlan,
    d: usize,
    init: T,
    f: impl Fn(Range<usize>, &mut [T]) + Sync,
) -> Out<T> {
    let mut out = output_unwritten::<T>(alloc, plan.num_segments() * d);
    if d > 0 {
        let run = plan.min_len(d);
        for_each_chunk(&mut out, d * run, parallel(plan, d), |k, rows| {
            rows.iter_mut().for_each(|x| _ = x.write(init));
            let first = k * run;
            // SAFETY: every element of the run was written just above.
            f(first..first + rows.len() / d, unsafe {
                assume_init_mut(rows)
            })
        });
    }
    // SAFETY: the loop above wrote every row (with `d == 0` there are no elements).
    unsafe { assume_written(out) }
}

/// Rows above which a segment is reduced in chunks of this many rows, in parallel, the chunks'
/// partials combined in a fixed binary tree ([`chunk_tree`]): its result depends on the data
/// and this constant only, never on the number of threads. Shorter segments are folded in row
/// order by one task.
pub(crate) const CHUNK_ROWS: usize = 1 << 12;

/// Whether segment `s` is long enough to be reduced in chunks.
pub(super) fn is_long(plan: &CsrPlan, s: usize) -> bool {
    plan.slots(s).len() > CHUNK_ROWS
}

/// The CSR positions of segment `s` in chunks of [`CHUNK_ROWS`].
pub(super) fn chunks(plan: &CsrPlan, s: usize) -> Vec<Range<usize>> {
    let slots = plan.slots(s);
    let end = slots.end;
    slots
        .step_by(CHUNK_ROWS)
        .map(|a| a..(a + CHUNK_ROWS).min(end))
        .collect()
}

/// `fold(chunk)` for every chunk of segment `s` (in parallel), combined pairwise level by level
/// (`combine(left, right)`, an odd last one carried up): a tree fixed by the segment's length.
pub(super) fn chunk_tree<P: Send>(
    plan: &CsrPlan,
    s: usize,
    fold: impl Fn(Range<usize>) -> P + Sync,
    combine: impl Fn(P, P) -> P,
) -> P {
    let mut parts: Vec<P> = chunks(plan, s).into_par_iter().map(&fold).collect();
    while parts.len() > 1 {
        let mut level = parts.into_iter();
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        while let Some(left) = level.next() {
            next.push(match level.next() {
                Some(right) => combine(left, right),
                None => left,
            });
        }
        parts = next;
    }
    parts.pop().expect("a segment with rows has a chunk")
}

/// Calls `f` with columns `j0..j0 + W` of each row at CSR positions `slots`, in order: for
/// sorted ids over contiguous rows as one span (no index or bounds check per row), else through
/// the plan with prefetches.
#[inline(always)]
pub(super) fn for_block<T: Copy, const W: usize>(
    rows: Rows<T>,
    plan: &CsrPlan,
    slots: Range<usize>,
    j0: usize,
    mut f: impl FnMut(&[T; W]),
) {
    fn block<T, const W: usize>(x: &[T]) -> &[T; W] {
        x.try_into().expect("a full block")
    }
    match rows.span(slots.clone()).filter(|_| plan.is_sorted()) {
        Some(span) => span
            .chunks_exact(rows.width())
            .for_each(|x| f(block(&x[j0..j0 + W]))),
        None => plan.for_slots_prefetch(slots, rows, |r| f(block(rows.cols(r, j0..j0 + W)))),
    }
}

/// `row` as the `T`s it holds.
///
/// # Safety
/// Every element of `row` must have been written.
unsafe fn assume_init_mut<T>(row: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees initialisation.
    unsafe { &mut *(row as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// A raw pointer that rayon tasks may share; every task writes a disjoint set of rows.
#[derive(Clone, Copy)]
pub(super) struct RowsPtr<T>(*mut T);
// SAFETY: used only to write rows that belong to exactly one segment (see `softmax`).
unsafe impl<T: Send> Send for RowsPtr<T> {}
unsafe impl<T: Send> Sync for RowsPtr<T> {}

impl<T> RowsPtr<T> {
    /// Row `r` (of width `d`) of the buffer.
    ///
    /// # Safety
    /// `(r + 1) * d` must not exceed the buffer's length, and no other live reference may
    /// touch that row.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn row(&self, r: usize, d: usize) -> &mut [T] {
        // SAFETY: guaranteed by the caller.
        unsafe { core::slice::from_raw_parts_mut(self.0.add(r * d), d) }
    }

    /// Writes `x` over row `r` (of width `x.len()`), which may hold no values yet.
    ///
    /// # Safety
    /// As for [`row`](Self::row), and `x` must not overlap the buffer.
    pub(super) unsafe fn write_row(&self, r: usize, x: &[T]) {
        // SAFETY: guaranteed by the caller.
        unsafe { core::ptr::copy_nonoverlapping(x.as_ptr(), self.0.add(r * x.len()), x.len()) }
    }

    /// Hints the CPU to load row `r` (of width `d`); touches no memory.
    #[inline(always)]
    pub(super) fn prefetch(&self, r: usize, d: usize) {
        prefetch_bytes::<TO_L2>(
            self.0.wrapping_add(r * d) as *const u8,
            d * core::mem::size_of::<T>(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SegmentExtreme as Extreme;
    use crate::host::simd::Simd;
    use crate::host::testing::bits;

    /// `f` run on a pool of `threads` threads.
    fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(f)
    }

    /// What every CSR kernel gives for one input.
    struct AllKernels {
        sum: Out<f32>,
        prod: Out<f32>,
        softmax: Out<f32>,
        max: Out<f32>,
        argmax: Out<i64>,
    }

    impl AllKernels {
        fn assert_same_bits(&self, other: &Self, what: &str) {
            assert_eq!(bits(&self.sum), bits(&other.sum), "sum, {what}");
            assert_eq!(bits(&self.prod), bits(&other.prod), "prod, {what}");
            assert_eq!(bits(&self.softmax), bits(&other.softmax), "softmax, {what}");
            assert_eq!(bits(&self.max), bits(&other.max), "max, {what}");
            assert_eq!(self.argmax[..], other.argmax[..], "argmax, {what}");
        }
    }

    /// Every CSR kernel over `rows` on a pool of `threads` threads.
    fn run_all(rows: Rows<f32>, plan: &CsrPlan, threads: usize) -> AllKernels {
        on_threads(threads, || {
            let simd = Simd::detect();
            let (max, argmax) =
                reduce_extreme::<f32, i64>(simd, Alloc::Vec, rows, plan, Extreme::Max);
            AllKernels {
                sum: reduce_sum(simd, Alloc::Vec, rows, plan),
                prod: reduce_product(Alloc::Vec, rows, plan),
                softmax: softmax(Alloc::Vec, rows, plan),
                max,
                argmax,
            }
        })
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let e = 60_000;
        let d = 3;
        let ids: Vec<i64> = (0..e).map(|i| ((i * 7919) % 613) as i64).collect();
        let data: Vec<f32> = (0..e * d)
            .map(|i| ((i * 37 % 101) as f32).sin() * 1e3)
            .collect();
        let plan = CsrPlan::new(&ids, 700);
        let rows = Rows::new(&data, d);
        // Large enough to be split between threads (smaller calls run on the calling thread).
        assert!(parallel(&plan, d));
        run_all(rows, &plan, 1).assert_same_bits(&run_all(rows, &plan, 4), "4 threads");
    }

    #[test]
    fn long_segments_in_chunks_match_a_single_pass_and_any_thread_count() {
        // One segment of 3 chunks and a bit, one just over a chunk, short ones around them;
        // ids sorted and interleaved. Ties, NaN and ±inf in two columns.
        let d = 3;
        let lens = [5, 3 * CHUNK_ROWS + 77, 0, CHUNK_ROWS + 1, 1, CHUNK_ROWS];
        for shuffled in [false, true] {
            let mut ids: Vec<i64> = lens
                .iter()
                .enumerate()
                .flat_map(|(s, &len)| std::iter::repeat_n(s as i64, len))
                .collect();
            if shuffled {
                let mut next = crate::host::testing::lcg(3);
                for i in (1..ids.len()).rev() {
                    ids.swap(i, next() % (i + 1));
                }
            }
            let n_rows = ids.len();
            let data: Vec<f32> = (0..n_rows * d)
                .map(|i| match (i % d, i * 7919 % 10007) {
                    (0, 17) => f32::NAN,
                    (1, 23) => f32::INFINITY,
                    (_, k) => (k % 211) as f32 / 16.0 - 6.0,
                })
                .collect();
            let plan = CsrPlan::new(&ids, lens.len());
            let rows = Rows::new(&data, d);
            let one = run_all(rows, &plan, 1);
            for threads in [2, 3] {
                one.assert_same_bits(
                    &run_all(rows, &plan, threads),
                    &format!("{threads} threads"),
                );
            }
            // Against one pass in row order: the extremes exactly, the sums to f32 rounding.
            for (s, _) in lens.iter().enumerate() {
                for c in 0..d {
                    let col: Vec<(usize, f32)> = (0..n_rows)
                        .filter(|&r| ids[r] == s as i64)
                        .map(|r| (r, data[r * d + c]))
                        .collect();
                    let (mut best, mut at) = (f32::NEG_INFINITY, -1i64);
                    for &(r, v) in &col {
                        if (v > best) || (v.is_nan() && !best.is_nan()) {
                            (best, at) = (v, r as i64);
                        }
                    }
                    if col.is_empty() {
                        at = -1;
                    }
                    assert_eq!(one.max[s * d + c].to_bits(), best.to_bits(), "max {s} {c}");
                    assert_eq!(one.argmax[s * d + c], at, "argmax {s} {c}");
                    let exact: f64 = col.iter().map(|&(_, v)| v as f64).sum();
                    let got = one.sum[s * d + c] as f64;
                    assert!(
                        got == exact
                            || got.is_nan() && exact.is_nan()
                            || (got - exact).abs() <= 1e-3 * exact.abs().max(1.0),
                        "sum {s} {c}: {got} vs {exact}"
                    );
                }
            }
        }
    }
}
