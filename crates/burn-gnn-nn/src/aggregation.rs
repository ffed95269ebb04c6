//! [`Aggregation`]: how messages arriving at a node are combined, as a value.

use std::str::FromStr;

use burn::tensor::{Int, Tensor};
use burn_segment::{
    QuantileInterpolation, SegmentIds, SegmentStatistics, SegmentWeights, Segments,
};

use crate::NnError;

/// How the messages of a node's incoming edges are combined (PyG's `aggr`).
///
/// Every aggregation gives finite values for nodes without incoming edges: 0 for sum, mean,
/// max, min, variance, std and power mean (max/min fill with 0 rather than `∓inf`, as PyG).
/// Parse one from `"sum"` (or `"add"`), `"mean"`, `"max"`, `"min"`, `"var"`, `"std"`,
/// `"var:C"` / `"std:C"` (correction `C`), `"median"`, `"quantile:Q"` or
/// `"quantile:Q:linear|lower|higher|nearest|midpoint"`, `"sort:K"`, `"powermean"` (p = 1) or
/// `"powermean:P"`, `"softmax"` (t = 1) or `"softmax:T"`, or several with
/// [`Aggregation::multi`] — their outputs are concatenated along the feature dimension.
///
/// ```
/// use burn_gnn_nn::Aggregation;
/// assert_eq!("mean".parse::<Aggregation>().unwrap(), Aggregation::Mean);
/// let both = Aggregation::multi(&["mean", "max"]).unwrap();
/// assert_eq!(both.width(), 2);
/// ```
#[derive(burn::config::Config, Debug, PartialEq)]
pub enum Aggregation {
    /// `Σ_j m_j`.
    Sum,
    /// `Σ_j m_j / deg`.
    Mean,
    /// Column-wise maximum, 0 without messages.
    Max,
    /// Column-wise minimum, 0 without messages.
    Min,
    /// Population variance `mean(m²) − mean(m)²` (computed centred), 0 without messages.
    Var,
    /// `sqrt(var)`, clamped as PyG's `StdAggregation`: variances below `1e-5` give 0, so the
    /// gradient stays finite when all messages are equal.
    Std,
    /// Power mean `(mean_j clamp(m_j, 0, 100)^p)^(1/p)`, PyG's `PowerMeanAggregation` with a
    /// fixed `p`.
    PowerMean(f64),
    /// Softmax-weighted sum `Σ_j softmax_j(t · m_j) ⊙ m_j` with a fixed temperature `t`
    /// (column-wise); for a learnable `t` use [`SoftmaxAggregation`](crate::SoftmaxAggregation).
    Softmax(f64),
    /// Variance with a correction (`var:C`; see
    /// [`segment_variance_corrected`](burn_segment::segment_variance_corrected)), 0 for a node
    /// with at most `C` messages.
    VarCorrected(usize),
    /// `sqrt` of [`VarCorrected`](Self::VarCorrected), clamped as [`Std`](Self::Std).
    StdCorrected(usize),
    /// The lower median of the messages, column-wise (PyG's `MedianAggregation`), 0 without
    /// messages.
    Median,
    /// The `q`-quantile of the messages, column-wise, with an interpolation (PyG's
    /// `QuantileAggregation`), 0 without messages. `0 ≤ q ≤ 1`.
    Quantile(f64, QuantileInterpolation),
    /// The `k` messages with the largest last feature, concatenated (PyG's `SortAggregation`):
    /// width `k · D`, zero-padded for nodes with fewer messages.
    Sort(usize),
    /// Several aggregations, concatenated along dim 1 in order.
    Multi(Vec<Aggregation>),
}

impl FromStr for Aggregation {
    type Err = NnError;

