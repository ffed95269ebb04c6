//! ELU and its gradient, element-wise, in one pass each.

use core::mem::MaybeUninit;

use super::{Alloc, Out, assume_written, for_each_chunk, output_unwritten};
use crate::host::elem::{FloatElem, LN2_HI, LN2_LO, LOG2E, ROUND, exp_poly};
use crate::host::simd::{Simd, simd_dispatch};

/// Below this many values the kernels run on the calling thread: waking rayon's second thread
/// costs more than the pass (a GAT layer's `[2708, 64]` on Cora is under it).
const ONE_THREAD_VALUES: usize = 1 << 18;

/// Values per parallel task.
const CHUNK: usize = 1 << 15;

/// Float types with an ELU: `x` for `x > 0`, `alpha · (e^x − 1)` otherwise. Only `e^x − 1`
/// differs by type; the ELU and its gradient are written once over [`FloatElem`].
pub(crate) trait EluElem: FloatElem {
    /// `alpha` in this type.
    fn from_f64(alpha: f64) -> Self;
    /// `e^self − 1` for `self ≤ 0` (above 0, a value the ELU does not use).
    fn expm1_nonpositive(self) -> Self;
    /// The ELU of `self`.
    #[inline(always)]
    fn elu(self, alpha: Self) -> Self {
        let neg = alpha.mul(self.expm1_nonpositive());
        if self > Self::ZERO { self } else { neg }
    }
    /// `grad · dELU/dx`: `grad` where `x > 0`, `grad · alpha · e^x` elsewhere (so `alpha` at 0,
    /// the `x ≤ 0` branch's).
    #[inline(always)]
    fn elu_grad(x: Self, grad: Self, alpha: Self) -> Self {
        let neg = alpha.mul(x.exp());
        grad.mul(if x > Self::ZERO { Self::ONE } else { neg })
    }
}

impl EluElem for f32 {
    fn from_f64(alpha: f64) -> Self {
        alpha as f32
    }
    #[inline(always)]
    fn expm1_nonpositive(self) -> f32 {
        expm1_nonpositive(self)
    }
}

impl EluElem for f64 {
    fn from_f64(alpha: f64) -> Self {
        alpha
    }
    #[inline(always)]
    fn expm1_nonpositive(self) -> f64 {
        self.exp_m1()
    }
}

/// `e^x − 1` for `x ≤ 0` (NaN stays NaN; positive `x` gives an unspecified finite value), without
/// a libm call so that loops over it vectorise. As [`exp_f32`](crate::host::elem::exp_f32),
/// `x = k · ln 2 + r` with `|r| ≤ ln 2 / 2`, but `e^r − 1 = r + r² · p(r)` is kept apart from the
/// 1, and the result is `2^k · (e^r − 1) + (2^k − 1)`: `e^x − 1` rounded from `e^x` loses all
/// relative accuracy as `x` nears 0, this keeps it. Within 1 ulp of the correctly rounded value
/// for every f32 in `[-30, 0]` (checked exhaustively; sampled in the tests).
#[inline(always)]
pub(crate) fn expm1_nonpositive(x: f32) -> f32 {
    // `clamp` keeps NaN. Below -17.5, `e^x < 2^-25` and the result rounds to -1; the clamp keeps
    // `k` in [-26, 0], so `2^k` is a normal f32.
    let xc = x.clamp(-17.5, 0.0);
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let k = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let r = xc - n * LN2_HI - n * LN2_LO;
    let q = exp_poly(r) * (r * r) + r;
    let s = f32::from_bits((k.wrapping_add(127) as u32) << 23);
    let y = s * q + (s - 1.0);
    if x < -17.5 { -1.0 } else { y }
}

/// `dst[i] = elu(src[i])`.
#[inline(always)]
fn elu_to<T: EluElem>(src: &[T], dst: &mut [MaybeUninit<T>], alpha: T) {
    for (d, &x) in dst.iter_mut().zip(src) {
        d.write(x.elu(alpha));
    }
}

