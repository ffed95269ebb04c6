//! Node reordering for memory locality: reverse Cuthill–McKee, and relabelling nodes by any
//! permutation.
//!
//! A message-passing layer reads each edge's sender row. When neighbours have nearby ids, those
//! reads hit rows already in cache; when ids are arbitrary (a crawl order, a hash, a shuffle),
//! each read is a random access to a node matrix that may be far larger than the cache. The
//! layers compute the same thing either way (they are permutation equivariant); only the speed
//! differs.

use burn::tensor::Int;
use burn::tensor::Tensor;

use crate::graphs_tuple::{host_ints, index_tensor};
use crate::transform::{node_graphs, receiver_order};
use crate::{GraphError, GraphsTuple};

/// A graph whose nodes were relabelled, with the ids nodes and edges had before.
#[derive(Clone, Debug)]
pub struct Permuted {
    /// The relabelled graph: node `v` is node `node_ids[v]` of the original, with its features;
    /// `n_node`, `n_edge`, globals and padding are unchanged.
    pub graph: GraphsTuple,
    /// Original id of each node, `[sum_n_node]`: carry per-node data (labels, masks) along with
    /// `select(0, node_ids)`.
    pub node_ids: Tensor<1, Int>,
    /// Original id of each edge, `[sum_n_edge]` (the identity unless the edges were re-sorted
    /// by receiver).
    pub edge_ids: Tensor<1, Int>,
}

/// The symmetric adjacency of a graph on the host, without self loops, duplicates or edges
/// between different graphs; each node's neighbours sorted by (degree, id).
struct Adjacency {
    offsets: Vec<usize>,
    neighbours: Vec<usize>,
}

impl Adjacency {
    fn new(senders: &[i64], receivers: &[i64], graph_of: &[usize]) -> Self {
        let n = graph_of.len();
        let keep = |s: usize, r: usize| s != r && graph_of[s] == graph_of[r];
        let mut counts = vec![0usize; n + 1];
        for (&s, &r) in senders.iter().zip(receivers) {
            let (s, r) = (s as usize, r as usize);
            if keep(s, r) {
                counts[s + 1] += 1;
                counts[r + 1] += 1;
            }
        }
        for v in 0..n {
            counts[v + 1] += counts[v];
        }
        let mut next = counts.clone();
        let mut all = vec![0usize; counts[n]];
        for (&s, &r) in senders.iter().zip(receivers) {
            let (s, r) = (s as usize, r as usize);
            if keep(s, r) {
                all[next[s]] = r;
                next[s] += 1;
                all[next[r]] = s;
                next[r] += 1;
            }
        }
        // Deduplicate each list in place, compacting.
        let mut offsets = vec![0usize; n + 1];
        let mut len = 0;
        for v in 0..n {
            let list = &mut all[counts[v]..counts[v + 1]];
            list.sort_unstable();
            let start = len;
            for i in counts[v]..counts[v + 1] {
                if len == start || all[len - 1] != all[i] {
                    all[len] = all[i];
                    len += 1;
                }
            }
            offsets[v + 1] = len;
        }
        all.truncate(len);
        let degree = |v: usize| offsets[v + 1] - offsets[v];
        for v in 0..n {
            all[offsets[v]..offsets[v + 1]].sort_unstable_by_key(|&u| (degree(u), u));
        }
        Self {
            offsets,
            neighbours: all,
        }
    }

    fn degree(&self, v: usize) -> usize {
        self.offsets[v + 1] - self.offsets[v]
    }

