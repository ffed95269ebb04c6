//! Plain-Rust `f64` references for every op: the contract written as the simplest loops, used
//! by the tests of every backend. Data is a row-major `[E, d]` slice; ids are `i64`.
//!
//! These are deliberately naive (each segment gathers its column into a `Vec` and reduces it),
//! sharing no code with the kernels they check. The rows are grouped by segment once per call,
//! so a reference costs O(E · d + n · d) and also checks outputs of millions of rows.

use crate::{SegmentExtreme, SegmentReduction};

/// The rows of each segment `0..n`, in row order (rows with ids outside `0..n` belong to none).
fn rows_of(ids: &[i64], n: usize) -> Vec<Vec<usize>> {
    let mut rows = vec![Vec::new(); n];
    for (e, &id) in ids.iter().enumerate() {
        if let Some(segment) = usize::try_from(id).ok().and_then(|id| rows.get_mut(id)) {
            segment.push(e);
        }
    }
    rows
}

/// The column `j` values of the given rows (one segment's), with their row indices.
fn column(data: &[f64], d: usize, rows: &[usize], j: usize) -> Vec<(usize, f64)> {
    rows.iter().map(|&e| (e, data[e * d + j])).collect()
}

/// Column `j` of `rows`, the values alone.
fn values(data: &[f64], d: usize, rows: &[usize], j: usize) -> Vec<f64> {
    rows.iter().map(|&e| data[e * d + j]).collect()
}

/// Applies `f` to every (segment, column) and lays the results out as `[n, d]`.
fn per_column<T>(n: usize, d: usize, mut f: impl FnMut(usize, usize) -> T) -> Vec<T> {
    (0..n)
        .flat_map(|s| (0..d).map(move |j| (s, j)))
        .map(|(s, j)| f(s, j))
        .collect()
}

/// Reference of `segment_sum/prod/max/min`.
pub fn segment_reduce_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    reduction: SegmentReduction,
) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let col = column(data, d, &rows[s], j);
        match reduction {
            SegmentReduction::Sum => col.iter().map(|c| c.1).sum(),
            SegmentReduction::Prod => col.iter().map(|c| c.1).product(),
            SegmentReduction::Max => segment_extreme_one(&col, SegmentExtreme::Max).0,
            SegmentReduction::Min => segment_extreme_one(&col, SegmentExtreme::Min).0,
        }
    })
}

fn segment_extreme_one(col: &[(usize, f64)], extreme: SegmentExtreme) -> (f64, i64) {
    if let Some(&(e, v)) = col.iter().find(|c| c.1.is_nan()) {
        return (v, e as i64);
    }
    let mut best: Option<(usize, f64)> = None;
    for &(e, v) in col {
        let better = match (best, extreme) {
            (None, _) => true,
            (Some((_, b)), SegmentExtreme::Max) => v > b,
            (Some((_, b)), SegmentExtreme::Min) => v < b,
        };
        if better {
            best = Some((e, v));
        }
    }
    match (best, extreme) {
        (Some((e, v)), _) => (v, e as i64),
        (None, SegmentExtreme::Max) => (f64::NEG_INFINITY, -1),
        (None, SegmentExtreme::Min) => (f64::INFINITY, -1),
    }
}

/// Reference of `segment_max/min_with_indices`: values and argument rows (-1 when empty).
pub fn segment_extreme_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    extreme: SegmentExtreme,
) -> (Vec<f64>, Vec<i64>) {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        segment_extreme_one(&column(data, d, &rows[s], j), extreme)
    })
    .into_iter()
    .unzip()
}

/// Reference of `segment_count`.
pub fn segment_count_reference(ids: &[i64], n: usize) -> Vec<i64> {
    rows_of(ids, n)
        .iter()
        .map(|rows| rows.len() as i64)
        .collect()
}

