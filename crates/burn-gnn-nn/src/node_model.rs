//! [`NodeModel`]: any model that maps node features to one output row per node.

use burn::module::{Module, ModuleDisplay};
use burn::tensor::Tensor;
use burn_gnn_graph::GraphsTuple;

use crate::{Gat, Gcn, Gin, GraphSage};

/// A model giving one output row per node: class logits for node classification, embeddings
/// for link prediction ([`Gae`](crate::Gae), [`Vgae`](crate::Vgae)). A model of your own
/// implements one method.
pub trait NodeModel: Module + ModuleDisplay + 'static {
    /// Outputs `[N, d_output]` for the nodes of `graph`, from features `x: [N, d_input]`.
    fn forward_nodes(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2>;
}

macro_rules! node_model {
    ($($model:ty),*) => {$(
        impl NodeModel for $model {
            fn forward_nodes(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
                self.forward(x, graph)
            }
        }
    )*};
}
node_model!(Gcn, Gat, GraphSage, Gin);
