//! The CSR plan of a segment-id list and the prefetch hints its row walks issue.

use core::ops::Range;
use std::borrow::Cow;

use super::Rows;
use super::elem::IdElem;
use super::group::group_rows;
use super::scan::{Scan, bad_id, scan_ids};

/// A CSR view of segment ids: the rows of segment `s` are `rows(s)`, in original row order.
/// Owned when built here, borrowed from the tensors of a `SegmentPlan`.
#[derive(Clone, Debug)]
pub struct CsrPlan<'a> {
    /// `offsets[s]..offsets[s + 1]` indexes segment `s`'s rows; length `num_segments + 1`.
    pub offsets: Cow<'a, [usize]>,
    /// Row indices grouped by segment (stable), or `None` when the ids were already sorted and
    /// the rows of a segment are the contiguous range of its offsets.
    pub order: Option<Cow<'a, [usize]>>,
}

impl CsrPlan<'static> {
    /// Builds the plan in O(E + N) with a stable counting sort; sorted ids skip the sort.
    ///
    /// # Panics
    /// If an id lies outside `[0, num_segments)`; the message names the id and its position.
    pub fn new<I: IdElem>(ids: &[I], num_segments: usize) -> Self {
        Self::try_new(ids, num_segments).unwrap_or_else(|(row, id)| bad_id(row, id, num_segments))
    }

    /// As [`new`](Self::new), returning the first out-of-range id's (position, id) instead of
    /// panicking.
    pub fn try_new<I: IdElem>(ids: &[I], num_segments: usize) -> Result<Self, (usize, i64)> {
        Ok(Self::scanned(
            ids,
            num_segments,
            scan_ids(ids, num_segments)?,
        ))
    }

    /// The plan of ids already scanned by [`scan_ids`] (in range), from what it found.
    pub fn scanned<I: IdElem>(ids: &[I], num_segments: usize, scan: Scan) -> Self {
        if let Scan::Sorted(offsets) = scan {
            return Self {
                offsets: Cow::Owned(offsets),
                order: None,
            };
        }
        let (offsets, order) = group_rows(ids, num_segments);
        Self {
            offsets: Cow::Owned(offsets),
            order: Some(Cow::Owned(order)),
        }
    }
}

