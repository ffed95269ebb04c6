//! [`PnaConv`] (Corso et al., 2020).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::{Aggregation, EdgeInputs, MessagePassing, NnError};

/// How a [`PnaConv`] rescales its aggregated messages by each node's in-degree `d` (clamped to
/// 1), relative to the training graphs' average `δ` (from their degree histogram).
#[derive(Config, Debug, PartialEq, Eq, Copy)]
pub enum PnaScaler {
    /// `1`.
    Identity,
    /// `log(d + 1) / δ_log`.
    Amplification,
    /// `δ_log / log(d + 1)`.
    Attenuation,
    /// `d / δ_lin`.
    Linear,
    /// `δ_lin / d`.
    InverseLinear,
}

/// Configuration of a [`PnaConv`]; the defaults are the paper's (PyG's `PNAConv` takes them
/// explicitly).
#[derive(Config, Debug)]
pub struct PnaConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node (a multiple of `towers`).
    pub d_output: usize,
    /// In-degree histogram of the training graphs: `degree_histogram[i]` nodes have in-degree
    /// `i` ([`PnaConvConfig::in_degree_histogram`]). Gives the averages the scalers divide by.
    pub degree_histogram: Vec<u64>,
    /// The aggregators, concatenated.
    #[config(
        default = "vec![Aggregation::Mean, Aggregation::Min, Aggregation::Max, Aggregation::Std]"
    )]
    pub aggregators: Vec<Aggregation>,
    /// The scalers, each applied to every aggregator's output, concatenated.
    #[config(
        default = "vec![PnaScaler::Identity, PnaScaler::Amplification, PnaScaler::Attenuation]"
    )]
    pub scalers: Vec<PnaScaler>,
    /// Edge feature width (`None`: no edge features).
    #[config(default = "None")]
    pub edge_dim: Option<usize>,
    /// Independent towers, each with its own pre- and post-transformation.
    #[config(default = 1)]
    pub towers: usize,
    /// Linear layers (ReLU between them) of each tower's message transformation.
    #[config(default = 1)]
    pub pre_layers: usize,
    /// Linear layers (ReLU between them) of each tower's update.
    #[config(default = 1)]
    pub post_layers: usize,
    /// Split the input features between the towers instead of giving each all of them.
    #[config(default = false)]
    pub divide_input: bool,
}

/// Principal neighbourhood aggregation, [Corso et al., 2020](https://arxiv.org/abs/2004.05718)
/// (PyG's `PNAConv`), per tower `t`:
///
/// `m_ji = M_t([x_i, x_j, E e_ji])`, `a_i = ⊕_{s ∈ scalers} s(d_i) · ⊕_{agg} agg_j m_ji`,
/// `x'_i = W · ‖_t U_t([x_i, a_i])`,
///
/// `M_t` and `U_t` stacks of linear layers with ReLU between them, `⊕` concatenation, `d_i`
/// the in-degree clamped to 1.
///
/// # Shapes
/// `x: [N, d_input]`, `edge_attr: [E, edge_dim]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct PnaConv {
    /// `E`, edge features to the tower input width, with `edge_dim`.
    pub edge_encoder: Option<Linear>,
    /// `M_t`: per tower, its layers.
    pub pre_nns: Vec<Vec<Linear>>,
    /// `U_t`: per tower, its layers.
    pub post_nns: Vec<Vec<Linear>>,
    /// `W`, `[d_output, d_output]`.
    pub lin: Linear,
    /// See [`PnaConvConfig::aggregators`] (as one `Multi`).
    #[module(skip)]
    pub aggregation: Aggregation,
    /// See [`PnaConvConfig::scalers`].
    #[module(skip)]
    pub scalers: Vec<PnaScaler>,
    /// `δ_lin`, the training graphs' mean in-degree.
    pub avg_degree: f64,
    /// `δ_log`, their mean `log(d + 1)`.
    pub avg_log_degree: f64,
    /// See [`PnaConvConfig::divide_input`].
    pub divide_input: bool,
}

