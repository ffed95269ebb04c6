//! Run-time choice of the instruction set a hot kernel body is compiled for.
//!
//! The crate is built for baseline x86-64 (SSE2, 4 f32 lanes). A kernel body that is
//! `#[inline(always)]` can be compiled again inside a `#[target_feature]` wrapper, where its
//! loops vectorise 8 (AVX2) or 16 (AVX-512) lanes wide; [`simd_dispatch!`] writes those
//! wrappers and the call that picks one. Every copy does the same arithmetic per element in the
//! same order (Rust never fuses a multiply and an add on its own), so the results are identical
//! whichever runs.

/// An instruction set the CPU is known to support: only [`Simd::detect`] makes one, and
/// [`Simd::at_most`] only lowers it, so a dispatch never enables a feature the CPU lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Simd(Level);

/// The instruction sets kernel bodies are compiled for, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // only x86-64 detects the wider ones
pub(crate) enum Level {
    /// The build's baseline (SSE2 on x86-64; whatever the target has elsewhere).
    Base,
    /// x86-64 with AVX2.
    Avx2,
    /// x86-64 with AVX-512 F.
    Avx512,
}

impl Simd {
    /// The widest level this CPU supports. Cheap (the standard library caches the answer), but
    /// kernels still ask once per call, not per segment.
    pub(crate) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Simd(Level::Avx512);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Simd(Level::Avx2);
            }
        }
        Simd(Level::Base)
    }

    /// This level, capped at `level`: for a kernel that measured no faster above it.
    pub(crate) fn at_most(self, level: Level) -> Self {
        Simd(self.0.min(level))
    }

    /// The level.
    pub(crate) fn level(self) -> Level {
        self.0
    }
}

/// Defines `$dispatch(simd, args…)`, which runs the `#[inline(always)]` function `$body(args…)`
/// compiled for `simd`'s level: copies of it with AVX2 and with AVX-512 enabled on x86-64, the
/// body itself elsewhere or at the baseline level. `[$decl]` are the generic parameters as
/// declared, `[$gen]` as passed. An `unsafe` body gets an `unsafe` dispatcher with its contract.
macro_rules! simd_dispatch {
    ($(#[$attr:meta])* unsafe fn $($rest:tt)*) => {
        $crate::host::simd::simd_dispatch!(@def [unsafe] $(#[$attr])* $($rest)*);
    };
    ($(#[$attr:meta])* fn $($rest:tt)*) => {
        $crate::host::simd::simd_dispatch!(@def [] $(#[$attr])* $($rest)*);
    };
    (@def [$($qual:tt)*] $(#[$attr:meta])* $dispatch:ident = $body:ident [$($decl:tt)*] [$($gen:tt)*]
        ($($arg:ident: $ty:ty),* $(,)?)) => {
        $(#[$attr])*
        #[allow(clippy::too_many_arguments)]
        #[inline(always)]
        $($qual)* fn $dispatch<$($decl)*>(simd: $crate::host::simd::Simd, $($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx512<$($decl)*>($($arg: $ty),*) {
                    // SAFETY: the body's contract is the dispatcher's, passed on.
                    #[allow(unused_unsafe)]
                    unsafe { $body::<$($gen)*>($($arg),*) }
                }
                #[target_feature(enable = "avx2")]
                #[allow(clippy::too_many_arguments)]
                unsafe fn avx2<$($decl)*>($($arg: $ty),*) {
                    // SAFETY: as above.
                    #[allow(unused_unsafe)]
                    unsafe { $body::<$($gen)*>($($arg),*) }
                }
                match simd.level() {
                    // SAFETY: a `Simd` of this level exists only where the CPU supports it;
                    // the rest of the contract is the dispatcher's.
                    $crate::host::simd::Level::Avx512 => return unsafe { avx512::<$($gen)*>($($arg),*) },
                    $crate::host::simd::Level::Avx2 => return unsafe { avx2::<$($gen)*>($($arg),*) },
                    $crate::host::simd::Level::Base => {}
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = simd;
            // SAFETY: the body's contract is the dispatcher's, passed on.
            #[allow(unused_unsafe)]
            unsafe { $body::<$($gen)*>($($arg),*) }
        }
    };
}
pub(crate) use simd_dispatch;