impl CsrPlan<'_> {
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
    pub(crate) fn assert_holds_rows(&self, len: usize, width: usize, what: &str) {
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
    pub fn for_rows(&self, s: usize, f: impl FnMut(usize)) {
        self.for_slots(self.slots(s), f)
    }

    /// As [`for_rows`](Self::for_rows), prefetching the rows a few positions ahead in the
    /// permutation when the ids were unsorted (random row reads are latency bound otherwise),
    /// with x86's prefetch hint `HINT`
    /// ([`TO_L1`] or [`TO_L2`]).
    #[inline(always)]
    pub(crate) fn for_rows_prefetch_to<const HINT: i32, T>(
        &self,
        s: usize,
        rows: Rows<T>,
        f: impl FnMut(usize),
    ) {
        self.for_rows_ahead(s, |ahead| rows.prefetch::<HINT>(ahead), f)
    }

    /// As [`for_rows`](Self::for_rows), calling `prefetch(row)` for the row a few positions
    /// ahead in the permutation when the ids were unsorted (see
    /// [`for_rows_prefetch_to`](Self::for_rows_prefetch_to)).
    #[inline(always)]
    pub(crate) fn for_rows_ahead(&self, s: usize, prefetch: impl Fn(usize), f: impl FnMut(usize)) {
        self.for_slots_ahead(self.slots(s), prefetch, f)
    }

    /// The positions of segment `s`'s rows in CSR order: `offsets[s]..offsets[s + 1]`.
    #[inline(always)]
    pub fn slots(&self, s: usize) -> Range<usize> {
        self.offsets[s]..self.offsets[s + 1]
    }

    /// The row at CSR position `slot`.
    #[inline(always)]
    pub fn row_at(&self, slot: usize) -> usize {
        self.order.as_ref().map_or(slot, |order| order[slot])
    }

    /// Calls `f(row)` for the rows at CSR positions `slots`, in order.
    #[inline(always)]
    pub fn for_slots(&self, slots: Range<usize>, mut f: impl FnMut(usize)) {
        match &self.order {
            None => slots.for_each(&mut f),
            Some(order) => order[slots].iter().for_each(|&r| f(r)),
        }
    }

    /// As [`for_slots`](Self::for_slots), prefetching rows ahead into L2 as
    /// [`for_rows_prefetch_to`](Self::for_rows_prefetch_to) does.
    #[inline(always)]
    pub fn for_slots_prefetch<T>(&self, slots: Range<usize>, rows: Rows<T>, f: impl FnMut(usize)) {
        self.for_slots_ahead(slots, |ahead| rows.prefetch::<TO_L2>(ahead), f)
    }

    /// As [`for_rows_ahead`](Self::for_rows_ahead), over the CSR positions `slots`.
    #[inline(always)]
    pub(crate) fn for_slots_ahead(
        &self,
        range: Range<usize>,
        prefetch: impl Fn(usize),
        mut f: impl FnMut(usize),
    ) {
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
    pub fn for_rows_prefetch_gather<T, W, I: IdElem>(
        &self,
        s: usize,
        data: &[T],
        d: usize,
        gather: &[I],
        (row_data, per_row): (&[W], usize),
        mut f: impl FnMut(usize),
    ) {
        let range = self.offsets[s]..self.offsets[s + 1];
        match &self.order {
            None => {
                for k in range {
                    if let Some(&ahead) = gather.get(k + GATHER_PREFETCH_DISTANCE) {
                        prefetch_row(data, ahead.at() * d, d);
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
                        prefetch_row(data, gather[ahead].at() * d, d);
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
    pub(crate) fn min_len(&self, d: usize) -> usize {
        let rows = self.num_rows().max(1);
        let per_segment = (rows * d.max(1))
            .div_ceil(self.num_segments().max(1))
            .max(1);
        (1usize << 14).div_ceil(per_segment).max(1)
    }
}

/// How many rows ahead of the current one [`CsrPlan::for_slots_ahead`] prefetches.
const PREFETCH_DISTANCE: usize = 32;

/// How many rows ahead [`CsrPlan::for_rows_prefetch_gather`] and [`sddmm`] prefetch.
pub(crate) const GATHER_PREFETCH_DISTANCE: usize = 16;

/// Prefetch into every cache level (x86's `T0` hint).
pub(crate) const TO_L1: i32 = 3;
/// Prefetch into the second-level cache and beyond, not the first (x86's `T2` hint).
///
/// The reductions over unsorted ids prefetch whole rows, one per 64 bytes, and a first-level
/// prefetch holds one of the core's few line-fill buffers until its line arrives; into the
/// second level they stall less (faster for sum and max in the segment bench, see
/// `benches/RESULTS.md`). `spmm`'s gathers gained nothing from it and stay on [`TO_L1`].
pub(crate) const TO_L2: i32 = 1;
#[cfg(target_arch = "x86_64")]
const _: () =
    assert!(TO_L1 == core::arch::x86_64::_MM_HINT_T0 && TO_L2 == core::arch::x86_64::_MM_HINT_T2);

/// Hints the CPU to load `data[start..start + len]` into every cache level (a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch_row<T>(data: &[T], start: usize, len: usize) {
    prefetch_bytes::<TO_L1>(
        data[start..start + len].as_ptr() as *const u8,
        len * core::mem::size_of::<T>(),
    );
}

/// Hints the CPU to load the `bytes` bytes at `base` into cache, with x86's hint `HINT`
/// ([`TO_L1`] or [`TO_L2`]; a no-op off x86-64). Reads nothing: a prefetch never faults,
/// whatever the address.
#[inline(always)]
pub(crate) fn prefetch_bytes<const HINT: i32>(base: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut offset = 0;
        while offset < bytes {
            // SAFETY: a prefetch is a hint: it does not access memory in the language's sense
            // and never faults; `wrapping_add` keeps the address computation defined.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<HINT>(base.wrapping_add(offset) as *const i8)
            };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_is_stable_and_detects_sorted_ids() {
        let plan = CsrPlan::new(&[2i64, 0, 2, 1, 0], 4);
        assert_eq!(*plan.offsets, [0, 2, 3, 5, 5]);
        assert_eq!(plan.order.as_deref(), Some(&[1, 4, 3, 0, 2][..]));
        let sorted = CsrPlan::new(&[0i32, 0, 1, 3], 4);
        assert!(sorted.is_sorted());
        assert_eq!(*sorted.offsets, [0, 2, 3, 3, 4]);
    }

    #[test]
    fn sorted_offsets_equal_the_counts_across_chunks() {
        // Runs of 0 to 40 rows (empty segments first, between chunks and last) over several
        // chunks of the parallel pass; and no ids at all.
        let mut ids = Vec::new();
        let mut s = 3i64;
        while ids.len() < 300_000 {
            ids.extend(std::iter::repeat_n(s, (s * 7919 % 41) as usize));
            s += 1 + (s % 5 == 0) as i64;
        }
        for (ids, n) in [(&ids[..], s as usize + 4), (&[][..], 3)] {
            let mut want = vec![0usize; n + 1];
            ids.iter().for_each(|&id| want[id as usize + 1] += 1);
            (0..n).for_each(|s| want[s + 1] += want[s]);
            let plan = CsrPlan::new(ids, n);
            assert!(plan.is_sorted());
            assert_eq!(*plan.offsets, want[..]);
        }
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
}
