//! [`GcnConv`]: the graph convolution of Kipf & Welling (2017).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::{SegmentPlan, Segments};

use crate::aggregation::sum_with;
use crate::{EdgeInputs, MessagePassing, RelationEdges};

/// Configuration of a [`GcnConv`]; defaults are PyG's `GCNConv`.
#[derive(Config, Debug)]
pub struct GcnConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// One self loop per node, as PyG's `add_remaining_self_loops`: a node's existing loops are
    /// replaced by a single loop weighted as the last of them, and a node without one gets a
    /// loop of weight 1 (2 if `improved`).
    #[config(default = true)]
    pub add_self_loops: bool,
    /// Symmetric normalisation `D^-1/2 Â D^-1/2`; without it, a plain weighted sum.
    #[config(default = true)]
    pub normalize: bool,
    /// Self loops of weight 2 (`Â = A + 2I`), PyG's `improved`. Also without edge weights,
    /// where PyG's code computes `A + I` against its own docs.
    #[config(default = false)]
    pub improved: bool,
    /// Add a learnable bias after aggregation.
    #[config(default = true)]
    pub bias: bool,
}

/// Graph convolution, [Kipf & Welling, ICLR 2017](https://arxiv.org/abs/1609.02907):
///
/// `x'_i = Σ_{j ∈ N(i) ∪ {i}} (e_ji / sqrt(d_j d_i)) · x_j W + b`, with `d_i = e_ii + Σ_{j ≠ i}
/// e_ji` (in-degree over receivers, the node's one self loop included), `e_ji` the edge weight
/// (1 by default) and `e_ii` the self loop's weight (see [`GcnConvConfig::add_self_loops`]).
///
/// Nodes of degree 0 (no self loop, no incoming edge) get `b`. Negative weights that make a
/// degree `<= 0` give that node's normalisation 0 instead of NaN.
///
/// # Shapes
/// `x: [N, d_input]`, `edge_weight: [E]` -> `[N, d_output]`.
///
/// The normalisation depends only on the graph: compute it once with [`GcnConv::normalization`]
/// and pass it as [`GcnInput::normalized`] in every epoch for a fixed graph (PyG's `cached`).
#[derive(Module, Debug)]
pub struct GcnConv {
    /// `[d_input, d_output]`, Glorot-initialised.
    pub weight: Param<Tensor<2>>,
    /// `[d_output]`, zero-initialised.
    pub bias: Option<Param<Tensor<1>>>,
    /// See [`GcnConvConfig::add_self_loops`].
    pub add_self_loops: bool,
    /// See [`GcnConvConfig::normalize`].
    pub normalize: bool,
    /// See [`GcnConvConfig::improved`].
    pub improved: bool,
}

/// A graph's GCN edge normalisation, reusable across forward passes (PyG's `cached=True`).
#[derive(Clone, Debug)]
pub struct GcnNorm {
    /// The graph's senders, planned over its nodes.
    pub senders: SegmentPlan,
    /// The graph's receivers, planned over its nodes.
    pub receivers: SegmentPlan,
    /// Coefficient of each edge, `[E]`.
    pub edge_norm: Tensor<1>,
    /// Coefficient of each node's own features (its self loop), `[N]`.
    pub self_norm: Tensor<1>,
}

/// GCN's edge normalisation of `graph` (see [`GcnConv`]), on the device: with
/// `add_self_loops`, exactly one loop per node (the last existing loop's weight, else 1, or 2 if
/// `improved`; other existing loops are dropped); with
/// `normalize`, `D^-1/2 Â D^-1/2`. Shared by [`GcnConv`], [`SgConv`](crate::SgConv) and
/// [`Appnp`](crate::Appnp).
pub fn gcn_norm(
    graph: &GraphsTuple,
    edge_weight: Option<Tensor<1>>,
    add_self_loops: bool,
    improved: bool,
    normalize: bool,
) -> GcnNorm {
    let (n, e) = (graph.sum_n_node(), graph.sum_n_edge());
    let device = graph.device();
    let (senders, receivers) = (graph.sender_plan().clone(), graph.receiver_plan().clone());
    let w = edge_weight.unwrap_or_else(|| Tensor::ones([e], &device));
    let (w, self_w) = if add_self_loops {
        remaining_self_loops(w, &senders, &receivers, improved)
    } else {
        (w, Tensor::zeros([n], &device))
    };
    if !normalize {
        return GcnNorm {
            senders,
            receivers,
            edge_norm: w,
            self_norm: self_w,
        };
    }
    let deg = sum_with(w.clone(), &receivers) + self_w.clone();
    // deg^-1/2, 0 where deg <= 0; the clamp keeps the gradient finite there.
    let dead = deg.clone().lower_equal_elem(0.0);
    let dinv = deg.clamp_min(1e-12).powf_scalar(-0.5).mask_fill(dead, 0.0);
    let edge_norm = if e == 0 {
        w // empty: no elementwise work on zero-size tensors (see `gather_rows`)
    } else {
        senders.gather(dinv.clone()) * w * receivers.gather(dinv.clone())
    };
    let self_norm = dinv.clone() * self_w * dinv;
    GcnNorm {
        senders,
        receivers,
        edge_norm,
        self_norm,
    }
}

