//! [`GraphGps`]: a graph transformer, a stack of [`GpsConv`] layers with GIN as the local layer.

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::{GinConv, GinConvConfig, GpsConv, GpsConvConfig, GpsNorm};

/// Configuration of a [`GraphGps`].
#[derive(Config, Debug)]
pub struct GraphGpsConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Width of every GPS layer.
    pub hidden: usize,
    /// Output features per node.
    pub d_output: usize,
    /// GPS layers.
    #[config(default = 4)]
    pub num_layers: usize,
    /// Attention heads per layer (must divide `hidden`).
    #[config(default = 4)]
    pub heads: usize,
    /// Dropout inside each layer (training only).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// The normalisation of each layer.
    #[config(default = "GpsNorm::Batch")]
    pub norm: GpsNorm,
}

/// A GraphGPS model ([Rampášek et al., NeurIPS 2022](https://arxiv.org/abs/2205.12454)), as
/// PyG's GPS example without positional encodings: a linear map to `hidden`, `num_layers`
/// [`GpsConv`] layers (local GIN with a `hidden → hidden → hidden` MLP, global attention within
/// each graph), and a linear map to `d_output`. Node embeddings; pool them for graph tasks.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GraphGps {
    /// Input map.
    pub input: Linear,
    /// The GPS layers.
    pub layers: Vec<GpsConv<GinConv>>,
    /// Output map.
    pub output: Linear,
}

impl GraphGpsConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// As [`GpsConvConfig::check`] (heads that do not divide `hidden`).
    pub fn check(&self) -> Result<(), crate::NnError> {
        self.layer().check()
    }

    /// A [`GraphGps`].
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> GraphGps {
        let (h, layer) = (self.hidden, self.layer());
        let layers = (0..self.num_layers)
            .map(|_| layer.init(Some(GinConvConfig::new(h, h, h).init(device)), device))
            .collect();
        GraphGps {
            input: LinearConfig::new(self.d_input, h).init(device),
            layers,
            output: LinearConfig::new(h, self.d_output).init(device),
        }
    }

    /// The configuration of each GPS layer.
    fn layer(&self) -> GpsConvConfig {
        GpsConvConfig::new(self.hidden)
            .with_heads(self.heads)
            .with_dropout(self.dropout)
            .with_norm(self.norm)
    }
}

impl GraphGps {
    /// Node embeddings.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return crate::compat::no_rows(self.output.weight.dims()[1], &x);
        }
        let mut h = crate::compat::linear(&self.input, x);
        for layer in &self.layers {
            h = layer.forward(h, graph, None);
        }
        crate::compat::linear(&self.output, h)
    }
}
