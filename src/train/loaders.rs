//! burn `DataLoader`s and a `Batcher` yielding [`NodeBatch`]es and [`GraphBatch`]es.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn::data::dataset::DatasetError;
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::{DataError, NeighborLoader, SampledBatch};
use burn_gnn_graph::{GraphData, GraphsTuple};

use super::{GraphBatch, NodeBatch};

pub(crate) fn ids(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

pub(crate) fn invalid(message: String) -> DataError {
    DataError::InvalidArgument(message)
}

/// A burn [`DataLoader`] over neighbour-sampled mini-batches: each item is a seed node, each
/// batch a [`NeighborLoader`] sample turned into a [`NodeBatch`] on the loader's device (the
/// seeds' rows scored against their labels).
///
/// Every call to `iter` starts the next epoch (0, 1, 2, ...), so seed shuffling and neighbour
/// draws follow the `NeighborLoader`'s seeded streams: the same batches on every run.
/// [`DataLoader::slice`] keeps a contiguous part of the seeds (before shuffling), which is how
/// the multi-device strategy gives each device its share.
pub struct SampledNodeLoader {
    loader: NeighborLoader,
    x: Tensor<2>,
    labels: Arc<[i64]>,
    device: Device,
    epoch: AtomicU64,
}

impl SampledNodeLoader {
    /// Batches of `loader` with node features `x: [num_nodes, d_input]` (all nodes; kept on
    /// their device, each batch's rows gathered there and moved to `device`) and one class
    /// label per node.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when `x` or `labels` do not have one row per node of the
    /// loader's graph.
    pub fn new(
        loader: NeighborLoader,
        x: Tensor<2>,
        labels: Vec<i64>,
        device: &Device,
    ) -> Result<SampledNodeLoader, DataError> {
        let n = loader.num_nodes();
        if x.dims()[0] != n || labels.len() != n {
            return Err(invalid(format!(
                "SampledNodeLoader: the graph has {n} nodes, but x has {} rows and there are {} labels",
                x.dims()[0],
                labels.len()
            )));
        }
        Ok(SampledNodeLoader {
            loader,
            x,
            labels: labels.into(),
            device: device.clone(),
            epoch: AtomicU64::new(0),
        })
    }

    fn with(&self, loader: NeighborLoader, device: &Device) -> SampledNodeLoader {
        SampledNodeLoader {
            loader,
            x: self.x.clone(),
            labels: self.labels.clone(),
            device: device.clone(),
            epoch: AtomicU64::new(self.epoch.load(Ordering::Relaxed)),
        }
    }

    /// One sampled batch as a [`NodeBatch`] on the loader's device.
    fn node_batch(&self, b: &SampledBatch) -> Result<NodeBatch, DataError> {
        let graph = b.graph(&self.x, &self.device)?;
        let x = graph.node_tensor::<2>()?;
        let seeds = &b.nodes[..b.num_seeds];
        Ok(NodeBatch {
            graph,
            x,
            rows: ids((0..b.num_seeds as i64).collect(), &self.device),
            targets: ids(
                seeds.iter().map(|&v| self.labels[v as usize]).collect(),
                &self.device,
            ),
        })
    }
}

/// The iterator of one epoch of a [`SampledNodeLoader`].
struct SampledEpoch<'a> {
    owner: &'a SampledNodeLoader,
    batches: Box<dyn Iterator<Item = SampledBatch> + 'a>,
    done: usize,
}

impl Iterator for SampledEpoch<'_> {
    type Item = Result<NodeBatch, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.batches.next()?;
        self.done += b.num_seeds;
        Some(self.owner.node_batch(&b).map_err(DatasetError::new))
    }
}

impl DataLoaderIterator<NodeBatch> for SampledEpoch<'_> {
    fn progress(&self) -> Progress {
        Progress::new(
            self.done,
            self.owner.loader.seeds().len(),
            Some("nodes".into()),
        )
    }
}

