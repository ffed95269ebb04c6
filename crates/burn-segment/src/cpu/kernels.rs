//! Slice kernels shared by every CPU backend (NdArray, Flex).
//!
//! All kernels view the data as a row-major `[E, d]` matrix (the trailing dimensions flattened
//! into `d`) and reduce rows into `[N, d]`. Every segment is reduced by one task, in the
//! original row order, so results are bitwise identical whatever the number of rayon threads;
//! there are no atomics.

use core::mem::MaybeUninit;

use rayon::prelude::*;

use super::output::{Alloc, Out, assume_written, output_unwritten};
use super::simd::{Level, Simd, simd_dispatch};
use crate::SegmentExtreme as Extreme;

/// Element types the CPU kernels reduce.
pub trait Elem: Copy + Send + Sync + PartialOrd + core::fmt::Debug + 'static {
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Identity of `max`: `-inf` for floats, the type's minimum for integers.
    const LOWEST: Self;
    /// Identity of `min`: `+inf` for floats, the type's maximum for integers.
    const HIGHEST: Self;
    /// Addition (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// Multiplication (wrapping for integers).
    fn mul(self, other: Self) -> Self;
    /// Whether the value is NaN (always false for integers).
    fn is_nan(self) -> bool;
    /// `if take { a } else { b }` with bit masks: stays a vector blend after vectorisation,
    /// where a plain `if` on an in-place update becomes a slow masked store.
    fn pick(take: bool, a: Self, b: Self) -> Self;
}

/// Float element types (softmax needs `exp`).
pub trait FloatElem: Elem {
    /// `e^self`.
    fn exp(self) -> Self;
    /// Division.
    fn div(self, other: Self) -> Self;
    /// Subtraction.
    fn sub(self, other: Self) -> Self;
    /// The larger of the two, ignoring a NaN (IEEE `maxNum`: NaN only if both are).
    fn max_num(self, other: Self) -> Self;
}

macro_rules! float_elem {
    ($t:ty, $bits:ty, $exp:path) => {
        impl Elem for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn pick(take: bool, a: Self, b: Self) -> Self {
                let mask = (take as $bits).wrapping_neg();
                <$t>::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
            }
        }
        impl FloatElem for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn div(self, other: Self) -> Self {
                self / other
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self - other
            }
            #[inline(always)]
            fn max_num(self, other: Self) -> Self {
                self.max(other)
            }
        }
    };
}
float_elem!(f32, u32, exp_f32);
float_elem!(f64, u64, f64::exp);

/// `e^x` for f32 without a libm call, so loops over it vectorise (Cephes' `expf`: `x = n·ln 2 +
/// r` with `|r| ≤ ln 2 / 2`, a polynomial for `e^r`, `2^n` from exponent bits in two halves so
/// that subnormal and near-overflow results stay exact). Within 2 ulp of the correctly rounded
/// value (tested); `-inf` gives 0, `+inf` and overflow `+inf`, NaN NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = core::f32::consts::LOG2_E;
    // ln 2 split in two: the high part has 9 significant bits, so `n · LN2_HI` is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2^23: adding and subtracting it rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    // Comparisons rather than `max`/`min`, so NaN stays NaN. Below -104 the result rounds to 0,
    // above 88.8 it overflows to +inf.
    let lo = if x < -104.0 { -104.0 } else { x };
    let xc = if lo > 88.8 { 88.8 } else { lo };
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let k = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let r = xc - n * LN2_HI - n * LN2_LO;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let er = p * (r * r) + r + 1.0;
    // 2^k = 2^(k - k/2) · 2^(k/2), each factor a normal f32 for k in [-150, 128].
    let half = k >> 1;
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let y = er * pow2(k - half) * pow2(half);
    if x < -104.0 { 0.0 } else { y }
}

/// `pick` for integer types: `if take { a } else { b }` with a bit mask.
macro_rules! pick_bits {
    ($t:ty) => {
        #[inline(always)]
        fn pick(take: bool, a: Self, b: Self) -> Self {
            let mask = (take as $t).wrapping_neg();
            (a & mask) | (b & !mask)
        }
    };
}

macro_rules! int_elem {
    ($t:ty) => {
        impl Elem for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            pick_bits!($t);
        }
    };
}
int_elem!(i32);
int_elem!(i64);

/// Integer types accepted as segment ids.
pub trait IdElem: Copy + Send + Sync + 'static {
    /// The id as `i64`.
    fn to_i64(self) -> i64;
    /// An `i64` (an argmax row or a count) in this type.
    fn from_i64(v: i64) -> Self;
}
impl IdElem for i32 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as i32
    }
}
impl IdElem for i64 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v
    }
}

/// A CSR view of segment ids: the rows of segment `s` are `rows(s)`, in original row order.
#[derive(Clone, Debug)]
pub struct CsrPlan {
    /// `offsets[s]..offsets[s + 1]` indexes segment `s`'s rows; length `num_segments + 1`.
    pub offsets: Vec<usize>,
    /// Row indices grouped by segment (stable), or `None` when the ids were already sorted and
    /// the rows of a segment are the contiguous range of its offsets.
    pub order: Option<Vec<usize>>,
}

impl CsrPlan {
    /// Builds the plan in O(E + N) with a stable counting sort; sorted ids skip the sort.
    ///
    /// # Panics
    /// If an id lies outside `[0, num_segments)`; the message names the id and its position.
    pub fn new<I: IdElem>(ids: &[I], num_segments: usize) -> Self {
        let sorted = scan_ids(ids, num_segments);
        let mut counts = vec![0usize; num_segments + 1];
        for &id in ids {
            counts[id.to_i64() as usize + 1] += 1;
        }
        for s in 0..num_segments {
            counts[s + 1] += counts[s];
        }
        let offsets = counts;
        if sorted {
            return Self { offsets, order: None };
        }
        let mut next = offsets.clone();
        let mut order = vec![0usize; ids.len()];
        for (row, &id) in ids.iter().enumerate() {
            let slot = &mut next[id.to_i64() as usize];
            order[*slot] = row;
            *slot += 1;
        }
        Self { offsets, order: Some(order) }
    }

