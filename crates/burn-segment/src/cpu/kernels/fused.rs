//! The fused message-passing kernels: `spmm` (gather, weight, sum into receivers), `sddmm`
//! (per-edge dot products) and GAT's additive attention (logits and their gradient).

use rayon::prelude::*;

use super::memory::{Alloc, Out, assume_written, output_unwritten};
use super::{RowsPtr, per_segment};
use crate::host::csr::{CsrPlan, GATHER_PREFETCH_DISTANCE, prefetch_row};
use crate::host::elem::{Elem, FloatElem, IdElem};

/// Fused gather-weight-sum (see [`SegmentBackend::segment_spmm`](crate::SegmentBackend::segment_spmm)):
/// `x` is `[N_src, d]` with `d = heads · c`, `weights` `[E, heads]`, `senders` `[E]` (already
/// checked to lie in `0..N_src`), and `plan` groups the edges by receiver. Each receiver's row
/// is accumulated by one task in edge order, so the result does not depend on the thread count.
pub fn spmm<T: Elem, I: IdElem>(
    alloc: Alloc,
    x: &[T],
    d: usize,
    weights: &[T],
    heads: usize,
    senders: &[I],
    plan: &CsrPlan,
) -> Out<T> {
    // Baseline build only: wider copies gained nothing here, the gathers bound it.
    let c = d / heads.max(1);
    per_segment(alloc, plan, d, T::ZERO, |s, acc| {
        plan.for_rows_prefetch_gather(s, x, d, senders, (weights, heads), |e| {
            let sender = senders[e].at();
            let row = &x[sender * d..(sender + 1) * d];
            let w = &weights[e * heads..(e + 1) * heads];
            if heads == 1 {
                let w = w[0];
                acc.iter_mut()
                    .zip(row)
                    .for_each(|(a, &v)| *a = a.add(w.mul(v)));
            } else {
                for ((acc, row), &w) in acc.chunks_exact_mut(c).zip(row.chunks_exact(c)).zip(w) {
                    acc.iter_mut()
                        .zip(row)
                        .for_each(|(a, &v)| *a = a.add(w.mul(v)));
                }
            }
        })
    })
}

/// Per-edge, per-head dot products (see
/// [`SegmentBackend::segment_sddmm`](crate::SegmentBackend::segment_sddmm)): `a` and `b` are
/// `[·, d]` with `d = heads · c`; the indices are already checked. Parallel over edges.
pub fn sddmm<T: Elem, I: IdElem, J: IdElem>(
    alloc: Alloc,
    a: &[T],
    b: &[T],
    d: usize,
    heads: usize,
    a_index: &[I],
    b_index: &[J],
) -> Out<T> {
    // Every element is written once below (no fill pass first).
    let mut out = output_unwritten::<T>(alloc, a_index.len() * heads);
    let c = d / heads.max(1);
    if heads > 0 {
        out.par_chunks_mut(heads)
            .enumerate()
            .with_min_len(1024)
            .for_each(|(e, o)| {
                // Both rows are gathers through an index: prefetch those of an edge ahead, as spmm does.
                if let (Some(&pa), Some(&pb)) = (
                    a_index.get(e + GATHER_PREFETCH_DISTANCE),
                    b_index.get(e + GATHER_PREFETCH_DISTANCE),
                ) {
                    prefetch_row(a, pa.at() * d, d);
                    prefetch_row(b, pb.at() * d, d);
                }
                let (ia, ib) = (a_index[e].at(), b_index[e].at());
                let (ra, rb) = (&a[ia * d..(ia + 1) * d], &b[ib * d..(ib + 1) * d]);
                for (h, o) in o.iter_mut().enumerate() {
                    o.write(dot(&ra[h * c..(h + 1) * c], &rb[h * c..(h + 1) * c]));
                }
            });
    }
    // SAFETY: every row of `heads` elements was written above (none when `heads == 0`).
    unsafe { assume_written(out) }
}

/// `Σ a[i] · b[i]` with eight running sums (lane `i % 8`) added pairwise at the end: the loop
/// vectorises, where one running sum is a chain of dependent adds. The order is fixed, so the
/// result is too.
#[inline(always)]
fn dot<T: Elem>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut tail = T::ZERO;
    for (&p, &q) in ca.remainder().iter().zip(cb.remainder()) {
        tail = tail.add(p.mul(q));
    }
    for (p, q) in ca.zip(cb) {
        for k in 0..8 {
            lanes[k] = lanes[k].add(p[k].mul(q[k]));
        }
    }
    let quad = [
        lanes[0].add(lanes[4]),
        lanes[1].add(lanes[5]),
        lanes[2].add(lanes[6]),
        lanes[3].add(lanes[7]),
    ];
    quad[0].add(quad[2]).add(quad[1].add(quad[3])).add(tail)
}

/// The inputs of an additive-attention softmax (see
/// [`SegmentBackend::segment_attention_softmax`](crate::SegmentBackend::segment_attention_softmax)):
/// per-node scores `src` `[N_src, heads]` and `dst` `[N_dst, heads]`, per-edge `bias`
/// `[E, bias_width]` (`bias_width` 1 or `heads`), checked indices (in the ids' own dtypes,
/// `I` and `J`), and the LeakyReLU slope.
pub struct Attention<'a, T, I, J> {
    /// Scores of the senders.
    pub src: &'a [T],
    /// Scores of the receivers.
    pub dst: &'a [T],
    /// Per-edge terms added before the LeakyReLU; `-inf` masks an edge.
    pub bias: &'a [T],
    /// Columns of `bias`: 1 (shared by the heads) or `heads`.
    pub bias_width: usize,
    /// Heads (columns of `src` and `dst`).
    pub heads: usize,
    /// Sender of each edge (row of `src`).
    pub senders: &'a [I],
    /// Receiver of each edge (row of `dst`).
    pub receivers: &'a [J],
    /// LeakyReLU slope for negative inputs.
    pub slope: T,
}

