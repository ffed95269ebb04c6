//! [`GineConv`] (GIN with edge features) and [`EdgeConv`] (dynamic graph CNN).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use super::gin::gin_root;
use crate::{Aggregation, EdgeInputs, MessagePassing};

/// A two-layer perceptron `Linear → ReLU → Linear`.
fn mlp(first: &Linear, second: &Linear, x: Tensor<2>) -> Tensor<2> {
    if x.dims()[0] == 0 {
        return crate::compat::no_rows(second.weight.dims()[1], &x);
    }
    crate::compat::linear(second, relu(crate::compat::linear(first, x)))
}

/// Configuration of a [`GineConv`]; `eps`/`train_eps` default as PyG's `GINEConv`.
#[derive(Config, Debug)]
pub struct GineConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Hidden width of the MLP.
    pub d_hidden: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Edge feature width; when it differs from `d_input`, a linear map brings edge features to
    /// `d_input` (PyG's `edge_dim`).
    pub d_edge: usize,
    /// Initial `ε`.
    #[config(default = 0.0)]
    pub eps: f64,
    /// Learn `ε`.
    #[config(default = false)]
    pub train_eps: bool,
}

/// GINE, [Hu et al., ICLR 2020](https://arxiv.org/abs/1905.12265):
/// `x'_i = MLP((1 + ε) x_i + Σ_j ReLU(x_j + W_e e_ji))`.
///
/// # Shapes
/// `x: [N, d_input]`, `edge_attr: [E, d_edge]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GineConv {
    /// `W_e` (with bias); `None` when `d_edge == d_input`.
    pub lin_edge: Option<Linear>,
    /// First MLP layer.
    pub mlp_in: Linear,
    /// Second MLP layer.
    pub mlp_out: Linear,
    /// The learned `ε`, or `None` when fixed.
    pub eps: Option<Param<Tensor<1>>>,
    /// The fixed `ε`.
    pub eps_fixed: f64,
}

impl GineConvConfig {
    /// A [`GineConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> GineConv {
        GineConv {
            lin_edge: (self.d_edge != self.d_input)
                .then(|| LinearConfig::new(self.d_edge, self.d_input).init(device)),
            mlp_in: LinearConfig::new(self.d_input, self.d_hidden).init(device),
            mlp_out: LinearConfig::new(self.d_hidden, self.d_output).init(device),
            eps: super::gin::trainable_eps(self.train_eps, self.eps, device),
            eps_fixed: self.eps,
        }
    }
}

impl GineConv {
    /// Applies the layer over `graph` with edge features.
    ///
    /// # Shapes
    /// `x: [N, d_input]`, `edge_attr: [E, d_edge]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple, edge_attr: Tensor<2>) -> Tensor<2> {
        self.propagate(x, graph, Some(edge_attr))
    }
}

impl MessagePassing for GineConv {
    /// `ReLU(x_j + W_e e_ji)`.
    ///
    /// # Panics
    /// Without `edge_attr`: GINE's messages need edge features ([`GineConv::forward`] takes
    /// them).
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let e = edges
            .edge_attr()
            .expect("GineConv needs edge features: pass edge_attr");
        let e = match &self.lin_edge {
            Some(lin) => crate::compat::linear(lin, e),
            None => e,
        };
        relu(edges.x_j() + e)
    }

    /// Zeros without edges (the edge map never runs on zero rows); otherwise `None`, the sum
    /// of the messages.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        (edges.num_edges() == 0).then(|| super::no_messages(edges, self.mlp_in.weight.dims()[0]))
    }

    /// `MLP((1 + ε) x_i + aggregated)`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let h = gin_root(&self.eps, self.eps_fixed, x_dst) + aggregated;
        mlp(&self.mlp_in, &self.mlp_out, h)
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.mlp_out.weight.dims()[1])
    }
}

/// Configuration of an [`EdgeConv`].
#[derive(Config, Debug)]
pub struct EdgeConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Hidden width of the MLP.
    pub d_hidden: usize,
    /// Output features per node.
    pub d_output: usize,
    /// The aggregation (PyG's default, max); one that widens the output
    /// ([`Aggregation::Multi`]) is refused by `init`.
    #[config(default = "Aggregation::Max")]
    pub aggr: Aggregation,
}

/// EdgeConv, [Wang et al., ACM TOG 2019](https://arxiv.org/abs/1801.07829):
/// `x'_i = max_{j ∈ N(i)} h([x_i, x_j − x_i])` with `h = Linear → ReLU → Linear` on `2·d_input`
/// inputs; 0 for nodes without incoming edges.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct EdgeConv {
    /// First MLP layer (`2·d_input -> d_hidden`).
    pub mlp_in: Linear,
    /// Second MLP layer.
    pub mlp_out: Linear,
    /// The aggregation.
    #[module(skip)]
    pub aggr: Aggregation,
}

impl EdgeConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`](crate::NnError::InvalidConfig) for an aggregation that widens
    /// the output ([`Aggregation::Multi`]).
    pub fn check(&self) -> Result<(), crate::NnError> {
        if self.aggr.width() != 1 {
            return Err(crate::NnError::InvalidConfig(
                "EdgeConv takes a single aggregation".into(),
            ));
        }
        Ok(())
    }

    /// An [`EdgeConv`].
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> EdgeConv {
        crate::error::expect_valid(self.check());
        EdgeConv {
            mlp_in: LinearConfig::new(2 * self.d_input, self.d_hidden).init(device),
            mlp_out: LinearConfig::new(self.d_hidden, self.d_output).init(device),
            aggr: self.aggr.clone(),
        }
    }
}

impl EdgeConv {
    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.propagate(x, graph, None)
    }
}

impl MessagePassing for EdgeConv {
    /// `h([x_i, x_j − x_i])`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let x_i = edges.x_i();
        let h = Tensor::cat(vec![x_i.clone(), edges.x_j() - x_i], 1);
        mlp(&self.mlp_in, &self.mlp_out, h)
    }

    fn aggregation(&self) -> Aggregation {
        self.aggr.clone()
    }

    /// Zeros without edges (the MLP never runs on zero rows); otherwise `None`, the
    /// aggregation of the messages.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        (edges.num_edges() == 0).then(|| super::no_messages(edges, self.mlp_out.weight.dims()[1]))
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.mlp_out.weight.dims()[1])
    }
}
