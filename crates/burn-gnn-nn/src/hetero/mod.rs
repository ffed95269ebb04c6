//! Layers for [`HeteroGraph`]s: [`HeteroConv`] (one bipartite conv per relation, merged per
//! target type), [`RgcnConv`], [`HgtConv`], [`HanConv`], and a heterogeneous GraphSAGE.

pub mod han;
pub mod hgt;
pub mod rgcn;
pub mod sage;

use std::collections::BTreeMap;
use std::str::FromStr;

use burn::module::Module;
use burn::tensor::{Int, Tensor};
use burn_gnn_graph::{EdgeType, HeteroGraph};
use burn_segment::SegmentPlan;

use crate::{BipartiteConv, NnError, RelationEdges};

/// Node features by node type: the input and output of a heterogeneous layer.
pub type NodeFeatures = BTreeMap<String, Tensor<2>>;

/// How [`HeteroConv`] merges the outputs of the relations that point at the same node type.
#[derive(burn::config::Config, Copy, Debug, PartialEq, Eq)]
pub enum HeteroMerge {
    /// Elementwise sum.
    Sum,
    /// Elementwise mean over the relations.
    Mean,
    /// Elementwise max over the relations (never over an implicit 0).
    Max,
    /// Elementwise min over the relations (never over an implicit 0).
    Min,
    /// Concatenated along the features, in edge-type order.
    Cat,
}

impl FromStr for HeteroMerge {
    type Err = NnError;
    fn from_str(s: &str) -> Result<Self, NnError> {
        Ok(match s {
            "sum" => HeteroMerge::Sum,
            "mean" => HeteroMerge::Mean,
            "max" => HeteroMerge::Max,
            "min" => HeteroMerge::Min,
            "cat" => HeteroMerge::Cat,
            other => {
                return Err(NnError::InvalidConfig(format!(
                    "unknown merge `{other}` (sum, mean, max, min, cat)"
                )));
            }
        })
    }
}

impl HeteroMerge {
    /// Merges relation outputs `[N, D]` (at least one).
    pub fn merge(self, mut outs: Vec<Tensor<2>>) -> Tensor<2> {
        if outs.len() == 1 {
            return outs.pop().expect("one output");
        }
        let k = outs.len();
        match self {
            HeteroMerge::Cat => Tensor::cat(outs, 1),
            HeteroMerge::Sum | HeteroMerge::Mean => {
                let sum = outs.into_iter().reduce(|a, b| a + b).expect("outputs");
                if self == HeteroMerge::Mean {
                    sum / k as f64
                } else {
                    sum
                }
            }
            // Folded from the first relation's output: no identity (0) enters the reduce.
            HeteroMerge::Max => outs
                .into_iter()
                .reduce(|a, b| a.max_pair(b))
                .expect("outputs"),
            HeteroMerge::Min => outs
                .into_iter()
                .reduce(|a, b| a.min_pair(b))
                .expect("outputs"),
        }
    }
}

/// A layer from node features by type to node features by type over a [`HeteroGraph`]: what
/// [`HeteroConv`], [`HgtConv`](crate::HgtConv) and [`HanConv`](crate::HanConv) share, so that a
/// model can stack any of them.
pub trait HeteroLayer {
    /// Applies the layer.
    ///
    /// # Errors
    /// [`NnError::Hetero`] when `x` lacks a node type the layer needs.
    fn forward_hetero(
        &self,
        x: &NodeFeatures,
        graph: &HeteroGraph,
    ) -> Result<NodeFeatures, NnError>;
}

/// `HeteroLayer` for layers whose own `forward` has its signature (generics in brackets).
macro_rules! hetero_layer {
    ($([$($generics:tt)*] $layer:ty),*) => {$(
        impl<$($generics)*> HeteroLayer for $layer {
            fn forward_hetero(
                &self,
                x: &NodeFeatures,
                graph: &HeteroGraph,
            ) -> Result<NodeFeatures, NnError> {
                self.forward(x, graph)
            }
        }
    )*};
}
hetero_layer!(
    [C: Module + BipartiteConv] HeteroConv<C>,
    [] hgt::HgtConv,
    [] han::HanConv
);

/// The features per head, `d_output / heads`, of the multi-head layer `layer`.
fn head_dim(layer: &str, d_output: usize, heads: usize) -> Result<usize, NnError> {
    if heads == 0 || !d_output.is_multiple_of(heads) {
        return Err(NnError::InvalidConfig(format!(
            "{layer}: d_output = {d_output} is not divisible by heads = {heads}"
        )));
    }
    Ok(d_output / heads)
}

