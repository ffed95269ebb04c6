//! The ranked slots shared by the top-k kernels (segments and pairs): `k` slots of keys and
//! rows, kept in rank order in global memory as rows arrive in increasing order.

use cubecl::prelude::*;

/// Whether key `a` ranks strictly before key `b` (largest: greater keys first).
#[cube]
pub fn beats(a: u32, b: u32, #[comptime] largest: bool) -> bool {
    if largest { a > b } else { a < b }
}

/// Offers `key` from `row` to the `held` filled slots of `k` at `base + j * stride`: it enters
/// when a slot is free or it strictly beats the last one (which then drops out), and the slots
/// it strictly beats move one down — so among equal keys the earlier row keeps its rank.
/// Returns how many slots are filled after.
#[cube]
#[allow(clippy::too_many_arguments)]
pub fn insert_ranked<I: Int>(
    keys: &mut Tensor<u32>,
    rows: &mut Tensor<I>,
    base: usize,
    stride: usize,
    held: usize,
    k: usize,
    key: u32,
    row: I,
    #[comptime] largest: bool,
) -> usize {
    let full = held == k;
    let mut now = held;
    let mut enters = true;
    if full {
        enters = beats(key, keys[base + (k - 1) * stride], largest);
    }
    if enters {
        let mut p = held;
        if full {
            p = k - 1;
        }
        let mut moving = true;
        while moving {
            if p == 0 {
                moving = false;
            } else {
                let above = base + (p - 1) * stride;
                if beats(key, keys[above], largest) {
                    keys[above + stride] = keys[above];
                    rows[above + stride] = rows[above];
                    p -= 1;
                } else {
                    moving = false;
                }
            }
        }
        keys[base + p * stride] = key;
        rows[base + p * stride] = row;
        if !full {
            now += 1;
        }
    }
    now
}
