//! [`GraphsTupleBuilder`]: collects a graph's parts and validates them.

use burn::tensor::{Int, Tensor};

use crate::graphs_tuple::{Cache, default_int, index_tensor};
use crate::{Feature, FeatureSet, GraphError, GraphsTuple};

impl GraphsTuple {
    /// Starts a graph from its edges: `senders[e] -> receivers[e]`.
    pub fn builder(senders: Tensor<1, Int>, receivers: Tensor<1, Int>) -> GraphsTupleBuilder {
        let device = senders.device();
        let empty = Tensor::<1, Int>::zeros([0], &device);
        GraphsTupleBuilder {
            graph: GraphsTuple {
                nodes: FeatureSet::default(),
                edges: FeatureSet::default(),
                globals: FeatureSet::default(),
                senders,
                receivers,
                n_node: empty.clone(),
                n_edge: empty,
                num_nodes: 0,
                padding: None,
                cache: Cache::fresh(),
            },
            n_node: None,
            n_edge: None,
            num_nodes: None,
        }
    }
}

/// Collects the parts of a [`GraphsTuple`]; see [`GraphsTuple::builder`].
#[derive(Clone, Debug)]
pub struct GraphsTupleBuilder {
    graph: GraphsTuple,
    n_node: Option<Tensor<1, Int>>,
    n_edge: Option<Tensor<1, Int>>,
    num_nodes: Option<usize>,
}

impl GraphsTupleBuilder {
    /// The unnamed node features (`[sum_n_node, ...]`).
    pub fn nodes(mut self, nodes: impl Into<Feature>) -> Self {
        self.graph.nodes.main = Some(nodes.into());
        self
    }
    /// The unnamed edge features (`[sum_n_edge, ...]`).
    pub fn edges(mut self, edges: impl Into<Feature>) -> Self {
        self.graph.edges.main = Some(edges.into());
        self
    }
    /// The unnamed graph features (`[n_graph, ...]`).
    pub fn globals(mut self, globals: impl Into<Feature>) -> Self {
        self.graph.globals.main = Some(globals.into());
        self
    }
    /// A named node feature.
    pub fn node_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.nodes.named.insert(name.into(), feature.into());
        self
    }
    /// A named edge feature.
    pub fn edge_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.edges.named.insert(name.into(), feature.into());
        self
    }
    /// A named graph feature.
    pub fn global_feature(mut self, name: impl Into<String>, feature: impl Into<Feature>) -> Self {
        self.graph.globals.named.insert(name.into(), feature.into());
        self
    }
    /// Nodes per graph. Default: one graph holding every node.
    pub fn n_node(mut self, n_node: Tensor<1, Int>) -> Self {
        self.n_node = Some(n_node);
        self
    }
    /// Edges per graph. Default: one graph holding every edge.
    pub fn n_edge(mut self, n_edge: Tensor<1, Int>) -> Self {
        self.n_edge = Some(n_edge);
        self
    }
    /// The number of nodes, for graphs without node features (otherwise their leading
    /// dimension gives it, and this must agree).
    pub fn num_nodes(mut self, num_nodes: usize) -> Self {
        self.num_nodes = Some(num_nodes);
        self
    }

    /// Checks shapes and values (a host read of `senders`, `receivers`, `n_node`, `n_edge`) and
    /// builds the graph.
    ///
    /// # Errors
    /// Any inconsistency, as a [`GraphError`] naming the field, position and value.
    pub fn build(self) -> Result<GraphsTuple, GraphError> {
        let graph = self.build_unchecked()?;
        graph.validate()?;
        Ok(graph)
    }

    /// Checks only what shapes tell (lengths, feature rows), without reading any tensor: for
    /// hot loops over data that was validated once. Out-of-range indices then reach the
    /// kernels (CPU kernels panic; the composite path drops them).
    ///
    /// # Errors
    /// Shape inconsistencies; a graph with no node feature, no `num_nodes` and no `n_node`.
    pub fn build_unchecked(self) -> Result<GraphsTuple, GraphError> {
        let mut graph = self.graph;
        let device = graph.senders.device();
        let num_nodes = match (self.num_nodes, graph.nodes.iter().next()) {
            (Some(n), _) => n,
            (None, Some((_, f))) => f.rows(),
            (None, None) => match &self.n_node {
                // No shape tells it: the sum of n_node is the only source (one host read).
                Some(n_node) => n_node
                    .to_data()
                    .iter::<i64>()
                    .map(i128::from)
                    .sum::<i128>()
                    .clamp(0, usize::MAX as i128) as usize,
                None => {
                    return Err(GraphError::InvalidArgument(
                        "the number of nodes is unknown: give node features, num_nodes or n_node"
                            .into(),
                    ));
                }
            },
        };
        graph.num_nodes = num_nodes;
        let n_edge_total = graph.senders.dims()[0];
        graph.n_node = default_int(
            self.n_node
                .unwrap_or_else(|| index_tensor(vec![num_nodes as i64], &device)),
            &device,
        );
        graph.n_edge = default_int(
            self.n_edge
                .unwrap_or_else(|| index_tensor(vec![n_edge_total as i64], &device)),
            &device,
        );
        graph.senders = default_int(graph.senders, &device);
        graph.receivers = default_int(graph.receivers, &device);
        graph.check_shapes()?;
        Ok(graph)
    }
}
