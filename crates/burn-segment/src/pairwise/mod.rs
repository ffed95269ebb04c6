//! Streamed reductions over every pair of rows of two matrices, with pair masks: kNN and radius
//! queries, pairwise statistics and attention of every row to every other, without ever holding
//! the `[N, M]` matrix. This layer knows nothing of graphs.
//!
//! A [`Pairwise`] expression is `x: [N, D]` against `y: [M, D]` (or `x` with itself) under a
//! [`PairMetric`], optionally restricted by a [`PairMask`]; its consumers reduce along `M`, one
//! result per row of `x` (call [`Pairwise::transpose`] to reduce along `N`):
//!
//! | consumer | output | row with nothing eligible | gradient |
//! |---|---|---|---|
//! | [`sum`](Pairwise::sum) | `[N]` | 0 | to `x`, `y` |
//! | [`mean`](Pairwise::mean) | `[N]` | NaN | to `x`, `y` (0 where NaN) |
//! | [`count`](Pairwise::count) | `[N]` Int | 0 | — |
//! | [`logsumexp`](Pairwise::logsumexp) | `[N]` | `-inf` | softmax-weighted |
//! | [`softmax_matmul`](Pairwise::softmax_matmul) | `[N, C]` | 0 | to `x`, `y`, `v` |
//! | [`min`](Pairwise::min) / [`max`](Pairwise::max) | `[N]`, `[N]` Int | `±inf`, -1 | to the selected pair |
//! | [`amin`](Pairwise::amin) / [`amax`](Pairwise::amax) | `[N]` | `±inf` | to the selected pair |
//! | [`topk`](Pairwise::topk) | `[N, k]`, `[N, k]` Int | `∓inf`, -1 past the eligible rows | to the selected pairs |
//!
//! - **Ties and NaN.** Selections go to the smaller row index on ties; NaN orders above every
//!   number, so `max` and `topk(largest)` return a NaN pair first, `min` and `topk(smallest)`
//!   last; `amin` / `amax` propagate NaN (a row holding one returns NaN).
//! - **Memory.** Peak memory is `O((N + M)(D + C + k))` plus a tile of at most
//!   [`composite::TILE_ELEMENTS`] elements (recomputed in the backward pass, never stored).
//! - **Where it runs.** Sums, means, counts, logsumexp and `softmax_matmul` are one op of
//!   [`PairwiseBackend`] with a hand-written backward: CPU kernels on NdArray and Flex (f32; one
//!   task per output row or column, the same bits for any thread count), CubeCL kernels on
//!   wgpu under conjunction masks (one unit per output row or column, no atomics), the tiled
//!   composite elsewhere;
//!   selections (`min`, `max`, `amin`, `amax`, `topk`) choose their pairs with one op,
//!   [`PairwiseBackend::pairwise_select`] — on the host by default (f64 scores; one read of the
//!   inputs, a sync on a GPU), in a CubeCL kernel on wgpu for `k ≤ 32` under masks that are
//!   conjunctions of a group test, bands, one excluded band and a radius (f32 scores: pairs
//!   apart by less than f32's precision may rank as ties) — and recompute the chosen scores on
//!   the device, so gradients reach exactly the selected pairs. A `within(r)` mask is evaluated
//!   in the data's precision on the device and in f64 on the host: a pair at `r` to the last
//!   bit may be treated differently by the two.

mod backend;
pub mod composite;
mod cpu;
#[cfg(feature = "cube")]
mod cube;
mod error;
mod mask;
pub mod reference;
mod select;
mod values;

use std::sync::Arc;

use burn::tensor::{Int, Tensor};

pub use backend::{PairScore, PairSelection, PairSpec, PairWeight, PairwiseBackend};
pub use error::PairwiseError;
pub use mask::PairMask;
use values::{scores_at, unit_rows};

use burn::backend::Dispatch;

/// How two rows are compared.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, burn::serde::Serialize, burn::serde::Deserialize,
)]
#[serde(crate = "burn::serde")]
pub enum PairMetric {
    /// `Σ_d (x_d - y_d)²`.
    SqEuclidean,
    /// `sqrt(Σ_d (x_d - y_d)²)` (its gradient is 0 where the distance is 0).
    Euclidean,
    /// `x · y`.
    Dot,
    /// `x · y / (max(|x|, ε) max(|y|, ε))` with `ε = 1e-8`, as `torch.cosine_similarity`.
    Cosine,
}