/// Reference of `segment_mean` (0 for empty segments).
pub fn segment_mean_reference(data: &[f64], d: usize, ids: &[i64], n: usize) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let col = column(data, d, &rows[s], j);
        if col.is_empty() {
            0.0
        } else {
            col.iter().map(|c| c.1).sum::<f64>() / col.len() as f64
        }
    })
}

/// Reference of `segment_variance` (population variance, 0 for empty segments).
pub fn segment_variance_reference(data: &[f64], d: usize, ids: &[i64], n: usize) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let col = values(data, d, &rows[s], j);
        if col.is_empty() {
            return 0.0;
        }
        let mean = col.iter().sum::<f64>() / col.len() as f64;
        col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / col.len() as f64
    })
}

/// Reference of `segment_variance_corrected`: the squared deviations over `count − correction`,
/// NaN for a segment of fewer than `correction + 1` rows.
pub fn segment_variance_corrected_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    correction: usize,
) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let col = values(data, d, &rows[s], j);
        if col.len() <= correction {
            return f64::NAN;
        }
        let mean = col.iter().sum::<f64>() / col.len() as f64;
        let squares: f64 = col.iter().map(|v| (v - mean).powi(2)).sum();
        squares / (col.len() - correction) as f64
    })
}

/// Reference of `weighted_mean`: `Σ w x / Σ w`, NaN where the weights total 0.
pub fn weighted_mean_reference(
    data: &[f64],
    d: usize,
    weights: &[f64],
    ids: &[i64],
    n: usize,
) -> Vec<f64> {
    weighted_variance_reference(data, d, weights, ids, n, None)
}

/// Reference of `weighted_variance` with `correction` (or, with `None`, of `weighted_mean`):
/// `Σ w (x − μ_w)² / (Σ w − correction)`, NaN where the weights total at most `correction`.
pub fn weighted_variance_reference(
    data: &[f64],
    d: usize,
    weights: &[f64],
    ids: &[i64],
    n: usize,
    correction: Option<usize>,
) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let pairs: Vec<(f64, f64)> = rows[s]
            .iter()
            .map(|&e| (weights[e], data[e * d + j]))
            .collect();
        let total: f64 = pairs.iter().map(|p| p.0).sum();
        if total == 0.0 {
            return f64::NAN;
        }
        let mean = pairs.iter().map(|(w, x)| w * x).sum::<f64>() / total;
        let Some(c) = correction else {
            return mean;
        };
        if total <= c as f64 {
            return f64::NAN;
        }
        pairs
            .iter()
            .map(|(w, x)| w * (x - mean).powi(2))
            .sum::<f64>()
            / (total - c as f64)
    })
}

/// Reference of `segment_topk`: values and rows `[n, k, d]`, by a full sort of each segment's
/// column (NaN above every number, ties to the smaller row), `∓inf` and -1 past its rows.
pub fn segment_topk_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    k: usize,
    largest: bool,
) -> (Vec<f64>, Vec<i64>) {
    use std::cmp::Ordering;
    let rows = rows_of(ids, n);
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let (mut values, mut args) = (vec![fill; n * k * d], vec![-1i64; n * k * d]);
    for (s, segment) in rows.iter().enumerate() {
        for j in 0..d {
            let mut col = column(data, d, segment, j);
            // NaN compares as the largest value; equal values keep row order (stable sort).
            let key = |v: f64| if v.is_nan() { (1, 0.0) } else { (0, v) };
            col.sort_by(|a, b| {
                let order = key(a.1).partial_cmp(&key(b.1)).unwrap_or(Ordering::Equal);
                if largest { order.reverse() } else { order }
            });
            for (rank, &(e, v)) in col.iter().take(k).enumerate() {
                values[(s * k + rank) * d + j] = v;
                args[(s * k + rank) * d + j] = e as i64;
            }
        }
    }
    (values, args)
}

