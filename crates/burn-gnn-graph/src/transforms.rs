//! Transforms as values: the [`Transform`] trait, [`Compose`] and [`Then`] to chain them, and
//! the structural transforms of PyG's `torch_geometric.transforms` over a [`GraphsTuple`].
//!
//! Each transform is a small struct with typed parameters; [`Transform::apply`] takes a graph
//! and returns a new one (a [`GraphsTuple`] clones cheaply: its tensors are shared). Splits that
//! draw randomness ([`RandomNodeSplit`], [`RandomLinkSplit`]) live in `burn-gnn-data` and
//! implement the same trait. A closure `Fn(&GraphsTuple) -> Result<GraphsTuple, GraphError>`
//! is a transform too.
//!
//! [`RandomNodeSplit`]: https://docs.rs/burn-gnn-data/latest/burn_gnn_data/struct.RandomNodeSplit.html
//! [`RandomLinkSplit`]: https://docs.rs/burn-gnn-data/latest/burn_gnn_data/struct.RandomLinkSplit.html
//!
//! ```
//! use burn::tensor::Device;
//! use burn_gnn_graph::GraphsTuple;
//! use burn_gnn_graph::transforms::{AddSelfLoops, Compose, RemoveIsolatedNodes, ToUndirected, Transform};
//! let device = Device::flex();
//! // 0 -> 1, node 2 has no edge.
//! let g = GraphsTuple::from_edge_list(&[(0, 1)], 3, &device).unwrap();
//! let pipeline = Compose::new()
//!     .push(RemoveIsolatedNodes)
//!     .push(ToUndirected::default())
//!     .push(AddSelfLoops::default());
//! let out = pipeline.apply(&g).unwrap();
//! assert_eq!(out.sum_n_node(), 2);
//! assert_eq!(out.to_coo(), (vec![1, 0, 0, 1], vec![0, 1, 0, 1]));
//! ```

use std::fmt;

use burn::tensor::Tensor;

use crate::graphs_tuple::host_ints;
use crate::{EdgeReduce, GraphError, GraphsTuple, SelfLoops};

/// A graph-to-something step, PyG's `BaseTransform`: most give a [`GraphsTuple`]; a split may
/// give its own type (and then ends a chain).
pub trait Transform {
    /// What the transform makes: a [`GraphsTuple`] for every structural transform.
    type Output;

    /// Applies the transform.
    ///
    /// # Errors
    /// Each transform documents its own (a missing or mistyped feature, a bad parameter).
    fn apply(&self, graph: &GraphsTuple) -> Result<Self::Output, GraphError>;

    /// This transform, then `next` on its result (a chain typed at compile time; [`Compose`]
    /// is the run-time list).
    fn then<T: Transform>(self, next: T) -> Then<Self, T>
    where
        Self: Sized + Transform<Output = GraphsTuple>,
    {
        Then { first: self, next }
    }
}

impl<F> Transform for F
where
    F: Fn(&GraphsTuple) -> Result<GraphsTuple, GraphError>,
{
    type Output = GraphsTuple;

    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        self(graph)
    }
}

/// `first`, then `next` on its result; made by [`Transform::then`].
#[derive(Clone, Debug)]
pub struct Then<A, B> {
    /// The first transform.
    pub first: A,
    /// The transform applied to `first`'s result.
    pub next: B,
}

impl<A, B> Transform for Then<A, B>
where
    A: Transform<Output = GraphsTuple>,
    B: Transform,
{
    type Output = B::Output;

    fn apply(&self, graph: &GraphsTuple) -> Result<B::Output, GraphError> {
        self.next.apply(&self.first.apply(graph)?)
    }
}

/// Graph-to-graph transforms applied in order, PyG's `Compose`. An empty `Compose` returns the
/// graph unchanged.
#[derive(Default)]
pub struct Compose {
    steps: Vec<Box<dyn Transform<Output = GraphsTuple> + Send + Sync>>,
}

impl Compose {
    /// No steps yet.
    pub fn new() -> Compose {
        Compose::default()
    }