/// A lazy pairwise expression: rows of `x: [N, D]` against rows of `y: [M, D]` under a metric
/// and an optional mask. Nothing is computed until a consumer is called.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_segment::pairwise::{PairMask, PairMetric, Pairwise};
/// let device = Device::flex();
/// let points = Tensor::<2>::from_floats([[0.0, 0.0], [1.0, 0.0], [5.0, 0.0]], &device);
/// let near = Pairwise::self_pairs(points, PairMetric::Euclidean).exclude_self();
/// let (dist, nearest) = near.min();
/// assert_eq!(nearest.into_data().iter::<i64>().collect::<Vec<_>>(), [1, 0, 1]);
/// assert_eq!(dist.into_data().iter::<f32>().collect::<Vec<_>>(), [1.0, 1.0, 4.0]);
/// ```
#[derive(Clone, Debug)]
pub struct Pairwise {
    x: Tensor<2>,
    y: Tensor<2>,
    metric: PairMetric,
    labels: Option<(Tensor<1, Int>, Tensor<1, Int>)>,
    mask: Option<PairMask>,
    /// With sorted labels: per row of `x`, the rows of `y` with its label (and the converse).
    spans: Option<(Spans, Spans)>,
}

/// Per row, a range `[start, end)` of the other side's rows.
type Spans = Arc<Vec<[usize; 2]>>;

/// For each label of `from`, the range of rows of the sorted `to` holding it.
fn spans(from: &[i64], to: &[i64]) -> Spans {
    let range = |l: i64| {
        [
            to.partition_point(|&t| t < l),
            to.partition_point(|&t| t <= l),
        ]
    };
    Arc::new(from.iter().map(|&l| range(l)).collect())
}

impl Pairwise {
    /// The rows of `x` against the rows of `y`.
    ///
    /// # Errors
    /// [`PairwiseError::WidthMismatch`] when the widths differ.
    pub fn new(x: Tensor<2>, y: Tensor<2>, metric: PairMetric) -> Result<Self, PairwiseError> {
        let ([_, dx], [_, dy]) = (x.dims(), y.dims());
        if dx != dy {
            return Err(PairwiseError::WidthMismatch { x: dx, y: dy });
        }
        Ok(Self {
            x,
            y,
            metric,
            labels: None,
            mask: None,
            spans: None,
        })
    }

    /// The rows of `x` against themselves.
    pub fn self_pairs(x: Tensor<2>, metric: PairMetric) -> Self {
        Self::new(x.clone(), x, metric).expect("same width")
    }

    /// The labels the group masks compare (`[N]` and `[M]`, e.g. each node's graph in a batch).
    ///
    /// # Errors
    /// [`PairwiseError::LabelLength`] when a length differs from its side's rows.
    pub fn groups(
        mut self,
        labels_x: Tensor<1, Int>,
        labels_y: Tensor<1, Int>,
    ) -> Result<Self, PairwiseError> {
        for (side, labels, rows) in [("x", &labels_x, &self.x), ("y", &labels_y, &self.y)] {
            let (got, expected) = (labels.dims()[0], rows.dims()[0]);
            if got != expected {
                return Err(PairwiseError::LabelLength {
                    side,
                    expected,
                    got,
                });
            }
        }
        let labels_y = labels_y.cast(labels_x.dtype());
        self.labels = Some((labels_x, labels_y));
        Ok(self)
    }

    /// [`groups`](Self::groups) for labels sorted in non-decreasing order (each graph's nodes
    /// contiguous, as in a batch): reads them to the host once, so that consumers under a
    /// `same_group` mask visit only the tiles of each row's own group (`O(Σ n_g²)` work
    /// instead of `O(N·M)`).
    ///
    /// # Errors
    /// As [`groups`](Self::groups), and [`PairwiseError::UnsortedGroups`].
    pub fn sorted_groups(
        self,
        labels_x: Tensor<1, Int>,
        labels_y: Tensor<1, Int>,
    ) -> Result<Self, PairwiseError> {
        let mut p = self.groups(labels_x, labels_y)?;
        let (lx, ly) = p.labels.clone().expect("just set");
        let host = |t: Tensor<1, Int>| -> Vec<i64> { t.into_data().iter::<i64>().collect() };
        let (lx, ly) = (host(lx), host(ly));
        for (side, l) in [("x", &lx), ("y", &ly)] {
            if let Some(p) = l.windows(2).position(|w| w[1] < w[0]) {
                return Err(PairwiseError::UnsortedGroups {
                    side,
                    position: p + 1,
                });
            }
        }
        p.spans = Some((spans(&lx, &ly), spans(&ly, &lx)));
        Ok(p)
    }