/// One convolution per relation, merged per target node type: PyG's `HeteroConv`.
///
/// `x'_t = merge_{r = (s, rel, t)} conv_r(x_s, x_t, edges_r)` over the relations of
/// [`edge_types`](Self::edge_types) that point at `t`. A relation missing from the graph, or
/// without edges, still runs (its conv sees no edges: for SAGE the root term, for GAT the
/// bias). A node type no relation points at keeps its input features unchanged (PyG drops it).
/// `Max`/`Min` reduce over the relations' outputs only, never over an implicit 0.
///
/// # Shapes
/// `x[t]: [N_t, d_input(t)]` -> `x'[t]: [N_t, d_output]` (`Cat`: `k · d_output` for `k`
/// relations into `t`).
///
/// # Errors
/// [`NnError::Hetero`] if a relation's source or target type has no features in `x`.
#[derive(Module, Debug)]
pub struct HeteroConv<C: Module> {
    /// The convolution of each relation, in the order of `edge_types`.
    pub convs: Vec<C>,
    /// The relation each conv runs on.
    #[module(skip)]
    pub edge_types: Vec<EdgeType>,
    /// How the relations into one node type are merged.
    #[module(skip)]
    pub merge: HeteroMerge,
}

impl<C: Module + BipartiteConv> HeteroConv<C> {
    /// A layer from `(edge type, conv)` pairs.
    pub fn new(convs: Vec<(EdgeType, C)>, merge: HeteroMerge) -> Self {
        let (edge_types, convs) = convs.into_iter().unzip();
        HeteroConv {
            convs,
            edge_types,
            merge,
        }
    }

    /// Applies every relation's conv and merges per target type.
    ///
    /// # Errors
    /// [`NnError::Hetero`] if a relation's source or target type has no features in `x`.
    pub fn forward(&self, x: &NodeFeatures, graph: &HeteroGraph) -> Result<NodeFeatures, NnError> {
        let mut per_type: BTreeMap<&str, Vec<Tensor<2>>> = BTreeMap::new();
        for (conv, et) in self.convs.iter().zip(&self.edge_types) {
            let (x_src, x_dst) = relation_inputs(x, et)?;
            let (s, r) = relation_plans(graph, et);
            per_type
                .entry(et.dst.as_str())
                .or_default()
                .push(conv.forward_bipartite(x_src, x_dst, RelationEdges::Plans(&s, &r)));
        }
        Ok(x.iter()
            .map(|(t, xt)| {
                let out = match per_type.remove(t.as_str()) {
                    Some(outs) => self.merge.merge(outs),
                    None => xt.clone(),
                };
                (t.clone(), out)
            })
            .collect())
    }
}

/// The source and target features of `et`.
pub(crate) fn relation_inputs(
    x: &NodeFeatures,
    et: &EdgeType,
) -> Result<(Tensor<2>, Tensor<2>), NnError> {
    let get = |t: &str| {
        x.get(t).cloned().ok_or_else(|| {
            NnError::Hetero(format!("relation {et} needs features of node type `{t}`"))
        })
    };
    Ok((get(&et.src)?, get(&et.dst)?))
}

/// The plans of `et`'s senders and receivers in `graph` (empty when the graph does not have
/// the type).
pub(crate) fn relation_plans(graph: &HeteroGraph, et: &EdgeType) -> (SegmentPlan, SegmentPlan) {
    match graph.edge_plans(et) {
        Some((s, r)) => (s.clone(), r.clone()),
        None => {
            let empty = || Tensor::<1, Int>::empty([0], &graph.device());
            let plan = |t: &str| SegmentPlan::new(empty(), graph.num_nodes(t)).expect("no ids");
            (plan(&et.src), plan(&et.dst))
        }
    }
}

/// The edges of `et` in `graph`, or none when the graph does not have the type.
pub(crate) fn relation_edges(
    graph: &HeteroGraph,
    et: &EdgeType,
) -> (Tensor<1, Int>, Tensor<1, Int>) {
    match graph.edge_set(et) {
        Some(set) => (set.senders().clone(), set.receivers().clone()),
        None => {
            let empty = Tensor::<1, Int>::empty([0], &graph.device());
            (empty.clone(), empty)
        }
    }
}
