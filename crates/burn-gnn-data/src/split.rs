//! Splits: stratified k-fold cross-validation for graph classification, and the seeded node
//! split [`RandomNodeSplit`] (a [`Transform`](burn_gnn_graph::Transform)).

use std::collections::BTreeMap;

use burn::tensor::{Int, Tensor, TensorData};
use burn_gnn_graph::{FeatureSetKind, GraphsTuple};

use crate::DataError;
use crate::synthetic::SplitMix64;

/// One fold of a k-fold split: indices of the dataset's items, each list ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The items to train on (every item not in `test`).
    pub train: Vec<usize>,
    /// The held-out items.
    pub test: Vec<usize>,
}

/// A seeded stratified k-fold split of items with classes `labels` (scikit-learn's
/// `StratifiedKFold(shuffle=True)` in spirit): each class is shuffled, then dealt to the folds
/// in turn, the turn carried over from one class to the next, so that
///
/// - the test sets are disjoint and together hold every item once;
/// - each class has, in every test set, its count divided by `k`, rounded down or up;
/// - the test sets' sizes differ by at most one.
///
/// The same `labels` and `seed` give the same folds on every machine.
///
/// # Errors
/// [`DataError::InvalidArgument`] when `k < 2` or `k` exceeds the number of items.
pub fn stratified_k_fold(labels: &[usize], k: usize, seed: u64) -> Result<Vec<Fold>, DataError> {
    if k < 2 || k > labels.len() {
        return Err(DataError::InvalidArgument(format!(
            "k-fold needs 2 <= k <= the number of items ({}), got k = {k}",
            labels.len()
        )));
    }
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &c) in labels.iter().enumerate() {
        by_class.entry(c).or_default().push(i);
    }
    let mut rng = SplitMix64::new(seed);
    let mut tests = vec![Vec::new(); k];
    let mut turn = 0;
    for items in by_class.values_mut() {
        rng.shuffle(items);
        for &i in items.iter() {
            tests[turn].push(i);
            turn = (turn + 1) % k;
        }
    }
    let mut fold_of = vec![0; labels.len()];
    for (f, test) in tests.iter_mut().enumerate() {
        test.sort_unstable();
        for &i in test.iter() {
            fold_of[i] = f;
        }
    }
    Ok(tests
        .into_iter()
        .enumerate()
        .map(|(f, test)| Fold {
            train: (0..labels.len()).filter(|&i| fold_of[i] != f).collect(),
            test,
        })
        .collect())
}

/// The node feature [`RandomNodeSplit`] writes the training mask to: `[N]` int, 1 for a
/// training node, 0 otherwise (PyG's `train_mask`).
pub const TRAIN_MASK: &str = "train_mask";
/// The validation mask's node feature (PyG's `val_mask`), as [`TRAIN_MASK`].
pub const VAL_MASK: &str = "val_mask";
/// The test mask's node feature (PyG's `test_mask`), as [`TRAIN_MASK`].
pub const TEST_MASK: &str = "test_mask";

/// A number of nodes: a count, or a ratio of the nodes it is taken from (rounded to the nearest
/// count, as PyG rounds `num_val=0.1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// Exactly this many.
    Count(usize),
    /// This fraction, in `[0, 1]`.
    Ratio(f64),
}

impl Amount {
    fn of(self, total: usize, what: &str) -> Result<usize, DataError> {
        match self {
            Amount::Count(n) => Ok(n),
            Amount::Ratio(r) if (0.0..=1.0).contains(&r) => Ok((r * total as f64).round() as usize),
            Amount::Ratio(r) => Err(DataError::InvalidArgument(format!(
                "RandomNodeSplit: {what} ratio {r} is outside [0, 1]"
            ))),
        }
    }
}

/// Which sets [`RandomNodeSplit`] draws, PyG's `split` argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeSplit {
    /// `val` and `test` nodes drawn at random, every other node trains (PyG's `"train_rest"`).
    TrainRest {
        /// Validation nodes.
        val: Amount,
        /// Test nodes.
        test: Amount,
    },
    /// `train_per_class` nodes of each class train (a ratio is of the class), `val` of the rest
    /// validate, every other node tests (PyG's `"test_rest"`).
    TestRest {
        /// Training nodes per class.
        train_per_class: Amount,
        /// Validation nodes.
        val: Amount,
    },
    /// `train_per_class` nodes of each class, then `val` and `test` from the rest; the
    /// remainder joins no set (PyG's `"random"`, Planetoid's public-split recipe).
    Random {
        /// Training nodes per class.
        train_per_class: Amount,
        /// Validation nodes.
        val: Amount,
        /// Test nodes.
        test: Amount,
    },
}

