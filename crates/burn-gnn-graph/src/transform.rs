//! Graph utilities: self loops, undirected graphs, coalescing, sorting by receiver, subgraphs,
//! k-hop neighbourhoods and fully connected graphs.
//!
//! Each computes its new index lists on the host (one read of the edge index); features are
//! gathered or merged on the device.

use burn::tensor::{Device, Int, Tensor};

use crate::compat::{gather_rows, unless_empty};
use crate::graphs_tuple::{host_ints, index_tensor};
use crate::{EdgeReduce, Feature, FeatureSet, GraphError, GraphsTuple};

/// The edge features given to new self loops by [`GraphsTuple::add_self_loops`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum SelfLoopFill {
    /// Zeros.
    #[default]
    Zeros,
    /// This value in every entry.
    Value(f64),
    /// The mean of the node's incoming edges' features (zeros for nodes without any), PyG's
    /// `fill_value="mean"`. Float edge features only.
    Mean,
}

/// Options of [`GraphsTuple::add_self_loops`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SelfLoops {
    /// Remove existing self loops first, so every node ends with exactly one.
    pub remove_existing: bool,
    /// Edge features of the new loops.
    pub fill: SelfLoopFill,
}

/// The direction [`GraphsTuple::k_hop_subgraph`] walks, as PyG's `flow`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flow {
    /// Collect the nodes that send messages to the seeds (walk edges backwards): the nodes a
    /// message-passing layer reads from. PyG's default.
    #[default]
    SourceToTarget,
    /// Collect the nodes the seeds send to.
    TargetToSource,
}

/// A subgraph with the ids its nodes and edges had in the original graph.
#[derive(Clone, Debug)]
pub struct Subgraph {
    /// The subgraph, nodes relabelled `0..`, graph structure (`n_node`, `n_edge`) kept.
    pub graph: GraphsTuple,
    /// Original id of each kept node, ascending, `[sum_n_node]`.
    pub node_ids: Tensor<1, Int>,
    /// Original id of each kept edge, ascending, `[sum_n_edge]`.
    pub edge_ids: Tensor<1, Int>,
    /// For [`GraphsTuple::k_hop_subgraph`]: where each seed landed in the subgraph.
    pub seed_positions: Vec<usize>,
}

/// Per node on the host: the graph it belongs to.
pub(crate) fn node_graphs(n_node: &[i64]) -> Vec<usize> {
    n_node
        .iter()
        .enumerate()
        .flat_map(|(g, &n)| std::iter::repeat_n(g, n as usize))
        .collect()
}

/// Per graph: how many of `receivers` fall in it.
pub(crate) fn counts_per_graph(
    receivers: impl Iterator<Item = i64>,
    graph_of: &[usize],
    n_graph: usize,
) -> Vec<i64> {
    let mut counts = vec![0i64; n_graph];
    for r in receivers {
        counts[graph_of[r as usize]] += 1;
    }
    counts
}

