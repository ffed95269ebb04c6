//! [`LinkNeighborLoader`]: mini-batches of seed edges, their negatives and the sampled
//! neighbourhood of their endpoints (PyG's `LinkNeighborLoader`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::sampler::{batch_stream, epoch_batches};
use crate::{
    DataError, InNeighbors, NegativeSampler, NegativeSampling, NeighborLoader, SampledBatch,
};

/// One mini-batch of a [`LinkNeighborLoader`]: the sampled subgraph around the endpoints of
/// its pairs, and the pairs in the subgraph's local node ids with their labels.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSampledBatch {
    /// The subgraph: its seeds are the pairs' distinct endpoints, in order of first appearance.
    pub batch: SampledBatch,
    /// First node of each scored pair, a local id into `batch.nodes`.
    pub senders: Vec<i64>,
    /// Second node of each scored pair, a local id.
    pub receivers: Vec<i64>,
    /// 1 for a seed edge (or its given label), 0 for a drawn negative; seed edges come first.
    pub labels: Vec<i64>,
}

/// Mini-batches for link prediction on a graph too large for one step: each batch takes
/// `batch_size` seed edges (the supervision edges, shuffled per epoch), draws
/// `⌊neg_sampling_ratio · batch⌋` fresh negatives (never an edge of the message graph), and
/// samples the neighbourhood of every endpoint with the fan-outs of a [`NeighborLoader`].
///
/// Seeded and thread-count independent: epoch `e` shuffles the seed edges with `seed + e`,
/// the negatives of batch `b` come from the stream of `(seed, e, b)`, and the neighbourhood
/// draws are the `NeighborLoader`'s.
#[derive(Clone, Debug)]
pub struct LinkNeighborLoader {
    neighbors: NeighborLoader,
    negatives: Arc<NegativeSampler>,
    senders: Vec<i64>,
    receivers: Vec<i64>,
    /// The seed edges' labels (all 1 unless given).
    labels: Option<Arc<[i64]>>,
    batch_size: usize,
    neg_sampling_ratio: f64,
    shuffle: bool,
    seed: u64,
}

impl LinkNeighborLoader {
    /// A loader over the seed edges `senders[i] -> receivers[i]` of `graph` (the message graph,
    /// as in-neighbour lists), sampling `fanouts[l]` neighbours per node at layer `l`; negatives
    /// drawn with `options` (e.g. `undirected` for an undirected graph), one per seed edge by
    /// default.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a zero batch size, no layers, mismatched lists or a
    /// node outside the graph; [`DataError::TooDense`] if the graph has fewer free pairs than a
    /// batch's negatives.
    pub fn new(
        graph: impl Into<Arc<InNeighbors>>,
        senders: Vec<i64>,
        receivers: Vec<i64>,
        fanouts: Vec<usize>,
        batch_size: usize,
        options: NegativeSampling,
    ) -> Result<LinkNeighborLoader, DataError> {
        let graph = graph.into();
        let n = graph.num_nodes();
        if senders.len() != receivers.len() {
            return Err(DataError::InvalidArgument(format!(
                "LinkNeighborLoader: {} senders but {} receivers",
                senders.len(),
                receivers.len()
            )));
        }
        if let Some(v) = senders
            .iter()
            .chain(&receivers)
            .find(|&&v| !(0..n as i64).contains(&v))
        {
            return Err(DataError::InvalidArgument(format!(
                "LinkNeighborLoader: node {v} is outside the graph's {n} nodes"
            )));
        }
        let neighbors = NeighborLoader::new(graph.clone(), Vec::new(), fanouts, batch_size)?;
        let (es, er): (Vec<i64>, Vec<i64>) = graph.edges().unzip();
        let negatives = NegativeSampler::new(&es, &er, &[n], options)?;
        LinkNeighborLoader {
            neighbors,
            negatives: Arc::new(negatives),
            senders,
            receivers,
            labels: None,
            batch_size,
            neg_sampling_ratio: 1.0,
            shuffle: true,
            seed: 0,
        }
        .checked()
    }

    /// `self`, or [`DataError::TooDense`] when the graph has fewer free pairs than the
    /// negatives of a full batch (so that no epoch can run out of them).
    fn checked(self) -> Result<Self, DataError> {
        let batch = self.batch_size.min(self.senders.len());
        let asked = (self.neg_sampling_ratio * batch as f64).floor() as usize;
        let available = self.negatives.available()[0];
        if asked as u64 > available {
            return Err(DataError::TooDense {
                graph: 0,
                asked,
                available,
            });
        }
        Ok(self)
    }

