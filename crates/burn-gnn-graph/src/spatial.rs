//! Graphs from positions: the `k` nearest neighbours or the points within a radius of each
//! point (PyG's `knn_graph`, `radius_graph`, `knn`, `radius`), per graph of a batch, through the
//! pairwise layer of burn-segment (exact, never an `[N, N]` matrix).
//!
//! Differences from PyG (torch_cluster), all chosen for determinism:
//! - neighbours are ordered by distance, ties to the smaller index, on every backend;
//! - `radius` keeps the `max_num_neighbors` **nearest** points within `r` (torch_cluster keeps
//!   whichever it finds first), and a point is within `r` when its distance is strictly below;
//! - a batch vector must be sorted, as in PyG, and a typed error says where it is not.

use burn::tensor::{Int, Tensor, TensorData};
use burn_segment::pairwise::{PairMask, PairMetric, Pairwise};

use crate::graphs_tuple::index_tensor;
use crate::{Flow, GraphError, GraphsTuple};

/// The host form of an optional batch vector of `len` rows: its labels and the number of
/// graphs (`max + 1`; one graph without a vector).
fn batch_labels(
    batch: Option<&Tensor<1, Int>>,
    len: usize,
    what: &str,
) -> Result<(Vec<i64>, usize), GraphError> {
    let Some(batch) = batch else {
        return Ok((vec![0; len], 1));
    };
    let labels: Vec<i64> = batch.clone().into_data().iter::<i64>().collect();
    if labels.len() != len {
        let msg = format!("{what} has {} entries for {len} points", labels.len());
        return Err(GraphError::InvalidArgument(msg));
    }
    if let Some(p) = labels.iter().position(|&l| l < 0) {
        let msg = format!("{what}[{p}] = {} is negative", labels[p]);
        return Err(GraphError::InvalidArgument(msg));
    }
    if let Some(p) = labels.windows(2).position(|w| w[0] > w[1]) {
        let msg = format!("{what} must be sorted: {what}[{}] < {what}[{p}]", p + 1);
        return Err(GraphError::InvalidArgument(msg));
    }
    let n_graph = labels.last().map_or(0, |&l| l as usize + 1);
    Ok((labels, n_graph))
}

/// For each row of `query`, up to `k` rows of `points` of the same graph (nearest first,
/// within `radius` if given), as `(query, point)` pairs grouped by query.
fn neighbours(
    query: (&Tensor<2>, &[i64]),
    points: (&Tensor<2>, &[i64]),
    k: usize,
    radius: Option<f64>,
    exclude_self: bool,
) -> Result<Vec<(i64, i64)>, GraphError> {
    let (q, p) = (query.0.clone().detach(), points.0.clone().detach());
    let device = q.device();
    let pairwise = Pairwise::new(q, p, PairMetric::Euclidean)
        .map_err(|e| GraphError::InvalidArgument(e.to_string()))?;
    let labels =
        |l: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(l.to_vec(), [l.len()]), &device);
    let mut pairwise = pairwise
        .sorted_groups(labels(query.1), labels(points.1))
        .and_then(|p| p.mask(PairMask::same_group()))
        .map_err(|e| GraphError::InvalidArgument(e.to_string()))?;
    if let Some(r) = radius {
        pairwise = pairwise
            .mask(PairMask::within(r))
            .expect("no labels needed");
    }
    if exclude_self {
        pairwise = pairwise.exclude_self();
    }
    let columns = pairwise.topk_columns(k, false);
    let columns: Vec<i64> = columns.into_data().iter::<i64>().collect();
    Ok(columns
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c >= 0)
        .map(|(slot, &c)| ((slot / k.max(1)) as i64, c))
        .collect())
}

/// The graph linking each point of `x` to up to `k` points of its graph (within `radius` if
/// given), with edges neighbour -> point (`SourceToTarget`) or point -> neighbour.
fn graph_of(
    x: &Tensor<2>,
    k: usize,
    radius: Option<f64>,
    batch: Option<&Tensor<1, Int>>,
    self_loops: bool,
    flow: Flow,
) -> Result<GraphsTuple, GraphError> {
    let (labels, n_graph) = batch_labels(batch, x.dims()[0], "batch")?;
    let pairs = neighbours((x, &labels), (x, &labels), k, radius, !self_loops)?;
    let (device, labels) = (x.device(), &labels);
    let (mut n_node, mut n_edge) = (vec![0i64; n_graph], vec![0i64; n_graph]);
    for &l in labels {
        n_node[l as usize] += 1;
    }
    for &(q, _) in &pairs {
        n_edge[labels[q as usize] as usize] += 1;
    }
    let (queries, others): (Vec<i64>, Vec<i64>) = pairs.into_iter().unzip();
    let (senders, receivers) = match flow {
        Flow::SourceToTarget => (others, queries),
        Flow::TargetToSource => (queries, others),
    };
    let g = GraphsTuple::builder(
        index_tensor(senders, &device),
        index_tensor(receivers, &device),
    )
    .n_node(index_tensor(n_node, &device))
    .n_edge(index_tensor(n_edge, &device))
    .num_nodes(labels.len())
    .build_unchecked()
    .expect("consistent by construction");
    Ok(g.with_sorted_receivers(flow == Flow::SourceToTarget))
}