/// Reference of `segment_quantile` (`interpolation` by name: `linear`, `lower`, `higher`,
/// `nearest`, `midpoint`), numpy's definitions: NaN for an empty segment or a column holding
/// NaN.
pub fn segment_quantile_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    q: f64,
    interpolation: &str,
) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let mut col = values(data, d, &rows[s], j);
        if col.is_empty() || col.iter().any(|v| v.is_nan()) {
            return f64::NAN;
        }
        col.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let h = q * (col.len() - 1) as f64;
        let (i, f) = (h.floor() as usize, h - h.floor());
        let (a, b) = (col[i], col[(i + 1).min(col.len() - 1)]);
        if f == 0.0 {
            return a;
        }
        // numpy's lerp, from the nearer end.
        let lerp = |t: f64| {
            if t >= 0.5 {
                b - (b - a) * (1.0 - t)
            } else {
                a + (b - a) * t
            }
        };
        match interpolation {
            "linear" => lerp(f),
            "lower" => a,
            "higher" => b,
            "midpoint" => lerp(0.5),
            "nearest" => match f.partial_cmp(&0.5).unwrap() {
                std::cmp::Ordering::Less => a,
                std::cmp::Ordering::Greater => b,
                std::cmp::Ordering::Equal => {
                    if i % 2 == 0 {
                        a
                    } else {
                        b
                    }
                }
            },
            other => panic!("unknown interpolation {other}"),
        }
    })
}

/// Reference of `segment_count_nonzero` (NaN counts, `±0` does not).
pub fn segment_count_nonzero_reference(data: &[f64], d: usize, ids: &[i64], n: usize) -> Vec<i64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        values(data, d, &rows[s], j)
            .iter()
            .filter(|&&v| v != 0.0)
            .count() as i64
    })
}

/// Reference of `segment_any` (`all = false`) and `segment_all` (`all = true`).
pub fn segment_any_all_reference(
    data: &[bool],
    d: usize,
    ids: &[i64],
    n: usize,
    all: bool,
) -> Vec<bool> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let mut col = rows[s].iter().map(|&e| data[e * d + j]);
        if all { col.all(|v| v) } else { col.any(|v| v) }
    })
}

/// Reference of `segment_logsumexp` (`-inf` for empty segments).
pub fn segment_logsumexp_reference(data: &[f64], d: usize, ids: &[i64], n: usize) -> Vec<f64> {
    let rows = rows_of(ids, n);
    per_column(n, d, |s, j| {
        let col = values(data, d, &rows[s], j);
        if col.iter().any(|v| v.is_nan()) {
            return f64::NAN;
        }
        let m = col.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if m.is_infinite() {
            return m; // +inf, or -inf when empty / all -inf
        }
        m + col.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    })
}

// ANCHOR: reference_softmax
/// Reference of `segment_softmax`: `[E, d]`; NaN for a column holding NaN or `+inf`, or only
/// `-inf`.
pub fn segment_softmax_reference(data: &[f64], d: usize, ids: &[i64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; data.len()];
    for rows in &rows_of(ids, n) {
        for j in 0..d {
            let col = column(data, d, rows, j);
            let m = col.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
            let undefined = col.iter().any(|c| c.1.is_nan()) || m.is_infinite();
            let z: f64 = col.iter().map(|c| (c.1 - m).exp()).sum();
            for &(e, v) in &col {
                out[e * d + j] = if undefined {
                    f64::NAN
                } else {
                    (v - m).exp() / z
                };
            }
        }
    }
    out
}
// ANCHOR_END: reference_softmax

/// Reference of `segment_normalize`: `(x - mean) / sqrt(var + eps)`, `[E, d]`.
pub fn segment_normalize_reference(
    data: &[f64],
    d: usize,
    ids: &[i64],
    n: usize,
    eps: f64,
) -> Vec<f64> {
    let mean = segment_mean_reference(data, d, ids, n);
    let var = segment_variance_reference(data, d, ids, n);
    (0..data.len())
        .map(|i| {
            let (e, j) = (i / d, i % d);
            let k = ids[e] as usize * d + j;
            (data[i] - mean[k]) / (var[k] + eps).sqrt()
        })
        .collect()
}

