//! The element types the kernels reduce, and an `exp` for f32 that vectorises.

/// Element types the CPU kernels reduce.
pub trait Elem: Copy + Send + Sync + PartialOrd + core::fmt::Debug + 'static {
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Identity of `max`: `-inf` for floats, the type's minimum for integers.
    const LOWEST: Self;
    /// Identity of `min`: `+inf` for floats, the type's maximum for integers.
    const HIGHEST: Self;
    /// Addition (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// Multiplication (wrapping for integers).
    fn mul(self, other: Self) -> Self;
    /// `if take { a } else { b }` with bit masks: stays a vector blend after vectorisation,
    /// where a plain `if` on an in-place update becomes a slow masked store.
    fn pick(take: bool, a: Self, b: Self) -> Self;

    /// A partial product that cannot overflow or underflow (floats: a signed mantissa and an
    /// integer exponent; integers: the wrapping product itself).
    type Product: Copy + Send + Sync;
    /// The empty product.
    const PRODUCT_ONE: Self::Product;
    /// Multiplies `v` into `part`.
    fn product_push(part: &mut Self::Product, v: Self);
    /// The product of two partials.
    fn product_combine(a: Self::Product, b: Self::Product) -> Self::Product;
    /// The partial as a value, rounded once; `None` if a factor was zero, subnormal, infinite
    /// or NaN (the caller then multiplies in row order, so that IEEE rules decide).
    fn product_finish(part: Self::Product) -> Option<Self>;
}

/// A float partial product `m · 2^e`, `|m|` in `[0.5, 1]`; `special` once a factor was zero,
/// subnormal, infinite or NaN.
#[derive(Clone, Copy, Debug)]
pub struct FloatProduct<T> {
    m: T,
    e: i64,
    special: bool,
}

/// Float element types (softmax needs `exp`).
pub trait FloatElem: Elem {
    /// `e^self`.
    fn exp(self) -> Self;
    /// Division.
    fn div(self, other: Self) -> Self;
    /// Subtraction.
    fn sub(self, other: Self) -> Self;
    /// The larger of the two, ignoring a NaN (IEEE `maxNum`: NaN only if both are).
    fn max_num(self, other: Self) -> Self;
}

macro_rules! float_elem {
    ($t:ty, $bits:ty, $exp:path, $ldexp:path) => {
        impl Elem for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self * other
            }
            #[inline(always)]
            fn pick(take: bool, a: Self, b: Self) -> Self {
                let mask = (take as $bits).wrapping_neg();
                <$t>::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
            }

            type Product = FloatProduct<$t>;
            const PRODUCT_ONE: Self::Product = FloatProduct {
                m: 1.0,
                e: 0,
                special: false,
            };
            #[inline]
            fn product_push(part: &mut Self::Product, v: Self) {
                const MANT: u32 = <$t>::MANTISSA_DIGITS - 1;
                const EXP_MAX: $bits = (1 << (<$bits>::BITS - 1 - MANT)) - 1;
                const HALF_EXP: $bits = EXP_MAX / 2 - 1; // the exponent field of 0.5
                let bits = v.to_bits();
                let field = (bits >> MANT) & EXP_MAX;
                if field == 0 || field == EXP_MAX {
                    part.special = true;
                    return;
                }
                // v = m · 2^e with |m| in [0.5, 1): the same significand, exponent field of 0.5.
                let m = <$t>::from_bits((bits & !(EXP_MAX << MANT)) | (HALF_EXP << MANT));
                let e = field as i64 - HALF_EXP as i64;
                *part = Self::product_combine(
                    *part,
                    FloatProduct {
                        m,
                        e,
                        special: false,
                    },
                );
            }
            #[inline]
            fn product_combine(a: Self::Product, b: Self::Product) -> Self::Product {
                // Both in [0.5, 1]: the product is in [0.25, 1] and rounds as the unscaled
                // product would in the normal range; doubling it back is exact.
                let (mut m, mut e) = (a.m * b.m, a.e + b.e);
                if m.abs() < 0.5 {
                    m *= 2.0;
                    e -= 1;
                }
                FloatProduct {
                    m,
                    e,
                    special: a.special || b.special,
                }
            }
            #[inline]
            fn product_finish(part: Self::Product) -> Option<Self> {
                (!part.special).then(|| $ldexp(part.m, part.e))
            }
        }
        impl FloatElem for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn div(self, other: Self) -> Self {
                self / other
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self - other
            }
            #[inline(always)]
            fn max_num(self, other: Self) -> Self {
                self.max(other)
            }
        }
    };
}
float_elem!(f32, u32, exp_f32, ldexp_f32);
float_elem!(f64, u64, f64::exp, ldexp_f64);

/// `m · 2^e` rounded once, for `|m|` in `[0.5, 1]`: through f64, where it is exact.
fn ldexp_f32(m: f32, e: i64) -> f32 {
    ldexp_f64(m as f64, e.clamp(-400, 400)) as f32
}

