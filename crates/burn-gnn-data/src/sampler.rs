//! [`NeighborLoader`]: GraphSAGE-style neighbour sampling into [`GraphsTuple`] mini-batches.

use std::sync::Arc;

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;
use rayon::prelude::*;

use crate::DataError;
use crate::synthetic::SplitMix64;

/// The incoming neighbours of every node, on the host: `in_neighbors(v)` are the senders of
/// the edges into `v`, in edge order (CSR over receivers).
#[derive(Clone, Debug)]
pub struct InNeighbors {
    offsets: Vec<usize>,
    senders: Vec<u32>,
}

impl InNeighbors {
    /// Builds the lists from an edge list (a stable counting sort by receiver, O(E)).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for lists of different lengths, an index outside
    /// `0..num_nodes`, or more than `u32::MAX` nodes.
    pub fn new(
        senders: &[i64],
        receivers: &[i64],
        num_nodes: usize,
    ) -> Result<InNeighbors, DataError> {
        Self::bipartite(senders, receivers, num_nodes, num_nodes)
    }

    /// The lists of a bipartite relation: `senders` index `num_src` source nodes, `receivers`
    /// `num_dst` target nodes (one edge type of a heterogeneous graph).
    ///
    /// # Errors
    /// As [`new`](Self::new), each index checked against its own node set.
    pub fn bipartite(
        senders: &[i64],
        receivers: &[i64],
        num_src: usize,
        num_dst: usize,
    ) -> Result<InNeighbors, DataError> {
        let bad = |m: String| Err(DataError::InvalidArgument(format!("neighbour lists: {m}")));
        if senders.len() != receivers.len() {
            return bad(format!(
                "{} senders but {} receivers",
                senders.len(),
                receivers.len()
            ));
        }
        if num_src.max(num_dst) > u32::MAX as usize {
            return bad(format!(
                "{} nodes do not fit u32 indices",
                num_src.max(num_dst)
            ));
        }
        for (what, ids, n) in [
            ("sender", senders, num_src),
            ("receiver", receivers, num_dst),
        ] {
            if let Some((e, v)) = ids
                .iter()
                .enumerate()
                .find(|(_, v)| !(0..n as i64).contains(v))
            {
                return bad(format!("{what} {v} at position {e} is outside 0..{n}"));
            }
        }
        let mut offsets = vec![0usize; num_dst + 1];
        for &r in receivers {
            offsets[r as usize + 1] += 1;
        }
        for v in 0..num_dst {
            offsets[v + 1] += offsets[v];
        }
        let mut next = offsets.clone();
        let mut sorted = vec![0u32; senders.len()];
        for (&s, &r) in senders.iter().zip(receivers) {
            sorted[next[r as usize]] = s as u32;
            next[r as usize] += 1;
        }
        Ok(InNeighbors {
            offsets,
            senders: sorted,
        })
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The senders of the edges into `v`.
    pub fn of(&self, v: usize) -> &[u32] {
        &self.senders[self.offsets[v]..self.offsets[v + 1]]
    }

    /// Every edge as `(sender, receiver)`, by receiver, each receiver's in edge order.
    pub fn edges(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        (0..self.num_nodes())
            .flat_map(|v| self.of(v).iter().map(move |&u| (i64::from(u), v as i64)))
    }
}

/// The seeds of one epoch cut into batches, shuffled with `seed + epoch` when `seed` is given.
pub(crate) fn epoch_batches(
    seeds: &[i64],
    batch_size: usize,
    seed: Option<u64>,
    epoch: u64,
) -> Vec<Vec<i64>> {
    let mut order = seeds.to_vec();
    if let Some(seed) = seed {
        SplitMix64::new(seed.wrapping_add(epoch)).shuffle(&mut order);
    }
    order.chunks(batch_size).map(<[i64]>::to_vec).collect()
}

/// The base of a batch's random streams, mixed from the loader's seed, the epoch and the batch.
pub(crate) fn batch_stream(seed: u64, epoch: u64, batch: u64) -> u64 {
    seed ^ epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ batch.wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Up to `k` distinct entries of `neighbors` (all of them if there are at most `k`), from the
/// random stream `stream`: a partial Fisher–Yates shuffle over positions.
pub(crate) fn draw(neighbors: &[u32], k: usize, stream: u64) -> Vec<u32> {
    if neighbors.len() <= k {
        return neighbors.to_vec();
    }
    let mut rng = SplitMix64::new(stream);
    let mut pos: Vec<u32> = (0..neighbors.len() as u32).collect();
    for i in 0..k {
        let j = i + rng.below((neighbors.len() - i) as u64) as usize;
        pos.swap(i, j);
    }
    pos[..k].iter().map(|&p| neighbors[p as usize]).collect()
}

/// One sampled mini-batch: the subgraph that the seed nodes' `L`-layer computation reads.
#[derive(Clone, Debug, PartialEq)]
pub struct SampledBatch {
    /// Global id of each node of the subgraph; the seeds come first, in batch order.
    pub nodes: Vec<i64>,
    /// Number of seed nodes (the first `num_seeds` of `nodes`).
    pub num_seeds: usize,
    /// Sampled edges, as local indices into `nodes` (messages flow `senders -> receivers`).
    pub senders: Vec<i64>,
    /// See `senders`.
    pub receivers: Vec<i64>,
}

impl SampledBatch {
    /// The batch as a one-graph [`GraphsTuple`] on `device`, with the rows of `x` (all nodes'
    /// features, `[num_nodes, D]`) for its nodes as node features and an Int node feature
    /// `"seed"`, 1 for the seeds (the first `num_seeds` nodes) and 0 for the others.
    ///
    /// # Errors
    /// Only if the graph fails validation (a bug).
    pub fn graph(&self, x: &Tensor<2>, device: &Device) -> Result<GraphsTuple, DataError> {
        let n = self.nodes.len();
        let index =
            Tensor::<1, Int>::from_data(TensorData::new(self.nodes.clone(), [n]), &x.device());
        let features = burn_gnn_graph::gather_rows(x.clone(), index).to_device(device);
        let seeds: Vec<i64> = (0..n).map(|i| i64::from(i < self.num_seeds)).collect();
        let g = GraphsTuple::from_coo(&self.senders, &self.receivers, n, device)?
            .with_nodes(features)?
            .with_feature(
                burn_gnn_graph::FeatureSetKind::Nodes,
                Some("seed"),
                Some(Tensor::<1, Int>::from_data(TensorData::new(seeds, [n]), device).into()),
            )?;
        Ok(g)
    }

    /// Number of sampled edges.
    pub fn num_edges(&self) -> usize {
        self.senders.len()
    }
}

/// Mini-batches of seed nodes with their sampled neighbourhoods, GraphSAGE style
/// ([Hamilton et al., 2017](https://arxiv.org/abs/1706.02216)), as PyG's `NeighborLoader`: for
/// each layer, every node of the frontier draws up to `fanouts[l]` of its incoming neighbours
/// without replacement (all of them if it has fewer), and the new nodes form the next frontier.
///
/// Seeded and reproducible: epoch `e` shuffles the seeds with `seed + e`, and each node's draw
/// comes from its own stream of `(seed, epoch, batch, layer, node)`, so the batches are the same
/// whatever the number of rayon threads that sample them in parallel.
#[derive(Clone, Debug)]
pub struct NeighborLoader {
    graph: Arc<InNeighbors>,
    seeds: Vec<i64>,
    fanouts: Vec<usize>,
    batch_size: usize,
    shuffle: bool,
    seed: u64,
}

impl NeighborLoader {
    /// A loader over `seeds` (the nodes to compute outputs for, e.g. the training nodes).
    /// `graph` may be shared (`Arc`) between loaders, e.g. for training and evaluation.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a zero batch size, no layers, or a seed outside the
    /// graph.
    pub fn new(
        graph: impl Into<Arc<InNeighbors>>,
        seeds: Vec<i64>,
        fanouts: Vec<usize>,
        batch_size: usize,
    ) -> Result<NeighborLoader, DataError> {
        let graph = graph.into();
        if batch_size == 0 || fanouts.is_empty() {
            return Err(DataError::InvalidArgument(
                "NeighborLoader: batch_size and the fan-out list must be non-empty".into(),
            ));
        }
        if let Some(s) = seeds
            .iter()
            .find(|&&s| !(0..graph.num_nodes() as i64).contains(&s))
        {
            return Err(DataError::InvalidArgument(format!(
                "NeighborLoader: seed node {s} is outside the graph"
            )));
        }
        Ok(NeighborLoader {
            graph,
            seeds,
            fanouts,
            batch_size,
            shuffle: true,
            seed: 0,
        })
    }

    /// Shuffle the seeds every epoch (default) or keep their order.
    pub fn with_shuffle(mut self, shuffle: bool) -> Self {
        self.shuffle = shuffle;
        self
    }

    /// The random seed (default 0).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Number of batches per epoch.
    pub fn num_batches(&self) -> usize {
        self.seeds.len().div_ceil(self.batch_size)
    }

    /// Number of nodes of the graph sampled from.
    pub fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }

    /// The seed nodes, in the order given (before any shuffling).
    pub fn seeds(&self) -> &[i64] {
        &self.seeds
    }

    /// The same loader (graph, fan-outs, batch size, shuffling, random seed) over
    /// `seeds()[range]` only, e.g. one device's share of the seeds in data-parallel training.
    ///
    /// # Panics
    /// If `range` is not within `0..seeds().len()`, as slice indexing does.
    pub fn slice(&self, range: std::ops::Range<usize>) -> NeighborLoader {
        NeighborLoader {
            graph: self.graph.clone(),
            seeds: self.seeds[range].to_vec(),
            fanouts: self.fanouts.clone(),
            batch_size: self.batch_size,
            shuffle: self.shuffle,
            seed: self.seed,
        }
    }

    /// The batches of epoch `epoch`, sampled lazily, one per `next()`.
    pub fn epoch(&self, epoch: u64) -> impl Iterator<Item = SampledBatch> + '_ {
        epoch_batches(
            &self.seeds,
            self.batch_size,
            self.shuffle.then_some(self.seed),
            epoch,
        )
        .into_iter()
        .enumerate()
        .map(move |(b, seeds)| self.sample(&seeds, epoch, b as u64))
    }