    /// Restricts the expression to the pairs `mask` admits (and any mask given before).
    ///
    /// # Errors
    /// [`PairwiseError::MissingGroups`] when `mask` compares labels and none were given.
    pub fn mask(mut self, mask: PairMask) -> Result<Self, PairwiseError> {
        if mask.uses_groups() && self.labels.is_none() {
            return Err(PairwiseError::MissingGroups);
        }
        self.mask = Some(match self.mask.take() {
            Some(before) => before & mask,
            None => mask,
        });
        Ok(self)
    }

    /// The same expression (metric, labels, mask) over other rows of the same counts, e.g. the
    /// next attention head's queries and keys, without reading sorted labels again.
    ///
    /// # Errors
    /// [`PairwiseError::WidthMismatch`] when the new rows differ in width, and
    /// [`PairwiseError::LabelLength`] when labels were given and the new row counts differ.
    pub fn with_rows(self, x: Tensor<2>, y: Tensor<2>) -> Result<Self, PairwiseError> {
        let mut fresh = Self::new(x, y, self.metric)?;
        if let Some((lx, ly)) = self.labels {
            fresh = fresh.groups(lx, ly)?;
        }
        (fresh.mask, fresh.spans) = (self.mask, self.spans);
        Ok(fresh)
    }

    /// Removes the pairs `i == j` (a row and itself, for [`self_pairs`](Self::self_pairs)).
    pub fn exclude_self(self) -> Self {
        self.mask(!PairMask::diagonal()).expect("no labels needed")
    }

    /// The expression with the roles of `x` and `y` swapped: its consumers reduce along `N`,
    /// one result per row of `y`.
    pub fn transpose(self) -> Self {
        Self {
            x: self.y,
            y: self.x,
            metric: self.metric,
            labels: self.labels.map(|(a, b)| (b, a)),
            mask: self.mask.map(|m| m.transpose()),
            spans: self.spans.map(|(a, b)| (b, a)),
        }
    }

    /// The number of rows of `x` and of `y`.
    pub fn dims(&self) -> (usize, usize) {
        (self.x.dims()[0], self.y.dims()[0])
    }

    /// The inputs as the kernels see them (cosine: normalised rows and a dot product), the
    /// spec and the labels.
    fn prepared(&self) -> (Tensor<2>, Tensor<2>, PairSpec, [Tensor<1, Int>; 2]) {
        let (x, y, score) = match self.metric {
            PairMetric::SqEuclidean => (self.x.clone(), self.y.clone(), PairScore::SqEuclidean),
            PairMetric::Euclidean => (self.x.clone(), self.y.clone(), PairScore::Euclidean),
            PairMetric::Dot => (self.x.clone(), self.y.clone(), PairScore::Dot),
            PairMetric::Cosine => (unit_rows(&self.x), unit_rows(&self.y), PairScore::Dot),
        };
        let grouped = self.mask.as_ref().is_some_and(|m| m.requires_same_group());
        let spec = PairSpec {
            score,
            mask: self.mask.clone(),
            column_spans: self.spans.as_ref().filter(|_| grouped).map(|s| s.0.clone()),
        };
        let labels = match &self.labels {
            Some((a, b)) => [a.clone(), b.clone()],
            None => {
                let (n, m) = self.dims();
                let device = self.x.device();
                [Tensor::zeros([n], &device), Tensor::zeros([m], &device)]
            }
        };
        (x, y, spec, labels)
    }

    /// `[N, C + 1]` of [`PairwiseBackend::pairwise_matmul`] with `v` (ones when `None`).
    fn matmul(&self, v: Option<Tensor<2>>, weight: PairWeight) -> Tensor<2> {
        let (x, y, spec, [lx, ly]) = self.prepared();
        let v = v.unwrap_or_else(|| Tensor::ones([self.dims().1, 1], &x.device()));
        Tensor::from_dispatch(Dispatch::pairwise_matmul(
            x.into_dispatch(),
            y.into_dispatch(),
            v.into_dispatch(),
            lx.into_dispatch(),
            ly.into_dispatch(),
            spec,
            weight,
        ))
    }

    /// The last column of a `matmul` output: the weight's statistic per row.
    fn statistic(&self, weight: PairWeight) -> Tensor<1> {
        let out = self.matmul(None, weight);
        let [n, c] = out.dims();
        out.slice([0..n, c - 1..c]).reshape([n])
    }

    /// `Σ_j s_ij` over each row's eligible pairs, `[N]`.
    pub fn sum(&self) -> Tensor<1> {
        self.statistic(PairWeight::Score)
    }

    /// The number of eligible pairs of each row, `[N]` Int (exact below 2²⁴ pairs per row).
    pub fn count(&self) -> Tensor<1, Int> {
        self.statistic(PairWeight::One).detach().int()
    }