/// `m · 2^e` rounded once, for `|m|` in `[0.5, 1]` (±inf beyond the largest finite value).
fn ldexp_f64(m: f64, e: i64) -> f64 {
    let pow2 = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    match e {
        1025.. => f64::INFINITY.copysign(m),
        1024 => m * pow2(1023) * 2.0,
        -1021..=1023 => m * pow2(e),
        // |m · 2^e| ≤ 2^-1075: rounds to zero.
        ..=-1075 => 0.0f64.copysign(m),
        // Scaled exactly into the normal range, then one rounding to the subnormal result.
        _ => m * pow2(e + 1074) * f64::from_bits(1),
    }
}

/// `log2(e)`.
pub(crate) const LOG2E: f32 = core::f32::consts::LOG2_E;
/// ln 2 split in two: the high part has 9 significant bits, so `n · LN2_HI` is exact.
pub(crate) const LN2_HI: f32 = 0.693_359_4;
/// The rest of ln 2.
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 · 2^23: adding and subtracting it rounds to the nearest integer.
pub(crate) const ROUND: f32 = 12_582_912.0;

/// Cephes' polynomial `p(r)` with `e^r ≈ 1 + r + r² · p(r)` for `|r| ≤ ln 2 / 2`.
#[inline(always)]
pub(crate) fn exp_poly(r: f32) -> f32 {
    ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5
}

/// `e^x` for f32 without a libm call, so loops over it vectorise (Cephes' `expf`: `x = n·ln 2 +
/// r` with `|r| ≤ ln 2 / 2`, a polynomial for `e^r`, `2^n` from exponent bits in two halves so
/// that subnormal and near-overflow results stay exact). Within 2 ulp of the correctly rounded
/// value (tested); `-inf` gives 0, `+inf` and overflow `+inf`, NaN NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // Comparisons rather than `max`/`min`, so NaN stays NaN. Below -104 the result rounds to 0,
    // above 88.8 it overflows to +inf.
    let lo = if x < -104.0 { -104.0 } else { x };
    let xc = if lo > 88.8 { 88.8 } else { lo };
    let t = xc * LOG2E + ROUND;
    let n = t - ROUND;
    let k = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let r = xc - n * LN2_HI - n * LN2_LO;
    let er = exp_poly(r) * (r * r) + r + 1.0;
    // 2^k = 2^(k - k/2) · 2^(k/2), each factor a normal f32 for k in [-150, 128].
    let half = k >> 1;
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let y = er * pow2(k - half) * pow2(half);
    if x < -104.0 { 0.0 } else { y }
}

/// `pick` for integer types: `if take { a } else { b }` with a bit mask.
macro_rules! pick_bits {
    ($t:ty) => {
        #[inline(always)]
        fn pick(take: bool, a: Self, b: Self) -> Self {
            let mask = (take as $t).wrapping_neg();
            (a & mask) | (b & !mask)
        }
    };
}

macro_rules! int_elem {
    ($t:ty) => {
        impl Elem for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
            pick_bits!($t);

            // Wrapping products are associative: the partial is the product itself.
            type Product = $t;
            const PRODUCT_ONE: Self::Product = 1;
            #[inline]
            fn product_push(part: &mut Self::Product, v: Self) {
                *part = part.wrapping_mul(v);
            }
            #[inline]
            fn product_combine(a: Self::Product, b: Self::Product) -> Self::Product {
                a.wrapping_mul(b)
            }
            #[inline]
            fn product_finish(part: Self::Product) -> Option<Self> {
                Some(part)
            }
        }
    };
}
int_elem!(i32);
int_elem!(i64);

/// Integer types accepted as segment ids.
pub trait IdElem: Copy + Send + Sync + 'static {
    /// The id as `i64`.
    fn to_i64(self) -> i64;
    /// An `i64` (an argmax row or a count) in this type.
    fn from_i64(v: i64) -> Self;
    /// The id as an index, for ids already checked to be in range (a negative one would become
    /// a huge index, caught by the slice's bounds check).
    #[inline(always)]
    fn at(self) -> usize {
        self.to_i64() as usize
    }
}
impl IdElem for i32 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as i32
    }
}
impl IdElem for i64 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v
    }
}
pub(crate) use pick_bits;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_f32_is_within_two_ulp_of_libm_and_keeps_the_special_values() {
        let ulps = |a: f32, b: f32| (a.to_bits() as i64 - b.to_bits() as i64).abs();
        let mut worst = 0;
        let mut x = -103.9f32;
        while x < 88.72 {
            let want = (x as f64).exp() as f32;
            worst = worst.max(ulps(exp_f32(x), want));
            x += 0.00173;
        }
        assert!(worst <= 2, "{worst} ulp");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(100.0), f32::INFINITY);
        assert!(exp_f32(f32::NAN).is_nan());
    }
}
