//! The composite defaults of [`PairwiseBackend`](super::PairwiseBackend): Burn primitives over
//! tiles of rows and columns, so no temporary is larger than a tile. Softmax weights are
//! combined across column tiles online (a running maximum and sum, as flash attention); the
//! backward pass recomputes each tile's scores from the inputs.

use core::ops::Range;

use burn::backend::{
    Backend, Scalar, TensorMetadata, get_device_settings,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{BoolDType, FloatDType, Shape, Slice};

use super::{PairMask, PairScore, PairSpec, PairWeight};

/// Elements in the largest temporary of a tile (16 MiB of f32): the `[T, T_c]` scores, or the
/// `[T, T_c, D]` differences of a distance.
pub const TILE_ELEMENTS: usize = 1 << 22;

/// Columns per tile.
const TILE_COLUMNS: usize = 1024;

/// Rows and columns of a tile for `n` queries against `m` rows of width `d`.
fn tile(n: usize, m: usize, d: usize, score: PairScore) -> (usize, usize) {
    let per_pair = match score {
        PairScore::Dot => 1,
        _ => d.max(1),
    };
    let tc = m.clamp(1, TILE_COLUMNS);
    (TILE_ELEMENTS.div_ceil(tc * per_pair).clamp(1, n.max(1)), tc)
}

/// The column tiles (of `tc`, aligned to multiples of it) that row tile `rows` must visit:
/// all of them, or those overlapping its rows' spans.
fn column_tiles(
    rows: &Range<usize>,
    m: usize,
    tc: usize,
    spans: &Option<std::sync::Arc<Vec<[usize; 2]>>>,
) -> Range<usize> {
    let all = 0..m.div_ceil(tc);
    let Some(spans) = spans else { return all };
    let spans = &spans[rows.clone()];
    let lo = spans.iter().map(|s| s[0]).min().unwrap_or(0);
    let hi = spans.iter().map(|s| s[1]).max().unwrap_or(0);
    if hi <= lo {
        return 0..0;
    }
    lo / tc..hi.div_ceil(tc).min(all.end)
}

/// The columns of column tile `k`.
fn column_range(k: usize, m: usize, tc: usize) -> Range<usize> {
    k * tc..((k + 1) * tc).min(m)
}

/// The ranges `0..len` cut into pieces of `step`.
fn pieces(len: usize, step: usize) -> impl Iterator<Item = Range<usize>> {
    (0..len).step_by(step).map(move |a| a..(a + step).min(len))
}

fn rows<B: Backend>(t: &FloatTensor<B>, r: Range<usize>) -> FloatTensor<B> {
    let width = t.shape()[1];
    B::float_slice(t.clone(), &[Slice::from(r), Slice::from(0..width)])
}

fn columns<B: Backend>(t: &FloatTensor<B>, c: Range<usize>) -> FloatTensor<B> {
    let n = t.shape()[0];
    B::float_slice(t.clone(), &[Slice::from(0..n), Slice::from(c)])
}

fn int_rows<B: Backend>(t: &IntTensor<B>, r: Range<usize>) -> IntTensor<B> {
    B::int_slice(t.clone(), &[Slice::from(r)])
}

/// One tile: its rows and columns, their labels, and what the masks need.
struct Tile<B: Backend> {
    rows: Range<usize>,
    cols: Range<usize>,
    labels_x: IntTensor<B>,
    labels_y: IntTensor<B>,
    /// `N + M`: a band wider than this is unbounded.
    span: i64,
    bool_dtype: BoolDType,
}

impl<B: Backend> Tile<B> {
    fn shape(&self) -> Shape {
        Shape::new([self.rows.len(), self.cols.len()])
    }

    /// The eligible pairs of the tile under `mask`, given the tile's scores.
    fn eligible(&self, mask: &PairMask, scores: &FloatTensor<B>) -> BoolTensor<B> {
        let (t, tc, bd) = (self.rows.len(), self.cols.len(), self.bool_dtype);
        match mask {
            PairMask::Group { same } => {
                let a = B::int_reshape(self.labels_x.clone(), Shape::new([t, 1]));
                let b = B::int_reshape(self.labels_y.clone(), Shape::new([1, tc]));
                let a = B::int_expand(a, self.shape());
                let b = B::int_expand(b, self.shape());
                let equal = B::int_equal(a, b, bd);
                if *same { equal } else { B::bool_not(equal) }
            }
            PairMask::Band { lower, upper } => {
                let device = scores.device();
                let dtype = self.labels_x.dtype().into();
                let (r, c) = (&self.rows, &self.cols);
                let i = B::int_arange(r.start as i64..r.end as i64, &device, dtype);
                let j = B::int_arange(c.start as i64..c.end as i64, &device, dtype);
                let i = B::int_expand(B::int_reshape(i, Shape::new([t, 1])), self.shape());
                let j = B::int_expand(B::int_reshape(j, Shape::new([1, tc])), self.shape());
                let offset = B::int_sub(j, i);
                let (lower, upper) = ((*lower).min(self.span), (*upper).min(self.span));
                let above = B::int_greater_equal_elem(offset.clone(), Scalar::Int(-lower), bd);
                B::bool_and(
                    above,
                    B::int_lower_equal_elem(offset, Scalar::Int(upper), bd),
                )
            }
            PairMask::Within(r) => B::float_lower_elem(scores.clone(), Scalar::Float(*r), bd),
            PairMask::And(a, b) => B::bool_and(self.eligible(a, scores), self.eligible(b, scores)),
            PairMask::Or(a, b) => B::bool_or(self.eligible(a, scores), self.eligible(b, scores)),
            PairMask::Not(a) => B::bool_not(self.eligible(a, scores)),
        }
    }
}

/// `[T, T_c]` scores of the rows `xt: [T, D]` against `yt: [T_c, D]`.
fn scores<B: Backend>(xt: FloatTensor<B>, yt: FloatTensor<B>, score: PairScore) -> FloatTensor<B> {
    if score == PairScore::Dot {
        return B::float_matmul(xt, B::float_transpose(yt));
    }
    let ([t, d], tc) = ([xt.shape()[0], xt.shape()[1]], yt.shape()[0]);
    // Differences, not `|x|² + |y|² - 2 x·y`: no cancellation for points far from the origin.
    let a = B::float_reshape(xt, Shape::new([t, 1, d]));
    let b = B::float_reshape(yt, Shape::new([1, tc, d]));
    let diff = B::float_sub(a, b);
    let sq = B::float_sum_dim(B::float_mul(diff.clone(), diff), 2);
    let sq = B::float_reshape(sq, Shape::new([t, tc]));
    match score {
        PairScore::Euclidean => B::float_sqrt(sq),
        _ => sq,
    }
}

/// `t` with `fill` wherever `eligible` is false.
fn fill_ineligible<B: Backend>(
    t: FloatTensor<B>,
    eligible: &Option<BoolTensor<B>>,
    fill: f64,
) -> FloatTensor<B> {
    match eligible {
        Some(e) => B::float_mask_fill(t, B::bool_not(e.clone()), Scalar::Float(fill)),
        None => t,
    }
}

/// The elementwise maximum (NaN if either is).
fn max_pair<B: Backend>(a: FloatTensor<B>, b: FloatTensor<B>, bd: BoolDType) -> FloatTensor<B> {
    let lower = B::float_lower(a.clone(), b.clone(), bd);
    B::float_mask_where(a, lower, b)
}

/// `t` with 0 in place of `-inf` (a safe shift for rows with nothing eligible).
fn finite_shift<B: Backend>(t: FloatTensor<B>, bd: BoolDType) -> FloatTensor<B> {
    let empty = B::float_equal_elem(t.clone(), Scalar::Float(f64::NEG_INFINITY), bd);
    B::float_mask_fill(t, empty, Scalar::Float(0.0))
}

/// Everything both passes share: sizes, labels, spec.
struct Job<'a, B: Backend> {
    n: usize,
    m: usize,
    labels: [IntTensor<B>; 2],
    spec: &'a PairSpec,
    bool_dtype: BoolDType,
    float_dtype: FloatDType,
    tiles: (usize, usize),
}