/// The graph linking every point to its `k` nearest neighbours of the same graph (Euclidean;
/// PyG's `knn_graph`). With `Flow::SourceToTarget` the edges run neighbour -> point, sorted by
/// receiver; a point of a graph with fewer than `k + 1` points gets what there is.
///
/// # Shapes
/// `x: [N, D]`, `batch: [N]` (sorted graph ids; one graph without) -> a `GraphsTuple` of
/// `max(batch) + 1` graphs without features.
///
/// # Errors
/// [`GraphError::InvalidArgument`] when `batch` has the wrong length, a negative id or is not
/// sorted.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::flex();
/// let x = Tensor::<2>::from_floats([[0.0], [1.0], [3.0], [10.0]], &device);
/// let g = burn_gnn_graph::knn_graph(&x, 1, None, false, Default::default()).unwrap();
/// assert_eq!(g.to_coo(), (vec![1, 0, 1, 2], vec![0, 1, 2, 3]));
/// ```
pub fn knn_graph(
    x: &Tensor<2>,
    k: usize,
    batch: Option<&Tensor<1, Int>>,
    self_loops: bool,
    flow: Flow,
) -> Result<GraphsTuple, GraphError> {
    graph_of(x, k, None, batch, self_loops, flow)
}

/// The graph linking every point to the points of its graph closer than `r` (Euclidean,
/// strictly), at most `max_num_neighbors` per point, the nearest kept (PyG's `radius_graph`).
///
/// # Shapes
/// As [`knn_graph`].
///
/// # Errors
/// As [`knn_graph`].
pub fn radius_graph(
    x: &Tensor<2>,
    r: f64,
    batch: Option<&Tensor<1, Int>>,
    self_loops: bool,
    max_num_neighbors: usize,
    flow: Flow,
) -> Result<GraphsTuple, GraphError> {
    graph_of(x, max_num_neighbors, Some(r), batch, self_loops, flow)
}

/// For each point of `y`, its `k` nearest points of `x` in the same graph (PyG's `knn`):
/// `[2, E]` Int, row 0 the index into `y`, row 1 the index into `x`, grouped by the `y` point,
/// nearest first.
///
/// # Shapes
/// `x: [N, D]`, `y: [M, D]`, `batch_x: [N]`, `batch_y: [M]` (sorted) -> `[2, E]`, `E <= M k`.
///
/// # Errors
/// As [`knn_graph`], for either batch vector, and when the widths of `x` and `y` differ.
pub fn knn(
    x: &Tensor<2>,
    y: &Tensor<2>,
    k: usize,
    batch_x: Option<&Tensor<1, Int>>,
    batch_y: Option<&Tensor<1, Int>>,
) -> Result<Tensor<2, Int>, GraphError> {
    assignment(x, y, k, None, [batch_x, batch_y])
}

/// For each point of `y`, the points of `x` of its graph closer than `r`, at most
/// `max_num_neighbors`, nearest first (PyG's `radius`). Output as [`knn`].
///
/// # Errors
/// As [`knn`].
pub fn radius(
    x: &Tensor<2>,
    y: &Tensor<2>,
    r: f64,
    batch_x: Option<&Tensor<1, Int>>,
    batch_y: Option<&Tensor<1, Int>>,
    max_num_neighbors: usize,
) -> Result<Tensor<2, Int>, GraphError> {
    assignment(x, y, max_num_neighbors, Some(r), [batch_x, batch_y])
}

/// For each point of `y`, up to `k` points of `x` of its graph (within `radius` if given):
/// `[2, E]`, the `y` points, then their neighbours.
fn assignment(
    x: &Tensor<2>,
    y: &Tensor<2>,
    k: usize,
    radius: Option<f64>,
    [batch_x, batch_y]: [Option<&Tensor<1, Int>>; 2],
) -> Result<Tensor<2, Int>, GraphError> {
    let (lx, _) = batch_labels(batch_x, x.dims()[0], "batch_x")?;
    let (ly, _) = batch_labels(batch_y, y.dims()[0], "batch_y")?;
    let pairs = neighbours((y, &ly), (x, &lx), k, radius, false)?;
    let e = pairs.len();
    let (q, p): (Vec<i64>, Vec<i64>) = pairs.into_iter().unzip();
    Ok(Tensor::from_data(
        TensorData::new([q, p].concat(), [2, e]),
        &x.device(),
    ))
}
