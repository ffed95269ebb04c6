//! Conversions from and to edge lists, COO and CSR index arrays, and dense adjacency matrices.

use burn::tensor::{Device, Tensor, TensorData, ops::IndexingUpdateOp};

use crate::graphs_tuple::{host_ints, index_tensor};
use crate::{GraphError, GraphsTuple};

/// A compressed sparse row adjacency: row `i`'s neighbours are
/// `indices[indptr[i]..indptr[i + 1]]`. Rows are senders, indices receivers (`A[s][r] = 1` for
/// an edge `s -> r`, the convention of scipy and PyG).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Csr {
    /// Row pointers, `num_nodes + 1` entries, starting at 0, non-decreasing.
    pub indptr: Vec<usize>,
    /// Receivers, row by row.
    pub indices: Vec<usize>,
}

impl GraphsTuple {
    /// One graph from `(sender, receiver)` pairs over `num_nodes` nodes, without features.
    ///
    /// # Errors
    /// A node index out of range.
    pub fn from_edge_list(
        edges: &[(usize, usize)],
        num_nodes: usize,
        device: &Device,
    ) -> Result<GraphsTuple, GraphError> {
        let (s, r): (Vec<i64>, Vec<i64>) = edges.iter().map(|&(s, r)| (s as i64, r as i64)).unzip();
        Self::from_coo(&s, &r, num_nodes, device)
    }

    /// One graph from COO index arrays (`senders[e] -> receivers[e]`), without features.
    ///
    /// # Errors
    /// Lengths that differ or a node index out of range.
    pub fn from_coo(
        senders: &[i64],
        receivers: &[i64],
        num_nodes: usize,
        device: &Device,
    ) -> Result<GraphsTuple, GraphError> {
        if senders.len() != receivers.len() {
            return Err(GraphError::EdgeIndexLength {
                senders: senders.len(),
                receivers: receivers.len(),
            });
        }
        GraphsTuple::builder(
            index_tensor(senders.to_vec(), device),
            index_tensor(receivers.to_vec(), device),
        )
        .num_nodes(num_nodes)
        .build()
    }

    /// The edge index on the host: `(senders, receivers)`, absolute over the batch.
    pub fn to_coo(&self) -> (Vec<i64>, Vec<i64>) {
        (host_ints(&self.senders), host_ints(&self.receivers))
    }

    /// One graph from a CSR adjacency (rows are senders); edges in CSR order, no features.
    ///
    /// # Errors
    /// An `indptr` that is empty, does not start at 0, decreases, or does not end at
    /// `indices.len()`; an index out of range.
    pub fn from_csr(csr: &Csr, device: &Device) -> Result<GraphsTuple, GraphError> {
        let p = &csr.indptr;
        let bad = |m: String| Err(GraphError::InvalidArgument(format!("CSR indptr {m}")));
        if p.is_empty() {
            return bad("is empty (it needs num_nodes + 1 entries)".into());
        }
        if p[0] != 0 || *p.last().unwrap() != csr.indices.len() {
            return bad(format!(
                "must run from 0 to {} (indices.len()), runs {}..{}",
                csr.indices.len(),
                p[0],
                p[p.len() - 1]
            ));
        }
        if let Some(i) = p.windows(2).position(|w| w[1] < w[0]) {
            return bad(format!("decreases at row {i}: {} > {}", p[i], p[i + 1]));
        }
        let senders: Vec<i64> = (0..p.len() - 1)
            .flat_map(|i| std::iter::repeat_n(i as i64, p[i + 1] - p[i]))
            .collect();
        let receivers: Vec<i64> = csr.indices.iter().map(|&v| v as i64).collect();
        Self::from_coo(&senders, &receivers, p.len() - 1, device)
    }

    /// The CSR adjacency (rows are senders) and, per CSR entry, the edge it came from (a stable
    /// sort by sender), so edge features can be reordered to match.
    pub fn to_csr(&self) -> (Csr, Vec<usize>) {
        let (s, r) = self.to_coo();
        let mut order: Vec<usize> = (0..s.len()).collect();
        order.sort_by_key(|&e| s[e]);
        let mut indptr = vec![0usize; self.num_nodes + 1];
        for &v in &s {
            indptr[v as usize + 1] += 1;
        }
        for i in 0..self.num_nodes {
            indptr[i + 1] += indptr[i];
        }
        let indices = order.iter().map(|&e| r[e] as usize).collect();
        (Csr { indptr, indices }, order)
    }

    /// One graph from a dense `[n, n]` adjacency: an edge `s -> r` for every non-zero `adj[s][r]`
    /// (row-major order), its value as a `[E]` float edge feature (the edge weight).
    ///
    /// # Errors
    /// A matrix that is not square.
    pub fn from_dense_adjacency(adj: Tensor<2>) -> Result<GraphsTuple, GraphError> {
        let [n, m] = adj.dims();
        if n != m {
            return Err(GraphError::InvalidArgument(format!(
                "adjacency must be square, is {n}x{m}"
            )));
        }
        let device = adj.device();
        let dtype = adj.dtype();
        let values: Vec<f64> = adj.into_data().iter::<f64>().collect();
        let (mut s, mut r, mut w) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &x) in values.iter().enumerate() {
            if x != 0.0 {
                s.push((i / n) as i64);
                r.push((i % n) as i64);
                w.push(x);
            }
        }
        let e = w.len();
        let weights = Tensor::<1>::from_data(TensorData::new(w, [e]), (&device, dtype));
        GraphsTuple::builder(index_tensor(s, &device), index_tensor(r, &device))
            .num_nodes(n)
            .edges(weights)
            .build()
    }

    /// The dense `[sum_n_node, sum_n_node]` adjacency: `adj[s][r]` is the sum over edges
    /// `s -> r` of their weight, the `[E]` float edge feature if there is one, else 1. A batch
    /// gives its block-diagonal matrix. Computed on the device (one scatter-add).
    pub fn to_dense_adjacency(&self) -> Tensor<2> {
        let n = self.num_nodes;
        let device = self.device();
        let weights = self
            .edges()
            .and_then(|f| f.float::<1>())
            .unwrap_or_else(|| Tensor::ones([self.sum_n_edge()], &device));
        if n == 0 || self.sum_n_edge() == 0 {
            // No edges: a scatter with an empty index corrupts later ops on wgpu (see
            // `compat`); Burn 0.22's reshape of `[0]` into `[0, 0]` panics.
            return Tensor::zeros([n, n], (&device, weights.dtype()));
        }
        let flat = self
            .senders
            .clone()
            .mul_scalar(n as i64)
            .add(self.receivers.clone());
        Tensor::<1>::zeros([n * n], (&device, weights.dtype()))
            .select_assign(0, flat, weights, IndexingUpdateOp::Add)
            .reshape([n, n])
    }
}
