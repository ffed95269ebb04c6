//! The rows a quantile of each segment's column reads: each column's values sorted with their
//! rows (stably, so equal values keep row order), then the ranks the interpolation asks for.

use rayon::prelude::*;

use super::csr::CsrPlan;
use super::topk::TopkKey;
use QuantileInterpolation as Interp;

/// How a quantile between two ranks is taken (numpy's `method`, PyG's `interpolation`), for the
/// position `h = q (m − 1)` in a segment's sorted values `v`, `i = ⌊h⌋`, `f = h − i`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Default,
    burn::serde::Serialize,
    burn::serde::Deserialize,
)]
#[serde(crate = "burn::serde")]
pub enum QuantileInterpolation {
    /// `v[i] + f (v[i + 1] − v[i])`.
    #[default]
    Linear,
    /// `v[i]`.
    Lower,
    /// `v[i + 1]` (`v[i]` when `f = 0`).
    Higher,
    /// The nearer of `v[i]` and `v[i + 1]`; half-way, the even rank (numpy's rounding).
    Nearest,
    /// `(v[i] + v[i + 1]) / 2` (`v[i]` when `f = 0`).
    Midpoint,
}

/// The two witness rows of each segment's quantile `q`, per column, and the weight `t` of the
/// second: the quantile is `lerp(x[lo], x[hi], t)` (`t = 0`: `x[lo]` alone). `[N, d]` each;
/// rows -1 for an empty segment; a column holding NaN gets its first NaN row, `t = 0`.
pub(crate) fn quantile_rows<T: TopkKey>(
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    q: f64,
    interp: Interp,
) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let n = plan.num_segments();
    let mut out: Vec<(i64, i64, f64)> = vec![(-1, -1, 0.0); n * d];
    if d == 0 {
        return (vec![], vec![], vec![]);
    }
    out.par_chunks_mut(d).enumerate().for_each_init(
        Vec::new,
        |column: &mut Vec<(T, usize)>, (s, witnesses)| {
            for (c, w) in witnesses.iter_mut().enumerate() {
                column.clear();
                plan.for_rows(s, |r| column.push((data[r * d + c], r)));
                if column.is_empty() {
                    continue;
                }
                if let Some(&(_, r)) = column.iter().find(|(v, _)| v.is_nan()) {
                    *w = (r as i64, r as i64, 0.0);
                    continue;
                }
                column.sort_by(|a, b| a.0.partial_cmp(&b.0).expect("no NaN left"));
                let (lo, hi, t) = ranks(column.len(), q, interp);
                *w = (column[lo].1 as i64, column[hi].1 as i64, t);
            }
        },
    );
    let lo = out.iter().map(|w| w.0).collect();
    let hi = out.iter().map(|w| w.1).collect();
    (lo, hi, out.into_iter().map(|w| w.2).collect())
}

/// The ranks (in ascending order) and the weight of the second for `m` values: the position
/// `h = q (m − 1)` split into `⌊h⌋` and the fraction, as numpy's `quantile` methods.
fn ranks(m: usize, q: f64, interp: Interp) -> (usize, usize, f64) {
    let h = q * (m - 1) as f64;
    let below = (h.floor() as usize).min(m - 1);
    let frac = h - below as f64;
    let above = (below + 1).min(m - 1);
    if frac == 0.0 {
        return (below, below, 0.0);
    }
    match interp {
        Interp::Linear => (below, above, frac),
        Interp::Lower => (below, below, 0.0),
        Interp::Higher => (above, above, 0.0),
        Interp::Midpoint => (below, above, 0.5),
        Interp::Nearest => {
            // Half-way: the even rank, as numpy's `around`.
            let up = frac > 0.5 || (frac == 0.5 && below % 2 == 1);
            let r = if up { above } else { below };
            (r, r, 0.0)
        }
    }
}
