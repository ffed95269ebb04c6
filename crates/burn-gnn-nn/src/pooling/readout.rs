//! Learned readouts: [`AttentionPool`] and [`Set2Set`]; and [`SoftmaxAggregation`] with a
//! learnable temperature.

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig, Lstm, LstmConfig, LstmState};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::{SegmentIds, Segments};

use crate::aggregation::{sum_into, sum_with};

/// Configuration of an [`AttentionPool`].
#[derive(Config, Debug)]
pub struct AttentionPoolConfig {
    /// Node features.
    pub d_input: usize,
    /// Output features; `None` keeps `d_input` and pools the raw features.
    #[config(default = "None")]
    pub d_output: Option<usize>,
}

/// Global attention pooling, [Li et al., ICLR 2016](https://arxiv.org/abs/1511.05493) (PyG's
/// `AttentionalAggregation` with linear gate and feature maps):
/// `r_g = Σ_{i ∈ g} softmax_{i ∈ g}(w_gateᵀ x_i + b) · f(x_i)`, `f` linear or the identity;
/// 0 for graphs without nodes.
///
/// # Shapes
/// `x: [sum_n_node, d_input]` -> `[n_graph, d_output]`.
#[derive(Module, Debug)]
pub struct AttentionPool {
    /// Gate, `d_input -> 1`.
    pub gate: Linear,
    /// Feature map; `None` for the identity.
    pub feature: Option<Linear>,
}

impl AttentionPoolConfig {
    /// An [`AttentionPool`].
    pub fn init(&self, device: &Device) -> AttentionPool {
        AttentionPool {
            gate: LinearConfig::new(self.d_input, 1).init(device),
            feature: self
                .d_output
                .map(|d| LinearConfig::new(self.d_input, d).init(device)),
        }
    }
}

impl AttentionPool {
    /// Pools each graph's nodes.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let width = self
            .feature
            .as_ref()
            .map_or(x.dims()[1], |f| f.weight.dims()[1]);
        if x.dims()[0] == 0 {
            return Tensor::zeros([graph.n_graph(), width], (&x.device(), x.dtype()));
        }
        let graphs = graph.node_graph_plan();
        let weights = graphs.softmax(self.gate.forward(x.clone()));
        let features = match &self.feature {
            Some(f) => f.forward(x),
            None => x,
        };
        sum_with(features * weights, graphs)
    }
}

/// Configuration of a [`Set2Set`].
#[derive(Config, Debug)]
pub struct Set2SetConfig {
    /// Node features `D`.
    pub d_input: usize,
    /// Processing steps.
    pub steps: usize,
}

/// Set2Set readout, [Vinyals et al., ICLR 2016](https://arxiv.org/abs/1511.06391), as PyG:
/// `q_t = LSTM(q*_{t−1})`, `a_i = softmax_{i ∈ g}(x_i · q_{t,g})`, `r_t = Σ a_i x_i`,
/// `q*_t = [q_t, r_t]`; returns `q*_T`, starting from `q*_0 = 0`.
///
/// # Shapes
/// `x: [sum_n_node, D]` -> `[n_graph, 2D]`.
#[derive(Module, Debug)]
pub struct Set2Set {
    /// The LSTM, `2D -> D`.
    pub lstm: Lstm,
    /// Processing steps.
    pub steps: usize,
}

impl Set2SetConfig {
    /// A [`Set2Set`].
    pub fn init(&self, device: &Device) -> Set2Set {
        Set2Set {
            lstm: LstmConfig::new(2 * self.d_input, self.d_input, true).init(device),
            steps: self.steps,
        }
    }
}

impl Set2Set {
    /// Pools each graph's nodes.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let [n, d] = x.dims();
        let g = graph.n_graph();
        let device = x.device();
        let mut q_star = Tensor::<2>::zeros([g, 2 * d], (&device, x.dtype()));
        if g == 0 {
            return q_star;
        }
        let graphs = graph.node_graph_plan();
        let mut state: Option<LstmState<2>> = None;
        for _ in 0..self.steps {
            let (out, next) = self.lstm.forward(q_star.clone().unsqueeze_dim(1), state);
            state = Some(next);
            let q = out.reshape([g, d]);
            let r = if n == 0 {
                Tensor::zeros([g, d], (&device, x.dtype()))
            } else {
                let e = (x.clone() * graphs.gather(q.clone())).sum_dim(1);
                let a = graphs.softmax(e);
                sum_with(x.clone() * a, graphs)
            };
            q_star = Tensor::cat(vec![q, r], 1);
        }
        q_star
    }
}

/// Softmax aggregation with a temperature, [Li et al., 2020](https://arxiv.org/abs/2006.07739)
/// (PyG's `SoftmaxAggregation` with one channel):
/// `out_i = Σ_j softmax_j(t · m_j) ⊙ m_j`, column-wise; `t` learnable or fixed. 0 for nodes
/// without messages. `t → 0` gives the mean, `t → ∞` the max.
#[derive(Module, Debug)]
pub struct SoftmaxAggregation {
    /// `t`, `[1]` (learnable when built with `learn = true`).
    pub t: Param<Tensor<1>>,
    /// Whether `t` is learned (otherwise detached).
    pub learn: bool,
}

impl SoftmaxAggregation {
    /// A softmax aggregation with temperature `t`.
    pub fn new(t: f64, learn: bool, device: &Device) -> Self {
        SoftmaxAggregation {
            t: Param::from_tensor(Tensor::from_floats([t as f32], device)),
            learn,
        }
    }

    /// Combines the rows of `messages` by destination.
    ///
    /// # Shapes
    /// `messages: [E, D]`, `index: [E]` -> `[num_nodes, D]`.
    pub fn aggregate(
        &self,
        messages: Tensor<2>,
        index: Tensor<1, Int>,
        num_nodes: usize,
    ) -> Tensor<2> {
        if messages.dims()[0] == 0 {
            return sum_into(messages, index, num_nodes);
        }
        let t = if self.learn {
            self.t.val()
        } else {
            self.t.val().detach()
        };
        let index = SegmentIds::new(index, num_nodes);
        let weights = index.softmax(messages.clone() * t.unsqueeze_dim(0));
        sum_with(messages * weights, &index)
    }
}
