//! The id scan of every unplanned call and plan: range check, sortedness, and the offsets of
//! sorted ids, in one parallel pass.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::elem::IdElem;
use crate::host::simd::{Simd, simd_dispatch};

/// The CPU contract for a bad id: a panic naming it, its position and `num_segments`.
pub(crate) fn bad_id(row: usize, id: i64, num_segments: usize) -> ! {
    panic!(
        "segment id {id} at position {row} is out of range for num_segments = {num_segments} \
         (ids must lie in [0, num_segments)); use burn_segment::validate_segment_ids or \
         burn_segment::SegmentPlan::new to get a Result instead"
    )
}

/// What [`scan_ids`] found in ids that all lie in range.
#[derive(Debug, PartialEq)]
pub enum Scan {
    /// Sorted, with their offsets (`offsets[s]` is the first row whose id is at least `s`).
    Sorted(Vec<usize>),
    /// Not sorted.
    Unsorted,
}

/// Checks that every id lies in `[0, num_segments)` and, where they are sorted, finds their
/// offsets in the same pass, in parallel over chunks; `Err` holds the first (lowest position)
/// out-of-range id's (position, id).
///
/// Each block of ids is checked first (range and order, branch-free and vectorised) and, while
/// everything before it was sorted, writes the offsets of its ids while still in L1: one read of
/// the ids instead of a scan and then an offsets pass. The writes are speculative (a later chunk
/// may find the ids unsorted, and chunks that each look sorted can then overlap), hence atomics.
pub fn scan_ids<I: IdElem>(ids: &[I], num_segments: usize) -> Result<Scan, (usize, i64)> {
    scan_ids_at(Simd::detect(), ids, num_segments)
}

/// [`scan_ids`] with its blocks compiled for `simd` (the same answer at every level).
fn scan_ids_at<I: IdElem>(
    simd: Simd,
    ids: &[I],
    num_segments: usize,
) -> Result<Scan, (usize, i64)> {
    const CHUNK: usize = 1 << 16;
    let n = num_segments as i64;
    // Ids unsorted from the start (random ones, at once) allocate no offsets.
    let head = &ids[..ids.len().min(64)];
    let speculate = head.windows(2).all(|w| w[0].to_i64() <= w[1].to_i64());
    let offsets: Vec<AtomicUsize> = match speculate {
        true => (0..=num_segments).map(|_| AtomicUsize::new(0)).collect(),
        false => Vec::new(),
    };
    let scan_chunk = |(c, chunk): (usize, &[I])| {
        let base = c * CHUNK;
        // Clamped: a bad id before the chunk fails the call anyway, but must not index.
        let mut prev = base.checked_sub(1).map_or(-1, |r| ids[r].to_i64().max(-1));
        let (mut in_range, mut sorted) = (true, speculate);
        for (b, block) in chunk.chunks(BLOCK).enumerate() {
            let mut check = (true, true);
            check_block_simd(simd, block, num_segments as u64, &mut check);
            in_range &= check.0;
            sorted &= check.1 && prev <= block[0].to_i64();
            if sorted && in_range {
                block_offsets(simd, block, prev, base + b * BLOCK, &offsets);
            }
            prev = block[block.len() - 1].to_i64();
        }
        let bad = (!in_range).then(|| {
            let k = chunk
                .iter()
                .position(|&id| !(0..n).contains(&id.to_i64()))
                .expect("a block held an id out of range");
            (base + k, chunk[k].to_i64())
        });
        (bad, sorted)
    };
    // One chunk on the calling thread (rayon would hand it to a thread of its pool).
    let chunks: Vec<(Option<(usize, i64)>, bool)> = match ids.len() > CHUNK {
        true => ids.par_chunks(CHUNK).enumerate().map(scan_chunk).collect(),
        false => ids.chunks(CHUNK).enumerate().map(scan_chunk).collect(),
    };
    if let Some(bad) = chunks.iter().find_map(|c| c.0) {
        return Err(bad);
    }
    if !speculate || !chunks.iter().all(|c| c.1) {
        return Ok(Scan::Unsorted);
    }
    let mut offsets: Vec<usize> = offsets.into_iter().map(AtomicUsize::into_inner).collect();
    let after_last = ids.last().map_or(0, |&id| id.to_i64() as usize + 1);
    offsets[after_last..].fill(ids.len());
    Ok(Scan::Sorted(offsets))
}

/// Ids checked (and their offsets written) at a time, while in L1.
const BLOCK: usize = 1 << 10;

simd_dispatch!(
    /// [`check_block`] compiled for `simd`.
    fn check_block_simd = check_block [I: IdElem] [I] (
        block: &[I],
        num_segments: u64,
        out: &mut (bool, bool),
    )
);

/// Whether every id of a non-empty block lies in `[0, num_segments)` and whether the block is
/// non-decreasing, into `out`: one branch-free pass of two compares an id, which vectorises (a
/// negative id is a huge unsigned one).
#[inline(always)]
fn check_block<I: IdElem>(block: &[I], num_segments: u64, out: &mut (bool, bool)) {
    let first = block[0].to_i64();
    let (mut outside, mut descents) = ((first as u64 >= num_segments) as u32, 0u32);
    for (&a, &b) in block.iter().zip(&block[1..]) {
        let (a, b) = (a.to_i64(), b.to_i64());
        outside |= (b as u64 >= num_segments) as u32;
        descents |= (b < a) as u32;
    }
    *out = (outside == 0, descents == 0);
}

