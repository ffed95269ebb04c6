//! Test data shared by the kernels' unit tests.

use super::{CsrPlan, Rows};

/// A pseudo-random sequence (64-bit LCG, high bits).
pub(crate) fn lcg(seed: u64) -> impl FnMut() -> usize {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    }
}

/// The bits of each value, every NaN alike.
pub(crate) fn bits(v: &[f32]) -> Vec<u32> {
    v.iter()
        .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
        .collect()
}

/// Runs `check(rows, plan, ids)` for row widths that exercise every column block (1, 3,
/// 16, 37, 64, 70 and 100), ids into 40 segments (the last three empty), shuffled and then
/// sorted, and a reference per segment and column: `fold` over the column's values in row
/// order (`None` for an empty segment).
pub(crate) fn for_each_width(
    seed: u64,
    value: impl Fn(usize) -> f32,
    mut check: impl FnMut(Rows<f32>, &CsrPlan, &dyn Fn(usize, usize) -> Vec<f32>),
) {
    let (n, rows) = (40usize, 500usize);
    let mut next = lcg(seed);
    for d in [1usize, 3, 16, 37, 64, 70, 100] {
        let data: Vec<f32> = (0..rows * d).map(|_| value(next())).collect();
        let mut ids: Vec<i64> = (0..rows).map(|_| (next() % (n - 3)) as i64).collect();
        for sorted in [false, true] {
            if sorted {
                ids.sort_unstable();
            }
            let column = |s: usize, c: usize| -> Vec<f32> {
                (0..rows)
                    .filter(|&r| ids[r] == s as i64)
                    .map(|r| data[r * d + c])
                    .collect()
            };
            check(Rows::new(&data, d), &CsrPlan::new(&ids, n), &column);
        }
    }
}

/// Runs `check(rows, plan, shuffled)` on `900 × 37` values drawn by `value` (37 columns:
/// two full blocks of 16, vector bodies, and a remainder) and ids into 60 segments, the last
/// five empty: first shuffled, then sorted.
pub(crate) fn for_each_isa_case(
    seed: u64,
    value: impl Fn(usize) -> f32,
    mut check: impl FnMut(Rows<f32>, &CsrPlan, bool),
) {
    let (d, n, rows) = (37usize, 60usize, 900usize);
    let mut next = lcg(seed);
    let data: Vec<f32> = (0..rows * d).map(|_| value(next())).collect();
    let mut ids: Vec<i64> = (0..rows).map(|_| (next() % (n - 5)) as i64).collect();
    for shuffled in [true, false] {
        if !shuffled {
            ids.sort_unstable();
        }
        check(Rows::new(&data, d), &CsrPlan::new(&ids, n), shuffled);
    }
}