/// A seeded random split of a graph's nodes into training, validation and test sets, PyG's
/// `RandomNodeSplit`, written into the graph as the int node features [`TRAIN_MASK`],
/// [`VAL_MASK`] and [`TEST_MASK`] (`[N]`, 0 or 1; existing ones are replaced).
///
/// Labels are read from the node feature `labels` (`[N]` int, [`crate::io::LABELS`] by default).
/// Unlike PyG, a node labelled negative (missing, as the table readers write it) joins no set,
/// and ratios count only labelled nodes; a graph without the label feature is split by
/// [`NodeSplit::TrainRest`] over all nodes. Draws are Fisher–Yates shuffles of the crate's
/// SplitMix64 stream: the same graph and seed give the same masks on every machine (not
/// PyG's, which come from torch's generator).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// use burn_gnn_data::{Amount, NodeSplit, RandomNodeSplit, TRAIN_MASK};
/// use burn_gnn_graph::{GraphsTuple, Transform};
/// let device = Device::flex();
/// let y = Tensor::<1, Int>::from_ints([0, 0, 0, 1, 1, 1], &device);
/// let g = GraphsTuple::from_edge_list(&[(0, 1)], 6, &device).unwrap()
///     .with_feature(burn_gnn_graph::FeatureSetKind::Nodes, Some("y"), Some(y.into())).unwrap();
/// let split = RandomNodeSplit::new(NodeSplit::TestRest {
///     train_per_class: Amount::Count(2),
///     val: Amount::Count(1),
/// });
/// let g = split.apply(&g).unwrap();
/// let train = g.feature(burn_gnn_graph::FeatureSetKind::Nodes, TRAIN_MASK).unwrap();
/// assert_eq!(train.to_data().iter::<i64>().sum::<i64>(), 4);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RandomNodeSplit {
    /// The sets to draw.
    pub split: NodeSplit,
    /// The node feature holding class labels.
    pub labels: String,
    /// The seed of the draws.
    pub seed: u64,
}

impl Default for RandomNodeSplit {
    /// PyG's defaults: `"train_rest"` with 500 validation and 1000 test nodes; seed 0.
    fn default() -> Self {
        RandomNodeSplit::new(NodeSplit::TrainRest {
            val: Amount::Count(500),
            test: Amount::Count(1000),
        })
    }
}

/// The three masks of a node split, one flag per node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeMasks {
    /// Training nodes.
    pub train: Vec<bool>,
    /// Validation nodes.
    pub val: Vec<bool>,
    /// Test nodes.
    pub test: Vec<bool>,
}

impl RandomNodeSplit {
    /// The split `split` on labels [`crate::io::LABELS`], seed 0.
    pub fn new(split: NodeSplit) -> RandomNodeSplit {
        RandomNodeSplit {
            split,
            labels: crate::io::LABELS.to_string(),
            seed: 0,
        }
    }

    /// The same split with another seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The same split reading labels from another node feature.
    pub fn with_labels(mut self, labels: impl Into<String>) -> Self {
        self.labels = labels.into();
        self
    }

