//! Conversions from and to `petgraph` graphs, node and edge weights as feature rows.

use burn::tensor::{Device, Tensor, TensorData};
use petgraph::graph::{Graph, IndexType};
use petgraph::{Directed, EdgeType};

use crate::graphs_tuple::index_tensor;
use crate::{Feature, GraphError, GraphsTuple};

/// A petgraph node or edge weight that becomes one row of a float feature.
///
/// `()` means no feature; numbers give one column, arrays and vectors one column per entry.
pub trait FeatureRow {
    /// Appends this weight's values to `row`.
    fn push_row(&self, row: &mut Vec<f32>);
}

impl FeatureRow for () {
    fn push_row(&self, _: &mut Vec<f32>) {}
}
macro_rules! scalar_row {
    ($($t:ty),*) => {$(
        impl FeatureRow for $t {
            fn push_row(&self, row: &mut Vec<f32>) { row.push(*self as f32); }
        }
    )*};
}
scalar_row!(f32, f64, i32, i64, u32, usize);
impl<T: FeatureRow, const K: usize> FeatureRow for [T; K] {
    fn push_row(&self, row: &mut Vec<f32>) {
        self.iter().for_each(|x| x.push_row(row));
    }
}
impl<T: FeatureRow> FeatureRow for Vec<T> {
    fn push_row(&self, row: &mut Vec<f32>) {
        self.iter().for_each(|x| x.push_row(row));
    }
}

/// Stacks the rows into a `[n, width]` f32 feature; `None` when every row is empty.
fn rows_feature<'a, W: FeatureRow + 'a>(
    weights: impl ExactSizeIterator<Item = &'a W>,
    what: &str,
    device: &Device,
) -> Result<Option<Feature>, GraphError> {
    let n = weights.len();
    let (mut values, mut width) = (Vec::new(), None);
    for (i, w) in weights.enumerate() {
        let before = values.len();
        w.push_row(&mut values);
        let len = values.len() - before;
        match width {
            None => width = Some(len),
            Some(k) if k != len => {
                return Err(GraphError::InvalidArgument(format!(
                    "{what} weight {i} has {len} values but the first has {k}; feature rows must have one width"
                )));
            }
            _ => {}
        }
    }
    let width = width.unwrap_or(0);
    if width == 0 {
        return Ok(None);
    }
    Ok(Some(
        Tensor::<2>::from_data(TensorData::new(values, [n, width]), device).into(),
    ))
}

/// Reads a float feature of rank 1 or 2 as host rows (rank 1: one value per row).
fn feature_rows(f: Option<&Feature>, rows: usize) -> Result<Vec<Vec<f32>>, GraphError> {
    let Some(f) = f else {
        return Ok(vec![Vec::new(); rows]);
    };
    if !f.is_float() || f.rank() > 2 {
        return Err(GraphError::UnsupportedFeature(format!(
            "to_petgraph needs float features of rank 1 or 2, found {:?} of shape {:?}",
            f.dtype(),
            f.dims()
        )));
    }
    let width = if f.rank() == 2 { f.dims()[1] } else { 1 };
    let values: Vec<f32> = f.to_data().iter::<f32>().collect();
    Ok((0..rows)
        .map(|i| values[i * width..(i + 1) * width].to_vec())
        .collect())
}

impl GraphsTuple {
    /// One graph from a petgraph `Graph`: nodes and edges in index order, weights as `[n, k]`
    /// f32 features (none for `()` weights). An undirected graph gives both directions of every
    /// edge (`u -> v` then `v -> u`, sharing the weight), self loops once, as GNN layers expect.
    ///
    /// # Errors
    /// Weights of different widths.
    pub fn from_petgraph<N: FeatureRow, E: FeatureRow, Ty: EdgeType, Ix: IndexType>(
        graph: &Graph<N, E, Ty, Ix>,
        device: &Device,
    ) -> Result<GraphsTuple, GraphError> {
        let (mut s, mut r, mut edge_of) = (Vec::new(), Vec::new(), Vec::new());
        for (e, edge) in graph.raw_edges().iter().enumerate() {
            let (a, b) = (edge.source().index() as i64, edge.target().index() as i64);
            s.push(a);
            r.push(b);
            edge_of.push(e as i64);
            if !Ty::is_directed() && a != b {
                s.push(b);
                r.push(a);
                edge_of.push(e as i64);
            }
        }
        let nodes = rows_feature(graph.raw_nodes().iter().map(|n| &n.weight), "node", device)?;
        let edges = rows_feature(graph.raw_edges().iter().map(|e| &e.weight), "edge", device)?;
        let mut b = GraphsTuple::builder(index_tensor(s, device), index_tensor(r, device))
            .num_nodes(graph.node_count());
        if let Some(n) = nodes {
            b = b.nodes(n);
        }
        if let Some(e) = edges {
            b = b.edges(e.select_rows(index_tensor(edge_of, device)));
        }
        b.build()
    }

    /// A directed petgraph `Graph` with one node per node (weight: its row of the unnamed node
    /// feature, empty without one) and one edge per edge (likewise). A batch becomes one graph
    /// with several components.
    ///
    /// # Errors
    /// Unnamed node or edge features that are not float of rank 1 or 2.
    pub fn to_petgraph(&self) -> Result<Graph<Vec<f32>, Vec<f32>, Directed>, GraphError> {
        let node_rows = feature_rows(self.nodes(), self.num_nodes)?;
        let edge_rows = feature_rows(self.edges(), self.sum_n_edge())?;
        let (s, r) = self.to_coo();
        let mut g = Graph::with_capacity(self.num_nodes, s.len());
        let ids: Vec<_> = node_rows.into_iter().map(|w| g.add_node(w)).collect();
        for ((a, b), w) in s.iter().zip(&r).zip(edge_rows) {
            g.add_edge(ids[*a as usize], ids[*b as usize], w);
        }
        Ok(g)
    }
}
