//! CPU kernels of [`PairwiseBackend`](super::PairwiseBackend) for NdArray and Flex (f32): one
//! task per output row (forward, `x`'s gradient) or column (`y`'s and `v`'s gradients), each
//! streaming the pairs of its row or column in order, so any thread count gives the same bits.
//! One call instead of the composite's few dozen tensor ops per tile: what small batches of
//! graphs (attention in GPS) spend their time on. Other dtypes take the composite.

use burn::tensor::{DType, Shape};
use rayon::prelude::*;

use super::select::score;
use super::{PairScore, PairSpec, PairWeight};
use crate::cpu::tensor::CpuTensor;

/// The labels as i64, or `None` for an unsupported dtype.
fn labels<T: CpuTensor>(t: &T) -> Option<Vec<i64>> {
    match t.dtype() {
        DType::I64 => Some(t.values::<i64>().into_owned()),
        DType::I32 => Some(t.values::<i32>().iter().map(|&l| l as i64).collect()),
        _ => None,
    }
}

/// The f32 inputs: `x`, `y`, `v` and the labels, or `None` (the composite's case).
#[allow(clippy::type_complexity)]
fn inputs<T: CpuTensor>(
    [x, y, v]: [&T; 3],
    [lx, ly]: [&T; 2],
) -> Option<([Vec<f32>; 3], [Vec<i64>; 2])> {
    if [x, y, v].iter().any(|t| t.dtype() != DType::F32) {
        return None;
    }
    let f = |t: &T| t.values::<f32>().into_owned();
    Some(([f(x), f(y), f(v)], [labels(lx)?, labels(ly)?]))
}

/// The problem as slices.
struct Job<'a> {
    x: &'a [f32],
    y: &'a [f32],
    v: &'a [f32],
    lx: &'a [i64],
    ly: &'a [i64],
    d: usize,
    c: usize,
    spec: &'a PairSpec,
}

impl Job<'_> {
    fn n(&self) -> usize {
        self.lx.len()
    }

    fn m(&self) -> usize {
        self.ly.len()
    }

    /// The columns row `i` visits.
    fn columns(&self, i: usize) -> std::ops::Range<usize> {
        self.spec.columns(i, self.m())
    }

    /// The rows column `j` visits (spans come from sorted labels on both sides).
    fn rows(&self, j: usize) -> std::ops::Range<usize> {
        match &self.spec.column_spans {
            Some(_) => {
                let l = self.ly[j];
                self.lx.partition_point(|&t| t < l)..self.lx.partition_point(|&t| t <= l)
            }
            None => 0..self.n(),
        }
    }

    /// The score of `(i, j)` if the pair is eligible.
    #[inline]
    fn pair(&self, i: usize, j: usize) -> Option<f32> {
        let (d, xi, yj) = (self.d, i * self.d, j * self.d);
        let s = score(&self.x[xi..xi + d], &self.y[yj..yj + d], self.spec.score);
        let eligible = self
            .spec
            .mask
            .as_ref()
            .is_none_or(|mask| mask.eligible(i, j, self.lx[i], self.ly[j], s as f64));
        eligible.then_some(s)
    }

    fn v(&self, j: usize) -> &[f32] {
        &self.v[j * self.c..(j + 1) * self.c]
    }
}

/// The forward `[N, C + 1]` (see `pairwise_matmul`).
fn forward(job: &Job, weight: PairWeight) -> Vec<f32> {
    let c = job.c;
    let mut out = vec![0.0f32; job.n() * (c + 1)];
    out.par_chunks_mut(c + 1).enumerate().for_each(|(i, row)| {
        let (acc, stat) = row.split_at_mut(c);
        let mut max = f32::NEG_INFINITY;
        for j in job.columns(i) {
            let Some(s) = job.pair(i, j) else { continue };
            let w = match weight {
                PairWeight::Score => s,
                PairWeight::One => 1.0,
                PairWeight::Softmax => {
                    // Online softmax: rescale what was summed when the maximum grows.
                    if s > max {
                        let scale = (max - s).exp();
                        stat[0] *= scale;
                        acc.iter_mut().for_each(|a| *a *= scale);
                        max = s;
                    }
                    (s - max).exp()
                }
            };
            stat[0] += w;
            for (a, &vj) in acc.iter_mut().zip(job.v(j)) {
                *a += w * vj;
            }
        }
        if weight == PairWeight::Softmax {
            let total = stat[0];
            if total == 0.0 {
                acc.iter_mut().for_each(|a| *a = 0.0);
                stat[0] = f32::NEG_INFINITY;
            } else {
                acc.iter_mut().for_each(|a| *a /= total);
                stat[0] = max + total.ln();
            }
        }
    });
    out
}

/// The gradient of a pair's score `ds` and its weight `w` (see `matmul_backward`), given the
/// row's `g` (gradient of its outputs), `g_stat`, output `o` and statistic.
struct RowGrad<'a> {
    g: &'a [f32],
    g_stat: f32,
    /// Softmax: `Σ_c g · out` and the logsumexp.
    row_dot: f32,
    lse: f32,
}

impl RowGrad<'_> {
    #[inline]
    fn of(&self, s: f32, vj: &[f32], weight: PairWeight) -> (f32, f32) {
        let gv: f32 = self.g.iter().zip(vj).map(|(a, b)| a * b).sum();
        match weight {
            PairWeight::Score => (s, gv + self.g_stat),
            PairWeight::One => (1.0, 0.0),
            PairWeight::Softmax => {
                let p = if self.lse == f32::NEG_INFINITY {
                    0.0
                } else {
                    (s - self.lse).exp()
                };
                (p, p * (gv - self.row_dot + self.g_stat))
            }
        }
    }
}

