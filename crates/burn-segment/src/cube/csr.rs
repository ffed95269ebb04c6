//! The CubeCL kernels shared by both strategies and those of the sorted (CSR) path, all over flat row-major buffers: `data` is `[E, D]`,
//! `ids` `[E]`, outputs `[N, D]` (softmax `[E, D]`).
//!
//! Every launch gets the one-element `flag` written by [`unsorted_flag`]: the CSR kernels run
//! when it is 0 (sorted ids) and return at once otherwise, the atomic / column kernels the other
//! way round. Both are launched, and the device picks; the host never reads the flag.
//!
//! Float max / min compare order-preserving `u32` keys of the f32 bits ([`key_of`]) rather than
//! floats: WGSL has no float atomic max, and it lets implementations assume there are no NaNs
//! and infinities in float comparisons, while integer comparisons of the bits are exact.

use cubecl::prelude::*;

/// Key of NaN when looking for a maximum: above every other key.
pub const NAN_MAX_KEY: u32 = 0xffff_ffff;
/// Key of NaN when looking for a minimum: below every other key.
pub const NAN_MIN_KEY: u32 = 0;
/// `key_of(-inf)`: the identity of max.
pub const NEG_INF_KEY: u32 = 0x007f_ffff;
/// `key_of(+inf)`: the identity of min.
pub const POS_INF_KEY: u32 = 0xff80_0000;

// ANCHOR: key_of
/// The order-preserving key of an f32: `a < b` ⇔ `key_of(a) < key_of(b)`; `-0.0` and `0.0`
/// share a key; every NaN gets `nan_key`.
#[cube]
pub fn key_of(x: f32, nan_key: u32) -> u32 {
    let mut bits = u32::reinterpret(x);
    if bits == 0x8000_0000u32 {
        bits = 0u32;
    }
    let mut key = bits | 0x8000_0000u32;
    if bits >= 0x8000_0000u32 {
        key = bits ^ 0xffff_ffffu32;
    }
    if (bits & 0x7fff_ffffu32) > 0x7f80_0000u32 {
        key = nan_key;
    }
    key
}
// ANCHOR_END: key_of

/// The f32 of a key (inverse of [`key_of`]; NaN keys decode to a NaN).
#[cube]
pub fn value_of(key: u32) -> f32 {
    let mut bits = key ^ 0xffff_ffffu32;
    if key >= 0x8000_0000u32 {
        bits = key & 0x7fff_ffffu32;
    }
    f32::reinterpret(bits)
}

/// The rows `[start, end)` of segment `s` from the CSR offsets.
#[cube]
pub fn span(offsets: &Tensor<u32>, s: usize) -> (usize, usize) {
    (
        usize::cast_from(offsets[s]),
        usize::cast_from(offsets[s + 1]),
    )
}

/// Whether `id` names one of the `n` segments (other rows are dropped).
#[cube]
pub fn in_range<I: Int>(id: I, n: usize) -> bool {
    let lo = id >= I::new(0);
    let hi = id < I::cast_from(n);
    lo && hi
}

/// `flag[0] = 1` when some `ids[i] > ids[i + 1]`.
#[cube(launch)]
pub fn unsorted_flag<I: Int>(
    ids: &Tensor<I>,
    flag: &mut Tensor<Atomic<u32>>,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS + 1 >= ids.shape(0) {
        terminate!();
    }
    if ids[ABSOLUTE_POS] > ids[ABSOLUTE_POS + 1] {
        flag[0].store(1u32);
    }
}

/// `offsets[s]` = first row whose id is ≥ `s`, for `s` in `0..=n` (sorted ids only).
#[cube(launch)]
pub fn csr_offsets<I: Int>(
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    offsets: &mut Tensor<u32>,
    n: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS > n {
        terminate!();
    }
    if flag[0] != 0u32 {
        terminate!();
    }
    let target = I::cast_from(ABSOLUTE_POS);
    let mut lo = 0usize;
    let mut hi = ids.shape(0);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if ids[mid] < target {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    offsets[ABSOLUTE_POS] = u32::cast_from(lo);
}

/// `x` (entry `at` of row `e`), or 0 where a sum's mask leaves it out: `masked` is 0 (no
/// mask), 1 (one flag per row) or 2 (a flag per entry). Adding the 0 rather than skipping the
/// entry gives the bits of the sum of the filled data.
#[cube]
pub fn kept<T: Numeric, M: Numeric>(
    x: T,
    mask: &Tensor<M>,
    e: usize,
    at: usize,
    #[comptime] masked: u32,
) -> T {
    let mut v = x;
    if !keeps::<M>(mask, e, at, masked) {
        v = T::from_int(0);
    }
    v
}

/// Whether a mask keeps entry `at` of row `e` (`masked` as in [`kept`]).
#[cube]
pub fn keeps<M: Numeric>(mask: &Tensor<M>, e: usize, at: usize, #[comptime] masked: u32) -> bool {
    let mut keep = true;
    if masked == 1 {
        keep = mask[e] != M::from_int(0);
    }
    if masked == 2 {
        keep = mask[at] != M::from_int(0);
    }
    keep
}

/// Sorted ids: one unit per output element folds its segment's rows in row order (a sum over
/// the entries `mask` keeps, see [`kept`]).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn csr_sum_prod<T: Numeric, M: Numeric>(
    data: &Tensor<T>,
    mask: &Tensor<M>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<T>,
    d: usize,
    #[comptime] prod: bool,
    #[comptime] masked: u32,
    #[define(T, M)] _t: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.len() || flag[0] != 0u32 {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (start, end) = span(offsets, s);
    let mut acc = T::from_int(0);
    if prod {
        acc = T::from_int(1);
    }
    for e in start..end {
        if prod {
            acc *= data[e * d + c];
        } else {
            acc += kept::<T, M>(data[e * d + c], mask, e, e * d + c, masked);
        }
    }
    out[ABSOLUTE_POS] = acc;
}