/// PyG's `add_remaining_self_loops` for the edge weights `w`: every existing self loop is
/// removed (its weight set to 0) and each node gets exactly one, weighted as its last existing
/// loop (in edge order, as PyG's scatter on CPU), else `fill` (1, or 2 if `improved`). Returns
/// the edge weights and each node's loop weight `[N]`.
fn remaining_self_loops(
    w: Tensor<1>,
    senders: &SegmentPlan,
    receivers: &SegmentPlan,
    improved: bool,
) -> (Tensor<1>, Tensor<1>) {
    let n = receivers.num_segments();
    let device = w.device();
    let fill = Tensor::<1>::full([n], if improved { 2.0 } else { 1.0 }, &device);
    let e = w.dims()[0];
    if e == 0 {
        return (w, fill);
    }
    let is_loop = senders
        .segment_ids()
        .clone()
        .equal(receivers.segment_ids().clone());
    // The position of each node's last loop (-1, or the empty-segment value, without one).
    let positions = Tensor::<1, Int>::arange(0..e as i64, &device);
    let last = receivers.max(positions.mask_fill(is_loop.clone().bool_not(), -1));
    let has_loop = last.clone().greater_equal_elem(0);
    let loop_w = w.clone().select(0, last.clamp_min(0));
    (w.mask_fill(is_loop, 0.0), fill.mask_where(has_loop, loop_w))
}

impl GcnNorm {
    /// `D^-1/2 Â D^-1/2 h`: one propagation step, through [`MessagePassing::propagate`].
    ///
    /// # Shapes
    /// `h: [N, D]` -> `[N, D]`.
    pub fn apply(&self, h: Tensor<2>) -> Tensor<2> {
        if self.senders.num_rows() == 0 {
            return h * self.self_norm.clone().unsqueeze_dim(1);
        }
        debug_assert_eq!(h.dims()[0], self.receivers.num_segments());
        let edges = RelationEdges::Plans(&self.senders, &self.receivers);
        self.propagate(h, edges, Some(self.edge_norm.clone().unsqueeze_dim(1)))
    }
}

/// The normalised propagation as [`MessagePassing`]: messages `w_ji h_j` (the edge input is
/// the edge norms, `[E, 1]`), summed by one fused gather-scale-sum, plus each node's own
/// `s_i h_i` (its self loop's norm) in the update. GCN, SGC and APPNP propagate through it.
impl MessagePassing for GcnNorm {
    /// `w_ji · h_j`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        super::weighted_message(edges, "GCN's edge norms")
    }

    /// One fused gather-scale-sum: no `[E, D]` message tensor.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        Some(super::weighted_sum(edges, "GCN's edge norms"))
    }

    /// `aggregated + s_i h_i`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        aggregated + x_dst * self.self_norm.clone().unsqueeze_dim(1)
    }
}

impl GcnConvConfig {
    /// A [`GcnConv`] with Glorot weights and zero bias.
    pub fn init(&self, device: &Device) -> GcnConv {
        GcnConv {
            weight: super::glorot(
                [self.d_input, self.d_output],
                self.d_input,
                self.d_output,
                device,
            ),
            bias: self.bias.then(|| super::zeros([self.d_output], device)),
            add_self_loops: self.add_self_loops,
            normalize: self.normalize,
            improved: self.improved,
        }
    }
}