    /// Number of segments.
    pub fn num_segments(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of rows the plan groups (the length of the ids it was built from).
    pub fn num_rows(&self) -> usize {
        self.offsets[self.num_segments()]
    }

    /// Panics unless the plan's segments hold exactly the rows of `len` elements of `width`
    /// (`what` names the data): a kernel that writes each row of its output through the plan,
    /// with no fill pass first, reads the output as written only if every row was.
    fn assert_holds_rows(&self, len: usize, width: usize, what: &str) {
        assert!(
            self.num_rows() * width == len,
            "burn-segment: {what} has {len} elements, not the plan's {} rows of {width}",
            self.num_rows()
        );
    }

    /// Whether the ids were sorted (no permutation needed).
    pub fn is_sorted(&self) -> bool {
        self.order.is_none()
    }

    /// Calls `f(row)` for every row of segment `s`, in original row order.
    ///
    /// Always inlined, so that `f`'s loop is compiled with its caller's target features (an
    /// AVX2 kernel's division pass ran 4 lanes wide inside an out-of-line `for_rows`).
    #[inline(always)]
    pub fn for_rows(&self, s: usize, mut f: impl FnMut(usize)) {
        let range = self.offsets[s]..self.offsets[s + 1];
        match &self.order {
            None => range.for_each(&mut f),
            Some(order) => order[range].iter().for_each(|&r| f(r)),
        }
    }

    /// As [`for_rows`](Self::for_rows), prefetching the rows a few positions ahead in the
    /// permutation when the ids were unsorted: random row reads are latency bound otherwise.
    #[inline(always)]
    pub fn for_rows_prefetch<T>(&self, s: usize, data: &[T], d: usize, f: impl FnMut(usize)) {
        self.for_rows_prefetch_to::<TO_L2, T>(s, data, d, f)
    }

    /// [`for_rows_prefetch`](Self::for_rows_prefetch) with x86's prefetch hint `HINT`
    /// ([`TO_L1`] or [`TO_L2`]).
    #[inline(always)]
    fn for_rows_prefetch_to<const HINT: i32, T>(&self, s: usize, data: &[T], d: usize, f: impl FnMut(usize)) {
        self.for_rows_ahead(s, |ahead| prefetch_row_to::<HINT, T>(data, ahead * d, d), f)
    }

    /// As [`for_rows`](Self::for_rows), calling `prefetch(row)` for the row a few positions
    /// ahead in the permutation when the ids were unsorted (see
    /// [`for_rows_prefetch`](Self::for_rows_prefetch)).
    #[inline(always)]
    fn for_rows_ahead(&self, s: usize, prefetch: impl Fn(usize), mut f: impl FnMut(usize)) {
        let range = self.offsets[s]..self.offsets[s + 1];
        match &self.order {
            None => range.for_each(&mut f),
            Some(order) => {
                for k in range {
                    if let Some(&ahead) = order.get(k + PREFETCH_DISTANCE) {
                        prefetch(ahead);
                    }
                    f(order[k]);
                }
            }
        }
    }

    /// As [`for_rows`](Self::for_rows), prefetching `data`'s row `gather[row]` for the row a
    /// few positions ahead in CSR order (across segment boundaries): a gather through an index
    /// (`spmm`'s `x[senders[e]]`) reads rows scattered over memory, and without the hint each
    /// one waits for memory in turn once `data` outgrows the cache.
    ///
    /// With unsorted ids the rows come in the plan's permuted order, so `gather[row]` and the
    /// row's `per_row` entries of `row_data` (`spmm`'s edge weights) are reads at random
    /// positions too, and the row prefetch would wait on the first of them. Both are prefetched
    /// twice as far ahead, so that the row prefetch finds its id in cache.
    #[inline(always)]
    pub fn for_rows_prefetch_gather<T, W>(
        &self,
        s: usize,
        data: &[T],
        d: usize,
        gather: &[usize],
        (row_data, per_row): (&[W], usize),
        mut f: impl FnMut(usize),
    ) {
        let range = self.offsets[s]..self.offsets[s + 1];
        match &self.order {
            None => {
                for k in range {
                    if let Some(&ahead) = gather.get(k + GATHER_PREFETCH_DISTANCE) {
                        prefetch_row(data, ahead * d, d);
                    }
                    f(k);
                }
            }
            Some(order) => {
                for k in range {
                    if let Some(&far) = order.get(k + 2 * GATHER_PREFETCH_DISTANCE) {
                        prefetch_row(gather, far, 1);
                        prefetch_row(row_data, far * per_row, per_row);
                    }
                    if let Some(&ahead) = order.get(k + GATHER_PREFETCH_DISTANCE) {
                        prefetch_row(data, gather[ahead] * d, d);
                    }
                    f(order[k]);
                }
            }
        }
    }

    /// The first row of segment `s`, if it is not empty.
    #[inline]
    pub fn first_row(&self, s: usize) -> Option<usize> {
        let (a, b) = (self.offsets[s], self.offsets[s + 1]);
        (a < b).then(|| match &self.order {
            None => a,
            Some(order) => order[a],
        })
    }

    /// Segments per rayon task so that each task touches roughly 64 KiB of rows.
    fn min_len(&self, d: usize) -> usize {
        let rows = self.num_rows().max(1);
        let per_segment = (rows * d.max(1)).div_ceil(self.num_segments().max(1)).max(1);
        (1usize << 14).div_ceil(per_segment).max(1)
    }
}

/// How many rows ahead of the current one [`CsrPlan::for_rows_prefetch`] prefetches.
const PREFETCH_DISTANCE: usize = 32;

/// How many rows ahead [`CsrPlan::for_rows_prefetch_gather`] and [`sddmm`] prefetch.
const GATHER_PREFETCH_DISTANCE: usize = 16;

/// Prefetch into every cache level (x86's `T0` hint).
const TO_L1: i32 = 3;
/// Prefetch into the second-level cache and beyond, not the first (x86's `T2` hint).
///
/// The reductions over unsorted ids read whole rows at random positions, a prefetch per 64
/// bytes, and a first-level prefetch holds one of the core's few line-fill buffers until its
/// line arrives: profiles of `segment_sum` found half its time stalled on the prefetch
/// instructions. Prefetching into the second level measured 10-25 % faster for sum and max
/// there (an Intel Xeon, 1e6 and 1e7 rows); `spmm`'s gathers measured no faster with it and
/// stay on [`TO_L1`].
const TO_L2: i32 = 1;
#[cfg(target_arch = "x86_64")]
const _: () = assert!(TO_L1 == core::arch::x86_64::_MM_HINT_T0 && TO_L2 == core::arch::x86_64::_MM_HINT_T2);

/// Hints the CPU to load `data[start..start + len]` into every cache level (a no-op off x86-64).
#[inline(always)]
fn prefetch_row<T>(data: &[T], start: usize, len: usize) {
    prefetch_row_to::<TO_L1, T>(data, start, len)
}

/// [`prefetch_row`] with x86's prefetch hint `HINT` ([`TO_L1`] or [`TO_L2`]).
#[inline(always)]
fn prefetch_row_to<const HINT: i32, T>(data: &[T], start: usize, len: usize) {
    prefetch_bytes::<HINT>(data[start..start + len].as_ptr() as *const u8, len * core::mem::size_of::<T>());
}

/// Hints the CPU to load the `bytes` bytes at `base` into cache, with x86's hint `HINT`
/// ([`TO_L1`] or [`TO_L2`]; a no-op off x86-64). Reads nothing: a prefetch never faults,
/// whatever the address.
#[inline(always)]
fn prefetch_bytes<const HINT: i32>(base: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut offset = 0;
        while offset < bytes {
            // SAFETY: a prefetch is a hint: it does not access memory in the language's sense
            // and never faults; `wrapping_add` keeps the address computation defined.
            unsafe { core::arch::x86_64::_mm_prefetch::<HINT>(base.wrapping_add(offset) as *const i8) };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, bytes);
}

/// Checks that every id lies in `[0, num_segments)` and says whether they are sorted, in
/// parallel over chunks.
///
/// # Panics
/// With the first (lowest position) out-of-range id, naming it, its position and
/// `num_segments`.
pub fn scan_ids<I: IdElem>(ids: &[I], num_segments: usize) -> bool {
    const CHUNK: usize = 1 << 16;
    let n = num_segments as i64;
    /// What one chunk of ids holds: its first bad id (position, id), whether it is sorted,
    /// and its first and last ids.
    type ChunkScan = (Option<(usize, i64)>, bool, i64, i64);
    let chunks: Vec<ChunkScan> = ids
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let (mut bad, mut sorted, mut prev) = (None, true, i64::MIN);
            for (k, &id) in chunk.iter().enumerate() {
                let id = id.to_i64();
                if bad.is_none() && (id < 0 || id >= n) {
                    bad = Some((c * CHUNK + k, id));
                }
                sorted &= id >= prev;
                prev = id;
            }
            (bad, sorted, chunk[0].to_i64(), prev)
        })
        .collect();
    if let Some((row, id)) = chunks.iter().find_map(|c| c.0) {
        panic!(
            "segment id {id} at position {row} is out of range for num_segments = \
             {num_segments} (ids must lie in [0, num_segments)); use \
             burn_segment::validate_segment_ids to get a Result instead"
        );
    }
    chunks.iter().all(|c| c.1) && chunks.windows(2).all(|w| w[0].3 <= w[1].2)
}