    /// Appends a step.
    pub fn push(
        mut self,
        step: impl Transform<Output = GraphsTuple> + Send + Sync + 'static,
    ) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// The number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether there are no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

impl fmt::Debug for Compose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Compose({} steps)", self.steps.len())
    }
}

impl Transform for Compose {
    type Output = GraphsTuple;

    /// # Errors
    /// The first step's error; later steps are not run.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        let mut out = graph.clone();
        for step in &self.steps {
            out = step.apply(&out)?;
        }
        Ok(out)
    }
}

/// Row-normalises the node features to sum to one, PyG 2.8's `NormalizeFeatures`: the
/// features' global minimum is subtracted first (so negative features become non-negative),
/// then each row is divided by its sum, clamped below at 1 (a row summing to less than one is
/// divided by one, an all-zero row stays zero):
/// `x ← (x − min x) / max(1, Σ_j (x − min x)_j)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NormalizeFeatures;

impl Transform for NormalizeFeatures {
    type Output = GraphsTuple;

    /// # Errors
    /// [`GraphError::InvalidArgument`] unless the graph has float node features `[N, F]`.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        let x: Tensor<2> = graph.nodes().and_then(|f| f.float::<2>()).ok_or_else(|| {
            GraphError::InvalidArgument(
                "NormalizeFeatures: the graph has no float node features [N, F]".into(),
            )
        })?;
        let [n, f] = x.dims();
        if n * f == 0 {
            return Ok(graph.clone());
        }
        let x = x.clone() - x.min().reshape([1, 1]);
        let sums = x.clone().sum_dim(1).clamp_min(1.0);
        graph.clone().with_nodes(x / sums)
    }
}

/// Adds the reverse of every edge and merges duplicates, PyG's `ToUndirected` (see
/// [`GraphsTuple::to_undirected`]); `reduce` merges the features of an edge present both ways
/// (PyG's default `"add"` is [`EdgeReduce::Sum`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToUndirected {
    /// How the features of merged edges combine.
    pub reduce: EdgeReduce,
}

impl Transform for ToUndirected {
    type Output = GraphsTuple;

    /// # Errors
    /// [`EdgeReduce::Mean`] with int edge features.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        graph.to_undirected(self.reduce)
    }
}

/// Adds a self loop to every node, PyG's `AddSelfLoops` (see [`GraphsTuple::add_self_loops`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AddSelfLoops {
    /// Whether existing loops are removed first, and the new loops' edge features.
    pub options: SelfLoops,
}

impl Transform for AddSelfLoops {
    type Output = GraphsTuple;

    /// # Errors
    /// As [`GraphsTuple::add_self_loops`].
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        graph.add_self_loops(self.options)
    }
}

/// Removes every edge `i -> i`, PyG's `RemoveSelfLoops`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoveSelfLoops;

impl Transform for RemoveSelfLoops {
    type Output = GraphsTuple;

    /// Never fails.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        Ok(graph.remove_self_loops())
    }
}

/// Removes the nodes no edge touches, PyG's `RemoveIsolatedNodes`: a node with only a self loop
/// is kept (as PyG's transform does). Kept nodes are relabelled in order; node and edge features
/// follow, per-graph counts are updated, globals kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoveIsolatedNodes;

impl Transform for RemoveIsolatedNodes {
    type Output = GraphsTuple;

    /// Never fails.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        let mut touched = vec![false; graph.num_nodes];
        for v in host_ints(graph.senders())
            .into_iter()
            .chain(host_ints(graph.receivers()))
        {
            touched[v as usize] = true;
        }
        if touched.iter().all(|&t| t) {
            return Ok(graph.clone());
        }
        Ok(graph.subgraph(&touched)?.graph)
    }
}

/// How [`LargestConnectedComponent`] connects nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Connection {
    /// Edges connect both ways (weakly connected components). PyG's default.
    #[default]
    Weak,
    /// A component is a set where every node reaches every other along edge directions.
    Strong,
}