impl<'a, B: Backend> Job<'a, B> {
    fn new(x: &FloatTensor<B>, m: usize, labels: [IntTensor<B>; 2], spec: &'a PairSpec) -> Self {
        let (n, d) = (x.shape()[0], x.shape()[1]);
        Self {
            n,
            m,
            labels,
            spec,
            bool_dtype: get_device_settings::<B>(&x.device()).bool_dtype,
            float_dtype: x.dtype().into(),
            tiles: match tile(n, m, d, spec.score) {
                // With spans, short row tiles keep each tile's columns to a few groups.
                (tr, tc) if spec.column_spans.is_some() => (tr.min(tc), tc),
                tiles => tiles,
            },
        }
    }

    fn tile(&self, rows: Range<usize>, cols: Range<usize>) -> Tile<B> {
        Tile {
            labels_x: int_rows::<B>(&self.labels[0], rows.clone()),
            labels_y: int_rows::<B>(&self.labels[1], cols.clone()),
            rows,
            cols,
            span: (self.n + self.m) as i64,
            bool_dtype: self.bool_dtype,
        }
    }

    /// A tile's scores and eligible pairs (`None`: all of them).
    fn scores(
        &self,
        tile: &Tile<B>,
        xt: &FloatTensor<B>,
        yt: &FloatTensor<B>,
    ) -> (FloatTensor<B>, Option<BoolTensor<B>>) {
        let s = scores::<B>(xt.clone(), yt.clone(), self.spec.score);
        let e = self.spec.mask.as_ref().map(|mask| tile.eligible(mask, &s));
        (s, e)
    }

