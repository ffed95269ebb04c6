//! Link prediction as burn `DataLoader`s: [`FullGraphLinkLoader`] (one whole graph per epoch)
//! and [`SampledLinkLoader`] (neighbour-sampled mini-batches of seed edges).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::data::dataloader::Progress;
use burn::data::dataloader::{DataLoader, DataLoaderIterator};
use burn::data::dataset::DatasetError;
use burn::tensor::{Device, Tensor};
use burn_gnn_data::{DataError, LinkNeighborLoader, LinkSampledBatch, LinkSet, LinkSplit};
use burn_gnn_graph::GraphsTuple;

use super::LinkBatch;
use super::loaders::{FullEpoch, ids, invalid};

/// Where a loader's negatives come from.
#[derive(Clone)]
enum Negatives {
    /// A split's fixed negatives (validation, test).
    Fixed(Arc<(Vec<i64>, Vec<i64>)>),
    /// Fresh training negatives every epoch.
    PerEpoch(Arc<LinkSplit>),
}

/// A burn [`DataLoader`] for link prediction on one whole graph: every epoch one [`LinkBatch`]
/// with the graph messages pass along, its node features, and the scored pairs (positives,
/// then negatives). Its items are the pairs; [`DataLoader::slice`] keeps a contiguous part of
/// them, which is how the multi-device strategy gives each device its share.
///
/// [`train`](Self::train) draws fresh negatives each epoch (`LinkSplit::train_negatives` of
/// epoch 0, 1, 2, ..., one per call to `iter`), so runs repeat exactly;
/// [`eval`](Self::eval) scores a split's fixed negatives.
pub struct FullGraphLinkLoader {
    graph: GraphsTuple,
    x: Tensor<2>,
    positives: Arc<(Vec<i64>, Vec<i64>)>,
    negatives: Negatives,
    /// The pairs this loader yields, as a range over positives then negatives.
    range: (usize, usize),
    device: Device,
    epoch: AtomicU64,
}

impl FullGraphLinkLoader {
    /// Training batches: `split.train`'s positives and fresh negatives every epoch, messages
    /// along `graph` (`split.train.message_graph` of the split graph) with features `x`.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when `x` does not have one row per node of `graph` or a
    /// pair is outside it.
    pub fn train(
        split: Arc<LinkSplit>,
        graph: GraphsTuple,
        x: Tensor<2>,
    ) -> Result<FullGraphLinkLoader, DataError> {
        let positives = (
            split.train.pos_senders.clone(),
            split.train.pos_receivers.clone(),
        );
        let count = positives.0.len() + split.num_train_negatives();
        Self::new(graph, x, positives, Negatives::PerEpoch(split), count)
    }

    /// Evaluation batches: `set`'s positives and its fixed negatives (validation or test),
    /// messages along `graph` (`set.message_graph` of the split graph) with features `x`.
    ///
    /// # Errors
    /// As [`train`](Self::train).
    pub fn eval(
        set: &LinkSet,
        graph: GraphsTuple,
        x: Tensor<2>,
    ) -> Result<FullGraphLinkLoader, DataError> {
        let positives = (set.pos_senders.clone(), set.pos_receivers.clone());
        let negatives = (set.neg_senders.clone(), set.neg_receivers.clone());
        check_nodes(&negatives, graph.sum_n_node())?;
        let count = positives.0.len() + negatives.0.len();
        Self::new(
            graph,
            x,
            positives,
            Negatives::Fixed(Arc::new(negatives)),
            count,
        )
    }

    fn new(
        graph: GraphsTuple,
        x: Tensor<2>,
        positives: (Vec<i64>, Vec<i64>),
        negatives: Negatives,
        count: usize,
    ) -> Result<FullGraphLinkLoader, DataError> {
        let n = graph.sum_n_node();
        if x.dims()[0] != n {
            return Err(invalid(format!(
                "FullGraphLinkLoader: the graph has {n} nodes, but x has {} rows",
                x.dims()[0]
            )));
        }
        check_nodes(&positives, n)?;
        let device = x.device();
        Ok(FullGraphLinkLoader {
            graph,
            x,
            positives: Arc::new(positives),
            negatives,
            range: (0, count),
            device,
            epoch: AtomicU64::new(0),
        })
    }

    fn with(&self, range: (usize, usize), device: &Device) -> FullGraphLinkLoader {
        FullGraphLinkLoader {
            graph: self.graph.to_device(device),
            x: self.x.clone().to_device(device),
            positives: self.positives.clone(),
            negatives: self.negatives.clone(),
            range,
            device: device.clone(),
            epoch: AtomicU64::new(self.epoch.load(Ordering::Relaxed)),
        }
    }

    /// Epoch `epoch`'s pairs and labels in this loader's range.
    fn pairs(&self, epoch: u64) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
        let drawn;
        let (ns, nr) = match &self.negatives {
            Negatives::Fixed(fixed) => (&fixed.0, &fixed.1),
            Negatives::PerEpoch(split) => {
                // `train` checked the split; its own sampler cannot fail on its own graph.
                drawn = split
                    .train_negatives(epoch)
                    .expect("the split's own negatives");
                (&drawn.0, &drawn.1)
            }
        };
        let (ps, pr) = (&self.positives.0, &self.positives.1);
        let (start, end) = self.range;
        let senders = ps
            .iter()
            .chain(ns)
            .skip(start)
            .take(end - start)
            .copied()
            .collect();
        let receivers = pr
            .iter()
            .chain(nr)
            .skip(start)
            .take(end - start)
            .copied()
            .collect();
        let labels = (start..end).map(|i| i64::from(i < ps.len())).collect();
        (senders, receivers, labels)
    }
}