    fn from_str(s: &str) -> Result<Self, NnError> {
        let name = s.trim().to_ascii_lowercase();
        Ok(match name.as_str() {
            "sum" | "add" => Aggregation::Sum,
            "mean" => Aggregation::Mean,
            "max" => Aggregation::Max,
            "min" => Aggregation::Min,
            "var" | "variance" => Aggregation::Var,
            "std" => Aggregation::Std,
            "powermean" => Aggregation::PowerMean(1.0),
            "softmax" => Aggregation::Softmax(1.0),
            "median" => Aggregation::Median,
            other => parse_with_argument(other).ok_or_else(|| {
                NnError::InvalidConfig(format!(
                    "unknown aggregation `{s}` (sum, mean, max, min, var[:C], std[:C], median, \
                     quantile:Q[:linear|lower|higher|nearest|midpoint] with 0 <= Q <= 1, \
                     sort:K with K > 0, powermean[:P] with P > 0, softmax[:T])"
                ))
            })?,
        })
    }
}

/// The aggregations written `name:argument` (`var:1`, `quantile:0.9:lower`, `sort:30`, ...).
fn parse_with_argument(s: &str) -> Option<Aggregation> {
    let (name, rest) = s.split_once(':')?;
    let count = || rest.parse::<usize>().ok();
    Some(match name {
        "var" | "variance" => Aggregation::VarCorrected(count()?),
        "std" => Aggregation::StdCorrected(count()?),
        "sort" => Aggregation::Sort(count().filter(|&k| k > 0)?),
        "powermean" => Aggregation::PowerMean(
            rest.parse()
                .ok()
                .filter(|p: &f64| *p > 0.0 && p.is_finite())?,
        ),
        "softmax" => Aggregation::Softmax(rest.parse().ok().filter(|t: &f64| t.is_finite())?),
        "quantile" => {
            let (q, interp) = rest.split_once(':').unwrap_or((rest, "linear"));
            let q: f64 = q.parse().ok().filter(|q| (0.0..=1.0).contains(q))?;
            let interp = match interp {
                "linear" => QuantileInterpolation::Linear,
                "lower" => QuantileInterpolation::Lower,
                "higher" => QuantileInterpolation::Higher,
                "nearest" => QuantileInterpolation::Nearest,
                "midpoint" => QuantileInterpolation::Midpoint,
                _ => return None,
            };
            Aggregation::Quantile(q, interp)
        }
        _ => return None,
    })
}

/// `value` with NaN replaced by 0: a statistic of too few messages (the aggregations' rule is a
/// finite 0 for nodes without messages).
fn nan_to_zero(value: Tensor<2>) -> Tensor<2> {
    value.clone().mask_fill(value.is_nan(), 0.0)
}

/// `sqrt(var)` clamped as PyG's `StdAggregation`: variances below `1e-5` give 0, so the
/// gradient stays finite when all messages are equal.
fn clamped_std(var: Tensor<2>) -> Tensor<2> {
    let small = var.clone().lower_equal_elem(1e-5);
    var.clamp_min(1e-5).sqrt().mask_fill(small, 0.0)
}

/// `segment_sum` that launches nothing for zero rows (see [`burn_gnn_graph::gather_rows`]).
pub(crate) fn sum_into<const D: usize>(
    data: Tensor<D>,
    ids: Tensor<1, Int>,
    n: usize,
) -> Tensor<D> {
    sum_with(data, &SegmentIds::new(ids, n))
}

/// [`sum_into`] over planned (or per-call) ids.
pub(crate) fn sum_with<const D: usize>(data: Tensor<D>, index: &impl Segments) -> Tensor<D> {
    if data.dims()[0] == 0 {
        let mut dims = data.dims();
        dims[0] = index.num_segments();
        return Tensor::zeros(dims, (&data.device(), data.dtype()));
    }
    index.sum(data)
}

impl Aggregation {
    /// Several aggregations by name, concatenated.
    ///
    /// # Errors
    /// An unknown name, or an empty list.
    pub fn multi(names: &[&str]) -> Result<Aggregation, NnError> {
        if names.is_empty() {
            return Err(NnError::InvalidConfig(
                "an empty list of aggregations".into(),
            ));
        }
        Ok(Aggregation::Multi(
            names.iter().map(|n| n.parse()).collect::<Result<_, _>>()?,
        ))
    }

    /// How many times the input width the output is (1, or the number of aggregations of a
    /// [`Aggregation::Multi`]).
    pub fn width(&self) -> usize {
        match self {
            Aggregation::Multi(list) => list.iter().map(Aggregation::width).sum(),
            Aggregation::Sort(k) => *k,
            _ => 1,
        }
    }

