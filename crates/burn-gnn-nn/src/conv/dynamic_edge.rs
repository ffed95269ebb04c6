//! [`DynamicEdgeConv`]: EdgeConv over the k-nearest-neighbour graph of its input features,
//! rebuilt at every forward.

use burn::config::Config;
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{Flow, GraphsTuple, knn_graph};

use super::{EdgeConv, EdgeConvConfig};
use crate::Aggregation;

/// Configuration of a [`DynamicEdgeConv`].
#[derive(Config, Debug)]
pub struct DynamicEdgeConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Hidden width of the MLP.
    pub d_hidden: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Neighbours per node (the node itself included, as PyG).
    pub k: usize,
    /// The aggregation (PyG's default, max); one that widens the output is refused by `init`.
    #[config(default = "Aggregation::Max")]
    pub aggr: Aggregation,
}

/// DynamicEdgeConv (DGCNN), [Wang et al., ACM TOG 2019](https://arxiv.org/abs/1801.07829):
/// [`EdgeConv`] `x'_i = max_{j ∈ kNN(i)} h([x_i, x_j − x_i])` where `kNN(i)` are the `k`
/// nearest nodes of `i`'s graph in the current feature space (Euclidean; `i` itself is its own
/// nearest, as PyG's `knn`), found exactly by [`knn_graph`] at every forward; the graph's own
/// edges are not used. Gradients flow through the features, not through the choice of
/// neighbours.
///
/// # Shapes
/// `x: [N, d_input]` and a graph whose `n_node` groups the rows (its edges are ignored) ->
/// `[N, d_output]`.
#[derive(Module, Debug)]
pub struct DynamicEdgeConv {
    /// The EdgeConv applied over the kNN graph.
    pub edge_conv: EdgeConv,
    /// Neighbours per node.
    pub k: usize,
}

impl DynamicEdgeConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// As [`EdgeConvConfig::check`].
    pub fn check(&self) -> Result<(), crate::NnError> {
        self.edge_conv().check()
    }

    /// A [`DynamicEdgeConv`].
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> DynamicEdgeConv {
        DynamicEdgeConv {
            edge_conv: self.edge_conv().init(device),
            k: self.k,
        }
    }

    /// The configuration of the EdgeConv inside.
    fn edge_conv(&self) -> EdgeConvConfig {
        EdgeConvConfig::new(self.d_input, self.d_hidden, self.d_output).with_aggr(self.aggr.clone())
    }
}

impl DynamicEdgeConv {
    /// Applies the layer to the nodes of each graph of `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let knn = self.neighbours(&x, graph);
        self.edge_conv.forward(x, &knn)
    }

    /// The kNN graph of `x` within each graph of `graph` (edges neighbour -> node).
    pub fn neighbours(&self, x: &Tensor<2>, graph: &GraphsTuple) -> GraphsTuple {
        let batch = graph.node_graph_ids();
        knn_graph(x, self.k, Some(&batch), true, Flow::SourceToTarget)
            .expect("a graph's node ids are sorted and one per node")
    }
}