impl PnaConvConfig {
    /// The in-degree histogram of `graphs` (the training set's), for `degree_histogram`.
    /// Reads their receivers to the host.
    pub fn in_degree_histogram(graphs: &[GraphsTuple]) -> Vec<u64> {
        let mut histogram = Vec::new();
        for graph in graphs {
            let mut degree = vec![0usize; graph.sum_n_node()];
            let receivers = graph.receivers().clone().into_data();
            receivers
                .iter::<i64>()
                .for_each(|r| degree[r as usize] += 1);
            for d in degree {
                if histogram.len() <= d {
                    histogram.resize(d + 1, 0);
                }
                histogram[d] += 1;
            }
        }
        histogram
    }

    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] for no aggregator or scaler; `towers` 0 or not dividing
    /// `d_output` (or `d_input` with `divide_input`); 0 pre- or post-layers; a histogram
    /// without nodes, or (with a scaler other than the identity) without edges.
    pub fn check(&self) -> Result<(), NnError> {
        self.degrees().map(|_| ())
    }

    /// The average degree and log-degree of the histogram, once the configuration is checked.
    fn degrees(&self) -> Result<(f64, f64), NnError> {
        let invalid = |what: String| Err(NnError::InvalidConfig(format!("PnaConv: {what}")));
        let t = self.towers;
        if self.aggregators.is_empty() || self.scalers.is_empty() {
            return invalid("no aggregator or no scaler".into());
        }
        let splits = |d: usize| t > 0 && d.is_multiple_of(t);
        if !splits(self.d_output) || (self.divide_input && !splits(self.d_input)) {
            return invalid(format!(
                "{t} towers for {} → {}",
                self.d_input, self.d_output
            ));
        }
        if self.pre_layers == 0 || self.post_layers == 0 {
            return invalid("pre_layers and post_layers must be at least 1".into());
        }
        let nodes: u64 = self.degree_histogram.iter().sum();
        if nodes == 0 {
            return invalid("the degree histogram counts no node".into());
        }
        let mean = |f: fn(f64) -> f64| {
            let total: f64 = (self.degree_histogram.iter().enumerate())
                .map(|(d, &count)| f(d as f64) * count as f64)
                .sum();
            total / nodes as f64
        };
        let (avg_degree, avg_log_degree) = (mean(|d| d), mean(|d| (d + 1.0).ln()));
        let divides = |s: &PnaScaler| !matches!(s, PnaScaler::Identity);
        if avg_degree == 0.0 && self.scalers.iter().any(divides) {
            return invalid("a degree scaler over a histogram of isolated nodes only".into());
        }
        Ok((avg_degree, avg_log_degree))
    }

    /// A [`PnaConv`] with Burn's default `Linear` initialisation.
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> PnaConv {
        let (avg_degree, avg_log_degree) =
            self.degrees().unwrap_or_else(|e| panic!("burn-gnn: {e}"));
        let t = self.towers;
        let f_in = if self.divide_input {
            self.d_input / t
        } else {
            self.d_input
        };
        let f_out = self.d_output / t;
        let aggregation = Aggregation::Multi(self.aggregators.clone());
        let width = (aggregation.width() * self.scalers.len() + 1) * f_in;
        let stack = |first: usize, width: usize, layers: usize| -> Vec<Linear> {
            (0..layers)
                .map(|l| LinearConfig::new(if l == 0 { first } else { width }, width).init(device))
                .collect()
        };
        let message_width = if self.edge_dim.is_some() { 3 } else { 2 } * f_in;
        PnaConv {
            edge_encoder: self
                .edge_dim
                .map(|d| LinearConfig::new(d, f_in).init(device)),
            pre_nns: (0..t)
                .map(|_| stack(message_width, f_in, self.pre_layers))
                .collect(),
            post_nns: (0..t)
                .map(|_| stack(width, f_out, self.post_layers))
                .collect(),
            lin: LinearConfig::new(self.d_output, self.d_output).init(device),
            aggregation,
            scalers: self.scalers.clone(),
            avg_degree,
            avg_log_degree,
            divide_input: self.divide_input,
        }
    }
}

/// `x` through `layers`, ReLU between them.
fn mlp(layers: &[Linear], mut x: Tensor<2>) -> Tensor<2> {
    for (l, layer) in layers.iter().enumerate() {
        if l > 0 {
            x = relu(x);
        }
        x = crate::compat::linear(layer, x);
    }
    x
}

