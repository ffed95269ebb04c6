//! Negative sampling: node pairs that are not edges, per graph of a batch.
//!
//! Each graph's candidate pairs are numbered by a key (`u·n + v`, or the index of `{u, v}` in
//! the upper triangle for unordered pairs); the edges (and the diagonal, unless self loops are
//! allowed) are a sorted list of forbidden keys. Both methods draw a uniformly random set of
//! distinct allowed keys: [`NegativeMethod::Sparse`] by rejection, [`NegativeMethod::Dense`]
//! by drawing ranks among the allowed keys (Floyd's algorithm) and mapping each rank to its key
//! by a binary search over the forbidden list, so it never needs more than `O(num_neg + E)`
//! memory and never retries.

use burn_gnn_graph::GraphsTuple;
use rayon::prelude::*;

use super::host_ints;
use super::pair_space::{NegativeMethod, PairSpace};
use crate::DataError;
use crate::synthetic::SplitMix64;

/// Options of [`NegativeSampler`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NegativeSampling {
    /// How pairs are drawn.
    pub method: NegativeMethod,
    /// Whether `(v, v)` may be a negative (PyG never returns one; default `false`).
    pub self_loops: bool,
    /// Unordered pairs: `{u, v}` is a negative only if neither `(u, v)` nor `(v, u)` is an edge,
    /// and is returned once, as `(min, max)` (for undirected graphs; default `false`).
    pub undirected: bool,
}

/// Draws negatives (pairs of nodes that are not edges) per graph of a batch, never across
/// graphs. Built once from a graph's edges, it can draw fresh negatives every epoch.
///
/// Seeded: the draw of graph `g` comes from its own stream of `(seed, g)`, so the result is the
/// same for any number of threads.
///
/// ```
/// use burn_gnn_data::{NegativeSampler, NegativeSampling};
/// // A path 0 - 1 - 2 listed in both directions; one graph of 3 nodes.
/// let (s, r) = ([0, 1, 1, 2], [1, 0, 2, 1]);
/// let sampler = NegativeSampler::new(&s, &r, &[3], NegativeSampling::default()).unwrap();
/// // Only (0, 2) and (2, 0) are free.
/// let (ns, nr) = sampler.sample(2, 7).unwrap();
/// let mut pairs: Vec<_> = ns.into_iter().zip(nr).collect();
/// pairs.sort();
/// assert_eq!(pairs, [(0, 2), (2, 0)]);
/// assert!(sampler.sample(3, 7).is_err()); // too dense for 3
/// ```
#[derive(Clone, Debug)]
pub struct NegativeSampler {
    graphs: Vec<PairSpace>,
    options: NegativeSampling,
}

/// Graph `g`'s stream under `seed`.
fn stream(seed: u64, g: usize) -> SplitMix64 {
    let mixed = SplitMix64::new(g as u64 ^ 0x6A09_E667_F3BC_C908).next_u64();
    SplitMix64::new(seed ^ mixed)
}

impl NegativeSampler {
    /// A sampler over the graphs of a batch: `n_node[g]` nodes each, in order, and the edges
    /// `senders[e] -> receivers[e]` (global node ids; in any order; duplicates allowed).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] if the lists differ in length, a node id is outside the
    /// batch, an edge joins two graphs, or a graph has more than `u32::MAX` nodes.
    pub fn new(
        senders: &[i64],
        receivers: &[i64],
        n_node: &[usize],
        options: NegativeSampling,
    ) -> Result<NegativeSampler, DataError> {
        if senders.len() != receivers.len() {
            return Err(DataError::InvalidArgument(format!(
                "negative sampling: {} senders but {} receivers",
                senders.len(),
                receivers.len()
            )));
        }
        let mut graphs = Vec::with_capacity(n_node.len());
        let mut offset = 0u64;
        for &n in n_node {
            if n as u64 > u64::from(u32::MAX) {
                return Err(DataError::InvalidArgument(format!(
                    "negative sampling: a graph of {n} nodes (at most {} per graph)",
                    u32::MAX
                )));
            }
            let n = n as u64;
            let universe = if options.undirected {
                n * (n + 1) / 2
            } else {
                n * n
            };
            graphs.push(PairSpace {
                offset,
                n,
                m: n,
                dst_offset: offset,
                universe,
                forbidden: Vec::new(),
            });
            offset += n;
        }
        let starts: Vec<u64> = graphs.iter().map(|g| g.offset).collect();
        let graph_of = |v: i64| -> Option<usize> {
            let v = u64::try_from(v).ok().filter(|&v| v < offset)?;
            Some(starts.partition_point(|&s| s <= v) - 1)
        };
        for (e, (&s, &r)) in senders.iter().zip(receivers).enumerate() {
            let (Some(gs), Some(gr)) = (graph_of(s), graph_of(r)) else {
                return Err(DataError::InvalidArgument(format!(
                    "negative sampling: edge {e} ({s} -> {r}) leaves the batch's {offset} nodes"
                )));
            };
            if gs != gr {
                return Err(DataError::InvalidArgument(format!(
                    "negative sampling: edge {e} ({s} -> {r}) joins graphs {gs} and {gr}"
                )));
            }
            let g = &mut graphs[gs];
            let key = g.key(s as u64 - g.offset, r as u64 - g.offset, options.undirected);
            g.forbidden.push(key);
        }
        for g in &mut graphs {
            if !options.self_loops {
                let diagonal: Vec<u64> =
                    (0..g.n).map(|v| g.key(v, v, options.undirected)).collect();
                g.forbidden.extend(diagonal);
            }
            g.forbidden.sort_unstable();
            g.forbidden.dedup();
        }
        Ok(NegativeSampler { graphs, options })
    }

