//! Top-k over pairs, on the host: one task per query row streams the rows of `y` in order and
//! keeps a sorted buffer of `k` (ties stay with the earlier row), so any thread count gives the
//! same result. Scores are computed in f64 from the inputs (a sync on a GPU backend).

use burn::backend::{
    Backend, TensorMetadata,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::TensorData;
use rayon::prelude::*;

use super::{PairScore, PairSelection, PairSpec};
use crate::composite::read_host;
use crate::host::before;

/// The element types pairs are scored in: f64 on the host, f32 in the CPU kernels.
pub(crate) trait Real:
    Copy
    + Default
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::iter::Sum<Self>
{
    fn sqrt(self) -> Self;
}

impl Real for f32 {
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
}

impl Real for f64 {
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
}

/// The score of two rows.
#[inline]
pub(crate) fn score<T: Real>(a: &[T], b: &[T], score: PairScore) -> T {
    let sq = |p: T, q: T| (p - q) * (p - q);
    if let (PairScore::SqEuclidean | PairScore::Euclidean, [a0, a1, a2], [b0, b1, b2]) =
        (score, a, b)
    {
        // Points in 3-D, the common case: no loop.
        let d = sq(*a0, *b0) + sq(*a1, *b1) + sq(*a2, *b2);
        return if score == PairScore::Euclidean {
            d.sqrt()
        } else {
            d
        };
    }
    match score {
        PairScore::Dot => lanes(a, b, |p, q| p * q),
        PairScore::SqEuclidean => lanes(a, b, sq),
        PairScore::Euclidean => lanes(a, b, sq).sqrt(),
    }
}

/// The default of `PairwiseBackend::pairwise_select`: the inputs read to the host (a copy on
/// the CPU backends, a sync on a GPU), scored in f64 and selected by [`select`].
pub(crate) fn select_on_host<B: Backend>(
    [x, y]: [FloatTensor<B>; 2],
    [lx, ly]: [IntTensor<B>; 2],
    spec: &PairSpec,
    sel: PairSelection,
) -> IntTensor<B> {
    let (device, dtype, d) = (x.device(), lx.dtype(), x.shape()[1]);
    let what = "a pairwise selection";
    let floats = |t| -> Vec<f64> { read_host(B::float_into_data(t), what).iter().collect() };
    let ints = |t| -> Vec<i64> { read_host(B::int_into_data(t), what).iter().collect() };
    let (hx, hy, hlx, hly) = (floats(x), floats(y), ints(lx), ints(ly));
    let columns = select(&hx, &hy, d, (&hlx, &hly), spec, sel);
    let data = TensorData::new(columns, [hlx.len(), sel.k]).convert_dtype(dtype);
    B::int_from_data(data, &device)
}

/// The rows of `y` selected for each row of `x` (`[N, k]`, -1 past the eligible rows).
pub(crate) fn select(
    x: &[f64],
    y: &[f64],
    d: usize,
    labels: (&[i64], &[i64]),
    spec: &PairSpec,
    sel: PairSelection,
) -> Vec<i64> {
    let n = labels.0.len();
    let m = labels.1.len();
    let mut out = vec![-1i64; n * sel.k];
    if sel.k == 0 {
        return out;
    }
    out.par_chunks_mut(sel.k).enumerate().for_each_init(
        Vec::new,
        |best: &mut Vec<(f64, usize)>, (i, slots)| {
            best.clear();
            let xi = &x[i * d..(i + 1) * d];
            let eligible = |j: usize, s: f64| {
                spec.mask
                    .as_ref()
                    .is_none_or(|mask| mask.eligible(i, j, labels.0[i], labels.1[j], s))
            };
            // With sorted groups, each query scans its own group's rows only.
            for j in spec.columns(i, m) {
                let s = score(xi, &y[j * d..(j + 1) * d], spec.score);
                if sel.nan_wins && s.is_nan() && eligible(j, s) {
                    best.clear();
                    best.push((s, j));
                    break;
                }
                // The mask is evaluated only for a pair that would enter the buffer.
                let full = best.len() == sel.k;
                if (full && !before(s, best[sel.k - 1].0, sel.largest)) || !eligible(j, s) {
                    continue;
                }
                let at = best.partition_point(|&(b, _)| !before(s, b, sel.largest));
                best.insert(at, (s, j));
                best.truncate(sel.k);
            }
            for (slot, &(_, j)) in slots.iter_mut().zip(best.iter()) {
                *slot = j as i64;
            }
        },
    );
    out
}

/// `Σ f(a_d, b_d)` over eight independent partial sums (vectorised; a fixed order, so the same
/// bits on every call), for the host selection (f64) and the CPU kernels (f32).
#[inline(always)]
fn lanes<T: Real>(a: &[T], b: &[T], f: impl Fn(T, T) -> T) -> T {
    let mut acc = [T::default(); 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: T = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(p, q)| f(*p, *q))
        .sum();
    for (pa, pb) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] = acc[l] + f(pa[l], pb[l]);
        }
    }
    acc.into_iter().sum::<T>() + tail
}