    /// Samples the neighbourhood of `seeds` (batch `batch` of `epoch`, for the random streams).
    pub fn sample(&self, seeds: &[i64], epoch: u64, batch: u64) -> SampledBatch {
        let mut local = std::collections::HashMap::with_capacity(seeds.len() * 4);
        let mut nodes: Vec<i64> = Vec::with_capacity(seeds.len() * 4);
        for &s in seeds {
            local.entry(s).or_insert_with(|| {
                nodes.push(s);
                nodes.len() as i64 - 1
            });
        }
        let num_seeds = nodes.len();
        let (mut senders, mut receivers) = (vec![], vec![]);
        let mut frontier: Vec<i64> = nodes.clone();
        let base = batch_stream(self.seed, epoch, batch);
        for (layer, &k) in self.fanouts.iter().enumerate() {
            let layer_base = base ^ (layer as u64 + 1).wrapping_mul(0x94D0_49BB_1331_11EB);
            // Each frontier node draws its neighbours from its own stream: parallel, yet the
            // same draws for any number of threads.
            let draws: Vec<Vec<u32>> = frontier
                .par_iter()
                .map(|&v| {
                    draw(
                        self.graph.of(v as usize),
                        k,
                        layer_base ^ (v as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9),
                    )
                })
                .collect();
            let mut next = vec![];
            for (&v, picked) in frontier.iter().zip(draws) {
                let r = local[&v];
                for u in picked {
                    let u = i64::from(u);
                    let l = *local.entry(u).or_insert_with(|| {
                        nodes.push(u);
                        next.push(u);
                        nodes.len() as i64 - 1
                    });
                    senders.push(l);
                    receivers.push(r);
                }
            }
            frontier = next;
        }
        SampledBatch {
            nodes,
            num_seeds,
            senders,
            receivers,
        }
    }
}

