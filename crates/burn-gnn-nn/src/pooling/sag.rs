//! [`SagPooling`] (Lee et al., 2019).

use burn::config::Config;
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use super::{PoolSelection, Pooled, gate, select};
use crate::NnError;
use crate::conv::{GraphConv, GraphConvConfig};

/// Configuration of a [`SagPooling`].
#[derive(Config, Debug)]
pub struct SagPoolingConfig {
    /// Features per node.
    pub d_input: usize,
    /// How nodes are chosen and gated.
    #[config(default = "PoolSelection::new()")]
    pub selection: PoolSelection,
}

/// Self-attention graph pooling, [Lee et al., 2019](https://arxiv.org/abs/1904.08082) (PyG's
/// `SAGPooling` with its default `GraphConv` scorer): a graph convolution to one channel scores
/// every node, and the nodes are selected and gated as in [`TopKPooling`](crate::TopKPooling):
///
/// `y = GraphConv(X, A)`, `s = tanh(y)` (or `softmax_G(y)` with `min_score`),
/// `i = top_k(s)` per graph, `X' = (X ⊙ s)_i`.
///
/// # Shapes
/// `x: [N, d_input]` -> [`Pooled`] with `x: [kept, d_input]`.
#[derive(Module, Debug)]
pub struct SagPooling {
    /// The scorer, `GraphConv(d_input, 1)`.
    pub gnn: GraphConv,
    /// See [`SagPoolingConfig::selection`].
    #[module(skip)]
    pub selection: PoolSelection,
}

impl SagPoolingConfig {
    /// A [`SagPooling`] with a freshly initialised scorer.
    pub fn init(&self, device: &Device) -> SagPooling {
        SagPooling {
            gnn: GraphConvConfig::new(self.d_input, 1).init(device),
            selection: self.selection.clone(),
        }
    }
}

impl SagPooling {
    /// Scores, selects and gates the nodes of every graph.
    ///
    /// # Errors
    /// A `size` out of range ([`NnError::InvalidConfig`]); a NaN score
    /// ([`NnError::InvalidInput`]).
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Result<Pooled, NnError> {
        let n = x.dims()[0];
        let raw = self.gnn.forward(x.clone(), graph).reshape([n]);
        let score = gate(raw, graph, self.selection.min_score);
        select(x, score, graph, &self.selection)
    }
}
