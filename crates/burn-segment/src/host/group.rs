//! The stable counting sort that groups the rows of unsorted ids by segment, in parallel parts.

use rayon::prelude::*;

use super::elem::IdElem;

/// Rows below which a part is not worth a task of its own (at 1e5 rows two parts were slower
/// than one: their scattered writes share the order's cache lines).
const PART_ROWS: usize = 1 << 16;

/// The CSR offsets (`[num_segments + 1]`) and the rows grouped by segment, each segment's rows
/// in row order, of ids that all lie in `[0, num_segments)`.
///
/// The rows are cut into up to one part per thread, each counted and then placed in parallel,
/// part `p`'s rows of a segment after those of the parts before it: a stable sort has exactly
/// one result, so the parts (and threads) change nothing but the time. Each part keeps a
/// counter per segment, so there are parts only while those counters stay under two per row.
///
/// # Panics
/// If an id lies outside `[0, num_segments)` (the caller has checked them).
pub(crate) fn group_rows<I: IdElem>(ids: &[I], num_segments: usize) -> (Vec<usize>, Vec<usize>) {
    let e = ids.len();
    let parts = rayon::current_num_threads()
        .min(e / PART_ROWS)
        .min(2 * e / (num_segments + 1))
        .max(1);
    let part_len = e.div_ceil(parts).max(1);
    let count = |part: &[I]| {
        let mut counts = vec![0usize; num_segments];
        part.iter().for_each(|&id| counts[id.at()] += 1);
        counts
    };
    let mut next: Vec<Vec<usize>> = match parts {
        1 => vec![count(ids)],
        _ => ids.par_chunks(part_len).map(count).collect(),
    };
    // Each part's counts become its first slot per segment.
    let mut offsets = vec![0usize; num_segments + 1];
    let mut slot = 0;
    for s in 0..num_segments {
        offsets[s] = slot;
        for part in next.iter_mut() {
            (part[s], slot) = (slot, slot + part[s]);
        }
    }
    offsets[num_segments] = slot;
    let mut order = vec![0usize; e];
    let out = SlotsPtr(order.as_mut_ptr());
    let place = |(p, (part, next)): (usize, (&[I], &mut Vec<usize>))| {
        for (k, &id) in part.iter().enumerate() {
            let slot = &mut next[id.at()];
            // SAFETY: the slots of segment `s` that part `p` takes, `next[s]` onwards for its
            // count of `s`, lie in `s`'s range of `offsets` after every earlier part's, so each
            // slot is written once, and all are below `e` (the counts sum to `e`).
            unsafe { out.write(*slot, p * part_len + k) };
            *slot += 1;
        }
    };
    match parts {
        1 => place((0, (ids, &mut next[0]))),
        _ => ids
            .par_chunks(part_len)
            .zip(next.par_iter_mut())
            .enumerate()
            .for_each(place),
    }
    (offsets, order)
}

/// The grouped order's buffer, shared by the parts that fill disjoint slots of it.
#[derive(Clone, Copy)]
struct SlotsPtr(*mut usize);
// SAFETY: each part writes its own slots only (see `group_rows`).
unsafe impl Send for SlotsPtr {}
unsafe impl Sync for SlotsPtr {}

impl SlotsPtr {
    /// Writes `row` into slot `slot`.
    ///
    /// # Safety
    /// `slot` must lie in the buffer, and no other thread may touch it.
    unsafe fn write(&self, slot: usize, row: usize) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(slot).write(row) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_parts_give_the_one_stable_order() {
        // Random ids over several parts (two threads' worth and more), few and many segments
        // (where many, fewer parts), every segment's rows checked against a stable sort.
        let mut state = 7u64;
        for (e, n) in [
            (300_000usize, 1_000usize),
            (300_000, 200_000),
            (70_000, 3),
            (5, 4),
        ] {
            let ids: Vec<i64> = (0..e)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((state >> 33) % n as u64) as i64
                })
                .collect();
            let mut want: Vec<usize> = (0..e).collect();
            want.sort_by_key(|&r| ids[r]);
            let mut offsets = vec![0usize; n + 1];
            ids.iter().for_each(|&id| offsets[id as usize + 1] += 1);
            (0..n).for_each(|s| offsets[s + 1] += offsets[s]);
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool.install(|| group_rows(&ids, n));
                assert_eq!(got, (offsets.clone(), want.clone()), "E = {e}, N = {n}");
            }
        }
        assert_eq!(group_rows::<i32>(&[], 2), (vec![0, 0, 0], vec![]));
    }
}
