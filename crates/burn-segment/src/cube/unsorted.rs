//! The CubeCL kernels of the unsorted path: atomics, and one unit per column where atomics do
//! not fit. Each returns at once when the `flag` says the ids are sorted.

use cubecl::prelude::*;

use super::csr::{NAN_MAX_KEY, NAN_MIN_KEY, in_range, keeps, kept, key_of, nonzero_bits, value_of};

/// Unsorted ids, integer data or no float atomics: one unit per column walks every row in order
/// (deterministic; `out` starts at the identity).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn column_sum_prod<T: Numeric, I: Int, M: Numeric>(
    data: &Tensor<T>,
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<T>,
    n: usize,
    d: usize,
    #[comptime] prod: bool,
    #[comptime] masked: u32,
    #[define(T, I, M)] _t: [ElemType; 3],
) {
    if ABSOLUTE_POS >= d || flag[0] == 0u32 {
        terminate!();
    }
    for e in 0..ids.shape(0) {
        let id = ids[e];
        if in_range::<I>(id, n) {
            let o = usize::cast_from(id) * d + ABSOLUTE_POS;
            let at = e * d + ABSOLUTE_POS;
            if prod {
                out[o] *= data[at];
            } else {
                out[o] += kept::<T, M>(data[at], mask, e, at, masked);
            }
        }
    }
}

/// Unsorted ids: one atomic add per element (`out` starts at 0); entries a mask leaves out
/// are not added.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn atomic_sum<T: Numeric, I: Int, M: Numeric>(
    data: &Tensor<T>,
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<Atomic<T>>,
    n: usize,
    d: usize,
    #[comptime] masked: u32,
    #[define(T, I, M)] _t: [ElemType; 3],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let e = ABSOLUTE_POS / d;
    let id = ids[e];
    let mut keep = in_range::<I>(id, n);
    if masked == 1 {
        keep = keep && mask[e] != M::from_int(0);
    }
    if masked == 2 {
        keep = keep && mask[ABSOLUTE_POS] != M::from_int(0);
    }
    if keep {
        out[usize::cast_from(id) * d + ABSOLUTE_POS % d].fetch_add(data[ABSOLUTE_POS]);
    }
}

// ANCHOR: atomic_key_extreme
/// Unsorted ids, f32 data: atomic max / min of the keys (`keys` starts at the identity key).
/// Entries a mask leaves out are skipped (see [`kept`]).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn atomic_key_extreme<I: Int, M: Numeric>(
    data: &Tensor<f32>,
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    keys: &mut Tensor<Atomic<u32>>,
    n: usize,
    d: usize,
    #[comptime] max: bool,
    #[comptime] masked: u32,
    #[define(I, M)] _i: [ElemType; 2],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    if in_range::<I>(id, n) && keeps::<M>(mask, ABSOLUTE_POS / d, ABSOLUTE_POS, masked) {
        let o = usize::cast_from(id) * d + ABSOLUTE_POS % d;
        if max {
            keys[o].fetch_max(key_of(data[ABSOLUTE_POS], NAN_MAX_KEY));
        } else {
            keys[o].fetch_min(key_of(data[ABSOLUTE_POS], NAN_MIN_KEY));
        }
    }
}
// ANCHOR_END: atomic_key_extreme

/// Unsorted ids, integer data: atomic max / min (`out` starts at the identity).
#[cube(launch)]
pub fn atomic_int_extreme<T: Int, I: Int>(
    data: &Tensor<T>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<Atomic<T>>,
    n: usize,
    d: usize,
    #[comptime] max: bool,
    #[define(T, I)] _t: [ElemType; 2],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    if in_range::<I>(id, n) {
        let o = usize::cast_from(id) * d + ABSOLUTE_POS % d;
        if max {
            out[o].fetch_max(data[ABSOLUTE_POS]);
        } else {
            out[o].fetch_min(data[ABSOLUTE_POS]);
        }
    }
}

/// Unsorted ids, f32 data: the smallest row whose key equals its segment's extreme key
/// (`rows` starts at `u32::MAX`).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn atomic_arg_f32<I: Int, M: Numeric>(
    data: &Tensor<f32>,
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    keys: &Tensor<u32>,
    rows: &mut Tensor<Atomic<u32>>,
    n: usize,
    d: usize,
    #[comptime] max: bool,
    #[comptime] masked: u32,
    #[define(I, M)] _i: [ElemType; 2],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let row = ABSOLUTE_POS / d;
    let id = ids[row];
    if in_range::<I>(id, n) && keeps::<M>(mask, row, ABSOLUTE_POS, masked) {
        let o = usize::cast_from(id) * d + ABSOLUTE_POS % d;
        let mut nan_key = 0u32;
        if max {
            nan_key = 0xffff_ffffu32;
        }
        if key_of(data[ABSOLUTE_POS], nan_key) == keys[o] {
            rows[o].fetch_min(u32::cast_from(row));
        }
    }
}

