//! Edge subsets of one edge type: every node set, context and other edge set kept.

use super::{EdgeSet, EdgeType, HeteroGraph};
use crate::GraphError;
use crate::graphs_tuple::{host_ints, index_tensor};
use crate::transform::{counts_per_graph, node_graphs};

impl HeteroGraph {
    /// The graph with only the edges `edge_ids` of `edge_type`, in that order (an id may
    /// repeat), each with its features; every other set unchanged. Link prediction uses it to
    /// keep a split's message-passing edges of one relation.
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] for an edge type the graph does not have or an id that is
    /// not one of its edges.
    pub fn edge_subgraph(
        &self,
        edge_type: &EdgeType,
        edge_ids: &[usize],
    ) -> Result<HeteroGraph, GraphError> {
        let set = self.edge_sets.get(edge_type).ok_or_else(|| {
            GraphError::InvalidArgument(format!("edge_subgraph: no edge type {edge_type}"))
        })?;
        let num_edges = set.num_edges();
        if let Some(&e) = edge_ids.iter().find(|&&e| e >= num_edges) {
            return Err(GraphError::InvalidArgument(format!(
                "edge_subgraph: edge id {e} is not below the {num_edges} edges of {edge_type}"
            )));
        }
        let (s, r) = (host_ints(&set.senders), host_ints(&set.receivers));
        let n_node = host_ints(&self.node_sets[&edge_type.dst].n_node);
        let n_edge = counts_per_graph(
            edge_ids.iter().map(|&e| r[e]),
            &node_graphs(&n_node),
            self.n_graph,
        );
        let device = self.device();
        let pick = |x: &[i64]| index_tensor(edge_ids.iter().map(|&e| x[e]).collect(), &device);
        let ids = index_tensor(edge_ids.iter().map(|&e| e as i64).collect(), &device);
        let subset = EdgeSet {
            features: set.features.clone().map(|f| f.select_rows(ids.clone())),
            senders: pick(&s),
            receivers: pick(&r),
            n_edge: index_tensor(n_edge, &device),
            plans: Default::default(),
        };
        let mut graph = self.clone();
        graph.edge_sets.insert(edge_type.clone(), subset);
        Ok(graph)
    }
}
