//! An owner's rows among unsorted ids ([`scatter`](mod@super::scatter)'s owners): each block of
//! ids is narrowed, without a branch (ownership is random), to the rows of the owner's segments,
//! so that the loop that updates the output runs over those rows only. With AVX-512 a block is
//! narrowed eight ids at a time by a compress; the scalar loop gives the same rows elsewhere.

use crate::host::elem::IdElem;
use crate::host::simd::Simd;

/// Ids narrowed at a time.
const BLOCK: usize = 1 << 10;

/// Bits of a row's offset in its block, below its segment in a kept entry.
const BLOCK_BITS: u32 = BLOCK.trailing_zeros();

/// The segments an owner holds, and the instruction set its narrowing may use.
#[derive(Clone, Copy, Debug)]
pub(super) struct Owner {
    /// The first segment.
    pub(super) lo: usize,
    /// Whether the owner holds every segment (the one owner), so that no id needs narrowing.
    pub(super) whole: bool,
    /// The instruction set.
    pub(super) simd: Simd,
}

/// The segment of `id` counted from `lo`, an owner's first: past any owner's range (it wraps)
/// when `id < lo`, so that one comparison with the range's length tells whether it is owned.
#[inline(always)]
pub(super) fn local<I: IdElem>(id: I, lo: usize) -> usize {
    (id.to_i64() as usize).wrapping_sub(lo)
}

/// An owner's rows among `ids`, a block at a time ([`each_owned!`] loops over them).
pub(super) struct Owned<'a, I> {
    blocks: core::iter::Enumerate<core::slice::Chunks<'a, I>>,
    owner: Owner,
    per: usize,
    /// A kept row's segment (from `lo`) above [`BLOCK_BITS`] bits of its offset in the block
    /// (64 bits on every target, so that no segment index loses bits).
    kept: [u64; BLOCK],
}

impl<'a, I: IdElem> Owned<'a, I> {
    /// The rows among `ids` of the `per` segments from `owner.lo`.
    #[inline(always)]
    pub(super) fn new(ids: &'a [I], owner: Owner, per: usize) -> Self {
        let blocks = ids.chunks(BLOCK).enumerate();
        let kept = [0; BLOCK];
        Self {
            blocks,
            owner,
            per,
            kept,
        }
    }

    /// The next block's first row and its owned rows in row order, each packed as [`unpack`]
    /// unpacks it; `None` after the last block.
    #[inline(always)]
    pub(super) fn next(&mut self) -> Option<(usize, &[u64])> {
        let (b, block) = self.blocks.next()?;
        let (lo, per) = (self.owner.lo, self.per);
        let k = narrow(self.owner.simd, block, lo, per, &mut self.kept);
        Some((b * BLOCK, &self.kept[..k]))
    }
}

/// The segment (from `lo`) and the row of an entry kept from the block at row `start`.
#[inline(always)]
pub(super) fn unpack(start: usize, kept: u64) -> (usize, usize) {
    // The segment is below the owner's count of segments, a `usize`, and the offset below BLOCK.
    let (l, j) = (kept >> BLOCK_BITS, kept & (BLOCK as u64 - 1));
    (l as usize, start + j as usize)
}

/// Runs `$body` for each row `$r` of segment `$l` (counted from `$owner.lo`, below `$per`) among
/// `$ids`, in row order: over every id when the owner holds them all, else over each block
/// narrowed by [`Owned`]. A macro, not a function taking a closure: the closure's body would be
/// neither inlined nor compiled for the caller's instruction set.
macro_rules! each_owned {
    ($ids:expr, $owner:expr, $per:expr, |$l:ident, $r:ident| $body:expr) => {{
        let (ids, owner) = ($ids, $owner);
        if owner.whole {
            for ($r, &id) in ids.iter().enumerate() {
                let $l = id.at();
                $body;
            }
        } else {
            let mut owned = $crate::cpu::kernels::owned::Owned::new(ids, owner, $per);
            while let Some((start, kept)) = owned.next() {
                for &kept in kept {
                    let ($l, $r) = $crate::cpu::kernels::owned::unpack(start, kept);
                    $body;
                }
            }
        }
    }};
}
pub(super) use each_owned;

/// Writes the rows of `block` whose segment lies in `lo..lo + per` to the front of `kept`, in
/// order, each as its segment from `lo` above [`BLOCK_BITS`] bits of its offset, and returns how
/// many there are.
#[inline(always)]
fn narrow<I: IdElem>(
    simd: Simd,
    block: &[I],
    lo: usize,
    per: usize,
    kept: &mut [u64; BLOCK],
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if simd.level() == crate::host::simd::Level::Avx512 {
        // SAFETY: a `Simd` of this level exists only where the CPU supports AVX-512 F. A partial
        // block, or another id type, gets `None` and the scalar loop.
        if let Some(k) = unsafe { narrow_avx512(block, lo, per, kept) } {
            return k;
        }
    }
    let _ = simd;
    let mut k = 0;
    for (j, &id) in block.iter().enumerate() {
        // Written whether owned or not; only an owned one is kept (k moves on). A kept segment
        // fits above the offset: it indexes an allocation, of fewer than 2^54 bytes.
        let l = local(id, lo);
        kept[k] = (l as u64) << BLOCK_BITS | j as u64;
        k += usize::from(l < per);
    }
    k
}