    /// [`aggregate`](Self::aggregate) of the messages `x[senders]` into the `receivers`,
    /// fused where the aggregation allows: sums and means run as one
    /// [`spmm`](burn_segment::spmm) without forming the `[E, D]` messages (a mean weighs each
    /// edge by `1 / in-degree`); the others gather first.
    ///
    /// # Shapes
    /// `x: [N_src, D]`, `senders`, `receivers: [E]` -> `[num_nodes, D * width()]`.
    pub fn aggregate_gathered(
        &self,
        x: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
        num_nodes: usize,
    ) -> Tensor<2> {
        let n_src = x.dims()[0];
        let senders = SegmentIds::new(senders, n_src);
        self.aggregate_gathered_with(x, &senders, &SegmentIds::new(receivers, num_nodes))
    }

    /// [`aggregate_gathered`](Self::aggregate_gathered) over planned (or per-call) indices: the
    /// senders' segments are the rows of `x`, the receivers' the output rows.
    ///
    /// # Shapes
    /// `x: [N_src, D]`, indices of `E` rows -> `[receivers.num_segments(), D * width()]`.
    pub fn aggregate_gathered_with<S: Segments>(
        &self,
        x: Tensor<2>,
        senders: &S,
        receivers: &S,
    ) -> Tensor<2> {
        let num_nodes = receivers.num_segments();
        if senders.num_rows() == 0 {
            let d = x.dims()[1];
            return Tensor::zeros([num_nodes, d * self.width()], (&x.device(), x.dtype()));
        }
        match self {
            Aggregation::Sum => S::spmm(x, senders, receivers, None),
            Aggregation::Mean => {
                let deg = receivers.count().float().cast(x.dtype()).clamp_min(1.0);
                let w = receivers.gather(deg.recip().unsqueeze_dim::<2>(1));
                S::spmm(x, senders, receivers, Some(w))
            }
            Aggregation::Multi(list) => Tensor::cat(
                list.iter()
                    .map(|a| a.aggregate_gathered_with(x.clone(), senders, receivers))
                    .collect(),
                1,
            ),
            _ => self.aggregate_with(senders.gather(x), receivers),
        }
    }

    /// Combines the rows of `messages` by destination.
    ///
    /// # Shapes
    /// `messages: [E, D]`, `index: [E]` (destination node of each message) ->
    /// `[num_nodes, D * width()]`.
    pub fn aggregate(
        &self,
        messages: Tensor<2>,
        index: Tensor<1, Int>,
        num_nodes: usize,
    ) -> Tensor<2> {
        self.aggregate_with(messages, &SegmentIds::new(index, num_nodes))
    }

    /// [`aggregate`](Self::aggregate) over planned (or per-call) destinations.
    ///
    /// # Shapes
    /// `messages: [E, D]`, `index` of `E` rows -> `[index.num_segments(), D * width()]`.
    pub fn aggregate_with<S: Segments>(&self, messages: Tensor<2>, index: &S) -> Tensor<2> {
        let [rows, d] = messages.dims();
        let num_nodes = index.num_segments();
        if rows == 0 || d == 0 || self.width() == 0 {
            // No messages (or no features, or `sort:0`): every aggregation gives 0.
            return Tensor::zeros(
                [num_nodes, d * self.width()],
                (&messages.device(), messages.dtype()),
            );
        }
        match self {
            Aggregation::Sum => index.sum(messages),
            Aggregation::Mean => index.mean(messages),
            Aggregation::Max => index.max_or_constant(messages, 0.0),
            Aggregation::Min => index.min_or_constant(messages, 0.0),
            Aggregation::Var => index.variance(messages),
            Aggregation::Std => clamped_std(index.variance(messages)),
            Aggregation::VarCorrected(c) => nan_to_zero(index.variance_corrected(messages, *c)),
            Aggregation::StdCorrected(c) => {
                clamped_std(nan_to_zero(index.variance_corrected(messages, *c)))
            }
            Aggregation::Median => nan_to_zero(index.median(messages)),
            Aggregation::Quantile(q, interp) => {
                let value = index.quantile(messages, *q, *interp).unwrap_or_else(|e| {
                    panic!("burn-gnn: {e} (build the aggregation by parsing to check it)")
                });
                nan_to_zero(value)
            }
            Aggregation::Sort(k) => {
                let last = messages.clone().slice([0..rows, d - 1..d]);
                let (_, picked) = index.topk(last, *k, true); // [N, k, 1]
                let picked = picked.reshape([num_nodes * k]);
                let missing = picked.clone().equal_elem(-1).unsqueeze_dim::<2>(1);
                let rows = burn_gnn_graph::gather_rows(messages, picked.clamp_min(0));
                rows.mask_fill(missing.expand([num_nodes * k, d]), 0.0)
                    .reshape([num_nodes, k * d])
            }
            Aggregation::PowerMean(p) => {
                let powered = messages.clamp(0.0, 100.0).powf_scalar(*p);
                // As Std: a clamp and a mask keep the gradient finite where the mean is 0.
                let mean = index.mean(powered);
                let small = mean.clone().lower_equal_elem(1e-12);
                mean.clamp_min(1e-12)
                    .powf_scalar(1.0 / p)
                    .mask_fill(small, 0.0)
            }
            Aggregation::Softmax(t) => {
                let scaled = messages.clone().mul_scalar(*t);
                let weights = index.softmax(scaled);
                index.sum(messages * weights)
            }
            Aggregation::Multi(list) => Tensor::cat(
                list.iter()
                    .map(|a| a.aggregate_with(messages.clone(), index))
                    .collect(),
                1,
            ),
        }
    }