/// CSR row pointers of sorted `keys` over `n` rows.
fn offsets(keys: &[i64], n: usize) -> Vec<i64> {
    let mut ptr = vec![0i64; n + 1];
    for &k in keys {
        ptr[k as usize + 1] += 1;
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    ptr
}

/// The stable order that sorts edges by `receivers` (old edge index per new edge, a counting
/// sort over `n` nodes).
pub(crate) fn receiver_order(receivers: &[i64], n: usize) -> Vec<i64> {
    let ptr = offsets(receivers, n);
    let mut next: Vec<i64> = ptr[..n].to_vec();
    let mut order = vec![0i64; receivers.len()];
    for (e, &v) in receivers.iter().enumerate() {
        order[next[v as usize] as usize] = e as i64;
        next[v as usize] += 1;
    }
    order
}

impl GraphsTuple {
    /// The graph with edges `order` (old edge index per new edge) and per-graph counts `n_edge`.
    fn pick_edges(&self, order: Vec<i64>, n_edge: Vec<i64>) -> GraphsTuple {
        let device = self.device();
        let idx = index_tensor(order, &device);
        let mut out = self.with_structure(
            gather_rows(self.senders.clone(), idx.clone()),
            gather_rows(self.receivers.clone(), idx.clone()),
            self.n_node.clone(),
            index_tensor(n_edge, &device),
            self.num_nodes,
        );
        out.edges = self.edges.clone().map(|f| f.select_rows(idx.clone()));
        out
    }

    /// Removes every edge whose sender is its receiver.
    pub fn remove_self_loops(&self) -> GraphsTuple {
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        if s.iter().zip(&r).all(|(a, b)| a != b) {
            return self.clone();
        }
        let graph_of = node_graphs(&host_ints(&self.n_node));
        let order: Vec<i64> = (0..s.len() as i64)
            .filter(|&e| s[e as usize] != r[e as usize])
            .collect();
        let n_edge = counts_per_graph(
            order.iter().map(|&e| r[e as usize]),
            &graph_of,
            self.n_graph(),
        );
        self.pick_edges(order, n_edge)
    }

    /// Adds a self loop `i -> i` for every node; each graph's loops follow its own edges, so the
    /// batch layout stays valid. Edge features of the loops follow `options.fill`.
    ///
    /// # Errors
    /// [`SelfLoopFill::Mean`] with int edge features.
    pub fn add_self_loops(&self, options: SelfLoops) -> Result<GraphsTuple, GraphError> {
        let base = if options.remove_existing {
            self.remove_self_loops()
        } else {
            self.clone()
        };
        let (n_node, n_edge) = (host_ints(&base.n_node), host_ints(&base.n_edge));
        let (edges, nodes) = (base.sum_n_edge() as i64, base.num_nodes);
        let mut order = Vec::with_capacity(edges as usize + nodes);
        let (mut e, mut v) = (0i64, 0i64);
        for (&nn, &ne) in n_node.iter().zip(&n_edge) {
            order.extend(e..e + ne);
            order.extend(edges + v..edges + v + nn);
            e += ne;
            v += nn;
        }
        let device = base.device();
        let idx = index_tensor(order, &device);
        let loops = index_tensor((0..nodes as i64).collect(), &device);
        let receivers = base.receivers.clone();
        let with_loops = |t: &Tensor<1, Int>| {
            gather_rows(Tensor::cat(vec![t.clone(), loops.clone()], 0), idx.clone())
        };
        let fill = |f: Feature| -> Result<Feature, GraphError> {
            let rows = match options.fill {
                SelfLoopFill::Zeros => f.clone().slice_rows(0, 0).pad_rows(nodes),
                SelfLoopFill::Value(x) => f.clone().slice_rows(0, 0).pad_rows(nodes).add_scalar(x),
                SelfLoopFill::Mean => {
                    f.clone()
                        .reduce_rows(receivers.clone(), nodes, EdgeReduce::Mean)?
                }
            };
            Ok(Feature::cat(vec![f, rows])
                .expect("same kind and shape")
                .select_rows(idx.clone()))
        };
        let mut out = base.with_structure(
            with_loops(&base.senders),
            with_loops(&base.receivers),
            base.n_node.clone(),
            unless_empty(base.n_edge.clone(), |t| t.add(base.n_node.clone())),
            nodes,
        );
        out.edges = base.edges.clone().try_map(fill)?;
        Ok(out)
    }

    /// Sorts edges by (receiver, sender) and merges duplicates, their features with `reduce`.
    /// Receivers end up sorted, so the result carries [`receiver_offsets`](Self::receiver_offsets).
    ///
    /// # Errors
    /// [`EdgeReduce::Mean`] with int edge features.
    pub fn coalesce(&self, reduce: EdgeReduce) -> Result<GraphsTuple, GraphError> {
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        self.coalesce_parts(s, r, self.edges.clone(), reduce)
    }

    /// Adds the reverse `r -> s` of every edge `s -> r` and [`coalesce`](Self::coalesce)s with
    /// `reduce`, so an edge present in both directions gets the merged features of both. Self
    /// loops are not doubled (PyG's `to_undirected` sums a self loop with itself).
    ///
    /// # Errors
    /// As [`coalesce`](Self::coalesce).
    pub fn to_undirected(&self, reduce: EdgeReduce) -> Result<GraphsTuple, GraphError> {
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        let reverse: Vec<i64> = (0..s.len() as i64)
            .filter(|&e| s[e as usize] != r[e as usize])
            .collect();
        let mut senders = s.clone();
        let mut receivers = r.clone();
        senders.extend(reverse.iter().map(|&e| r[e as usize]));
        receivers.extend(reverse.iter().map(|&e| s[e as usize]));
        let mut order: Vec<i64> = (0..s.len() as i64).collect();
        order.extend(&reverse);
        let idx = index_tensor(order, &self.device());
        let edges = self.edges.clone().map(|f| f.select_rows(idx.clone()));
        self.coalesce_parts(senders, receivers, edges, reduce)
    }

    fn coalesce_parts(
        &self,
        s: Vec<i64>,
        r: Vec<i64>,
        edges: FeatureSet,
        reduce: EdgeReduce,
    ) -> Result<GraphsTuple, GraphError> {
        let mut order: Vec<usize> = (0..s.len()).collect();
        order.sort_by_key(|&e| (r[e], s[e]));
        let mut ids = vec![0i64; s.len()];
        let (mut senders, mut receivers) = (Vec::new(), Vec::new());
        for &e in &order {
            if senders.last() != Some(&s[e]) || receivers.last() != Some(&r[e]) {
                senders.push(s[e]);
                receivers.push(r[e]);
            }
            ids[e] = senders.len() as i64 - 1;
        }
        let graph_of = node_graphs(&host_ints(&self.n_node));
        let n_edge = counts_per_graph(receivers.iter().copied(), &graph_of, self.n_graph());
        let device = self.device();
        let unique = senders.len();
        let ids = index_tensor(ids, &device);
        let mut out = self.with_structure(
            index_tensor(senders, &device),
            index_tensor(receivers, &device),
            self.n_node.clone(),
            index_tensor(n_edge, &device),
            self.num_nodes,
        );
        out.edges = edges.try_map(|f| f.reduce_rows(ids.clone(), unique, reduce))?;
        Ok(out.with_sorted_receivers(true))
    }

    /// Stably sorts edges by receiver (a counting sort on the host), so the
    /// [`receiver_plan`](Self::receiver_plan) needs no permutation and the aggregations over
    /// receivers read their rows in order.
    pub fn sort_by_receiver(&self) -> GraphsTuple {
        if self.is_sorted_by_receiver() {
            return self.clone();
        }
        let order = receiver_order(&host_ints(&self.receivers), self.num_nodes);
        self.pick_edges(order, host_ints(&self.n_edge))
            .with_sorted_receivers(true)
    }

    /// CSR row pointers over receivers, `[sum_n_node + 1]`: node `v`'s incoming edges are
    /// `offsets[v]..offsets[v + 1]`. `None` unless edges are sorted by receiver. The offsets of
    /// the [`receiver_plan`](Self::receiver_plan) (built here if it was not yet).
    pub fn receiver_offsets(&self) -> Option<&Tensor<1, Int>> {
        self.is_sorted_by_receiver()
            .then(|| self.receiver_plan().offsets())
    }

    /// The subgraph induced by the nodes where `node_mask` is true: those nodes (relabelled in
    /// order) and the edges between them. Globals and the number of graphs are kept.
    ///
    /// # Errors
    /// If `node_mask` does not have one entry per node.
    pub fn subgraph(&self, node_mask: &[bool]) -> Result<Subgraph, GraphError> {
        if node_mask.len() != self.num_nodes {
            return Err(GraphError::InvalidArgument(format!(
                "subgraph: node_mask has {} entries for {} nodes",
                node_mask.len(),
                self.num_nodes
            )));
        }
        let n_node = host_ints(&self.n_node);
        let graph_of = node_graphs(&n_node);
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        let mut new_id = vec![-1i64; self.num_nodes];
        let mut node_ids = Vec::new();
        let mut counts_node = vec![0i64; n_node.len()];
        for (v, _) in node_mask.iter().enumerate().filter(|(_, k)| **k) {
            new_id[v] = node_ids.len() as i64;
            node_ids.push(v as i64);
            counts_node[graph_of[v]] += 1;
        }
        let edge_ids: Vec<i64> = (0..s.len())
            .filter(|&e| node_mask[s[e] as usize] && node_mask[r[e] as usize])
            .map(|e| e as i64)
            .collect();
        let n_edge = counts_per_graph(
            edge_ids.iter().map(|&e| r[e as usize]),
            &graph_of,
            n_node.len(),
        );
        let device = self.device();
        let relabel = |x: &[i64]| {
            index_tensor(
                edge_ids
                    .iter()
                    .map(|&e| new_id[x[e as usize] as usize])
                    .collect(),
                &device,
            )
        };
        let num_nodes = node_ids.len();
        let (nodes_t, edges_t) = (
            index_tensor(node_ids, &device),
            index_tensor(edge_ids.clone(), &device),
        );
        let mut graph = self.with_structure(
            relabel(&s),
            relabel(&r),
            index_tensor(counts_node, &device),
            index_tensor(n_edge, &device),
            num_nodes,
        );
        graph.nodes = self.nodes.clone().map(|f| f.select_rows(nodes_t.clone()));
        graph.edges = self.edges.clone().map(|f| f.select_rows(edges_t.clone()));
        Ok(Subgraph {
            graph,
            node_ids: nodes_t,
            edge_ids: edges_t,
            seed_positions: Vec::new(),
        })
    }

    /// The subgraph induced by the nodes within `num_hops` hops of `seeds`, as PyG's
    /// `k_hop_subgraph` (with `relabel_nodes=True`): with [`Flow::SourceToTarget`], the nodes
    /// whose messages reach a seed in at most `num_hops` layers. Every edge between kept nodes is
    /// kept. [`Subgraph::seed_positions`] says where each seed landed.
    ///
    /// # Errors
    /// A seed out of range.
    pub fn k_hop_subgraph(
        &self,
        seeds: &[usize],
        num_hops: usize,
        flow: Flow,
    ) -> Result<Subgraph, GraphError> {
        if let Some(&bad) = seeds.iter().find(|&&v| v >= self.num_nodes) {
            return Err(GraphError::InvalidArgument(format!(
                "k_hop_subgraph: seed {bad} is out of range for {} nodes",
                self.num_nodes
            )));
        }
        let (s, r) = (host_ints(&self.senders), host_ints(&self.receivers));
        let (from, to) = match flow {
            Flow::SourceToTarget => (&r, &s),
            Flow::TargetToSource => (&s, &r),
        };
        let ptr = offsets(from, self.num_nodes);
        let mut next: Vec<i64> = ptr[..self.num_nodes].to_vec();
        let mut adj = vec![0usize; from.len()];
        for (e, &v) in from.iter().enumerate() {
            adj[next[v as usize] as usize] = to[e] as usize;
            next[v as usize] += 1;
        }
        let mut mask = vec![false; self.num_nodes];
        let mut frontier: Vec<usize> = seeds.to_vec();
        seeds.iter().for_each(|&v| mask[v] = true);
        for _ in 0..num_hops {
            let mut grown = Vec::new();
            for &v in &frontier {
                for &u in &adj[ptr[v] as usize..ptr[v + 1] as usize] {
                    if !mask[u] {
                        mask[u] = true;
                        grown.push(u);
                    }
                }
            }
            frontier = grown;
        }
        let mut sub = self.subgraph(&mask)?;
        let rank: Vec<usize> = mask
            .iter()
            .scan(0usize, |c, &m| {
                let r = *c;
                *c += m as usize;
                Some(r)
            })
            .collect();
        sub.seed_positions = seeds.iter().map(|&v| rank[v]).collect();
        Ok(sub)
    }
}

/// Fully connected graphs of the given sizes, batched: every ordered pair of distinct nodes of
/// a graph is an edge, plus `i -> i` when `add_self_edges`. Edges are ordered by (receiver,
/// sender), so the result is sorted by receiver. No features (add them with
/// [`GraphsTuple::with_nodes`] and friends). jraph's `get_fully_connected_graph`.
pub fn fully_connected_graph(
    n_node: &[usize],
    add_self_edges: bool,
    device: &Device,
) -> GraphsTuple {
    let (mut senders, mut receivers, mut n_edge) = (Vec::new(), Vec::new(), Vec::new());
    let mut first = 0i64;
    for &n in n_node {
        let n = n as i64;
        for r in first..first + n {
            for s in first..first + n {
                if s != r || add_self_edges {
                    senders.push(s);
                    receivers.push(r);
                }
            }
        }
        n_edge.push(if add_self_edges {
            n * n
        } else {
            n * (n - 1).max(0)
        });
        first += n;
    }
    let g = GraphsTuple::builder(
        index_tensor(senders, device),
        index_tensor(receivers, device),
    )
    .n_node(index_tensor(
        n_node.iter().map(|&n| n as i64).collect(),
        device,
    ))
    .n_edge(index_tensor(n_edge, device))
    .num_nodes(first as usize)
    .build_unchecked()
    .expect("consistent by construction");
    g.with_sorted_receivers(true)
}
