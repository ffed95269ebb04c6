//! [`Aggregation`]: how messages arriving at a node are combined, as a value.

use std::str::FromStr;

use burn::tensor::{Int, Tensor};
use burn_gnn_graph::gather_rows;
use burn_segment::{
    segment_max_or_constant, segment_mean, segment_min_or_constant, segment_sum, segment_variance,
};

use crate::NnError;

/// How the messages of a node's incoming edges are combined (PyG's `aggr`).
///
/// Every aggregation gives finite values for nodes without incoming edges: 0 for sum, mean,
/// max, min, variance, std and power mean (max/min fill with 0 rather than `∓inf`, as PyG).
/// Parse one from `"sum"` (or `"add"`), `"mean"`, `"max"`, `"min"`, `"var"`, `"std"`,
/// `"powermean"` (p = 1) or `"powermean:P"`, `"softmax"` (t = 1) or `"softmax:T"`, or several with [`Aggregation::multi`] — their
/// outputs are concatenated along the feature dimension.
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
            other => match (
                other.strip_prefix("powermean:").map(str::parse::<f64>),
                other.strip_prefix("softmax:").map(str::parse::<f64>),
            ) {
                (Some(Ok(p)), _) if p.is_finite() && p > 0.0 => Aggregation::PowerMean(p),
                (_, Some(Ok(t))) if t.is_finite() => Aggregation::Softmax(t),
                _ => {
                    return Err(NnError::InvalidConfig(format!(
                        "unknown aggregation `{s}` (sum, mean, max, min, var, std, powermean[:P] with P > 0, softmax[:T])"
                    )));
                }
            },
        })
    }
}

/// `segment_sum` that launches nothing for zero rows (see [`burn_gnn_graph::gather_rows`]).
pub(crate) fn sum_into<const D: usize>(
    data: Tensor<D>,
    ids: Tensor<1, Int>,
    n: usize,
) -> Tensor<D> {
    if data.dims()[0] == 0 {
        let mut dims = data.dims();
        dims[0] = n;
        return Tensor::zeros(dims, (&data.device(), data.dtype()));
    }
    segment_sum(data, ids, n)
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
        let e = senders.dims()[0];
        if e == 0 {
            let d = x.dims()[1];
            return Tensor::zeros([num_nodes, d * self.width()], (&x.device(), x.dtype()));
        }
        match self {
            Aggregation::Sum => burn_segment::spmm(x, senders, receivers, None, num_nodes),
            Aggregation::Mean => {
                let deg = burn_segment::segment_count(receivers.clone(), num_nodes)
                    .float()
                    .cast(x.dtype())
                    .clamp_min(1.0);
                let w = gather_rows(deg.recip().unsqueeze_dim::<2>(1), receivers.clone());
                burn_segment::spmm(x, senders, receivers, Some(w), num_nodes)
            }
            Aggregation::Multi(list) => Tensor::cat(
                list.iter()
                    .map(|a| {
                        a.aggregate_gathered(
                            x.clone(),
                            senders.clone(),
                            receivers.clone(),
                            num_nodes,
                        )
                    })
                    .collect(),
                1,
            ),
            _ => self.aggregate(gather_rows(x, senders), receivers, num_nodes),
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
        let [rows, d] = messages.dims();
        if rows == 0 {
            // No messages: every aggregation gives 0.
            return Tensor::zeros(
                [num_nodes, d * self.width()],
                (&messages.device(), messages.dtype()),
            );
        }
        match self {
            Aggregation::Sum => segment_sum(messages, index, num_nodes),
            Aggregation::Mean => segment_mean(messages, index, num_nodes),
            Aggregation::Max => segment_max_or_constant(messages, index, num_nodes, 0.0),
            Aggregation::Min => segment_min_or_constant(messages, index, num_nodes, 0.0),
            Aggregation::Var => segment_variance(messages, index, num_nodes),
            Aggregation::Std => {
                let var = segment_variance(messages, index, num_nodes);
                let small = var.clone().lower_equal_elem(1e-5);
                var.clamp_min(1e-5).sqrt().mask_fill(small, 0.0)
            }
            Aggregation::PowerMean(p) => {
                let powered = messages.clamp(0.0, 100.0).powf_scalar(*p);
                // As Std: a clamp and a mask keep the gradient finite where the mean is 0.
                let mean = segment_mean(powered, index, num_nodes);
                let small = mean.clone().lower_equal_elem(1e-12);
                mean.clamp_min(1e-12)
                    .powf_scalar(1.0 / p)
                    .mask_fill(small, 0.0)
            }
            Aggregation::Softmax(t) => {
                let scaled = messages.clone().mul_scalar(*t);
                let weights = burn_segment::segment_softmax(scaled, index.clone(), num_nodes);
                segment_sum(messages * weights, index, num_nodes)
            }
            Aggregation::Multi(list) => Tensor::cat(
                list.iter()
                    .map(|a| a.aggregate(messages.clone(), index.clone(), num_nodes))
                    .collect(),
                1,
            ),
        }
    }
}