    /// The mean score over each row's eligible pairs, `[N]` (NaN where there are none).
    pub fn mean(&self) -> Tensor<1> {
        let count = self.statistic(PairWeight::One).detach();
        let empty = count.clone().equal_elem(0.0);
        let mean = self.sum() / count.clamp_min(1.0);
        mean.mask_fill(empty, f32::NAN)
    }

    /// `log Σ_j exp(s_ij)` over each row's eligible pairs, `[N]` (`-inf` where there are none).
    pub fn logsumexp(&self) -> Tensor<1> {
        self.statistic(PairWeight::Softmax)
    }

    /// `Σ_j softmax_j(s_ij) v_j` over each row's eligible pairs: attention with the scores as
    /// logits, `v: [M, C] -> [N, C]` (0 where nothing is eligible, with zero gradient).
    ///
    /// # Errors
    /// [`PairwiseError::ValueRows`] when `v` does not have `M` rows.
    pub fn softmax_matmul(&self, v: Tensor<2>) -> Result<Tensor<2>, PairwiseError> {
        let ([got, c], m) = (v.dims(), self.dims().1);
        if got != m {
            return Err(PairwiseError::ValueRows { expected: m, got });
        }
        let out = self.matmul(Some(v), PairWeight::Softmax);
        let n = out.dims()[0];
        Ok(out.slice([0..n, 0..c]))
    }

    /// The `k` largest (or smallest) scores of each row and their columns, `[N, k]` each: ties
    /// to the smaller column, NaN above every number, `∓inf` and -1 past the eligible pairs.
    pub fn topk(&self, k: usize, largest: bool) -> (Tensor<2>, Tensor<2, Int>) {
        self.selected(PairSelection {
            k,
            largest,
            nan_wins: false,
        })
    }

    /// The columns [`topk`](Self::topk) selects, `[N, k]` Int, without forming their values
    /// (what a graph constructor needs; no gradient).
    pub fn topk_columns(&self, k: usize, largest: bool) -> Tensor<2, Int> {
        let sel = PairSelection {
            k,
            largest,
            nan_wins: false,
        };
        let (x, y, spec, labels) = self.prepared();
        self.columns(&x, &y, &spec, labels, sel)
    }

    /// The smallest score of each row and its column (NaN only if every eligible pair is).
    pub fn min(&self) -> (Tensor<1>, Tensor<1, Int>) {
        self.first(false, false)
    }

    /// The largest score of each row and its column (NaN if any eligible pair is).
    pub fn max(&self) -> (Tensor<1>, Tensor<1, Int>) {
        self.first(true, false)
    }

    /// The smallest score of each row, NaN if any eligible pair is NaN.
    pub fn amin(&self) -> Tensor<1> {
        self.first(false, true).0
    }

    /// The largest score of each row, NaN if any eligible pair is NaN.
    pub fn amax(&self) -> Tensor<1> {
        self.first(true, false).0
    }

    fn first(&self, largest: bool, nan_wins: bool) -> (Tensor<1>, Tensor<1, Int>) {
        let n = self.dims().0;
        let (values, columns) = self.selected(PairSelection {
            k: 1,
            largest,
            nan_wins,
        });
        (values.reshape([n]), columns.reshape([n]))
    }

    /// The pairs the backend op chooses, their scores recomputed on the device.
    fn selected(&self, sel: PairSelection) -> (Tensor<2>, Tensor<2, Int>) {
        let (x, y, spec, labels) = self.prepared();
        let columns = self.columns(&x, &y, &spec, labels, sel);
        let fill = if sel.largest {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        let values = scores_at(&x, &y, &columns, spec.score);
        (
            values.mask_fill(columns.clone().equal_elem(-1), fill),
            columns,
        )
    }

    /// The columns the backend op chooses, `[N, k]` Int in the labels' dtype (-1 past the
    /// eligible pairs).
    fn columns(
        &self,
        x: &Tensor<2>,
        y: &Tensor<2>,
        spec: &PairSpec,
        [lx, ly]: [Tensor<1, Int>; 2],
        sel: PairSelection,
    ) -> Tensor<2, Int> {
        let ([n, _], m, device, dtype) = (x.dims(), self.dims().1, x.device(), lx.dtype());
        if n == 0 || sel.k == 0 || m == 0 {
            return Tensor::full([n, sel.k], -1, (&device, dtype));
        }
        let [x, y] = [x, y].map(|t| t.clone().detach().into_dispatch());
        let (lx, ly) = (lx.into_dispatch(), ly.into_dispatch());
        Tensor::from_dispatch(Dispatch::pairwise_select(x, y, lx, ly, spec.clone(), sel))
    }
}
