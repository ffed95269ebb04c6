//! [`TopKPooling`] (Gao & Ji, 2019).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;

use super::{PoolSelection, Pooled, gate, select};
use crate::NnError;

/// Configuration of a [`TopKPooling`].
#[derive(Config, Debug)]
pub struct TopKPoolingConfig {
    /// Features per node.
    pub d_input: usize,
    /// How nodes are chosen and gated.
    #[config(default = "PoolSelection::new()")]
    pub selection: PoolSelection,
}

/// Top-k pooling, [Gao & Ji, 2019](https://arxiv.org/abs/1905.05178) (PyG's `TopKPooling`): a
/// learnt projection scores every node, each graph keeps its best nodes, and their features are
/// gated by the score:
///
/// `y = X p / ‖p‖`, `s = tanh(y)` (or `softmax_G(X p)` with `min_score`),
/// `i = top_k(s)` per graph, `X' = (X ⊙ s)_i`, the edges between kept nodes kept.
///
/// Kept nodes stay in their original order (PyG orders them by score); ties in the score go to
/// the smaller node index.
///
/// # Shapes
/// `x: [N, d_input]` -> [`Pooled`] with `x: [kept, d_input]`.
#[derive(Module, Debug)]
pub struct TopKPooling {
    /// The projection `p`, `[d_input]`, uniform in `±1/sqrt(d_input)` (PyG's `uniform`).
    pub weight: Param<Tensor<1>>,
    /// See [`TopKPoolingConfig::selection`].
    #[module(skip)]
    pub selection: PoolSelection,
}

impl TopKPoolingConfig {
    /// A [`TopKPooling`] with a uniform projection.
    pub fn init(&self, device: &Device) -> TopKPooling {
        let bound = 1.0 / (self.d_input.max(1) as f64).sqrt();
        TopKPooling {
            weight: burn::nn::Initializer::Uniform {
                min: -bound,
                max: bound,
            }
            .init([self.d_input], device),
            selection: self.selection.clone(),
        }
    }
}

impl TopKPooling {
    /// Scores, selects and gates the nodes of every graph.
    ///
    /// # Errors
    /// A `size` out of range ([`NnError::InvalidConfig`]); a NaN score
    /// ([`NnError::InvalidInput`]).
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Result<Pooled, NnError> {
        let [n, _] = x.dims();
        let p = self.weight.val();
        let raw = x
            .clone()
            .matmul(p.clone().unsqueeze_dim::<2>(1))
            .reshape([n]);
        let raw = match self.selection.min_score {
            None => raw / p.powi_scalar(2).sum().sqrt(),
            Some(_) => raw,
        };
        let score = gate(raw, graph, self.selection.min_score);
        select(x, score, graph, &self.selection)
    }
}