    fn ones(&self, shape: Shape, device: &B::Device) -> FloatTensor<B> {
        B::float_ones(shape, device, self.float_dtype)
    }

    fn zeros(&self, shape: Shape, device: &B::Device) -> FloatTensor<B> {
        B::float_zeros(shape, device, self.float_dtype)
    }
}

/// The composite [`pairwise_matmul`](super::PairwiseBackend::pairwise_matmul).
pub fn matmul<B: Backend>(
    [x, y, v]: [FloatTensor<B>; 3],
    labels: [IntTensor<B>; 2],
    spec: &PairSpec,
    weight: PairWeight,
) -> FloatTensor<B> {
    let (m, c, device) = (y.shape()[0], v.shape()[1], x.device());
    let job = Job::<B>::new(&x, m, labels, spec);
    let (bd, (tr, tc)) = (job.bool_dtype, job.tiles);
    if job.n == 0 {
        return job.zeros(Shape::new([0, c + 1]), &device);
    }
    let mut out = Vec::new();
    for r in pieces(job.n, tr) {
        let t = r.len();
        let xt = rows::<B>(&x, r.clone());
        let mut acc = job.zeros(Shape::new([t, c]), &device);
        let mut stat = job.zeros(Shape::new([t, 1]), &device);
        let neg_inf = Scalar::Float(f64::NEG_INFINITY);
        let mut run_max = B::float_full(Shape::new([t, 1]), neg_inf, &device, job.float_dtype);
        for k in column_tiles(&r, m, tc, &spec.column_spans) {
            let cols = column_range(k, m, tc);
            let tile = job.tile(r.clone(), cols.clone());
            let (s, e) = job.scores(&tile, &xt, &rows::<B>(&y, cols.clone()));
            let vt = rows::<B>(&v, cols);
            let w = match weight {
                PairWeight::Score => fill_ineligible::<B>(s, &e, 0.0),
                PairWeight::One => match e {
                    Some(e) => B::bool_into_float(e, job.float_dtype),
                    None => job.ones(tile.shape(), &device),
                },
                PairWeight::Softmax => {
                    let s = fill_ineligible::<B>(s, &e, f64::NEG_INFINITY);
                    let new_max =
                        max_pair::<B>(run_max.clone(), B::float_max_dim(s.clone(), 1), bd);
                    let shift = finite_shift::<B>(new_max.clone(), bd);
                    let rescale = B::float_exp(B::float_sub(run_max, shift.clone()));
                    run_max = new_max;
                    stat = B::float_mul(stat, rescale.clone());
                    acc = B::float_mul(acc, rescale);
                    B::float_exp(B::float_sub(s, shift))
                }
            };
            stat = B::float_add(stat, B::float_sum_dim(w.clone(), 1));
            acc = B::float_add(acc, B::float_matmul(w, vt));
        }
        if weight == PairWeight::Softmax {
            let empty = B::float_equal_elem(stat.clone(), Scalar::Float(0.0), bd);
            let empty = B::bool_expand(empty, Shape::new([t, c]));
            acc = B::float_mask_fill(B::float_div(acc, stat.clone()), empty, Scalar::Float(0.0));
            stat = B::float_add(run_max, B::float_log(stat));
        }
        out.push(B::float_cat(vec![acc, stat], 1));
    }
    B::float_cat(out, 0)
}