impl DataLoader<NodeBatch> for SampledNodeLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<NodeBatch> + 'a> {
        let epoch = self.epoch.fetch_add(1, Ordering::Relaxed);
        Box::new(SampledEpoch {
            owner: self,
            batches: Box::new(self.loader.epoch(epoch)),
            done: 0,
        })
    }

    fn num_items(&self) -> usize {
        self.loader.seeds().len()
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<NodeBatch>> {
        Arc::new(self.with(self.loader.clone(), device))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<NodeBatch>> {
        Arc::new(self.with(self.loader.slice(start..end), &self.device))
    }
}

/// A burn [`DataLoader`] giving one whole graph per epoch, with a set of scored rows: full-batch
/// training in the transductive setting (Cora's 140 training nodes, say). Its items are the
/// rows; [`DataLoader::slice`] keeps part of them (each device then runs the whole graph and
/// scores its share of the rows), and a slice without rows yields no batch.
pub struct FullGraphLoader {
    graph: GraphsTuple,
    x: Tensor<2>,
    labels: Tensor<1, Int>,
    rows: Vec<i64>,
    device: Device,
}

impl FullGraphLoader {
    /// One batch of `graph` with features `x: [N, d_input]`, labels `[N]`, scoring `rows`; the
    /// batch is moved to `x`'s device.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] when `x` or `labels` do not have one row per node, or a
    /// row is outside `0..N`.
    pub fn new(
        graph: GraphsTuple,
        x: Tensor<2>,
        labels: Tensor<1, Int>,
        rows: Vec<i64>,
    ) -> Result<FullGraphLoader, DataError> {
        let n = graph.sum_n_node();
        if x.dims()[0] != n || labels.dims()[0] != n {
            return Err(invalid(format!(
                "FullGraphLoader: the graph has {n} nodes, but x has {} rows and labels {}",
                x.dims()[0],
                labels.dims()[0]
            )));
        }
        if let Some(r) = rows.iter().find(|&&r| !(0..n as i64).contains(&r)) {
            return Err(invalid(format!(
                "FullGraphLoader: row {r} is outside the graph's {n} nodes"
            )));
        }
        let device = x.device();
        Ok(FullGraphLoader {
            graph,
            x,
            labels,
            rows,
            device,
        })
    }
}

/// The iterator of one epoch of a full-graph loader: at most one batch of `total` items.
pub(crate) struct FullEpoch<B> {
    pub(crate) batch: Option<B>,
    pub(crate) total: usize,
    pub(crate) unit: &'static str,
}

impl<B> Iterator for FullEpoch<B> {
    type Item = Result<B, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batch.take().map(Ok)
    }
}

impl<B> DataLoaderIterator<B> for FullEpoch<B> {
    fn progress(&self) -> Progress {
        let done = if self.batch.is_some() { 0 } else { self.total };
        Progress::new(done, self.total, Some(self.unit.into()))
    }
}

impl DataLoader<NodeBatch> for FullGraphLoader {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<NodeBatch> + 'a> {
        let batch = (!self.rows.is_empty()).then(|| {
            let rows = ids(self.rows.clone(), &self.device);
            NodeBatch {
                graph: self.graph.clone(),
                x: self.x.clone(),
                targets: self.labels.clone().select(0, rows.clone()),
                rows,
            }
        });
        Box::new(FullEpoch {
            batch,
            total: self.rows.len(),
            unit: "nodes",
        })
    }

    fn num_items(&self) -> usize {
        self.rows.len()
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<NodeBatch>> {
        Arc::new(FullGraphLoader {
            graph: self.graph.to_device(device),
            x: self.x.clone().to_device(device),
            labels: self.labels.clone().to_device(device),
            rows: self.rows.clone(),
            device: device.clone(),
        })
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<NodeBatch>> {
        Arc::new(FullGraphLoader {
            graph: self.graph.clone(),
            x: self.x.clone(),
            labels: self.labels.clone(),
            rows: self.rows[start..end].to_vec(),
            device: self.device.clone(),
        })
    }
}

/// One labelled graph of a graph-classification dataset (host data; node features are the
/// graph's main node feature).
#[derive(Clone, Debug)]
pub struct GraphItem {
    /// The graph.
    pub graph: GraphData,
    /// Its class.
    pub label: i64,
}

impl GraphItem {
    /// The host copy of `graph` with its class.
    ///
    /// # Errors
    /// [`DataError::Graph`] when `graph` has no main node feature or cannot be copied.
    pub fn new(graph: &GraphsTuple, label: i64) -> Result<GraphItem, DataError> {
        graph.node_tensor::<2>()?;
        Ok(GraphItem {
            graph: graph.to_graph_data()?,
            label,
        })
    }
}

/// A burn [`Batcher`] joining [`GraphItem`]s into a [`GraphBatch`]; use it with burn's
/// `DataLoaderBuilder` (shuffling, batch size, worker threads) over any `Dataset` of items.
///
/// # Panics
/// On an item whose graph is invalid or has no main node feature, or whose node features
/// differ in width from the others' (items made by [`GraphItem::new`] from valid graphs of one
/// width never do).
#[derive(Clone, Copy, Debug, Default)]
pub struct GraphBatcher;

impl Batcher<GraphItem, GraphBatch> for GraphBatcher {
    fn batch(&self, items: Vec<GraphItem>, device: &Device) -> GraphBatch {
        let graphs: Vec<GraphsTuple> = items
            .iter()
            .map(|item| GraphsTuple::from_graph_data(&item.graph, device))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("GraphBatcher: an item is not a valid graph: {e}"));
        let graph = burn_gnn_graph::batch(&graphs)
            .unwrap_or_else(|e| panic!("GraphBatcher: the items do not batch: {e}"));
        let x = graph
            .node_tensor::<2>()
            .unwrap_or_else(|e| panic!("GraphBatcher: no node features: {e}"));
        GraphBatch {
            graph,
            x,
            targets: ids(items.iter().map(|item| item.label).collect(), device),
        }
    }
}