/// Reference of `partition_ids`.
pub fn partition_ids_reference(partitions: &[i64]) -> Vec<i64> {
    partitions
        .iter()
        .enumerate()
        .flat_map(|(p, &len)| std::iter::repeat_n(p as i64, len.max(0) as usize))
        .collect()
}

/// [`spmm`](crate::spmm) in f64: `x` is `[rows, d]` row-major, `weights` `[E, heads]`.
pub fn spmm_reference(
    x: &[f64],
    d: usize,
    weights: &[f64],
    heads: usize,
    senders: &[i64],
    receivers: &[i64],
    n: usize,
) -> Vec<f64> {
    let c = d / heads;
    let mut out = vec![0.0; n * d];
    for (e, (&s, &r)) in senders.iter().zip(receivers).enumerate() {
        for k in 0..d {
            out[r as usize * d + k] += weights[e * heads + k / c] * x[s as usize * d + k];
        }
    }
    out
}

/// [`sddmm`](crate::sddmm) in f64: `a` and `b` are row-major with `d` columns.
pub fn sddmm_reference(
    a: &[f64],
    b: &[f64],
    d: usize,
    heads: usize,
    a_index: &[i64],
    b_index: &[i64],
) -> Vec<f64> {
    let c = d / heads;
    let mut out = vec![0.0; a_index.len() * heads];
    for (e, (&i, &j)) in a_index.iter().zip(b_index).enumerate() {
        for k in 0..d {
            out[e * heads + k / c] += a[i as usize * d + k] * b[j as usize * d + k];
        }
    }
    out
}

/// Reference of `attention_softmax`: `src [N_src, heads]`, `dst [N_dst, heads]`, `bias [E,
/// bias_width]` (1 or `heads`; `-inf` masks an edge). Logits as written in the docs, then the
/// softmax reference over the receivers.
#[allow(clippy::too_many_arguments)]
pub fn attention_softmax_reference(
    src: &[f64],
    dst: &[f64],
    heads: usize,
    senders: &[i64],
    receivers: &[i64],
    bias: &[f64],
    bias_width: usize,
    negative_slope: f64,
) -> Vec<f64> {
    let mut logits = Vec::with_capacity(senders.len() * heads);
    for e in 0..senders.len() {
        for h in 0..heads {
            let b = bias[e * bias_width + if bias_width == 1 { 0 } else { h }];
            let x =
                src[senders[e] as usize * heads + h] + dst[receivers[e] as usize * heads + h] + b;
            logits.push(if b == f64::NEG_INFINITY {
                f64::NEG_INFINITY
            } else if x < 0.0 {
                negative_slope * x
            } else {
                x
            });
        }
    }
    segment_softmax_reference(&logits, heads, receivers, dst.len() / heads.max(1))
}

/// References of the masked ops ([`Masked`](crate::Masked)): each unmasked reference applied to
/// column `j`'s eligible entries alone (a one-column problem), the results laid out as the
/// unmasked op's. `mask` has the data's shape `[E, d]`.
pub struct MaskedReference<'a> {
    data: &'a [f64],
    mask: &'a [bool],
    d: usize,
    ids: &'a [i64],
    n: usize,
}

impl<'a> MaskedReference<'a> {
    /// The problem `data: [E, d]`, `mask: [E, d]`, `ids: [E]` over `n` segments.
    pub fn new(data: &'a [f64], mask: &'a [bool], d: usize, ids: &'a [i64], n: usize) -> Self {
        assert_eq!(data.len(), mask.len(), "a mask of the data's shape");
        Self {
            data,
            mask,
            d,
            ids,
            n,
        }
    }

