//! A dense f64 reference of the pairwise consumers: the whole `[N, M]` score matrix and mask,
//! then each consumer by its definition (a full stable sort for the selections). For tests.

use std::cmp::Ordering;

use super::{PairMask, PairMetric};

/// The dense scores and eligibility of a pairwise expression.
#[derive(Clone, Debug)]
pub struct PairwiseReference {
    /// Rows of `x`.
    pub n: usize,
    /// Rows of `y`.
    pub m: usize,
    /// `[N, M]` scores, row-major.
    pub scores: Vec<f64>,
    /// `[N, M]` eligibility, row-major.
    pub eligible: Vec<bool>,
}

fn metric(a: &[f64], b: &[f64], metric: PairMetric) -> f64 {
    let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(u, v)| u * v).sum::<f64>();
    let sq: f64 = a.iter().zip(b).map(|(u, v)| (u - v).powi(2)).sum();
    match metric {
        PairMetric::SqEuclidean => sq,
        PairMetric::Euclidean => sq.sqrt(),
        PairMetric::Dot => dot(a, b),
        PairMetric::Cosine => dot(a, b) / (dot(a, a).sqrt().max(1e-8) * dot(b, b).sqrt().max(1e-8)),
    }
}

/// The mask as a dense `[N, M]` matrix.
fn dense(mask: &PairMask, r: &PairwiseReference, labels: Option<(&[i64], &[i64])>) -> Vec<bool> {
    let (n, m) = (r.n, r.m);
    let cell = |f: &dyn Fn(usize, usize) -> bool| -> Vec<bool> {
        (0..n * m).map(|p| f(p / m, p % m)).collect()
    };
    match mask {
        PairMask::Group { same } => {
            let (lx, ly) = labels.expect("group masks need labels");
            cell(&|i, j| (lx[i] == ly[j]) == *same)
        }
        PairMask::Band { lower, upper } => cell(&|i, j| {
            let offset = j as i128 - i as i128;
            offset >= -(*lower as i128) && offset <= *upper as i128
        }),
        PairMask::Within(radius) => r.scores.iter().map(|s| s < radius).collect(),
        PairMask::And(a, b) => zip(dense(a, r, labels), dense(b, r, labels), |p, q| p && q),
        PairMask::Or(a, b) => zip(dense(a, r, labels), dense(b, r, labels), |p, q| p || q),
        PairMask::Not(a) => dense(a, r, labels).into_iter().map(|p| !p).collect(),
    }
}

fn zip(a: Vec<bool>, b: Vec<bool>, f: impl Fn(bool, bool) -> bool) -> Vec<bool> {
    a.into_iter().zip(b).map(|(p, q)| f(p, q)).collect()
}

/// Descending with NaN first (`largest`) or ascending with NaN last; equal values keep their
/// order (the sort is stable).
fn rank(a: f64, b: f64, largest: bool) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => {
            if largest {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (false, true) => {
            if largest {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        _ if largest => b.partial_cmp(&a).unwrap(),
        _ => a.partial_cmp(&b).unwrap(),
    }
}

impl PairwiseReference {
    /// Rows of `x: [N, d]` against rows of `y: [M, d]` (row-major), with the labels of the
    /// group masks.
    pub fn new(
        x: &[f64],
        y: &[f64],
        d: usize,
        pair_metric: PairMetric,
        labels: Option<(&[i64], &[i64])>,
        mask: Option<&PairMask>,
    ) -> Self {
        let (n, m) = (x.len() / d.max(1), y.len() / d.max(1));
        let scores = (0..n * m)
            .map(|p| {
                let (i, j) = (p / m, p % m);
                metric(&x[i * d..(i + 1) * d], &y[j * d..(j + 1) * d], pair_metric)
            })
            .collect();
        let mut r = Self {
            n,
            m,
            scores,
            eligible: vec![true; n * m],
        };
        if let Some(mask) = mask {
            r.eligible = dense(mask, &r, labels);
        }
        r
    }

    /// The eligible `(column, score)` pairs of row `i`.
    fn row(&self, i: usize) -> Vec<(usize, f64)> {
        (0..self.m)
            .filter(|&j| self.eligible[i * self.m + j])
            .map(|j| (j, self.scores[i * self.m + j]))
            .collect()
    }

    /// Sum of each row's eligible scores.
    pub fn sum(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| self.row(i).iter().map(|p| p.1).sum())
            .collect()
    }

    /// Number of eligible pairs per row.
    pub fn count(&self) -> Vec<i64> {
        (0..self.n).map(|i| self.row(i).len() as i64).collect()
    }

    /// Mean of each row's eligible scores (NaN where none).
    pub fn mean(&self) -> Vec<f64> {
        let (s, c) = (self.sum(), self.count());
        s.iter()
            .zip(&c)
            .map(|(s, &c)| if c == 0 { f64::NAN } else { s / c as f64 })
            .collect()
    }

    /// Logsumexp of each row's eligible scores (`-inf` where none).
    pub fn logsumexp(&self) -> Vec<f64> {
        (0..self.n)
            .map(|i| {
                let row = self.row(i);
                let max = row.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                if max == f64::NEG_INFINITY {
                    return f64::NEG_INFINITY;
                }
                max + row.iter().map(|p| (p.1 - max).exp()).sum::<f64>().ln()
            })
            .collect()
    }

    /// `Σ_j softmax_j(s_ij) v_j` with `v: [M, c]` (0 where nothing is eligible).
    pub fn softmax_matmul(&self, v: &[f64], c: usize) -> Vec<f64> {
        let lse = self.logsumexp();
        let mut out = vec![0.0; self.n * c];
        for i in 0..self.n {
            for (j, s) in self.row(i) {
                let p = (s - lse[i]).exp();
                for k in 0..c {
                    out[i * c + k] += p * v[j * c + k];
                }
            }
        }
        out
    }

    /// The `k` largest (or smallest) eligible scores per row and their columns, `[N, k]`:
    /// ties to the smaller column, NaN above every number, `∓inf` and -1 past the eligible.
    pub fn topk(&self, k: usize, largest: bool) -> (Vec<f64>, Vec<i64>) {
        let fill = if largest {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let (mut values, mut columns) = (vec![fill; self.n * k], vec![-1; self.n * k]);
        for i in 0..self.n {
            let mut row = self.row(i);
            row.sort_by(|a, b| rank(a.1, b.1, largest));
            for (r, (j, s)) in row.into_iter().take(k).enumerate() {
                values[i * k + r] = s;
                columns[i * k + r] = j as i64;
            }
        }
        (values, columns)
    }

    /// The smallest (`largest = false`) or largest eligible score per row, NaN if any is.
    pub fn nan_extreme(&self, largest: bool) -> Vec<f64> {
        let fill = if largest {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        (0..self.n)
            .map(|i| {
                let row = self.row(i);
                if row.iter().any(|p| p.1.is_nan()) {
                    return f64::NAN;
                }
                let pick = |a: f64, b: f64| if largest { a.max(b) } else { a.min(b) };
                row.iter().map(|p| p.1).fold(fill, pick)
            })
            .collect()
    }
}