/// Unsorted ids, integer data: the smallest row whose value equals its segment's extreme.
#[cube(launch)]
pub fn atomic_arg_int<T: Int, I: Int>(
    data: &Tensor<T>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    best: &Tensor<T>,
    rows: &mut Tensor<Atomic<u32>>,
    n: usize,
    d: usize,
    #[define(T, I)] _t: [ElemType; 2],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let row = ABSOLUTE_POS / d;
    let id = ids[row];
    if in_range::<I>(id, n) {
        let o = usize::cast_from(id) * d + ABSOLUTE_POS % d;
        if data[ABSOLUTE_POS] == best[o] {
            rows[o].fetch_min(u32::cast_from(row));
        }
    }
}

/// Unsorted ids: decodes f32 keys into `out`.
#[cube(launch)]
pub fn finish_keys(keys: &Tensor<u32>, flag: &Tensor<u32>, out: &mut Tensor<f32>) {
    if ABSOLUTE_POS >= out.len() || flag[0] == 0u32 {
        terminate!();
    }
    out[ABSOLUTE_POS] = value_of(keys[ABSOLUTE_POS]);
}

/// Unsorted ids: rows in the ids' dtype, `u32::MAX` (no row) as -1.
#[cube(launch)]
pub fn finish_rows<A: Int>(
    rows: &Tensor<u32>,
    flag: &Tensor<u32>,
    arg: &mut Tensor<A>,
    #[define(A)] _a: ElemType,
) {
    if ABSOLUTE_POS >= arg.len() || flag[0] == 0u32 {
        terminate!();
    }
    let r = rows[ABSOLUTE_POS];
    let mut a = A::new(-1);
    if r != 0xffff_ffffu32 {
        a = A::cast_from(r);
    }
    arg[ABSOLUTE_POS] = a;
}

/// Unsorted ids, softmax step 2: `out = exp(x - max)` (0 for dropped rows).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn softmax_exp<I: Int, M: Numeric>(
    data: &Tensor<f32>,
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    keys: &Tensor<u32>,
    out: &mut Tensor<f32>,
    n: usize,
    d: usize,
    #[comptime] masked: u32,
    #[define(I, M)] _i: [ElemType; 2],
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    // A left-out entry keeps the 0 `out` starts with.
    if in_range::<I>(id, n) && keeps::<M>(mask, ABSOLUTE_POS / d, ABSOLUTE_POS, masked) {
        let m = value_of(keys[usize::cast_from(id) * d + ABSOLUTE_POS % d]);
        out[ABSOLUTE_POS] = (data[ABSOLUTE_POS] - m).exp();
    }
}

/// Unsorted ids, softmax step 4: `out /= sum` of the row's segment.
#[cube(launch)]
pub fn softmax_div<I: Int, M: Numeric>(
    mask: &Tensor<M>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    sums: &Tensor<f32>,
    out: &mut Tensor<f32>,
    n: usize,
    d: usize,
    #[comptime] masked: u32,
    #[define(I, M)] _i: [ElemType; 2],
) {
    if ABSOLUTE_POS >= out.len() || flag[0] == 0u32 {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    // A left-out entry keeps its 0 (even where the kept ones total NaN).
    if in_range::<I>(id, n) && keeps::<M>(mask, ABSOLUTE_POS / d, ABSOLUTE_POS, masked) {
        out[ABSOLUTE_POS] /= sums[usize::cast_from(id) * d + ABSOLUTE_POS % d];
    }
}

/// Number of rows per segment (integer atomics: exact and order-independent).
#[cube(launch)]
pub fn count<I: Int>(
    ids: &Tensor<I>,
    counts: &mut Tensor<Atomic<i32>>,
    n: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= ids.shape(0) {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS];
    if in_range::<I>(id, n) {
        counts[usize::cast_from(id)].fetch_add(1i32);
    }
}

/// Unsorted ids: one integer atomic add per nonzero entry (exact, order-independent).
#[cube(launch)]
pub fn atomic_count_nonzero<I: Int>(
    data: &Tensor<f32>,
    ids: &Tensor<I>,
    flag: &Tensor<u32>,
    out: &mut Tensor<Atomic<i32>>,
    n: usize,
    d: usize,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= data.len() || flag[0] == 0u32 {
        terminate!();
    }
    let id = ids[ABSOLUTE_POS / d];
    if in_range::<I>(id, n) && nonzero_bits(data[ABSOLUTE_POS]) {
        out[usize::cast_from(id) * d + ABSOLUTE_POS % d].fetch_add(1i32);
    }
}