    /// [`aggregate_with`](Self::aggregate_with) with a nonnegative weight per message (edge
    /// weights, checked once by [`SegmentWeights::new`]): `sum` is `Σ_j w_j m_j`, `mean`
    /// `Σ_j w_j m_j / Σ_j w_j`, `var:C` / `std:C` (and `var` / `std`, `C = 0`) the weighted
    /// variance over the total weight minus `C` (see
    /// [`SegmentStatistics::weighted_variance`](burn_segment::SegmentStatistics::weighted_variance)) — each 0 for a
    /// node whose weights total 0 (or at most `C`), as for a node without messages — and
    /// [`Multi`](Self::Multi) of these.
    ///
    /// # Shapes
    /// `messages: [E, D]`, `weights: [E]`, `index` of `E` rows -> `[index.num_segments(),
    /// D * width()]`.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] naming an aggregation without a weighted form (max, min,
    /// median, quantile, sort, power mean, softmax).
    pub fn aggregate_weighted_with<S: Segments>(
        &self,
        messages: Tensor<2>,
        weights: &SegmentWeights,
        index: &S,
    ) -> Result<Tensor<2>, NnError> {
        let [rows, d] = messages.dims();
        let num_nodes = index.num_segments();
        let weighted =
            |c: usize| nan_to_zero(index.weighted_variance(messages.clone(), weights, c));
        Ok(match self {
            Aggregation::Multi(list) => Tensor::cat(
                list.iter()
                    .map(|a| a.aggregate_weighted_with(messages.clone(), weights, index))
                    .collect::<Result<_, _>>()?,
                1,
            ),
            Aggregation::Sum
            | Aggregation::Mean
            | Aggregation::Var
            | Aggregation::Std
            | Aggregation::VarCorrected(_)
            | Aggregation::StdCorrected(_)
                if rows == 0 || d == 0 =>
            {
                Tensor::zeros([num_nodes, d], (&messages.device(), messages.dtype()))
            }
            Aggregation::Sum => {
                let w = weights
                    .weights()
                    .clone()
                    .cast(messages.dtype())
                    .unsqueeze_dim(1);
                index.sum(messages.clone() * w)
            }
            Aggregation::Mean => nan_to_zero(index.weighted_mean(messages.clone(), weights)),
            Aggregation::Var => weighted(0),
            Aggregation::Std => clamped_std(weighted(0)),
            Aggregation::VarCorrected(c) => weighted(*c),
            Aggregation::StdCorrected(c) => clamped_std(weighted(*c)),
            other => {
                return Err(NnError::InvalidConfig(format!(
                    "the aggregation {other:?} has no weighted form (sum, mean, var[:C], std[:C])"
                )));
            }
        })
    }
}
