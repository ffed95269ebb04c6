//! [`MessagePassing`]: write a layer as message → aggregate → update, as in PyG.

use burn::tensor::{Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};

use crate::Aggregation;

/// What a message function can read about the edges, gathered only when asked for.
#[derive(Debug)]
pub struct EdgeInputs<'a> {
    x: &'a Tensor<2>,
    graph: &'a GraphsTuple,
    edge_attr: Option<&'a Tensor<2>>,
}

impl EdgeInputs<'_> {
    /// Sender features `x_j`, `[E, D]`.
    pub fn x_j(&self) -> Tensor<2> {
        gather_rows(self.x.clone(), self.graph.senders().clone())
    }
    /// Receiver features `x_i`, `[E, D]`.
    pub fn x_i(&self) -> Tensor<2> {
        gather_rows(self.x.clone(), self.graph.receivers().clone())
    }
    /// Edge features, if given to [`MessagePassing::propagate`].
    pub fn edge_attr(&self) -> Option<Tensor<2>> {
        self.edge_attr.cloned()
    }
    /// Sender of each edge.
    pub fn senders(&self) -> Tensor<1, Int> {
        self.graph.senders().clone()
    }
    /// Receiver of each edge.
    pub fn receivers(&self) -> Tensor<1, Int> {
        self.graph.receivers().clone()
    }
    /// The graph.
    pub fn graph(&self) -> &GraphsTuple {
        self.graph
    }
}

/// A message-passing layer in PyG's shape: `x'_i = update(aggregate_{j → i} message(x_j, x_i,
/// e_ji), x_i)`. Implement [`message`](Self::message) (and optionally the rest); call
/// [`propagate`](Self::propagate) from your `forward`. Messages flow `senders -> receivers`.
///
/// A layer that can compute the aggregated messages without materialising `[E, D]` edge
/// tensors overrides [`message_and_aggregate`](Self::message_and_aggregate), which
/// `propagate` prefers.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_gnn_graph::GraphsTuple;
/// use burn_gnn_nn::{Aggregation, EdgeInputs, MessagePassing};
///
/// /// `x'_i = mean_j (x_j − x_i)`: how a node differs from its neighbours.
/// struct MeanDifference;
/// impl MessagePassing for MeanDifference {
///     fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
///         edges.x_j() - edges.x_i()
///     }
///     fn aggregation(&self) -> Aggregation {
///         Aggregation::Mean
///     }
/// }
///
/// let device = Device::flex();
/// let g = GraphsTuple::from_edge_list(&[(0, 1), (2, 1)], 3, &device).unwrap();
/// let x = Tensor::<2>::from_floats([[1.0], [2.0], [5.0]], &device);
/// let out = MeanDifference.propagate(x, &g, None);
/// assert_eq!(out.into_data().to_vec::<f32>().unwrap(), [0.0, 1.0, 0.0]);
/// ```
pub trait MessagePassing {
    /// The message of every edge, `[E, D_msg]`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2>;

    /// How messages are combined at their receiver (default sum).
    fn aggregation(&self) -> Aggregation {
        Aggregation::Sum
    }

    /// The new node features from the aggregated messages `[N, D_msg · width]` and the old
    /// features `[N, D]` (default: the aggregated messages).
    fn update(&self, aggregated: Tensor<2>, _x: Tensor<2>) -> Tensor<2> {
        aggregated
    }

    /// A fused message + aggregation, or `None` to use [`message`](Self::message) then
    /// [`aggregation`](Self::aggregation).
    fn message_and_aggregate(&self, _x: &Tensor<2>, _graph: &GraphsTuple) -> Option<Tensor<2>> {
        None
    }

    /// Runs message → aggregate → update over `graph`.
    ///
    /// # Shapes
    /// `x: [N, D]`, `edge_attr: [E, D_e]` -> whatever `update` returns, `[N, ...]`.
    fn propagate(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_attr: Option<Tensor<2>>,
    ) -> Tensor<2> {
        let aggregated = match self.message_and_aggregate(&x, graph) {
            Some(a) => a,
            None => {
                let edges = EdgeInputs {
                    x: &x,
                    graph,
                    edge_attr: edge_attr.as_ref(),
                };
                let messages = self.message(&edges);
                self.aggregation()
                    .aggregate(messages, graph.receivers().clone(), x.dims()[0])
            }
        };
        self.update(aggregated, x)
    }
}