/// [`DataError::InvalidArgument`] unless every node of `pairs` is in `0..n`.
fn check_nodes(pairs: &(Vec<i64>, Vec<i64>), n: usize) -> Result<(), DataError> {
    match pairs
        .0
        .iter()
        .chain(&pairs.1)
        .find(|&&v| !(0..n as i64).contains(&v))
    {
        Some(v) => Err(invalid(format!(
            "FullGraphLinkLoader: node {v} is outside the graph's {n} nodes"
        ))),
        None => Ok(()),
    }
}

impl DataLoader<LinkBatch> for FullGraphLinkLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<LinkBatch> + 'a> {
        let epoch = self.epoch.fetch_add(1, Ordering::Relaxed);
        let total = self.range.1 - self.range.0;
        let batch = (total > 0).then(|| {
            let (s, r, y) = self.pairs(epoch);
            LinkBatch {
                graph: self.graph.clone(),
                x: self.x.clone(),
                senders: ids(s, &self.device),
                receivers: ids(r, &self.device),
                targets: ids(y, &self.device),
            }
        });
        Box::new(FullEpoch {
            batch,
            total,
            unit: "pairs",
        })
    }

    fn num_items(&self) -> usize {
        self.range.1 - self.range.0
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<LinkBatch>> {
        Arc::new(self.with(self.range, device))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<LinkBatch>> {
        let base = self.range.0;
        let range = (base + start, (base + end).min(self.range.1));
        Arc::new(self.with((range.0.min(range.1), range.1), &self.device))
    }
}

/// A burn [`DataLoader`] over [`LinkNeighborLoader`] mini-batches: each batch the sampled
/// subgraph around its pairs' endpoints as a [`LinkBatch`] on the loader's device, node
/// features gathered from `x`. Its items are the seed edges; every call to `iter` starts the
/// next epoch, and [`DataLoader::slice`] keeps a contiguous part of the seed edges.
pub struct SampledLinkLoader {
    loader: LinkNeighborLoader,
    x: Tensor<2>,
    device: Device,
    epoch: AtomicU64,
}

impl SampledLinkLoader {
    /// Batches of `loader` with node features `x: [num_nodes, d_input]` (kept on their device,
    /// each batch's rows gathered there and moved to `device`).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when `x` does not have one row per node.
    pub fn new(
        loader: LinkNeighborLoader,
        x: Tensor<2>,
        device: &Device,
    ) -> Result<SampledLinkLoader, DataError> {
        let n = loader.num_nodes();
        if x.dims()[0] != n {
            return Err(invalid(format!(
                "SampledLinkLoader: the graph has {n} nodes, but x has {} rows",
                x.dims()[0]
            )));
        }
        Ok(SampledLinkLoader {
            loader,
            x,
            device: device.clone(),
            epoch: AtomicU64::new(0),
        })
    }

    fn with(&self, loader: LinkNeighborLoader, device: &Device) -> SampledLinkLoader {
        SampledLinkLoader {
            loader,
            x: self.x.clone(),
            device: device.clone(),
            epoch: AtomicU64::new(self.epoch.load(Ordering::Relaxed)),
        }
    }

    fn link_batch(&self, b: LinkSampledBatch) -> Result<LinkBatch, DataError> {
        let graph = b.batch.graph(&self.x, &self.device)?;
        Ok(LinkBatch {
            x: graph.node_tensor::<2>()?,
            graph,
            senders: ids(b.senders, &self.device),
            receivers: ids(b.receivers, &self.device),
            targets: ids(b.labels, &self.device),
        })
    }
}

/// The iterator of one epoch of a [`SampledLinkLoader`].
struct SampledLinkEpoch<'a> {
    owner: &'a SampledLinkLoader,
    batches: Box<dyn Iterator<Item = LinkSampledBatch> + 'a>,
    done: usize,
}

impl Iterator for SampledLinkEpoch<'_> {
    type Item = Result<LinkBatch, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.batches.next()?;
        self.done += b.labels.iter().filter(|&&l| l == 1).count();
        Some(self.owner.link_batch(b).map_err(DatasetError::new))
    }
}

impl DataLoaderIterator<LinkBatch> for SampledLinkEpoch<'_> {
    fn progress(&self) -> Progress {
        Progress::new(
            self.done,
            self.owner.loader.num_edges(),
            Some("edges".into()),
        )
    }
}

impl DataLoader<LinkBatch> for SampledLinkLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<LinkBatch> + 'a> {
        let epoch = self.epoch.fetch_add(1, Ordering::Relaxed);
        Box::new(SampledLinkEpoch {
            owner: self,
            batches: Box::new(self.loader.epoch(epoch)),
            done: 0,
        })
    }

    fn num_items(&self) -> usize {
        self.loader.num_edges()
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<LinkBatch>> {
        Arc::new(self.with(self.loader.clone(), device))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<LinkBatch>> {
        Arc::new(self.with(self.loader.slice(start..end), &self.device))
    }
}