    /// A sampler over a [`GraphsTuple`]'s graphs and edges (read once from the device).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn from_graph(
        graph: &GraphsTuple,
        options: NegativeSampling,
    ) -> Result<NegativeSampler, DataError> {
        let (senders, receivers) = graph.to_coo();
        let n_node: Vec<usize> = host_ints(graph.n_node())
            .into_iter()
            .map(|n| n as usize)
            .collect();
        NegativeSampler::new(&senders, &receivers, &n_node, options)
    }

    /// A sampler over one bipartite relation: `senders` index `num_src` source nodes,
    /// `receivers` `num_dst` target nodes (one edge type of a heterogeneous graph); a negative
    /// is any (source, target) pair that is not an edge. `options.self_loops` and
    /// `options.undirected` do not apply.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] if the lists differ in length, an index is outside its
    /// node set, `options.undirected` is set, or a side has more than `u32::MAX` nodes.
    pub fn bipartite(
        senders: &[i64],
        receivers: &[i64],
        num_src: usize,
        num_dst: usize,
        options: NegativeSampling,
    ) -> Result<NegativeSampler, DataError> {
        let bad = |m: String| {
            Err(DataError::InvalidArgument(format!(
                "negative sampling: {m}"
            )))
        };
        if options.undirected {
            return bad("a bipartite relation has no undirected pairs".into());
        }
        if senders.len() != receivers.len() {
            return bad(format!(
                "{} senders but {} receivers",
                senders.len(),
                receivers.len()
            ));
        }
        if num_src.max(num_dst) as u64 > u64::from(u32::MAX) {
            return bad(format!(
                "{} nodes (at most {} per side)",
                num_src.max(num_dst),
                u32::MAX
            ));
        }
        let (n, m) = (num_src as u64, num_dst as u64);
        let mut forbidden = Vec::with_capacity(senders.len());
        for (e, (&s, &r)) in senders.iter().zip(receivers).enumerate() {
            match (u64::try_from(s), u64::try_from(r)) {
                (Ok(s), Ok(r)) if s < n && r < m => forbidden.push(s * m + r),
                _ => {
                    return bad(format!(
                        "edge {e} ({s} -> {r}) leaves the {num_src} x {num_dst} node sets"
                    ));
                }
            }
        }
        forbidden.sort_unstable();
        forbidden.dedup();
        let space = PairSpace {
            offset: 0,
            n,
            m,
            dst_offset: 0,
            universe: n * m,
            forbidden,
        };
        let options = NegativeSampling {
            self_loops: true,
            ..options
        };
        Ok(NegativeSampler {
            graphs: vec![space],
            options,
        })
    }

    /// The number of graphs.
    pub fn num_graphs(&self) -> usize {
        self.graphs.len()
    }

    /// Per graph: how many distinct negatives exist.
    pub fn available(&self) -> Vec<u64> {
        self.graphs.iter().map(PairSpace::available).collect()
    }

    /// `num_neg` distinct negatives from every graph (PyG's `batched_negative_sampling`), graph
    /// by graph, as global `(senders, receivers)`.
    ///
    /// # Errors
    /// [`DataError::TooDense`] if a graph has fewer than `num_neg` free pairs.
    pub fn sample(&self, num_neg: usize, seed: u64) -> Result<(Vec<i64>, Vec<i64>), DataError> {
        self.sample_per_graph(&vec![num_neg; self.graphs.len()], seed)
    }

    /// `counts[g]` distinct negatives from graph `g`, graph by graph.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] if `counts` does not have one entry per graph;
    /// [`DataError::TooDense`] if a graph has fewer free pairs than asked.
    pub fn sample_per_graph(
        &self,
        counts: &[usize],
        seed: u64,
    ) -> Result<(Vec<i64>, Vec<i64>), DataError> {
        if counts.len() != self.graphs.len() {
            return Err(DataError::InvalidArgument(format!(
                "negative sampling: {} counts for {} graphs",
                counts.len(),
                self.graphs.len()
            )));
        }
        for (g, (space, &asked)) in self.graphs.iter().zip(counts).enumerate() {
            if asked as u64 > space.available() {
                return Err(DataError::TooDense {
                    graph: g,
                    asked,
                    available: space.available(),
                });
            }
        }
        let undirected = self.options.undirected;
        let per_graph: Vec<Vec<(i64, i64)>> = self
            .graphs
            .par_iter()
            .zip(counts)
            .enumerate()
            .map(|(g, (space, &count))| {
                let keys = space.draw(count as u64, self.options.method, &mut stream(seed, g));
                keys.into_iter()
                    .map(|k| {
                        let (u, v) = space.pair(k, undirected);
                        ((space.offset + u) as i64, (space.dst_offset + v) as i64)
                    })
                    .collect()
            })
            .collect();
        Ok(per_graph.into_iter().flatten().unzip())
    }

    /// One negative per positive edge, sharing its sender (PyG's
    /// `structured_negative_sampling`): for each `senders[e]`, a node `k` of the same graph with
    /// `senders[e] -> k` not an edge (nor `k -> senders[e]` with `undirected`), and `k` not the
    /// sender itself unless self loops are allowed. Drawn edge by edge from one stream.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a sender outside the batch; [`DataError::TooDense`]
    /// when a sender has no free partner.
    pub fn structured(&self, senders: &[i64], seed: u64) -> Result<Vec<i64>, DataError> {
        let undirected = self.options.undirected;
        let starts: Vec<u64> = self.graphs.iter().map(|g| g.offset).collect();
        let total = self.graphs.last().map_or(0, |g| g.offset + g.n);
        let mut rng = SplitMix64::new(seed);
        let mut out = Vec::with_capacity(senders.len());
        for &s in senders {
            let Some(u) = u64::try_from(s).ok().filter(|&u| u < total) else {
                return Err(DataError::InvalidArgument(format!(
                    "structured negative sampling: sender {s} is outside the batch's {total} nodes"
                )));
            };
            let g = starts.partition_point(|&o| o <= u) - 1;
            let space = &self.graphs[g];
            let u = u - space.offset;
            let free = |v: u64| !space.is_forbidden(space.key(u, v, undirected));
            // Rejection while it is cheap; otherwise pick among the free partners exactly.
            let mut found = None;
            for _ in 0..32 {
                let v = rng.below(space.m);
                if free(v) {
                    found = Some(v);
                    break;
                }
            }
            let v = match found {
                Some(v) => v,
                None => {
                    let partners: Vec<u64> = (0..space.m).filter(|&v| free(v)).collect();
                    if partners.is_empty() {
                        return Err(DataError::TooDense {
                            graph: g,
                            asked: 1,
                            available: 0,
                        });
                    }
                    partners[rng.below(partners.len() as u64) as usize]
                }
            };
            out.push((space.dst_offset + v) as i64);
        }
        Ok(out)
    }
}