    /// Column `j`'s eligible entries: values, ids and original rows.
    fn column(&self, j: usize) -> (Vec<f64>, Vec<i64>, Vec<usize>) {
        let rows: Vec<usize> = (0..self.ids.len())
            .filter(|&e| self.mask[e * self.d + j])
            .collect();
        let values = rows.iter().map(|&e| self.data[e * self.d + j]).collect();
        let ids = rows.iter().map(|&e| self.ids[e]).collect();
        (values, ids, rows)
    }

    /// `[n, d]` from `f(values, ids, rows)` of each column, which gives `n` results.
    fn per_segment<T: Copy + Default>(
        &self,
        f: impl Fn(&[f64], &[i64], &[usize]) -> Vec<T>,
    ) -> Vec<T> {
        let mut out = vec![T::default(); self.n * self.d];
        for j in 0..self.d {
            let (values, ids, rows) = self.column(j);
            for (s, v) in f(&values, &ids, &rows).into_iter().enumerate() {
                out[s * self.d + j] = v;
            }
        }
        out
    }

    /// Eligible entries per segment and column.
    pub fn count(&self) -> Vec<i64> {
        self.per_segment(|_, ids, _| segment_count_reference(ids, self.n))
    }

    /// Sum, product, max or min of the eligible entries.
    pub fn reduce(&self, reduction: SegmentReduction) -> Vec<f64> {
        self.per_segment(|v, ids, _| segment_reduce_reference(v, 1, ids, self.n, reduction))
    }

    /// Max or min and the original row attaining it (-1 where nothing is eligible).
    pub fn extreme(&self, extreme: SegmentExtreme) -> (Vec<f64>, Vec<i64>) {
        let values =
            self.per_segment(|v, ids, _| segment_extreme_reference(v, 1, ids, self.n, extreme).0);
        let args = self.per_segment(|v, ids, rows| {
            let (_, args) = segment_extreme_reference(v, 1, ids, self.n, extreme);
            args.into_iter()
                .map(|a| if a < 0 { -1 } else { rows[a as usize] as i64 })
                .collect()
        });
        (values, args)
    }

    /// Mean of the eligible entries, NaN where there are none.
    pub fn mean(&self) -> Vec<f64> {
        self.per_segment(|v, ids, _| {
            let counts = segment_count_reference(ids, self.n);
            let means = segment_mean_reference(v, 1, ids, self.n);
            let none = |s: usize| counts[s] == 0;
            (0..self.n)
                .map(|s| if none(s) { f64::NAN } else { means[s] })
                .collect()
        })
    }

    /// `log Σ exp` of the eligible entries.
    pub fn logsumexp(&self) -> Vec<f64> {
        self.per_segment(|v, ids, _| segment_logsumexp_reference(v, 1, ids, self.n))
    }

    /// Variance of the eligible entries with `correction`.
    pub fn variance_corrected(&self, correction: usize) -> Vec<f64> {
        self.per_segment(|v, ids, _| {
            segment_variance_corrected_reference(v, 1, ids, self.n, correction)
        })
    }

    /// Weighted mean (`None`) or variance with a correction of the eligible entries, with row
    /// `weights`.
    pub fn weighted(&self, weights: &[f64], correction: Option<usize>) -> Vec<f64> {
        self.per_segment(|v, ids, rows| {
            let w: Vec<f64> = rows.iter().map(|&e| weights[e]).collect();
            weighted_variance_reference(v, 1, &w, ids, self.n, correction)
        })
    }

    /// Softmax over the eligible entries, `[E, d]`, 0 at the masked-out ones.
    pub fn softmax(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.data.len()];
        for j in 0..self.d {
            let (values, ids, rows) = self.column(j);
            let y = segment_softmax_reference(&values, 1, &ids, self.n);
            for (k, &e) in rows.iter().enumerate() {
                out[e * self.d + j] = y[k];
            }
        }
        out
    }
}