impl PnaConv {
    /// Applies the layer over `graph`, with edge features when it was built with `edge_dim`.
    ///
    /// # Shapes
    /// `x: [N, d_input]`, `edge_attr: [E, edge_dim]` -> `[N, d_output]`.
    ///
    /// # Panics
    /// If `edge_attr` is given without `edge_dim` or missing with it.
    pub fn forward(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return crate::compat::no_rows(self.lin.weight.dims()[1], &x);
        }
        let edges = match (&self.edge_encoder, edge_attr) {
            (Some(encoder), Some(e)) => Some(crate::compat::linear(encoder, e)),
            (None, None) => None,
            _ => panic!("burn-gnn: PnaConv takes edge features exactly when built with edge_dim"),
        };
        self.propagate(x, graph, edges)
    }

    /// The features each tower reads: `x`'s `t`-th block of `d_input / towers` with
    /// `divide_input`, else all of `x`.
    fn tower_x(&self, x: &Tensor<2>, t: usize) -> Tensor<2> {
        if !self.divide_input {
            return x.clone();
        }
        let [n, d_input] = x.dims();
        let f_in = d_input / self.pre_nns.len();
        x.clone().slice([0..n, t * f_in..(t + 1) * f_in])
    }

    /// The factor of `scaler` per node, `[N, 1]`.
    fn scale(&self, scaler: PnaScaler, degree: &Tensor<2>) -> Tensor<2> {
        let log = || (degree.clone() + 1.0).log();
        match scaler {
            PnaScaler::Identity => degree.ones_like(),
            PnaScaler::Amplification => log() / self.avg_log_degree,
            PnaScaler::Attenuation => log().recip() * self.avg_log_degree,
            PnaScaler::Linear => degree.clone() / self.avg_degree,
            PnaScaler::InverseLinear => degree.clone().recip() * self.avg_degree,
        }
    }
}

/// PNA over [`MessagePassing`], as PyG's `PNAConv`: per-tower messages from `[x_i | x_j | e]`,
/// the aggregators each followed by every degree scaler (PyG's `DegreeScalerAggregation`), and
/// the per-tower post-network with the final linear map as the update. The edge input is the
/// encoded edge features.
impl MessagePassing for PnaConv {
    /// Every tower's pre-network on `[x_i | x_j | e_ji]`, joined, `[E, towers · f_in]`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (x_i, x_j) = (edges.x_i(), edges.x_j());
        let encoded = edges.edge_attr();
        let messages: Vec<Tensor<2>> = (0..self.pre_nns.len())
            .map(|t| {
                let mut parts = vec![self.tower_x(&x_i, t), self.tower_x(&x_j, t)];
                parts.extend(encoded.clone());
                mlp(&self.pre_nns[t], Tensor::cat(parts, 1))
            })
            .collect();
        Tensor::cat(messages, 1)
    }

    fn aggregation(&self) -> Aggregation {
        self.aggregation.clone()
    }

    /// The aggregators, then every scaler of them, tower by tower: `[N, towers · scalers ·
    /// aggregators · f_in]`.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let x = edges.x_dst();
        let [n, d_input] = x.dims();
        let towers = self.pre_nns.len();
        let f_in = if self.divide_input {
            d_input / towers
        } else {
            d_input
        };
        let a = self.aggregation.width();
        // [N, A · T · f_in]: aggregator by aggregator, each over every tower's messages.
        let aggregated = if edges.num_edges() == 0 {
            // No messages (and no matmul over zero rows, which NdArray divides by).
            Tensor::zeros([n, a * towers * f_in], (&x.device(), x.dtype()))
        } else {
            edges.aggregate(&self.aggregation, self.message(edges))
        };
        let degree = edges
            .in_degree()
            .float()
            .cast(x.dtype())
            .clamp_min(1.0)
            .unsqueeze_dim(1);
        let scaled = (0..towers).flat_map(|t| {
            // This tower's block of every aggregator, then every scaler of all of them.
            let per_aggregator: Vec<Tensor<2>> = (0..a)
                .map(|k| {
                    let start = (k * towers + t) * f_in;
                    aggregated.clone().slice([0..n, start..start + f_in])
                })
                .collect();
            let blocks = Tensor::cat(per_aggregator, 1);
            let degree = &degree;
            self.scalers
                .iter()
                .map(move |s| blocks.clone() * self.scale(*s, degree))
        });
        Some(Tensor::cat(scaled.collect(), 1))
    }

    /// Every tower's post-network on `[x_i | its scaled aggregates]`, joined and mapped by
    /// the final linear layer.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let towers = self.post_nns.len();
        let [n, width] = aggregated.dims();
        let per_tower = width / towers;
        let outs = (0..towers).map(|t| {
            let block = aggregated
                .clone()
                .slice([0..n, t * per_tower..(t + 1) * per_tower]);
            mlp(
                &self.post_nns[t],
                Tensor::cat(vec![self.tower_x(&x_dst, t), block], 1),
            )
        });
        crate::compat::linear(&self.lin, Tensor::cat(outs.collect(), 1))
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.lin.weight.dims()[1])
    }
}