/// `num_neg` negatives from every graph of `graph` (see [`NegativeSampler`]).
///
/// # Errors
/// As [`NegativeSampler::from_graph`] and [`NegativeSampler::sample`].
pub fn negative_sampling(
    graph: &GraphsTuple,
    num_neg: usize,
    options: NegativeSampling,
    seed: u64,
) -> Result<(Vec<i64>, Vec<i64>), DataError> {
    NegativeSampler::from_graph(graph, options)?.sample(num_neg, seed)
}

/// `(senders, receivers, negatives)`: each edge with a negative receiver for its sender.
pub type Structured = (Vec<i64>, Vec<i64>, Vec<i64>);

/// For every edge `i -> j` of `graph`, a node `k` of its graph with `i -> k` not an edge:
/// `(senders, receivers, negatives)` (PyG's `structured_negative_sampling`).
///
/// # Errors
/// As [`NegativeSampler::structured`].
pub fn structured_negative_sampling(
    graph: &GraphsTuple,
    options: NegativeSampling,
    seed: u64,
) -> Result<Structured, DataError> {
    let sampler = NegativeSampler::from_graph(graph, options)?;
    let (senders, receivers) = graph.to_coo();
    let negatives = sampler.structured(&senders, seed)?;
    Ok((senders, receivers, negatives))
}