/// The composite [`pairwise_matmul_backward`](super::PairwiseBackend::pairwise_matmul_backward).
pub fn matmul_backward<B: Backend>(
    [x, y, v, out, grad]: [FloatTensor<B>; 5],
    labels: [IntTensor<B>; 2],
    spec: &PairSpec,
    weight: PairWeight,
) -> (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>) {
    let (m, d, c, device) = (y.shape()[0], x.shape()[1], v.shape()[1], x.device());
    let job = Job::<B>::new(&x, m, labels, spec);
    let (bd, (tr, tc)) = (job.bool_dtype, job.tiles);
    let (n, score) = (job.n, spec.score);
    let (g_out, g_stat) = (columns::<B>(&grad, 0..c), columns::<B>(&grad, c..c + 1));
    let (out, stat) = (columns::<B>(&out, 0..c), columns::<B>(&out, c..c + 1));
    let col_tiles: Vec<_> = pieces(m, tc).collect();
    let mut gy: Vec<Option<FloatTensor<B>>> = vec![None; col_tiles.len()];
    let mut gv: Vec<Option<FloatTensor<B>>> = vec![None; col_tiles.len()];
    let mut gx = Vec::new();
    for r in pieces(n, tr) {
        let xt = rows::<B>(&x, r.clone());
        let (g_out, g_stat) = (rows::<B>(&g_out, r.clone()), rows::<B>(&g_stat, r.clone()));
        // Softmax: the row's `Σ_c g · out` and its logsumexp shift.
        let row_dot = B::float_sum_dim(B::float_mul(g_out.clone(), rows::<B>(&out, r.clone())), 1);
        let lse = finite_shift::<B>(rows::<B>(&stat, r.clone()), bd);
        let mut gxt = job.zeros(Shape::new([r.len(), d]), &device);
        for k in column_tiles(&r, m, tc, &spec.column_spans) {
            let cols = &col_tiles[k];
            let tile = job.tile(r.clone(), cols.clone());
            let yt = rows::<B>(&y, cols.clone());
            let (s, e) = job.scores(&tile, &xt, &yt);
            let vt = rows::<B>(&v, cols.clone());
            let g_w = || B::float_matmul(g_out.clone(), B::float_transpose(vt.clone()));
            // The weights `w` of the tile and the gradient `ds` of its scores.
            let (w, ds) = match weight {
                PairWeight::Score => {
                    let ds = fill_ineligible::<B>(B::float_add(g_w(), g_stat.clone()), &e, 0.0);
                    (fill_ineligible::<B>(s.clone(), &e, 0.0), Some(ds))
                }
                PairWeight::One => match e {
                    Some(e) => (B::bool_into_float(e, job.float_dtype), None),
                    None => (job.ones(tile.shape(), &device), None),
                },
                PairWeight::Softmax => {
                    let logits = fill_ineligible::<B>(s.clone(), &e, f64::NEG_INFINITY);
                    let p = B::float_exp(B::float_sub(logits, lse.clone()));
                    let inner = B::float_add(B::float_sub(g_w(), row_dot.clone()), g_stat.clone());
                    (p.clone(), Some(B::float_mul(p, inner)))
                }
            };
            accumulate::<B>(
                &mut gv[k],
                B::float_matmul(B::float_transpose(w), g_out.clone()),
            );
            if let Some(ds) = ds {
                let (dx, dy) = score_grads::<B>(ds, s, xt.clone(), yt, score, bd);
                gxt = B::float_add(gxt, dx);
                accumulate::<B>(&mut gy[k], dy);
            }
        }
        gx.push(gxt);
    }
    let finish = |parts: Vec<Option<FloatTensor<B>>>, width: usize| {
        let parts: Vec<_> = parts
            .into_iter()
            .zip(&col_tiles)
            .map(|(p, cols)| {
                p.unwrap_or_else(|| job.zeros(Shape::new([cols.len(), width]), &device))
            })
            .collect();
        if parts.is_empty() {
            job.zeros(Shape::new([0, width]), &device)
        } else {
            B::float_cat(parts, 0)
        }
    };
    let gx = if gx.is_empty() {
        job.zeros(Shape::new([0, d]), &device)
    } else {
        B::float_cat(gx, 0)
    };
    (gx, finish(gy, d), finish(gv, c))
}