    /// Negatives per seed edge (default 1).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a negative or non-finite ratio;
    /// [`DataError::TooDense`] if the graph has fewer free pairs than a batch's negatives.
    pub fn with_neg_sampling_ratio(mut self, ratio: f64) -> Result<Self, DataError> {
        if !(ratio >= 0.0 && ratio.is_finite()) {
            return Err(DataError::InvalidArgument(format!(
                "LinkNeighborLoader: neg_sampling_ratio = {ratio} is not a finite number >= 0"
            )));
        }
        self.neg_sampling_ratio = ratio;
        self.checked()
    }

    /// Labelled seed pairs (PyG's `edge_label`): `labels[i]` instead of 1 for seed pair `i`,
    /// e.g. a split's fixed test positives and negatives with no negatives drawn
    /// (`neg_sampling_ratio` 0).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] unless there is one label per seed pair.
    pub fn with_labels(mut self, labels: Vec<i64>) -> Result<Self, DataError> {
        if labels.len() != self.senders.len() {
            return Err(DataError::InvalidArgument(format!(
                "LinkNeighborLoader: {} labels for {} seed pairs",
                labels.len(),
                self.senders.len()
            )));
        }
        self.labels = Some(labels.into());
        Ok(self)
    }

    /// Shuffle the seed edges every epoch (default) or keep their order.
    pub fn with_shuffle(mut self, shuffle: bool) -> Self {
        self.shuffle = shuffle;
        self
    }

    /// The random seed of shuffling, negatives and neighbour draws (default 0).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self.neighbors = self.neighbors.with_seed(seed);
        self
    }

    /// The number of nodes of the graph.
    pub fn num_nodes(&self) -> usize {
        self.neighbors.num_nodes()
    }

    /// The number of seed edges.
    pub fn num_edges(&self) -> usize {
        self.senders.len()
    }

    /// The number of batches per epoch.
    pub fn num_batches(&self) -> usize {
        self.senders.len().div_ceil(self.batch_size)
    }

    /// The same loader over the seed edges `range` only (one device's share).
    ///
    /// # Panics
    /// If `range` is not within `0..num_edges()`, as slice indexing does.
    pub fn slice(&self, range: std::ops::Range<usize>) -> LinkNeighborLoader {
        LinkNeighborLoader {
            senders: self.senders[range.clone()].to_vec(),
            receivers: self.receivers[range.clone()].to_vec(),
            labels: self.labels.as_ref().map(|l| l[range].into()),
            ..self.clone()
        }
    }

    /// The batches of epoch `epoch`, sampled lazily.
    pub fn epoch(&self, epoch: u64) -> impl Iterator<Item = LinkSampledBatch> + '_ {
        let order: Vec<i64> = (0..self.senders.len() as i64).collect();
        epoch_batches(
            &order,
            self.batch_size,
            self.shuffle.then_some(self.seed),
            epoch,
        )
        .into_iter()
        .enumerate()
        .map(move |(b, edges)| self.batch(&edges, epoch, b as u64))
    }

    fn batch(&self, edges: &[i64], epoch: u64, b: u64) -> LinkSampledBatch {
        let num_neg = (self.neg_sampling_ratio * edges.len() as f64).floor() as usize;
        let stream = batch_stream(self.seed ^ 0x2545_F491_4F6C_DD1D, epoch, b);
        let (ns, nr) = self
            .negatives
            .sample(num_neg, stream)
            .expect("checked at construction: a full batch's negatives exist");
        let pick = |x: &[i64]| edges.iter().map(|&e| x[e as usize]).collect::<Vec<_>>();
        let senders: Vec<i64> = [pick(&self.senders), ns].concat();
        let receivers: Vec<i64> = [pick(&self.receivers), nr].concat();
        let mut endpoints = Vec::with_capacity(2 * senders.len());
        for (&s, &r) in senders.iter().zip(&receivers) {
            endpoints.extend([s, r]);
        }
        let batch = self.neighbors.sample(&endpoints, epoch, b);
        let local: HashMap<i64, i64> = batch.nodes[..batch.num_seeds]
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as i64))
            .collect();
        let to_local = |x: &[i64]| x.iter().map(|v| local[v]).collect();
        LinkSampledBatch {
            senders: to_local(&senders),
            receivers: to_local(&receivers),
            labels: (0..senders.len())
                .map(|i| match (&self.labels, edges.get(i)) {
                    (Some(labels), Some(&e)) => labels[e as usize],
                    (None, Some(_)) => 1,
                    (_, None) => 0,
                })
                .collect(),
            batch,
        }
    }
}