/// [`narrow`] for a whole block of i32 or i64 ids (`None` for other id types), eight at a time:
/// the owned lanes are compressed to the front of a vector stored at `kept[k..]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn narrow_avx512<I: IdElem>(
    block: &[I],
    lo: usize,
    per: usize,
    kept: &mut [u64; BLOCK],
) -> Option<usize> {
    use core::any::TypeId;
    use core::arch::x86_64::*;
    let wide = TypeId::of::<I>() == TypeId::of::<i64>();
    if !wide && TypeId::of::<I>() != TypeId::of::<i32>() || block.len() != BLOCK {
        return None;
    }
    let (lo, per) = (_mm512_set1_epi64(lo as i64), _mm512_set1_epi64(per as i64));
    let (mut offsets, step) = (
        _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
        _mm512_set1_epi64(8),
    );
    let mut k = 0;
    for c in (0..BLOCK).step_by(8) {
        // SAFETY: `c + 8 <= BLOCK = block.len()` ids of `I`'s width (i64, else i32).
        let ids = unsafe {
            let at = block.as_ptr().add(c);
            if wide {
                _mm512_loadu_si512(at.cast())
            } else {
                _mm512_cvtepi32_epi64(_mm256_loadu_si256(at.cast()))
            }
        };
        let l = _mm512_sub_epi64(ids, lo);
        let owned = _mm512_cmplt_epu64_mask(l, per);
        let packed = _mm512_or_si512(_mm512_slli_epi64::<BLOCK_BITS>(l), offsets);
        // SAFETY: at most `c` rows were kept before this step, so the eight lanes stored at
        // `k <= c` end within `kept` (`c + 8 <= BLOCK`); lanes past the kept ones are garbage,
        // overwritten later or never read.
        unsafe {
            let at = kept.as_mut_ptr().add(k);
            _mm512_storeu_si512(at.cast(), _mm512_maskz_compress_epi64(owned, packed));
        }
        k += owned.count_ones() as usize;
        offsets = _mm512_add_epi64(offsets, step);
    }
    Some(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::simd::Level;
    use crate::host::testing::lcg;

    fn rows_of<I: IdElem>(simd: Simd, ids: &[I], lo: usize, per: usize) -> Vec<(usize, usize)> {
        let owner = Owner {
            lo,
            whole: false,
            simd,
        };
        let mut owned = Owned::new(ids, owner, per);
        let mut got = Vec::new();
        while let Some((start, kept)) = owned.next() {
            got.extend(kept.iter().map(|&k| unpack(start, k)));
        }
        got
    }

    #[test]
    fn narrowing_keeps_exactly_the_owners_rows_in_order_at_every_level() {
        let mut next = lcg(11);
        // Two whole blocks and a partial one; ids below, inside and above the owner's range,
        // negative ones, and one block with every row owned and one with none.
        let e = 2 * BLOCK + 77;
        let mut ids: Vec<i64> = (0..e).map(|_| next() as i64 % 300 - 20).collect();
        ids[..BLOCK].iter_mut().for_each(|id| *id = 120);
        ids[BLOCK..2 * BLOCK]
            .iter_mut()
            .step_by(3)
            .for_each(|id| *id = -1);
        ids[BLOCK + 1] = i64::MIN;
        ids[BLOCK + 2] = i64::MAX;
        for (lo, per) in [(100, 50), (0, 300), (120, 1), (0, 0), (150, 1 << 40)] {
            let want: Vec<(usize, usize)> = (0..e)
                .filter(|&r| (lo as i64..lo as i64 + per as i64).contains(&ids[r]))
                .map(|r| (ids[r] as usize - lo, r))
                .collect();
            let ids32: Vec<i32> = ids.iter().map(|&id| id as i32).collect();
            let want32: Vec<(usize, usize)> = (0..e)
                .filter(|&r| (lo as i64..lo as i64 + per as i64).contains(&(ids32[r] as i64)))
                .map(|r| (ids32[r] as usize - lo, r))
                .collect();
            for level in [Level::Base, Level::Avx2, Level::Avx512] {
                let simd = Simd::detect().at_most(level);
                assert_eq!(
                    rows_of(simd, &ids, lo, per),
                    want,
                    "i64 {lo} {per} {level:?}"
                );
                assert_eq!(
                    rows_of(simd, &ids32, lo, per),
                    want32,
                    "i32 {lo} {per} {level:?}"
                );
            }
        }
    }
}