/// An `[N, d]` output in which segment `s`'s row is `init` folded by `f(s, row)`, built in
/// parallel over the segments. Each row is set to `init` just before `f` folds into it (while
/// it is in cache), so there is no fill pass over the output first.
fn per_segment<T: Copy + Send + Sync>(
    alloc: Alloc,
    plan: &CsrPlan,
    d: usize,
    init: T,
    f: impl Fn(usize, &mut [T]) + Sync,
) -> Out<T> {
    let mut out = output_unwritten::<T>(alloc, plan.num_segments() * d);
    if d > 0 {
        let min_len = plan.min_len(d);
        out.par_chunks_mut(d).enumerate().with_min_len(min_len).for_each(|(s, row)| {
            row.iter_mut().for_each(|x| _ = x.write(init));
            // SAFETY: every element of the row was written just above.
            f(s, unsafe { assume_init_mut(row) })
        });
    }
    // SAFETY: the loop above wrote every row (with `d == 0` there are no elements).
    unsafe { assume_written(out) }
}

/// `row` as the `T`s it holds.
///
/// # Safety
/// Every element of `row` must have been written.
unsafe fn assume_init_mut<T>(row: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees initialisation.
    unsafe { &mut *(row as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// Sum (`prod = false`) or product (`prod = true`) of each segment's rows; identity for empty ones.
pub fn reduce_add_mul<T: Elem>(data: &[T], d: usize, plan: &CsrPlan, prod: bool) -> Vec<T> {
    reduce_add_mul_for(Simd::detect(), Alloc::Vec, data, d, plan, prod).into_vec()
}

/// [`reduce_add_mul`] with its per-segment body compiled for `simd`, its output from `alloc`.
pub(crate) fn reduce_add_mul_for<T: Elem>(simd: Simd, alloc: Alloc, data: &[T], d: usize, plan: &CsrPlan, prod: bool) -> Out<T> {
    let init = if prod { T::ONE } else { T::ZERO };
    per_segment(alloc, plan, d, init, |s, acc| add_mul_segment_simd(simd, data, d, plan, prod, s, acc))
}

/// Folds segment `s`'s rows into `acc` by addition or multiplication, in row order.
#[inline(always)]
fn add_mul_segment<T: Elem>(data: &[T], d: usize, plan: &CsrPlan, prod: bool, s: usize, acc: &mut [T]) {
    plan.for_rows_prefetch(s, data, d, |r| {
        let x = &data[r * d..(r + 1) * d];
        if prod {
            acc.iter_mut().zip(x).for_each(|(a, &v)| *a = a.mul(v));
        } else {
            acc.iter_mut().zip(x).for_each(|(a, &v)| *a = a.add(v));
        }
    })
}

simd_dispatch!(
    /// [`add_mul_segment`] compiled for `simd`.
    fn add_mul_segment_simd = add_mul_segment [T: Elem] [T] (
        data: &[T],
        d: usize,
        plan: &CsrPlan,
        prod: bool,
        s: usize,
        acc: &mut [T],
    )
);

/// Row indices as the extreme kernels track them: the same width as the data where possible,
/// so that the value and index updates vectorise together.
trait ArgIndex: Copy + Send + Sync + Default {
    fn from_row(row: usize) -> Self;
    fn to_i64(self) -> i64;
    fn pick(take: bool, a: Self, b: Self) -> Self;
}
macro_rules! arg_index {
    ($t:ty) => {
        impl ArgIndex for $t {
            #[inline(always)]
            fn from_row(row: usize) -> Self {
                row as $t
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

/// Folds row `x` (index `row`) into the running extreme: take `v` if it is strictly better, or
/// the first NaN; a NaN already held is never replaced. Branch-free so that it vectorises.
#[inline(always)]
fn fold_row<T: Elem, A: ArgIndex, const MAX: bool>(val: &mut [T], arg: &mut [A], x: &[T], row: A) {
    for ((c, a), &v) in val.iter_mut().zip(arg.iter_mut()).zip(x) {
        let better = if MAX { v > *c } else { v < *c };
        #[allow(clippy::eq_op)]
        let first_nan = v != v && *c == *c;
        let take = better | first_nan;
        *c = T::pick(take, v, *c);
        *a = A::pick(take, row, *a);
    }
}

/// Max or min of each segment with the row index that attains it.
///
/// Ties keep the smallest row index; NaN wins over any number and the first NaN is the argument.
/// Empty segments get the identity (`LOWEST` / `HIGHEST`) and argument -1.
pub fn reduce_extreme<T: Elem, I: IdElem>(
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    extreme: Extreme,
) -> (Vec<T>, Vec<I>) {
    let (values, args) = reduce_extreme_for(extreme_simd(), Alloc::Vec, data, d, plan, extreme);
    (values.into_vec(), args.into_vec())
}

/// The instruction set of the extreme kernels: AVX-512 measured 5-10 % slower than AVX2 here
/// (segment bench, max at 1e6 and 1e7 rows on an AMD EPYC), so the blends stay 8 lanes wide;
/// the AVX-512 copy is tested all the same.
pub(crate) fn extreme_simd() -> Simd {
    Simd::detect().at_most(Level::Avx2)
}

/// [`reduce_extreme`] with its per-segment body compiled for `simd`, its outputs from `alloc`.
pub(crate) fn reduce_extreme_for<T: Elem, I: IdElem>(
    simd: Simd,
    alloc: Alloc,
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    extreme: Extreme,
) -> (Out<T>, Out<I>) {
    let rows = plan.num_rows();
    match (extreme, rows <= u32::MAX as usize && core::mem::size_of::<T>() <= 4) {
        (Extreme::Max, true) => extreme_with::<T, I, u32, true>(simd, alloc, data, d, plan),
        (Extreme::Min, true) => extreme_with::<T, I, u32, false>(simd, alloc, data, d, plan),
        (Extreme::Max, false) => extreme_with::<T, I, u64, true>(simd, alloc, data, d, plan),
        (Extreme::Min, false) => extreme_with::<T, I, u64, false>(simd, alloc, data, d, plan),
    }
}

fn extreme_with<T: Elem, I: IdElem, A: ArgIndex, const MAX: bool>(
    simd: Simd,
    alloc: Alloc,
    data: &[T],
    d: usize,
    plan: &CsrPlan,
) -> (Out<T>, Out<I>) {
    let n = plan.num_segments();
    let init = if MAX { T::LOWEST } else { T::HIGHEST };
    // Both outputs are written once, segment by segment (no fill pass first): at 1e7 rows and
    // D = 64 they are 768 MiB, and one thread filling them took a third of the kernel's time.
    let mut values = output_unwritten::<T>(alloc, n * d);
    let mut args = output_unwritten::<I>(alloc, n * d);
    if d > 0 {
        let min_len = plan.min_len(d);
        values
            .par_chunks_mut(d)
            .zip(args.par_chunks_mut(d))
            .enumerate()
            .with_min_len(min_len)
            .for_each_init(
                || (vec![T::ZERO; d], vec![A::default(); d]),
                |(local_val, local_arg), (s, (val, arg))| {
                    let Some(first) = plan.first_row(s) else {
                        val.iter_mut().for_each(|v| _ = v.write(init));
                        arg.iter_mut().for_each(|a| _ = a.write(I::from_i64(-1)));
                        return;
                    };
                    local_val.copy_from_slice(&data[first * d..(first + 1) * d]);
                    local_arg.iter_mut().for_each(|a| *a = A::from_row(first));
                    fold_segment_simd::<T, A, MAX>(simd, data, d, plan, s, first, local_val, local_arg);
                    val.iter_mut().zip(local_val.iter()).for_each(|(v, &l)| _ = v.write(l));
                    arg.iter_mut().zip(local_arg.iter()).for_each(|(a, l)| _ = a.write(I::from_i64(l.to_i64())));
                },
            );
    }
    // SAFETY: the loop above wrote every row of both outputs (a segment's row when it has
    // rows, the identity and -1 when it is empty); with `d == 0` they hold no elements.
    unsafe { (assume_written(values), assume_written(args)) }
}

/// Columns folded at once: the running values and arguments of a block stay in registers for
/// all the rows of a segment, so nothing is stored per row.
const BLOCK: usize = 16;

/// Folds every row of segment `s` but its first into `val` / `arg`, `BLOCK` columns at a time.
#[inline(always)]
fn fold_segment<T: Elem, A: ArgIndex, const MAX: bool>(
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    s: usize,
    first: usize,
    val: &mut [T],
    arg: &mut [A],
) {
    let mut j0 = 0;
    while j0 + BLOCK <= d {
        let mut v: [T; BLOCK] = val[j0..j0 + BLOCK].try_into().expect("a full block");
        let mut a: [A; BLOCK] = arg[j0..j0 + BLOCK].try_into().expect("a full block");
        plan.for_rows_prefetch(s, data, d, |r| {
            if r != first {
                let x: &[T; BLOCK] = data[r * d + j0..r * d + j0 + BLOCK].try_into().expect("a full block");
                fold_row::<T, A, MAX>(&mut v, &mut a, x, A::from_row(r));
            }
        });
        val[j0..j0 + BLOCK].copy_from_slice(&v);
        arg[j0..j0 + BLOCK].copy_from_slice(&a);
        j0 += BLOCK;
    }
    if j0 < d {
        let (val, arg) = (&mut val[j0..], &mut arg[j0..]);
        plan.for_rows_prefetch(s, data, d, |r| {
            if r != first {
                fold_row::<T, A, MAX>(val, arg, &data[r * d + j0..(r + 1) * d], A::from_row(r));
            }
        });
    }
}

simd_dispatch!(
    /// [`fold_segment`] compiled for `simd` (the branch-free selects become blends).
    fn fold_segment_simd = fold_segment [T: Elem, A: ArgIndex, const MAX: bool] [T, A, MAX] (
        data: &[T],
        d: usize,
        plan: &CsrPlan,
        s: usize,
        first: usize,
        val: &mut [T],
        arg: &mut [A],
    )
);

/// A raw pointer that rayon tasks may share; every task writes a disjoint set of rows.
#[derive(Clone, Copy)]
struct RowsPtr<T>(*mut T);
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
    unsafe fn row(&self, r: usize, d: usize) -> &mut [T] {
        // SAFETY: guaranteed by the caller.
        unsafe { core::slice::from_raw_parts_mut(self.0.add(r * d), d) }
    }

    /// Writes `x` over row `r` (of width `x.len()`), which may hold no values yet.
    ///
    /// # Safety
    /// As for [`row`](Self::row), and `x` must not overlap the buffer.
    unsafe fn write_row(&self, r: usize, x: &[T]) {
        // SAFETY: guaranteed by the caller.
        unsafe { core::ptr::copy_nonoverlapping(x.as_ptr(), self.0.add(r * x.len()), x.len()) }
    }

    /// Hints the CPU to load row `r` (of width `d`); touches no memory.
    #[inline(always)]
    fn prefetch(&self, r: usize, d: usize) {
        prefetch_bytes::<TO_L2>(self.0.wrapping_add(r * d) as *const u8, d * core::mem::size_of::<T>());
    }
}

// ANCHOR: kernel_softmax
/// Softmax of each segment's rows, column-wise, shifted by the segment maximum.
///
/// A column holding NaN or `+inf`, or only `-inf`, gives NaN in all its rows (as `softmax` does
/// in torch and jax).
pub fn softmax<T: FloatElem>(data: &[T], d: usize, plan: &CsrPlan) -> Vec<T> {
    softmax_out(Alloc::Vec, data, d, plan).into_vec()
}

/// [`softmax`] with its output from `alloc`.
pub(crate) fn softmax_out<T: FloatElem>(alloc: Alloc, data: &[T], d: usize, plan: &CsrPlan) -> Out<T> {
    // Each row's segment task copies it in before working on it: no fill pass over the output
    // first, once the plan is checked to hold every row.
    plan.assert_holds_rows(data.len(), d, "softmax data");
    let mut out = output_unwritten::<T>(alloc, data.len());
    // SAFETY: `src` is given, so `out` needs no values.
    unsafe { softmax_into(Simd::detect(), Some(data), &mut out, d, plan) };
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
unsafe fn softmax_into<T: FloatElem>(simd: Simd, src: Option<&[T]>, out: &mut [MaybeUninit<T>], d: usize, plan: &CsrPlan) {
    let rows = out.len().checked_div(d).unwrap_or(0);
    debug_assert_eq!(plan.num_rows(), rows);
    debug_assert!(src.is_none_or(|src| src.len() == out.len()));
    if d == 0 || rows == 0 {
        return;
    }
    let ptr = RowsPtr(out.as_mut_ptr() as *mut T);
    let min_len = plan.min_len(d);
    (0..plan.num_segments()).into_par_iter().with_min_len(min_len).for_each_init(
        || vec![T::ZERO; 2 * d],
        |scratch, s| {
            // SAFETY: `ptr` is `out`, `rows × d` long, which `src` (a shared borrow) cannot
            // overlap, and this task is the only one that handles segment `s`, so no other
            // touches its rows; without `src` they hold values (this function's contract).
            unsafe { softmax_segment_simd(simd, src, d, plan, s, scratch, ptr) };
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
    src: Option<&[T]>,
    d: usize,
    plan: &CsrPlan,
    s: usize,
    scratch: &mut [T],
    ptr: RowsPtr<T>,
) {
    let (shift, sum) = scratch.split_at_mut(d);
    let Some(first) = plan.first_row(s) else { return };
    // SAFETY (every `ptr.row(r, d)` below): row `r` belongs to segment `s` only (the plan is a
    // permutation of the rows), so no other task reads or writes it, and it lies inside the
    // buffer because `r < rows`.
    let first_row = match src {
        Some(src) => &src[first * d..(first + 1) * d],
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
        // `src`'s rows are prefetched into every level (into the second only, this measured 10 %
        // slower at 1e7 unsorted rows), `out`'s own rows into the second (see `TO_L2`).
        Some(src) => plan.for_rows_prefetch_to::<TO_L1, T>(s, src, d, |r| {
            let x = &src[r * d..(r + 1) * d];
            fold(shift, x);
            unsafe { ptr.write_row(r, x) };
        }),
        None => plan.for_rows_ahead(s, |ahead| ptr.prefetch(ahead, d), |r| fold(shift, unsafe { ptr.row(r, d) })),
    }
    // Shift by the maximum, or by 0 where every logit is -inf (0/0 = NaN then, as a
    // softmax of nothing but -inf is undefined). A +inf maximum gives NaN as in torch.
    for m in shift.iter_mut() {
        if *m == T::LOWEST {
            *m = T::ZERO;
        }
    }
    sum.iter_mut().for_each(|v| *v = T::ZERO);
    plan.for_rows(s, |r| {
        let y = unsafe { ptr.row(r, d) };
        // Zipped rather than indexed: no bounds checks, so the loop (and `exp`) vectorises.
        for ((y, &m), t) in y.iter_mut().zip(shift.iter()).zip(sum.iter_mut()) {
            let e = y.sub(m).exp();
            *y = e;
            *t = t.add(e);
        }
    });
    plan.for_rows(s, |r| {
        let y = unsafe { ptr.row(r, d) };
        y.iter_mut().zip(sum.iter()).for_each(|(v, &t)| *v = v.div(t));
    });
}
// ANCHOR_END: kernel_softmax

simd_dispatch!(
    /// [`softmax_segment`] compiled for `simd`: its `exp` loop runs 8 (AVX2) or 16 (AVX-512)
    /// lanes wide instead of SSE2's 4.
    ///
    /// # Safety
    /// As [`softmax_segment`].
    unsafe fn softmax_segment_simd = softmax_segment [T: FloatElem] [T] (
        src: Option<&[T]>,
        d: usize,
        plan: &CsrPlan,
        s: usize,
        scratch: &mut [T],
        ptr: RowsPtr<T>,
    )
);

/// Number of rows in each segment.
pub fn count<I: IdElem>(plan: &CsrPlan) -> Vec<I> {
    plan.offsets.windows(2).map(|w| I::from_i64((w[1] - w[0]) as i64)).collect()
}

/// Fused gather-weight-sum (see [`SegmentBackend::segment_spmm`](crate::SegmentBackend::segment_spmm)):
/// `x` is `[N_src, d]` with `d = heads · c`, `weights` `[E, heads]`, `senders` `[E]` (already
/// checked to lie in `0..N_src`), and `plan` groups the edges by receiver. Each receiver's row
/// is accumulated by one task in edge order, so the result does not depend on the thread count.
pub fn spmm<T: Elem>(
    x: &[T],
    d: usize,
    weights: &[T],
    heads: usize,
    senders: &[usize],
    plan: &CsrPlan,
) -> Vec<T> {
    spmm_out(Alloc::Vec, x, d, weights, heads, senders, plan).into_vec()
}

/// [`spmm`] with its output from `alloc`.
pub(crate) fn spmm_out<T: Elem>(
    alloc: Alloc,
    x: &[T],
    d: usize,
    weights: &[T],
    heads: usize,
    senders: &[usize],
    plan: &CsrPlan,
) -> Out<T> {
    // Its body compiled for AVX2 or AVX-512 (as `reduce_add_mul`'s is) measured within the
    // noise of this baseline build at 1e5-1e7 edges, so it stays as it is.
    let c = d / heads.max(1);
    per_segment(alloc, plan, d, T::ZERO, |s, acc| {
        plan.for_rows_prefetch_gather(s, x, d, senders, (weights, heads), |e| {
            let row = &x[senders[e] * d..(senders[e] + 1) * d];
            let w = &weights[e * heads..(e + 1) * heads];
            if heads == 1 {
                let w = w[0];
                acc.iter_mut()
                    .zip(row)
                    .for_each(|(a, &v)| *a = a.add(w.mul(v)));
            } else {
                for ((acc, row), &w) in acc.chunks_exact_mut(c).zip(row.chunks_exact(c)).zip(w) {
                    acc.iter_mut()
                        .zip(row)
                        .for_each(|(a, &v)| *a = a.add(w.mul(v)));
                }
            }
        })
    })
}

/// Per-edge, per-head dot products (see
/// [`SegmentBackend::segment_sddmm`](crate::SegmentBackend::segment_sddmm)): `a` and `b` are
/// `[·, d]` with `d = heads · c`; the indices are already checked. Parallel over edges.
pub fn sddmm<T: Elem>(
    a: &[T],
    b: &[T],
    d: usize,
    heads: usize,
    a_index: &[usize],
    b_index: &[usize],
) -> Vec<T> {
    sddmm_out(Alloc::Vec, a, b, d, heads, a_index, b_index).into_vec()
}

/// [`sddmm`] with its output from `alloc`.
pub(crate) fn sddmm_out<T: Elem>(
    alloc: Alloc,
    a: &[T],
    b: &[T],
    d: usize,
    heads: usize,
    a_index: &[usize],
    b_index: &[usize],
) -> Out<T> {
    // Every element is written once below (no fill pass first).
    let mut out = output_unwritten::<T>(alloc, a_index.len() * heads);
    let c = d / heads.max(1);
    if heads > 0 {
        out.par_chunks_mut(heads).enumerate().with_min_len(1024).for_each(|(e, o)| {
            // Both rows are gathers through an index: prefetch those of an edge ahead, as spmm does.
            if let (Some(&pa), Some(&pb)) = (a_index.get(e + GATHER_PREFETCH_DISTANCE), b_index.get(e + GATHER_PREFETCH_DISTANCE)) {
                prefetch_row(a, pa * d, d);
                prefetch_row(b, pb * d, d);
            }
            let (ra, rb) = (
                &a[a_index[e] * d..(a_index[e] + 1) * d],
                &b[b_index[e] * d..(b_index[e] + 1) * d],
            );
            for (h, o) in o.iter_mut().enumerate() {
                o.write(dot(&ra[h * c..(h + 1) * c], &rb[h * c..(h + 1) * c]));
            }
        });
    }
    // SAFETY: every row of `heads` elements was written above (none when `heads == 0`).
    unsafe { assume_written(out) }
}

/// `Σ a[i] · b[i]` with eight running sums (lane `i % 8`) added pairwise at the end: the loop
/// vectorises, where one running sum is a chain of dependent adds. The order is fixed, so the
/// result is too.
#[inline(always)]
fn dot<T: Elem>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut tail = T::ZERO;
    for (&p, &q) in ca.remainder().iter().zip(cb.remainder()) {
        tail = tail.add(p.mul(q));
    }
    for (p, q) in ca.zip(cb) {
        for k in 0..8 {
            lanes[k] = lanes[k].add(p[k].mul(q[k]));
        }
    }
    let quad = [lanes[0].add(lanes[4]), lanes[1].add(lanes[5]), lanes[2].add(lanes[6]), lanes[3].add(lanes[7])];
    quad[0].add(quad[2]).add(quad[1].add(quad[3])).add(tail)
}

/// The inputs of an additive-attention softmax (see
/// [`SegmentBackend::segment_attention_softmax`](crate::SegmentBackend::segment_attention_softmax)):
/// per-node scores `src` `[N_src, heads]` and `dst` `[N_dst, heads]`, per-edge `bias`
/// `[E, bias_width]` (`bias_width` 1 or `heads`), checked indices, and the LeakyReLU slope.
pub struct Attention<'a, T> {
    /// Scores of the senders.
    pub src: &'a [T],
    /// Scores of the receivers.
    pub dst: &'a [T],
    /// Per-edge terms added before the LeakyReLU; `-inf` masks an edge.
    pub bias: &'a [T],
    /// Columns of `bias`: 1 (shared by the heads) or `heads`.
    pub bias_width: usize,
    /// Heads (columns of `src` and `dst`).
    pub heads: usize,
    /// Sender of each edge (row of `src`).
    pub senders: &'a [usize],
    /// Receiver of each edge (row of `dst`).
    pub receivers: &'a [usize],
    /// LeakyReLU slope for negative inputs.
    pub slope: T,
}

impl<T: FloatElem> Attention<'_, T> {
    /// The rows edge `e` reads: its sender's scores, its receiver's scores (`heads` each) and
    /// its bias (`bias_width`), sliced once per edge so that the loops over the heads only
    /// index these short rows.
    #[inline(always)]
    fn rows(&self, e: usize) -> (&[T], &[T], &[T]) {
        let (h, w) = (self.heads, self.bias_width);
        let (s, r) = (self.senders[e], self.receivers[e]);
        (&self.src[s * h..(s + 1) * h], &self.dst[r * h..(r + 1) * h], &self.bias[e * w..(e + 1) * w])
    }

    /// `src + dst + bias` for head `k` of an edge's [`rows`](Self::rows), and whether the
    /// bias masks the edge.
    #[inline(always)]
    fn raw((src, dst, bias): (&[T], &[T], &[T]), k: usize) -> (T, bool) {
        let b = bias[if bias.len() == 1 { 0 } else { k }];
        (src[k].add(dst[k]).add(b), b == T::LOWEST)
    }

    /// The logits `LeakyReLU(raw)`, `-inf` for masked edges, `[E, heads]`.
    pub fn logits(&self) -> Vec<T> {
        self.logits_out(Alloc::Vec).into_vec()
    }

    /// [`logits`](Self::logits) with its output from `alloc`.
    pub(crate) fn logits_out(&self, alloc: Alloc) -> Out<T> {
        let h = self.heads;
        // Every element is written once below (no fill pass first).
        let mut out = output_unwritten::<T>(alloc, self.senders.len() * h);
        if h == 0 {
            // SAFETY: no elements.
            return unsafe { assume_written(out) };
        }
        out.par_chunks_mut(h).enumerate().with_min_len(1024).for_each(|(e, row)| {
            // `src[senders[e]]` is a gather of rows scattered over memory: prefetch the one of
            // an edge ahead, as spmm does.
            if let Some(&ahead) = self.senders.get(e + GATHER_PREFETCH_DISTANCE) {
                prefetch_row(self.src, ahead * h, h);
            }
            let rows = self.rows(e);
            for (k, o) in row.iter_mut().enumerate() {
                let (x, masked) = Self::raw(rows, k);
                o.write(if masked {
                    T::LOWEST
                } else {
                    T::pick(x < T::ZERO, x.mul(self.slope), x)
                });
            }
        });
        // SAFETY: every row of `h` elements was written above.
        unsafe { assume_written(out) }
    }

    /// Gradient of the raw scores given the coefficients `alpha` and their gradient `grad`
    /// (both `[E, heads]`): the softmax backward `alpha · (grad − Σ_segment alpha · grad)`,
    /// times the LeakyReLU's slope where the raw score is negative, 0 on masked edges. `plan`
    /// groups the edges by receiver; one task per receiver, in edge order.
    pub fn backward(&self, alpha: &[T], grad: &[T], plan: &CsrPlan) -> Vec<T> {
        self.backward_out(Alloc::Vec, alpha, grad, plan).into_vec()
    }

    /// [`backward`](Self::backward) with its output from `alloc`.
    pub(crate) fn backward_out(&self, alloc: Alloc, alpha: &[T], grad: &[T], plan: &CsrPlan) -> Out<T> {
        let h = self.heads;
        // Each edge's row is written once below, with no fill pass first.
        plan.assert_holds_rows(alpha.len(), h, "attention gradient");
        let mut out = output_unwritten::<T>(alloc, alpha.len());
        if h == 0 || alpha.is_empty() {
            // SAFETY: no elements.
            return unsafe { assume_written(out) };
        }
        let ptr = RowsPtr(out.as_mut_ptr());
        (0..plan.num_segments()).into_par_iter().with_min_len(plan.min_len(h)).for_each_init(
            || vec![T::ZERO; h],
            |total, s| {
                total.iter_mut().for_each(|t| *t = T::ZERO);
                plan.for_rows(s, |e| {
                    for k in 0..h {
                        total[k] = total[k].add(alpha[e * h + k].mul(grad[e * h + k]));
                    }
                });
                // `raw` gathers `src[senders[e]]`: prefetched ahead in the plan's order.
                plan.for_rows_prefetch_gather(s, self.src, h, self.senders, (self.bias, self.bias_width), |e| {
                    // SAFETY: edge `e` belongs to receiver `s` only (the plan is a permutation
                    // of the edges), so no other task touches row `e` of `out`, and
                    // `(e + 1) * h <= out.len()` because `e` indexes `alpha`'s rows.
                    let row = unsafe { ptr.row(e, h) };
                    let rows = self.rows(e);
                    let (alpha, grad) = (&alpha[e * h..(e + 1) * h], &grad[e * h..(e + 1) * h]);
                    for (k, o) in row.iter_mut().enumerate() {
                        let (a, g) = (alpha[k], grad[k]);
                        let d = a.mul(g).sub(a.mul(total[k]));
                        let (x, masked) = Self::raw(rows, k);
                        o.write(if masked {
                            T::ZERO
                        } else {
                            T::pick(x < T::ZERO, d.mul(self.slope), d)
                        });
                    }
                });
            },
        );
        // SAFETY: the plan's receivers hold every edge (checked above), and each edge's row of
        // `h` elements was written above.
        unsafe { assume_written(out) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_stable_and_detects_sorted_ids() {
        let plan = CsrPlan::new(&[2i64, 0, 2, 1, 0], 4);
        assert_eq!(plan.offsets, vec![0, 2, 3, 5, 5]);
        assert_eq!(plan.order.as_deref(), Some(&[1, 4, 3, 0, 2][..]));
        let sorted = CsrPlan::new(&[0i32, 0, 1, 3], 4);
        assert!(sorted.is_sorted());
        assert_eq!(sorted.offsets, vec![0, 2, 3, 3, 4]);
    }

    /// A pseudo-random sequence (64-bit LCG, high bits).
    fn lcg(seed: u64) -> impl FnMut() -> usize {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        }
    }

    /// The bits of each value, every NaN alike.
    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect()
    }

    #[test]
    fn softmax_in_place_gives_the_out_of_place_result_bit_for_bit() {
        // Pseudo-random rows with NaN, ±inf and whole -inf columns mixed in, in segments of
        // every length from 0 to 40 (so prefetching rows ahead crosses segments), ids sorted
        // and shuffled.
        let (d, n) = (3usize, 40usize);
        let mut ids: Vec<i64> = (0..n as i64).flat_map(|s| std::iter::repeat_n(s, s as usize)).collect();
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
            let want = softmax(&data, d, &plan);
            assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| *v > 0.0));
            let mut got = data.clone();
            softmax_in_place(&mut got, d, &plan);
            assert_eq!(bits(&got), bits(&want), "shuffled: {shuffled}");
            // Every instruction set this CPU has, in place and not: the same bits.
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let mut got = vec![0.0; data.len()];
                // SAFETY: with `src` given, `got` needs no values (it holds zeros anyway).
                unsafe { softmax_into(Simd::detect().at_most(level), Some(&data), as_uninit_mut(&mut got), d, &plan) };
                assert_eq!(bits(&got), bits(&want), "{level:?}, shuffled: {shuffled}");
                let mut got = data.clone();
                // SAFETY: `got` holds the input's values.
                unsafe { softmax_into(Simd::detect().at_most(level), None, as_uninit_mut(&mut got), d, &plan) };
                assert_eq!(bits(&got), bits(&want), "{level:?} in place, shuffled: {shuffled}");
            }
        }
    }

    /// Runs `check(data, d, plan, shuffled)` on `900 × 37` values drawn by `value` (37 columns:
    /// two full blocks of 16, vector bodies, and a remainder) and ids into 60 segments, the last
    /// five empty: first shuffled, then sorted.
    fn for_each_isa_case(seed: u64, value: impl Fn(usize) -> f32, mut check: impl FnMut(&[f32], usize, &CsrPlan, bool)) {
        let (d, n, rows) = (37usize, 60usize, 900usize);
        let mut next = lcg(seed);
        let data: Vec<f32> = (0..rows * d).map(|_| value(next())).collect();
        let mut ids: Vec<i64> = (0..rows).map(|_| (next() % (n - 5)) as i64).collect();
        for shuffled in [true, false] {
            if !shuffled {
                ids.sort_unstable();
            }
            check(&data, d, &CsrPlan::new(&ids, n), shuffled);
        }
    }

    #[test]
    fn extremes_give_the_same_bits_and_arguments_on_every_instruction_set() {
        // Ties, NaN and infinities mixed in.
        let value = |k: usize| match k % 40 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            k => (k % 7) as f32 - 3.0,
        };
        for_each_isa_case(11, value, |data, d, plan, shuffled| {
            for extreme in [Extreme::Max, Extreme::Min] {
                let (want_v, want_a) = reduce_extreme_for::<f32, i64>(Simd::detect().at_most(Level::Base), Alloc::Vec, data, d, plan, extreme);
                assert!(want_a.contains(&-1) && want_v.iter().any(|v| v.is_nan()));
                for level in [Level::Avx2, Level::Avx512] {
                    let (v, a) = reduce_extreme_for::<f32, i64>(Simd::detect().at_most(level), Alloc::Vec, data, d, plan, extreme);
                    assert_eq!((bits(&v), &a[..]), (bits(&want_v), &want_a[..]), "{level:?} {extreme:?} shuffled: {shuffled}");
                }
            }
        });
    }

    #[test]
    fn sums_and_products_give_the_same_bits_on_every_instruction_set() {
        // Values whose sums round, NaN and infinities mixed in.
        let value = |k: usize| match k % 50 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            k => (k as f32 - 25.0) / 7.0,
        };
        for_each_isa_case(17, value, |data, d, plan, shuffled| {
            for prod in [false, true] {
                let want = reduce_add_mul_for(Simd::detect().at_most(Level::Base), Alloc::Vec, data, d, plan, prod);
                assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| v.fract() != 0.0));
                for level in [Level::Avx2, Level::Avx512] {
                    let got = reduce_add_mul_for(Simd::detect().at_most(level), Alloc::Vec, data, d, plan, prod);
                    assert_eq!(bits(&got), bits(&want), "{level:?} prod: {prod} shuffled: {shuffled}");
                }
            }
        });
    }

    #[test]
    fn exp_f32_is_within_two_ulp_of_libm_and_keeps_the_special_values() {
        let ulps = |a: f32, b: f32| (a.to_bits() as i64 - b.to_bits() as i64).abs();
        let mut worst = 0;
        let mut x = -103.9f32;
        while x < 88.72 {
            let want = (x as f64).exp() as f32;
            worst = worst.max(ulps(exp_f32(x), want));
            x += 0.00173;
        }
        assert!(worst <= 2, "{worst} ulp");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
    }

    #[test]
    #[should_panic(expected = "segment id 5 at position 1 is out of range for num_segments = 3")]
    fn plan_rejects_out_of_range_ids() {
        CsrPlan::new(&[0i64, 5], 3);
    }

    #[test]
    #[should_panic(expected = "segment id -1 at position 0")]
    fn plan_rejects_negative_ids() {
        CsrPlan::new(&[-1i32], 3);
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let e = 20_000;
        let d = 3;
        let ids: Vec<i64> = (0..e).map(|i| ((i * 7919) % 613) as i64).collect();
        let data: Vec<f32> = (0..e * d).map(|i| ((i * 37 % 101) as f32).sin() * 1e3).collect();
        let plan = CsrPlan::new(&ids, 700);
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let (max, arg) = reduce_extreme::<f32, i64>(&data, d, &plan, Extreme::Max);
                (reduce_add_mul(&data, d, &plan, false), softmax(&data, d, &plan), max, arg)
            })
        };
        let (a, b) = (run(1), run(4));
        assert_eq!(bits(&a.0), bits(&b.0));
        assert_eq!(bits(&a.1), bits(&b.1));
        assert_eq!((bits(&a.2), &a.3), (bits(&b.2), &b.3));
    }
}