/// Cluster-GCN style mini-batches over a random node partition
/// ([Chiang et al., 2019](https://arxiv.org/abs/1905.07953), with random parts as its
/// baseline): each epoch shuffles the nodes into `num_parts` parts of (nearly) equal size, and
/// each batch is the subgraph induced by one part — every edge whose two ends fall in it.
/// Batches come as [`SampledBatch`]es whose seeds are all their nodes.
#[derive(Clone, Debug)]
pub struct RandomPartitionLoader {
    graph: Arc<InNeighbors>,
    num_parts: usize,
    seed: u64,
}

impl RandomPartitionLoader {
    /// A loader cutting `graph`'s nodes into `num_parts` parts.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for zero parts or more parts than nodes.
    pub fn new(
        graph: impl Into<Arc<InNeighbors>>,
        num_parts: usize,
    ) -> Result<RandomPartitionLoader, DataError> {
        let graph = graph.into();
        if num_parts == 0 || num_parts > graph.num_nodes().max(1) {
            return Err(DataError::InvalidArgument(format!(
                "RandomPartitionLoader: {num_parts} parts for {} nodes",
                graph.num_nodes()
            )));
        }
        Ok(RandomPartitionLoader {
            graph,
            num_parts,
            seed: 0,
        })
    }

    /// The random seed (default 0).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The parts of epoch `epoch`, each as an induced subgraph.
    pub fn epoch(&self, epoch: u64) -> impl Iterator<Item = SampledBatch> + '_ {
        let n = self.graph.num_nodes();
        let mut order: Vec<i64> = (0..n as i64).collect();
        SplitMix64::new(self.seed.wrapping_add(epoch)).shuffle(&mut order);
        let mut part = vec![0u32; n];
        let size = n.div_ceil(self.num_parts);
        for (i, &v) in order.iter().enumerate() {
            part[v as usize] = (i / size) as u32;
        }
        let chunks: Vec<Vec<i64>> = order.chunks(size).map(<[i64]>::to_vec).collect();
        chunks.into_iter().enumerate().map(move |(p, mut nodes)| {
            nodes.sort_unstable();
            let local: std::collections::HashMap<i64, i64> = nodes
                .iter()
                .enumerate()
                .map(|(i, &v)| (v, i as i64))
                .collect();
            let (mut senders, mut receivers) = (vec![], vec![]);
            for (r, &v) in nodes.iter().enumerate() {
                for &u in self.graph.of(v as usize) {
                    if part[u as usize] == p as u32 {
                        senders.push(local[&i64::from(u)]);
                        receivers.push(r as i64);
                    }
                }
            }
            SampledBatch {
                num_seeds: nodes.len(),
                nodes,
                senders,
                receivers,
            }
        })
    }
}