impl GcnConv {
    /// The normalisation of `graph` with optional edge weights (`[E]`, default 1), on the device.
    pub fn normalization(&self, graph: &GraphsTuple, edge_weight: Option<Tensor<1>>) -> GcnNorm {
        gcn_norm(
            graph,
            edge_weight,
            self.add_self_loops,
            self.improved,
            self.normalize,
        )
    }

    /// The convolution over `graph`, unweighted.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.forward_with(GcnInput::new(x, graph))
    }

    /// The convolution of a [`GcnInput`]: with edge weights, over a normalisation computed once
    /// (PyG's `cached`), or on features already multiplied by [`weight`](Self::weight).
    ///
    /// # Shapes
    /// `x: [N, d_input]` (projected: `[N, d_output]`), `edge_weight: [E]` -> `[N, d_output]`.
    pub fn forward_with(&self, input: GcnInput) -> Tensor<2> {
        let GcnInput {
            x,
            over,
            edge_weight,
            projected,
        } = input;
        if x.dims()[0] == 0 {
            // No nodes: nothing to run (NdArray's matmul divides by zero on empty inputs).
            return crate::compat::no_rows(self.weight.dims()[1], &x);
        }
        let xw = if projected {
            x
        } else {
            burn_segment::linear(x, self.weight.val(), None)
        };
        let out = match over {
            GcnOver::Norm(norm) => norm.apply(xw),
            GcnOver::Graph(graph) => self.normalization(graph, edge_weight).apply(xw),
        };
        match &self.bias {
            Some(b) => out + b.val().unsqueeze_dim(0),
            None => out,
        }
    }
}

/// The input of [`GcnConv::forward_with`] and [`Appnp::forward_with`](crate::Appnp::forward_with)
/// (Burn's `MhaInput` pattern): node features over a graph, with optional edge weights, or over
/// a normalisation computed once; optionally features already projected.
#[derive(Debug)]
pub struct GcnInput<'a> {
    x: Tensor<2>,
    over: GcnOver<'a>,
    /// Edge weights `[E]`, over a graph only.
    edge_weight: Option<Tensor<1>>,
    projected: bool,
}

/// What a [`GcnInput`] propagates over.
#[derive(Debug)]
pub(crate) enum GcnOver<'a> {
    /// A graph, normalised by the layer (with the input's edge weights, if any).
    Graph(&'a GraphsTuple),
    /// A normalisation computed once.
    Norm(&'a GcnNorm),
}

impl<'a> GcnInput<'a> {
    /// Node features `x: [N, d_input]` over `graph`, unweighted.
    pub fn new(x: Tensor<2>, graph: &'a GraphsTuple) -> Self {
        GcnInput {
            x,
            over: GcnOver::Graph(graph),
            edge_weight: None,
            projected: false,
        }
    }

    /// Node features over a normalisation computed once with [`GcnConv::normalization`] (or
    /// [`gcn_norm`]), reused in every epoch for a fixed graph (PyG's `cached`).
    pub fn normalized(x: Tensor<2>, norm: &'a GcnNorm) -> Self {
        GcnInput {
            x,
            over: GcnOver::Norm(norm),
            edge_weight: None,
            projected: false,
        }
    }

    /// Edge weights `e_ji`, `[E]` (default 1).
    ///
    /// # Panics
    /// On an input made with [`normalized`](Self::normalized): the weights are part of the
    /// normalisation, given to [`GcnConv::normalization`].
    pub fn edge_weight(mut self, edge_weight: Tensor<1>) -> Self {
        match self.over {
            GcnOver::Graph(_) => self.edge_weight = Some(edge_weight),
            GcnOver::Norm(_) => panic!(
                "burn-gnn: GcnInput::edge_weight on a normalised input; give the weights to \
                 GcnConv::normalization"
            ),
        }
        self
    }

    /// The features are `x · W` already, `[N, d_output]`: how a sparse input avoids the dense
    /// product (see [`SparseMatrix::matmul`](burn_gnn_graph::SparseMatrix::matmul)). APPNP has
    /// no weight: for it this changes nothing.
    pub fn projected(mut self) -> Self {
        self.projected = true;
        self
    }

    /// The features and what they propagate over.
    pub(crate) fn into_parts(self) -> (Tensor<2>, GcnOver<'a>, Option<Tensor<1>>) {
        (self.x, self.over, self.edge_weight)
    }
}