/// `v[i] = elu(v[i])`.
#[inline(always)]
fn elu_at<T: EluElem>(v: &mut [T], alpha: T) {
    for x in v {
        *x = x.elu(alpha);
    }
}

/// `dst[i] = elu_grad(x[i], grad[i])`.
#[inline(always)]
fn grad_to<T: EluElem>(x: &[T], grad: &[T], dst: &mut [MaybeUninit<T>], alpha: T) {
    for ((d, &x), &g) in dst.iter_mut().zip(x).zip(grad) {
        d.write(T::elu_grad(x, g, alpha));
    }
}

/// `grad[i] = elu_grad(x[i], grad[i])`.
#[inline(always)]
fn grad_at<T: EluElem>(x: &[T], grad: &mut [T], alpha: T) {
    for (g, &x) in grad.iter_mut().zip(x) {
        *g = T::elu_grad(x, *g, alpha);
    }
}

simd_dispatch!(
    /// [`elu_to`] compiled for `simd`.
    fn elu_to_simd = elu_to [T: EluElem] [T] (src: &[T], dst: &mut [MaybeUninit<T>], alpha: T)
);
simd_dispatch!(
    /// [`elu_at`] compiled for `simd`.
    fn elu_at_simd = elu_at [T: EluElem] [T] (v: &mut [T], alpha: T)
);
simd_dispatch!(
    /// [`grad_to`] compiled for `simd`.
    fn grad_to_simd = grad_to [T: EluElem] [T] (
        x: &[T],
        grad: &[T],
        dst: &mut [MaybeUninit<T>],
        alpha: T,
    )
);
simd_dispatch!(
    /// [`grad_at`] compiled for `simd`.
    fn grad_at_simd = grad_at [T: EluElem] [T] (x: &[T], grad: &mut [T], alpha: T)
);

/// The ELU of every value of `src`, in a new output.
pub(crate) fn elu<T: EluElem>(alloc: Alloc, src: &[T], alpha: f64) -> Out<T> {
    let (simd, alpha) = (Simd::detect(), T::from_f64(alpha));
    let mut out = output_unwritten::<T>(alloc, src.len());
    for_each_chunk(&mut out, CHUNK, src.len() >= ONE_THREAD_VALUES, |k, dst| {
        let at = k * CHUNK;
        elu_to_simd(simd, &src[at..at + dst.len()], dst, alpha);
    });
    // SAFETY: every chunk of the output was written above.
    unsafe { assume_written(out) }
}

/// The ELU of every value of `v`, in place.
pub(crate) fn elu_in_place<T: EluElem>(v: &mut [T], alpha: f64) {
    let (simd, alpha) = (Simd::detect(), T::from_f64(alpha));
    let parallel = v.len() >= ONE_THREAD_VALUES;
    for_each_chunk(v, CHUNK, parallel, |_, v| elu_at_simd(simd, v, alpha));
}

/// The gradient of the ELU's input `x` from the output's gradient `grad`, in a new output.
pub(crate) fn elu_backward<T: EluElem>(alloc: Alloc, x: &[T], grad: &[T], alpha: f64) -> Out<T> {
    assert_eq!(
        x.len(),
        grad.len(),
        "burn-segment: ELU input and gradient sizes differ"
    );
    let (simd, alpha) = (Simd::detect(), T::from_f64(alpha));
    let mut out = output_unwritten::<T>(alloc, x.len());
    for_each_chunk(&mut out, CHUNK, x.len() >= ONE_THREAD_VALUES, |k, dst| {
        let at = k * CHUNK;
        let range = at..at + dst.len();
        grad_to_simd(simd, &x[range.clone()], &grad[range], dst, alpha);
    });
    // SAFETY: every chunk of the output was written above.
    unsafe { assume_written(out) }
}