/// Sorted ids, f32 data: max / min by key, with the first row attaining it (-1 when empty),
/// over the rows a mask keeps (see [`kept`]).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn csr_extreme_f32<A: Int, M: Numeric>(
    data: &Tensor<f32>,
    mask: &Tensor<M>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<f32>,
    arg: &mut Tensor<A>,
    d: usize,
    #[comptime] max: bool,
    #[comptime] masked: u32,
    #[define(A, M)] _a: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.len() || flag[0] != 0u32 {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (start, end) = span(offsets, s);
    // Literals, not the consts: the cube macro needs them to initialise mutable variables.
    let mut best = 0xff80_0000u32;
    let mut nan_key = 0u32;
    if max {
        best = 0x007f_ffffu32;
        nan_key = 0xffff_ffffu32;
    }
    let mut best_row = A::new(-1);
    let mut found = false;
    for e in start..end {
        if keeps::<M>(mask, e, e * d + c, masked) {
            let k = key_of(data[e * d + c], nan_key);
            let mut better = k < best;
            if max {
                better = k > best;
            }
            if better || !found {
                best = k;
                best_row = A::cast_from(e);
                found = true;
            }
        }
    }
    out[ABSOLUTE_POS] = value_of(best);
    arg[ABSOLUTE_POS] = best_row;
}

/// Sorted ids, integer data: max / min with the first row attaining it.
#[cube(launch)]
pub fn csr_extreme_int<T: Int, A: Int>(
    data: &Tensor<T>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<T>,
    arg: &mut Tensor<A>,
    d: usize,
    #[comptime] max: bool,
    #[define(T, A)] _t: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.len() || flag[0] != 0u32 {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (start, end) = span(offsets, s);
    let mut best = T::max_value();
    if max {
        best = T::min_value();
    }
    let mut best_row = A::new(-1);
    for e in start..end {
        let x = data[e * d + c];
        let mut better = x < best;
        if max {
            better = x > best;
        }
        if better || e == start {
            best = x;
            best_row = A::cast_from(e);
        }
    }
    out[ABSOLUTE_POS] = best;
    arg[ABSOLUTE_POS] = best_row;
}

// ANCHOR: csr_softmax
/// Sorted ids: softmax of one (segment, column), three passes over its rows (those a mask
/// keeps: the others, and every row of a segment with none kept, get 0).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn csr_softmax<M: Numeric>(
    data: &Tensor<f32>,
    mask: &Tensor<M>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<f32>,
    n: usize,
    d: usize,
    #[comptime] masked: u32,
    #[define(M)] _m: ElemType,
) {
    if ABSOLUTE_POS >= n * d || flag[0] != 0u32 {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (start, end) = span(offsets, s);
    let mut best = 0x007f_ffffu32;
    for e in start..end {
        let k = key_of(data[e * d + c], NAN_MAX_KEY);
        if k > best && keeps::<M>(mask, e, e * d + c, masked) {
            best = k;
        }
    }
    let m = value_of(best);
    let mut total = 0.0f32;
    for e in start..end {
        if keeps::<M>(mask, e, e * d + c, masked) {
            total += (data[e * d + c] - m).exp();
        }
    }
    for e in start..end {
        let mut y = 0.0f32;
        if keeps::<M>(mask, e, e * d + c, masked) {
            y = (data[e * d + c] - m).exp() / total;
        }
        out[e * d + c] = y;
    }
}
// ANCHOR_END: csr_softmax

/// `out[e] = data[ids[e]]` row-wise, zero for rows whose id is out of range.
#[cube(launch)]
pub fn gather_rows<T: Numeric, I: Int>(
    data: &Tensor<T>,
    ids: &Tensor<I>,
    out: &mut Tensor<T>,
    n: usize,
    d: usize,
    #[define(T, I)] _t: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.len() {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    let mut v = T::from_int(0);
    if in_range::<I>(id, n) {
        v = data[usize::cast_from(id) * d + ABSOLUTE_POS % d];
    }
    out[ABSOLUTE_POS] = v;
}

/// Whether an f32 is nonzero, by its bits: NaN counts, `±0` does not (WGSL may assume no NaN
/// in float comparisons).
#[cube]
pub fn nonzero_bits(x: f32) -> bool {
    (u32::reinterpret(x) & 0x7fff_ffffu32) != 0u32
}

/// Sorted ids: the nonzero entries of one (segment, column).
#[cube(launch)]
pub fn csr_count_nonzero(
    data: &Tensor<f32>,
    offsets: &Tensor<u32>,
    flag: &Tensor<u32>,
    out: &mut Tensor<i32>,
    d: usize,
) {
    if ABSOLUTE_POS >= out.len() || flag[0] != 0u32 {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let (start, end) = span(offsets, s);
    let mut count = 0i32;
    for e in start..end {
        if nonzero_bits(data[e * d + c]) {
            count += 1i32;
        }
    }
    out[ABSOLUTE_POS] = count;
}
