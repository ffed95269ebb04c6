//! Sums, products and counts of each segment's rows.

use super::elem::{Elem, IdElem};
use super::output::{Alloc, Out};
use super::per_segment;
use super::plan::CsrPlan;
use crate::cpu::simd::{Simd, simd_dispatch};

/// Sum (`prod = false`) or product (`prod = true`) of each segment's rows, identity for empty
/// ones, with the per-segment body compiled for `simd` and the output from `alloc`.
pub fn reduce_add_mul<T: Elem>(
    simd: Simd,
    alloc: Alloc,
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    prod: bool,
) -> Out<T> {
    let init = if prod { T::ONE } else { T::ZERO };
    per_segment(alloc, plan, d, init, |s, acc| {
        add_mul_segment_simd(simd, data, d, plan, prod, s, acc)
    })
}

/// Folds segment `s`'s rows into `acc` by addition or multiplication, in row order.
#[inline(always)]
fn add_mul_segment<T: Elem>(
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    prod: bool,
    s: usize,
    acc: &mut [T],
) {
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

/// Number of rows in each segment.
pub fn count<I: IdElem>(plan: &CsrPlan) -> Vec<I> {
    plan.offsets
        .windows(2)
        .map(|w| I::from_i64((w[1] - w[0]) as i64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::kernels::testing::{bits, for_each_isa_case};
    use crate::cpu::simd::Level;

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
                let want = reduce_add_mul(
                    Simd::detect().at_most(Level::Base),
                    Alloc::Vec,
                    data,
                    d,
                    plan,
                    prod,
                );
                assert!(want.iter().any(|v| v.is_nan()) && want.iter().any(|v| v.fract() != 0.0));
                for level in [Level::Avx2, Level::Avx512] {
                    let got = reduce_add_mul(
                        Simd::detect().at_most(level),
                        Alloc::Vec,
                        data,
                        d,
                        plan,
                        prod,
                    );
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "{level:?} prod: {prod} shuffled: {shuffled}"
                    );
                }
            }
        });
    }
}