/// [`elu_backward`] written over `grad`.
pub(crate) fn elu_backward_in_place<T: EluElem>(x: &[T], grad: &mut [T], alpha: f64) {
    assert_eq!(
        x.len(),
        grad.len(),
        "burn-segment: ELU input and gradient sizes differ"
    );
    let (simd, alpha) = (Simd::detect(), T::from_f64(alpha));
    let parallel = x.len() >= ONE_THREAD_VALUES;
    for_each_chunk(grad, CHUNK, parallel, |k, g| {
        let at = k * CHUNK;
        grad_at_simd(simd, &x[at..at + g.len()], g, alpha);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::simd::Level;

    /// The distance in ulps between two f32 of either sign (`-0.0` and `0.0` are 1 apart).
    fn ulps(a: f32, b: f32) -> i64 {
        let key = |v: f32| {
            let b = v.to_bits() as i32 as i64;
            if b < 0 { i32::MIN as i64 - b } else { b }
        };
        (key(a) - key(b)).abs()
    }

    #[test]
    fn expm1_is_within_one_ulp_of_the_f64_reference_down_to_minus_thirty() {
        // Every 97th f32 between -0.0 and -30 (11 million values): near 0 as densely as far.
        let (start, end) = ((-0.0f32).to_bits(), (-30.0f32).to_bits());
        let mut worst = (0, 0.0);
        for bits in (start..=end).step_by(97) {
            let x = f32::from_bits(bits);
            let want = (x as f64).exp_m1() as f32;
            let u = ulps(expm1_nonpositive(x), want);
            if u > worst.0 {
                worst = (u, x);
            }
        }
        assert!(worst.0 <= 1, "{} ulp at {}", worst.0, worst.1);
        assert_eq!(expm1_nonpositive(f32::NEG_INFINITY), -1.0);
        assert_eq!(expm1_nonpositive(-1e30), -1.0);
        assert!(expm1_nonpositive(f32::NAN).is_nan());
        assert_eq!(expm1_nonpositive(-1e-30), -1e-30);
    }

    #[test]
    fn every_instruction_set_and_both_forms_give_the_scalar_bits() {
        // Long enough for parallel chunks and a ragged tail; specials spread through it.
        let n = ONE_THREAD_VALUES + 3 * CHUNK + 7;
        let special = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-38,
            -1e-38,
        ];
        let src: Vec<f32> = (0..n)
            .map(|i| match i % 1000 {
                j @ 0..7 => special[j],
                _ => ((i as f32) * 0.618_034).sin() * 12.0,
            })
            .collect();
        let alpha = 1.5;
        let want: Vec<f32> = src.iter().map(|&x| x.elu(alpha as f32)).collect();
        let grad: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
        let want_grad: Vec<f32> = src
            .iter()
            .zip(&grad)
            .map(|(&x, &g)| f32::elu_grad(x, g, alpha as f32))
            .collect();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for level in [Level::Base, Level::Avx2, Level::Avx512] {
            let simd = Simd::detect().at_most(level);
            let mut a = output_unwritten::<f32>(Alloc::Vec, n);
            elu_to_simd(simd, &src, &mut a, alpha as f32);
            // SAFETY: elu_to writes every element.
            let a = unsafe { assume_written(a) };
            assert_eq!(bits(&a), bits(&want), "{simd:?}");
            let mut g = grad.clone();
            grad_at_simd(simd, &src, &mut g, alpha as f32);
            assert_eq!(bits(&g), bits(&want_grad), "{simd:?}");
        }
        assert_eq!(bits(&elu(Alloc::Vec, &src, alpha)), bits(&want));
        let mut inplace = src.clone();
        elu_in_place(&mut inplace, alpha);
        assert_eq!(bits(&inplace), bits(&want));
        assert_eq!(
            bits(&elu_backward(Alloc::Vec, &src, &grad, alpha)),
            bits(&want_grad)
        );
        let mut g = grad.clone();
        elu_backward_in_place(&src, &mut g, alpha);
        assert_eq!(bits(&g), bits(&want_grad));
    }
}