/// `acc += ds · ∂s/∂a` for the pair `(a, b)` with score `s` (`a` is the side differentiated).
#[inline]
fn chain(acc: &mut [f32], a: &[f32], b: &[f32], s: f32, ds: f32, score: PairScore) {
    match score {
        PairScore::Dot => acc.iter_mut().zip(b).for_each(|(g, q)| *g += ds * q),
        PairScore::SqEuclidean => {
            let k = 2.0 * ds;
            acc.iter_mut()
                .zip(a.iter().zip(b))
                .for_each(|(g, (p, q))| *g += k * (p - q));
        }
        PairScore::Euclidean => {
            if s > 0.0 && ds != 0.0 {
                let k = ds / s;
                acc.iter_mut()
                    .zip(a.iter().zip(b))
                    .for_each(|(g, (p, q))| *g += k * (p - q));
            }
        }
    }
}

/// The gradients `(gx, gy, gv)` (see `pairwise_matmul_backward`).
fn backward(job: &Job, weight: PairWeight, out: &[f32], grad: &[f32]) -> [Vec<f32>; 3] {
    let (c, d, n, m) = (job.c, job.d, job.n(), job.m());
    let row = |i: usize| {
        let (o, g) = (
            &out[i * (c + 1)..(i + 1) * (c + 1)],
            &grad[i * (c + 1)..(i + 1) * (c + 1)],
        );
        RowGrad {
            g: &g[..c],
            g_stat: g[c],
            row_dot: g[..c].iter().zip(&o[..c]).map(|(a, b)| a * b).sum(),
            lse: o[c],
        }
    };
    let mut gx = vec![0.0f32; n * d];
    if weight != PairWeight::One {
        gx.par_chunks_mut(d.max(1))
            .enumerate()
            .take(n)
            .for_each(|(i, acc)| {
                let r = row(i);
                let xi = &job.x[i * d..(i + 1) * d];
                for j in job.columns(i) {
                    let Some(s) = job.pair(i, j) else { continue };
                    let (_, ds) = r.of(s, job.v(j), weight);
                    chain(acc, xi, &job.y[j * d..(j + 1) * d], s, ds, job.spec.score);
                }
            });
    }
    // y's and v's gradients: one task per column, over the rows that see it.
    let rows: Vec<RowGrad> = (0..n).map(row).collect();
    let mut gyv = vec![0.0f32; m * (d + c)];
    gyv.par_chunks_mut((d + c).max(1))
        .enumerate()
        .take(m)
        .for_each(|(j, acc)| {
            let (gy, gv) = acc.split_at_mut(d);
            let yj = &job.y[j * d..(j + 1) * d];
            for i in job.rows(j) {
                let Some(s) = job.pair(i, j) else { continue };
                let r = &rows[i];
                let (w, ds) = r.of(s, job.v(j), weight);
                gv.iter_mut().zip(r.g).for_each(|(a, g)| *a += w * g);
                if weight != PairWeight::One {
                    chain(gy, yj, &job.x[i * d..(i + 1) * d], s, ds, job.spec.score);
                }
            }
        });
    let (mut gy, mut gv) = (Vec::with_capacity(m * d), Vec::with_capacity(m * c));
    for chunk in gyv.chunks(d + c).take(m) {
        gy.extend_from_slice(&chunk[..d]);
        gv.extend_from_slice(&chunk[d..]);
    }
    [gx, gy, gv]
}

/// The kernel of `pairwise_matmul`, or `None` for dtypes it does not cover.
pub(crate) fn matmul<T: CpuTensor>(
    tensors: [&T; 3],
    labels: [&T; 2],
    spec: &PairSpec,
    weight: PairWeight,
) -> Option<T> {
    let ([x, y, v], [lx, ly]) = inputs(tensors, labels)?;
    let (d, c) = (tensors[0].shape()[1], tensors[2].shape()[1]);
    let job = Job {
        x: &x,
        y: &y,
        v: &v,
        lx: &lx,
        ly: &ly,
        d,
        c,
        spec,
    };
    Some(T::from_values(
        forward(&job, weight),
        Shape::new([lx.len(), c + 1]),
    ))
}

/// The kernel of `pairwise_matmul_backward`, or `None` for dtypes it does not cover.
pub(crate) fn matmul_backward<T: CpuTensor>(
    tensors: [&T; 5],
    labels: [&T; 2],
    spec: &PairSpec,
    weight: PairWeight,
) -> Option<(T, T, T)> {
    let [x, y, v, out, grad] = tensors;
    if out.dtype() != DType::F32 || grad.dtype() != DType::F32 {
        return None;
    }
    let ([xs, ys, vs], [lx, ly]) = inputs([x, y, v], labels)?;
    let (d, c) = (x.shape()[1], v.shape()[1]);
    let job = Job {
        x: &xs,
        y: &ys,
        v: &vs,
        lx: &lx,
        ly: &ly,
        d,
        c,
        spec,
    };
    let (out, grad) = (out.values::<f32>(), grad.values::<f32>());
    let [gx, gy, gv] = backward(&job, weight, &out, &grad);
    let (n, m) = (lx.len(), ly.len());
    Some((
        T::from_values(gx, Shape::new([n, d])),
        T::from_values(gy, Shape::new([m, d])),
        T::from_values(gv, Shape::new([m, c])),
    ))
}
