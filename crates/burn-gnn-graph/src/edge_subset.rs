//! Edge subsets: every node kept, a chosen list of edges (with their features) kept.

use crate::graphs_tuple::{host_ints, index_tensor};
use crate::transform::{counts_per_graph, node_graphs};
use crate::{GraphError, GraphsTuple};

impl GraphsTuple {
    /// The graph with every node and global but only the edges `edge_ids`, in that order (an id
    /// may repeat), each with its edge features. Link prediction uses it to keep the
    /// message-passing edges of a split.
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] if an id is not an edge of this graph.
    pub fn edge_subgraph(&self, edge_ids: &[usize]) -> Result<GraphsTuple, GraphError> {
        let num_edges = self.sum_n_edge();
        if let Some(&e) = edge_ids.iter().find(|&&e| e >= num_edges) {
            return Err(GraphError::InvalidArgument(format!(
                "edge_subgraph: edge id {e} is not below the graph's {num_edges} edges"
            )));
        }
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        let n_node = host_ints(&self.n_node);
        let graph_of = node_graphs(&n_node);
        let n_edge = counts_per_graph(edge_ids.iter().map(|&e| r[e]), &graph_of, n_node.len());
        let device = self.device();
        let pick = |x: &[i64]| index_tensor(edge_ids.iter().map(|&e| x[e]).collect(), &device);
        let ids = index_tensor(edge_ids.iter().map(|&e| e as i64).collect(), &device);
        let mut graph = self.with_structure(
            pick(&s),
            pick(&r),
            self.n_node.clone(),
            index_tensor(n_edge, &device),
            self.num_nodes,
        );
        graph.edges = self.edges.clone().map(|f| f.select_rows(ids.clone()));
        Ok(graph)
    }
}