    /// Draws the masks for `num_nodes` nodes with `labels` (`None`: all nodes, unlabelled
    /// split [`NodeSplit::TrainRest`] only).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] if `labels` has another length than `num_nodes`, a
    /// ratio is outside `[0, 1]`, the sets ask for more nodes than there are, or a per-class
    /// split has no labels.
    pub fn masks(&self, num_nodes: usize, labels: Option<&[i64]>) -> Result<NodeMasks, DataError> {
        if let Some(y) = labels
            && y.len() != num_nodes
        {
            return Err(DataError::InvalidArgument(format!(
                "RandomNodeSplit: {} labels for {num_nodes} nodes",
                y.len()
            )));
        }
        let labelled: Vec<usize> = match labels {
            Some(y) => (0..num_nodes).filter(|&v| y[v] >= 0).collect(),
            None => (0..num_nodes).collect(),
        };
        let mut rng = SplitMix64::new(self.seed);
        let mut masks = NodeMasks {
            train: vec![false; num_nodes],
            val: vec![false; num_nodes],
            test: vec![false; num_nodes],
        };
        let too_many = |asked: usize, have: usize| {
            DataError::InvalidArgument(format!(
                "RandomNodeSplit: the sets ask for {asked} nodes, {have} are labelled"
            ))
        };
        let mark =
            |mask: &mut Vec<bool>, nodes: &[usize]| nodes.iter().for_each(|&v| mask[v] = true);
        match self.split {
            NodeSplit::TrainRest { val, test } => {
                let total = labelled.len();
                let (val, test) = (val.of(total, "val")?, test.of(total, "test")?);
                if val + test > total {
                    return Err(too_many(val + test, total));
                }
                let mut perm = labelled;
                rng.shuffle(&mut perm);
                mark(&mut masks.val, &perm[..val]);
                mark(&mut masks.test, &perm[val..val + test]);
                mark(&mut masks.train, &perm[val + test..]);
            }
            NodeSplit::TestRest {
                train_per_class,
                val,
            }
            | NodeSplit::Random {
                train_per_class,
                val,
                ..
            } => {
                let y = labels.ok_or_else(|| {
                    DataError::InvalidArgument(format!(
                        "RandomNodeSplit: a per-class split needs labels (node feature `{}`)",
                        self.labels
                    ))
                })?;
                let classes = labelled
                    .iter()
                    .map(|&v| y[v] as usize + 1)
                    .max()
                    .unwrap_or(0);
                let mut by_class = vec![Vec::new(); classes];
                for &v in &labelled {
                    by_class[y[v] as usize].push(v);
                }
                for nodes in &mut by_class {
                    let k = train_per_class.of(nodes.len(), "train_per_class")?;
                    rng.shuffle(nodes);
                    mark(&mut masks.train, &nodes[..k.min(nodes.len())]);
                }
                let mut rest: Vec<usize> = labelled
                    .iter()
                    .copied()
                    .filter(|&v| !masks.train[v])
                    .collect();
                let total = labelled.len();
                let val = val.of(total, "val")?;
                let test = match self.split {
                    NodeSplit::Random { test, .. } => test.of(total, "test")?,
                    _ => rest.len().saturating_sub(val),
                };
                if val + test > rest.len() {
                    return Err(too_many(total - rest.len() + val + test, total));
                }
                rng.shuffle(&mut rest);
                mark(&mut masks.val, &rest[..val]);
                mark(&mut masks.test, &rest[val..val + test]);
            }
        }
        Ok(masks)
    }
}

impl burn_gnn_graph::Transform for RandomNodeSplit {
    type Output = GraphsTuple;

    /// # Errors
    /// As [`RandomNodeSplit::masks`], and if the label feature is not `[N]` int; wrapped in
    /// [`GraphError::Step`](burn_gnn_graph::GraphError::Step).
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, burn_gnn_graph::GraphError> {
        let step = |e: DataError| burn_gnn_graph::GraphError::Step {
            step: "RandomNodeSplit",
            source: Box::new(e),
        };
        let labels = match graph.feature(FeatureSetKind::Nodes, &self.labels) {
            None => None,
            Some(f) => Some(
                f.int::<1>()
                    .ok_or_else(|| {
                        step(DataError::InvalidArgument(format!(
                            "RandomNodeSplit: the label feature `{}` is not [N] int",
                            self.labels
                        )))
                    })?
                    .to_data()
                    .iter::<i64>()
                    .collect::<Vec<_>>(),
            ),
        };
        let masks = self
            .masks(graph.sum_n_node(), labels.as_deref())
            .map_err(step)?;
        let device = graph.device();
        let tensor = |m: &[bool]| {
            let v: Vec<i64> = m.iter().map(|&b| b as i64).collect();
            Tensor::<1, Int>::from_data(TensorData::new(v, [m.len()]), &device)
        };
        graph
            .clone()
            .with_feature(
                FeatureSetKind::Nodes,
                Some(TRAIN_MASK),
                Some(tensor(&masks.train).into()),
            )?
            .with_feature(
                FeatureSetKind::Nodes,
                Some(VAL_MASK),
                Some(tensor(&masks.val).into()),
            )?
            .with_feature(
                FeatureSetKind::Nodes,
                Some(TEST_MASK),
                Some(tensor(&masks.test).into()),
            )
    }
}
