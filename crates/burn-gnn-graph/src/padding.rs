//! Padding to fixed sizes (jraph's `pad_with_graphs`), masks, and `zero_out_padding`.

use burn::tensor::{Bool, Int, Tensor};

use crate::compat::gather_rows;
use crate::graphs_tuple::{Cache, index_tensor};
use crate::{GraphError, GraphsTuple};

impl GraphsTuple {
    /// Pads to exactly `n_node` nodes, `n_edge` edges and `n_graph` graphs, as jraph does: one
    /// padding graph takes every padding node and edge (its edges are self loops on its first
    /// node), then empty padding graphs fill up `n_graph`. Padding features are zeros. Fixed
    /// shapes let a compiled or cached step run on every batch.
    ///
    /// Unlike jraph, padding graphs are remembered: [`graph_mask`](Self::graph_mask) and friends
    /// are exact for any graph, padded or not, and a target equal to the current size is fine
    /// when nothing needs a padding graph.
    ///
    /// # Errors
    /// [`GraphError::Padding`] if a target is below the current size, if padding nodes or edges
    /// are needed but `n_graph` leaves no padding graph, or if padding edges are needed but
    /// `n_node` leaves no padding node for them to point at.
    pub fn pad_with_graphs(
        &self,
        n_node: usize,
        n_edge: usize,
        n_graph: usize,
    ) -> Result<GraphsTuple, GraphError> {
        let (nodes, edges, graphs) = (self.sum_n_node(), self.sum_n_edge(), self.n_graph());
        for (what, target, have) in [
            ("n_node", n_node, nodes),
            ("n_edge", n_edge, edges),
            ("n_graph", n_graph, graphs),
        ] {
            if target < have {
                return Err(GraphError::Padding(format!(
                    "{what} = {target} is below the graph's {have}"
                )));
            }
        }
        let (pad_nodes, pad_edges, pad_graphs) = (n_node - nodes, n_edge - edges, n_graph - graphs);
        if pad_graphs == 0 && (pad_nodes > 0 || pad_edges > 0) {
            return Err(GraphError::Padding(format!(
                "{pad_nodes} padding nodes and {pad_edges} padding edges need a padding graph: n_graph must be at least {}",
                graphs + 1
            )));
        }
        if pad_edges > 0 && pad_nodes == 0 {
            return Err(GraphError::Padding(format!(
                "{pad_edges} padding edges need a padding node to point at: n_node must be at least {}",
                nodes + 1
            )));
        }
        if pad_graphs == 0 {
            return Ok(self.clone());
        }
        let device = self.device();
        let pad_index = index_tensor(vec![nodes as i64; pad_edges], &device);
        let mut counts_node = vec![0i64; pad_graphs];
        let mut counts_edge = vec![0i64; pad_graphs];
        counts_node[0] = pad_nodes as i64;
        counts_edge[0] = pad_edges as i64;
        let mut padding = self.padding_flags();
        padding.extend(std::iter::repeat_n(true, pad_graphs));
        Ok(GraphsTuple {
            nodes: self.nodes.clone().map(|f| f.pad_rows(pad_nodes)),
            edges: self.edges.clone().map(|f| f.pad_rows(pad_edges)),
            globals: self.globals.clone().map(|f| f.pad_rows(pad_graphs)),
            senders: Tensor::cat(vec![self.senders.clone(), pad_index.clone()], 0),
            receivers: Tensor::cat(vec![self.receivers.clone(), pad_index], 0),
            n_node: Tensor::cat(
                vec![self.n_node.clone(), index_tensor(counts_node, &device)],
                0,
            ),
            n_edge: Tensor::cat(
                vec![self.n_edge.clone(), index_tensor(counts_edge, &device)],
                0,
            ),
            num_nodes: n_node,
            padding: Some(padding),
            cache: Cache::fresh(),
        })
    }

    /// Removes every padding graph with its nodes and edges (the inverse of
    /// [`pad_with_graphs`](Self::pad_with_graphs), also for batches of padded graphs).
    pub fn unpad_with_graphs(&self) -> GraphsTuple {
        if !self.has_padding() {
            return GraphsTuple {
                padding: None,
                ..self.clone()
            };
        }
        let keep: Vec<bool> = self.padding_flags().iter().map(|p| !p).collect();
        let mut out = self.select_graphs(&keep).expect("one flag per graph");
        out.padding = None;
        out
    }

    fn rows_mask(&self, ids: impl FnOnce() -> Tensor<1, Int>, rows: usize) -> Tensor<1, Bool> {
        let device = self.device();
        if !self.has_padding() {
            return Tensor::<1, Int>::zeros([rows], &device).equal_elem(0);
        }
        if rows == 0 {
            return Tensor::<1, Bool>::empty([0], &device);
        }
        gather_rows(self.graph_mask().int(), ids()).equal_elem(1)
    }

    /// Per node: `true` for nodes of real graphs, `false` for padding nodes, `[sum_n_node]`.
    pub fn node_mask(&self) -> Tensor<1, Bool> {
        self.rows_mask(|| self.node_graph_ids(), self.sum_n_node())
    }

    /// Per edge: `true` for edges of real graphs, `false` for padding edges, `[sum_n_edge]`.
    pub fn edge_mask(&self) -> Tensor<1, Bool> {
        self.rows_mask(|| self.edge_graph_ids(), self.sum_n_edge())
    }

    /// Sets every feature of padding nodes, edges and graphs to zero (selecting, so NaN or inf
    /// in padding is cleared too), so that padding cannot leak into losses or metrics.
    pub fn zero_out_padding(self) -> GraphsTuple {
        if !self.has_padding() {
            return self;
        }
        let (node, edge, graph) = (self.node_mask(), self.edge_mask(), self.graph_mask());
        GraphsTuple {
            nodes: self.nodes.clone().map(|f| f.zero_rows(node.clone())),
            edges: self.edges.clone().map(|f| f.zero_rows(edge.clone())),
            globals: self.globals.clone().map(|f| f.zero_rows(graph.clone())),
            ..self
        }
    }
}