simd_dispatch!(
    /// [`change_mask`] compiled for `simd`.
    fn change_mask_simd = change_mask [I: IdElem] [I] (
        block: &[I],
        prev: i64,
        words: &mut [u64; BLOCK / 64],
    )
);

/// Bit `k` of `words` (`k % 64` of word `k / 64`) set where the block's id `k` differs from the
/// one before it (`prev` before the first): one compare an id, vectorised.
#[inline(always)]
fn change_mask<I: IdElem>(block: &[I], prev: i64, words: &mut [u64; BLOCK / 64]) {
    for (w, word) in words.iter_mut().enumerate() {
        let lo = (w * 64).max(1);
        let hi = ((w + 1) * 64).min(block.len());
        if lo >= hi {
            *word = (w == 0 && block[0].to_i64() != prev) as u64;
            continue;
        }
        let (cur, before) = (&block[lo..hi], &block[lo - 1..hi - 1]);
        let mut m = 0u64;
        for (j, (&b, &a)) in cur.iter().zip(before).enumerate() {
            m |= ((b.to_i64() != a.to_i64()) as u64) << j;
        }
        *word = match w {
            0 => (m << 1) | (block[0].to_i64() != prev) as u64,
            _ => m,
        };
    }
}

/// Writes the offsets of a sorted, in-range block whose rows start at `base` and whose ids all
/// follow `prev` (the id before the block, -1 at the start): each new id's first row, and that
/// row for the absent ids between it and the id before it.
///
/// The id changes are found as bit masks first, so the stores loop over the changes only, with
/// no branch per id (which random run lengths mispredict).
#[inline(always)]
fn block_offsets<I: IdElem>(
    simd: Simd,
    block: &[I],
    prev: i64,
    base: usize,
    offsets: &[AtomicUsize],
) {
    let mut words = [0u64; BLOCK / 64];
    change_mask_simd(simd, block, prev, &mut words);
    for (w, &word) in words.iter().enumerate() {
        let mut m = word;
        while m != 0 {
            let k = w * 64 + m.trailing_zeros() as usize;
            let before = k.checked_sub(1).map_or(prev, |j| block[j].to_i64());
            for s in before + 1..=block[k].to_i64() {
                offsets[s as usize].store(base + k, Ordering::Relaxed);
            }
            m &= m - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::simd::Level;

    /// The scan's answer worked out one id at a time: the first bad id, else the offsets of
    /// sorted ids or `Unsorted`.
    fn reference(ids: &[i64], n: usize) -> Result<Scan, (usize, i64)> {
        if let Some(k) = ids.iter().position(|&id| id < 0 || id >= n as i64) {
            return Err((k, ids[k]));
        }
        if ids.windows(2).any(|w| w[1] < w[0]) {
            return Ok(Scan::Unsorted);
        }
        let mut offsets = vec![0usize; n + 1];
        ids.iter().for_each(|&id| offsets[id as usize + 1] += 1);
        (0..n).for_each(|s| offsets[s + 1] += offsets[s]);
        Ok(Scan::Sorted(offsets))
    }

    #[test]
    fn scan_matches_a_one_id_at_a_time_reference() {
        // 200 000 ids over four chunks of the parallel pass, sorted with gaps; then broken in
        // ways the speculative offsets must survive: every chunk sorted but overlapping its
        // neighbours, one descent deep inside (after the first 64 ids), one at a chunk's first id,
        // and bad ids (the lowest position wins; a negative one just before a chunk boundary).
        let sorted: Vec<i64> = (0..200_000i64).map(|r| r / 7 + r / 1000).collect();
        let n = *sorted.last().unwrap() as usize + 3;
        let mut cases = vec![sorted.clone(), Vec::new(), vec![0; 70_000]];
        // Runs longer than a block (and a chunk's share of one), a first id above 0, and gaps
        // that open exactly at block and chunk starts.
        cases.push((0..200_000i64).map(|r| r / 3000 + 5).collect());
        cases.push((0..200_000i64).map(|r| (r >> 10) * 3).collect());
        cases.push(
            sorted
                .iter()
                .enumerate()
                .map(|(r, &id)| id % 9_000 + (r >> 16) as i64)
                .collect(),
        );
        for at in [100_000, 1 << 16, (1 << 16) - 1, 1 << 17] {
            let mut ids = sorted.clone();
            ids[at] -= 2;
            cases.push(ids);
        }
        for (at, id) in [(150_000, n as i64), ((1 << 16) - 1, -3), (5, -1)] {
            let mut ids = sorted.clone();
            ids[at] = id;
            ids[190_000] = n as i64 + 5;
            cases.push(ids);
        }
        for ids in &cases {
            let want = reference(ids, n);
            let narrow: Vec<i32> = ids.iter().map(|&id| id as i32).collect();
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let simd = Simd::detect().at_most(level);
                assert_eq!(scan_ids_at(simd, ids, n), want, "{level:?}");
                assert_eq!(scan_ids_at(simd, &narrow, n), want, "{level:?}");
            }
        }
        assert_eq!(scan_ids::<i64>(&[], 0), Ok(Scan::Sorted(vec![0])));
    }
}