/// Keeps the largest connected component(s), PyG's `LargestConnectedComponent`: the
/// `num_components` largest components by node count (ties go to the component holding the
/// smaller node id, so the result is deterministic), as the subgraph they induce. A graph with
/// at most `num_components` components is returned unchanged. Over a batch, components are
/// ranked across all its graphs (a component never spans two graphs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LargestConnectedComponent {
    /// How many components to keep (PyG's default: 1).
    pub num_components: usize,
    /// Weak or strong connectivity (PyG's default: weak).
    pub connection: Connection,
}

impl Default for LargestConnectedComponent {
    fn default() -> Self {
        LargestConnectedComponent {
            num_components: 1,
            connection: Connection::Weak,
        }
    }
}

impl Transform for LargestConnectedComponent {
    type Output = GraphsTuple;

    /// # Errors
    /// [`GraphError::InvalidArgument`] if `num_components` is 0.
    fn apply(&self, graph: &GraphsTuple) -> Result<GraphsTuple, GraphError> {
        if self.num_components == 0 {
            return Err(GraphError::InvalidArgument(
                "LargestConnectedComponent: num_components must be at least 1".into(),
            ));
        }
        let (s, r) = (host_ints(graph.senders()), host_ints(graph.receivers()));
        let n = graph.num_nodes;
        let component = match self.connection {
            Connection::Weak => weak_components(n, &s, &r),
            Connection::Strong => strong_components(n, &s, &r),
        };
        // Size and smallest member per component, then the `num_components` largest.
        let count = component.iter().map(|&c| c + 1).max().unwrap_or(0);
        if count <= self.num_components {
            return Ok(graph.clone());
        }
        let mut size = vec![0usize; count];
        let mut first = vec![usize::MAX; count];
        for (v, &c) in component.iter().enumerate() {
            size[c] += 1;
            first[c] = first[c].min(v);
        }
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&c| (std::cmp::Reverse(size[c]), first[c]));
        let mut keep = vec![false; count];
        for &c in &order[..self.num_components] {
            keep[c] = true;
        }
        let mask: Vec<bool> = component.iter().map(|&c| keep[c]).collect();
        Ok(graph.subgraph(&mask)?.graph)
    }
}

/// Weakly connected components by union-find; labels `0..count` in order of first node.
fn weak_components(n: usize, s: &[i64], r: &[i64]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for (&a, &b) in s.iter().zip(r) {
        let (ra, rb) = (root(&mut parent, a as usize), root(&mut parent, b as usize));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    relabel((0..n).map(|v| root(&mut parent, v)).collect())
}

/// Strongly connected components (Tarjan's algorithm, iterative so a long path cannot overflow
/// the stack); labels `0..count` in order of first node.
fn strong_components(n: usize, s: &[i64], r: &[i64]) -> Vec<usize> {
    // Out-neighbours in CSR form.
    let mut offsets = vec![0usize; n + 1];
    for &a in s {
        offsets[a as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut next = offsets.clone();
    let mut targets = vec![0usize; s.len()];
    for (&a, &b) in s.iter().zip(r) {
        targets[next[a as usize]] = b as usize;
        next[a as usize] += 1;
    }
    const NONE: usize = usize::MAX;
    let (mut index, mut low) = (vec![NONE; n], vec![0usize; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut comp) = (Vec::new(), vec![NONE; n]);
    let (mut counter, mut found) = (0usize, 0usize);
    for start in 0..n {
        if index[start] != NONE {
            continue;
        }
        // (node, position in its neighbour list)
        let mut call = vec![(start, offsets[start])];
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(top) = call.len().checked_sub(1) {
            let (v, pos) = call[top];
            if pos < offsets[v + 1] {
                let w = targets[pos];
                call[top].1 += 1;
                if index[w] == NONE {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, offsets[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        comp[w] = found;
                        if w == v {
                            break;
                        }
                    }
                    found += 1;
                }
            }
        }
    }
    relabel(comp)
}

/// Renumbers labels `0..count` in order of each label's first appearance.
fn relabel(labels: Vec<usize>) -> Vec<usize> {
    let mut map = std::collections::HashMap::new();
    labels
        .into_iter()
        .map(|l| {
            let next = map.len();
            *map.entry(l).or_insert(next)
        })
        .collect()
}
