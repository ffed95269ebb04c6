//! [`SgConv`] (simplified graph convolution) and [`Appnp`] (personalised-PageRank propagation).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use super::gcn::{GcnInput, GcnOver, gcn_norm};

/// Configuration of an [`SgConv`]; defaults are PyG's `SGConv`.
#[derive(Config, Debug)]
pub struct SgConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Propagation steps `K`.
    #[config(default = 1)]
    pub k: usize,
    /// Add self loops before normalising (as [`GcnConv`](crate::GcnConv)).
    #[config(default = true)]
    pub add_self_loops: bool,
    /// A bias in the linear map.
    #[config(default = true)]
    pub bias: bool,
}

/// SGC, [Wu et al., ICML 2019](https://arxiv.org/abs/1902.07153): `K` parameter-free GCN
/// propagations, then one linear map: `x' = (D^-1/2 Â D^-1/2)^K x W + b`.
///
/// The propagation depends only on the graph and the input; for a fixed graph and input,
/// propagate once with [`SgConv::propagate`] and train [`SgConv::lin`] on the result.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct SgConv {
    /// The linear map after propagation.
    pub lin: Linear,
    /// Propagation steps.
    pub k: usize,
    /// See [`SgConvConfig::add_self_loops`].
    pub add_self_loops: bool,
}

impl SgConvConfig {
    /// An [`SgConv`] with Burn's default `Linear` initialisation.
    pub fn init(&self, device: &Device) -> SgConv {
        SgConv {
            lin: LinearConfig::new(self.d_input, self.d_output)
                .with_bias(self.bias)
                .init(device),
            k: self.k,
            add_self_loops: self.add_self_loops,
        }
    }
}

impl SgConv {
    /// `(D^-1/2 Â D^-1/2)^K x`.
    pub fn propagate(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let norm = gcn_norm(graph, None, self.add_self_loops, false, true);
        (0..self.k).fold(x, |h, _| norm.apply(h))
    }

    /// Applies the layer over `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return crate::compat::no_rows(self.lin.weight.dims()[1], &x);
        }
        crate::compat::linear(&self.lin, self.propagate(x, graph))
    }
}

/// Configuration of an [`Appnp`] propagation.
#[derive(Config, Debug)]
pub struct AppnpConfig {
    /// Power-iteration steps `K` (the paper uses 10).
    pub k: usize,
    /// Teleport probability `α` (the paper uses 0.1).
    pub alpha: f64,
    /// Add self loops before normalising.
    #[config(default = true)]
    pub add_self_loops: bool,
}

/// APPNP propagation, [Klicpera et al., ICLR 2019](https://arxiv.org/abs/1810.05997):
/// `h⁰ = x`, `h^{k+1} = (1 − α) D^-1/2 Â D^-1/2 h^k + α x`; returns `h^K`. No parameters: put
/// the prediction network before it.
///
/// # Shapes
/// `x: [N, D]` -> `[N, D]`.
#[derive(Module, Debug)]
pub struct Appnp {
    /// Steps.
    pub k: usize,
    /// Teleport probability.
    pub alpha: f64,
    /// See [`AppnpConfig::add_self_loops`].
    pub add_self_loops: bool,
}

impl AppnpConfig {
    /// The propagation.
    pub fn init(&self) -> Appnp {
        Appnp {
            k: self.k,
            alpha: self.alpha,
            add_self_loops: self.add_self_loops,
        }
    }
}

impl Appnp {
    /// Propagates `x` over `graph`.
    ///
    /// # Shapes
    /// `x: [N, D]` -> `[N, D]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.forward_with(GcnInput::new(x, graph))
    }

    /// Propagates a [`GcnInput`]: with edge weights, or over a normalisation computed once
    /// (reuse it across epochs on a fixed graph).
    ///
    /// # Shapes
    /// `x: [N, D]`, `edge_weight: [E]` -> `[N, D]`.
    pub fn forward_with(&self, input: GcnInput) -> Tensor<2> {
        let (x, over, edge_weight) = input.into_parts();
        if x.dims()[0] == 0 {
            return x;
        }
        let owned;
        let norm = match over {
            GcnOver::Norm(norm) => norm,
            GcnOver::Graph(graph) => {
                owned = gcn_norm(graph, edge_weight, self.add_self_loops, false, true);
                &owned
            }
        };
        let teleport = x.clone().mul_scalar(self.alpha);
        (0..self.k).fold(x, |h, _| {
            norm.apply(h).mul_scalar(1.0 - self.alpha) + teleport.clone()
        })
    }
}