    fn of(&self, v: usize) -> &[usize] {
        &self.neighbours[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// Breadth-first search from `root` over the nodes not yet `placed`, marking the ones it
/// reaches with `stamp`; appends them to `visit` in visiting order (neighbours by increasing
/// degree: Cuthill–McKee's order). Returns the index in `visit` where the last level starts,
/// and the number of levels.
fn bfs(
    adj: &Adjacency,
    root: usize,
    placed: &[bool],
    mark: &mut [u32],
    stamp: u32,
    visit: &mut Vec<usize>,
) -> (usize, usize) {
    let start = visit.len();
    mark[root] = stamp;
    visit.push(root);
    let (mut level, mut head, mut levels) = (start, start, 0);
    while head < visit.len() {
        level = head;
        levels += 1;
        let end = visit.len();
        for i in head..end {
            let v = visit[i];
            for &u in adj.of(v) {
                if !placed[u] && mark[u] != stamp {
                    mark[u] = stamp;
                    visit.push(u);
                }
            }
        }
        head = end;
    }
    (level, levels)
}

impl GraphsTuple {
    /// A node order that puts neighbours near each other: reverse Cuthill–McKee, graph by graph
    /// (`order[new] = old`; each graph's nodes stay in its range). Pass it to
    /// [`permute_nodes`](Self::permute_nodes), or call [`reorder_rcm`](Self::reorder_rcm).
    ///
    /// Edges count in both directions; self loops, duplicates and edges between different
    /// graphs are ignored. Each connected component, in the order of its smallest id, is walked
    /// breadth first from a pseudo-peripheral node (George and Liu's search, starting at the
    /// component's node of smallest degree), each node's unvisited neighbours taken by
    /// increasing degree, then id; each graph's order is then reversed. Deterministic. Time
    /// `O(E log d + N)` on the host (a few searches per component), memory `O(E + N)`.
    ///
    /// Cuthill and McKee, "Reducing the bandwidth of sparse symmetric matrices" (1969):
    /// <https://doi.org/10.1145/800195.805928>; George and Liu, *Computer Solution of Large
    /// Sparse Positive Definite Systems* (1981).
    pub fn rcm_order(&self) -> Vec<usize> {
        let n_node = host_ints(&self.n_node);
        let graph_of = node_graphs(&n_node);
        let adj = Adjacency::new(
            &host_ints(&self.senders),
            &host_ints(&self.receivers),
            &graph_of,
        );
        let n = self.num_nodes;
        let mut placed = vec![false; n];
        let mut mark = vec![0u32; n];
        let mut stamp = 0u32;
        let mut next_stamp = |mark: &mut [u32]| {
            if stamp == u32::MAX {
                mark.fill(0);
                stamp = 0;
            }
            stamp += 1;
            stamp
        };
        let mut order = Vec::with_capacity(n);
        let mut scratch = Vec::new();
        let mut graph_start = 0;
        for &count in &n_node {
            let graph_end = graph_start + count as usize;
            for root in graph_start..graph_end {
                if placed[root] {
                    continue;
                }
                // The component, and its node of smallest degree.
                scratch.clear();
                let stamp = next_stamp(&mut mark);
                bfs(&adj, root, &placed, &mut mark, stamp, &mut scratch);
                let mut start = *scratch
                    .iter()
                    .min_by_key(|&&v| (adj.degree(v), v))
                    .expect("the root");
                // George–Liu: move to a node of the last level while the eccentricity grows.
                let mut depth = None;
                for _ in 0..scratch.len() {
                    scratch.clear();
                    let stamp = next_stamp(&mut mark);
                    let (last, levels) = bfs(&adj, start, &placed, &mut mark, stamp, &mut scratch);
                    if depth.is_some_and(|d| levels <= d) {
                        break;
                    }
                    depth = Some(levels);
                    let far = *scratch[last..]
                        .iter()
                        .min_by_key(|&&v| (adj.degree(v), v))
                        .expect("a last level");
                    if far == start {
                        break;
                    }
                    start = far;
                }
                let first = order.len();
                let stamp = next_stamp(&mut mark);
                bfs(&adj, start, &placed, &mut mark, stamp, &mut order);
                order[first..].iter().for_each(|&v| placed[v] = true);
            }
            order[graph_start..graph_end].reverse();
            graph_start = graph_end;
        }
        order
    }

    /// Relabels the nodes: new node `v` is old node `order[v]`, with its features; senders and
    /// receivers are renamed, and edges sorted by receiver stay sorted (re-sorted stably, their
    /// features following). [`Permuted::node_ids`] and [`Permuted::edge_ids`] say where every
    /// node and edge came from.
    ///
    /// # Errors
    /// If `order` does not have one entry per node, is not a permutation, or moves a node out of
    /// its graph.
    pub fn permute_nodes(&self, order: &[usize]) -> Result<Permuted, GraphError> {
        let n = self.num_nodes;
        let bad = |msg: String| Err(GraphError::InvalidArgument(format!("permute_nodes: {msg}")));
        if order.len() != n {
            return bad(format!("order has {} entries for {n} nodes", order.len()));
        }
        let mut inverse = vec![usize::MAX; n];
        let mut graph_start = 0;
        for (g, &count) in host_ints(&self.n_node).iter().enumerate() {
            let range = graph_start..graph_start + count as usize;
            for new in range.clone() {
                let old = order[new];
                if old >= n {
                    return bad(format!(
                        "order[{new}] = {old} is out of range for {n} nodes"
                    ));
                }
                if inverse[old] != usize::MAX {
                    return bad(format!(
                        "node {old} appears twice (at {} and {new})",
                        inverse[old]
                    ));
                }
                if !range.contains(&old) {
                    return bad(format!(
                        "order[{new}] = {old} moves node {old} into graph {g}, which holds nodes {range:?}"
                    ));
                }
                inverse[old] = new;
            }
            graph_start = range.end;
        }
        let rename = |ids: Vec<i64>| -> Vec<i64> {
            ids.into_iter()
                .map(|v| inverse[v as usize] as i64)
                .collect()
        };
        let (mut senders, mut receivers) = (
            rename(host_ints(&self.senders)),
            rename(host_ints(&self.receivers)),
        );
        // Edges sorted by receiver are re-sorted (stably) by their new receivers.
        let resorted = self.is_sorted_by_receiver().then(|| {
            let edge_order = receiver_order(&receivers, n);
            let pick =
                |ids: &[i64]| -> Vec<i64> { edge_order.iter().map(|&e| ids[e as usize]).collect() };
            (senders, receivers) = (pick(&senders), pick(&receivers));
            edge_order
        });
        let device = self.device();
        let node_ids = index_tensor(order.iter().map(|&v| v as i64).collect(), &device);
        let mut graph = self.with_structure(
            index_tensor(senders, &device),
            index_tensor(receivers, &device),
            self.n_node.clone(),
            self.n_edge.clone(),
            n,
        );
        graph.nodes = self.nodes.clone().map(|f| f.select_rows(node_ids.clone()));
        let edge_ids = match resorted {
            Some(edge_order) => {
                let edge_ids = index_tensor(edge_order, &device);
                graph.edges = self.edges.clone().map(|f| f.select_rows(edge_ids.clone()));
                graph = graph.with_sorted_receivers(true);
                edge_ids
            }
            None => index_tensor((0..self.sum_n_edge() as i64).collect(), &device),
        };
        Ok(Permuted {
            graph,
            node_ids,
            edge_ids,
        })
    }

    /// [`permute_nodes`](Self::permute_nodes) by [`rcm_order`](Self::rcm_order): the graph with
    /// its nodes in reverse Cuthill–McKee order, so that most edges join nodes with nearby ids
    /// and a layer's reads of sender rows stay in cache. Worth it on large graphs whose ids carry
    /// no locality (meshes, road networks and citation or social graphs with communities, in
    /// an arbitrary order); a graph without structure (Erdős–Rényi) has none to recover.
    pub fn reorder_rcm(&self) -> Permuted {
        self.permute_nodes(&self.rcm_order())
            .expect("rcm_order is a permutation within each graph")
    }
}