impl<T: FloatElem, I: IdElem, J: IdElem> Attention<'_, T, I, J> {
    /// The rows edge `e` reads: its sender's scores, its receiver's scores (`heads` each) and
    /// its bias (`bias_width`), sliced once per edge so that the loops over the heads only
    /// index these short rows.
    #[inline(always)]
    fn rows(&self, e: usize) -> (&[T], &[T], &[T]) {
        let (h, w) = (self.heads, self.bias_width);
        let (s, r) = (self.senders[e].at(), self.receivers[e].at());
        (
            &self.src[s * h..(s + 1) * h],
            &self.dst[r * h..(r + 1) * h],
            &self.bias[e * w..(e + 1) * w],
        )
    }

    /// `src + dst + bias` for head `k` of an edge's [`rows`](Self::rows), and whether the
    /// bias masks the edge.
    #[inline(always)]
    fn raw((src, dst, bias): (&[T], &[T], &[T]), k: usize) -> (T, bool) {
        let b = bias[if bias.len() == 1 { 0 } else { k }];
        (src[k].add(dst[k]).add(b), b == T::LOWEST)
    }

    /// The logits `LeakyReLU(raw)`, `-inf` for masked edges, `[E, heads]`.
    pub fn logits(&self, alloc: Alloc) -> Out<T> {
        let h = self.heads;
        // Every element is written once below (no fill pass first).
        let mut out = output_unwritten::<T>(alloc, self.senders.len() * h);
        if h == 0 {
            // SAFETY: no elements.
            return unsafe { assume_written(out) };
        }
        out.par_chunks_mut(h)
            .enumerate()
            .with_min_len(1024)
            .for_each(|(e, row)| {
                // `src[senders[e]]` is a gather of rows scattered over memory: prefetch the one of
                // an edge ahead, as spmm does.
                if let Some(&ahead) = self.senders.get(e + GATHER_PREFETCH_DISTANCE) {
                    prefetch_row(self.src, ahead.at() * h, h);
                }
                let rows = self.rows(e);
                for (k, o) in row.iter_mut().enumerate() {
                    let (x, masked) = Self::raw(rows, k);
                    o.write(if masked {
                        T::LOWEST
                    } else {
                        T::pick(x < T::ZERO, x.mul(self.slope), x)
                    });
                }
            });
        // SAFETY: every row of `h` elements was written above.
        unsafe { assume_written(out) }
    }

    /// Gradient of the raw scores given the coefficients `alpha` and their gradient `grad`
    /// (both `[E, heads]`): the softmax backward `alpha · (grad − Σ_segment alpha · grad)`,
    /// times the LeakyReLU's slope where the raw score is negative, 0 on masked edges. `plan`
    /// groups the edges by receiver; one task per receiver, in edge order.
    pub fn backward(&self, alloc: Alloc, alpha: &[T], grad: &[T], plan: &CsrPlan) -> Out<T> {
        let h = self.heads;
        // Each edge's row is written once below, with no fill pass first.
        plan.assert_holds_rows(alpha.len(), h, "attention gradient");
        let mut out = output_unwritten::<T>(alloc, alpha.len());
        if h == 0 || alpha.is_empty() {
            // SAFETY: no elements.
            return unsafe { assume_written(out) };
        }
        let ptr = RowsPtr(out.as_mut_ptr());
        (0..plan.num_segments())
            .into_par_iter()
            .with_min_len(plan.min_len(h))
            .for_each_init(
                || vec![T::ZERO; h],
                |total, s| {
                    total.iter_mut().for_each(|t| *t = T::ZERO);
                    plan.for_rows(s, |e| {
                        for k in 0..h {
                            total[k] = total[k].add(alpha[e * h + k].mul(grad[e * h + k]));
                        }
                    });
                    // `raw` gathers `src[senders[e]]`: prefetched ahead in the plan's order.
                    plan.for_rows_prefetch_gather(
                        s,
                        self.src,
                        h,
                        self.senders,
                        (self.bias, self.bias_width),
                        |e| {
                            // SAFETY: edge `e` belongs to receiver `s` only (the plan is a permutation
                            // of the edges), so no other task touches row `e` of `out`, and
                            // `(e + 1) * h <= out.len()` because `e` indexes `alpha`'s rows.
                            let row = unsafe { ptr.row(e, h) };
                            let rows = self.rows(e);
                            let (alpha, grad) =
                                (&alpha[e * h..(e + 1) * h], &grad[e * h..(e + 1) * h]);
                            for (k, o) in row.iter_mut().enumerate() {
                                let (a, g) = (alpha[k], grad[k]);
                                let d = a.mul(g).sub(a.mul(total[k]));
                                let (x, masked) = Self::raw(rows, k);
                                o.write(if masked {
                                    T::ZERO
                                } else {
                                    T::pick(x < T::ZERO, d.mul(self.slope), d)
                                });
                            }
                        },
                    );
                },
            );
        // SAFETY: the plan's receivers hold every edge (checked above), and each edge's row of
        // `h` elements was written above.
        unsafe { assume_written(out) }
    }
}