fn accumulate<B: Backend>(slot: &mut Option<FloatTensor<B>>, t: FloatTensor<B>) {
    *slot = Some(match slot.take() {
        Some(acc) => B::float_add(acc, t),
        None => t,
    });
}

/// The gradients of a tile's inputs `xt: [T, D]`, `yt: [T_c, D]` given the gradient `ds` of
/// its scores `s` (0 at masked-out pairs).
fn score_grads<B: Backend>(
    ds: FloatTensor<B>,
    s: FloatTensor<B>,
    xt: FloatTensor<B>,
    yt: FloatTensor<B>,
    score: PairScore,
    bd: BoolDType,
) -> (FloatTensor<B>, FloatTensor<B>) {
    let ds = match score {
        PairScore::Dot => {
            let dy = B::float_matmul(B::float_transpose(ds.clone()), xt);
            return (B::float_matmul(ds, yt), dy);
        }
        PairScore::SqEuclidean => ds,
        // d sqrt(q) = dq / (2 sqrt(q)); 0 where the distance is 0 (no direction) or unused.
        PairScore::Euclidean => {
            let zero = B::bool_or(
                B::float_equal_elem(s.clone(), Scalar::Float(0.0), bd),
                B::float_equal_elem(ds.clone(), Scalar::Float(0.0), bd),
            );
            let scaled = B::float_div(ds, B::float_mul_scalar(s, Scalar::Float(2.0)));
            B::float_mask_fill(scaled, zero, Scalar::Float(0.0))
        }
    };
    // d/dx_i Σ_j ds_ij |x_i - y_j|² = 2 (x_i Σ_j ds_ij - Σ_j ds_ij y_j), and symmetrically.
    let row_sum = B::float_sum_dim(ds.clone(), 1);
    let col_sum = B::float_transpose(B::float_sum_dim(ds.clone(), 0));
    let dx = B::float_sub(
        B::float_mul(xt.clone(), row_sum),
        B::float_matmul(ds.clone(), yt.clone()),
    );
    let dy = B::float_sub(
        B::float_mul(yt, col_sum),
        B::float_matmul(B::float_transpose(ds), xt),
    );
    let two = Scalar::Float(2.0);
    (B::float_mul_scalar(dx, two), B::float_mul_scalar(dy, two))
}
